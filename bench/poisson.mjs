// Times fast-2d-poisson-disk-sampling (npm) on 800 x 800 at radius 2, 30 tries:
//   node bench/poisson.mjs NODE_DIR [RUNS]
// prints "median_ms min_ms points", like bench_poisson.
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const [nodeDir, runsArg] = process.argv.slice(2);
const require = createRequire(join(resolve(nodeDir), 'package.json'));
const FastPoissonDiskSampling = require('fast-2d-poisson-disk-sampling');
const runs = Number(runsArg || 9);
const sample = () => new FastPoissonDiskSampling({ shape: [800, 800], radius: 2, tries: 30 }).fill();
for (let i = 0; i < 2; i++) sample();  // warm the JIT
const times = [];
let n = 0;
for (let i = 0; i < runs; i++) {
  const t0 = process.hrtime.bigint();
  n = sample().length;
  times.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
times.sort((a, b) => a - b);
console.log(`${times[runs >> 1].toFixed(2)} ${times[0].toFixed(2)} ${n}`);
