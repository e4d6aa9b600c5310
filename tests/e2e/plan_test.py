#!/usr/bin/env python3
"""Plans (fixtures/plans/*.toml) against the machines they describe, and the pictures' goldens.

    tests/e2e/plan_test.py BINARY [update]

1. Equivalence: each fixtures/plans/<name>.toml describes fixtures/<name>; every pair must get the
   same decision from `--plan` as from `--root` of the generated tree (map type, verdict, path
   verdict, distances, common bridge, the rule's sentence, the host check), under the kernel each
   names and under --assume-kernel releases that change the allowlist.
2. The command line around it: a bad plan exits 5 naming file and line, --plan with --root or with
   capture exits 3, names work as selectors, --svg without Graphviz exits 3 while --dot still works.
3. Goldens: fixtures/plans/<name>.check.txt (`--plan ... check`) and
   fixtures/pictures/<fixture>.dot (`--root ... topo --dot`), reviewed like every fixture's output.
Run from anywhere; the trees come from $P2PCHECK_FIXTURE_TREES (default build/fixtures).
"""
import json
import os
import subprocess
import sys

from check_json_pairs import pairs_in_full

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAIR_KEYS = ["map_type", "verdict", "path", "distance", "path_distance", "common_bridge", "blocked_by", "rule",
             "unknowns", "host_check", "flows", "later"]
KERNELS = [None, "6.1", "6.8", "7.1"]  # the plan's own, then releases with different allowlists
PICTURES = ["xeon-broadwell-switch-acs", "xeon-2socket-hostbridges", "epyc-mi300x-8gpu"]


def run(binary, args, cwd):
    p = subprocess.run([binary] + args, cwd=cwd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def pairs_of(binary, args, cwd):
    # Each pair with its whole decision (its decisions row joined), PAIR_KEYS compared directly.
    rc, out, err = run(binary, args + ["check", "--json"], cwd)
    if rc not in (0, 1, 2):
        raise SystemExit(f"FAIL {' '.join(args)}: exit {rc}: {err.strip()}")
    j = json.loads(out)
    return rc, j, pairs_in_full(j)


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
            # A plan cannot say how a function will be bound: the fixture leaves out what is bound so
            # no one can use it (an NVMe VF handed to vfio-pci), the plan pairs it like any other.
            unusable = {b for f in rj["findings"] if f["id"] == "inventory.unusable" for b in f["devices"]}
            planned = {k: v for k, v in planned.items() if k[0] not in unusable and k[1] not in unusable}
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


def command_line(binary, trees, failures):
    import tempfile
    plan = os.path.join(SRC, "fixtures/plans/xeon-broadwell-switch-acs.toml")
    checked = 0

    def expect(args, rc_want, needle, env=None, stream="stderr"):
        nonlocal checked
        p = subprocess.run([binary] + args, cwd=SRC, capture_output=True, text=True, env=env)
        text = p.stderr if stream == "stderr" else p.stdout
        checked += 1
        if p.returncode != rc_want or needle not in text:
            failures.append(f"{' '.join(args)}: exit {p.returncode} (want {rc_want}), {stream} lacks {needle!r}: "
                            f"{text.strip()[:300]}")

    with tempfile.TemporaryDirectory() as tmp:
        bad = os.path.join(tmp, "bad.toml")
        with open(bad, "w") as f:
            f.write('[cpu]\nvendor = "GenuineIntel"\nfamily = 6\n[[host_bridge]]\nname = "hb"\nbus = 0\n'
                    'device = "none"\n[[gpu]]\nname = "g"\nat = "nowhere"\nid = "1002:740f"\n')
        expect(["--plan", bad, "check"], 5, bad + ":8: gpu g: at = 'nowhere' is not")
        with open(bad, "w") as f:
            f.write("[cpu\n")
        expect(["--plan", bad, "check"], 5, bad + ":1: not valid TOML")
        expect(["--plan", os.path.join(tmp, "missing.toml"), "check"], 5, "cannot open the plan file")
        expect(["--plan", plan, "--root", "/", "check"], 3, "give one")
        expect(["--plan", plan, "capture", "-o", os.path.join(tmp, "c.tar.zst")], 3, "not built yet")
        expect(["--plan", plan, "--gpu", "gpu0", "--nvme", "nvme0", "check", "--quiet"], 2, "RESULT: UNKNOWN", None,
               "stdout")
        expect(["--plan", plan, "explain", "gpu1", "nvme0"], 1, "0000:05:00.0", None, "stdout")
        # Without dot on PATH: --svg is a usage error naming the package, nothing is written; --dot works.
        env = dict(os.environ, PATH=tmp)
        svg = os.path.join(tmp, "out.svg")
        expect(["--plan", plan, "topo", "--svg", svg], 3, "apt-get install graphviz", env)
        if os.path.exists(svg) or [n for n in os.listdir(tmp) if n.startswith(".p2pcheck-")]:
            failures.append("--svg without dot left a file behind")
        expect(["--plan", plan, "topo", "--dot"], 0, "graph p2pcheck {", env, "stdout")

        # Hostile plans: cut and flipped bytes of a real one end as a verdict or a clear error (exit 5
        # naming the file), never a crash. Seeded, so a failure reproduces.
        import random
        rng = random.Random(13)
        original = open(plan, "rb").read()
        for i in range(150):
            data = bytearray(original)
            if i % 3 == 0:
                data = data[:rng.randrange(len(data))]
            for _ in range(1 + i % 4):
                data[rng.randrange(len(data))] = rng.choice(b'[]{}="\\\n,.x0123456789abcdefz\x00\xff')
            mutated = os.path.join(tmp, f"hostile-{i}.toml")
            with open(mutated, "wb") as f:
                f.write(bytes(data))
            p = subprocess.run([binary, "--plan", mutated, "check"], capture_output=True, text=True, errors="replace")
            checked += 1
            if p.returncode not in (0, 1, 2, 4, 5) or (p.returncode == 5 and mutated not in p.stderr):
                failures.append(f"hostile plan {i} ({mutated}): exit {p.returncode}: {p.stderr.strip()[:300]}")
    return checked


def golden(binary, trees, update, failures):
    checked = 0
    cases = []
    for plan in sorted(f for f in os.listdir(os.path.join(SRC, "fixtures/plans")) if f.endswith(".toml")):
        cases.append((os.path.join(SRC, "fixtures/plans", plan[:-5] + ".check.txt"), SRC,
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
            failures.append(f"no golden {os.path.relpath(expected, SRC)} (tests/e2e/plan_test.py BINARY update)")
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
    cli = 0 if update else command_line(binary, trees, failures)
    for f in failures:
        print("FAIL " + f)
    print(f"{compared} pair decisions compared (plan vs fixture), {checked} goldens checked, {cli} command lines, "
          f"{len(failures)} failures")
    if not update and compared < 50:
        print("FAIL fewer than 50 pair decisions compared: the equivalence test compared too little")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
