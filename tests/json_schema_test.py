#!/usr/bin/env python3
"""json_schema_test.py BINARY [TREES [UNIT_TESTS]]: every JSON document p2pcheck prints validates against
docs/schema/p2pcheck.schema.json (Debian's python3-jsonschema, draft 2020-12), on every input we
have: each fixture tree (check, topo, paths, explain of its first pair; compact and --json=pretty
parse alike; check and paths in schema_version 2, the default, and 1), the lspci -xxxx / lspci -k bundle / udev / hwloc imports made from it with the real
tools, every QEMU lab capture (check, topo) and the live/verify.json that verify left in them, the
real imports in tests/imports/real, `kmod status` here, and the verify documents of UNIT_TESTS'
Verify.* runs (fake engines). An import made from a fixture must
not FAIL or WARN where the fixture itself does not (a problem its format cannot carry).

It also holds the lists in docs/json.md to the code: every finding id, rule_id and fix.kind the
schema allows is in the doc's tables and the other way round, and every finding id the checks'
source names is allowed (so a new id fails here until it is documented).
TREES: the generated fixtures (<TREES>/<name>/root), default $P2PCHECK_FIXTURE_TREES or build/fixtures."""
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
failures = []
validated = 0


def fail(what):
    failures.append(what)
    print("FAIL " + what)


def validate(validator, name, text):
    global validated
    try:
        doc = json.loads(text)
    except ValueError as e:
        fail(f"{name}: not JSON ({e}): {text[:200]!r}")
        return None
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    validated += 1
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        where = "/".join(str(p) for p in best.absolute_path)
        fail(f"{name}: {where}: {best.message[:300]}")
    return doc


def run(validator, name, args, want_json=True, version=None):
    r = subprocess.run(args, capture_output=True, text=True, errors="replace")
    if not r.stdout.strip():
        if want_json:
            fail(f"{name}: no output (exit {r.returncode}): {r.stderr[:200]}")
        return None
    if "\n" in r.stdout.strip() and "--json=pretty" not in args:
        fail(f"{name}: --json printed more than one line")
    doc = validate(validator, name, r.stdout)
    if version is not None and isinstance(doc, dict) and doc.get("schema_version") != version:
        fail(f"{name}: schema_version {doc.get('schema_version')!r}, expected {version}")
    return doc


def no_false_problems(name, tree, imported):
    """An import may know less than the tree it was made from, never worse: each FAIL or WARN it
    reports, the tree reports too (same id and level). Anything else is a problem the input could
    not carry, reported as if seen."""
    seen = {(f["id"], f["level"]) for f in tree["findings"]}
    for f in imported["findings"]:
        if f["level"] in ("FAIL", "WARN") and (f["id"], f["level"]) not in seen:
            fail(f"{name}: {f['level']} {f['id']} ({f['subject']}): {f['message'][:160]} -- the tree does not say so")


def doc_tables(text):
    """The first column of each markdown table under docs/json.md, as sets by table header."""
    tables, header = {}, None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = cells[0]
            tables.setdefault(header, set())
            continue
        if set(cells[0]) <= set("-"):
            continue
        for token in re.findall(r"`([^`]+)`", cells[0]):
            tables[header].add(token)
    return tables


def check_lists(schema):
    defs = schema["$defs"]
    finding_ids = set(defs["finding"]["properties"]["id"]["enum"])
    rule_ids = set(defs["pair"]["properties"]["rule_id"]["enum"])
    kinds = set(defs["fix"]["anyOf"][1]["properties"]["kind"]["enum"])
    tables = doc_tables(open(os.path.join(REPO, "docs/json.md")).read())
    for header, allowed in (("id", finding_ids), ("rule_id", rule_ids), ("kind", kinds)):
        documented = tables.get(header, set())
        for missing in sorted(allowed - documented):
            fail(f"docs/json.md: the {header} table lacks `{missing}`, which the schema allows")
        for extra in sorted(documented - allowed):
            fail(f"docs/json.md: the {header} table lists `{extra}`, which the schema does not allow")
    # Every finding id the checks name in their source: make("id", ...), Finding x{"id", ...}, .id = "id".
    pattern = re.compile(r'(?:make\(|Finding \w+\{|\.id = )"([a-z]+\.[a-z0-9_]+)"')
    src = os.path.join(REPO, "src")
    seen = set()
    for root, _, files in os.walk(src):
        for f in files:
            if f.endswith(".cc"):
                seen |= set(pattern.findall(open(os.path.join(root, f)).read()))
    for missing in sorted(seen - finding_ids):
        fail(f"src names finding id `{missing}`, which docs/json.md and the schema do not list")
    if len(seen) < 20:
        fail(f"found only {len(seen)} finding ids in src/: the pattern no longer matches the code")


