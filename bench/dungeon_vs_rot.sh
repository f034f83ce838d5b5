#!/usr/bin/env bash
# procmesh dungeons against rot.js ROT.Map.Uniform (npm rot-js) in the same
# run: 200 x 200 cells, about 170 rooms, seeded, Uniform's timeLimit raised
# so it never cuts a run short. Prints both times and the ratio.
#   bash bench/dungeon_vs_rot.sh [build_dir]
set -euo pipefail
BUILD=${1:-build}
NODE_DIR=${PM_NODE_DIR:-$BUILD/node}
MAPS=${MAPS:-100}
if [ ! -d "$NODE_DIR/node_modules/rot-js" ]; then
  echo "dungeon_vs_rot: rot-js missing in $NODE_DIR (run make node)" >&2; exit 1
fi
[ -x "$BUILD/bench_dungeon" ] || cmake --build "$BUILD" --target bench_dungeon >/dev/null
rot=$(node "$(dirname "$0")/rot_uniform.mjs" "$NODE_DIR" "$MAPS" 0.1015)
ours=$("$BUILD/bench_dungeon" --peer "$MAPS")
echo "$rot" | head -1
echo "$ours" | head -1
r=$(echo "$rot" | awk '/^rot_ms_per_map/ {print $2}')
o=$(echo "$ours" | awk '/^ms_per_map/ {print $2}')
full=$(echo "$ours" | sed -n 's/.*ms layout, \([0-9.]*\) ms layout+mesh.*/\1/p')
awk -v r="$r" -v o="$o" -v f="$full" 'BEGIN {
  printf "speed-up vs rot.js Uniform: %.0fx (layout), %.1fx (layout + mesh)\n", r / o, r / f }'
