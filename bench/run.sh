#!/usr/bin/env bash
# Runs every benchmark: the bench_* executables CMake built, then each
# bench/*.sh script. Results go to stdout and to $BUILD/bench-results.txt.
# The bench_* programs that compare two sides in one process (bench_encode,
# bench_ingest) interleave them themselves; they run pinned to one CPU
# when the host has more than one (bench/compare.sh's rule, whose pinning
# the peer scripts use). Each section's header carries the load average.
set -uo pipefail
BUILD=${1:-build}
export PM_BUILD_DIR=$BUILD PM_NODE_DIR=$BUILD/node PM_SOURCE_DIR=$(pwd)
. bench/compare.sh
out=$BUILD/bench-results.txt
: > "$out"
status=0
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null; }
echo "make bench: $(nproc) cores, warm-up $PM_WARMUP, runs $PM_RUNS, rounds $PM_ROUNDS, ${PM_PIN[*]:-unpinned}; $(git rev-parse --short HEAD 2>/dev/null)" | tee -a "$out"
for b in "$BUILD"/bench_*; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b") (${PM_PIN[*]:-unpinned}; load average $(load))" | tee -a "$out"
  "${PM_PIN[@]}" "$b" 2>&1 | tee -a "$out" || status=1
done
for s in bench/*.sh; do
  [ "$(basename "$s")" = run.sh ] && continue
  echo "== $(basename "$s") (load average $(load))" | tee -a "$out"
  bash "$s" "$BUILD" 2>&1 | tee -a "$out" || status=1
done
exit $status
