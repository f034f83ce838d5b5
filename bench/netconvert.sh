#!/usr/bin/env bash
# Road networks: procmesh against SUMO's netconvert (Debian package sumo) on
# the same N x N grid town (100 m blocks, 7 m streets), end to end from the
# request's bytes on disk to the output file, both as one process per run
# timed in CPU milliseconds
# (`procmesh generate networks`, the same path as POST /v1/networks), the
# same warm-up and runs, interleaved rounds on one pinned CPU
# (bench/compare.sh). netconvert reads plain node/edge XML, in two forms:
#   one-way: one edge per street, 2 lanes of 3.5 m
#   two-way: two edges per street (one per direction), 1 lane of 3.5 m each
# and procmesh one edge per street of width 7; with sidewalks, netconvert
# guesses 2 m sidewalks (--sidewalks.guess) and procmesh builds 2 m ones.
# procmesh runs in two configurations against the same netconvert runs
# (three commands interleaved per round, A B C then C B A, medians):
#   default:   max_segment 5 m (a chord at least every 5 m: a 100 m street
#              is 20 sections of mesh, the 40 x 40 town with sidewalks a
#              79 MB GLB);
#   "netconvert's detail": max_segment 1000, so a straight street is one
#              chord, as netconvert's lane shape of 2 points is (curves
#              still follow max_error; corner arcs as by default).
# Each run writes over the file the run before it left, as a pipeline
# regenerating its assets does: netconvert truncates it and writes anew,
# procmesh writes it over in place (service/cli.c), which costs the kernel
# less. So the turned grid also has a row where every run of both sides
# writes a file of a new name (each run's own PID in it).
#   bench/netconvert.sh BUILD_DIR [N...]     (default: 10 40)
set -euo pipefail
B=${1:-build}
shift || true
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10 40)
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v netconvert >/dev/null 2>&1; then
  echo "netconvert.sh: netconvert not installed (apt-get install sumo; make bench does): skipped"; exit 0
fi
. "$here/compare.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
PM=$(cd "$B" && pwd)/procmesh

# Prints the median CPU milliseconds (user + system) of PM_RUNS runs of a
# command, after PM_WARMUP untimed ones, each timed as its own process
# (bench/lib/cpu_run.py: fork and exec, no shell around it, whose start
# costs about 1.2 ms, a quarter of a 10x10 run, and would be counted on
# both sides): on a shared 2-core host, CPU time is what the other load
# does not inflate; both sides are single-threaded processes, so it is also
# their latency.
export PM_CPU_RUN="$here/lib/cpu_run.py"
pm_time_cmd() {
  python3 "$PM_CPU_RUN" "$PM_WARMUP" "$PM_RUNS" "$1" | awk '{ print $1 }'
}
export -f pm_time_cmd

# Like pm_compare (bench/compare.sh), for two procmesh commands against one
# peer command, all three in each round (A B C, then C B A), pinned: two
# rows, each procmesh median against the same peer median.
pm_compare2() {
  local label=$1 unit=$2 a=$3 c=$4 b=$5 lc=$6
  local ta=() tb=() tc=() r x
  for ((r = 0; r < PM_ROUNDS; r++)); do
    local order=(a c b)
    ((r % 2 == 0)) || order=(b c a)
    for k in "${order[@]}"; do
      case $k in
        a) x=$("${PM_PIN[@]}" bash -c "$a" | awk 'NR == 1 { print $1 }'); ta+=("$x") ;;
        c) x=$("${PM_PIN[@]}" bash -c "$c" | awk 'NR == 1 { print $1 }'); tc+=("$x") ;;
        b) x=$("${PM_PIN[@]}" bash -c "$b" | awk 'NR == 1 { print $1 }'); tb+=("$x") ;;
      esac
    done
  done
  local mb; mb=$(pm__median "${tb[@]}")
  local row t l
  for row in a c; do
    if [ $row = a ]; then t=("${ta[@]}"); l=$label; else t=("${tc[@]}"); l="$label, $lc"; fi
    awk -v l="$l" -v u="$unit" -v ma="$(pm__median "${t[@]}")" -v mb="$mb" \
        -v la="$(pm__min "${t[@]}")" -v ha="$(pm__max "${t[@]}")" \
        -v lb="$(pm__min "${tb[@]}")" -v hb="$(pm__max "${tb[@]}")" -v n="$PM_ROUNDS" \
        -v pin="${PM_PIN[*]:-unpinned}" 'BEGIN {
      printf "%-76s procmesh %8.4g %s [%.4g..%.4g] | netconvert %8.4g %s [%.4g..%.4g] | %s %.2fx %s  (median of %d interleaved rounds, %s)\n",
        l, ma, u, la, ha, mb, u, lb, hb, (mb >= ma ? "procmesh" : "netconvert"), (mb >= ma ? mb / ma : ma / mb),
        (mb >= ma ? "faster" : "faster (we lose)"), n, pin }'
  done
}

