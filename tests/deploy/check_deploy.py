#!/usr/bin/env python3
"""Keeps the Dockerfile, deploy/k8s, deploy/docker-compose.yml and
deploy/nginx.conf consistent with the procmesh binary.

usage: check_deploy.py PATH/TO/procmesh SOURCE_DIR

Checks, each reported by name on failure:
  * every PROCMESH_* variable they set is one `procmesh --help` lists, and
    the binary accepts every value (it validates the environment first);
  * ports agree (EXPOSE, PROCMESH_PORT, containerPort, probes, Service,
    compose, nginx upstreams, scrape annotation);
  * probe and HEALTHCHECK paths are routes of the running binary;
  * grace periods exceed the drain time, proxy timeouts the deadline;
  * labels, selectors and names line up (Service, HPA, PDB, ConfigMap);
  * the runtime image installs a package for every library the binary
    links, and the build stage copies every directory CMake reads;
  * nginx.conf passes `nginx -t` (hosts rewritten to loopback).
Needs PyYAML (Debian: python3-yaml).
"""
import glob
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

try:
    import yaml
except ImportError:
    sys.exit("check_deploy: PyYAML is missing (apt-get install python3-yaml)")

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
    return cond


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# ---- the binary ------------------------------------------------------------

def known_vars(binary):
    out = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=10)
    check(out.returncode == 0, "procmesh --help exits 0")
    names = set(re.findall(r"\bPROCMESH_[A-Z0-9_]+\b", out.stdout))
    check(len(names) >= 5, "procmesh --help lists PROCMESH_* variables")
    return names


REDIS_URL = re.compile(r"^redis://(?:[^:@/]*:[^@/]+@)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)"
                       r"(?::\d{1,5})?(?:/\d{0,5})?$")


def accepts_env(binary, env, where):
    """The binary reads the environment before flags: --version with the
    variables set fails (exit 2) on any value it would refuse at start."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("PROCMESH_")}
    full.update(env)
    url = env.get("PROCMESH_REDIS_URL")
    # --version returns before the tier is built, so the URL is checked here
    # against the form the binary parses (redis_tier.h).
    check(not url or REDIS_URL.match(url), f"{where}: PROCMESH_REDIS_URL {url!r} is not redis://...")
    out = subprocess.run([binary, "--version"], env=full, capture_output=True, text=True,
                         timeout=10)
    check(out.returncode == 0,
          f"{where}: the binary rejects its PROCMESH_* values: {out.stderr.strip()}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def route_statuses(binary, paths):
    """Starts the binary on loopback and returns {path: HTTP status}."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROCMESH_")}
    env.update({"PROCMESH_BIND": "127.0.0.1", "PROCMESH_PORT": str(port),
                "PROCMESH_LOG_LEVEL": "warn"})
    proc = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    statuses = {}
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        for p in sorted(paths):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{p}", timeout=5) as r:
                    statuses[p] = r.status
            except urllib.error.HTTPError as e:
                statuses[p] = e.code
            except OSError as e:
                statuses[p] = f"no answer ({e})"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return statuses


# ---- the Dockerfile --------------------------------------------------------

def dockerfile_instructions(text):
    """[(stage index, INSTRUCTION, argument text)] with continuations joined."""
    out, stage, buf = [], -1, ""
    for line in text.splitlines():
        s = line.strip()
        if not buf and (not s or s.startswith("#")):
            continue
        if s.startswith("#"):
            continue
        buf += " " + s[:-1] if s.endswith("\\") else " " + s
        if s.endswith("\\"):
            continue
        word, _, rest = buf.strip().partition(" ")
        word = word.upper()
        if word == "FROM":
            stage += 1
        out.append((stage, word, rest.strip()))
        buf = ""
    return out


def parse_env_instruction(arg):
    toks = shlex.split(arg)
    if len(toks) >= 2 and "=" not in toks[0]:  # legacy "ENV NAME value"
        return {toks[0]: " ".join(toks[1:])}
    return dict(t.split("=", 1) for t in toks)


