#!/usr/bin/env bash
# Delaunay: procmesh vs delaunator (npm) on the same uniform points, in the
# same run. bench_delaunay writes each point set to a file both sides read;
# each side is timed three times, alternating, so a busy machine hits both
# alike, and both must give the same triangle and hull counts. Wall-clock
# medians and minima, and the median process CPU time (steadier when other
# work shares the cores).
#   bench/delaunator.sh BUILD_DIR
set -euo pipefail
B=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$B/bench_delaunay" ] || [ ! -d "$B/node/node_modules/delaunator" ]; then
  echo "delaunator.sh: needs $B/bench_delaunay (make bench) and make node" >&2; exit 1
fi
for n in 100000 1000000; do
  f="$B/bench-points-$n.bin"
  "$B/bench_delaunay" gen "$n" "$f" 1
  runs=$([ "$n" -gt 100000 ] && echo 3 || echo 7)
  cbest=1e18; jbest=1e18; ccpu=1e18; jcpu=1e18
  for round in 1 2 3; do
    read -r cm cb ct ch cc < <("$B/bench_delaunay" time "$f" "$runs")
    read -r jm jb jt jh jc < <(node "$here/delaunator.mjs" "$B/node" "$f" "$runs")
    if [ "$ct" != "$jt" ] || [ "$ch" != "$jh" ]; then
      echo "delaunator.sh: results differ at $n: $ct/$ch triangles/hull vs $jt/$jh" >&2; exit 1
    fi
    cbest=$(awk -v a="$cbest" -v b="$cb" 'BEGIN { print (b < a) ? b : a }')
    jbest=$(awk -v a="$jbest" -v b="$jb" 'BEGIN { print (b < a) ? b : a }')
    ccpu=$(awk -v a="$ccpu" -v b="$cc" 'BEGIN { print (b < a) ? b : a }')
    jcpu=$(awk -v a="$jcpu" -v b="$jc" 'BEGIN { print (b < a) ? b : a }')
    printf '%7s points, round %d: procmesh median %s ms (min %s, cpu %s) | delaunator median %s ms (min %s, cpu %s) | %.2fx wall, %.2fx cpu  [%s triangles, hull %s]\n' \
      "$n" "$round" "$cm" "$cb" "$cc" "$jm" "$jb" "$jc" "$(awk -v a="$jm" -v b="$cm" 'BEGIN { print a / b }')" \
      "$(awk -v a="$jc" -v b="$cc" 'BEGIN { print a / b }')" "$ct" "$ch"
  done
  printf '%7s points, best of all runs: procmesh %s ms wall / %s ms cpu, delaunator %s ms wall / %s ms cpu: %.2fx faster (wall), %.2fx (cpu)\n' \
    "$n" "$cbest" "$ccpu" "$jbest" "$jcpu" "$(awk -v a="$jbest" -v b="$cbest" 'BEGIN { print a / b }')" \
    "$(awk -v a="$jcpu" -v b="$ccpu" 'BEGIN { print a / b }')"
  rm -f "$f"
done
