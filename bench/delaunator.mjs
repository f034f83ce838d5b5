// Times delaunator (npm) on a points file written by bench_delaunay gen:
//   node bench/delaunator.mjs NODE_DIR FILE
// PM_WARMUP untimed runs, then PM_RUNS timed ones, as bench_delaunay time;
// prints "median_ms min_ms triangles hull cpu_ms" (cpu_ms: median process
// CPU time per run, garbage collection included).
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join, resolve } from 'node:path';

const [nodeDir, file] = process.argv.slice(2);
const { default: Delaunator } = await import(
  pathToFileURL(join(resolve(nodeDir), 'node_modules', 'delaunator', 'index.js')).href);
const buf = readFileSync(file);
const coords = new Float64Array(buf.buffer, buf.byteOffset, buf.byteLength / 8);
const runs = Math.max(1, Number(process.env.PM_RUNS ?? 5));
const warmup = Number(process.env.PM_WARMUP ?? 2);
for (let i = 0; i < warmup; i++) new Delaunator(coords);
const times = [], cpu = [];
let d;
for (let i = 0; i < runs; i++) {
  const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
  d = new Delaunator(coords);
  times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  const c = process.cpuUsage(c0);
  cpu.push((c.user + c.system) / 1e3);
}
times.sort((a, b) => a - b);
cpu.sort((a, b) => a - b);
console.log(`${times[runs >> 1].toFixed(2)} ${times[0].toFixed(2)} ${d.triangles.length / 3} ${d.hull.length} ${cpu[runs >> 1].toFixed(2)}`);
