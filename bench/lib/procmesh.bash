# Sourced by the bench scripts (not a benchmark itself: bench/run.sh runs
# bench/*.sh only).
# pm_bench_start_procmesh BIN LOG [FLAGS...]: starts procmesh on a free
# loopback port with its log in LOG; sets PM_PID and PM_PORT, or exits 1
# with the log when it does not come up.
pm_bench_start_procmesh() {
  local bin=$1 log=$2
  shift 2
  "$bin" --bind 127.0.0.1 --port 0 "$@" 2>"$log" &
  PM_PID=$!
  PM_PORT=
  for _ in $(seq 200); do
    PM_PORT=$(grep -o '"msg":"listening","port":[0-9]*' "$log" | grep -o '[0-9]*$')
    [ -n "$PM_PORT" ] && break
    sleep 0.05
  done
  [ -n "$PM_PORT" ] || { echo "procmesh did not start:"; cat "$log"; exit 1; }
}