# Each size runs twice: the grid along the axes, and the same grid turned
# by $PM_NC_TURN degrees (default 30; one-way file only), its nodes
# rounded to the millimetre, for both sides. A town along the axes is the
# kindest input for procmesh: every junction the same (one junction mesh
# reused), every coordinate a whole number; the turned grid is what a map
# editor more often draws.
TURN=${PM_NC_TURN:-30}
for n in "${SIZES[@]}"; do
 for turn in 0 "$TURN"; do
  python3 - "$n" "$work" "$turn" <<'PY'
import json, math, sys
n, d, turn = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
S = 100.0
ids = lambda i, j: f"n{i}_{j}"
c, s = math.cos(math.radians(turn)), math.sin(math.radians(turn))
rot = lambda x, y: (x, y) if turn == 0 else (round(c * x - s * y, 3), round(s * x + c * y, 3))
nodes = [(ids(i, j), *rot(S * i, S * j)) for i in range(n) for j in range(n)]
streets = [(ids(i, j), ids(i + 1, j)) for i in range(n - 1) for j in range(n)] + \
          [(ids(i, j), ids(i, j + 1)) for i in range(n) for j in range(n - 1)]
with open(f"{d}/grid.nod.xml", "w") as f:
    f.write("<nodes>\n")
    for k, x, y in nodes:
        f.write(f'  <node id="{k}" x="{x}" y="{y}" type="priority"/>\n')
    f.write("</nodes>\n")
for form in ("oneway", "twoway"):
    with open(f"{d}/{form}.edg.xml", "w") as f:
        f.write("<edges>\n")
        for a, b in streets:
            if form == "oneway":
                f.write(f'  <edge id="{a}-{b}" from="{a}" to="{b}" numLanes="2" width="3.5"/>\n')
            else:
                f.write(f'  <edge id="{a}-{b}" from="{a}" to="{b}" numLanes="1" width="3.5"/>\n')
                f.write(f'  <edge id="{b}-{a}" from="{b}" to="{a}" numLanes="1" width="3.5"/>\n')
        f.write("</edges>\n")
# procmesh: positions are [x, z] on the ground plane (netconvert's y is our -z).
for sw in (0, 1):
    req = {"nodes": [{"id": k, "position": [x, -y]} for k, x, y in nodes],
           "edges": [{"from": a, "to": b, "width": 7} for a, b in streets]}
    if sw:
        req["sidewalk"] = {"width": 2}
    with open(f"{d}/req{sw}.json", "w") as f:
        json.dump(req, f)
    req["max_segment"] = 1000   # netconvert's level of detail: a straight street is one chord
    with open(f"{d}/req{sw}c.json", "w") as f:
        json.dump(req, f)
PY
  LIM="--max-vertices 50000000 --max-job-mb 4096 --body-limit 67108864"
  for sw in 0 1; do
    guess=$([ $sw = 1 ] && echo "--sidewalks.guess true --sidewalks.guess.min-speed 0" || echo "")
    label=$([ $sw = 1 ] && echo "with sidewalks" || echo "no sidewalks")
    forms=(oneway twoway)
    [ "$turn" = 0 ] || forms=(oneway)
    where=$([ "$turn" = 0 ] && echo "" || echo " turned ${turn} deg")
    for form in "${forms[@]}"; do
      pm_compare2 "network ${n}x${n}$where, $form, $label" "ms CPU" \
        "pm_time_cmd '$PM generate networks --format glb $LIM -o $work/out.glb < $work/req$sw.json'" \
        "pm_time_cmd '$PM generate networks --format glb $LIM -o $work/outc.glb < $work/req${sw}c.json'" \
        "pm_time_cmd 'netconvert --node-files $work/grid.nod.xml --edge-files $work/$form.edg.xml $guess -o $work/out.net.xml'" \
        "at netconvert's detail (max_segment 1000)"
    done
    if [ "$turn" != 0 ] && [ $sw = 0 ]; then
      pm_compare "network ${n}x${n}$where, oneway, $label, each run to a new file" "ms CPU" \
        "pm_time_cmd '$PM generate networks --format glb $LIM -o $work/fresh.\$\$.glb < $work/req0.json'" \
        "pm_time_cmd 'netconvert --node-files $work/grid.nod.xml --edge-files $work/oneway.edg.xml -o $work/fresh.\$\$.net.xml'" \
        procmesh netconvert
      rm -f "$work"/fresh.*
    fi
    printf '  %s: procmesh GLB %s bytes (default), %s bytes (max_segment 1000); netconvert net.xml %s bytes (%s)\n' \
      "$label" "$(stat -c %s "$work/out.glb")" "$(stat -c %s "$work/outc.glb")" "$(stat -c %s "$work/out.net.xml")" "${forms[-1]}"
  done
 done
done