def main():
    binary = os.path.realpath(sys.argv[1])
    trees = os.path.realpath(sys.argv[2] if len(sys.argv) > 2 else
                             os.environ.get("P2PCHECK_FIXTURE_TREES", os.path.join(REPO, "build/fixtures")))
    unit_tests = os.path.realpath(sys.argv[3]) if len(sys.argv) > 3 else None
    schema = json.load(open(os.path.join(REPO, "docs/schema/p2pcheck.schema.json")))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    check_lists(schema)
    tmp = tempfile.mkdtemp()
    try:
        fixtures = sorted(d for d in os.listdir(trees) if os.path.isdir(os.path.join(trees, d, "root", "sys")))
        if not fixtures:
            fail(f"no generated fixture trees in {trees}")
        have_lstopo = shutil.which("lstopo") is not None
        for name in fixtures:
            root = os.path.join(trees, name, "root")
            base = [binary, "--root", root]
            # check and paths: schema_version 2 by default (tables of functions and decisions, compact
            # pairs), 1 with --json-schema 1 (every pair in full), 2 also when asked for.
            doc = run(validator, f"{name} check", base + ["check", "--json"], version=2)
            run(validator, f"{name} check pretty", base + ["check", "--json=pretty"], version=2)
            run(validator, f"{name} topo", base + ["topo", "--json"])
            run(validator, f"{name} paths", base + ["paths", "--json"], version=2)
            run(validator, f"{name} check v1", base + ["--json-schema", "1", "check", "--json"], version=1)
            run(validator, f"{name} check v1 pretty", base + ["--json-schema", "1", "check", "--json=pretty"], version=1)
            run(validator, f"{name} paths v1", base + ["--json-schema", "1", "paths", "--json"], version=1)
            run(validator, f"{name} check v2", base + ["--json-schema", "2", "check", "--json"], version=2)
            run(validator, f"{name} paths v2", base + ["--json-schema", "2", "paths", "--json"], version=2)
            if doc and doc.get("pairs"):
                p = doc["pairs"][0]
                run(validator, f"{name} explain", base + ["explain", p["gpu"], p["nvme"], "--json"])
            # The imports a customer would send, made with the real tools (as tests/result_test.sh).
            w = os.path.join(tmp, name)
            os.makedirs(os.path.join(w, "bundle"))
            sysfs = ["-A", "linux-sysfs", "-O", "sysfs.path=" + os.path.join(root, "sys/bus/pci")]
            with open(os.path.join(w, "lspci.txt"), "w") as out:
                subprocess.run(["lspci"] + sysfs + ["-xxxx"], stdout=out, stderr=subprocess.DEVNULL)
            with open(os.path.join(w, "bundle", "lspci-xxxx.txt"), "w") as out:
                subprocess.run(["lspci"] + sysfs + ["-k", "-xxxx"], stdout=out, stderr=subprocess.DEVNULL)
            shutil.copy(os.path.join(root, "proc/cpuinfo"), os.path.join(w, "bundle", "cpuinfo"))
            with open(os.path.join(w, "udev.txt"), "w") as out:
                subprocess.run([sys.executable, os.path.join(HERE, "imports/fixture_udev.py"), root], stdout=out)
            inputs = [("lspci", [os.path.join(w, "lspci.txt")]), ("lspci -k bundle", [os.path.join(w, "bundle")]),
                      ("udev", [os.path.join(w, "udev.txt")])]
            if have_lstopo:
                xml = os.path.join(w, "hwloc.xml")
                with open(xml, "w") as out:
                    subprocess.run(["lstopo", "--whole-io", "--input", root, "--of", "xml"], stdout=out,
                                   stderr=subprocess.DEVNULL, env=dict(os.environ, HWLOC_COMPONENTS="-x86"))
                inputs.append(("hwloc", [xml, "--cpu", "intel"]))
            for what, args in inputs:
                imported = run(validator, f"{name} {what} check", [binary, "--dump"] + args + ["check", "--json"])
                run(validator, f"{name} {what} topo", [binary, "--dump"] + args + ["topo", "--json"])
                if doc and imported:
                    no_false_problems(f"{name} {what}", doc, imported)
        lab = os.path.join(REPO, "fixtures/lab")
        for scenario in sorted(os.listdir(lab)) if os.path.isdir(lab) else []:
            capture = os.path.join(lab, scenario, scenario + ".tar.zst")
            if not os.path.isfile(capture):
                continue
            args = open(os.path.join(lab, scenario, "args")).read().split()
            run(validator, f"lab {scenario} check", [binary, "--dump", capture, "check", "--json"] + args, version=2)
            run(validator, f"lab {scenario} check v1",
                [binary, "--dump", capture, "--json-schema", "1", "check", "--json"] + args, version=1)
            run(validator, f"lab {scenario} topo", [binary, "--dump", capture, "topo", "--json"])
            # Captured again with its args: the replay's `capture` object carries the `selection`.
            again = os.path.join(tmp, scenario + "-selected.tar.zst")
            subprocess.run([binary, "--dump", capture, "capture"] + args + ["-o", again], capture_output=True)
            selected = run(validator, f"lab {scenario} recaptured check", [binary, "--dump", again, "check", "--json"])
            if selected is not None and "selection" not in selected.get("capture", {}):
                fail(f"lab {scenario}: a capture taken with {' '.join(args)} has no capture.selection")
            # What `p2pcheck verify` left on that machine (live/verify.json), when it ran there.
            unpacked = os.path.join(tmp, "lab-" + scenario)
            os.makedirs(unpacked)
            subprocess.run(["tar", "--zstd", "-C", unpacked, "-xf", capture], check=False)
            for top, _, files in os.walk(unpacked):
                if os.path.basename(top) == "live" and "verify.json" in files:
                    validate(validator, f"lab {scenario} live/verify.json", open(os.path.join(top, "verify.json")).read())
        real = os.path.join(REPO, "tests/imports/real")
        for entry in sorted(os.listdir(real)):
            if entry.endswith((".py", ".sh")):
                continue
            path = os.path.join(real, entry)
            run(validator, f"real {entry} check", [binary, "--dump", path, "check", "--json"])
            run(validator, f"real {entry} topo", [binary, "--dump", path, "topo", "--json"])
        # fleet over everything above: the imports made here, the fixture trees, the lab (each capture
        # with its args beside it) and the real dumps; a host of every format and result, and skipped files.
        fleet = run(validator, "fleet", [binary, "fleet", "-q", "--json", tmp, trees, lab, real])
        if fleet is not None:
            if len(fleet.get("hosts", [])) < 50:
                fail(f"fleet read only {len(fleet.get('hosts', []))} hosts")
            if not fleet.get("fixes") or not fleet.get("failures"):
                fail("fleet: no fix groups or no failures over the fixtures")
            if not any(name.endswith("/expected/kernel.json") for name in fleet.get("skipped", [])):
                fail("fleet: the lab's expected/kernel.json files are not listed as skipped (no machine)")
        run(validator, "kmod status", [binary, "kmod", "status", "--json"])
        # verify moves data only on a real machine: its documents come from its unit tests' runs
        # against fake engines (a pass; a refusal and a mismatch), kept when asked.
        if unit_tests:
            out = os.path.join(tmp, "verify-json")
            os.makedirs(out)
            subprocess.run([unit_tests, "--gtest_filter=Verify.ResultsFileForCapture:"
                            "Verify.KmodRefusalAndMismatchAreReportedPerDirection"],
                           env=dict(os.environ, P2PCHECK_VERIFY_JSON_DIR=out), capture_output=True)
            kept = sorted(os.listdir(out))
            if len(kept) != 2:
                fail(f"verify unit tests left {kept} in {out}, expected two documents")
            for f in kept:
                validate(validator, f"verify {f} (unit test)", open(os.path.join(out, f)).read())
        run(validator, "live check", [binary, "check", "--json"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{validated} documents validated, {len(failures)} failure(s)")
    return 0 if not failures and validated > 50 else 1


if __name__ == "__main__":
    sys.exit(main())
