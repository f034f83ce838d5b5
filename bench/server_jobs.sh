#!/usr/bin/env bash
# A warm server's cost per generation job (run by bench/run.sh with the
# build directory as $1): CPU time (every thread of the server, user +
# system, from /proc/PID/task/*/schedstat) and page faults (minflt of
# /proc/PID/stat) per request, over PM_SVC_JOBS_RUNS (30) sequential cache
# misses of each kind after PM_SVC_JOBS_WARMUP (3) untimed ones:
#   town0     the 40 x 40 town at netconvert's detail (bench/netconvert.sh's
#             one-way file: 100 m blocks, 7 m streets, max_segment 1000), GLB
#   town1     the same with 2 m sidewalks
#   terrain   a 2 km road over a 512 x 512 heightfield sent as JSON text
#             (bench_ingest's json-short body), GLB
# Every request differs from the one before by trailing spaces only (the
# same work, no memo or cache hit; the cache is off: --cache-mb 0), one
# HTTP thread, one worker, the other flags at their defaults.
#   bench/server_jobs.sh BUILD_DIR [BASE_BINARY]
# Two servers run side by side and the requests alternate between them
# (A B, then B A), so the host's load weighs on both alike: this build with
# its defaults and, as the baseline, BASE_BINARY (e.g. a copy of main's
# build/procmesh from before --retain-mb) or else this build with
# --retain-mb 0 (jobs on malloc, as before). Their answers must be the
# same bytes, or the script fails.
set -uo pipefail
BUILD=${1:-build}
BIN=$BUILD/procmesh
BASE=${2:-}
[ -x "$BIN" ] || { echo "server_jobs.sh: no $BIN (build first)"; exit 1; }
command -v python3 >/dev/null || { echo "server_jobs.sh: python3 is missing"; exit 1; }
PM_BIN="$BIN" PM_BASE="$BASE" PM_RUNS=${PM_SVC_JOBS_RUNS:-30} PM_WARM=${PM_SVC_JOBS_WARMUP:-3} \
  python3 - <<'PY'
import hashlib, http.client, json, math, os, re, statistics, subprocess, sys, threading

runs, warm = int(os.environ["PM_RUNS"]), int(os.environ["PM_WARM"])

def town(n, sidewalk):
    nodes = [{"id": f"n{i}_{j}", "position": [i * 100.0, -j * 100.0]}
             for i in range(n) for j in range(n)]
    edges = [{"from": f"n{i}_{j}", "to": f"n{i + di}_{j + dj}", "width": 7}
             for i in range(n) for j in range(n) for di, dj in ((1, 0), (0, 1))
             if i + di < n and j + dj < n]
    req = {"nodes": nodes, "edges": edges}
    if sidewalk:
        req["sidewalk"] = {"width": 2}
    req["max_segment"] = 1000
    return json.dumps(req).encode()

def terrain(side=512):
    pts = ", ".join("[%.3f, 0, %.3f]" % (50.0 + i * 100.0, 1050.0 + 150.0 * math.sin(i * 0.6))
                    for i in range(21))
    hs = []
    for k in range(side * side):
        r, c = divmod(k, side)
        h = 20.0 * math.sin(r * 0.013) * math.cos(c * 0.011) + 3.0 * math.sin(r * 0.21 + c * 0.17)
        hs.append("%.9g" % (round(h * 1000.0) / 1000.0))
    return ('{"points": [%s], "width": 8, "max_error": 0.05, "terrain": {"origin": [0, 0], '
            '"cell": %.6f, "cols": %d, "rows": %d, "heights": [%s]}}'
            % (pts, 2100.0 / (side - 1), side, side, ",".join(hs))).encode()

KINDS = [("town0", "/v1/networks?format=glb", town(40, False)),
         ("town1", "/v1/networks?format=glb", town(40, True)),
         ("terrain", "/v1/roads?format=glb", terrain())]

class Server:
    def __init__(self, name, binary, extra):
        self.name = name
        self.p = subprocess.Popen([binary, "--bind", "127.0.0.1", "--port", "0",
                                   "--threads", "1", "--workers", "1", "--cache-mb", "0",
                                   "--body-limit", "16M", "--log-level", "warn"] + extra,
                                  stderr=subprocess.PIPE, text=True)
        self.port = None
        for line in self.p.stderr:
            m = re.search(r'"msg":"listening","port":(\d+)', line)
            if m:
                self.port = int(m.group(1))
                break
        if self.port is None:
            sys.exit(f"server_jobs.sh: {binary} did not start")
        threading.Thread(target=lambda: [None for _ in self.p.stderr], daemon=True).start()
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        self.rows = {}

    def counters(self):
        with open(f"/proc/{self.p.pid}/stat") as f:
            minflt = int(f.read().rsplit(")", 1)[1].split()[7])
        cpu = 0
        for t in os.listdir(f"/proc/{self.p.pid}/task"):
            try:
                with open(f"/proc/{self.p.pid}/task/{t}/schedstat") as f:
                    cpu += int(f.read().split()[0])
            except OSError:
                pass   # a thread that ended meanwhile
        return minflt, cpu

    def post(self, route, body):
        self.conn.request("POST", route, body, {"Content-Type": "application/json"})
        r = self.conn.getresponse()
        data = r.read()
        if r.status != 200:
            sys.exit(f"server_jobs.sh: {self.name} {route}: {r.status} {data[:300]!r}")
        return hashlib.sha256(data).hexdigest()

    def job(self, kind, route, body, timed):
        f0, c0 = self.counters()
        h = self.post(route, body)
        f1, c1 = self.counters()
        if timed:
            self.rows.setdefault(kind, []).append((f1 - f0, (c1 - c0) / 1e6))
        return h

    def stop(self):
        self.conn.close()
        self.p.terminate()
        self.p.wait()

servers = [Server("procmesh", os.environ["PM_BIN"], [])]
if os.environ["PM_BASE"]:
    servers.append(Server("base", os.environ["PM_BASE"], []))
else:
    servers.append(Server("--retain-mb 0", os.environ["PM_BIN"], ["--retain-mb", "0"]))
seq = 0
for kind, route, body in KINDS:
    for i in range(warm + runs):
        seq += 1
        b = body + b" " * (seq % 64)
        order = servers if i % 2 == 0 else servers[::-1]
        hashes = {s.name: s.job(kind, route, b, i >= warm) for s in order}
        if len(set(hashes.values())) != 1:
            sys.exit(f"server_jobs.sh: {kind}: the servers' answers differ: {hashes}")
for s in servers:
    s.stop()

print(f"warm server, per job (--threads 1 --workers 1 --cache-mb 0; {runs} runs after {warm}; "
      "medians, and means in brackets)")
print("| job | server | page faults | CPU ms (all threads) |")
print("| --- | --- | --- | --- |")
for kind, _, _ in KINDS:
    for s in servers:
        rows = s.rows[kind]
        f = [r[0] for r in rows]
        c = [r[1] for r in rows]
        print(f"| {kind} | {s.name} | {statistics.median(f):,.0f} ({statistics.mean(f):,.0f}) | "
              f"{statistics.median(c):.2f} ({statistics.mean(c):.2f}) |")
PY