def check_dockerfile(src, known, binary):
    ins = dockerfile_instructions(read(os.path.join(src, "Dockerfile")))
    last = max(s for s, _, _ in ins)
    check(last >= 1, "Dockerfile: multi-stage (a build and a runtime stage)")
    froms = [a for _, w, a in ins if w == "FROM"]
    check(froms and froms[0].startswith("debian:12"), "Dockerfile: builds on debian:12")
    check(froms and froms[-1].startswith("debian:12-slim"), "Dockerfile: runs on debian:12-slim")
    env = {}
    for s, w, a in ins:
        if w == "ENV" and s == last:
            env.update(parse_env_instruction(a))
    for name in env:
        if name.startswith("PROCMESH_"):
            check(name in known, f"Dockerfile: ENV {name} is not a variable procmesh knows")
    accepts_env(binary, {k: v for k, v in env.items() if k.startswith("PROCMESH_")}, "Dockerfile")
    user = [a for s, w, a in ins if w == "USER" and s == last]
    check(user and user[-1].split(":")[0] not in ("root", "0"), "Dockerfile: runs as non-root")
    expose = [a for s, w, a in ins if w == "EXPOSE" and s == last]
    port = env.get("PROCMESH_PORT", "8080")
    check(expose and expose[-1].split("/")[0] == port,
          f"Dockerfile: EXPOSE {expose} matches PROCMESH_PORT {port}")
    hc = [a for s, w, a in ins if w == "HEALTHCHECK" and s == last]
    paths = set()
    if check(hc, "Dockerfile: has a HEALTHCHECK"):
        m = re.search(r"http://127\.0\.0\.1:(\$\{?PROCMESH_PORT\}?|\d+)(/[A-Za-z0-9_/.-]*)", hc[-1])
        if check(m, "Dockerfile: HEALTHCHECK requests http://127.0.0.1:<port>/<path>"):
            hp = m.group(1)
            check(hp.lstrip("${").rstrip("}") == "PROCMESH_PORT" or hp == port,
                  "Dockerfile: HEALTHCHECK port is PROCMESH_PORT")
            paths.add(m.group(2))
        tool = hc[-1].split("CMD", 1)[-1].split()[0]
        installed = " ".join(a for s, w, a in ins if w == "RUN" and s == last)
        check(re.search(r"\b%s\b" % re.escape(tool), installed),
              f"Dockerfile: HEALTHCHECK tool {tool} is installed in the runtime stage")
    # The build stage copies every top-level directory CMakeLists.txt reads.
    cmake = re.sub(r"#[^\n]*", "", read(os.path.join(src, "CMakeLists.txt")))
    copied = set()
    for s, w, a in ins:
        if w == "COPY" and s == 0:
            copied.update(p.rstrip("/").split("/")[0] for p in shlex.split(a)[:-1])
    for d in sorted(set(re.findall(r"\b([a-z_]+)/[\w*.${}/-]+", cmake))):
        if d in ("tests", "bench", "build") or not os.path.isdir(os.path.join(src, d)):
            continue  # not built into the image / not a source directory / the build tree
        check(d in copied, f"Dockerfile: build stage does not COPY {d}/ that CMakeLists.txt uses")
    runtime_pkgs = set()
    for s, w, a in ins:
        if w == "RUN" and s == last and "apt-get install" in a:
            runtime_pkgs.update(t for t in a.split() if re.match(r"^[a-z0-9][a-z0-9.+-]+$", t))
    return env, paths, runtime_pkgs


def linked_packages(binary):
    """Debian packages owning the libraries the binary links directly
    (NEEDED entries) or opens (PM_DLOPEN markers); apt brings their own
    dependencies."""
    if not all(shutil.which(t) for t in ("readelf", "dpkg-query")):
        return None
    dyn = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True).stdout
    names = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    # and the ones the server opens itself (service/mhd.h), marked in the binary
    with open(binary, "rb") as f:
        names += [m.decode() for m in re.findall(rb"PM_DLOPEN:([\w.+-]+\.so[\w.]*)", f.read())]
    pkgs = {}
    for name in names:
        r = subprocess.run(["dpkg-query", "-S", "*/" + name], capture_output=True, text=True)
        pkgs[name] = {l.split(":")[0] for l in r.stdout.splitlines() if ":" in l}
    return pkgs


