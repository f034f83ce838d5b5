#!/bin/sh
# Acceptance of /v1/networks on random plausible layouts (issue 11): the
# random-layout test of `make test` (300 layouts) run on more of them.
#   bench/layouts.sh [build-dir] [count] [seed]      (default 3000 layouts, seed 11)
# Prints the share built, the refusal histogram and any built layout that
# overlaps itself, has a non-manifold edge or a face looking down; for the
# layouts as drawn, with their nodes or edges reversed and as GeoJSON, then
# as drawn with forks down to 15 degrees; then networks made by SUMO's
# netgenerate.
set -e
BUILD=${BUILD:-build}
# bench/run.sh passes the build directory first, as to every bench script.
if [ -d "${1:-}" ]; then BUILD=$1; shift; fi
cmake --build "$BUILD" -j2 --target api_test_net_layouts >/dev/null
PM_LAYOUTS=${1:-3000} PM_LAYOUTS_SEED=${2:-11} "$BUILD"/api_test_net_layouts --jobs 1 2>&1 |
    grep -v '^\[' || true
# The same with forks as maps have them: edges meeting at a node 15
# degrees apart or more (30 above).
echo "forks (edges 15 degrees apart or more at a node):"
PM_LAYOUTS=${1:-3000} PM_LAYOUTS_SEED=${2:-11} PM_LAYOUTS_MIN_ANGLE=15 "$BUILD"/api_test_net_layouts --jobs 1 \
    --filter 'net_layouts/random_plausible_layouts_are*' 2>&1 | grep -v '^\[' || true
# Networks drawn by someone else's rules: SUMO's netgenerate (random
# planar networks, spider webs, grids; tools/netgen_bodies.py), 300 fresh
# ones, all of them, those whose roads overlap as drawn counted apart.
echo "networks drawn by SUMO's netgenerate:"
if command -v netgenerate >/dev/null 2>&1; then
  dir=$(mktemp -d)
  python3 tools/netgen_bodies.py "$dir" 300 "${2:-11}"
  PM_LAYOUTS_DIR="$dir" "$BUILD"/api_test_net_layouts --jobs 1 --filter 'net_layouts/networks_drawn*' 2>&1 |
      grep -v '^\[' || true
  rm -rf "$dir"
else
  echo "  netgenerate not installed (apt-get install sumo; make bench does): skipped"
fi
