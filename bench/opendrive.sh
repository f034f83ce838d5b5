#!/usr/bin/env bash
# Spline roads: procmesh against libOpenDRIVE (not in any package registry:
# a checkout of it outside this repository, in $PM_OPENDRIVE_DIR, is built
# into $BUILD/opendrive; without one this prints why and skips). The same
# 2 km road on both sides: a reference line of straights and 100 m-radius
# arcs, two 4 m lanes (8 m), eps 0.05. libOpenDRIVE parses the .xodr and
# meshes its lanes (get_road_network_mesh); procmesh takes a request with
# control points every 10 m along the same line (width 8, two strips
# across, so one column per lane border as libOpenDRIVE has, no shoulder,
# max_error 0.05, no chord cap) from request bytes to GLB. Both in thread
# CPU time, the same warm-up and runs, interleaved on one pinned CPU
# (bench/compare.sh). The row compares the time for the whole road; the
# lines under it give each side's vertices and microseconds per output
# vertex (the two sample the curve differently: per vertex alone would
# reward the denser mesh).
#   bench/opendrive.sh BUILD_DIR
set -euo pipefail
B=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
ODR=${PM_OPENDRIVE_DIR:-}
if [ -z "$ODR" ] || [ ! -f "$ODR/include/OpenDriveMap.h" ]; then
  echo "opendrive.sh: libOpenDRIVE not present (set PM_OPENDRIVE_DIR to a checkout of it): skipped"; exit 0
fi
if ! pkg-config --exists pugixml 2>/dev/null && [ ! -f /usr/include/pugixml.hpp ]; then
  echo "opendrive.sh: libOpenDRIVE needs pugixml (apt-get install libpugixml-dev): skipped"; exit 0
fi
[ -x "$B/bench_road_peer" ] || cmake --build "$B" --target bench_road_peer >/dev/null
ob=$B/opendrive
if [ ! -f "$ob/libOpenDrive.a" ]; then
  cmake -S "$ODR" -B "$ob" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF >/dev/null
  cmake --build "$ob" -j "$(nproc)" >/dev/null
fi
g++ -O2 -std=c++17 -I"$ODR/include" "$here/opendrive_peer.cpp" "$ob/libOpenDrive.a" -lpugixml -o "$ob/opendrive_peer"
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
pm_compare "road 2 km, 2 x 4 m lanes, eps 0.05" "ms/road" "$B/bench_road_peer $work/road.json" \
  "$ob/opendrive_peer $work/road.xodr 0.05" procmesh libOpenDRIVE
read -r pm_ms pm_us pm_v pm_t < <("$B/bench_road_peer" "$work/road.json" | head -1)
read -r od_ms od_us od_v od_t < <("$ob/opendrive_peer" "$work/road.xodr" 0.05)
echo "  procmesh:     $pm_v vertices, $pm_t triangles, $pm_ms ms, $pm_us us per output vertex"
echo "  libOpenDRIVE: $od_v vertices, $od_t triangles, $od_ms ms, $od_us us per output vertex"
awk -v a="$pm_us" -v b="$od_us" 'BEGIN { printf "  per output vertex: %s %.2fx\n", (b >= a ? "procmesh faster" : "libOpenDRIVE faster (we lose)"), (b >= a ? b / a : a / b) }'
"$B/bench_road_peer" "$work/road.json" | sed -n '2s/^/  procmesh /p'