# ---- manifests ---------------------------------------------------------------

def k8s_docs(src):
    docs = []
    for path in sorted(glob.glob(os.path.join(src, "deploy/k8s/*.yaml"))):
        for d in yaml.safe_load_all(read(path)):
            if d:
                docs.append((os.path.basename(path), d))
    return docs


def by_kind(docs, kind):
    return [(f, d) for f, d in docs if d.get("kind") == kind]


def subset(a, b):
    return all(b.get(k) == v for k, v in (a or {}).items())


def check_k8s(src, known, binary, routes):
    docs = k8s_docs(src)
    files = {os.path.basename(p) for p in glob.glob(os.path.join(src, "deploy/k8s/*.yaml"))}
    kust = [d for f, d in docs if d.get("kind") == "Kustomization"]
    if kust:
        check(set(kust[0].get("resources", [])) == files - {"kustomization.yaml"},
              "k8s: kustomization.yaml lists every manifest")
    for kind in ("Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget",
                 "ConfigMap"):
        check(by_kind(docs, kind), f"k8s: a {kind}")
    cms = {d["metadata"]["name"]: d.get("data", {}) for _, d in by_kind(docs, "ConfigMap")}
    services = {d["metadata"]["name"]: d for _, d in by_kind(docs, "Service")}
    deps = {d["metadata"]["name"]: d for _, d in by_kind(docs, "Deployment")}
    app = deps.get("procmesh")
    if not check(app, "k8s: a Deployment named procmesh"):
        return {}
    pod = app["spec"]["template"]
    check(subset(app["spec"]["selector"]["matchLabels"], pod["metadata"]["labels"]),
          "k8s: Deployment selector matches its pod labels")
    c = next((c for c in pod["spec"]["containers"] if c["name"] == "procmesh"), None)
    if not check(c, "k8s: a container named procmesh"):
        return {}
    env = {}
    for ef in c.get("envFrom", []):
        name = ef.get("configMapRef", {}).get("name")
        if check(name in cms, f"k8s: envFrom ConfigMap {name} exists"):
            env.update(cms[name])
    for e in c.get("env", []):
        env[e["name"]] = e.get("value", "")
    for name in env:
        check(name.startswith("PROCMESH_") and name in known,
              f"k8s: variable {name} is not one procmesh knows")
    accepts_env(binary, {k: str(v) for k, v in env.items()}, "k8s ConfigMap")
    port = int(env.get("PROCMESH_PORT", 8080))
    ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
    check(ports.get("http") == port, f"k8s: containerPort http {ports.get('http')} is PROCMESH_PORT {port}")

    def port_ok(p):
        return p == port or (p in ports and ports[p] == port)

    for probe, want in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        pr = c.get(probe, {}).get("httpGet")
        if check(pr, f"k8s: {probe} is an httpGet"):
            check(pr["path"] == want, f"k8s: {probe} path is {want}")
            check(port_ok(pr["port"]), f"k8s: {probe} port is the http port")
            routes.add(pr["path"])
    ann = pod["metadata"].get("annotations", {})
    if "prometheus.io/port" in ann:
        check(int(ann["prometheus.io/port"]) == port, "k8s: prometheus.io/port is the http port")
        routes.add(ann.get("prometheus.io/path", "/metrics"))
    res = c.get("resources", {})
    check(res.get("requests", {}).get("cpu") and res.get("limits", {}).get("memory"),
          "k8s: container has cpu requests (HPA needs them) and a memory limit")
    drain_s = int(env.get("PROCMESH_DRAIN_MS", 10000)) / 1000
    pre = c.get("lifecycle", {}).get("preStop", {})
    pre_s = 0
    cmd = pre.get("exec", {}).get("command", [])
    if len(cmd) == 2 and cmd[0] == "sleep":
        pre_s = int(cmd[1])
    elif "sleep" in pre:
        pre_s = int(pre["sleep"]["seconds"])
    grace = pod["spec"].get("terminationGracePeriodSeconds", 30)
    check(grace > pre_s + drain_s,
          f"k8s: terminationGracePeriodSeconds {grace} > preStop {pre_s} s + drain {drain_s} s")
    svc = services.get("procmesh")
    if check(svc, "k8s: a Service named procmesh"):
        check(subset(svc["spec"]["selector"], pod["metadata"]["labels"]),
              "k8s: Service selector matches the procmesh pods")
        for p in svc["spec"]["ports"]:
            check(port_ok(p.get("targetPort", p["port"])), "k8s: Service targetPort is the http port")
    for _, h in by_kind(docs, "HorizontalPodAutoscaler"):
        ref = h["spec"]["scaleTargetRef"]
        check(ref["kind"] == "Deployment" and ref["name"] in deps, "k8s: HPA targets the Deployment")
        check(any(m.get("resource", {}).get("name") == "cpu" for m in h["spec"].get("metrics", [])),
              "k8s: HPA scales on CPU")
        check("replicas" not in app["spec"], "k8s: Deployment leaves replicas to the HPA")
    for _, p in by_kind(docs, "PodDisruptionBudget"):
        check(subset(p["spec"]["selector"]["matchLabels"], pod["metadata"]["labels"]),
              "k8s: PDB selects the procmesh pods")
    url = env.get("PROCMESH_REDIS_URL")
    if check(url, "k8s: PROCMESH_REDIS_URL is set"):
        m = re.match(r"redis://(?:[^@/]*@)?([^:/]+)(?::(\d+))?", url)
        host, rport = m.group(1), int(m.group(2) or 6379)
        rs = services.get(host)
        if check(rs, f"k8s: a Service {host} for PROCMESH_REDIS_URL"):
            check(any(p["port"] == rport for p in rs["spec"]["ports"]),
                  f"k8s: Service {host} has port {rport}")
            rd = [d for d in deps.values()
                  if subset(rs["spec"]["selector"], d["spec"]["template"]["metadata"]["labels"])]
            if check(rd, f"k8s: a Deployment behind Service {host}"):
                args = " ".join(str(a) for a in rd[0]["spec"]["template"]["spec"]["containers"][0].get("args", []))
                check("allkeys-lru" in args and "--maxmemory " in args,
                      "k8s: Redis runs with maxmemory and allkeys-lru")
    return env


