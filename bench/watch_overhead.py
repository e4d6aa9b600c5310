#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What `p2pcheck watch` costs the I/O it watches: the same workload alone and inside `watch`,
alternately, in one run on one machine; the ratio of the medians is the overhead.

  bench/watch_overhead.py lab  [--kernel 6.12|6.1|7.3] [--rounds N (9)] [--p2pcheck BIN] [--json FILE]
  bench/watch_overhead.py host [--rounds N (9)] [--p2pcheck BIN] [--json FILE]       (root)

lab: boots the QEMU lab (tests/lab, topology vfy, EPYC) and runs there, on an emulated NVMe:
4 KiB and 1 MiB O_DIRECT reads into host memory (every request passes the block tracepoints), and
P2P DMA from an NVMe CMB through p2pprobe (8 MiB each way in 64 KiB requests: the decision hook too).
host: this machine's kernel, 4 KiB and 1 MiB O_DIRECT reads of a loop device over a file in
/dev/shm (RAM: the shortest requests this machine can make, so the worst case per request).
Read-only except the lab's scratch disk. A benchmark reports; it never fails on a slow machine.
"""
import argparse
import dataclasses
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LAB = os.path.join(REPO, "tests", "lab")
MiB = 1 << 20


@dataclasses.dataclass
class Workload:
    name: str
    what: str
    command: str          # guest shell ({x}, {dev:x}) or host argv template
    parse: str            # "bench-io" or "p2p-write" / "p2p-read" (p2pprobe-cli's write_ns / read_ns)


LAB_WORKLOADS = [
    Workload("read-4k", "O_DIRECT reads of r1's first 16 MiB, 4 KiB x 8192, host memory",
             "bench-io {dev:r1} 4096 33554432 16777216", "bench-io"),
    Workload("read-1m", "O_DIRECT reads of r1's first 16 MiB, 1 MiB x 256, host memory",
             "bench-io {dev:r1} 1048576 268435456 16777216", "bench-io"),
    Workload("p2p-kmod", "P2P DMA cmb0 -> r1 and back through p2pprobe, 8 MiB each way in 64 KiB requests",
             "p2pprobe-cli dma {cmb0} {dev:r1} 16777216 8388608 0x5eed chunk=65536", "p2p"),
]


def kv(text):
    return dict(m.groups() for m in re.finditer(r"(\w+)=(\S+)", text))


def throughputs(line, parse):
    """MB/s (10^6 bytes a second) of one run's output: {label: value}; {} when it failed."""
    f = kv(line)
    if parse == "bench-io":
        if "ns" not in f:
            return {}
        return {"": int(f["bytes"]) / int(f["ns"]) * 1e3}
    out = {}
    for way in ("write", "read"):
        if f.get(f"{way}_error") == "0" and int(f.get(f"{way}_ns", "0")) > 0:
            out[f" {way}"] = int(f[f"{way}_bytes"]) / int(f[f"{way}_ns"]) * 1e3
    return out


def summarise(name, what, lines, parse):
    """Rows of the table from one workload's runs: plain and watched medians, their ratio."""
    runs = {"plain": {}, "watch": {}}
    failures = []
    for line in lines:
        mode, _, rest = line.partition(" ")
        if mode == "watch":
            rc = kv(rest).get("rc")
            if rc not in ("0", "4"):
                failures.append(f"watch exited {rc}: {rest[:200]}")
                continue
        got = throughputs(rest, parse)
        if not got:
            failures.append(f"{mode}: {rest[:200]}")
        for label, v in got.items():
            runs[mode].setdefault(label, []).append(v)
    rows = []
    for label in sorted(set(runs["plain"]) | set(runs["watch"])):
        p, w = runs["plain"].get(label, []), runs["watch"].get(label, [])
        mp = statistics.median(p) if p else None
        mw = statistics.median(w) if w else None
        rows.append({"workload": name + label, "what": what, "plain_MBps": mp, "watch_MBps": mw,
                     "ratio": (mw / mp) if mp and mw else None, "runs": [len(p), len(w)],
                     "plain_all": p, "watch_all": w})
    return rows, failures


def print_table(title, rows, notes):
    print(title)
    # The spread (slowest-fastest run) says how much of a ratio is noise: a ratio inside it is none.
    print(f"  {'workload':<16} {'alone MB/s':>11} {'(spread)':>15} {'watched MB/s':>13} {'(spread)':>15} "
          f"{'ratio':>7}  runs  what")
    for r in rows:
        fmt = lambda v: f"{v:.1f}" if v is not None else "-"  # noqa: E731
        spread = lambda a: f"({min(a):.0f}-{max(a):.0f})" if a else "-"  # noqa: E731
        ratio = f"{r['ratio']:.3f}" if r["ratio"] is not None else "-"
        print(f"  {r['workload']:<16} {fmt(r['plain_MBps']):>11} {spread(r['plain_all']):>15} "
              f"{fmt(r['watch_MBps']):>13} {spread(r['watch_all']):>15} {ratio:>7}  "
              f"{r['runs'][0]}+{r['runs'][1]}   {r['what']}")
    for n in notes:
        print(f"  note: {n}")


