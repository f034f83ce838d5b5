#!/usr/bin/env bash
# Spline roads: procmesh against libOpenDRIVE (not in any package registry:
# a checkout of it outside this repository, in $PM_OPENDRIVE_DIR, by default
# ../peers/libOpenDRIVE beside the repository (or beside the main checkout
# of a git worktree), is built into $BUILD/opendrive; without one this
# prints where it looked and skips). The same
# 2 km road on both sides: a reference line of straights and 100 m-radius
# arcs, two 4 m lanes (8 m), eps 0.05. libOpenDRIVE parses the .xodr and
# meshes its lanes (get_road_network_mesh); procmesh takes a request with
# control points every 10 m along the same line (width 8, two strips
# across, so one column per lane border as libOpenDRIVE has, no shoulder,
# max_error 0.05, no chord cap) from request bytes to GLB. Both in thread
# CPU time, the same warm-up and runs, interleaved on one pinned CPU
# (bench/compare.sh), under the same malloc thresholds: the service's
# policy (service/budget.h: 2 MiB mmap threshold, 8 MiB trim threshold),
# which procmesh serve sets at start. Without it glibc trims the heap
# after each of procmesh's requests and the next one faults its pages in
# again (some 330 faults per request on the fine road, most of its time);
# libOpenDRIVE is also a little faster under it.
#
# What each side makes. libOpenDRIVE: an in-memory mesh per lane (double
# positions, normals, s/t coordinates, a strip of two borders per lane,
# so the centre border twice) and empty roadmark/object/signal meshes; it
# also meshes the centre lane (id 0) as a strip of zero width. procmesh:
# one GLB (float positions, normals, UVs, indices in vertex-cache order,
# metadata), after parsing, validation, the cache key and the self-overlap
# check; three columns per section, the centre one shared.
# Neither side makes shoulders, LODs, props or terrain here.
#
# How they sample. libOpenDRIVE ignores eps on arcs (Arc::approximate_linear
# steps 0.01 / curvature: 1 m here, a chord error of about 1.3 mm), so at
# "eps 0.05" it makes about 3x the sections procmesh needs for 5 cm. So the
# rows below (every sample a batch of runs lasting 1 ms on both sides,
# PM_SAMPLE_MS: bench/compare.sh; the eps 0.05 road once more with
# single-run samples, the rule before): the whole road; per output vertex as each outputs it; per
# lane vertex (libOpenDRIVE's zero-width centre lane left out); per lane
# and section; and a second road where procmesh meets libOpenDRIVE's real
# accuracy (max_error 0.00125, the chord error of 1 m steps on a 100 m
# radius), where the two meshes are about as dense.
#   bench/opendrive.sh BUILD_DIR
set -euo pipefail
B=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
ODR=${PM_OPENDRIVE_DIR:-}
if [ -z "$ODR" ]; then
  main=$(dirname "$(git -C "$here" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || echo "$here/../.git")")
  for d in "$here/../../peers/libOpenDRIVE" "$main/../peers/libOpenDRIVE"; do
    [ -f "$d/include/OpenDriveMap.h" ] && { ODR=$(cd "$d" && pwd); break; }
  done
fi
if [ -z "$ODR" ] || [ ! -f "$ODR/include/OpenDriveMap.h" ]; then
  echo "opendrive.sh: libOpenDRIVE not found in ${ODR:-../peers/libOpenDRIVE beside the repository} (set PM_OPENDRIVE_DIR to a checkout of it): skipped"; exit 0
fi
if ! pkg-config --exists pugixml 2>/dev/null && [ ! -f /usr/include/pugixml.hpp ]; then
  echo "opendrive.sh: libOpenDRIVE needs pugixml (apt-get install libpugixml-dev): skipped"; exit 0
fi
# Always brought up to date: bench targets are not in the default build,
# so a bench_road_peer left from an older checkout would be measured.
cmake --build "$B" --target bench_road_peer >/dev/null
ob=$B/opendrive
if [ ! -f "$ob/libOpenDrive.a" ]; then
  cmake -S "$ODR" -B "$ob" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF >/dev/null
  cmake --build "$ob" -j "$(nproc)" >/dev/null
