#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The QEMU lab: boots real P2PDMA kernels on emulated PCIe topologies and
checks that p2pcheck's verdict for every pair equals the running kernel's.

    lab.py prepare [--p2pcheck BIN]            deps, kernels, modules, initramfs parts
    lab.py run [--p2pcheck BIN] SCENARIO...    boot and check (names or globs; "all")
    lab.py list                                scenarios with their expected verdicts
    lab.py run --update-fixtures SCENARIO...   also (re)write fixtures/lab/<scenario>/
                                               (<scenario>.tar.zst, args, expected/)

Options: --work DIR (default: $P2PCHECK_LAB_WORK or <repo>/build/lab),
--keep (keep disk images), --verbose. Cache of kernels: $P2PCHECK_LAB_CACHE or
~/.cache/p2pcheck-lab. See tests/lab/README.md.

Per scenario the guest (guest-init.sh) records the kernel's verdicts through
kmod/p2pprobe, `p2pcheck check/topo --json`, DMA tests and a `p2pcheck
capture`; this script then asserts, on the host:
  - the expected number of pairs was checked (never zero);
  - p2pcheck's distance / verdict / map type == the kernel's, for every pair,
    and both == the scenario's expected table;
  - DMA passes exactly where the kernel allows, fails with EREMOTEIO (-121; EINVAL from 6.17)
    where it does not; the pattern is on the client's disk image where it
    passed, the region is untouched where it failed, and nothing else on any
    disk image changed; an ivshmem provider's memory (a file on the host)
    holds what the NVMe wrote into it;
  - the capture replayed on the host gives the same verdicts as the live run
    and as the stored fixture (fixtures/lab/<scenario>/<scenario>.tar.zst).
"""
import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
import lab_prepare  # noqa: E402
from lab_check import Checker, check_scenario  # noqa: E402
from lab_prepare import Work, prepare  # noqa: E402
from lab_scenarios import SCENARIOS  # noqa: E402
from lab_topology import CPUS, QEMU_TIMEOUT, REPO  # noqa: E402


def print_result(sc, ck, result):
    print(f"== {sc.name}: {sc.t.describe}; {CPUS[sc.cpu][2]}; kernel {sc.kernel}"
          + (f" (+ {sc.t.append})" if sc.t.append else "") + f"; boot+tests {result.get('boot_s')} s "
          f"[{result.get('guest_timing', '').replace(chr(10), ' ')}]")
    for r in result["pairs"]:
        print(f"   pair {r['pair']:<11} {r['bdfs']:<29} ours: {str(r.get('ours_distance')):>2} "
              f"{str(r.get('ours_map')):<16} {str(r.get('ours_verdict')):<13} kernel: {str(r.get('kernel_distance')):>2} "
              f"{str(r.get('kernel_map')):<16} expected {r['expected']:<19} {'AGREE' if r.get('agree') else 'DIFFER'}")
    for r in result["dma"]:
        got = f"ioctl errno {r['ioctl_errno']}" if r.get("ioctl_errno") else \
            f"{r.get('result')} write={r.get('write_error')} read={r.get('read_error')}"
        print(f"   dma  {r['run']:<34} {got:<28} expected: {r.get('expect', '?')}")
    for r in result.get("abuse", []):
        print(f"   {r}")
    for r in result.get("verify", []):
        print(f"   {r['run']:<39} exit {r['rc'] or '-'} (expected {r['expect'][5:]}) {'; '.join(r['pairs'])}")
    for n in ck.notes:
        print("   note: " + n.replace("\n", "\n         "))
    for f in ck.fails:
        print("   FAIL: " + f.replace("\n", "\n         "))
    print(f"== {sc.name}: {'PASS' if not ck.fails else 'FAIL'}", flush=True)


def select(names):
    out = []
    for n in names:
        if n == "all":
            out += list(SCENARIOS)
            continue
        m = [s for s in SCENARIOS if fnmatch.fnmatch(s, n)]
        if not m:
            raise SystemExit(f"lab: no scenario matches {n!r}; `lab.py list`")
        out += m
    return list(dict.fromkeys(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=("prepare", "run", "list"))
    ap.add_argument("scenarios", nargs="*")
    ap.add_argument("--p2pcheck", default=os.path.join(REPO, "build", "p2pcheck"))
    ap.add_argument("--work", default=os.environ.get("P2PCHECK_LAB_WORK", os.path.join(REPO, "build", "lab")))
    ap.add_argument("--update-fixtures", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep disk images and guest files of passing runs")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_intermixed_args()
    lab_prepare.VERBOSE = a.verbose
    if a.cmd == "list":
        for s in SCENARIOS.values():
            exp = ", ".join(f"{p}->{c} {' '.join(map(str, s.expected((p, c))))}" for p, c in s.t.pairs)
            print(f"{s.name:<12} {s.t.describe}; {CPUS[s.cpu][2]}; kernel {s.kernel}"
                  + (f"; {s.t.append}" if s.t.append else "") + (f" ({s.note})" if s.note else "")
                  + f"\n{'':<12} kernel must say: {exp}")
        return 0
    p2pcheck = os.path.abspath(a.p2pcheck)
    if not os.access(p2pcheck, os.X_OK):
        raise SystemExit(f"lab: no p2pcheck binary at {p2pcheck} (cmake --build build)")
    w = Work(a.work)
    if a.cmd == "prepare":
        prepare(w, p2pcheck, build_kernels=True)
        return 0
    names = select(a.scenarios or ["all"])
    ks = prepare(w, p2pcheck, build_kernels=False)
    failed = []
    t0 = time.time()
    for n in names:
        sc = SCENARIOS[n]
        try:
            ck, result = check_scenario(sc, w, ks, p2pcheck, a.update_fixtures)
        except subprocess.TimeoutExpired:
            ck, result = Checker(sc), {"pairs": [], "dma": []}
            ck.fails.append(f"QEMU did not finish within {QEMU_TIMEOUT} s")
        print_result(sc, ck, result)
        with open(w.p("run", n, "result.json"), "w") as f:
            json.dump({"result": result, "fails": ck.fails, "notes": ck.notes}, f, indent=1)
        if ck.fails:
            failed.append(n)
        elif not a.keep:
            for x in os.listdir(w.p("run", n)):
                if x.endswith((".img", ".bin")) or x in ("initrd", "capture-root", "capture-check"):
                    p = w.p("run", n, x)
                    shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    print(f"lab: {len(names) - len(failed)} of {len(names)} scenario(s) passed in {time.time() - t0:.0f} s"
          + (f"; failed: {' '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
