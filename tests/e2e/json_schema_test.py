#!/usr/bin/env python3
"""json_schema_test.py BINARY [TREES [UNIT_TESTS]]: every JSON document p2pcheck prints validates against
docs/schema/p2pcheck.schema.json (Debian's python3-jsonschema, draft 2020-12), on every input we
have: each fixture tree (check, topo, paths, explain of its first pair; compact and --json=pretty
parse alike; check in schema_version 4, paths in its version 2; the saved version 1-3 reports in tests/fleet/saved), the lspci -xxxx / lspci -k bundle / udev / hwloc imports made from it with the real
tools (and `diff` of the tree's saved check against the tree and each import), every QEMU lab capture (check, topo) and the live/verify.json that verify left in them, the
real imports in tests/e2e/imports/real, `kmod status` here, and the verify documents of UNIT_TESTS'
Verify.* runs (fake engines). An import made from a fixture must
not FAIL or WARN where the fixture itself does not (a problem its format cannot carry).
`p2pcheck watch` (no probe is loaded here): `--hooks` on every saved BTF in tests/live/btf, the lab's
recordings (fixtures/lab/*/watch/*.json) and replays of them, recordings made here by hand on the
xeon-broadwell-switch-acs tree (every path, every watch.* finding, each decision hook) replayed with
--json and --json-lines, and what UNIT_TESTS' Watch* tests keep (summary, interval, recording).

It also holds the lists in docs/json.md to the code: every finding id, rule_id and fix.kind the
schema allows is in the doc's tables and the other way round, and every finding id the checks'
source names is allowed (so a new id fails here until it is documented).
TREES: the generated fixtures (<TREES>/<name>/root), default $P2PCHECK_FIXTURE_TREES or build/fixtures."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
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
    # Every finding id the checks name in their source: make("id", ...), Finding x{"id", ...}, .id = "id"
    # (clang-format may break the line after the parenthesis: make(\n "watch.unpaired", ...)).
    pattern = re.compile(r'(?:make\(\s*|Finding \w+\{\s*|\.id = )"([a-z]+\.[a-z0-9_]+)"')
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


# ---- p2pcheck watch ------------------------------------------------------------------------------
# The probe's programs in its object's order (src/live/watch_hooks.cc) and, per decision hook, the ones
# that count besides the block tracepoints (watch_findings.cc needed_programs(), plus bio pinning).
WATCH_PROGRAMS = (("watch_map_sgtable", "fentry dma_map_sgtable"),
                  ("watch_map_segment", "fexit pci_p2pdma_map_segment"),
                  ("watch_update_state", "fexit __pci_p2pdma_update_state"),
                  ("watch_iter_start", "fexit blk_rq_dma_map_iter_start"),
                  ("watch_bio_pin", "fexit bio_iov_iter_get_pages"),
                  ("watch_rq_issue", "tp_btf block_rq_issue"), ("watch_rq_requeue", "tp_btf block_rq_requeue"),
                  ("watch_rq_complete", "tp_btf block_rq_complete"), ("watch_fork", "tp_btf sched_process_fork"))
WATCH_DECISIONS = {"none": (), "pci_p2pdma_map_segment": ("watch_map_sgtable", "watch_map_segment", "watch_bio_pin"),
                   "__pci_p2pdma_update_state": ("watch_map_sgtable", "watch_update_state", "watch_bio_pin"),
                   "blk_rq_dma_map_iter_start": ("watch_iter_start", "watch_bio_pin")}
# xeon-broadwell-switch-acs (tests/watch/watch_fixture.h): the GPU, nvme0 below its switch (BUS_ADDR),
# nvme2 on a root port of an Intel root complex (NOT_SUPPORTED).
WATCH_TREE, GPU, SW_NVME, RP_NVME = "xeon-broadwell-switch-acs", "0000:04:00.0", "0000:06:00.0", "0000:01:00.0"
MiB = 1 << 20


def watch_recording(decision, release, rows, unpaired=0, dropped_rows=0, inflight_full=0, cannot_watch=None,
                    lockdown=("ok", "none", ""), nvidia_fs=(False, None), not_attached=(), problems=(),
                    command=None, in_tree=(), tree_full=0):
    """A recording as `watch --record` writes it (src/watch/watch_recording.cc): every program the
    decision hook loads attached but `not_attached` ({program: error}); rows are (provider, client,
    disk, comm, tgid, path, direction, requests, bytes, errors, last_status[, requeues]), one cumulative
    snapshot. With `command` (pid, name), the rows of the tgids in `in_tree` are the command's tree."""
    on = set(WATCH_DECISIONS[decision]) | {"watch_rq_issue", "watch_rq_requeue", "watch_rq_complete", "watch_fork"}
    programs = [{"program": p, "attach": a, "enabled": p in on, "why": None if p in on else "another decision hook",
                 "attached": p in on and p not in not_attached, "error": dict(not_attached).get(p)}
                for p, a in WATCH_PROGRAMS]
    p2p = decision != "none"
    snapshot = {"seconds": 7.5, "rows": [], "unpaired": unpaired, "dropped_rows": dropped_rows,
                "inflight_full": inflight_full, "tree_full": tree_full}
    for provider, client, disk, comm, tgid, path, way, requests, size, errors, status, *requeues in rows:
        snapshot["rows"].append({"provider": provider, "client": client, "disk": disk, "comm": comm, "tgid": tgid,
                                 "path": path, "direction": way, "requests": requests, "bytes": size,
                                 "segments": requests if path in ("bus_addr", "thru_host_bridge") else 0,
                                 "errors": errors, "error_bytes": errors * 4096, "last_status": status,
                                 "requeues": requeues[0] if requeues else 0, "in_tree": tgid in in_tree})
    loaded, stats = nvidia_fs
    return {"schema": "p2pcheck.watch_recording", "schema_version": 2, "tool_version": "0.1.0",
            "kernel": {"release": release}, "cannot_watch": cannot_watch,
            "command": {"pid": command[0], "name": command[1]} if command else None,
            "hooks": {"decision_hook": decision,
                      "provider_layout": ("p2pdma_provider.owner" if decision == "blk_rq_dma_map_iter_start"
                                          else "pci_p2pdma_pagemap.provider") if p2p else "unknown",
                      "map_type_values": {"not_supported": 2 if decision == "blk_rq_dma_map_iter_start" else 1,
                                          "bus_addr": 3 if decision == "blk_rq_dma_map_iter_start" else 2,
                                          "thru_host_bridge": 4 if decision == "blk_rq_dma_map_iter_start" else 3},
                      "refusal_errno": "EINVAL" if decision == "blk_rq_dma_map_iter_start" else "EREMOTEIO",
                      "block_hooks": True, "problems": list(problems), "hooks": programs},
            "environment": {"lockdown": dict(zip(("status", "mode", "error"), lockdown)),
                            "nvidia_fs": {"loaded": loaded, "stats": stats}},
            "snapshots_dropped": 0, "snapshots": [] if cannot_watch else [snapshot]}


