#!/usr/bin/env python3
"""Writes the request bodies of bench/compact.sh into a directory:
town.json (10 x 10 grid town, as bench/bench_network.c builds it),
road.json (a 2 km road, 20 control points, a guardrail line, draped on a
512 x 512 noise terrain), dungeon.json (170 rooms on 200 x 200)."""
import json, math, sys

out = sys.argv[1]

def town(n=10):
    nodes = [{"id": i * n + j, "position": [40 * i, 0.2 * ((i * 7 + j * 3) % 5), 40 * j]}
             for i in range(n) for j in range(n)]
    edges = []
    for i in range(n):
        for j in range(n):
            if i + 1 < n:
                edges.append({"from": i * n + j, "to": (i + 1) * n + j})
            if j + 1 < n:
                edges.append({"from": i * n + j, "to": i * n + j + 1, "width": 6 if j % 2 else 8,
                              "points": [[40.0 * i + 3, 40.0 * j + 20]]})
    return {"sidewalk": {"width": 2}, "corner_radius": 4, "nodes": nodes, "edges": edges}

def road():
    # 20 points along x, wandering in z: about 2 km of curve.
    pts = [[100.0 * k, 0, 60.0 * math.sin(k * 0.9)] for k in range(20)]
    return {"points": pts, "width": 8,
            "terrain": {"origin": [-100, -1100], "cell": 4.5, "cols": 512, "rows": 512,
                        "noise": {"seed": 7, "amplitude": 10, "wavelength": 200, "octaves": 4}},
            "props": [{"name": "guardrail", "spacing": 4, "offset": 5, "side": "both"}]}

def dungeon():
    return {"seed": 42, "generate": {"count": 170, "extent": [200, 200]}}

for name, doc in (("town", town()), ("road", road()), ("dungeon", dungeon())):
    with open(f"{out}/{name}.json", "w") as f:
        json.dump(doc, f)
