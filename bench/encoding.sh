#!/usr/bin/env bash
# Compressed cached hits against nginx serving the very same compressed
# bytes from files (gzip_static, and brotli_static when the module is
# installed), with open_file_cache: same wrk, same connections, rounds
# interleaved, medians reported (goal: procmesh >= 0.8 x nginx). Also the
# size and CPU time of each compression level on a 1.6 MB town GLB.
#   bench/encoding.sh [build dir]
# Everything listens on 127.0.0.1 and is stopped on exit.
set -uo pipefail
BUILD=${1:-build}
BIN=$BUILD/procmesh
DUR=${PM_BENCH_SECONDS:-5}
ROUNDS=${PM_BENCH_ROUNDS:-5}
CONNS=${PM_BENCH_CONNS:-32}
THREADS=2
for tool in wrk nginx curl python3; do
  command -v $tool >/dev/null || { echo "encoding.sh: $tool is missing (make deps-bench)"; exit 1; }
done
[ -x "$BIN" ] || { echo "encoding.sh: no $BIN (build first)"; exit 1; }
BROTLI_MOD=/usr/lib/nginx/modules/ngx_http_brotli_static_module.so

TMP=$(mktemp -d /tmp/pm-bench-enc.XXXXXX)
chmod 755 "$TMP"
PM_PID=
cleanup() {
  [ -n "$PM_PID" ] && kill "$PM_PID" 2>/dev/null && wait "$PM_PID" 2>/dev/null
  [ -f "$TMP/nginx.pid" ] && kill "$(cat "$TMP/nginx.pid")" 2>/dev/null
  sleep 0.2
  rm -rf "$TMP"
}
trap cleanup EXIT

log=$TMP/procmesh.log
"$BIN" --bind 127.0.0.1 --port 0 --threads $THREADS --workers 2 --body-limit 4M \
  --log-level info 2>"$log" &
PM_PID=$!
for _ in $(seq 200); do
  PM_PORT=$(grep -o '"msg":"listening","port":[0-9]*' "$log" | grep -o '[0-9]*$')
  [ -n "$PM_PORT" ] && break
  sleep 0.05
done
[ -n "$PM_PORT" ] || { echo "procmesh did not start:"; cat "$log"; exit 1; }
PM=http://127.0.0.1:$PM_PORT

# ---- compression levels on the 10 x 10 town (bench/bench_compress) ----------
python3 - > "$TMP/town.json" <<'PY'
import json
n = 10
nodes = [{"id": i * n + j, "position": [40 * i, round(0.2 * ((i * 7 + j * 3) % 5), 1), 40 * j]}
         for i in range(n) for j in range(n)]
edges = []
for i in range(n):
    for j in range(n):
        if i + 1 < n: edges.append({"from": i * n + j, "to": (i + 1) * n + j})
        if j + 1 < n: edges.append({"from": i * n + j, "to": i * n + j + 1, "width": 6 if j % 2 else 8,
                                    "points": [[40.0 * i + 3, 40.0 * j + 20]]})
print(json.dumps({"sidewalk": {"width": 2}, "corner_radius": 4, "nodes": nodes, "edges": edges}))
PY
curl -s -D "$TMP/town.h" -o "$TMP/town.glb" -H 'Content-Type: application/json' \
  --data-binary @"$TMP/town.json" "$PM/v1/networks?format=glb"
echo "10 x 10 town miss: $(grep -i '^Server-Timing' "$TMP/town.h" | tr -d '\r')"
if [ -x "$BUILD/bench_compress" ]; then
  "$BUILD/bench_compress" "$TMP/town.glb"
else
  echo "(no $BUILD/bench_compress: cmake --build $BUILD --target bench_compress)"
fi

# ---- compressed hits vs nginx -------------------------------------------------
mkdir -p "$TMP/www" "$TMP/logs"
# Same request line on both servers: GET forms of two results, small and large.
declare -A QUERY=([dungeon]='/v1/dungeons?seed=42&count=12&extent=64x64&format=glb'
                  [grid]='/v1/grids?seed=1&size=20&format=glb')
