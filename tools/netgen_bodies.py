#!/usr/bin/env python3
"""Road networks drawn by someone else: SUMO's netgenerate (random, spider
and grid networks, its own rules for placing nodes and edges) written as
/v1/networks bodies, for tests/api/test_net_layouts.c (PM_LAYOUTS_DIR) and
bench/netgen_layouts.sh.

  tools/netgen_bodies.py OUTDIR COUNT [SEED] [--feasible]

Each network is made by netgenerate with parameters drawn from SEED, read
back from its plain XML (--plain-output-prefix) and written as
OUTDIR/netgen_<family>_<i>.json: nodes at [x, -y] (netconvert's y is our
-z), one edge per pair of nodes (netgenerate's two directions of a street
become one road as wide as both: lanes x lane width), an edge's shape as
its interior points. netgenerate places nodes and edges by length and
angle, not by width: two of its streets with no node in common can pass
closer than their half widths (their asphalt would overlap: no junction
outline can keep them apart). The network is then drawable only as
overlapping roads, and is counted apart ("infeasible", printed); with
--feasible it is not written. Families: rand (random planar networks, edges 15-45
degrees apart or more at a node, 25-120 m long, 1-3 lanes each way),
spider (3-14 arms, 2-6 circles 20-60 m apart: acute corners near the
centre) and grid (2-8 by 2-8, 20-120 m blocks, some with a diagonal-free
jitter-less town). Half of the networks get sidewalks."""
import json, math, os, random, subprocess, sys, tempfile
import xml.etree.ElementTree as ET


def netgenerate(args, d):
    subprocess.run(["netgenerate"] + args + ["--plain-output-prefix", f"{d}/p", "-o", f"{d}/n.net.xml",
                                             "--no-turnarounds", "true"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    nodes = {n.get("id"): (float(n.get("x")), float(n.get("y"))) for n in ET.parse(f"{d}/p.nod.xml").getroot()
             if n.tag == "node"}
    roads = {}
    for e in ET.parse(f"{d}/p.edg.xml").getroot():
        if e.tag != "edge" or e.get("from") not in nodes or e.get("to") not in nodes:
            continue
        a, b = e.get("from"), e.get("to")
        lanes = [l for l in e if l.tag == "lane"]
        nl = int(e.get("numLanes", len(lanes) or 1))
        width = nl * float(e.get("width", 3.2))
        shape = []
        if e.get("shape"):
            pts = [tuple(map(float, p.split(","))) for p in e.get("shape").split()]
            shape = pts[1:-1]
        key = (min(a, b), max(a, b))
        if a > b:
            shape = shape[::-1]
        r = roads.setdefault(key, {"width": 0.0, "points": shape})
        r["width"] += width
    return nodes, roads


def seg_dist(a, b, c, d):
    """The least distance between segments ab and cd (0 when they cross)."""
    def cross(o, p, q):
        return (p[0] - o[0]) * (q[1] - o[1]) - (p[1] - o[1]) * (q[0] - o[0])

    def to_seg(p, a, b):
        dx, dy = b[0] - a[0], b[1] - a[1]
        L = dx * dx + dy * dy
        t = 0 if L == 0 else max(0.0, min(1.0, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / L))
        return math.hypot(a[0] + t * dx - p[0], a[1] + t * dy - p[1])
    if cross(a, b, c) * cross(a, b, d) < 0 and cross(c, d, a) * cross(c, d, b) < 0:
        return 0.0
    return min(to_seg(a, c, d), to_seg(b, c, d), to_seg(c, a, b), to_seg(d, a, b))


def feasible(nodes, roads):
    """No two roads without a common node pass closer than their half widths."""
    lines = [((a, b), [nodes[a]] + r["points"] + [nodes[b]], r["width"]) for (a, b), r in roads.items()]
    for i in range(len(lines)):
        for k in range(i + 1, len(lines)):
            (ka, la, wa), (kb, lb, wb) = lines[i], lines[k]
            if set(ka) & set(kb):
                continue
            need = 0.5 * (wa + wb)
            for p, q in zip(la, la[1:]):
                for r, s in zip(lb, lb[1:]):
                    if seg_dist(p, q, r, s) < need:
                        return False
    return True


def body(nodes, roads, rng):
    ids = sorted(nodes)
    index = {k: i for i, k in enumerate(ids)}
    req = {"nodes": [{"id": i, "position": [round(nodes[k][0], 3), round(-nodes[k][1], 3)]}
                     for i, k in enumerate(ids)],
           "edges": []}
    for (a, b), r in sorted(roads.items()):
        e = {"from": index[a], "to": index[b], "width": round(max(r["width"], 3.0), 2)}
        if r["points"]:
            e["points"] = [[round(x, 3), round(-y, 3)] for x, y in r["points"]]
        req["edges"].append(e)
    if rng.random() < 0.5:
        req["sidewalk"] = {"width": round(rng.uniform(1.5, 3), 2)}
    if rng.random() < 0.3:
        req["corner_radius"] = round(rng.uniform(1, 6), 2)
    return req


def main():
    args = [a for a in sys.argv[1:] if a != "--feasible"]
    only_feasible = "--feasible" in sys.argv
    out, count = args[0], int(args[1])
    rng = random.Random(int(args[2]) if len(args) > 2 else 1)
    infeasible = {f: 0 for f in ("rand", "spider", "grid")}
    os.makedirs(out, exist_ok=True)
    fams = ["rand", "spider", "grid"]
    with tempfile.TemporaryDirectory() as d:
        for i in range(count):
            fam = fams[i % 3]
            lanes = str(rng.randint(1, 2))
            lw = f"{rng.uniform(2.8, 3.6):.2f}"
            common = ["--seed", str(rng.randint(1, 10 ** 6)), "-L", lanes, "--default.lanewidth", lw]
            if fam == "rand":
                lo = rng.uniform(25, 60)
                args = ["--rand", "--rand.iterations", str(rng.randint(15, 120)),
                        "--rand.min-distance", f"{lo:.1f}", "--rand.max-distance", f"{lo + rng.uniform(20, 80):.1f}",
                        "--rand.min-angle", f"{rng.uniform(15, 45):.1f}"]
            elif fam == "spider":
                args = ["--spider", "--spider.arm-number", str(rng.randint(3, 14)),
                        "--spider.circle-number", str(rng.randint(2, 6)),
                        "--spider.space-radius", f"{rng.uniform(30, 80):.1f}"]
                if rng.random() < 0.3:
                    args.append("--spider.omit-center")
            else:
                args = ["--grid", "--grid.x-number", str(rng.randint(2, 8)), "--grid.y-number", str(rng.randint(2, 8)),
                        "--grid.x-length", f"{rng.uniform(20, 120):.1f}", "--grid.y-length", f"{rng.uniform(20, 120):.1f}"]
            try:
                nodes, roads = netgenerate(common + args, d)
            except subprocess.CalledProcessError:
                continue
            if len(roads) < 1:
                continue
            req = body(nodes, roads, rng)
            if not feasible(nodes, roads):
                infeasible[fam] += 1
                if only_feasible:
                    continue
            with open(f"{out}/netgen_{fam}_{i:04d}.json", "w") as f:
                json.dump(req, f, separators=(",", ":"))
    print("infeasible (two roads without a common node closer than their half widths): " +
          ", ".join(f"{f} {n}" for f, n in infeasible.items()))


main()
