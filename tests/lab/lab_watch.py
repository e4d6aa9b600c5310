# SPDX-License-Identifier: GPL-2.0
"""The lab's checks of `p2pcheck watch` (the eBPF probe), run around verify runs (guest-init.sh:
vwatch) and around plain commands (wrun): the path the kernel took for each pair must be the one
p2pcheck predicted and the one p2pprobe/verify reported, with the exact bytes verify moved."""
import dataclasses
import json
import os
import shutil
import subprocess

from lab_io import kv, load_json, read

MiB = 1 << 20
# watch's path names (docs/json.md) for the lab's pair kinds and the kernel's map types.
PATH_OF_MAP_TYPE = {"BUS_ADDR": "bus_addr", "THRU_HOST_BRIDGE": "thru_host_bridge", "NOT_SUPPORTED": "refused"}


@dataclasses.dataclass
class PathExpect:
    """What watch must report for one (provider, client) pair."""
    path: str                  # bus_addr | thru_host_bridge | refused
    to_device: int = -1        # exact completed bytes; -1 = not asserted
    to_storage: int = -1
    errors_min: int = 0        # at least this many failed requests (both directions)
    refused_min: int = 0       # path refused: at least this many refused requests
    errno: str = ""            # path refused: the errno watch names
    requeues: int = 0          # exact requeues over every direction (the probe's block_rq_requeue)


@dataclasses.dataclass
class WatchExpect:
    """`p2pcheck watch` around one run: its exit code, RESULT, pairs and other rows."""
    rc: int
    result: str
    pairs: dict = dataclasses.field(default_factory=dict)   # (provider, client) -> PathExpect
    only_pairs: bool = True      # no P2P bytes on any pair not listed
    stack_refused: str = ""      # a storage-stack refusal on a disk whose name starts with this
    host: tuple = ()             # (serial, direction, exact bytes, comm): host-memory rows
    text: str = ""               # in a finding's message or cannot-watch reason
    findings: tuple = ()         # finding ids the report must have
    scope: str = ""              # scope.processes: command_tree (watch -- COMMAND), machine (--all)
    not_counted: tuple = ()      # (serial, comm): I/O there by comm, seen but outside the scope: no host row
                                 # on serial, at least 1 request not counted, and `watch --replay --all` counts it


@dataclasses.dataclass
class WatchRun:
    """A command (not verify) run under watch in the guest (guest-init.sh: wrun); with `beside`, a shell
    loop started before watch and outside it does its own I/O meanwhile (guest-init.sh: wbeside)."""
    name: str
    command: str
    expect: WatchExpect
    beside: str = ""


def watch_script_line(name, args, guest_words):
    return f"vwatch {name} {guest_words(args)}"


def counts(pair, direction):
    return pair.get(direction) or {}


def check_pair(ck, label, pr, e, kern_map_type):
    ck.ok(pr.get("path") == e.path, f"{label}: path {pr.get('path')}, expected {e.path}")
    ck.ok(pr.get("agrees") is True, f"{label}: watch's path does not agree with p2pcheck's prediction "
                                    f"{pr.get('predicted')}: agrees={pr.get('agrees')}")
    if kern_map_type:
        ck.ok(PATH_OF_MAP_TYPE.get(kern_map_type) == pr.get("path"),
              f"{label}: watch saw {pr.get('path')}, p2pprobe says the kernel's map type is {kern_map_type}")
    for direction, want in (("to_device", e.to_device), ("to_storage", e.to_storage)):
        if want >= 0:
            got = counts(pr, direction).get("bytes")
            ck.ok(got == want, f"{label} {direction}: {got} bytes by {pr.get('path')}, expected {want}")
    requeues = sum(counts(pr, d).get("requeues") or 0 for d in ("to_device", "to_storage", "other"))
    ck.ok(requeues == e.requeues, f"{label}: {requeues} requeue(s), expected {e.requeues}")
    errors = sum(counts(pr, d).get("errors", 0) for d in ("to_device", "to_storage", "other"))
    ck.ok(errors >= e.errors_min, f"{label}: {errors} failed requests, expected at least {e.errors_min}")
    if e.path == "refused":
        refused = sum(counts(pr, d).get("requests", 0) for d in ("to_device", "to_storage", "other"))
        ck.ok(refused >= max(1, e.refused_min), f"{label}: {refused} refused requests")
        if e.errno:
            got = (pr.get("refusal") or {}).get("errno")
            ck.ok(got == e.errno, f"{label}: refused with {got}, expected {e.errno}")