fi
g++ -O2 -std=c++17 -I"$ODR/include" -I"$here" "$here/opendrive_peer.cpp" "$ob/libOpenDrive.a" -lpugixml -o "$ob/opendrive_peer"
echo "opendrive.sh: libOpenDRIVE $(git -C "$ODR" log -1 --format=%h 2>/dev/null || echo '(no git)') from $ODR"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import json, math, sys
d = sys.argv[1]
# Reference line: (kind, length, curvature), 2 km in all.
parts = [("line", 200, 0), ("arc", 150, 0.01), ("line", 200, 0), ("arc", 150, -0.01)] * 3 + [("line", 200, 0)]
geo, x, y, h, s = [], 0.0, 0.0, 0.0, 0.0
for kind, length, k in parts:
    geo.append((s, x, y, h, length, kind, k))
    if k == 0:
        x, y = x + length * math.cos(h), y + length * math.sin(h)
    else:
        x, y = x + (math.sin(h + k * length) - math.sin(h)) / k, y - (math.cos(h + k * length) - math.cos(h)) / k
        h += k * length
    s += length
total = s
def at(t):
    for s0, x0, y0, h0, L, kind, k in geo:
        if t <= s0 + L + 1e-9:
            u = t - s0
            if k == 0:
                return x0 + u * math.cos(h0), y0 + u * math.sin(h0)
            return x0 + (math.sin(h0 + k * u) - math.sin(h0)) / k, y0 - (math.cos(h0 + k * u) - math.cos(h0)) / k
plan = "".join(
    f'      <geometry s="{s0:.6f}" x="{x0:.6f}" y="{y0:.6f}" hdg="{h0:.9f}" length="{L}">'
    + ("<line/>" if kind == "line" else f'<arc curvature="{k}"/>') + "</geometry>\n"
    for s0, x0, y0, h0, L, kind, k in geo)
