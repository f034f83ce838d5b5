#!/usr/bin/env bash
# Before/after of junction 1.1.0 (sloped asphalt refined to follow the
# height field, sidewalk slabs closed): builds the tree at
# $PM_JUNCTION_BEFORE (default 1ff5d7a, the last commit before that work)
# with today's bench/bench_junction.c (and its bench headers), then runs `bench_junction sloped`
# on both, PM_ROUNDS times (5) interleaved with the first side alternating, on
# one pinned CPU (bench/compare.sh) (request bytes -> GLB bytes, medians).
#   bench/junction_heights.sh [build-dir]
set -euo pipefail
BUILD=${1:-build}
rev=${PM_JUNCTION_BEFORE:-1ff5d7a}
src=$(pwd)
dir=$BUILD/junction-before
if [ ! -f "$dir/.rev" ] || [ "$(cat "$dir/.rev")" != "$rev" ]; then
  rm -rf "$dir"
  mkdir -p "$dir/src"
  git -C "$src" archive "$rev" | tar -x -C "$dir/src"
  cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  echo "$rev" > "$dir/.rev"
fi
cp "$src/bench/bench_junction.c" "$src/bench/pm_bench.h" "$src/bench/pm_bench_request.h" "$dir/src/bench/"
cmake --build "$dir/build" -j2 --target bench_junction >/dev/null
cmake --build "$BUILD" -j2 --target bench_junction >/dev/null
. "$src/bench/compare.sh"
before() { echo "-- round $round, before ($rev):"; "${PM_PIN[@]}" "$dir/build/bench_junction" sloped | tail -n +2; }
after() {
  echo "-- round $round, after ($(git -C "$src" rev-parse --short HEAD)):"
  "${PM_PIN[@]}" "$BUILD/bench_junction" sloped | tail -n +2
}
for ((round = 1; round <= PM_ROUNDS; round++)); do
  if ((round % 2)); then before; after; else after; before; fi
done
