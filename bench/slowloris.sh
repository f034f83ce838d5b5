#!/usr/bin/env bash
# /healthz p99 while 5,000 slowloris connections are held (goal < 10 ms).
#   bash bench/slowloris.sh [BUILD_DIR] [BINARY_TO_COMPARE]
# Starts procmesh (default settings: --max-connections 4096, 64 kept in
# reserve, 10 s head deadline) on 127.0.0.1 and runs bench/slowloris.py
# against it: 5,000 connections from 127.0.0.2..11 that trickle an endless
# head, reopened whenever the server closes them, and 1,000 /healthz probes
# on fresh connections from 127.0.0.1. The same probes run first without
# the attack (baseline), so the figures are a same-run comparison. A second
# binary (e.g. one built from an older commit) is measured the same way.
# Three attacks per binary: connections held (not reopened), a reconnecting
# attacker probed on the main port, and (procmesh) probed on --admin-port.
# Loopback only; each run ends within 40 s.
set -uo pipefail
BUILD=${1:-build}
OTHER=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
CONNS=${PM_SLOWLORIS_CONNS:-5000}
PROBES=${PM_SLOWLORIS_PROBES:-1000}
# Each held connection is a descriptor on both sides.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
need=$((CONNS + 1024))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$need" ]; then
  echo "slowloris.sh: open-files limit $(ulimit -n) is below $need (raise the hard limit)" >&2
  exit 1
fi
TMP=$(mktemp -d /tmp/pm-bench-slowloris.XXXXXX)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

ADMIN_PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')

run() {   # run LABEL BINARY [ADMIN]: baseline probes, then probes under attack
  local label=$1 bin=$2 admin=${3:-}
  local extra=()
  [ -n "$admin" ] && extra=(--admin-port "$ADMIN_PORT")
  "$bin" --bind 127.0.0.1 --port 0 --log-level warn "${extra[@]}" 2>"$TMP/log" &
  PID=$!
  local port=
  for _ in $(seq 100); do
    port=$(grep -o '"port":[0-9]*' "$TMP/log" | head -1 | cut -d: -f2)
    [ -n "$port" ] && break
    sleep 0.05
  done
  [ -n "$port" ] || { echo "slowloris.sh: $bin did not start" >&2; cat "$TMP/log" >&2; exit 1; }
  echo "$label baseline: $(python3 "$HERE/slowloris.py" "$port" 0 "$PROBES" 30)"
  echo "$label held, no reconnect: $(python3 "$HERE/slowloris.py" "$port" "$CONNS" "$PROBES" 40 0)"
  echo "$label reconnecting attacker: $(python3 "$HERE/slowloris.py" "$port" "$CONNS" "$PROBES" 40 1)"
  if [ -n "$admin" ]; then
    echo "$label reconnecting attacker, probes on --admin-port: $(python3 "$HERE/slowloris.py" "$port" "$CONNS" "$PROBES" 40 1 "$ADMIN_PORT")"
  fi
  curl -s "http://127.0.0.1:$port/metrics" | grep -E '^procmesh_connections_(open|cut_total)' | tr '\n' ' '
  echo
  kill "$PID"; wait "$PID" 2>/dev/null; PID=
}

run procmesh "$BUILD/procmesh" admin
[ -n "$OTHER" ] && run other "$OTHER"
exit 0