def hand_recordings():
    """(name, recording, global options, options after `watch`, expected result, finding ids it must have)."""
    every = watch_recording("pci_p2pdma_map_segment", "6.8.0-142-generic", [
        (GPU, SW_NVME, "nvme0n1", "train", 4242, "bus_addr", "to_device", 2048, 8 * MiB, 0, 0),
        (GPU, SW_NVME, "nvme0n1", "train", 4242, "thru_host_bridge", "to_storage", 4, 16384, 2, 10),
        (GPU, RP_NVME, "", "train", 4242, "refused", "to_device", 12, 0, 0, 5),
        ("", "", "nvme2n1", "train", 4242, "host", "to_device", 3, 12288, 0, 0),
        ("", "", "loop0", "dd\nRESULT: PASS", 77, "stack_refused", "to_storage", 3, 0, 0, 0),
        ("", "", "nvme0n1", "kworker/u8:2", 0, "host", "other", 1, 4096, 0, 0),
        ("0000:7f:00.0", "0000:7e:00.0", "", "eval", 7, "refused", "to_storage", 2, 0, 0, 99),
    ], unpaired=3, dropped_rows=2, inflight_full=1, lockdown=("denied", "", "Permission denied"),
        nvidia_fs=(None, None), not_attached={"watch_bio_pin": "-EINVAL"},
        problems=["the P2P memory's provider cannot be read on this kernel (neither known layout)"])
    tree = watch_recording("pci_p2pdma_map_segment", "6.12.118", [
        (GPU, SW_NVME, "nvme0n1", "train", 4242, "bus_addr", "to_device", 64, MiB, 0, 0),
        (GPU, SW_NVME, "nvme0n1", "kworker/u8:2", 31, "bus_addr", "to_device", 2, 8192, 0, 0),
        ("", "", "nvme2n1", "cc1plus", 900, "host", "to_device", 9, 36864, 0, 0),
    ], command=(4242, "train"), in_tree={4242}, tree_full=2)
    return [
        ("every path", every, [], [], "FAIL",
         {"watch.mismatch", "watch.errors", "watch.refused", "watch.fallback", "watch.stack_refused", "watch.unpaired",
          "watch.dropped_rows", "watch.inflight_full", "watch.hooks", "watch.not_in_machine", "watch.kworker",
          "watch.nvidia_fs", "watch.lockdown"}),
        ("every path, filtered", every, ["--gpu", GPU, "--nvme", "nvme0"], ["--pid", "4242", "--comm", "train"],
         "FAIL", {"watch.mismatch"}),
        ("bus address", watch_recording("__pci_p2pdma_update_state", "6.16.1", [
            (GPU, SW_NVME, "nvme0n1", "train", 4242, "bus_addr", "to_device", 64, MiB, 0, 0)],
            nvidia_fs=(True, "GDS Version: 1.9.0\n")), [], [], "P2P SEEN", {"watch.nvidia_fs"}),
        ("requeued", watch_recording("pci_p2pdma_map_segment", "6.12.118", [
            (GPU, SW_NVME, "nvme0n1", "p2pcheck", 31, "bus_addr", "to_storage", 1, MiB, 0, 0, 1)]),
         [], [], "P2P SEEN", {"watch.requeued"}),
        ("iter start", watch_recording("blk_rq_dma_map_iter_start", "6.17.2", [
            (GPU, RP_NVME, "", "fio", 9, "refused", "to_device", 5, 0, 0, 0)]), [], [], "FAIL", {"watch.refused"}),
        ("no P2PDMA", watch_recording("none", "6.1.0-57-amd64", [
            ("", "", "nvme0n1", "cp", 5, "host", "to_storage", 10, 40960, 0, 0)]), [], [], "NO P2P",
         {"watch.no_p2pdma"}),
        ("cannot watch", watch_recording("pci_p2pdma_map_segment", None, [],
                                         cannot_watch="lockdown=confidentiality forbids the probe"),
         [], [], "UNKNOWN", {"watch.cannot_watch"}),
        # `watch -- train`: the tree's own bus-address read counts; a kernel worker's P2P outside it
        # and an unrelated cc1plus are left out, said so, and counted by --all.
        ("command tree", tree, [], [], "P2P SEEN", {"watch.worker_not_counted", "watch.tree_full"}),
        ("command tree, --all", tree, [], ["--all"], "P2P SEEN", {"watch.kworker"}),
        ("a hook not attached", watch_recording("pci_p2pdma_map_segment", "6.8.0-142-generic", [
            (GPU, SW_NVME, "nvme0n1", "train", 4242, "bus_addr", "to_device", 64, MiB, 0, 0)],
            not_attached={"watch_rq_issue": "Permission denied"}), [], [], "UNKNOWN", {"watch.cannot_watch"}),
    ]