def check_compose(src, known, binary, routes):
    comp = yaml.safe_load(read(os.path.join(src, "deploy/docker-compose.yml")))
    svcs = comp["services"]
    replicas = sorted(n for n, s in svcs.items() if s.get("image", "").startswith("procmesh"))
    check(len(replicas) == 3, f"compose: 3 procmesh replicas, found {replicas}")
    ports = set()
    drain = set()
    for n in replicas:
        env = svcs[n].get("environment", {})
        if isinstance(env, list):
            env = dict(e.split("=", 1) for e in env)
        for name in env:
            check(name in known, f"compose: {n} sets {name}, which procmesh does not know")
        accepts_env(binary, {k: str(v) for k, v in env.items()}, f"compose {n}")
        ports.add(int(env.get("PROCMESH_PORT", 8080)))
        drain.add(int(env.get("PROCMESH_DRAIN_MS", 10000)))
        grace = str(svcs[n].get("stop_grace_period", "10s"))
        gs = int(grace[:-1]) * (60 if grace.endswith("m") else 1)
        check(gs * 1000 > max(drain), f"compose: {n} stop_grace_period {grace} > drain")
        url = env.get("PROCMESH_REDIS_URL", "")
        m = re.match(r"redis://(?:[^@/]*@)?([^:/]+)", url)
        check(m and m.group(1) in svcs, f"compose: {n} PROCMESH_REDIS_URL names a compose service")
    check(len(ports) == 1, "compose: the replicas share one port")
    redis = svcs.get("redis", {})
    cmd = " ".join(redis.get("command", [])) if isinstance(redis.get("command"), list) else str(redis.get("command"))
    check("allkeys-lru" in cmd and "--maxmemory " in cmd, "compose: Redis has maxmemory + allkeys-lru")
    return replicas, ports.pop() if len(ports) == 1 else None, svcs