NAMES="dungeon grid"
for name in $NAMES; do
  q=${QUERY[$name]}
  d=$TMP/www$(dirname "${q%%\?*}")
  mkdir -p "$d"
  f=$d/$(basename "${q%%\?*}")
  curl -s -o "$f" "$PM$q"
  curl -s -H 'Accept-Encoding: gzip' -o "$f.gz" "$PM$q"
  curl -s -H 'Accept-Encoding: br' -o "$f.br" "$PM$q"
  # nginx maps the query away: one file per route is enough here.
  cp "$f" "$TMP/www/$name.glb"; cp "$f.gz" "$TMP/www/$name.glb.gz"; cp "$f.br" "$TMP/www/$name.glb.br"
  echo "$name: identity $(stat -c %s "$f"), gzip $(stat -c %s "$f.gz"), br $(stat -c %s "$f.br") bytes"
done
chmod -R a+rX "$TMP/www"
have_br=0
[ -f "$BROTLI_MOD" ] && have_br=1
for try in $(seq 20); do
  NGX_PORT=$((20000 + RANDOM % 40000))
  {
    [ $have_br = 1 ] && echo "load_module $BROTLI_MOD;"
    cat <<NGX
worker_processes $THREADS;
daemon on;
pid $TMP/nginx.pid;
error_log $TMP/logs/error.log;
events { worker_connections 4096; }
http {
  access_log $TMP/logs/access.log;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  keepalive_timeout 60;
  open_file_cache max=1000 inactive=60s;
  open_file_cache_valid 60s;
  gzip off;
  gzip_static on;
  gzip_vary on;
  $([ $have_br = 1 ] && echo "brotli_static on;")
  server {
    listen 127.0.0.1:$NGX_PORT;
    root $TMP/www;
    location / { default_type model/gltf-binary; }
  }
}
NGX
  } > "$TMP/nginx.conf"
  nginx -p "$TMP" -c "$TMP/nginx.conf" 2>/dev/null && break
done
[ -f "$TMP/nginx.pid" ] || { echo "nginx did not start:"; cat "$TMP/logs/error.log"; exit 1; }
NGX=http://127.0.0.1:$NGX_PORT

for name in $NAMES; do
  for ae in gzip br; do
    [ $ae = br ] && [ $have_br = 0 ] && continue
    got=$(curl -s -D "$TMP/h" -H "Accept-Encoding: $ae" "$NGX/$name.glb" | cmp -s - "$TMP/www/$name.glb.$([ $ae = gzip ] && echo gz || echo br)" && echo same)
    grep -qi "^Content-Encoding: $ae" "$TMP/h" && [ "$got" = same ] \
      || { echo "nginx does not serve the $ae bytes of $name"; exit 1; }
  done
done

rps() { awk '/^Requests\/sec:/ { print $2 }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "cached compressed hits: wrk -t$THREADS -c$CONNS, ${DUR}s runs, $ROUNDS rounds interleaved; load average $(cut -d' ' -f1 /proc/loadavg) on $(nproc) cores"
for name in $NAMES; do
  q=${QUERY[$name]}
  for ae in gzip br; do
    [ $ae = br ] && [ $have_br = 0 ] && { echo "  $name br: no brotli_static module (apt-get install libnginx-mod-http-brotli-static)"; continue; }
    : > "$TMP/pm.txt"; : > "$TMP/ngx.txt"
    for round in $(seq "$ROUNDS"); do
      wrk -t$THREADS -c$CONNS -d${DUR}s -H "Accept-Encoding: $ae" "$NGX/$name.glb" | rps >> "$TMP/ngx.txt"
      wrk -t$THREADS -c$CONNS -d${DUR}s -H "Accept-Encoding: $ae" "$PM$q" | rps >> "$TMP/pm.txt"
    done
    pm=$(median < "$TMP/pm.txt"); ngx=$(median < "$TMP/ngx.txt")
    ratio=$(awk -v a="$pm" -v b="$ngx" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
    echo "  $name $ae: procmesh $(paste -sd' ' "$TMP/pm.txt") req/s; nginx $(paste -sd' ' "$TMP/ngx.txt") req/s"
    echo "RESULT $name $ae cached hits: procmesh median $pm req/s vs nginx ${ae}_static median $ngx req/s: ratio $ratio (goal >= 0.80)"
  done
done
m=$(curl -s "$PM/metrics")
echo "procmesh compressions during the run: $(echo "$m" | awk '/^procmesh_compressions_total\{.*result/ { s += $2 } END { print s }') (results; one per form per result, hits never compress)"