def replay(validator, name, binary, machine, recording, options=()):
    """`watch --replay` of one recording: --json (the summary) and --json-lines (the same, one line).
    The global options go before `watch`, which does not take them after it (no fallthrough())."""
    base = [binary] + machine
    doc = run(validator, f"{name} --json", base + ["--json", "watch", "--replay", recording] + list(options))
    lines = run(validator, f"{name} --json-lines",
                base + ["watch", "--replay", recording, "--json-lines"] + list(options))
    if doc is not None and lines is not None and lines != doc:
        fail(f"{name}: --json-lines and --json differ")
    run(validator, f"{name} --json=pretty", base + ["--json=pretty", "watch", "--replay", recording] + list(options))
    return doc


def check_watch(validator, binary, trees, tmp, unit_tests):
    """Every watch document we can make without a probe; the watch.* finding ids the schema allows
    must all appear in the hand-made replays (each then validated in a real document)."""
    for btf in sorted(glob.glob(os.path.join(REPO, "tests/live/btf/*.btf"))):
        name = "watch --hooks " + os.path.basename(btf)
        run(validator, name, [binary, "--json", "watch", "--hooks", "--btf", btf])
        run(validator, name + " pretty", [binary, "--json=pretty", "watch", "--hooks", "--btf", btf])
    lab = os.path.join(REPO, "fixtures/lab")
    for rec in sorted(glob.glob(os.path.join(lab, "*", "watch", "*.json"))):
        scenario = os.path.basename(os.path.dirname(os.path.dirname(rec)))
        name = f"lab {scenario} {os.path.basename(rec)}"
        validate(validator, name + " (recording)", open(rec).read())
        capture = os.path.join(lab, scenario, scenario + ".tar.zst")
        if os.path.isfile(capture):
            replay(validator, name + " replay", binary, ["--dump", capture], rec)
    tree = os.path.join(trees, WATCH_TREE, "root")
    if not os.path.isdir(tree):
        fail(f"watch: no fixture tree {tree} to replay recordings on")
        return
    seen = set()
    for name, recording, machine, options, result, ids in hand_recordings():
        path = os.path.join(tmp, "watch-" + name.replace(" ", "-").replace(",", "") + ".json")
        with open(path, "w") as out:
            json.dump(recording, out, indent=1)
        validate(validator, f"watch recording {name} (by hand)", json.dumps(recording))
        doc = replay(validator, f"watch replay {name}", binary, ["--root", tree] + machine, path, options)
        if doc is None:
            continue
        got = {f["id"] for f in doc.get("findings", [])}
        seen |= got
        if doc.get("result") != result or not ids <= got:
            fail(f"watch replay {name}: {doc.get('result')} with {sorted(got)}, expected {result} with {sorted(ids)}")
    documented = {i for i in validator.schema["$defs"]["finding"]["properties"]["id"]["enum"] if i.startswith("watch.")}
    for missing in sorted(documented - seen):
        fail(f"watch: no hand-made recording gives `{missing}`: add one to hand_recordings()")
    if unit_tests:
        out = os.path.join(tmp, "watch-json")
        os.makedirs(out)
        subprocess.run([unit_tests, "--gtest_filter=Watch*"], env=dict(os.environ, P2PCHECK_WATCH_JSON_DIR=out),
                       capture_output=True)
        kept = sorted(os.listdir(out))
        schemas = set()
        for f in kept:
            doc = validate(validator, f"watch {f} (unit test)", open(os.path.join(out, f)).read())
            schemas.add(doc.get("schema") if isinstance(doc, dict) else None)
        want = {"p2pcheck.watch", "p2pcheck.watch_interval", "p2pcheck.watch_recording"}
        if not want <= schemas:
            fail(f"watch unit tests left {kept} in {out}: no {sorted(want - schemas)}")
        if "watch-recording.json" in kept:
            replay(validator, "watch replay (unit test recording)", binary, ["--root", tree],
                   os.path.join(out, "watch-recording.json"))


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
            # check: schema_version 4 (tables of functions, decisions, devices and port lists, pairs
            # as index records), also when a script asks for it by number; paths: its own version 2.
            doc = run(validator, f"{name} check", base + ["check", "--json"], version=4)
            run(validator, f"{name} check pretty", base + ["check", "--json=pretty"], version=4)
            run(validator, f"{name} topo", base + ["topo", "--json"])
            run(validator, f"{name} paths", base + ["paths", "--json"], version=2)
            run(validator, f"{name} check v4", base + ["--json-schema", "4", "check", "--json"], version=4)
            run(validator, f"{name} paths v4", base + ["--json-schema", "4", "paths", "--json"], version=2)
            run(validator, f"{name} mounts", base + ["mounts", "--json"])
            if doc and doc.get("pairs"):
                p = doc["pairs"][0]
                run(validator, f"{name} explain", base + ["explain", doc["devices"][p[0]], doc["devices"][p[1]], "--json"])
            # The imports a customer would send, made with the real tools (as tests/e2e/result_test.sh).
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
            # diff: the tree's saved check against the tree again (the same) and against each import
            # of it below (pairs and findings that the format could not carry change).
            baseline = os.path.join(w, "baseline.json")
            if doc:
                with open(baseline, "w") as out:
                    json.dump(doc, out)
                run(validator, f"{name} diff", base + ["diff", baseline, "--json"])
            for what, args in inputs:
                imported = run(validator, f"{name} {what} check", [binary, "--dump"] + args + ["check", "--json"])
                run(validator, f"{name} {what} topo", [binary, "--dump"] + args + ["topo", "--json"])
                # (A supplied --cpu would judge the saved baseline again: diff refuses that, rightly.)
                if doc and "--cpu" not in args:
                    run(validator, f"{name} {what} diff", [binary, "--dump"] + args + ["diff", baseline, "--json"])
                if doc and imported:
                    no_false_problems(f"{name} {what}", doc, imported)
        lab = os.path.join(REPO, "fixtures/lab")
        for scenario in sorted(os.listdir(lab)) if os.path.isdir(lab) else []:
            capture = os.path.join(lab, scenario, scenario + ".tar.zst")
            if not os.path.isfile(capture):
                continue
            args = open(os.path.join(lab, scenario, "args")).read().split()
            run(validator, f"lab {scenario} check", [binary, "--dump", capture, "check", "--json"] + args, version=4)
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
        real = os.path.join(REPO, "tests/e2e/imports/real")
        for entry in sorted(os.listdir(real)):
            if entry.endswith((".py", ".sh")):
                continue
            path = os.path.join(real, entry)
            run(validator, f"real {entry} check", [binary, "--dump", path, "check", "--json"])
            run(validator, f"real {entry} topo", [binary, "--dump", path, "topo", "--json"])
        # Saved reports in schema_version 1, 2 and 3, which fleet still reads (p2pcheck writes them
        # no more): each file names its version (rhel98-epyc-schema1.json).
        saved = os.path.join(REPO, "tests/fleet/saved")
        for entry in sorted(os.listdir(saved)):
            doc = validate(validator, f"saved {entry}", open(os.path.join(saved, entry)).read())
            want = int(entry.rsplit("schema", 1)[1].split(".")[0]) if "schema" in entry else None
            if want not in (1, 2, 3) or not isinstance(doc, dict) or doc.get("schema_version") != want:
                fail(f"saved {entry}: schema_version {doc.get('schema_version') if isinstance(doc, dict) else None!r}, "
                     f"expected the retired version its name says (1, 2 or 3)")
        # fleet over everything above: the imports made here, the fixture trees, the lab (each capture
        # with its args beside it) and the real dumps; a host of every format and result, and skipped files.
        fleet = run(validator, "fleet", [binary, "fleet", "-q", "--json", tmp, trees, lab, real])
        if fleet is not None:
            if len(fleet.get("hosts", [])) < 50:
                fail(f"fleet read only {len(fleet.get('hosts', []))} hosts")
            if not fleet.get("fixes") or not fleet.get("failures"):
                fail("fleet: no fix groups or no failures over the fixtures")
            # Every file in a folder of hosts is a host: the lab's kernel.json (no p2pcheck document)
            # is an unreadable input with its reason, never passed over as a machine that is not there.
            unread = {u["input"]: u["reason"] for u in fleet.get("unreadable", [])}
            kernel = [name for name in unread if name.endswith("/expected/kernel.json")]
            if not kernel or any(not unread[name] for name in kernel):
                fail("fleet: the lab's expected/kernel.json files are not listed as unreadable with a reason")
            if any(name.endswith("/expected/kernel.json") for name in fleet.get("skipped", [])):
                fail("fleet: a kernel.json passed over as notes")
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
        check_watch(validator, binary, trees, tmp, unit_tests)
        run(validator, "live check", [binary, "check", "--json"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{validated} documents validated, {len(failures)} failure(s)")
    return 0 if not failures and validated > 50 else 1


if __name__ == "__main__":
    sys.exit(main())
