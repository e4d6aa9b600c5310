#!/usr/bin/env python3
"""The layer rule over the #include lines: a layer includes only itself and the layers it may use.

    tests/house/layers_test.py [REPO]        check src/ and include/ (exit 1 naming each bad include)
    tests/house/layers_test.py --self-test   prove the check fails on planted bad includes

Layers, lowest first, each with the lower layers it uses (src/layers.txt, a DAG; docs/architecture.md):
a file belongs to the layer of its folder, src/<layer>/ or include/p2pcheck/<layer>/, and may include
its own layer and the closure of its list (what the build's view of include/ holds). Every p2pcheck
header lives in a layer folder, so `#include "p2pcheck/x.h"` without one is an error too, and so is a
file outside any layer; a relative include ("../live/x.h") that leaves the file's layer folder
bypasses the build's views and is named as well.
"""
import os
import re
import sys
import tempfile

from source_files import source_files

def read_layers(repo):
    """[(layer, [layers it may use: the closure of its list])], lowest first, from src/layers.txt."""
    layers, uses = [], {}
    with open(os.path.join(repo, "src", "layers.txt"), encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            m = re.fullmatch(r"([a-z]+):((?: +[a-z]+)*) *", line.rstrip("\n"))
            if not m:
                continue
            closure = set()
            for lower in m.group(2).split():
                if lower not in uses:
                    raise SystemExit(f"src/layers.txt:{lineno}: {m.group(1)} uses '{lower}', not a layer above it")
                closure |= {lower} | uses[lower]
            uses[m.group(1)] = closure
            layers.append(m.group(1))
    return layers, uses


LAYERS, USES = read_layers(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
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
        if own not in USES:
            problems.append(f"{rel}: not in a layer folder ({', '.join(LAYERS)})")
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                if "../" in m.group(1):
                    lands = os.path.normpath(os.path.join(os.path.dirname(rel), m.group(1)))
                    if layer_of(lands) != own:
                        problems.append(f"{rel}:{lineno}: includes {m.group(1)} by a relative path out of "
                                        f"{own}/: name another layer's header by its place in include/p2pcheck/")
                    continue
                if not m.group(1).startswith("p2pcheck/"):
                    continue
                target = m.group(1).split("/")
                other = target[1] if len(target) > 2 else None
                if other not in USES:
                    problems.append(f"{rel}:{lineno}: includes {m.group(1)}, which is in no layer")
                elif other != own and other not in USES[own]:
                    problems.append(f"{rel}:{lineno}: {own}/ includes {m.group(1)} from {other}/, which it may not "
                                    f"use (src/layers.txt: {own} uses {', '.join(sorted(USES[own])) or 'nothing'})")
    if files == 0:
        problems.append(f"no .cc or .h files under {repo}/src or {repo}/include")
    return files, problems


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        for d in ("src/model", "src/checks", "src/live", "include/p2pcheck/rules", "include/p2pcheck/live"):
            os.makedirs(os.path.join(tmp, d))
        for header in ("rules/r.h", "live/l.h"):
            with open(os.path.join(tmp, "include", "p2pcheck", header), "w") as f:
                f.write("#pragma once\n")
        with open(os.path.join(tmp, "src", "model", "m.cc"), "w") as f:
            f.write('#include "p2pcheck/rules/r.h"\n#include "p2pcheck/flat.h"\n')
        with open(os.path.join(tmp, "src", "checks", "c.cc"), "w") as f:
            f.write('#include "p2pcheck/rules/r.h"\n#include "p2pcheck/live/l.h"\n#include "../live/x.h"\n')
        _, problems = check(tmp)
        want = ["model/ includes p2pcheck/rules/r.h from rules/, which it may not use",
                "p2pcheck/flat.h, which is in no layer",
                "checks/ includes p2pcheck/live/l.h from live/, which it may not use",
                "includes ../live/x.h by a relative path out of checks/"]
        missing = [w for w in want if not any(w in p for p in problems)]
        if missing or len(problems) != len(want):
            print("layers_test self-test: wanted", want, "got", problems)
            return 1
    print("layers_test self-test: an upward include, a flat include, checks/ -> live/ (live is lower, "
          "but not checks/'s to use) and a relative include out of a layer are caught")
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
