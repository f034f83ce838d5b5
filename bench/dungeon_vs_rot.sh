#!/usr/bin/env bash
# procmesh dungeons against rot.js ROT.Map.Uniform (npm rot-js): 200 x 200
# cells, about 170 rooms, seeded, Uniform's timeLimit raised so it never cuts
# a run short. Two pairs, each with the same warm-up and runs on both sides,
# interleaved on one pinned CPU (bench/compare.sh):
#   layout: procmesh rooms + graph + corridors | rot.js create()
#   full:   procmesh layout + mesh             | rot.js create() filling the cell grid
# and the quality of each: maps with a corridor through a room.
#   bash bench/dungeon_vs_rot.sh [build_dir]
set -euo pipefail
BUILD=${1:-build}
NODE_DIR=${PM_NODE_DIR:-$BUILD/node}
MAPS=${MAPS:-20}
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -d "$NODE_DIR/node_modules/rot-js" ]; then
  echo "dungeon_vs_rot: rot-js missing in $NODE_DIR (run make node)" >&2; exit 1
fi
[ -x "$BUILD/bench_dungeon" ] || cmake --build "$BUILD" --target bench_dungeon >/dev/null
. "$here/compare.sh"
for mode in layout full; do
  pm_compare "dungeon 200x200, 170 rooms, $mode" ms/map "$BUILD/bench_dungeon --time $mode $MAPS" \
    "node $here/rot_uniform.mjs $NODE_DIR time $mode $MAPS" procmesh rot.js
done
node "$here/rot_uniform.mjs" "$NODE_DIR" quality 100
