#!/usr/bin/env python3
"""The layer rule over the #include lines: a layer includes only itself and the layers below it.

    tests/house/layers_test.py [REPO]        check src/ and include/ (exit 1 naming each bad include)
    tests/house/layers_test.py --self-test   prove the check fails on a planted upward include

Layers, lowest first (src/layers.txt; docs/architecture.md): a file belongs to the layer of its folder,
src/<layer>/ or include/p2pcheck/<layer>/. Every p2pcheck header lives in a layer folder, so
`#include "p2pcheck/x.h"` without one is an error too, and so is a file outside any layer.
"""
import os
import re
import sys
import tempfile

from source_files import source_files

def read_layers(repo):
    # src/layers.txt, the one list (the build reads it too): one layer a line, lowest first.
    with open(os.path.join(repo, "src", "layers.txt"), encoding="utf-8") as f:
        return [line.strip() for line in f if re.fullmatch(r"[a-z]+", line.strip())]


LAYERS = read_layers(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
RANK = {name: i for i, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"\n]{1,300})"')


def layer_of(rel):
    parts = rel.split("/")
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[:2] == ["include", "p2pcheck"] and len(parts) > 3:
        return parts[2]
    return None


def check(repo):
    problems = []
    files = 0
    for rel, path in source_files(repo, ("src", "include"), (".cc", ".h")):
        files += 1
        own = layer_of(rel)
        if own not in RANK:
            problems.append(f"{rel}: not in a layer folder ({', '.join(LAYERS)})")
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m or not m.group(1).startswith("p2pcheck/"):
                    continue
                target = m.group(1).split("/")
                other = target[1] if len(target) > 2 else None
                if other not in RANK:
                    problems.append(f"{rel}:{lineno}: includes {m.group(1)}, which is in no layer")
                elif RANK[other] > RANK[own]:
                    problems.append(f"{rel}:{lineno}: {own}/ includes {m.group(1)} from the higher "
                                    f"layer {other}/ (order: {' -> '.join(LAYERS)})")
    if files == 0:
        problems.append(f"no .cc or .h files under {repo}/src or {repo}/include")
    return files, problems


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "src", "model"))
        os.makedirs(os.path.join(tmp, "include", "p2pcheck", "rules"))
        with open(os.path.join(tmp, "include", "p2pcheck", "rules", "r.h"), "w") as f:
            f.write("#pragma once\n")
        with open(os.path.join(tmp, "src", "model", "m.cc"), "w") as f:
            f.write('#include "p2pcheck/rules/r.h"\n#include "p2pcheck/flat.h"\n')
        _, problems = check(tmp)
        want = ["includes p2pcheck/rules/r.h from the higher layer", "p2pcheck/flat.h, which is in no layer"]
        missing = [w for w in want if not any(w in p for p in problems)]
        if missing:
            print("layers_test self-test: the check did not catch: " + "; ".join(missing))
            return 1
    print("layers_test self-test: an upward include and a flat include are caught")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    files, problems = check(repo)
    for p in problems:
        print("FAIL " + p)
    print(f"{files} files, {len(problems)} layer violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
