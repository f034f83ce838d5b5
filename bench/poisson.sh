#!/usr/bin/env bash
# Poisson-disk sampling: procmesh vs fast-2d-poisson-disk-sampling (npm), the
# same settings (800 x 800, radius 2, 30 tries), the same warm-up and runs,
# interleaved rounds on one pinned CPU (bench/compare.sh).
#   bench/poisson.sh BUILD_DIR
set -euo pipefail
B=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$B/bench_poisson" ] || [ ! -d "$B/node/node_modules/fast-2d-poisson-disk-sampling" ]; then
  echo "poisson.sh: needs $B/bench_poisson (make bench) and make node" >&2; exit 1
fi
. "$here/compare.sh"
pm_compare "poisson 800x800 r=2" ms "$B/bench_poisson" "node $here/poisson.mjs $B/node" \
  procmesh fast-2d-poisson-disk-sampling