def watch_counted(doc):
    """Requests the last watched run's `watch --json` counted, by path: proof it watched."""
    if not doc:
        return "no watch JSON"
    n = {}
    for p in doc.get("pairs") or []:
        n[p.get("path")] = n.get(p.get("path"), 0) + sum((p.get(d) or {}).get("requests", 0)
                                                           for d in ("to_device", "to_storage", "other"))
    n["host"] = sum(h.get("requests", 0) for h in doc.get("host") or [])
    return f"watch {doc.get('result')}, counted requests by path {n}"


def run_lab(a):
    sys.path.insert(0, LAB)
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    from lab_boot import boot, unpack_payload  # tests/lab: one boot and the guest's payload
    from lab_prepare import Work, prepare
    from lab_scenarios import Scenario
    script = "\n".join(f"wbench {w.name} {a.rounds} {w.command}" for w in LAB_WORKLOADS)
    sc = Scenario(f"bench-watch-{a.kernel.replace('.', '')}", "vfy", "epyc", kernel=a.kernel,
                      note="watch overhead", fixture=False, guest_script=script)
    w = Work(a.work)
    ks = prepare(w, a.p2pcheck)
    rdir, _, _, secs, rc = boot(sc, w, ks)
    out = unpack_payload(rdir)
    if out is None:
        raise SystemExit(f"watch_overhead: no payload from the guest (qemu exit {rc}); see {rdir}/console.log")
    rows, notes = [], []
    for wl in LAB_WORKLOADS:
        path = os.path.join(out, f"bench-{wl.name}.txt")
        lines = open(path).read().splitlines() if os.path.exists(path) else []
        r, failures = summarise(wl.name, wl.what, lines, wl.parse)
        rows += r
        notes += [f"{wl.name}: {f}" for f in failures[:3]]
        doc = None
        try:
            doc = json.load(open(os.path.join(out, f"bench-{wl.name}-watch.json")))
        except (OSError, ValueError):
            pass
        notes.append(f"{wl.name}: {watch_counted(doc)}")
    kernel = open(os.path.join(out, "dmesg.txt"), errors="replace").read()
    m = re.search(r"Linux version (\S+)", kernel)
    title = (f"watch overhead in the QEMU lab (TCG: the CPU is emulated too), kernel {m.group(1) if m else a.kernel}, "
             f"{a.rounds} rounds, medians; guest ran {secs:.0f} s")
    return title, rows, notes


def run_host(a):
    if os.geteuid() != 0:
        raise SystemExit("watch_overhead: host mode needs root (the probe, and a loop device)")
    tmp = tempfile.mkdtemp(prefix="p2pcheck-bench-")
    img = os.path.join("/dev/shm", os.path.basename(tmp) + ".img")
    loop = None
    try:
        bio = os.path.join(tmp, "bench-io")
        subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", bio, os.path.join(LAB, "bench-io.c")], check=True)
        with open(img, "wb") as f:
            f.truncate(256 * MiB)
        loop = subprocess.run(["losetup", "--find", "--show", img], check=True, capture_output=True,
                              text=True).stdout.strip()
        rows, notes = [], []
        for name, block, total, what in (
                ("read-4k", 4096, 64 * MiB, "O_DIRECT reads of a loop device in RAM, 4 KiB x 16384"),
                ("read-1m", MiB, 256 * MiB, "O_DIRECT reads of a loop device in RAM, 1 MiB x 256")):
            argv = [bio, loop, str(block), str(total)]
            lines, doc = [], None
            for i in range(a.rounds):
                for mode in (("plain", "watch") if i % 2 == 0 else ("watch", "plain")):
                    if mode == "plain":
                        r = subprocess.run(argv, capture_output=True, text=True)
                        lines.append("plain " + (r.stdout + r.stderr).replace("\n", " "))
                        continue
                    with open(os.path.join(tmp, "cmd.out"), "w+") as co:
                        r = subprocess.run([a.p2pcheck, "watch", "--json", "--"] + argv, stdout=subprocess.PIPE,
                                           stderr=co, text=True)
                        co.seek(0)
                        err = co.read()
                    # the command's own line is on stdout before watch's JSON
                    first, _, rest = r.stdout.partition("\n")
                    lines.append(f"watch rc={r.returncode} {first} {err}".replace("\n", " "))
                    try:
                        doc = json.loads(rest)
                    except ValueError:
                        doc = None
            rr, failures = summarise(name, what, lines, "bench-io")
            rows += rr
            notes += [f"{name}: {f}" for f in failures[:3]]
            notes.append(f"{name}: {watch_counted(doc)}")
        title = f"watch overhead on this machine, kernel {os.uname().release}, {a.rounds} rounds, medians"
        return title, rows, notes
    finally:
        if loop:
            subprocess.run(["losetup", "-d", loop])
        if os.path.exists(img):
            os.remove(img)
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("lab", "host"))
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--kernel", default="6.12", choices=("6.12", "6.1", "7.3"))
    ap.add_argument("--p2pcheck", default=os.path.join(REPO, "build", "p2pcheck"))
    ap.add_argument("--work", default=os.path.join(REPO, "build", "lab"))
    ap.add_argument("--json", help="also write the table as JSON here")
    a = ap.parse_args()
    if a.rounds < 1:
        raise SystemExit("watch_overhead: --rounds must be at least 1")
    a.p2pcheck = os.path.abspath(a.p2pcheck)
    title, rows, notes = run_lab(a) if a.mode == "lab" else run_host(a)
    print_table(title, rows, notes)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"title": title, "rows": rows, "notes": notes}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