lane = lambda i, side: f'''          <{side}><lane id="{i}" type="driving" level="false"><width sOffset="0" a="4" b="0" c="0" d="0"/></lane></{side}>\n'''
xodr = f'''<?xml version="1.0" standalone="yes"?>
<OpenDRIVE>
  <header revMajor="1" revMinor="6" name="procmesh-bench"/>
  <road name="r" length="{total}" id="1" junction="-1">
    <planView>
{plan}    </planView>
    <lanes>
      <laneSection s="0">
{lane(1, "left")}          <center><lane id="0" type="none" level="false"/></center>
{lane(-1, "right")}      </laneSection>
    </lanes>
  </road>
</OpenDRIVE>
'''
open(f"{d}/road.xodr", "w").write(xodr)
pts = [at(min(t, total)) for t in [i * 10.0 for i in range(int(total // 10) + 1)]]
req = {"points": [[round(px, 6), 0, round(-py, 6)] for px, py in pts], "width": 8, "shoulder": 0,
       "cross_segments": 2, "max_error": 0.05, "max_segment": 1000}
json.dump(req, open(f"{d}/road.json", "w"))
PY
. "$here/compare.sh"
policy=$("$B/bench_road_peer" --malloc-policy)
echo "opendrive.sh: both sides under malloc thresholds mmap $(echo $policy | cut -d' ' -f1) B, trim $(echo $policy | cut -d' ' -f2) B (the service's)"
# One road: the timed row, then each side's counts and the per-unit ratios.
pm__road_rows() {
  local label=$1 req=$2
  pm_compare "$label" "ms/road" "$B/bench_road_peer $req" \
    "$ob/opendrive_peer $work/road.xodr 0.05 $policy" procmesh libOpenDRIVE
  local pm_ms pm_us pm_v pm_t od_ms od_us od_v od_t od_lv od_sec
  read -r pm_ms pm_us pm_v pm_t < <("${PM_PIN[@]}" "$B/bench_road_peer" "$req" | head -1)
  read -r od_ms od_us od_v od_t od_lv od_sec < <("${PM_PIN[@]}" "$ob/opendrive_peer" "$work/road.xodr" 0.05 $policy)
  local pm_sec=$((pm_v / 3))
  echo "  procmesh:     $pm_v vertices ($pm_sec sections x 3 columns, the centre one shared by both lanes), $pm_t triangles"
  echo "  libOpenDRIVE: $od_v vertices ($od_lv in the two lanes: $od_sec sections x 2 lanes x 2 borders; the rest its zero-width centre lane), $od_t triangles"
  # Per unit from the row's medians.
  awk -v pm="$PM_CMP_A" -v od="$PM_CMP_B" -v pv="$pm_v" -v ov="$od_v" -v olv="$od_lv" -v ps="$pm_sec" -v os="$od_sec" '
    function row(what, a, b) {
      printf "  %-44s procmesh %.4f us, libOpenDRIVE %.4f us: %s %.2fx\n", what, a, b,
        (b >= a ? "procmesh faster" : "libOpenDRIVE faster (we lose)"), (b >= a ? b / a : a / b) }
    BEGIN {
      row("per output vertex, as output:", 1e3 * pm / pv, 1e3 * od / ov)
      row("per lane vertex (centre lane left out):", 1e3 * pm / pv, 1e3 * od / olv)
      row("per lane and section:", 1e3 * pm / (2 * ps), 1e3 * od / (2 * os)) }'
  "${PM_PIN[@]}" "$B/bench_road_peer" "$req" | sed -n '2s/^/  procmesh /p'
}
pm__road_rows "road 2 km, 2 x 4 m lanes, eps 0.05" "$work/road.json"
sed 's/"max_error": 0.05/"max_error": 0.00125/' "$work/road.json" > "$work/road_fine.json"
pm__road_rows "the same at libOpenDRIVE's accuracy" "$work/road_fine.json"
# The eps 0.05 road again under the rule before session 19: every sample
# one run (2 single-run warm-ups, 5 single-run samples, each with its own
# clock reads), on both sides.
PM_SAMPLE_MS=0 pm__road_rows "eps 0.05, single-run samples (PM_SAMPLE_MS=0)" "$work/road.json"
# Stage by stage: instructions of one procmesh request (callgrind, so the
# load on the host does not matter), inclusive of what each stage calls;
# symbols bound at load (LD_BIND_NOW), so the dynamic linker's first-call
# lookups are not counted in whichever stage calls a library first.
if command -v valgrind >/dev/null 2>&1 && command -v callgrind_annotate >/dev/null 2>&1; then
  for req in "$work/road.json" "$work/road_fine.json"; do
    LD_BIND_NOW=1 PM_SAMPLE_MS=0 PM_WARMUP=0 PM_RUNS=1 PM_STAGE_RUNS=0 valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
      "$B/bench_road_peer" "$req" >/dev/null 2>&1 || continue
    echo "procmesh stages, instructions of one request ($(basename "$req" .json)):"
    callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$work/cg.out" 2>/dev/null | awk '
      { n = $1; gsub(",", "", n) }
      / \[/ && n ~ /^[0-9]+$/ {
        f = $0; sub(/ \[.*/, "", f); sub(/.*:/, "", f); sub(/ *$/, "", f)
        if (!(f in ir) || n + 0 > ir[f]) ir[f] = n + 0 }
      END {
        split("pm_api_request_run:whole request|pm_api_request_document:JSON text|" \
              "pm__road_parse:params|pm_api_cache_key_output:cache key|pm__road_generate:generate|" \
              "pm_spline_sample:  adaptive sampling|pm__road_sections:  frames and banking|" \
              "pm__road_clamp_folds:  fold clamps|pm__road_grid:  vertex grid|pm__road_emit:  mesh|" \
              "meshopt_optimizeVertexCache:    of it vertex-cache order|pm__road_overlaps:  overlap check|" \
              "pm_api_encode_with:GLB", st, "|")
        for (i = 1; i in st; i++) {
          k = st[i]; sub(/:.*/, "", k); l = st[i]; sub(/^[^:]*:/, "", l)
          if (k in ir) printf "  %-32s %10d\n", l, ir[k] }
        if (("pm_api_request_run" in ir) && ("pm__road_generate" in ir))
          printf "  %-32s %10d\n", "api stages (whole - generate)", ir["pm_api_request_run"] - ir["pm__road_generate"] }'
  done
else
  echo "procmesh stages: valgrind not installed (scripts/deps.sh bench): skipped"
fi
