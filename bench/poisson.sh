#!/usr/bin/env bash
# Poisson-disk sampling: procmesh vs fast-2d-poisson-disk-sampling (npm), the
# same settings (800 x 800, radius 2, 30 tries), in the same run. Each side
# is timed three times, alternating, so a busy machine hits both alike.
#   bench/poisson.sh BUILD_DIR
set -euo pipefail
B=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$B/bench_poisson" ] || [ ! -d "$B/node/node_modules/fast-2d-poisson-disk-sampling" ]; then
  echo "poisson.sh: needs $B/bench_poisson (make bench) and make node" >&2; exit 1
fi
cbest=1e18; jbest=1e18
for round in 1 2 3; do
  read -r cm cb cn < <("$B/bench_poisson" 9)
  read -r jm jb jn < <(node "$here/poisson.mjs" "$B/node" 9)
  cbest=$(awk -v a="$cbest" -v b="$cb" 'BEGIN { print (b < a) ? b : a }')
  jbest=$(awk -v a="$jbest" -v b="$jb" 'BEGIN { print (b < a) ? b : a }')
  printf 'round %d: procmesh median %s ms (min %s, %s points) | fast-2d-poisson-disk-sampling median %s ms (min %s, %s points) | %.2fx\n' \
    "$round" "$cm" "$cb" "$cn" "$jm" "$jb" "$jn" "$(awk -v a="$jm" -v b="$cm" 'BEGIN { print a / b }')"
done
printf 'best of all runs: procmesh %s ms, fast-2d-poisson-disk-sampling %s ms: %.2fx faster\n' \
  "$cbest" "$jbest" "$(awk -v a="$jbest" -v b="$cbest" 'BEGIN { print a / b }')"
