#!/usr/bin/env bash
# Runs earcut (npm, from $PM_NODE_DIR) on the polygon sets bench_earclip
# wrote in this same run ($PM_BUILD_DIR/earclip/*.poly), with the same
# timing rule (after a warm-up, the best of 7 rounds, each the mean per
# polygon over >= 0.1 s), and prints both times and the ratio earcut /
# pm_earclip (> 1: pm_earclip is faster). On a shared machine the load
# changes by the second, so each set is timed three times alternately,
# earcut then `bench_earclip --time`, and the best of each is kept.
set -euo pipefail
BUILD=${1:-${PM_BUILD_DIR:-build}}
NODE_DIR=${PM_NODE_DIR:-$BUILD/node}
DIR=$BUILD/earclip
EARCUT=$(cd "$NODE_DIR" 2>/dev/null && pwd)/node_modules/earcut/src/earcut.js
if [ ! -f "$EARCUT" ]; then echo "earcut.sh: earcut not installed in $NODE_DIR (make node)"; exit 1; fi
shopt -s nullglob
sets=("$DIR"/*.poly)
if [ ${#sets[@]} -eq 0 ]; then echo "earcut.sh: no polygon sets in $DIR (run bench_earclip first)"; exit 1; fi
printf '%-24s %12s %12s %8s\n' set "earcut ms" "pm ms" ratio
best() { printf '%s\n' "$@" | sort -g | head -1; }
for f in "${sets[@]}"; do
  name=$(basename "$f" .poly)
  ec=() pm=()
  for round in 1 2 3; do
    ec+=("$(node --input-type=module - "$EARCUT" "$f" <<'JS'
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const [earcutPath, file] = process.argv.slice(2);
const earcut = (await import(pathToFileURL(earcutPath).href)).default;
const polys = readFileSync(file, 'utf8').split('\n')
  .filter((l) => l.length && l[0] !== '#')
  .map((l) => Float64Array.from(l.trim().split(/\s+/).map(Number)));
for (const p of polys) earcut(p); /* warm-up */
let ms = Infinity;
for (let round = 0; round < 7; round++) {
  let reps = 0, t = 0;
  const t0 = process.hrtime.bigint();
  do {
    for (const p of polys) earcut(p);
    reps++;
    t = Number(process.hrtime.bigint() - t0) / 1e9;
  } while (t < 0.1);
  ms = Math.min(ms, (1e3 * t) / (reps * polys.length));
}
console.log(ms.toFixed(6));
JS
)")
    pm+=("$("$BUILD/bench_earclip" --time "$f")")
  done
  e=$(best "${ec[@]}") p=$(best "${pm[@]}")
  awk -v n="$name" -v e="$e" -v p="$p" 'BEGIN { printf "%-24s %12.4f %12.4f %7.2fx\n", n, e, p, e / p }'
done
