#!/usr/bin/env bash
# Developer tool: look at a mesh. Renders a GLB to a PNG with three.js in
# headless Chromium (Debian's chromium package), with a wireframe overlay.
#   tools/render.sh in.glb out.png [iso|top]     (RENDER_WIRE=0: no wireframe overlay)
# ?compress=meshopt GLBs load too (three's MeshoptDecoder).
# Or straight from the server:
#   curl -s -X POST 'localhost:8080/v1/junctions?format=glb' -d @req.json -o j.glb
#   tools/render.sh j.glb j.png top
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
dir=${RENDER_NODE_DIR:-$top/build/render}
if [ ! -x /usr/bin/chromium ]; then
  echo "render: needs Debian's chromium: apt-get install -y chromium" >&2; exit 1
fi
if [ ! -f "$dir/.installed" ] || [ "$here/render/package.json" -nt "$dir/.installed" ]; then
  mkdir -p "$dir" && cp "$here/render/package.json" "$dir/"
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error >/dev/null) && touch "$dir/.installed"
fi
# Node resolves playwright-core from the script's own folder: link it in.
ln -sfn "$dir/node_modules" "$here/render/node_modules"
RENDER_NODE_DIR=$dir exec node "$here/render/render.mjs" "$(realpath "$1")" "$2" "${3:-iso}"
