#!/usr/bin/env python3
"""core/'s folders depend on each other in one direction only.

Reads every #include of core/**/*.c and *.h and checks, folder by folder:
  - scene/ (arena, rng, result, meta, scene) includes no other core folder;
  - geom/ (the double-precision toolkit) includes scene/ only;
  - a generator folder includes geom/, scene/ and the generators it composes
    (COMPOSES below), never a generator that composes it;
  - a folder's *_internal.h is included from that folder only;
  - every core include is written "folder/name.h" and names a file that
    exists, so the graph read here is the graph the compiler sees;
  - the folder graph has no circle (also for folders not listed below).
A folder that is not listed here fails until it is: adding one is a
decision about the architecture (docs/coregeom.md, "Layout").

Usage: check_layout.py [CORE_DIR]     (default: core/ next to tests/)
       check_layout.py --self-test    (the checks reject broken trees)
Exit status 0 when the layout holds, 1 with one line per violation.
"""
import os
import re
import sys
import tempfile

SHARED = {"scene": set(), "geom": {"scene"}}
COMPOSES = {"junction": set(), "road": set(), "network": {"junction", "road"},
            "dungeon": set(), "grid": set()}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def allowed(folder):
    if folder in SHARED:
        return SHARED[folder]
    if folder in COMPOSES:
        return {"geom", "scene"} | COMPOSES[folder]
    return None


def read_includes(core):
    """(file, line, folder, target) for every include of a core folder."""
    folders = sorted(d for d in os.listdir(core) if os.path.isdir(os.path.join(core, d)))
    out, errors = [], []
    for folder in folders:
        for root, _, files in os.walk(os.path.join(core, folder)):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(root, name)
                rel = os.path.relpath(path, core)
                if os.path.dirname(rel) != folder:
                    errors.append(f"{rel}: core/ is one level of folders (move it into {folder}/)")
                text = open(path, encoding="utf-8").read()
                for m in INCLUDE.finditer(text):
                    line = text.count("\n", 0, m.start()) + 1
                    target = m.group(2)
                    head = target.split("/")[0]
                    if m.group(1) == '"':
                        if "/" not in target or head == "..":
                            errors.append(f"{rel}:{line}: include \"{target}\": write core headers as \"folder/name.h\"")
                            continue
                        if head not in folders:
                            errors.append(f"{rel}:{line}: include \"{target}\": no folder core/{head}/")
                            continue
                    elif head not in folders:
                        continue  # a system or library header
                    if not os.path.isfile(os.path.join(core, target)):
                        errors.append(f"{rel}:{line}: include \"{target}\": no such file in core/")
                        continue
                    out.append((rel, line, folder, target))
    return folders, out, errors


def find_cycle(graph):
    """One circle of the folder graph as a list of folders, or None."""
    state = {}

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, stack)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return None


def check(core):
    folders, includes, errors = read_includes(core)
    graph = {f: set() for f in folders}
    for f in folders:
        if allowed(f) is None:
            errors.append(f"{f}/: a folder the layout does not know: list it in tests/core/check_layout.py")
    for rel, line, folder, target in includes:
        dep = target.split("/")[0]
        if dep == folder:
            continue
        graph[folder].add(dep)
        if target.endswith("_internal.h"):
            errors.append(f"{rel}:{line}: includes {target}, internal to {dep}/")
        ok = allowed(folder)
        if ok is not None and dep not in ok:
            may = f"only {', '.join(f + '/' for f in sorted(ok))}" if ok else "no other folder"
            errors.append(f"{rel}:{line}: {folder}/ includes {target}: {folder}/ may include {may}")
    cycle = find_cycle(graph)
    if cycle:
        errors.append("folder circle: " + " -> ".join(cycle))
    return errors


def self_test():
    """Each broken tree must be rejected with the expected complaint."""
    base = {
        "scene/arena.h": "#include <stddef.h>\n",
        "scene/scene.h": '#include "scene/arena.h"\n',
        "geom/vec.h": '#include "scene/scene.h"\n',
        "junction/junction.h": '#include "geom/vec.h"\n',
        "junction/junction_internal.h": '#include "junction/junction.h"\n',
        "road/road.h": '#include "scene/scene.h"\n',
        "network/network.h": '#include "junction/junction.h"\n#include "road/road.h"\n',
        "dungeon/dungeon.h": "", "grid/grid.h": "",
    }
    cases = [
        ("the layout as it should be", {}, None),
        ("shared code includes a generator", {"scene/meta.h": '#include "network/network.h"\n'},
         "scene/ includes network/network.h"),
        ("a composed generator includes its composer", {"junction/junction.c": '#include "network/network.h"\n'},
         "junction/ includes network/network.h"),
        ("two generators include each other", {"road/road.c": '#include "junction/junction.h"\n',
                                               "junction/junction.c": '#include "road/road.h"\n'},
         "folder circle"),
        ("another folder's internal header", {"network/network.c": '#include "junction/junction_internal.h"\n'},
         "internal to junction/"),
        ("an include not written from core/", {"road/road.c": '#include "road.h"\n'}, "folder/name.h"),
        ("an include of a missing file", {"road/road.c": '#include "geom/nothing.h"\n'}, "no such file"),
        ("a folder nobody placed", {"extra/x.h": '#include "scene/scene.h"\n'}, "does not know"),
        ("an unlisted folder in a circle", {"extra/x.h": '#include "extra2/y.h"\n',
                                            "extra2/y.h": '#include "extra/x.h"\n'}, "folder circle"),
    ]
    failed = 0
    for what, extra, expect in cases:
        with tempfile.TemporaryDirectory() as tmp:
            for rel, text in {**base, **extra}.items():
                os.makedirs(os.path.join(tmp, os.path.dirname(rel)), exist_ok=True)
                with open(os.path.join(tmp, rel), "w") as f:
                    f.write(text)
            errors = check(tmp)
        good = (not errors) if expect is None else any(expect in e for e in errors)
        if not good:
            failed += 1
            print(f"self-test FAILED: {what}: expected {expect or 'no complaint'}, got {errors}")
    print(f"self-test: {len(cases) - failed} of {len(cases)} cases as expected")
    return 1 if failed else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    core = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "core")
    errors = check(core)
    for e in errors:
        print(e)
    if errors:
        return 1
    print("core layout: folders depend one way (scene <- geom <- generators; network <- junction, road)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
