#!/usr/bin/env bash
# Memory under load (run by bench/run.sh with the build directory as $1):
# peak and after-load RSS of procmesh over PM_BENCH_MEM_SECONDS (60) of
# cache misses from 4 clients, mixing small dungeons, mid-size networks and
# the largest requests the limits allow (town grids with sidewalks whose
# JSON answers are 40 to 90 MB, some of them refused 422 at --max-job-mb),
# once with the default flags and once with the Kubernetes ones
# (deploy/k8s/configmap.yaml, without Redis). Each run is compared with the
# documented bound, --cache-mb + --max-inflight-mb + 64 MiB (docs/svc.md).
# Every request is distinct (a node moved by a millimetre): all misses.
set -uo pipefail
BUILD=${1:-build}
BIN=$BUILD/procmesh
HERE=$(cd "$(dirname "$0")" && pwd)
SECONDS_RUN=${PM_BENCH_MEM_SECONDS:-60}
[ -x "$BIN" ] || { echo "memory.sh: no $BIN (build first)"; exit 1; }
command -v python3 >/dev/null || { echo "memory.sh: python3 is missing"; exit 1; }

# The Kubernetes settings: every PROCMESH_* of the ConfigMap but Redis and
# the listen address.
k8s_env() {
  sed -n 's/^  \(PROCMESH_[A-Z_]*\): "\(.*\)"$/\1=\2/p' "$HERE/../deploy/k8s/configmap.yaml" |
    grep -v -e '^PROCMESH_REDIS' -e '^PROCMESH_PORT' -e '^PROCMESH_BIND' -e '^PROCMESH_LOG_LEVEL'
}

run() {   # name, then VAR=value... for the server
  local name=$1; shift
  env -i PATH="$PATH" "$@" PM_NAME="$name" PM_BIN="$BIN" PM_SECONDS="$SECONDS_RUN" \
    python3 - <<'PY'
import http.client, json, os, random, re, subprocess, sys, threading, time

name, seconds = os.environ["PM_NAME"], float(os.environ["PM_SECONDS"])
env = {k: v for k, v in os.environ.items() if k.startswith("PROCMESH_")}
env["PATH"] = os.environ["PATH"]
srv = subprocess.Popen([os.environ["PM_BIN"], "--bind", "127.0.0.1", "--port", "0",
                        "--log-level", "warn"], env=env, stderr=subprocess.PIPE, text=True)
port = None
for line in srv.stderr:
    m = re.search(r'"msg":"listening","port":(\d+)', line)
    if m:
        port = int(m.group(1))
        break
threading.Thread(target=lambda: [None for _ in srv.stderr], daemon=True).start()

def rss_mib():
    with open(f"/proc/{srv.pid}/status") as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1]) / 1024
    return 0

def metric(series):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    for l in text.splitlines():
        if l.startswith(series + " "):
            return float(l.split()[1])
    return -1

def town(n, seg, shift):
    nodes = [{"id": f"n{i}_{j}", "position": [i * 100 + (shift * 0.001 if i == j == 0 else 0),
                                              j * 100]} for i in range(n) for j in range(n)]
    edges = [{"from": f"n{i}_{j}", "to": f"n{i + di}_{j + dj}"} for i in range(n)
             for j in range(n) for di, dj in ((1, 0), (0, 1)) if i + di < n and j + dj < n]
    return json.dumps({"nodes": nodes, "edges": edges, "sidewalk": {"width": 2},
                       "max_segment": seg})

# (weight, route, body maker); the big ones are the point of the run.
MIX = [
    (4, "/v1/dungeons", lambda k: json.dumps({"seed": k})),
    (2, "/v1/networks", lambda k: town(4, 1.0, k)),
    (2, "/v1/networks?format=glb", lambda k: town(8, 0.5, k)),
    (2, "/v1/networks", lambda k: town(10, 0.5, k)),     # ~44 MB JSON
    (1, "/v1/networks", lambda k: town(10, 0.2, k)),     # ~90 MB JSON, past 256 MiB jobs
]
weights = [w for w, _, _ in MIX]
counts, lock, stop = {}, threading.Lock(), time.monotonic() + seconds
seq = [0]

def client(idx):
    rnd = random.Random(idx)
    while time.monotonic() < stop:
        w, route, make = rnd.choices(MIX, weights)[0]
        with lock:
            seq[0] += 1
            k = seq[0]
        body = make(k)
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            c.request("POST", route, body, {"Content-Type": "application/json"})
            r = c.getresponse()
            data = r.read()
            n = len(data)
            key = f"{route.split('?')[0]} {r.status}"
            if r.status != 200:   # which limit: deadline, overloaded, validation
                m = re.search(rb'"type":"urn:procmesh:problem:([a-z-]+)"', data)
                key += f" {m.group(1).decode() if m else ''}"
        except Exception as e:
            key, n = f"error {type(e).__name__}", 0
        with lock:
            s = counts.setdefault(key, [0, 0])
            s[0] += 1
            s[1] = max(s[1], n)

idle = rss_mib()
peak = [idle]
def sampler():
    while srv.poll() is None and not done.is_set():
        peak[0] = max(peak[0], rss_mib())
        time.sleep(0.02)
done = threading.Event()
ts = threading.Thread(target=sampler)
ts.start()
cl = [threading.Thread(target=client, args=(i,)) for i in range(4)]
for t in cl: t.start()
for t in cl: t.join()
# Jobs whose clients were answered 503 at the deadline still run to their
# end: "after load" is once nothing is in flight (at most 60 s more) and
# the page pool has given back what it kept for the next jobs (--retain-mb,
# after 3 s without a job; at most 10 s more).
give_up = time.monotonic() + 60
while metric("procmesh_memory_inflight_bytes") > 0 and time.monotonic() < give_up:
    time.sleep(0.2)
give_up = time.monotonic() + 10
while metric("procmesh_memory_retained_bytes") > 0 and time.monotonic() < give_up:
    time.sleep(0.2)
time.sleep(1)
done.set()
ts.join()
after = rss_mib()
cache = metric("procmesh_cache_max_bytes") / 2**20
cap = metric("procmesh_memory_inflight_max_bytes") / 2**20
bound = cache + cap + 64
print(f"memory {name}: {seconds:.0f} s of misses from 4 clients; flags: "
      + (" ".join(f"{k}={v}" for k, v in sorted(env.items()) if k != "PATH") or "defaults"))
for k in sorted(counts):
    print(f"  {k:<36} {counts[k][0]:5d} answers, largest {counts[k][1] / 1e6:8.1f} MB")
print(f"  idle RSS {idle:.1f} MiB, peak {peak[0]:.1f} MiB, after load {after:.1f} MiB "
      f"(cache holds {metric('procmesh_cache_bytes') / 2**20:.1f} MiB, in flight "
      f"{metric('procmesh_memory_inflight_bytes') / 2**20:.1f} MiB)")
ok = peak[0] <= bound
print(f"  bound --cache-mb {cache:.0f} + --max-inflight-mb {cap:.0f} + 64 = {bound:.0f} MiB: "
      f"peak {'holds' if ok else 'BREAKS IT'} ({peak[0] / bound:.0%} of it)")
srv.terminate()
srv.wait()
sys.exit(0 if ok else 1)
PY
}

status=0
run default || status=1
mapfile -t K8S < <(k8s_env)
run k8s "${K8S[@]}" || status=1
exit $status
