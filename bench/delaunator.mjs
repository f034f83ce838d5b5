// Times delaunator (npm) on a points file written by bench_delaunay gen:
//   node bench/delaunator.mjs NODE_DIR FILE [RUNS]
// prints "median_ms min_ms triangles hull", like bench_delaunay time.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join, resolve } from 'node:path';

const [nodeDir, file, runsArg] = process.argv.slice(2);
const { default: Delaunator } = await import(
  pathToFileURL(join(resolve(nodeDir), 'node_modules', 'delaunator', 'index.js')).href);
const buf = readFileSync(file);
const coords = new Float64Array(buf.buffer, buf.byteOffset, buf.byteLength / 8);
const runs = Number(runsArg || 7);
// Warm the JIT on the same input first, as a long-running service would be.
for (let i = 0; i < 2; i++) new Delaunator(coords);
const times = [];
let d;
for (let i = 0; i < runs; i++) {
  const t0 = process.hrtime.bigint();
  d = new Delaunator(coords);
  times.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
times.sort((a, b) => a - b);
console.log(`${times[runs >> 1].toFixed(2)} ${times[0].toFixed(2)} ${d.triangles.length / 3} ${d.hull.length}`);
