// Times fast-2d-poisson-disk-sampling (npm) on 800 x 800 at radius 2, 30
// tries, as bench_poisson times procmesh: PM_WARMUP untimed runs, then
// PM_RUNS timed ones; prints "median_ms min_ms points".
//   node bench/poisson.mjs NODE_DIR
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const [nodeDir] = process.argv.slice(2);
const require = createRequire(join(resolve(nodeDir), 'package.json'));
const FastPoissonDiskSampling = require('fast-2d-poisson-disk-sampling');
const warmup = Number(process.env.PM_WARMUP ?? 2), runs = Math.max(1, Number(process.env.PM_RUNS ?? 5));
const sample = () => new FastPoissonDiskSampling({ shape: [800, 800], radius: 2, tries: 30 }).fill();
for (let i = 0; i < warmup; i++) sample();
const times = [];
let n = 0;
for (let i = 0; i < runs; i++) {
  const t0 = process.hrtime.bigint();
  n = sample().length;
  times.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
times.sort((a, b) => a - b);
console.log(`${times[runs >> 1].toFixed(2)} ${times[0].toFixed(2)} ${n}`);