def check_nginx(src, replicas, port, deadline_ms):
    conf = read(os.path.join(src, "deploy/nginx.conf"))
    ups = re.findall(r"^\s*server\s+([\w.-]+):(\d+)", conf, re.M)
    check(sorted(h for h, _ in ups) == replicas, f"nginx: upstream servers {ups} are the compose replicas")
    check(all(int(p) == port for _, p in ups), "nginx: upstream ports are PROCMESH_PORT")
    check(re.search(r"proxy_next_upstream\s+[^;]*\berror\b[^;]*\btimeout\b[^;]*\bhttp_503\b", conf),
          "nginx: proxy_next_upstream on error, timeout and 503")
    check(re.search(r"^\s*keepalive\s+\d+;", conf, re.M), "nginx: upstream keepalive")
    m = re.search(r"proxy_read_timeout\s+(\d+)s;", conf)
    check(m and int(m.group(1)) * 1000 > deadline_ms,
          "nginx: proxy_read_timeout exceeds PROCMESH_DEADLINE_MS")
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if not nginx:
        print("check_deploy: nginx not installed; skipping nginx -t")
        return
    with tempfile.TemporaryDirectory(prefix="procmesh-nginx-") as d:
        text = re.sub(r"(server\s+)[\w.-]+:\d+", r"\g<1>127.0.0.1:1", conf)
        text = re.sub(r"listen\s+\d+;", f"listen 127.0.0.1:{free_port()};", text)
        with open(os.path.join(d, "nginx.conf"), "w") as f:
            f.write(text)
        r = subprocess.run([nginx, "-t", "-q", "-p", d, "-c", os.path.join(d, "nginx.conf"),
                            "-e", os.path.join(d, "error.log"), "-g", f"pid {d}/nginx.pid;"],
                           capture_output=True, text=True, timeout=20)
        check(r.returncode == 0, f"nginx: nginx -t fails: {r.stderr.strip()}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, src = sys.argv[1], sys.argv[2]
    known = known_vars(binary)
    routes = set()
    denv, hc_paths, runtime_pkgs = check_dockerfile(src, known, binary)
    routes |= hc_paths
    kenv = check_k8s(src, known, binary, routes)
    replicas, cport, _ = check_compose(src, known, binary, routes)
    check(cport == int(denv.get("PROCMESH_PORT", 8080)) == int(kenv.get("PROCMESH_PORT", 8080)),
          "ports: Dockerfile, k8s and compose use the same PROCMESH_PORT")
    check_nginx(src, replicas, cport, int(kenv.get("PROCMESH_DEADLINE_MS", 10000)))
    linked = linked_packages(binary)
    if linked is None:
        print("check_deploy: no ldd/dpkg; skipping the runtime library check")
    else:
        base = {"libc6", "libgcc-s1", "libstdc++6"}  # in every Debian image
        for lib, owners in sorted(linked.items()):
            if re.match(r"lib(a|ub|t|l)san\.so", lib):
                continue  # a -DPM_SANITIZE=ON build; the image never is one
            owners = {o.split(":")[0] for o in owners}
            check(owners & (runtime_pkgs | base),
                  f"Dockerfile: runtime stage installs none of {sorted(owners)} for {lib}")
    statuses = route_statuses(binary, routes | {"/healthz", "/readyz", "/metrics"})
    for p, st in statuses.items():
        check(isinstance(st, int) and st not in (404, 405) and st < 500 or p == "/readyz" and st == 503,
              f"routes: GET {p} answered {st}")
    check(statuses.get("/healthz") == 200, "routes: /healthz is 200")
    if FAILS:
        for f in FAILS:
            print("FAIL", f)
        sys.exit(1)
    print(f"check_deploy: ok ({len(known)} variables known, routes {sorted(statuses)})")


if __name__ == "__main__":
    main()
