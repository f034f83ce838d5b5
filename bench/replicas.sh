#!/usr/bin/env bash
# Replicas with a shared Redis, measured with wrk on loopback:
#   memory hit   one replica, one hot key (served from its memory cache)
#   redis hit    replica B serving keys that replica A generated (memory
#                miss, Redis hit), each key requested once
#   generate     replica C without Redis serving the same keys (generation)
#   via nginx    deploy/nginx.conf over three replicas, one hot key
# usage: bench/replicas.sh [BUILD_DIR]     (needs redis-server, nginx, wrk)
set -euo pipefail
BUILD=${1:-build}
BIN=$(realpath "$BUILD/procmesh")
SRC=$(cd "$(dirname "$0")/.." && pwd)
DUR=${PM_BENCH_SECONDS:-3}
N=${PM_BENCH_KEYS:-1500}   # per wrk thread
ROUTE=${PM_BENCH_ROUTE:-/v1/dungeons}
for t in redis-server nginx wrk curl; do
  command -v $t >/dev/null || [ -x /usr/sbin/$t ] || { echo "replicas.sh: $t missing"; exit 1; }
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
dir=$(mktemp -d /tmp/procmesh-bench-XXXXXX)
chmod 755 "$dir"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.05; done; return 1; }

rport=$(free_port)
redis-server --port "$rport" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
  --maxmemory 256mb --maxmemory-policy allkeys-lru >"$dir/redis.log" 2>&1 &
pids+=($!)
wait_port "$rport"

start() {  # start <port> [redis url]
  PROCMESH_BIND=127.0.0.1 PROCMESH_PORT=$1 PROCMESH_LOG_LEVEL=warn PROCMESH_THREADS=2 \
  PROCMESH_WORKERS=2 PROCMESH_REDIS_URL=${2:-} "$BIN" >>"$dir/replicas.log" 2>&1 &
  pids+=($!)
  wait_port "$1"
}
pa=$(free_port); pb=$(free_port); pc=$(free_port); np=$(free_port)
start "$pa" "redis://127.0.0.1:$rport"
start "$pb" "redis://127.0.0.1:$rport"
start "$pc"

sed -e "s/server procmesh-1:8080/server 127.0.0.1:$pa/" -e "s/server procmesh-2:8080/server 127.0.0.1:$pb/" \
    -e "s/server procmesh-3:8080/server 127.0.0.1:$pc/" -e "s/listen 8080;/listen 127.0.0.1:$np;/" \
    -e "s|^http {|http {\n    client_body_temp_path $dir/cb; proxy_temp_path $dir/px; fastcgi_temp_path $dir/fc; uwsgi_temp_path $dir/uw; scgi_temp_path $dir/sc;|" \
    "$SRC/deploy/nginx.conf" >"$dir/nginx.conf"
"$NGINX" -p "$dir" -c "$dir/nginx.conf" -e "$dir/nginx-error.log" -g "daemon off; pid $dir/nginx.pid;" &
pids+=($!)
wait_port "$np"

# Each wrk thread (one connection) walks its own N seeds once and stops,
# so "redis hit" and "generate" measure exactly the keys A stored.
cat >"$dir/seeds.lua" <<LUA
local n, i, conns = $N, 0, 0
setup = function(thread) conns = conns + 1; thread:set("id", conns) end
request = function()
  i = i + 1
  return wrk.format("GET", "$ROUTE?seed=" .. ((id - 1) * 1000000 + i))
end
response = function() if i >= n then wrk.thread:stop() end end
LUA

rate() {  # rate <label> <wrk args...>: throughput of a fixed-duration run
  local label=$1; shift
  local out
  out=$(wrk --latency "$@" 2>&1)
  printf "%-36s %10s req/s   mean %s  p99 %s\n" "$label" \
    "$(awk '/Requests\/sec/{print $2}' <<<"$out")" "$(awk '/Latency /{print $2; exit}' <<<"$out")" \
    "$(awk '$1=="99%"{print $2}' <<<"$out")"
}
lat() {  # lat <label> <wrk args...>: latency of a run that stops itself
  local label=$1; shift
  local out
  out=$(wrk --latency "$@" 2>&1)
  printf "%-36s %10s reqs    mean %s  p99 %s\n" "$label" \
    "$(awk '/requests in/{print $1}' <<<"$out")" "$(awk '/Latency /{print $2; exit}' <<<"$out")" \
    "$(awk '$1=="99%"{print $2}' <<<"$out")"
}

curl -s -o /dev/null "http://127.0.0.1:$pa$ROUTE?seed=42"
rate "memory hit (one replica)" -t2 -c8 -d"${DUR}s" "http://127.0.0.1:$pa$ROUTE?seed=42"
rate "memory hit via nginx (3 replicas)" -t2 -c8 -d"${DUR}s" "http://127.0.0.1:$np$ROUTE?seed=42"
wrk -t2 -c2 -d10s -s "$dir/seeds.lua" "http://127.0.0.1:$pa" >/dev/null 2>&1   # A generates, stores
sleep 0.5
lat "redis hit (B reads what A made)" -t2 -c2 -d10s -s "$dir/seeds.lua" "http://127.0.0.1:$pb"
lat "generate (C, no Redis)" -t2 -c2 -d10s -s "$dir/seeds.lua" "http://127.0.0.1:$pc"
hits=$(curl -s "http://127.0.0.1:$pb/metrics" | awk '$1=="procmesh_redis_hits_total"{print $2}')
echo "replica B: procmesh_redis_hits_total $hits"
curl -s "http://127.0.0.1:$pb/metrics" | grep -E '^procmesh_redis_command_duration_seconds_(sum|count)\{op="get"\}' |
  awk '{v[NR]=$2} END{if (v[2]>0) printf "replica B: mean Redis GET %.3f ms over %d calls\n", 1000*v[1]/v[2], v[2]}'