def check_watch_doc(ck, name, doc, e, bdf, kern):
    """One watch JSON document against its expectation. kern: (provider, client) -> the kernel's map type."""
    ck.ok(doc.get("schema") == "p2pcheck.watch", f"{name}: schema {doc.get('schema')}")
    ck.ok(doc.get("result") == e.result, f"{name}: RESULT {doc.get('result')}, expected {e.result}; "
          f"cannot watch: {doc.get('cannot_watch')}; findings: {[f.get('message') for f in doc.get('findings', [])]}")
    pairs = doc.get("pairs") or []
    seen = set()
    for (p, c), pe in e.pairs.items():
        label = f"{name} {p}->{c}"
        pr = next((x for x in pairs if (x.get("provider") or {}).get("bdf") == bdf(p)
                   and (x.get("client") or {}).get("bdf") == bdf(c)), None)
        if ck.ok(pr is not None, f"{label}: no pair {bdf(p)} -> {bdf(c)} in watch's report: "
                                 f"{[(x.get('provider'), x.get('client'), x.get('path')) for x in pairs]}"):
            seen.add(id(pr))
            check_pair(ck, label, pr, pe, kern.get((p, c)))
    if e.only_pairs:
        for x in pairs:
            moved = sum(counts(x, d).get("bytes", 0) for d in ("to_device", "to_storage", "other"))
            ck.ok(id(x) in seen or moved == 0, f"{name}: unexpected P2P bytes on {x.get('provider')} -> "
                                               f"{x.get('client')} ({x.get('path')}): {moved}")
    if e.stack_refused:
        rows = doc.get("stack_refused") or []
        ck.ok(any((r.get("disk") or "").startswith(e.stack_refused) for r in rows),
              f"{name}: no storage-stack refusal on {e.stack_refused}*: {rows}")
    for serial, direction, size, comm in e.host:
        rows = [r for r in doc.get("host") or [] if r.get("client") == bdf(serial) and r.get("direction") == direction]
        got = sum((r.get("counts") or r).get("bytes", 0) for r in rows)
        ck.ok(got == size, f"{name}: host {direction} on {serial}: {got} bytes, expected {size}: {rows}")
        procs = [p.get("comm") for r in rows for p in r.get("processes") or []]
        ck.ok(comm in procs, f"{name}: host I/O on {serial} not attributed to {comm}: {procs}")
    if e.scope:
        got = (doc.get("scope") or {}).get("processes")
        ck.ok(got == e.scope, f"{name}: scope {got}, expected {e.scope}")
    for serial, comm in e.not_counted:
        rows = [r for r in doc.get("host") or [] if r.get("client") == bdf(serial)]
        ck.ok(not rows, f"{name}: host rows on {serial}, which only a process outside the scope read: {rows}")
        nc = (doc.get("scope") or {}).get("not_counted") or {}
        procs = [p.get("comm") for p in nc.get("processes") or []]
        ck.ok(nc.get("requests", 0) >= 1 and comm in procs,
              f"{name}: {comm}'s I/O on {serial} is not said to be left out: not_counted {nc}")
    ids = {f.get("id") for f in doc.get("findings", [])}
    for want in e.findings:
        ck.ok(want in ids, f"{name}: no finding {want}: {sorted(ids)}")
    if e.text:
        texts = [f.get("message", "") for f in doc.get("findings", [])] + [doc.get("cannot_watch") or ""]
        ck.ok(any(e.text in t for t in texts), f"{name}: no {e.text!r} in {texts}")


