#!/usr/bin/env python3
"""/healthz latency while slowloris clients hold the server's connections.

usage: slowloris.py PORT [CONNS] [PROBES] [SECONDS] [RECONNECT] [PROBE_PORT]

An attacker process holds CONNS connections (default 5000) to PORT, from
the loopback source addresses 127.0.0.2..11 (so a per-address limit does
not stop them), each sending an incomplete request head and one more
header line every 2 s. With RECONNECT 1 (default) a connection the server
closes is opened again at once, as a real attacker's loop does. After 3 s,
this process sends PROBES (default 1000) GET /healthz requests, each on a
fresh connection from 127.0.0.1 to PROBE_PORT (default PORT), 10 ms apart,
timed from connect to the end of the answer (no 200 within 2 s counts as
2 s). Prints one JSON line. Bounded: ends after SECONDS (default 60)."""
import json, multiprocessing, os, selectors, signal, socket, sys, time

port = int(sys.argv[1])
conns = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
probes = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
limit_s = float(sys.argv[4]) if len(sys.argv) > 4 else 60.0
reconnect = int(sys.argv[5]) if len(sys.argv) > 5 else 1
probe_port = int(sys.argv[6]) if len(sys.argv) > 6 else port


def attacker(opened, reopened, held_now):
    sel = selectors.DefaultSelector()
    due = {}

    def open_one(i):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.bind(("127.0.0.%d" % (2 + i % 10), 0))
            s.connect_ex(("127.0.0.1", port))
        except OSError:
            s.close()
            return
        due[s] = time.monotonic() + 2.0
        sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, i)
        opened.value += 1

    for i in range(conns):
        open_one(i)
    last_trickle = time.monotonic()
    while True:
        for key, ev in sel.select(0.2):
            s, i = key.fileobj, key.data
            if ev & selectors.EVENT_READ:
                try:
                    d = s.recv(4096)
                except OSError:
                    d = b""
                if not d:   # closed by the server (evicted or timed out)
                    sel.unregister(s)
                    del due[s]
                    s.close()
                    if reconnect:
                        reopened.value += 1
                        open_one(i)
                    continue
            if ev & selectors.EVENT_WRITE:
                try:
                    s.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-a: ")
                except OSError:
                    pass
                sel.modify(s, selectors.EVENT_READ, i)
        now = time.monotonic()
        if now - last_trickle >= 0.2:
            last_trickle = now
            for s, t in due.items():
                if t <= now:
                    try:
                        s.send(b"b\r\nX-a: ")
                    except OSError:
                        pass
                    due[s] = now + 2.0
        held_now.value = len(due)


def probe():
    t0 = time.monotonic()
    try:
        c = socket.create_connection(("127.0.0.1", probe_port), timeout=2.0)
        c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        buf = b""
        while True:
            d = c.recv(4096)
            if not d:
                break
            buf += d
        c.close()
        ok = buf.startswith(b"HTTP/1.1 200")
    except OSError:
        ok = False
    dt = time.monotonic() - t0
    return (dt if ok else 2.0), ok


t_start = time.monotonic()
opened, reopened, held = (multiprocessing.Value("q", 0, lock=False) for _ in range(3))
child = None
if conns:
    child = multiprocessing.Process(target=attacker, args=(opened, reopened, held), daemon=True)
    child.start()
    time.sleep(3.0)
lat, bad = [], 0
while len(lat) < probes and time.monotonic() - t_start < limit_s:
    dt, ok = probe()
    lat.append(dt)
    bad += not ok
    time.sleep(0.01)
held_at_end = held.value
if child:
    child.terminate()
    child.join()
lat.sort()
q = lambda p: round(lat[min(len(lat) - 1, int(p * len(lat)))] * 1000, 3) if lat else None
print(json.dumps({"slowloris": conns, "reconnect": reconnect, "probe_port": probe_port,
                  "held_at_end": held_at_end, "opened": opened.value,
                  "reopened_after_close": reopened.value,
                  "probes": len(lat), "probes_failed": bad,
                  "p50_ms": q(0.5), "p90_ms": q(0.9), "p99_ms": q(0.99),
                  "max_ms": round(lat[-1] * 1000, 3) if lat else None,
                  "seconds": round(time.monotonic() - t_start, 1)}))
