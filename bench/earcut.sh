#!/usr/bin/env bash
# Runs earcut (npm, from $PM_NODE_DIR) on every polygon set bench_earclip
# wrote in this same run ($PM_BUILD_DIR/earclip/*.poly: random stars,
# combs (simple, not star-shaped), junction-like contours and the real
# junction contours of bench/polygons), with the same timing rule on both
# sides (PM_WARMUP passes, then the median of PM_RUNS rounds, each the mean
# per polygon over >= 0.1 s), interleaved rounds on one pinned CPU
# (bench/compare.sh). Every family is printed, the ones we lose included.
set -euo pipefail
BUILD=${1:-${PM_BUILD_DIR:-build}}
NODE_DIR=${PM_NODE_DIR:-$BUILD/node}
DIR=$BUILD/earclip
here=$(cd "$(dirname "$0")" && pwd)
EARCUT=$(cd "$NODE_DIR" 2>/dev/null && pwd)/node_modules/earcut/src/earcut.js
if [ ! -f "$EARCUT" ]; then echo "earcut.sh: earcut not installed in $NODE_DIR (make node)"; exit 1; fi
shopt -s nullglob
sets=("$DIR"/*.poly)
if [ ${#sets[@]} -eq 0 ]; then echo "earcut.sh: no polygon sets in $DIR (run bench_earclip first)"; exit 1; fi
. "$here/compare.sh"
for f in "${sets[@]}"; do
  pm_compare "ear clipping, $(basename "$f" .poly)" ms/polygon \
    "$BUILD/bench_earclip --time $f" "node $here/earcut_time.mjs $EARCUT $f" procmesh earcut
done
