#!/usr/bin/env bash
# Delaunay: procmesh vs delaunator (npm) on the same uniform points, the same
# warm-up and runs, interleaved rounds on one pinned CPU (bench/compare.sh).
# bench_delaunay writes each point set to a file both sides read, and both
# must give the same triangle and hull counts. Wall-clock milliseconds.
#   bench/delaunator.sh BUILD_DIR
set -euo pipefail
B=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$B/bench_delaunay" ] || [ ! -d "$B/node/node_modules/delaunator" ]; then
  echo "delaunator.sh: needs $B/bench_delaunay (make bench) and make node" >&2; exit 1
fi
. "$here/compare.sh"
for n in 100000 1000000; do
  f="$B/bench-points-$n.bin"
  "$B/bench_delaunay" gen "$n" "$f" 1
  read -r _ _ ct ch _ < <(PM_WARMUP=0 PM_RUNS=1 "$B/bench_delaunay" time "$f")
  read -r _ _ jt jh _ < <(PM_WARMUP=0 PM_RUNS=1 node "$here/delaunator.mjs" "$B/node" "$f")
  if [ "$ct" != "$jt" ] || [ "$ch" != "$jh" ]; then
    echo "delaunator.sh: results differ at $n: $ct/$ch triangles/hull vs $jt/$jh" >&2; exit 1
  fi
  pm_compare "Delaunay, $n uniform points" ms "$B/bench_delaunay time $f" \
    "node $here/delaunator.mjs $B/node $f" procmesh delaunator
  rm -f "$f"
done
