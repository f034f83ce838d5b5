#!/usr/bin/env bash
# Runs every route's libFuzzer harness for a set time (`make fuzz`).
#   tests/fuzz/run.sh BUILD_DIR SECONDS_PER_ROUTE [ROUTE...]
# Each starts from its seed corpus (tests/fuzz/corpus/<route>, read only);
# what it finds goes to BUILD_DIR/fuzz/<route>/corpus, crash files to
# BUILD_DIR/fuzz/<route>/ (crash-*, leak-*, timeout-*). Keep a crash file as
# tests/fuzz/crashes/<route>/<name> once fixed: `make test` replays it.
# Prints runs and crashes per route; exits 1 when any route crashed.
set -uo pipefail
build=$1 secs=$2
shift 2
routes=("$@")
[ ${#routes[@]} -eq 0 ] && routes=(junctions roads networks dungeons grids)
src=$(cd "$(dirname "$0")/../.." && pwd)
# A dictionary: JSON's tokens and every member name of the API contract.
dict=$build/fuzz/json.dict
mkdir -p "$build/fuzz"
{
  printf '"%s"\n' '{' '}' '[' ']' ',' ':' true false null 0 -1 0.5 1e308 -0 '\"' '?' '&' '='
  grep -oE '^ +[a-z_]+:' "$src/api/openapi.yaml" | tr -d ' :' | sort -u | sed 's/.*/"\\"&\\""/'
} >"$dict"
failed=0
printf '%-10s %12s %8s %s\n' route runs crashes "exec/s"
for r in "${routes[@]}"; do
  out=$build/fuzz/$r
  mkdir -p "$out/corpus"
  log=$out/log.txt
  nice "$build/fuzz_$r" -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -dict="$dict" -artifact_prefix="$out/" "$out/corpus" "$src/tests/fuzz/corpus/$r" \
    >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  crashes=$(find "$out" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' \
            -o -maxdepth 1 -name 'timeout-*' -o -maxdepth 1 -name 'oom-*' | wc -l)
  printf '%-10s %12s %8s %s\n' "$r" "${runs:-?}" "$crashes" "${speed:-?}"
  if [ $rc -ne 0 ] || [ "$crashes" -ne 0 ]; then
    failed=1
    echo "  $r: exit $rc; see $log" >&2
  fi
done
exit $failed
