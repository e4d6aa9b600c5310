# SPDX-License-Identifier: GPL-2.0
"""The kernel's own allowlist (issue 47): the source p2pcheck names in the guest, the capture's replay,
and the same rows read offline on the host from the kernel's bzImage + System.map and from a .deb."""
import json
import os
import shutil
import subprocess

from lab_io import check_pairs, load_json, read
from lab_topology import ALLOW_Q35, Q35_HOST_BRIDGE


def allowlist(doc):
    return ((doc or {}).get("kernel") or {}).get("allowlist") or {}


def make_deb(k, dest):
    """A hand-made linux-image .deb of a lab kernel: boot/vmlinuz-REL, System.map-REL, config-REL."""
    d = k["dir"]
    rel = read(os.path.join(d, "kernelrelease")).strip()
    st = dest + ".d"
    shutil.rmtree(st, ignore_errors=True)
    os.makedirs(os.path.join(st, "boot"))
    os.makedirs(os.path.join(st, "DEBIAN"))
    for src, name in (("bzImage", "vmlinuz"), ("System.map", "System.map"), ("config", "config")):
        shutil.copy(os.path.join(d, src), os.path.join(st, "boot", f"{name}-{rel}"))
    with open(os.path.join(st, "DEBIAN", "control"), "w") as f:
        f.write(f"Package: linux-image-{rel}\nVersion: {rel}-1\nArchitecture: amd64\n"
                "Maintainer: p2pcheck lab <lab@localhost>\nDescription: lab kernel variant allow29c0\n")
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", st, dest], check=True,
                   stdout=subprocess.DEVNULL)
    shutil.rmtree(st)
    return dest


def offline(p2pcheck, capture, image, gpus, nvmes):
    r = subprocess.run([p2pcheck, "--dump", capture, "--what-if-kernel", image, "check", "--json", "--gpu", gpus,
                        "--nvme", nvmes], capture_output=True, text=True)
    return r.returncode, load_json_text(r.stdout), r.stderr


def load_json_text(text):
    try:
        return json.loads(text)
    except ValueError:
        return None


def check_table(sc, ck, w, ks, p2pcheck, out, dev, chk, result):
    if not sc.allowlist_source:
        return
    al = allowlist(chk)
    # "table for upstream 6.12" names the series; the guest says its release (6.12.118).
    ck.ok((al.get("source") or "").startswith(sc.allowlist_source),
          f"allowlist source in the guest: {al.get('source')!r}, expected {sc.allowlist_source!r} "
          f"(not read: {al.get('not_read_why')})")
    guest_rows = al.get("rows") or []
    added = [r["ids"] for r in al.get("added") or []]
    if sc.kernel == ALLOW_Q35:
        ck.ok(added == [Q35_HOST_BRIDGE], f"rows the running kernel adds to 6.12's table: {added}")
    else:
        ck.ok(al.get("rows") is None and "KALLSYMS_ALL" in (al.get("not_read_why") or ""),
              f"the plain kernel's table is not readable (no KALLSYMS_ALL): {al}")
    result["allowlist"] = {"guest": al.get("source"), "added": added}
    capture = os.path.join(out, "capture.tar.gz")
    gpus = ",".join(dev[p][0] for p in sc.t.providers)
    nvmes = ",".join(dev[c][0] for c in sc.t.clients)
    r = subprocess.run([p2pcheck, "--dump", capture, "check", "--json", "--gpu", gpus, "--nvme", nvmes],
                       capture_output=True, text=True)
    replay = load_json_text(r.stdout)
    want = "capture" if sc.kernel == ALLOW_Q35 else sc.allowlist_source
    ck.ok((allowlist(replay).get("source") or "").startswith(want), f"allowlist source of the replayed capture: "
          f"{allowlist(replay).get('source')!r}, expected {want!r}")
    if not sc.offline_table:
        return
    k = ks[sc.kernel]
    images = {"bzImage + System.map": os.path.join(k["dir"], "bzImage"),
              ".deb": make_deb(k, os.path.join(w.p("run", sc.name), "linux-image-lab.deb"))}
    for what, image in images.items():
        rc, doc, err = offline(p2pcheck, capture, image, gpus, nvmes)
        off = allowlist(doc)
        ck.ok(off.get("source") == "kernel image", f"{what}: allowlist source {off.get('source')!r}: {err[:300]}")
        ck.ok(off.get("rows") == guest_rows, f"{what}: rows {off.get('rows')} != the running kernel's {guest_rows}")
        verdicts = {p.get("verdict") for p in check_pairs(doc or {})}
        ck.ok(verdicts == {"supported"} and rc == 0, f"{what}: offline verdicts {verdicts}, exit {rc}")
        result["allowlist"][what] = off.get("source")
