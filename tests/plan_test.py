#!/usr/bin/env python3
"""Plans (fixtures/plans/*.toml) against the machines they describe, and the pictures' goldens.

    tests/plan_test.py BINARY [update]

1. Equivalence: each fixtures/plans/<name>.toml describes fixtures/<name>; every pair must get the
   same decision from `--plan` as from `--root` of the generated tree (map type, verdict, path
   verdict, distances, common bridge, the rule's sentence, the host check), under the kernel each
   names and under --assume-kernel releases that change the allowlist.
2. Goldens: fixtures/plans/expected/<name>.check.txt (`--plan ... check`) and
   fixtures/pictures/<fixture>.dot (`--root ... topo --dot`), reviewed like every fixture's output.
Run from anywhere; the trees come from $P2PCHECK_FIXTURE_TREES (default build/fixtures).
"""
import json
import os
import subprocess
import sys

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIR_KEYS = ["map_type", "verdict", "path", "distance", "path_distance", "common_bridge", "blocked_by", "rule",
             "unknowns", "host_check", "flows", "later"]
KERNELS = [None, "6.1", "6.8", "7.1"]  # the plan's own, then releases with different allowlists
PICTURES = ["xeon-broadwell-switch-acs", "xeon-2socket-hostbridges"]


def run(binary, args, cwd):
    p = subprocess.run([binary] + args, cwd=cwd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def pairs_of(binary, args, cwd):
    rc, out, err = run(binary, args + ["check", "--json"], cwd)
    if rc not in (0, 1, 2):
        raise SystemExit(f"FAIL {' '.join(args)}: exit {rc}: {err.strip()}")
    j = json.loads(out)
    return rc, j, {(p["gpu"], p["nvme"]): p for p in j["pairs"]}


def equivalence(binary, trees, failures):
    plans = sorted(f for f in os.listdir(os.path.join(SRC, "fixtures/plans")) if f.endswith(".toml"))
    if len(plans) < 3:
        failures.append(f"expected at least 3 plans in fixtures/plans, found {len(plans)}")
    compared = 0
    for plan in plans:
        name = plan[:-5]
        root = os.path.join(trees, name, "root")
        if not os.path.isdir(os.path.join(root, "sys")):
            failures.append(f"{name}: no generated tree {root}")
            continue
        for kernel in KERNELS:
            extra = ["--assume-kernel", kernel] if kernel else []
            _, pj, planned = pairs_of(binary, ["--plan", os.path.join(SRC, "fixtures/plans", plan)] + extra, SRC)
            _, rj, real = pairs_of(binary, ["--root", root] + extra, SRC)
            what = f"{name}{' --assume-kernel ' + kernel if kernel else ''}"
            if not real:
                failures.append(f"{what}: the fixture has no pairs")
            if set(planned) != set(real):
                failures.append(f"{what}: pairs differ: plan only {sorted(set(planned) - set(real))}, "
                                f"fixture only {sorted(set(real) - set(planned))}")
            for key in sorted(set(planned) & set(real)):
                for field in PAIR_KEYS:
                    if planned[key].get(field) != real[key].get(field):
                        failures.append(f"{what} {key[0]} <-> {key[1]}: {field}: plan {planned[key].get(field)!r}, "
                                        f"fixture {real[key].get(field)!r}")
                compared += 1
            # The CPU facts the rules read; the fixture's kernel object also names config files a plan has not.
            for field in ["vendor", "family", "model"]:
                if pj["cpu"].get(field) != rj["cpu"].get(field):
                    failures.append(f"{what}: cpu {field}: plan {pj['cpu'].get(field)!r}, fixture {rj['cpu'].get(field)!r}")
    return compared


def golden(binary, trees, update, failures):
    checked = 0
    cases = []
    for plan in sorted(f for f in os.listdir(os.path.join(SRC, "fixtures/plans")) if f.endswith(".toml")):
        cases.append((os.path.join(SRC, "fixtures/plans/expected", plan[:-5] + ".check.txt"), SRC,
                      ["--plan", "fixtures/plans/" + plan, "check", "--color", "never"]))
    for name in PICTURES:
        cases.append((os.path.join(SRC, "fixtures/pictures", name + ".dot"), os.path.dirname(trees),
                      ["--root", f"fixtures/{name}/root", "topo", "--dot"]))
    for expected, cwd, args in cases:
        rc, out, err = run(binary, args, cwd)
        if rc not in (0, 1, 2):
            failures.append(f"{' '.join(args)}: exit {rc}: {err.strip()}")
            continue
        if update:
            os.makedirs(os.path.dirname(expected), exist_ok=True)
            with open(expected, "w") as f:
                f.write(out)
            print(f"updated {os.path.relpath(expected, SRC)}")
            continue
        try:
            with open(expected) as f:
                want = f.read()
        except OSError:
            failures.append(f"no golden {os.path.relpath(expected, SRC)} (tests/plan_test.py BINARY update)")
            continue
        checked += 1
        if want != out:
            import difflib
            diff = "".join(list(difflib.unified_diff(want.splitlines(True), out.splitlines(True), "expected", "now"))[:40])
            failures.append(f"{' '.join(args)} differs from {os.path.relpath(expected, SRC)}:\n{diff}")
    return checked


def main():
    binary = os.path.abspath(sys.argv[1])
    update = len(sys.argv) > 2 and sys.argv[2] == "update"
    trees = os.path.abspath(os.environ.get("P2PCHECK_FIXTURE_TREES", os.path.join(SRC, "build/fixtures")))
    failures = []
    compared = 0 if update else equivalence(binary, trees, failures)
    checked = golden(binary, trees, update, failures)
    for f in failures:
        print("FAIL " + f)
    print(f"{compared} pair decisions compared (plan vs fixture), {checked} goldens checked, {len(failures)} failures")
    if not update and compared < 50:
        print("FAIL fewer than 50 pair decisions compared: the equivalence test compared too little")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
