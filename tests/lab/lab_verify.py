# SPDX-License-Identifier: GPL-2.0
"""The lab's checks of `p2pcheck verify` runs (tests/lab/guest-init.sh: vrun): exit codes, per-pair
and per-direction outcomes, scratch files, raw-disk patterns, and the capture taken after a run."""
import json
import os
import re
import subprocess

import pattern
from lab_io import kv, load_json, read


def verify_document(out, name):
    """The run's JSON: what it printed (--json), else the results file it left for capture."""
    text = read(os.path.join(out, f"verify-{name}.out"))
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except ValueError:
            return None
    return load_json(os.path.join(out, f"verify-{name}.results.json"))


def check_verify(sc, ck, p2pcheck, out, dev, disks, result):
    """Each `p2pcheck verify` of the scenario: exit code, per-pair and per-direction outcomes, no
    scratch file left, results saved for capture (and shown by a replay), and on raw disks the
    pattern in the named region. Returns serial -> regions it wrote, for check_dma's hash of the rest."""
    regions = {}
    result["verify"] = []
    O = lambda *a: os.path.join(out, *a)  # noqa: E731
    dmesg = read(O("dmesg.txt"))
    bdf = lambda n: dev.get(n, (None,))[0]  # noqa: E731
    for v in sc.verify:
        name = f"verify {v.name}"
        rc = read(O(f"verify-{v.name}.rc")).strip()
        err = read(O(f"verify-{v.name}.err"))
        stdout = read(O(f"verify-{v.name}.out"))
        row = {"run": name, "rc": rc, "expect": f"exit {v.rc}", "pairs": []}
        result["verify"].append(row)
        setup = read(O(f"verify-{v.name}.setup")).strip()
        if setup:
            ck.notes.append(f"{name} setup said: {setup[:300]}")
        ck.ok(rc == str(v.rc), f"{name}: exit {rc or '(none)'}, expected {v.rc}; stderr: {err.strip()[-800:]}")
        for want in v.stderr_has:
            ck.ok(want in err, f"{name}: stderr lacks {want!r}: {err.strip()[-500:]}")
        pos = 0
        for want in v.stdout_has:
            i = stdout.find(want, pos)
            if ck.ok(i >= 0, f"{name}: stdout lacks {want!r} (after byte {pos}):\n{stdout[:1500]}"):
                pos = i + len(want)
        listing = read(O(f"verify-{v.name}.ls"))
        left = [x for x in listing.split() if x.startswith(".p2pcheck-verify-")]
        ck.ok(not left, f"{name}: scratch files left behind: {left}")
        # The listing must have seen the file systems, or "nothing left" would prove nothing.
        for serial in sc.t.fs_disks:
            ck.ok(f"/mnt/{serial}:" in listing and "lost+found" in listing,
                  f"{name}: the guest did not list /mnt/{serial} after the run: {listing[:300]!r}")
        doc = verify_document(out, v.name)
        saved = load_json(O(f"verify-{v.name}.results.json"))
        if v.rc == 3:
            ck.ok(saved is None, f"{name}: a refused command line must not leave results")
        elif ck.ok(doc is not None, f"{name}: no JSON results; stderr: {err.strip()[-500:]}"):
            ck.ok(saved == doc, f"{name}: /run/p2pcheck/verify.json differs from what verify printed")
            check_verify_pairs(ck, name, v, doc, bdf, row)
            if v.raw:
                serial, off, size = v.raw
                pr = next((x for x in doc.get("pairs", []) if x.get("nvme") == bdf(serial)), None)
                if v.raw_data == "pattern" and ck.ok(pr is not None, f"{name}: no pair on {serial}"):
                    with open(disks[serial], "rb") as f:
                        f.seek(off)
                        got = f.read(size)
                    cnt, first = pattern.first_mismatch(got, int(pr["seed"]) + 1, off)
                    ck.ok(cnt == 0, f"{name}: {serial}.img [{off}, +{size}) does not hold the to_storage pattern "
                                    f"(seed {int(pr['seed']) + 1}): {cnt} bytes differ, first at {first}")
        if v.raw:
            serial, off, size = v.raw
            regions.setdefault(serial, []).append((off, size, None, False if v.raw_data == "unchanged" else None))
        if v.kernel_log_has:
            ck.ok(v.kernel_log_has in dmesg, f"{name}: the kernel log lacks {v.kernel_log_has!r}")
            # Which request the fault took (op and size), so that a flake names its cause.
            for line in dmesg.splitlines():
                if "timeout, aborting" in line:
                    ck.notes.append(f"{name}: kernel: {line.strip()}")
        if v.after:
            after = read(O(f"verify-{v.name}.after"))
            for want in v.after_has:
                ck.ok(want in after, f"{name}: after it, {want!r} missing from:\n{after[-800:]}")
        if v.unplug:
            qlog = read(os.path.join(os.path.dirname(out), "qmp.log"))
            ck.ok(re.search(rf"device_del {v.unplug} at .*\{{\"return\": \{{\}}\}}", qlog),
                  f"{name}: QMP device_del {v.unplug} did not succeed: {qlog.strip() or '(never sent)'}")
            gone = kv(read(O(f"verify-{v.name}.unplug")))
            ck.ok(gone.get("gone") == "1", f"{name}: the guest still has the device after the run: {gone}")
            row["pairs"].append(f"unplugged {gone.get('after_s')} s after the transfer began")
        if v.capture_after:
            check_recorded_verify(ck, p2pcheck, name, v, O(f"capture-{v.name}.tar.gz"), bdf)
    return regions


