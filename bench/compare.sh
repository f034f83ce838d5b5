# Sourced by the peer benchmarks: one rule for every side-by-side figure.
#   pm_compare LABEL UNIT "COMMAND A" "COMMAND B" [NAME_A NAME_B]
# Each command prints one number first (UNIT per item, lower is better),
# measured after the same warm-up on both sides (each bench program and
# peer script takes WARMUP and RUNS from the environment, PM_WARMUP and
# PM_RUNS, and prints the median of its runs). The two commands run
# PM_ROUNDS times (default 5) interleaved, A B then B A, each pinned to the
# same CPU when the host has more than one core; the row gives each side's
# median over the rounds, its spread, and the ratio of medians (B / A:
# above 1, A is faster). The road pair (bench_road_peer, opendrive_peer)
# also follows PM_SAMPLE_MS (bench/pm_bench.h): on both sides a sample is
# a batch of runs lasting 1 ms, so a 50 us run is neither timed with a
# 0.6 us pair of clock reads nor warmed up by 0.1 ms against the peer's
# 6 ms; PM_SAMPLE_MS=0 gives single runs, the rule before session 19.
PM_ROUNDS=${PM_ROUNDS:-5}
export PM_WARMUP=${PM_WARMUP:-2} PM_RUNS=${PM_RUNS:-5}
PM_PIN=()
if [ "$(nproc 2>/dev/null || echo 1)" -gt 1 ] && command -v taskset >/dev/null 2>&1; then
  PM_PIN=(taskset -c "${PM_BENCH_CPU:-1}")
fi

pm__median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
pm__min() { printf '%s\n' "$@" | sort -g | head -1; }
pm__max() { printf '%s\n' "$@" | sort -g | tail -1; }

pm_compare() {
  local label=$1 unit=$2 a=$3 b=$4 na=${5:-procmesh} nb=${6:-peer}
  local ta=() tb=() r x
  for ((r = 0; r < PM_ROUNDS; r++)); do
    if ((r % 2 == 0)); then
      x=$("${PM_PIN[@]}" bash -c "$a" | awk 'NR == 1 { print $1 }'); ta+=("$x")
      x=$("${PM_PIN[@]}" bash -c "$b" | awk 'NR == 1 { print $1 }'); tb+=("$x")
    else
      x=$("${PM_PIN[@]}" bash -c "$b" | awk 'NR == 1 { print $1 }'); tb+=("$x")
      x=$("${PM_PIN[@]}" bash -c "$a" | awk 'NR == 1 { print $1 }'); ta+=("$x")
    fi
  done
  local ma mb
  ma=$(pm__median "${ta[@]}") mb=$(pm__median "${tb[@]}")
  PM_CMP_A=$ma PM_CMP_B=$mb   # the two medians, for lines a caller prints under the row
  awk -v l="$label" -v u="$unit" -v na="$na" -v nb="$nb" -v ma="$ma" -v mb="$mb" \
      -v la="$(pm__min "${ta[@]}")" -v ha="$(pm__max "${ta[@]}")" \
      -v lb="$(pm__min "${tb[@]}")" -v hb="$(pm__max "${tb[@]}")" -v n="$PM_ROUNDS" \
      -v pin="${PM_PIN[*]:-unpinned}" 'BEGIN {
    printf "%-34s %s %10.4g %s [%.4g..%.4g] | %s %10.4g %s [%.4g..%.4g] | %s %.2fx %s  (median of %d interleaved rounds, %s)\n",
      l, na, ma, u, la, ha, nb, mb, u, lb, hb, (mb >= ma ? na : nb), (mb >= ma ? mb / ma : ma / mb),
      (mb >= ma ? "faster" : "faster (we lose)"), n, pin }'
}
