#!/usr/bin/env python3
"""Runs every ```sh block of README.md against the real binary.

The README promises curl examples that work as written against
localhost:8080. This starts procmesh on a free port, rewrites 8080 to that
port, runs each block with bash -e -o pipefail in a scratch folder, and fails
when a block fails, prints nothing, or the server answers any of its requests
with an error (checked from the access log): 4xx only where the block says
"# refused", 5xx never. Blocks fenced as ```console or ```text are
documentation only.
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

binary, source = sys.argv[1], sys.argv[2]
readme = open(os.path.join(source, "README.md"), encoding="utf-8").read()
blocks = re.findall(r"^```sh\n(.*?)^```", readme, flags=re.S | re.M)
if not blocks:
    sys.exit("README.md has no ```sh blocks")

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]

scratch = tempfile.mkdtemp(prefix="pm-readme-")
log = open(os.path.join(scratch, "server.log"), "w+")
server = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1"],
                          stderr=log, stdout=log)
failures = 0


def statuses(offset):
    """Statuses of the access lines written since offset."""
    time.sleep(0.05)  # the access line is written after the response
    with open(log.name, encoding="utf-8") as f:
        f.seek(offset)
        out = []
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("msg") == "access":
                out.append(rec.get("status"))
        return out


try:
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            break
        except OSError:
            time.sleep(0.05)
    else:
        sys.exit("procmesh did not start")
    for i, block in enumerate(blocks, 1):
        # Blocks that only set up the machine or start the server are not
        # examples of the API.
        if re.search(r"^\s*make\b|^\s*\./build/procmesh|^\s*docker|^\s*kubectl|^\s*apt-get", block, re.M):
            continue
        start = os.path.getsize(log.name)
        script = block.replace("localhost:8080", f"127.0.0.1:{port}")
        # `procmesh generate …` (the offline CLI) runs the binary under test.
        env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(binary)) + os.pathsep +
                   os.environ.get("PATH", ""))
        r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=scratch, env=env,
                           capture_output=True, text=True, timeout=120)
        first = block.strip().splitlines()[0][:70]
        if r.returncode != 0 or not r.stdout.strip() and "-o " not in block:
            failures += 1
            print(f"FAIL block {i} ({first}): exit {r.returncode}\n{r.stdout[-800:]}\n{r.stderr[-800:]}")
        else:
            bad = [st for st in statuses(start) if st >= 500 or (st >= 400 and "# refused" not in block)]
            if bad:
                failures += 1
                print(f"FAIL block {i} ({first}): answered {bad}")
            else:
                print(f"ok   block {i} ({first})")
finally:
    server.terminate()
    server.wait(timeout=20)
print(f"{len(blocks) - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