def check_verify_pairs(ck, name, v, doc, bdf, row):
    for (p, c), e in v.pairs.items():
        label = f"{name} {p}->{c}"
        pr = next((x for x in doc.get("pairs", []) if x.get("gpu") == bdf(p) and x.get("nvme") == bdf(c)), None)
        if not ck.ok(pr is not None, f"{label}: pair {bdf(p)} -> {bdf(c)} not in the results"):
            continue
        dirs = pr.get("directions") or []
        outcomes = tuple(d.get("outcome") for d in dirs)
        row["pairs"].append(f"{p}->{c} {pr.get('status')} {pr.get('engine') or '-'} {'/'.join(outcomes) or '-'}")
        why = pr.get("refusal") or pr.get("problem") or "; ".join(d.get("reason", "") for d in dirs)
        ck.ok(pr.get("status") == e.status, f"{label}: status {pr.get('status')}, expected {e.status} ({why})")
        if e.engine:
            ck.ok(pr.get("engine") == e.engine, f"{label}: engine {pr.get('engine')}, expected {e.engine}")
        if e.text:
            texts = [pr.get("refusal") or "", pr.get("problem") or ""] + [d.get("reason") or "" for d in dirs]
            ck.ok(any(e.text in t for t in texts), f"{label}: no {e.text!r} in {texts}")
        if e.status != "ran":
            ck.ok(not dirs, f"{label}: {e.status}, yet directions ran: {outcomes}")
            continue
        ck.ok(outcomes == e.outcomes, f"{label}: outcomes {outcomes}, expected {e.outcomes}: {why}")
        for d in dirs:
            o = d.get("outcome")
            if o == "passed":
                ck.ok(d.get("bytes") == pr.get("size_bytes"), f"{label} {d.get('direction')}: moved {d.get('bytes')} "
                      f"of {pr.get('size_bytes')} bytes")
            if o == "refused" and e.refused_by:
                ck.ok(d.get("refused_by") == e.refused_by,
                      f"{label} {d.get('direction')}: refused by {d.get('refused_by')}, expected {e.refused_by}")
            if o != "passed" and e.errno:
                ck.ok(d.get("errno") == e.errno, f"{label} {d.get('direction')}: errno {d.get('errno')}, expected {e.errno}")
            if o == "timeout" and v.max_direction_s:
                ck.ok((d.get("seconds") or 1e9) <= v.max_direction_s,
                      f"{label}: the timeout was reported after {d.get('seconds')} s, limit {v.max_direction_s} s")
        target = pr.get("target") or {}
        if target.get("kind") == "file":
            ck.ok(target.get("removed") is True, f"{label}: scratch file {target.get('file')} not removed")


def check_recorded_verify(ck, p2pcheck, name, v, capture, bdf):
    """The capture taken after the run, replayed: check shows what verify saw, and the kernel's recorded answers."""
    ran = [(p, c) for (p, c), e in v.pairs.items() if e.status == "ran"]
    gpus = ",".join(sorted({bdf(p) for p, _ in ran}))
    nvmes = ",".join(sorted({bdf(c) for _, c in ran}))
    r = subprocess.run([p2pcheck, "--dump", capture, "check", "--json", "--gpu", gpus, "--nvme", nvmes],
                       capture_output=True, text=True)
    rep = json.loads(r.stdout) if r.stdout.strip().startswith("{") else None
    if not ck.ok(rep is not None, f"{name}: replay of the capture taken after it failed (exit {r.returncode}): "
                 f"{r.stderr[:300]}"):
        return
    found = {f["id"]: f for f in rep.get("findings", [])}
    rec = found.get("verify.recorded")
    want = "PASS" if v.rc == 0 else "FAIL"
    if ck.ok(rec is not None, f"{name}: the replayed capture does not show the verify run"):
        ck.ok(rec.get("level") == want, f"{name}: replay shows verify as {rec.get('level')}, expected {want}: "
                                        f"{rec.get('message')}")
        lines = [e.get("value", "") for e in rec.get("evidence", [])]
        for p, c in ran:
            ck.ok(any(x.startswith(f"{bdf(p)} -> {bdf(c)}") for x in lines), f"{name}: replay lacks {p}->{c}: {lines}")
    km = found.get("kmod.kernel_verdict")
    ck.ok(km is not None and km.get("level") == "PASS",
          f"{name}: the replay should compare the recorded kernel answers (PASS): {km}")
