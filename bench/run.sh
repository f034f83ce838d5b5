#!/usr/bin/env bash
# Runs every benchmark: the bench_* executables CMake built, then each
# bench/*.sh script. Results go to stdout and to $BUILD/bench-results.txt.
set -uo pipefail
BUILD=${1:-build}
export PM_BUILD_DIR=$BUILD PM_NODE_DIR=$BUILD/node PM_SOURCE_DIR=$(pwd)
out=$BUILD/bench-results.txt
: > "$out"
status=0
for b in "$BUILD"/bench_*; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b")" | tee -a "$out"
  "$b" 2>&1 | tee -a "$out" || status=1
done
for s in bench/*.sh; do
  [ "$(basename "$s")" = run.sh ] && continue
  echo "== $(basename "$s")" | tee -a "$out"
  bash "$s" "$BUILD" 2>&1 | tee -a "$out" || status=1
done
exit $status
