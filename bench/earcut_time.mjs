// earcut's side of bench/earcut.sh: the timing rule of bench_earclip --time.
//   node earcut_time.mjs EARCUT_JS FILE   prints the median ms per polygon
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [earcutPath, file] = process.argv.slice(2);
const earcut = (await import(pathToFileURL(earcutPath).href)).default;
const polys = readFileSync(file, 'utf8').split('\n')
  .filter((l) => l.length && l[0] !== '#')
  .map((l) => Float64Array.from(l.trim().split(/\s+/).map(Number)));
const warmup = Math.max(1, Number(process.env.PM_WARMUP ?? 2));
const runs = Math.max(1, Number(process.env.PM_RUNS ?? 5));
for (let w = 0; w < warmup; w++) for (const p of polys) earcut(p);
const ms = [];
for (let round = 0; round < runs; round++) {
  let reps = 0, t = 0;
  const t0 = process.hrtime.bigint();
  do {
    for (const p of polys) earcut(p);
    reps++;
    t = Number(process.hrtime.bigint() - t0) / 1e9;
  } while (t < 0.1);
  ms.push((1e3 * t) / (reps * polys.length));
}
ms.sort((a, b) => a - b);
console.log(ms[runs >> 1].toFixed(6));