def kernel_map_types(out):
    """(provider, client) by lab name -> the kernel's map type, from p2pprobe's answers (verdicts.txt:
    "pair cmb0 f1 provider=... map_type=BUS_ADDR ...")."""
    kern = {}
    for line in read(os.path.join(out, "verdicts.txt")).splitlines():
        f = line.split(maxsplit=3)
        if len(f) > 3:
            kern[(f[1], f[2])] = kv(f[3]).get("map_type")
    return kern


def replay_all(ck, p2pcheck, name, rec, capture, e, bdf):
    """`--replay --all`: what the run left out of the command's tree is in the recording, and counted now."""
    r = subprocess.run([p2pcheck, "--dump", capture, "watch", "--replay", rec, "--all", "--json"],
                       capture_output=True, text=True)
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        ck.ok(False, f"{name}: watch --replay --all printed no JSON (exit {r.returncode}): {r.stderr[:300]}")
        return
    ck.ok((doc.get("scope") or {}).get("processes") == "machine", f"{name} --all: scope {doc.get('scope')}")
    for serial, comm in e.not_counted:
        rows = [x for x in doc.get("host") or [] if x.get("client") == bdf(serial)]
        procs = [p.get("comm") for x in rows for p in x.get("processes") or []]
        ck.ok(sum(x.get("requests", 0) for x in rows) >= 1 and comm in procs,
              f"{name} --all: no host I/O by {comm} on {serial}: {rows}")


def replay_recording(ck, p2pcheck, name, rec, capture, doc):
    """The recording judged again on the host against the scenario's capture: the same report."""
    r = subprocess.run([p2pcheck, "--dump", capture, "watch", "--replay", rec, "--json"], capture_output=True, text=True)
    try:
        again = json.loads(r.stdout)
    except ValueError:
        ck.ok(False, f"{name}: watch --replay printed no JSON (exit {r.returncode}): {r.stderr[:300]}")
        return None
    for key in ("result", "pairs", "stack_refused", "unpaired", "scope"):
        ck.ok(again.get(key) == doc.get(key), f"{name}: watch --replay differs in {key}: "
                                              f"{again.get(key)!r} vs {doc.get(key)!r}")
    return again


def check_watch_runs(sc, ck, p2pcheck, out, dev, result, capture, fixture_dir):
    """Every watched run of the scenario; with fixture_dir, keep each recording there (--update-fixtures)."""
    bdf = lambda n: dev.get(n, (None,))[0]  # noqa: E731
    kern = kernel_map_types(out)
    runs = [(v.name, v.watch) for v in sc.verify if v.watch] + [(w.name, w.expect) for w in sc.watch_runs]
    result["watch"] = []
    for run, e in runs:
        name = f"watch {run}"
        rc = read(os.path.join(out, f"watch-{run}.rc")).strip()
        err = read(os.path.join(out, f"watch-{run}.err"))
        doc = load_json(os.path.join(out, f"watch-{run}.json"))
        ck.ok(rc == str(e.rc), f"{name}: exit {rc or '(none)'}, expected {e.rc}; stderr: {err.strip()[-600:]}")
        if not ck.ok(doc is not None, f"{name}: no JSON; stderr: {err.strip()[-600:]}"):
            continue
        check_watch_doc(ck, name, doc, e, bdf, kern)
        result["watch"].append({"run": name, "rc": rc, "result": doc.get("result"),
                                "pairs": [f"{(p.get('provider') or {}).get('bdf')}->{(p.get('client') or {}).get('bdf')} "
                                          f"{p.get('path')}" for p in doc.get("pairs") or []]})
        rec = os.path.join(out, f"watch-{run}.rec")
        if ck.ok(os.path.exists(rec), f"{name}: no recording") and capture:
            replay_recording(ck, p2pcheck, name, rec, capture, doc)
            if e.not_counted:
                replay_all(ck, p2pcheck, name, rec, capture, e, bdf)
            if fixture_dir:
                os.makedirs(fixture_dir, exist_ok=True)
                shutil.copy(rec, os.path.join(fixture_dir, f"watch-{run}.json"))
