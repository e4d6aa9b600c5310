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
import base64
import dataclasses
import fcntl
import fnmatch
import hashlib
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
import pattern  # noqa: E402
from lab_io import kv, load_json, read  # noqa: E402
from lab_verify import check_verify  # noqa: E402
from lab_watch import PathExpect, WatchExpect, WatchRun, check_watch_runs  # noqa: E402

CACHE = os.environ.get("P2PCHECK_LAB_CACHE", os.path.expanduser("~/.cache/p2pcheck-lab"))
FIXTURES = os.path.join(REPO, "fixtures", "lab")
MiB = 1 << 20
DISK_SIZE = 16 * MiB
DISK_RANDOM = 6 * MiB            # the first 6 MiB of every disk hold pseudo-random bytes
IVSH_SIZE = 16 * MiB
DMA_LEN = 512 * 1024
EREMOTEIO = 121
EINVAL = 22
EOPNOTSUPP = 95
QEMU_TIMEOUT = 420
# The lab kernels build-kernel.sh makes (7.3: the 6.17+ block-layer P2P mapping watch hooks there).
LAB_SERIES = ("6.12", "6.1", "7.3")
PREPARE_VERSION = 2         # bump when prepare() builds something differently

CPUS = {
    "epyc": ("EPYC", True, "AMD EPYC (Zen, family 0x17)"),
    "g5": ("Opteron_G5,-xsave", False, "AMD Opteron G5 (pre-Zen, family 0x15)"),
    "skx": ("Skylake-Server", False, "Intel Skylake-Server"),
}

# Pair categories: ("bus", d) = BUS_ADDR below a common bridge without ACS
# redirect (allowed on any CPU); ("thb", d) = through the host bridge, allowed
# only when the CPU is AMD Zen (q35's host bridge 8086:29c0 is not allowlisted).


@dataclasses.dataclass
class Topology:
    name: str
    describe: str
    qemu: list            # device arguments; {img:SERIAL} and {ivsh} are filled in
    nvme: list            # (serial, has_cmb)
    providers: list       # names: NVMe serial or "ivsh"
    clients: list         # NVMe serials
    pairs: dict           # (provider, client) -> ("bus"|"thb", distance)
    kdma: list            # (provider, client, offset, bio?)
    udma: list            # (provider, client, offset)
    append: str = ""
    acs_redirect: tuple = ()  # functions whose ACS redirect must be on (p2pcheck topo); all others off
    fs_disks: dict = dataclasses.field(default_factory=dict)  # serial -> size: ext4, mounted at /mnt/<serial>
    raw_disks: dict = dataclasses.field(default_factory=dict)  # serial -> size: pseudo-random throughout
    drive_opts: dict = dataclasses.field(default_factory=dict)  # serial -> extra -drive options (throttling)


def _rp(i, addr, bus="pcie.0"):
    return "-device", f"pcie-root-port,id=rp{i},bus={bus},addr={addr},chassis={i},slot={i}"


def _nvme(serial, bus, addr=None, cmb=False, mf=False, qid=None):
    a = f"nvme,serial={serial},drive=d{serial},bus={bus}" + (f",id={qid}" if qid else "")
    if addr:
        a += f",addr={addr}"
    if mf:
        a += ",multifunction=on"
    if cmb:
        a += ",cmb_size_mb=16"
    return "-device", a


def _ivsh(bus, addr=None):
    return "-device", f"ivshmem-plain,memdev=ivshmem,bus={bus}" + (f",addr={addr}" if addr else "")


def _switch(rp_bus, n):
    args = ["-device", f"x3130-upstream,id=up1,bus={rp_bus}"]
    for i in range(1, n + 1):
        args += ["-device", f"xio3130-downstream,id=dn{i},bus=up1,chassis={10 + i},slot={i}"]
    return args


# Every DMA region is DMA_LEN bytes at its own offset of the client's disk.
OFF_KVFS, OFF_KBIO, OFF_UDMA, OFF_IVSH, OFF_IVSH2 = 0, 1 * MiB, 2 * MiB, 3 * MiB, 4 * MiB

TOPOLOGIES = {
    "rp": Topology(
        "rp", "two NVMe (cmb0 with a 16 MiB CMB; n1) and an ivshmem on three root ports of pcie.0",
        [*_rp(1, "0x10"), *_rp(2, "0x11"), *_rp(3, "0x12"),
         *_nvme("cmb0", "rp1", cmb=True), *_nvme("n1", "rp2"), *_ivsh("rp3")],
        [("cmb0", True), ("n1", False)], ["cmb0", "ivsh"], ["n1"],
        {("cmb0", "n1"): ("thb", 4), ("ivsh", "n1"): ("thb", 4)},
        [("cmb0", "n1", OFF_KVFS, False), ("cmb0", "n1", OFF_KBIO, True), ("ivsh", "n1", OFF_IVSH, False)],
        [("cmb0", "n1", OFF_UDMA)]),
    "sw": Topology(
        "sw", "emulated switch (x3130-upstream + 3 xio3130-downstream) under one root port: cmb0, n1, ivshmem",
        [*_rp(1, "0x10"), *_switch("rp1", 3),
         *_nvme("cmb0", "dn1", cmb=True), *_nvme("n1", "dn2"), *_ivsh("dn3")],
        [("cmb0", True), ("n1", False)], ["cmb0", "ivsh"], ["n1"],
        {("cmb0", "n1"): ("bus", 4), ("ivsh", "n1"): ("bus", 4)},
        [("cmb0", "n1", OFF_KVFS, False), ("cmb0", "n1", OFF_KBIO, True), ("ivsh", "n1", OFF_IVSH, False)],
        [("cmb0", "n1", OFF_UDMA)]),
    "pxb": Topology(
        "pxb", "pxb-pcie second host bridge (bus 0x80) with two root ports (cmb0, ivshmem); n1 on a root port of pcie.0",
        ["-device", "pxb-pcie,id=pxb1,bus_nr=0x80,bus=pcie.0,addr=0x8",
         *_rp(1, "0x10"), *_rp(2, "0x0", bus="pxb1"), *_rp(3, "0x1", bus="pxb1"),
         *_nvme("cmb0", "rp2", cmb=True), *_nvme("n1", "rp1"), *_ivsh("rp3")],
        [("cmb0", True), ("n1", False)], ["cmb0", "ivsh"], ["n1"],
        {("cmb0", "n1"): ("thb", 4), ("ivsh", "n1"): ("thb", 4)},
        [("cmb0", "n1", OFF_KVFS, False), ("cmb0", "n1", OFF_KBIO, True), ("ivsh", "n1", OFF_IVSH, False)],
        [("cmb0", "n1", OFF_UDMA)]),
    "rc": Topology(
        "rc", "integrated endpoints on pcie.0 (no root port): cmb0 00:03.0, n1 00:04.0, ivshmem 00:05.0",
        [*_nvme("cmb0", "pcie.0", addr="0x3", cmb=True), *_nvme("n1", "pcie.0", addr="0x4"),
         *_ivsh("pcie.0", addr="0x5")],
        [("cmb0", True), ("n1", False)], ["cmb0", "ivsh"], ["n1"],
        {("cmb0", "n1"): ("thb", 2), ("ivsh", "n1"): ("thb", 2)},
        [("cmb0", "n1", OFF_KVFS, False), ("cmb0", "n1", OFF_KBIO, True), ("ivsh", "n1", OFF_IVSH, False)],
        [("cmb0", "n1", OFF_UDMA)]),
    "mf": Topology(
        "mf", "one multifunction slot behind root port 00:10.0: cmb0 .0, n1 .1, ivshmem .2",
        [*_rp(1, "0x10"), *_nvme("cmb0", "rp1", addr="0x0.0", cmb=True, mf=True),
         *_nvme("n1", "rp1", addr="0x0.1"), *_ivsh("rp1", addr="0x0.2")],
        [("cmb0", True), ("n1", False)], ["cmb0", "ivsh"], ["n1"],
        {("cmb0", "n1"): ("bus", 2), ("ivsh", "n1"): ("bus", 2)},
        [("cmb0", "n1", OFF_KVFS, False), ("cmb0", "n1", OFF_KBIO, True), ("ivsh", "n1", OFF_IVSH, False)],
        [("cmb0", "n1", OFF_UDMA)]),
    # config_acs flags: bit 6 .. bit 0, leftmost first; "11xx" = CR and RR on.
    "mfacs": Topology(
        "mfacs", "as mf, with ACS P2P Request+Completion Redirect forced on at the root port (pci=config_acs=11xx@0000:00:10.0)",
        [*_rp(1, "0x10"), *_nvme("cmb0", "rp1", addr="0x0.0", cmb=True, mf=True),
         *_nvme("n1", "rp1", addr="0x0.1"), *_ivsh("rp1", addr="0x0.2")],
        [("cmb0", True), ("n1", False)], ["cmb0", "ivsh"], ["n1"],
        {("cmb0", "n1"): ("thb", 2), ("ivsh", "n1"): ("thb", 2)},
        [("cmb0", "n1", OFF_KVFS, False), ("cmb0", "n1", OFF_KBIO, True), ("ivsh", "n1", OFF_IVSH, False)],
        [("cmb0", "n1", OFF_UDMA)],
        append="pci=config_acs=11xx@0000:00:10.0", acs_redirect=("0000:00:10.0",)),
    # IOMMU: the kernel turns ACS redirect on where a port has ACS (root ports);
    # QEMU's xio3130 switch ports have none.
    "iommu": Topology(
        "iommu", "intel-iommu; root port 00:10.0 with a multifunction slot (cmb0 .0, n1 .1); root port 00:11.0 -> switch with cmb2, n3",
        ["-device", "intel-iommu",
         *_rp(1, "0x10"), *_nvme("cmb0", "rp1", addr="0x0.0", cmb=True, mf=True), *_nvme("n1", "rp1", addr="0x0.1"),
         *_rp(2, "0x11"), *_switch("rp2", 2), *_nvme("cmb2", "dn1", cmb=True), *_nvme("n3", "dn2")],
        [("cmb0", True), ("n1", False), ("cmb2", True), ("n3", False)], ["cmb0", "cmb2"], ["n1", "n3"],
        {("cmb0", "n1"): ("thb", 2), ("cmb0", "n3"): ("thb", 6),
         ("cmb2", "n1"): ("thb", 6), ("cmb2", "n3"): ("bus", 4)},
        [("cmb0", "n1", OFF_KVFS, False), ("cmb0", "n1", OFF_KBIO, True), ("cmb2", "n1", OFF_IVSH, False),
         ("cmb2", "n3", OFF_KVFS, False)],
        [("cmb0", "n1", OFF_UDMA)],
        append="intel_iommu=on", acs_redirect=("0000:00:10.0", "0000:00:11.0")),
    # Both kinds of path in one machine (kmod-smoke's layout): for 6.1 and the stock kernel.
    "swrp": Topology(
        "swrp", "root port 00:10.0 -> switch with cmb0, n1, ivshmem; root port 00:11.0 -> n2",
        [*_rp(1, "0x10"), *_switch("rp1", 3), *_nvme("cmb0", "dn1", cmb=True), *_nvme("n1", "dn2"), *_ivsh("dn3"),
         *_rp(2, "0x11"), *_nvme("n2", "rp2")],
        [("cmb0", True), ("n1", False), ("n2", False)], ["cmb0", "ivsh"], ["n1", "n2"],
        {("cmb0", "n1"): ("bus", 4), ("cmb0", "n2"): ("thb", 6),
         ("ivsh", "n1"): ("bus", 4), ("ivsh", "n2"): ("thb", 6)},
        [("cmb0", "n1", OFF_KVFS, False), ("cmb0", "n1", OFF_KBIO, True), ("cmb0", "n2", OFF_KVFS, False),
         ("ivsh", "n1", OFF_IVSH, False), ("ivsh", "n2", OFF_IVSH2, False)],
        [("cmb0", "n1", OFF_UDMA), ("cmb0", "n2", OFF_UDMA)]),
}

# `p2pcheck verify` (issue 7): scratch files on ext4 (f1 under the switch, with an ext4 image inside
# for a loop device; f2 on its own root port) and a raw namespace (r1) for --raw.
TOPOLOGIES["vfy"] = Topology(
    "vfy", "root port 00:10.0 -> switch: cmb0, f1 (ext4), r1 (raw), ivshmem; root port 00:11.0 -> f2 (ext4); "
           "nvme_core.io_timeout=5",
    [*_rp(1, "0x10"), *_switch("rp1", 4), *_nvme("cmb0", "dn1", cmb=True), *_nvme("f1", "dn2"), *_nvme("r1", "dn3"),
     *_ivsh("dn4"), *_rp(2, "0x11"), *_nvme("f2", "rp2")],
    [("cmb0", True), ("f1", False), ("r1", False), ("f2", False)], ["cmb0", "ivsh"], ["f1", "r1", "f2"],
    {("cmb0", "f1"): ("bus", 4), ("cmb0", "r1"): ("bus", 4), ("cmb0", "f2"): ("thb", 6),
     ("ivsh", "f1"): ("bus", 4), ("ivsh", "r1"): ("bus", 4), ("ivsh", "f2"): ("thb", 6)},
    [], [], append="nvme_core.io_timeout=5",
    fs_disks={"f1": 48 * MiB, "f2": 32 * MiB}, raw_disks={"r1": 24 * MiB})

# The module abuse scenario (issue 15): cmb0 and the ivshmem as providers; n1 for the malformed
# ioctls and the concurrent callers, n2 and a file on f1 for the killed callers (their dropped
# requests time out after nvme_core.io_timeout=3 s). kmemleak is built into the lab kernels, off
# unless the command line says kmemleak=on.
TOPOLOGIES["kabuse"] = Topology(
    "kabuse", "root port 00:10.0 -> switch: cmb0, n1, ivshmem; root port 00:11.0 -> n2; root port 00:12.0 -> f1 "
              "(ext4); kmemleak=on nvme_core.io_timeout=3",
    [*_rp(1, "0x10"), *_switch("rp1", 3), *_nvme("cmb0", "dn1", cmb=True), *_nvme("n1", "dn2"), *_ivsh("dn3"),
     *_rp(2, "0x11"), *_nvme("n2", "rp2"), *_rp(3, "0x12"), *_nvme("f1", "rp3")],
    [("cmb0", True), ("n1", False), ("n2", False), ("f1", False)], ["cmb0", "ivsh"], ["n1", "n2", "f1"],
    {}, [], [], append="kmemleak=on nvme_core.io_timeout=3", fs_disks={"f1": 32 * MiB})

# `p2pcheck verify` under faults (issue 15): f2 filled up, f1's next request dropped, and r1 (on its own
# root port, id devr1, throttled to 1 MiB/s so that a transfer lasts seconds) removed with QMP
# device_del while verify writes to it (the guest's ACPI hotplug driver ejects it).
TOPOLOGIES["vfault"] = Topology(
    "vfault", "root port 00:10.0 -> switch: cmb0, f1 (ext4), ivshmem; root port 00:11.0 -> f2 (ext4); root port "
              "00:12.0 -> r1 (raw, 1 MiB/s, hot-unpluggable); nvme_core.io_timeout=5",
    [*_rp(1, "0x10"), *_switch("rp1", 3), *_nvme("cmb0", "dn1", cmb=True), *_nvme("f1", "dn2"), *_ivsh("dn3"),
     *_rp(2, "0x11"), *_nvme("f2", "rp2"), *_rp(3, "0x12"), *_nvme("r1", "rp3", qid="devr1")],
    [("cmb0", True), ("f1", False), ("f2", False), ("r1", False)], ["cmb0", "ivsh"], ["f1", "f2", "r1"],
    {("cmb0", "f1"): ("bus", 4), ("cmb0", "f2"): ("thb", 6), ("cmb0", "r1"): ("thb", 6),
     ("ivsh", "f1"): ("bus", 4), ("ivsh", "f2"): ("thb", 6), ("ivsh", "r1"): ("thb", 6)},
    [], [], append="nvme_core.io_timeout=5",
    fs_disks={"f1": 48 * MiB, "f2": 32 * MiB}, raw_disks={"r1": 24 * MiB},
    drive_opts={"r1": "throttling.bps-total=1048576"})

# The fix p2pcheck suggests for the ACS-redirected pair, applied: BUS_ADDR again under the IOMMU.
TOPOLOGIES["iommufix"] = dataclasses.replace(
    TOPOLOGIES["iommu"], name="iommufix",
    describe="as iommu, with pci=disable_acs_redir=0000:00:10.0 (the fix p2pcheck suggests for cmb0->n1)",
    pairs={**TOPOLOGIES["iommu"].pairs, ("cmb0", "n1"): ("bus", 2)},
    append="intel_iommu=on pci=disable_acs_redir=0000:00:10.0", acs_redirect=("0000:00:11.0",))

VIOMMU_BUS_ADDR = ("QEMU 7.2 sends a BUS_ADDR DMA to the vIOMMU, which has no mapping for the peer's bus "
                   "address (DMAR fault; wrong data and no I/O error)")


@dataclasses.dataclass
class PairExpect:
    """What `p2pcheck verify --json` must report for one pair."""
    status: str = "ran"                      # ran | refused | not_started | skipped
    outcomes: tuple = ("passed", "passed")   # per direction, in order (status ran)
    engine: str = ""
    refused_by: str = ""                     # every refused direction: "kernel" | "storage stack"
    errno: str = ""                          # every direction that is not passed
    text: str = ""                           # in the refusal, the problem, or every direction's reason


@dataclasses.dataclass
class VerifyRun:
    """One `p2pcheck verify` in the guest (tests/lab/guest-init.sh: vrun) and what the host must find.
    In `args`, {x} is the PCI address of device x and {dev:x} its /dev node."""
    name: str
    args: str
    rc: int
    pairs: dict = dataclasses.field(default_factory=dict)   # (provider, client) -> PairExpect
    setup: str = ""              # shell, run in the guest just before
    stderr_has: tuple = ()
    stdout_has: tuple = ()       # in this order (text mode: the raw-mode warning comes first)
    raw: tuple = ()              # (serial, offset, size): the only bytes this run may change on that disk
    raw_data: str = ""           # "pattern": the to_storage pattern is there; "unchanged"; "" = not asserted
    max_direction_s: float = 0   # a timed-out direction must be reported within this many seconds
    kernel_log_has: str = ""     # in the guest's dmesg afterwards
    capture_after: bool = False  # `p2pcheck capture` after it: the replay must show this run (verify.recorded)
    unplug: str = ""             # QEMU device id: device_del'd (QMP) once the transfer has started
    after: str = ""              # shell, run in the guest right after it
    after_has: tuple = ()        # in the output of `after`
    watch: object = None         # WatchExpect: run it inside `p2pcheck watch` (lab_watch.py)


@dataclasses.dataclass
class Scenario:
    name: str
    topo: str
    cpu: str
    kernel: str = "6.12"      # 6.12 | 6.1 | 7.3 | stock
    note: str = ""
    # (provider, client) pairs whose DMA data is not asserted, with the reason
    data_artefact: dict = dataclasses.field(default_factory=dict)
    # (provider, client) -> the acs_fix p2pcheck must suggest
    acs_fix: dict = dataclasses.field(default_factory=dict)
    verify: list = dataclasses.field(default_factory=list)   # VerifyRun, in order
    mode: str = ""            # "kmod-abuse": tests/lab/kmod-abuse.sh instead of verdicts, p2pcheck and DMA
    fixture: bool = True      # compare with a stored fixture (fixtures/lab/<name>)
    watch_runs: list = dataclasses.field(default_factory=list)  # WatchRun: commands run inside `p2pcheck watch`
    guest_script: str = ""    # shell run after the verify runs ({x}, {dev:x} as in VerifyRun.args): benchmarks

    @property
    def t(self):
        return TOPOLOGIES[self.topo]

    @property
    def refusal(self):
        """(errno, name) of an I/O the kernel's P2P map refuses: from 6.17 blk_dma_map_iter_start() sets
        BLK_STS_INVAL (EINVAL); before, nvme turns the mapping's -EREMOTEIO into BLK_STS_TARGET."""
        return (EINVAL, "EINVAL") if self.kernel == "7.3" else (EREMOTEIO, "EREMOTEIO")

    @property
    def p2pmem_allocate(self):
        """p2pmem/allocate (user-space mapping of p2pmem) exists from 6.2; the stock kernel has no P2PDMA."""
        return self.kernel in ("6.12", "7.3")

    def expected(self, pair):
        """(distance, map_type) the kernel must give."""
        if self.kernel == "stock":
            return -1, "UNKNOWN"
        kind, d = self.t.pairs[pair]
        if kind == "bus":
            return d, "BUS_ADDR"
        return (d, "THRU_HOST_BRIDGE") if CPUS[self.cpu][1] else (-1, "NOT_SUPPORTED")


PASSED2 = ("passed", "passed")
BUS_8M = PathExpect("bus_addr", to_device=8 * MiB, to_storage=8 * MiB)
REFUSED2 = ("refused", "refused")
F1 = "--gpu {cmb0} --nvme {f1} --target /mnt/f1"
F2 = "--gpu {cmb0} --nvme {f2} --target /mnt/f2"
RAW_WARNING = "warning: raw mode: overwrites bytes "


def _verify_epyc():
    """Zen: every pair of the vfy topology is allowed (switch: BUS_ADDR; across root ports: through the host bridge)."""
    return [
        VerifyRun("sw-kmod", F1 + " --engine kmod --size 8M --json", 0, {("cmb0", "f1"): PairExpect(engine="kmod")},
                  watch=WatchExpect(0, "P2P SEEN", {("cmb0", "f1"): BUS_8M})),
        VerifyRun("sw-p2pmem", F1 + " --engine p2pmem --size 8M --json", 0,
                  {("cmb0", "f1"): PairExpect(engine="p2pmem")},
                  watch=WatchExpect(0, "P2P SEEN", {("cmb0", "f1"): BUS_8M})),
        VerifyRun("ivsh-auto", "--gpu {ivsh} --nvme {f1} --target /mnt/f1 --size 8M --json", 0,
                  {("ivsh", "f1"): PairExpect(engine="p2pmem")},
                  watch=WatchExpect(0, "P2P SEEN", {("ivsh", "f1"): BUS_8M})),
        VerifyRun("rp-auto", F2 + " --size 8M --json", 0, {("cmb0", "f2"): PairExpect(engine="p2pmem")},
                  watch=WatchExpect(0, "P2P SEEN", {("cmb0", "f2"): PathExpect("thru_host_bridge", 8 * MiB, 8 * MiB)})),
        # Every eligible pair at once: no --nvme; r1 has no target (skipped), nor has cmb0 as a client of ivsh.
        VerifyRun("all", "--gpu {cmb0},{ivsh} --target /mnt/f1 --target /mnt/f2 --size 4M --json", 0,
                  {("cmb0", "f1"): PairExpect(), ("cmb0", "f2"): PairExpect(), ("ivsh", "f1"): PairExpect(),
                   ("ivsh", "f2"): PairExpect(), ("cmb0", "r1"): PairExpect(status="skipped"),
                   ("ivsh", "r1"): PairExpect(status="skipped")},
                  capture_after=True),
        VerifyRun("raw", "--gpu {cmb0} --nvme {r1} --raw {dev:r1} --offset 8M --size 4M --allow-destructive --engine kmod",
                  0, {("cmb0", "r1"): PairExpect(engine="kmod")},
                  stdout_has=(RAW_WARNING + "8388608 to 12582912 of /dev/nvme", "io_timeout", "RESULT: PASS"),
                  raw=("r1", 8 * MiB, 4 * MiB), raw_data="pattern"),
        VerifyRun("raw-mounted", "--gpu {cmb0} --nvme {f1} --raw {dev:f1} --offset 8M --size 1M --allow-destructive",
                  3, stderr_has=("refusing to write to a device in use", "is mounted at /mnt/f1")),
        # ext4 on a loop device on f1: the loop queue does not take P2P pages, whatever the PCI path says.
        VerifyRun("loop", "--gpu {cmb0} --nvme {f1} --target /mnt/loop --size 1M --engine p2pmem --json", 1,
                  {("cmb0", "f1"): PairExpect(outcomes=REFUSED2, engine="p2pmem", refused_by="storage stack",
                                              errno="EREMOTEIO", text="loop0")},
                  setup="losetup /dev/loop0 /mnt/f1/inner.img && mount -t ext4 /dev/loop0 /mnt/loop",
                  watch=WatchExpect(1, "FAIL", stack_refused="loop")),
        # Last: r1's next completion is dropped (CONFIG_FAIL_IO_TIMEOUT) like a P2P read the root complex
        # drops; the tool stops waiting at --timeout while nvme_core (io_timeout=5) aborts and resets.
        VerifyRun("timeout", "--gpu {cmb0} --nvme {r1} --raw {dev:r1} --offset 16M --size 1M --allow-destructive "
                             "--engine p2pmem --direction to-storage --timeout 2 --json", 1,
                  {("cmb0", "r1"): PairExpect(outcomes=("timeout",), engine="p2pmem", text="no completion within 2 s")},
                  setup="mount -t debugfs none /sys/kernel/debug; "
                        "echo 1 > /sys/block/$(basename $(dev_of r1))/io-timeout-fail && "
                        "echo 100 > /sys/kernel/debug/fail_io_timeout/probability && "
                        "echo 1 > /sys/kernel/debug/fail_io_timeout/times",
                  raw=("r1", 16 * MiB, 1 * MiB), max_direction_s=4, kernel_log_has="timeout",
                  # The dropped request is not lost to the kernel: nvme aborts it after io_timeout and
                  # kblockd issues it again, which completes (verify had stopped waiting). watch counts
                  # the request once, by bus address, with its 1 MiB, and its requeue (watch.requeued).
                  watch=WatchExpect(0, "P2P SEEN", {("cmb0", "r1"): PathExpect("bus_addr", 0, MiB, requeues=1)},
                                    findings=("watch.requeued",))),
    ]


def _verify_intel():
    """Intel with q35's unlisted host bridge: the switch pair passes, the root-port pair is refused."""
    refused = PairExpect(outcomes=REFUSED2, refused_by="kernel", errno="EREMOTEIO")
    return [
        VerifyRun("rp-refused", F2 + " --size 1M --json", 1,
                  {("cmb0", "f2"): PairExpect(status="refused", text="the kernel will refuse this pair")}),
        VerifyRun("rp-try-kmod", F2 + " --size 1M --try-anyway --engine kmod --json", 1,
                  {("cmb0", "f2"): dataclasses.replace(refused, engine="kmod")},
                  watch=WatchExpect(1, "FAIL", {("cmb0", "f2"): PathExpect("refused", errno="EREMOTEIO")})),
        VerifyRun("rp-try-p2pmem", F2 + " --size 1M --try-anyway --engine p2pmem --json", 1,
                  {("cmb0", "f2"): dataclasses.replace(refused, engine="p2pmem")}, capture_after=True),
        VerifyRun("sw-auto", F1 + " --size 8M --json", 0, {("cmb0", "f1"): PairExpect(engine="p2pmem")}),
    ]


def _verify_k61():
    """6.1: no p2pmem/allocate, so auto picks the module."""
    return [
        VerifyRun("sw-auto", F1 + " --size 8M --json", 0, {("cmb0", "f1"): PairExpect(engine="kmod")},
                  watch=WatchExpect(0, "P2P SEEN", {("cmb0", "f1"): BUS_8M})),
        VerifyRun("p2pmem", F1 + " --size 1M --engine p2pmem --json", 1,
                  {("cmb0", "f1"): PairExpect(status="refused", text="needs kernel 6.2 or newer")}),
        VerifyRun("rp-auto", "--gpu {ivsh} --nvme {f2} --target /mnt/f2 --size 4M --json", 0,
                  {("ivsh", "f2"): PairExpect(engine="kmod")}, capture_after=True),
    ]


def _verify_k73_epyc():
    """7.3 (watch's 6.17+ hook, blk_rq_dma_map_iter_start): by bus address in the switch, through the host
    bridge across root ports, and the storage stack's refusal on loop, each as the kernel decided it."""
    return [
        VerifyRun("sw-kmod", F1 + " --engine kmod --size 8M --json", 0, {("cmb0", "f1"): PairExpect(engine="kmod")},
                  watch=WatchExpect(0, "P2P SEEN", {("cmb0", "f1"): BUS_8M})),
        VerifyRun("ivsh-auto", "--gpu {ivsh} --nvme {f1} --target /mnt/f1 --size 8M --json", 0,
                  {("ivsh", "f1"): PairExpect(engine="p2pmem")},
                  watch=WatchExpect(0, "P2P SEEN", {("ivsh", "f1"): BUS_8M})),
        VerifyRun("rp-auto", F2 + " --size 8M --json", 0, {("cmb0", "f2"): PairExpect(engine="p2pmem")},
                  watch=WatchExpect(0, "P2P SEEN", {("cmb0", "f2"): PathExpect("thru_host_bridge", 8 * MiB, 8 * MiB)}),
                  capture_after=True),
        VerifyRun("loop", "--gpu {cmb0} --nvme {f1} --target /mnt/loop --size 1M --engine p2pmem --json", 1,
                  {("cmb0", "f1"): PairExpect(outcomes=REFUSED2, engine="p2pmem", refused_by="storage stack",
                                              errno="EREMOTEIO", text="loop0")},
                  setup="losetup /dev/loop0 /mnt/f1/inner.img && mount -t ext4 /dev/loop0 /mnt/loop",
                  watch=WatchExpect(1, "FAIL", stack_refused="loop")),
    ]


def _verify_k73_intel():
    """7.3 on Intel with q35's unlisted host bridge: the kernel refuses the root-port pair with EINVAL."""
    refused = PairExpect(outcomes=REFUSED2, refused_by="kernel", errno="EINVAL")
    return [
        VerifyRun("rp-try-kmod", F2 + " --size 1M --try-anyway --engine kmod --json", 1,
                  {("cmb0", "f2"): dataclasses.replace(refused, engine="kmod")},
                  watch=WatchExpect(1, "FAIL", {("cmb0", "f2"): PathExpect("refused", errno="EINVAL")})),
        VerifyRun("rp-try-p2pmem", F2 + " --size 1M --try-anyway --engine p2pmem --json", 1,
                  {("cmb0", "f2"): dataclasses.replace(refused, engine="p2pmem")},
                  watch=WatchExpect(1, "FAIL", {("cmb0", "f2"): PathExpect("refused", errno="EINVAL")}),
                  capture_after=True),
        VerifyRun("sw-auto", F1 + " --size 8M --json", 0, {("cmb0", "f1"): PairExpect(engine="p2pmem")},
                  watch=WatchExpect(0, "P2P SEEN", {("cmb0", "f1"): BUS_8M})),
    ]


# kmod-abuse: concurrent DMA tests (provider, raw client or file on f1, offset, bio?), each 1 MiB in 256 KiB
# chunks, and killed callers (name, provider, client or file on f1, p2pprobe-cli dma arguments).
ABUSE_CONC = [("cmb0", "n1", 2 * MiB, False), ("ivsh", "n2", 2 * MiB, True), ("cmb0", "/mnt/f1/conc-a", 0, False),
              ("ivsh", "/mnt/f1/conc-b", 0, False)]
ABUSE_KILL = [("bio-write", "cmb0", "n2", "0,1048576,0x11,bio,chunk=1048576"),
              ("vfs-read", "cmb0", "n2", "1048576,1048576,0x12,nowrite,chunk=1048576"),
              ("file-write", "ivsh", "/mnt/f1/kill-file", "0,1048576,0x13,chunk=1048576")]
# A killed caller must be gone within this many seconds of SIGKILL (measured: well under 0.1 s; the
# dropped request itself completes only after io_timeout (3 s), an abort and a controller reset).
KILL_BOUND_S = 2.0
# ... and the module must have released its buffers within this many seconds of the SIGKILL.
RELEASE_BOUND_S = 45.0
ABUSE_IOCTL_CASES = 91     # `case` lines kmod-abuse prints (every one must PASS)


def _verify_faults():
    """verify when things go wrong: each a clear error, no scratch file left, nothing written outside its range."""
    # The next request on f1 must be verify's data write (fail_next_io: guest-init.sh): warm the allocator's
    # metadata, and keep jbd2 from committing in between (its 5 s timer, started by the scratch file's
    # creation, beat a slow CMB pattern fill on a loaded CI machine and took the fault), and atime quiet.
    # mb_groups loads every group's block bitmap: else mballoc, allocating the scratch file, may prefetch
    # one not read yet, and that 4 KiB metadata READ took the fault (about every other run in a session).
    f1_fault = ("mount -o remount,commit=600,noatime /mnt/f1 && "
                "dd if=/dev/zero of=/mnt/f1/warm bs=1M count=4 2>/dev/null && rm /mnt/f1/warm && sync && "
                "cat /proc/fs/ext4/$(basename $(dev_of f1))/mb_groups > /dev/null && "
                "fail_next_io f1")
    return [
        # f2 full to the last block (root may use the reserved ones too): the scratch file cannot be
        # allocated, so nothing runs; the filler is untouched.
        VerifyRun("full", F2 + " --size 8M --json", 2,
                  {("cmb0", "f2"): PairExpect(status="not_started", text="No space left on device")},
                  setup="dd if=/dev/urandom of=/mnt/f2/filler bs=64k 2>/dev/null; sync; "
                        "sha256sum /mnt/f2/filler > /tmp/filler.sum; df -k /mnt/f2 | tail -1 > /tmp/df.before",
                  after="sha256sum -c /tmp/filler.sum && df -k /mnt/f2 | tail -1 | cmp - /tmp/df.before && "
                        "echo SAME-FREE-SPACE; rm -f /mnt/f2/filler",
                  after_has=("/mnt/f2/filler: OK", "SAME-FREE-SPACE")),
        # A file on f1 whose data write is dropped: timeout, the scratch file still removed.
        VerifyRun("file-timeout", F1 + " --engine p2pmem --direction to-storage --timeout 2 --size 1M --json", 1,
                  {("cmb0", "f1"): PairExpect(outcomes=("timeout",), engine="p2pmem", text="no completion within 2 s")},
                  setup=f1_fault, max_direction_s=4, kernel_log_has="timeout"),
        # r1 removed (QMP device_del) while verify writes 8 MiB at 1 MiB/s: verify names the vanished NVMe
        # (the 0-byte device left behind answers ENOSPC), and the rest of r1 is unchanged.
        VerifyRun("unplug", "--gpu {cmb0} --nvme {r1} --raw {dev:r1} --offset 4M --size 8M --allow-destructive "
                            "--engine p2pmem --direction to-storage --json", 1,
                  {("cmb0", "r1"): PairExpect(outcomes=("failed",), engine="p2pmem",
                                              text="is gone from /sys/bus/pci/devices: removed during the transfer")},
                  unplug="devr1", raw=("r1", 4 * MiB, 8 * MiB)),
    ]


def _scenarios():
    s = []
    for topo in ("rp", "sw", "pxb", "rc", "mf", "mfacs"):
        for cpu in ("epyc", "g5", "skx"):
            s.append(Scenario(f"{topo}-{cpu}", topo, cpu))
    fix = {("cmb0", "n1"): "pci=disable_acs_redir=0000:00:10.0"}
    # The vIOMMU artefact (VIOMMU_BUS_ADDR) is the one real data corruption the lab can make: verify
    # must call it a mismatch, not a pass, although every I/O reports success.
    s.append(Scenario("iommu-epyc", "iommu", "epyc", note="vIOMMU: BUS_ADDR data is not checked",
                      data_artefact={("cmb2", "n3"): VIOMMU_BUS_ADDR}, acs_fix=fix,
                      verify=[VerifyRun("viommu-mismatch", "--gpu {cmb2} --nvme {n3} --raw {dev:n3} --offset 8M "
                                                           "--size 1M --allow-destructive --engine kmod --json", 1,
                                        {("cmb2", "n3"): PairExpect(outcomes=("mismatch", "mismatch"), engine="kmod",
                                                                    text="data mismatch: first bad byte at offset")},
                                        raw=("n3", 8 * MiB, 1 * MiB),
                                        watch=WatchExpect(0, "P2P SEEN", {("cmb2", "n3"): PathExpect("bus_addr", MiB, MiB)}))]))
    s.append(Scenario("iommu-skx", "iommu", "skx", note="vIOMMU: BUS_ADDR data is not checked",
                      data_artefact={("cmb2", "n3"): VIOMMU_BUS_ADDR}, acs_fix=fix))
    s.append(Scenario("iommufix-skx", "iommufix", "skx", note="vIOMMU: BUS_ADDR data is not checked",
                      data_artefact={("cmb2", "n3"): VIOMMU_BUS_ADDR, ("cmb0", "n1"): VIOMMU_BUS_ADDR}))
    s.append(Scenario("k61-epyc", "swrp", "epyc", kernel="6.1"))
    s.append(Scenario("k61-skx", "swrp", "skx", kernel="6.1"))
    # 7.3: the block layer maps P2P requests itself (blk_rq_dma_map_iter_start, 6.17+); a refusal is EINVAL.
    s.append(Scenario("k73-epyc", "swrp", "epyc", kernel="7.3"))
    s.append(Scenario("k73-skx", "swrp", "skx", kernel="7.3"))
    s.append(Scenario("stock-epyc", "swrp", "epyc", kernel="stock",
                      note="Debian's own kernel: CONFIG_PCI_P2PDMA is not set",
                      verify=[VerifyRun("raw-no-p2pdma", "--gpu {cmb0} --nvme {n1} --raw {dev:n1} --offset 8M --size 1M "
                                                         "--allow-destructive --json", 1,
                                        {("cmb0", "n1"): PairExpect(status="refused",
                                                                    text="the kernel will refuse this pair")},
                                        raw=("n1", 8 * MiB, 1 * MiB), raw_data="unchanged",
                                        watch=WatchExpect(4, "NO P2P", text="peer-to-peer"))]))
    s.append(Scenario("kmod-abuse", "kabuse", "epyc", note="p2pprobe under abuse: malformed ioctls, concurrent "
                      "callers, unload while busy, killed callers, kmemleak", mode="kmod-abuse"))
    s.append(Scenario("kmod-abuse-k61", "kabuse", "epyc", kernel="6.1", note="kmod-abuse on 6.1 (before 6.7 the "
                      "module takes the write's freeze protection itself)", mode="kmod-abuse"))
    s.append(Scenario("vfault-epyc", "vfault", "epyc", note="p2pcheck verify under faults", verify=_verify_faults(),
                      fixture=False))
    # Host-memory I/O only: watch counts it on r1 and says no P2P happened.
    host_dd = WatchRun("host-dd", "dd if={dev:r1} of=/dev/null bs=1M count=4 iflag=direct",
                       WatchExpect(4, "NO P2P", host=(("r1", "to_device", 4 * MiB, "dd"),)))
    s.append(Scenario("vfy-epyc", "vfy", "epyc", note="p2pcheck verify", verify=_verify_epyc(), watch_runs=[host_dd]))
    s.append(Scenario("vfy-skx", "vfy", "skx", note="p2pcheck verify", verify=_verify_intel()))
    s.append(Scenario("vfy-k61-epyc", "vfy", "epyc", kernel="6.1", note="p2pcheck verify", verify=_verify_k61()))
    s.append(Scenario("vfy-k73-epyc", "vfy", "epyc", kernel="7.3", note="p2pcheck verify and watch on 7.3",
                      verify=_verify_k73_epyc()))
    s.append(Scenario("vfy-k73-skx", "vfy", "skx", kernel="7.3", note="p2pcheck verify and watch on 7.3",
                      verify=_verify_k73_intel()))
    return {x.name: x for x in s}


SCENARIOS = _scenarios()


# --------------------------------------------------------------------------- helpers

VERBOSE = False


def log(msg):
    print(f"lab: {msg}", file=sys.stderr, flush=True)


def run(cmd, **kw):
    if VERBOSE:
        log("+ " + " ".join(cmd))
    return subprocess.run(cmd, check=True, **kw)


class Work:
    def __init__(self, work):
        self.dir = os.path.abspath(work)
        os.makedirs(self.dir, exist_ok=True)

    def p(self, *a):
        return os.path.join(self.dir, *a)


_STOCK_ABI = None


def stock_abi():
    global _STOCK_ABI
    if _STOCK_ABI:
        return _STOCK_ABI
    _STOCK_ABI = subprocess.run([os.path.join(HERE, "setup-deps.sh"), "--print-stock-abi"], check=True,
                                capture_output=True, text=True).stdout.strip()
    return _STOCK_ABI


def lab_kernel_dir(series):
    r = subprocess.run([os.path.join(HERE, "build-kernel.sh"), "--print-path", series],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def kernels():
    """kind -> dict(bzimage, kdir, release-ish)."""
    k = {}
    for series in LAB_SERIES:
        d = lab_kernel_dir(series)
        if d:
            kdir = [os.path.join(d, x) for x in os.listdir(d) if x.startswith("linux-")][0]
            k[series] = {"bzimage": os.path.join(d, "bzImage"), "kdir": kdir}
    abi = stock_abi()
    sd = os.path.join(CACHE, f"stock-{abi}")
    k["stock"] = {"bzimage": os.path.join(sd, "boot", f"vmlinuz-{abi}"), "kdir": f"/usr/src/linux-headers-{abi}",
                  "abi": abi, "root": sd}
    return k


# --------------------------------------------------------------------------- prepare

def fetch_stock(abi):
    sd = os.path.join(CACHE, f"stock-{abi}")
    if os.path.exists(os.path.join(sd, "boot", f"vmlinuz-{abi}")) and \
            os.path.isdir(os.path.join(sd, "lib", "modules", abi)):
        return
    os.makedirs(sd, exist_ok=True)
    tmp = os.path.join(CACHE, "debs")
    os.makedirs(tmp, exist_ok=True)
    debs = [x for x in os.listdir(tmp) if x.startswith(f"linux-image-{abi}_")]
    if not debs:
        log(f"downloading linux-image-{abi}")
        run(["apt-get", "download", f"linux-image-{abi}"], cwd=tmp)
        debs = [x for x in os.listdir(tmp) if x.startswith(f"linux-image-{abi}_")]
    run(["dpkg", "-x", os.path.join(tmp, sorted(debs)[-1]), sd])


def build_module(kdir, out):
    # From scratch: kbuild does not notice that KDIR is another kernel (a changed kernel.config), and a
    # stale p2pprobe.mod.o from the old one gives "Invalid relocation target" at insmod.
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for f in ("p2pprobe.c", "Kbuild", "Makefile"):
        shutil.copy(os.path.join(REPO, "kmod", f), out)
    if os.path.isdir(os.path.join(out, "uapi")):
        shutil.rmtree(os.path.join(out, "uapi"))
    shutil.copytree(os.path.join(REPO, "kmod", "uapi"), os.path.join(out, "uapi"))
    run(["make", "-s", "-C", out, f"KDIR={kdir}"], stdout=subprocess.DEVNULL)
    return os.path.join(out, "p2pprobe.ko")


def build_helpers(w):
    b = w.p("bin")
    os.makedirs(b, exist_ok=True)
    inc = "-I" + os.path.join(REPO, "kmod")
    for name in ("p2pprobe-cli", "p2pmem-io", "kmod-abuse", "bench-io"):
        run(["gcc", "-static", "-O2", "-Wall", "-Werror", inc, "-o", os.path.join(b, name),
             os.path.join(HERE, name + ".c")])
    run(["gcc", "-O2", "-Wall", "-Werror", inc, "-o", os.path.join(b, "pattern-vectors"),
         os.path.join(HERE, "pattern-vectors.c")])
    c = subprocess.run([os.path.join(b, "pattern-vectors")], check=True, capture_output=True, text=True).stdout
    if c.strip().splitlines() != pattern.vectors():
        raise SystemExit("lab: tests/lab/pattern.py does not reproduce kmod/uapi/p2pprobe.h's pattern")


def mkcpio(staging, out):
    """newc archive of staging/, written atomically (a parallel run may be reading the old one)."""
    files = subprocess.run(["find", "."], cwd=staging, check=True, capture_output=True).stdout
    with open(out + ".tmp", "wb") as f:
        subprocess.run(["cpio", "-o", "-H", "newc", "-R", "0:0", "--quiet"], cwd=staging, input=files,
                       stdout=f, check=True)
    os.replace(out + ".tmp", out)


def ldd_libs(binary):
    out = subprocess.run(["ldd", binary], check=True, capture_output=True, text=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.search(r"(/\S+)\s+\(0x", line)
        if m:
            libs.append(m.group(1))
    return libs


def build_common_cpio(w, p2pcheck):
    st = w.p("stage-common")
    shutil.rmtree(st, ignore_errors=True)
    for d in ("bin", "sbin", "lib", "proc", "sys", "dev", "tmp", "out", "usr/share/misc", "boot"):
        os.makedirs(os.path.join(st, d), exist_ok=True)
    shutil.copy("/bin/busybox", os.path.join(st, "bin", "busybox"))
    applets = subprocess.run(["/bin/busybox", "--list"], check=True, capture_output=True, text=True).stdout.split()
    for a in applets:
        if a != "busybox":
            os.symlink("busybox", os.path.join(st, "bin", a))
    os.symlink("../bin/busybox", os.path.join(st, "sbin", "modprobe"))
    shutil.copy(os.path.join(HERE, "guest-init.sh"), os.path.join(st, "init"))
    os.chmod(os.path.join(st, "init"), 0o755)
    for name in ("p2pprobe-cli", "p2pmem-io", "kmod-abuse", "bench-io"):
        shutil.copy(w.p("bin", name), os.path.join(st, "bin", name))
    shutil.copy(os.path.join(HERE, "kmod-abuse.sh"), os.path.join(st, "kmod-abuse.sh"))
    # p2pcheck as built (dynamic): the libraries ldd lists and the loader, at their paths.
    # Debug info stripped from the copy (half the initramfs otherwise); the code is as built.
    run(["objcopy", "--strip-debug", p2pcheck, os.path.join(st, "bin", "p2pcheck")])
    for lib in ldd_libs(p2pcheck):
        dst = os.path.join(st, lib.lstrip("/"))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy(os.path.realpath(lib), dst)
    shutil.copy("/usr/share/misc/pci.ids", os.path.join(st, "usr/share/misc/pci.ids"))
    mkcpio(st, w.p("common.cpio"))
    shutil.rmtree(st)


def build_kernel_cpio(w, kind, k):
    st = w.p(f"stage-{kind}")
    shutil.rmtree(st, ignore_errors=True)
    os.makedirs(os.path.join(st, "lib"))
    ko = build_module(k["kdir"], w.p("kmod", kind))
    shutil.copy(ko, os.path.join(st, "lib", "p2pprobe.ko"))
    if kind == "stock":
        abi = k["abi"]
        src = os.path.join(k["root"], "lib", "modules", abi)
        # nvme and what it depends on (modinfo), plus the crc64-rocksoft crypto driver t10-pi asks for.
        want, todo, seen = [], ["nvme", "crc64_rocksoft_generic"], set()
        index = {}
        for dp, _, fs in os.walk(os.path.join(src, "kernel")):
            for f in fs:
                if f.endswith((".ko", ".ko.xz")):
                    index[f.split(".ko")[0].replace("-", "_")] = os.path.join(dp, f)
        while todo:
            m = todo.pop().replace("-", "_")
            if m in seen or m not in index:
                continue
            seen.add(m)
            want.append(index[m])
            deps = subprocess.run(["/sbin/modinfo", "-F", "depends", index[m]], check=True,
                                  capture_output=True, text=True).stdout.strip()
            todo += [d for d in deps.split(",") if d]
        for f in want:
            rel = os.path.relpath(f, k["root"])
            dst = os.path.join(st, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if f.endswith(".xz"):
                with open(dst[:-3], "wb") as o:
                    subprocess.run(["xz", "-dc", f], stdout=o, check=True)
            else:
                shutil.copy(f, dst)
        for f in ("modules.order", "modules.builtin", "modules.builtin.modinfo"):
            if os.path.exists(os.path.join(src, f)):
                shutil.copy(os.path.join(src, f), os.path.join(st, "lib", "modules", abi, f))
        run(["/sbin/depmod", "-b", st, abi])
        os.makedirs(os.path.join(st, "boot"))
        shutil.copy(os.path.join(k["root"], "boot", f"config-{abi}"), os.path.join(st, "boot", f"config-{abi}"))
    mkcpio(st, w.p(f"{kind}.cpio"))
    shutil.rmtree(st)


def files_key(files, extra=""):
    h = hashlib.sha256(f"prepare v{PREPARE_VERSION}\n{extra}\n".encode())
    for f in files:
        st = os.stat(f)
        h.update(f"{f}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def inputs_keys(p2pcheck, kinds):
    """Keys of the common part (p2pcheck, busybox, helpers) and of each kernel's part (p2pprobe.ko)."""
    kmod = [os.path.join(REPO, "kmod", x) for x in ("p2pprobe.c", "Kbuild", "Makefile", "uapi/p2pprobe.h")]
    common = files_key([p2pcheck, "/bin/busybox", "/usr/share/misc/pci.ids"] + kmod +
                       [os.path.join(HERE, x) for x in ("guest-init.sh", "p2pprobe-cli.c", "p2pmem-io.c", "bench-io.c",
                                                        "pattern-vectors.c", "kmod-abuse.c", "kmod-abuse.sh")])
    keys = {"common": common}
    for kind in sorted(kinds):
        k = kinds[kind]
        keys[kind] = files_key(kmod + [k["bzimage"]], f"{kind}:{k['kdir']}")
    return keys


def prepare(w, p2pcheck, build_kernels=True):
    """Everything the boots need; cheap when nothing changed. Serialised by a lock."""
    os.makedirs(w.dir, exist_ok=True)
    with open(w.p(".lock"), "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        t0 = time.time()
        if build_kernels:
            run([os.path.join(HERE, "setup-deps.sh")])
            for series in LAB_SERIES:
                if not lab_kernel_dir(series):
                    log(f"building the {series} lab kernel (about 8-13 min on 2 cores)")
                run([os.path.join(HERE, "build-kernel.sh"), series], stdout=subprocess.DEVNULL)
            fetch_stock(stock_abi())
        stamp = w.p("prepared.json")
        prev = load_json(stamp) or {}
        ks = prev.get("kernels") if not build_kernels else None
        if not ks or not all(os.path.exists(k["bzimage"]) and os.path.isdir(k["kdir"]) for k in ks.values()):
            ks = kernels()
        for series in LAB_SERIES:
            if series not in ks:
                raise SystemExit(f"lab: no {series} lab kernel; run tests/lab/lab.py prepare")
        if not os.path.exists(ks["stock"]["bzimage"]):
            fetch_stock(ks["stock"]["abi"])
        keys = inputs_keys(p2pcheck, ks)
        done = prev.get("keys", {})
        todo = [part for part in keys if done.get(part) != keys[part] or not os.path.exists(w.p(f"{part}.cpio"))]
        if not todo:
            return ks
        log(f"building {', '.join(todo)} in {w.dir}")
        if "common" in todo:
            build_helpers(w)
            build_common_cpio(w, p2pcheck)
        for kind in LAB_SERIES + ("stock",):
            if kind in todo:
                build_kernel_cpio(w, kind, ks[kind])
        with open(stamp + ".tmp", "w") as f:
            json.dump({"keys": keys, "p2pcheck": p2pcheck, "kernels": ks}, f, indent=1)
        os.replace(stamp + ".tmp", stamp)
        log(f"prepared in {time.time() - t0:.0f} s")
        return ks


# --------------------------------------------------------------------------- run

def write_plan_cpio(sc, rdir):
    t = sc.t
    st = os.path.join(rdir, "stage-plan")
    shutil.rmtree(st, ignore_errors=True)
    os.makedirs(st)
    kdma = " ".join(f"{p}:{c}:{off}:{DMA_LEN}:{seed_for(sc, p, c, off)}{':bio' if bio else ''}"
                    for p, c, off, bio in t.kdma)
    udma = " ".join(f"{p}:{c}:{off}:{DMA_LEN}:{seed_for(sc, p, c, off)}" for p, c, off in t.udma) \
        if sc.p2pmem_allocate else ""
    plan = (f"SCENARIO={sc.name}\nKERNEL_KIND={'stock' if sc.kernel == 'stock' else 'lab'}\n"
            f"NVME_SERIALS=\"{' '.join(s for s, _ in t.nvme)}\"\nPROVIDERS=\"{' '.join(t.providers)}\"\n"
            f"CLIENTS=\"{' '.join(t.clients)}\"\nKDMA=\"{kdma}\"\nUDMA=\"{udma}\"\nMODE={sc.mode}\n")
    if sc.mode == "kmod-abuse":
        conc = " ".join(f"{p}:{c}:{off}:{MiB}:{seed_for(sc, p, c, off)}{':bio' if bio else ''}"
                        for p, c, off, bio in ABUSE_CONC)
        kill = " ".join(f"{n}:{p}:{c}:{a}" for n, p, c, a in ABUSE_KILL)
        plan += f"ABUSE_CONC=\"{conc}\"\nABUSE_KILL=\"{kill}\"\n"
    with open(os.path.join(st, "plan"), "w") as f:
        f.write(plan)
    if t.fs_disks or sc.verify:
        with open(os.path.join(st, "verify-setup.sh"), "w") as f:
            f.write(verify_setup_script(sc))
    if sc.verify or sc.watch_runs or sc.guest_script:
        with open(os.path.join(st, "verify.sh"), "w") as f:
            f.write(verify_script(sc))
    mkcpio(st, os.path.join(rdir, "plan.cpio"))
    shutil.rmtree(st)


def guest_words(text):
    """{x} -> the guest's PCI address of x, {dev:x} -> its block device (guest-init.sh: bdf_of, dev_of)."""
    return re.sub(r"\{(dev:)?(\w+)\}", lambda m: f"$({'dev_of' if m.group(1) else 'bdf_of'} {m.group(2)})", text)


def verify_setup_script(sc):
    """Sourced by guest-init.sh before p2pcheck looks at the machine: the file systems verify writes to."""
    lines = ["mkdir -p /run /mnt/loop"]
    for serial in sc.t.fs_disks:
        lines.append(f'mkdir -p /mnt/{serial} && mount -t ext4 "$(dev_of {serial})" /mnt/{serial} '
                     f'|| log "mount {serial} failed"')
    return "\n".join(lines) + "\n"


def verify_script(sc):
    """Sourced by guest-init.sh after the DMA tests: each run through vrun, in order."""
    lines = []
    for v in sc.verify:
        lines.append(f"# {v.name}")
        if v.setup:
            lines.append(f"( {guest_words(v.setup)} ) > $O/verify-{v.name}.setup 2>&1")
        if v.unplug:
            lines.append(f"vrun_unplug {v.name} {v.unplug} {guest_words(v.args)}")
        elif v.watch:
            lines.append(f"vwatch {v.name} {guest_words(v.args)}")
        else:
            lines.append(f"vrun {v.name} {guest_words(v.args)}")
        if v.after:
            lines.append(f"( {guest_words(v.after)} ) > $O/verify-{v.name}.after 2>&1")
        if v.capture_after:
            lines.append(f"vcapture {v.name}")
    for wr in sc.watch_runs:
        lines.append(f"wrun {wr.name} {guest_words(wr.command)}")
    if sc.guest_script:
        lines.append(guest_words(sc.guest_script))
    return "\n".join(lines) + "\n"


def seed_for(sc, p, c, off):
    h = hashlib.sha256(f"{sc.name}:{p}:{c}:{off}".encode()).hexdigest()
    return "0x" + h[:16]


def initial_disk(sc, serial):
    """Deterministic initial content: DISK_RANDOM pseudo-random bytes, then zeros (raw disks: random throughout)."""
    size = sc.t.raw_disks.get(serial, DISK_SIZE)
    random = size if serial in sc.t.raw_disks else DISK_RANDOM
    img = bytearray(size)
    img[:random] = hashlib.shake_128(f"{sc.name}:{serial}".encode()).digest(random)
    return img


def make_ext4(path, size, stage=None):
    with open(path, "wb") as f:
        f.truncate(size)
    mkfs = shutil.which("mkfs.ext4") or "/sbin/mkfs.ext4"
    cmd = [mkfs, "-q", "-F", "-b", "4096", "-E", "lazy_itable_init=0,lazy_journal_init=0,root_owner=0:0"]
    run(cmd + (["-d", stage] if stage else []) + [path], stdout=subprocess.DEVNULL)


def make_disks(sc, rdir):
    disks = {}
    for serial, _ in sc.t.nvme:
        path = os.path.join(rdir, f"{serial}.img")
        if serial in sc.t.fs_disks:
            # ext4, holding an 8 MiB ext4 image for the loop-device case
            stage = os.path.join(rdir, f"stage-{serial}")
            os.makedirs(stage, exist_ok=True)
            make_ext4(os.path.join(stage, "inner.img"), 8 * MiB)
            make_ext4(path, sc.t.fs_disks[serial], stage)
            shutil.rmtree(stage)
        else:
            with open(path, "wb") as f:
                f.write(initial_disk(sc, serial))
        disks[serial] = path
    ivsh = None
    if "ivsh" in sc.t.providers:
        ivsh = os.path.join(rdir, "ivshmem.bin")
        with open(ivsh, "wb") as f:
            f.truncate(IVSH_SIZE)
    return disks, ivsh


def qemu_cmd(sc, ks, rdir, disks, ivsh):
    k = ks[sc.kernel]
    append = "console=ttyS0 panic=-1 quiet nvme.use_cmb_sqes=0"
    if sc.t.append:
        append += " " + sc.t.append
    cmd = ["qemu-system-x86_64", "-nodefaults", "-display", "none", "-machine", "q35", "-accel", "tcg",
           "-cpu", CPUS[sc.cpu][0], "-smp", "1", "-m", "1G", "-no-reboot",
           "-kernel", k["bzimage"], "-initrd", os.path.join(rdir, "initrd"), "-append", append,
           "-serial", "file:" + os.path.join(rdir, "console.log"),
           "-serial", "file:" + os.path.join(rdir, "payload.txt")]
    for serial, path in disks.items():
        extra = sc.t.drive_opts.get(serial)
        cmd += ["-drive", f"if=none,id=d{serial},file={path},format=raw" + (f",{extra}" if extra else "")]
    if any(v.unplug for v in sc.verify):
        cmd += ["-qmp", f"unix:{os.path.join(rdir, 'qmp.sock')},server=on,wait=off"]
    if ivsh:
        cmd += ["-object", f"memory-backend-file,id=ivshmem,size={IVSH_SIZE},mem-path={ivsh},share=on"]
    cmd += sc.t.qemu
    return cmd


def boot(sc, w, ks):
    rdir = w.p("run", sc.name)
    shutil.rmtree(rdir, ignore_errors=True)
    os.makedirs(rdir)
    write_plan_cpio(sc, rdir)
    with open(os.path.join(rdir, "initrd"), "wb") as o:
        for part in (w.p("common.cpio"), w.p(f"{sc.kernel}.cpio"), os.path.join(rdir, "plan.cpio")):
            with open(part, "rb") as i:
                shutil.copyfileobj(i, o)
    disks, ivsh = make_disks(sc, rdir)
    cmd = qemu_cmd(sc, ks, rdir, disks, ivsh)
    with open(os.path.join(rdir, "qemu-cmd.txt"), "w") as f:
        f.write(" ".join(cmd) + "\n")
    t0 = time.time()
    with open(os.path.join(rdir, "qemu.stderr"), "w") as err:
        q = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=err)
        try:
            if any(v.unplug for v in sc.verify):
                watch_unplugs(q, rdir, t0)
            rc = q.wait(timeout=max(1, QEMU_TIMEOUT - (time.time() - t0)))
        except subprocess.TimeoutExpired:
            q.kill()
            q.wait()
            raise
    secs = time.time() - t0
    return rdir, disks, ivsh, secs, rc


UNPLUG_MARK = "@@P2PLAB-UNPLUG "


def qmp(rdir, command, arguments=None):
    """One QMP command on the guest's monitor socket; returns the reply (or the error) as a dict."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as so:
        so.settimeout(10)
        so.connect(os.path.join(rdir, "qmp.sock"))
        f = so.makefile("rw")
        json.loads(f.readline())                      # greeting
        for cmd in ({"execute": "qmp_capabilities"},
                    {"execute": command, **({"arguments": arguments} if arguments else {})}):
            f.write(json.dumps(cmd) + "\n")
            f.flush()
            while True:
                reply = json.loads(f.readline())
                if "return" in reply or "error" in reply:
                    break                             # events ("event": ...) are skipped
        return reply


def watch_unplugs(q, rdir, t0):
    """While QEMU runs: each "@@P2PLAB-UNPLUG <id>" the guest prints on its console -> QMP device_del <id>.
    Replies go to qmp.log (read by check_verify)."""
    console = os.path.join(rdir, "console.log")
    done, pos = set(), 0
    while q.poll() is None and time.time() - t0 < QEMU_TIMEOUT:
        text = read(console)
        for m in re.finditer(re.escape(UNPLUG_MARK) + r"(\w+)", text[pos:]):
            dev = m.group(1)
            if dev in done:
                continue
            done.add(dev)
            try:
                reply = qmp(rdir, "device_del", {"id": dev})
            except (OSError, ValueError) as e:
                reply = {"error": str(e)}
            with open(os.path.join(rdir, "qmp.log"), "a") as f:
                f.write(f"device_del {dev} at {time.time() - t0:.1f} s: {json.dumps(reply)}\n")
        pos = max(pos, len(text) - 200)
        time.sleep(0.2)


def unpack_payload(rdir):
    with open(os.path.join(rdir, "payload.txt"), "rb") as f:
        text = f.read().decode("ascii", "replace")
    m = re.search(r"@@P2PLAB-BEGIN\s*\n(.*?)@@P2PLAB-END (\d+)", text, re.S)
    if not m:
        return None
    blob = base64.b64decode(re.sub(r"[^A-Za-z0-9+/=]", "", m.group(1)))
    out = os.path.join(rdir, "out")
    os.makedirs(out, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tf:
        tf.extractall(out, filter="data") if hasattr(tarfile, "data_filter") else tf.extractall(out)
    return out


class Checker:
    def __init__(self, sc):
        self.sc = sc
        self.fails = []
        self.notes = []

    def ok(self, cond, msg):
        if not cond:
            self.fails.append(msg)
        return cond


PAIR_FIELDS = ("gpu", "nvme", "common_bridge", "distance", "path_distance", "map_type", "verdict", "rule")


# "6.12.117's P2PDMA allowlist": the stored captures were booted on the Debian linux-source of
# their day; the registry only offers the newest stable update (6.12.117 became 6.12.118), whose
# rules are those of the same series. The verdict is compared, not the patch level it names.
KERNEL_PATCH_LEVEL = re.compile(r"\b(\d+\.\d+)\.\d+((?:-[0-9A-Za-z.+~-]*)?)'s ")


def pair_core(p):
    core = {k: p.get(k) for k in PAIR_FIELDS}
    if isinstance(core.get("rule"), str):
        core["rule"] = KERNEL_PATCH_LEVEL.sub(r"\1.x\2's ", core["rule"])
    return core


def replay(p2pcheck, root, gpus, nvmes, how="--root"):
    # schema_version 1 (2 is the default): pair_core() reads each pair's own decision, as the guest's
    # check.json has it, and expected/check.json (written from this) is tests/lab/replay_test.sh's golden.
    # Pretty JSON: strip_source() drops the "source" line, as replay_test.sh does.
    r = subprocess.run([p2pcheck, how, root, "--json-schema", "1", "check", "--json=pretty", "--gpu", gpus,
                        "--nvme", nvmes],
                       capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


# A stored lab fixture is one archive in p2pcheck's own capture format (top folder
# p2pcheck-capture/), not ~350 loose files in git. The recipe is fixed (sorted members, owner 0,
# mtime 0, fixed modes, GNU format, zstd -19) so re-recording an unchanged tree gives the same bytes.
# Symlink targets are left alone by the transform (flag S): they start with "../".
PACK_TAR = ["tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner", "--mtime=@0",
            "--mode=a=rX,u+w", "--format=gnu", "--transform=s,^\\.,p2pcheck-capture,S"]


def fixture_archive(name):
    return os.path.join(FIXTURES, name, f"{name}.tar.zst")


def pack_capture(root, dest):
    """Unpacked capture tree `root` -> `dest` (.tar.zst), deterministically; replaced atomically."""
    tmp = dest + ".tmp"
    env = dict(os.environ, LC_ALL="C")
    with open(tmp, "wb") as f:
        tar = subprocess.Popen(PACK_TAR + ["-C", root, "-cf", "-", "."], stdout=subprocess.PIPE, env=env)
        z = subprocess.run(["zstd", "-19", "-q", "-c"], stdin=tar.stdout, stdout=f)
        tar.stdout.close()
        if tar.wait() != 0 or z.returncode != 0:
            os.remove(tmp)
            raise SystemExit(f"lab: packing {root} into {dest} failed")
    os.replace(tmp, dest)


def unpack_capture(archive, dest):
    """`archive` (a capture .tar.zst) -> its tree directly under `dest` (top folder stripped)."""
    os.makedirs(dest, exist_ok=True)
    run(["tar", "--zstd", "-C", dest, "--strip-components=1", "-xf", archive])
    return dest


def strip_source(text):
    return "".join(line for line in text.splitlines(True) if '"source"' not in line)


def check_scenario(sc, w, ks, p2pcheck, update_fixtures):
    ck = Checker(sc)
    rdir, disks, ivsh, secs, rc = boot(sc, w, ks)
    result = {"scenario": sc.name, "boot_s": round(secs, 1), "pairs": [], "dma": []}
    out = unpack_payload(rdir)
    if not ck.ok(out is not None, f"no payload from the guest (qemu exit {rc}); console: {rdir}/console.log"):
        tail = read(os.path.join(rdir, "console.log"))[-3000:]
        ck.notes.append("console tail:\n" + tail)
        return ck, result
    O = lambda *a: os.path.join(out, *a)  # noqa: E731
    result["guest_timing"] = read(O("timing.txt")).strip()
    if sc.mode == "kmod-abuse":
        check_abuse(sc, ck, out, disks, result)
        return ck, result

    # Devices: name -> (bdf, dev)
    dev = {}
    for line in read(O("devices.txt")).splitlines():
        f = line.split()
        dev[f[0]] = (f[1] if len(f) > 1 else None, f[2] if len(f) > 2 else None)
    for n in sc.t.providers + sc.t.clients:
        ck.ok(dev.get(n, (None,))[0], f"device {n} not found in the guest")
    info = kv(read(O("info.txt")))
    if sc.kernel == "stock":
        ck.ok(info.get("p2pdma") == "0", f"p2pprobe info on the stock kernel should say p2pdma=0: {info}")
    else:
        ck.ok(info.get("p2pdma") == "1", f"p2pprobe info should say p2pdma=1: {info}")
    if "ivsh" in sc.t.providers:
        ivt = read(O("ivsh.txt"))
        want = "-" if sc.kernel == "stock" else "p2pprobe"
        ck.ok(f"driver={want}" in ivt, f"ivshmem should be bound to {want}: {ivt.strip()}")
    p2pmem = read(O("p2pmem.txt"))
    for serial, cmb in sc.t.nvme:
        has = re.search(rf"^{serial} \S+ size=(\d+)", p2pmem, re.M)
        if sc.kernel == "stock":
            ck.ok(not has, f"{serial}: p2pmem/ on a kernel without P2PDMA")
        elif cmb:
            ck.ok(has and int(has.group(1)) == 16 * MiB, f"{serial}: no 16 MiB p2pmem (CMB): {p2pmem}")
            alloc = re.search(rf"^{serial} .* allocate=(\d)", p2pmem, re.M)
            ck.ok(alloc and alloc.group(1) == ("1" if sc.p2pmem_allocate else "0"),
                  f"{serial}: p2pmem/allocate should {'exist' if sc.p2pmem_allocate else 'not exist'} on {sc.kernel}")

    # The kernel's verdicts.
    kern = {}
    for line in read(O("verdicts.txt")).splitlines():
        f = line.split(maxsplit=3)
        kern[(f[1], f[2])] = kv(f[3]) if len(f) > 3 else {}

    # Ours, live in the guest.
    chk = load_json(O("check.json"))
    npairs = len(sc.t.providers) * len(sc.t.clients)
    ours = {}
    if ck.ok(chk is not None, f"p2pcheck check --json gave no JSON: {read(O('check.err'))[:500]}"):
        ck.ok(len(chk.get("pairs", [])) == npairs,
              f"p2pcheck checked {len(chk.get('pairs', []))} pairs, expected {npairs}")
        byb = {(p["gpu"], p["nvme"]): p for p in chk.get("pairs", [])}
        for p in sc.t.providers:
            for c in sc.t.clients:
                ours[(p, c)] = byb.get((dev.get(p, (None,))[0], dev.get(c, (None,))[0]))
    ck.ok(read(O("check.rc")).strip() in ("0", "1", "2"), f"p2pcheck check exit {read(O('check.rc')).strip()}")
    all_rc = read(O("check-all.rc")).strip()
    ck.ok(all_rc == "4", f"plain `p2pcheck check` (no GPU in the guest) should exit 4, got {all_rc}")
    topo = load_json(O("topo.json"))
    if ck.ok(topo is not None and topo.get("functions"), "p2pcheck topo --json gave no functions"):
        acs = {f["bdf"]: f.get("acs") or {} for f in topo["functions"]}
        ports = [b for b, a in acs.items() if a.get("presence") == "present"]
        redir = sorted(b for b in ports if a_redirect(acs[b]))
        ck.ok(redir == sorted(sc.t.acs_redirect),
              f"p2pcheck topo: ACS redirect on {redir or 'nothing'}, expected on {list(sc.t.acs_redirect) or 'nothing'}")
        for b in sc.t.acs_redirect:
            ck.ok(b in ports, f"p2pcheck topo: {b} should have an ACS capability")

    for pair in [(p, c) for p in sc.t.providers for c in sc.t.clients]:
        k = kern.get(pair, {})
        o = ours.get(pair)
        exp_d, exp_map = sc.expected(pair)
        row = {"pair": f"{pair[0]}->{pair[1]}", "bdfs": f"{dev.get(pair[0], ('?',))[0]} -> {dev.get(pair[1], ('?',))[0]}",
               "kernel_distance": k.get("distance"), "kernel_map": k.get("map_type"),
               "kernel_map_reason": k.get("map_reason"), "expected": f"{exp_d} {exp_map}"}
        if o is None:
            ck.ok(False, f"{row['pair']}: no pair in p2pcheck's JSON")
            result["pairs"].append(row)
            continue
        row.update({"ours_distance": o.get("distance"), "ours_map": o.get("map_type"), "ours_verdict": o.get("verdict"),
                    "ours_rule": o.get("rule")})
        kd = int(k["distance"]) if k.get("distance") not in (None, "") else None
        ck.ok(kd == exp_d, f"{row['pair']}: kernel distance {kd}, scenario expects {exp_d}")
        ck.ok(o.get("distance") == kd, f"{row['pair']}: our distance {o.get('distance')} != kernel's {kd}")
        ck.ok((o.get("verdict") == "supported") == (kd is not None and kd >= 0),
              f"{row['pair']}: our verdict {o.get('verdict')} but kernel distance {kd}")
        if k.get("map_reason") == "probed":
            ck.ok(o.get("map_type") == k.get("map_type"),
                  f"{row['pair']}: our map type {o.get('map_type')} != kernel's {k.get('map_type')}")
            ck.ok(k.get("map_type") == exp_map, f"{row['pair']}: kernel map type {k.get('map_type')}, expected {exp_map}")
        elif sc.kernel != "stock":
            ck.ok(False, f"{row['pair']}: the kernel's map type was not observed ({k.get('map_reason')})")
        else:
            ck.ok(k.get("map_reason") == "no_p2pdma", f"{row['pair']}: map_reason {k.get('map_reason')}")
            ck.ok(o.get("verdict") == "not_supported", f"{row['pair']}: P2PDMA is off, ours says {o.get('verdict')}")
        if pair in sc.acs_fix:
            ck.ok(o.get("acs_fix") == sc.acs_fix[pair],
                  f"{row['pair']}: p2pcheck's acs_fix {o.get('acs_fix')!r}, expected {sc.acs_fix[pair]!r}")
        row["agree"] = not any(row["pair"] + ":" in f for f in ck.fails)
        result["pairs"].append(row)

    verify_regions = check_verify(sc, ck, p2pcheck, out, dev, disks, result)
    check_dma(sc, ck, out, dev, kern, disks, ivsh, result, verify_regions)
    check_capture(sc, ck, w, p2pcheck, rdir, out, dev, chk, kern, update_fixtures, result)
    watched = os.path.join(FIXTURES, sc.name, "watch") if update_fixtures and sc.fixture else None
    check_watch_runs(sc, ck, p2pcheck, out, dev, result, O("capture.tar.gz"), watched)
    if ck.fails:
        ck.notes.append("guest files: " + out)
    return ck, result


# Anything of these in the guest's kernel log fails a scenario that scans it (kmod-abuse).
KERNEL_LOG_BAD = ("BUG:", "WARNING:", "Oops", "Call Trace", "general protection fault", "kernel BUG",
                  "refcount_t:", "list_del corruption", "list_add corruption", "suspected memory leak",
                  "UBSAN:", "blocked for more than", "unreferenced object", "Kernel panic", "RIP:")


def kernel_log_problems(dmesg):
    return [ln for ln in dmesg.splitlines() if any(b in ln for b in KERNEL_LOG_BAD)]


def check_abuse(sc, ck, out, disks, result):
    """kmod-abuse (tests/lab/kmod-abuse.sh): every malformed ioctl gives its errno; concurrent callers all
    pass with their data where it belongs; a killed caller is gone within KILL_BOUND_S while rmmod fails until
    the module released the orphaned buffers; unload and reload work; no oops, warning or kmemleak report."""
    O = lambda *a: os.path.join(out, *a)  # noqa: E731
    result["abuse"] = rows = []
    # 1. malformed ioctls
    text = read(O("abuse-ioctls.txt"))
    cases = [ln for ln in text.splitlines() if ln.startswith("case ")]
    bad = [ln for ln in cases if not ln.endswith(" PASS")]
    rows.append(f"ioctls: {len(cases) - len(bad)} of {len(cases)} cases gave the errno they must")
    ck.ok(len(cases) == ABUSE_IOCTL_CASES, f"kmod-abuse ran {len(cases)} ioctl cases, expected {ABUSE_IOCTL_CASES}:\n"
          + text[-1500:])
    ck.ok(not bad and "exit=0" in text, "malformed ioctls:\n" + "\n".join(bad or text.splitlines()[-5:]))
    # 2. concurrent callers
    conc = [ln for ln in read(O("abuse-conc.txt")).splitlines() if ln.startswith("conc ")]
    ck.ok(len(conc) == len(ABUSE_CONC), f"{len(conc)} concurrent DMA tests reported, {len(ABUSE_CONC)} started")
    for ln in conc:
        f = ln.split()
        ck.ok("result=PASS" in ln, f"concurrent DMA test failed: {ln}")
        client, off, seed = f[2], int(f[3]), f[5]
        if client in disks:     # raw: the pattern is on the disk image, where it belongs
            with open(disks[client], "rb") as img:
                img.seek(off)
                got = img.read(MiB)
            ck.ok(got == pattern.region(int(seed, 16), off, MiB),
                  f"{client}.img [{off}, +1 MiB) lacks the pattern of {ln[:60]}")
    vline = read(O("abuse-conc.txt")).strip().splitlines()[-1:] or [""]
    ck.ok(re.match(r"verdicts n=40 fails=0$", vline[0]), f"verdict/info calls beside the DMA tests: {vline[0]}")
    rows.append(f"concurrent: {sum('result=PASS' in x for x in conc)} of {len(ABUSE_CONC)} DMA tests passed; {vline[0]}")
    # 3. killed callers
    kills = {kv(ln).get("name"): kv(ln) for ln in read(O("abuse-kill.txt")).splitlines() if ln.startswith("kill ")}
    result["kill"] = kills
    for name, _, _, _ in ABUSE_KILL:
        k = kills.get(name)
        if not ck.ok(k is not None, f"killed caller {name}: not reported"):
            continue
        label = f"killed caller {name}"
        ck.ok(k.get("state") == "D", f"{label}: it should have been waiting for the dropped I/O (state D), was "
                                     f"{k.get('state')!r}: the fault did not hold the I/O")
        ck.ok(k.get("rmmod_busy") not in (None, "0"), f"{label}: rmmod succeeded while a DMA test ran")
        ck.ok(k.get("exit") == "137", f"{label}: exit status {k.get('exit')}, expected 137 (SIGKILL)")
        ks = float(k.get("kill_s", "1e9"))
        ck.ok(ks <= KILL_BOUND_S, f"{label}: gone {ks} s after SIGKILL, bound {KILL_BOUND_S} s")
        ck.ok(k.get("rmmod_orphan") not in (None, "0"),
              f"{label}: rmmod succeeded while the module still owned the buffers of the dropped I/O")
        ck.ok(int(k.get("refcnt_after_kill", "0")) >= 1, f"{label}: no module reference held for the orphan")
        ck.ok(k.get("released") == "1", f"{label}: the module released {k.get('released')} orphans (expected 1)")
        rs = float(k.get("released_s", "1e9"))
        ck.ok(rs <= RELEASE_BOUND_S, f"{label}: buffers released {rs} s after SIGKILL, bound {RELEASE_BOUND_S} s")
        ck.ok(k.get("refcnt_after_release") == "0", f"{label}: module references left: {k.get('refcnt_after_release')}")
        rows.append(f"kill {name}: state {k.get('state')}, gone after {ks} s, buffers released after {rs} s")
    # 4. unload, reload
    un = kv(read(O("abuse-unload.txt")).replace("\n", " "))
    ck.ok(un.get("rmmod") == "0" and un.get("devnode_after_rmmod") == "0" and un.get("insmod") == "0"
          and un.get("info") == "0" and un.get("rmmod2") == "0", f"unload/reload: {read(O('abuse-unload.txt'))}")
    # 5. kernel log and kmemleak
    dmesg = read(O("dmesg.txt"))
    ck.ok("kmemleak=on" in read(O("abuse-kmemleak-state.txt")) and "Kernel memory leak detector initialized" in dmesg,
          "kmemleak is not running in the guest (kmemleak=on and CONFIG_DEBUG_KMEMLEAK expected)")
    # Ours: allocated by the test's processes (the module's ioctls, load and unload) or naming the module.
    # kmemleak also reports objects only a device references (nvme queues after a reset): shown, not failed.
    records = ["unreferenced object" + r for r in read(O("kmemleak.txt")).split("unreferenced object")[1:]]
    ours = [r for r in records if re.search(r'comm "(p2pprobe-cli|kmod-abuse|insmod|rmmod)"|p2pprobe', r)]
    ck.ok(not ours, f"kmemleak: {len(ours)} leak(s) of the module's callers:\n" + "".join(ours)[:3000])
    if len(records) > len(ours):
        ck.notes.append(f"kmemleak: {len(records) - len(ours)} report(s) not from the module's callers:\n"
                        + "".join(r for r in records if r not in ours)[:1500])
    leaks = "".join(ours)
    # kmemleak's own summary lines are judged by the report above, record by record.
    probs = [ln for ln in kernel_log_problems(dmesg) if not re.search(r"kmemleak: \d+ new suspected memory leaks", ln)]
    ck.ok(not probs, "the guest's kernel log has:\n" + "\n".join(probs[:40]))
    ck.ok("FAULT_INJECTION: forcing a failure" in dmesg and "timeout" in dmesg,
          "the kernel log shows no injected I/O timeout")
    rows.append(f"kernel log: {len(probs)} problem lines; kmemleak: {'clean' if not leaks else 'REPORTS'}")


def a_redirect(acs):
    return acs.get("redirect") is True


def allowed(kern, pair):
    try:
        return int(kern[pair]["distance"]) >= 0
    except (KeyError, ValueError):
        return False


def check_dma(sc, ck, out, dev, kern, disks, ivsh, result, verify_regions):
    t = sc.t
    lines = read(os.path.join(out, "dma.txt")).splitlines()
    regions = {s: list(verify_regions.get(s, [])) for s in disks}     # serial -> [(off, len, seed, expect_data)]
    ivsh_expect = []                     # (seed, off, copies) of the LAST ivshmem run: each reuses the buffers
    kd = [ln for ln in lines if ln.startswith("kdma ")]
    ck.ok(len(kd) == len(t.kdma), f"{len(kd)} kernel DMA runs reported, {len(t.kdma)} planned")
    for p, c, off, bio in t.kdma:
        pair = (p, c)
        seed = seed_for(sc, p, c, off)
        mode = "bio" if bio else "vfs"
        line = next((ln for ln in kd if ln.split()[1:4] == [p, c, str(off)] and ln.split()[6] == mode), "")
        r = kv(line)
        art = sc.data_artefact.get(pair)
        row = {"run": f"kdma {p}->{c} {mode}", "result": r.get("result"), "write_error": r.get("write_error"),
               "read_error": r.get("read_error"), "ioctl_errno": r.get("ioctl_errno")}
        name = f"kdma {p}->{c} {mode} @{off}"
        if sc.kernel == "stock":
            ck.ok(r.get("ioctl_errno") == str(EOPNOTSUPP), f"{name}: expected EOPNOTSUPP on the stock kernel: {line}")
            row["expect"] = "EOPNOTSUPP (no P2PDMA in the kernel)"
            regions[c].append((off, DMA_LEN, seed, False))
        elif art:
            # The kernel allows the pair: the I/O must not be refused; the data is QEMU's problem.
            ck.ok(allowed(kern, pair) and r.get("write_error") == "0" and r.get("read_error") == "0",
                  f"{name}: the kernel allows the pair, the I/O must not fail: {line}")
            row["expect"] = "I/O ok; data not asserted (QEMU artefact, see note)"
            ck.notes.append(f"{name}: {line.split(' ', 7)[-1] if line else 'missing'} -- not asserted: {art}")
            regions[c].append((off, DMA_LEN, seed, None))
        elif allowed(kern, pair):
            ck.ok(r.get("result") == "PASS" and r.get("write_error") == "0" and r.get("read_error") == "0",
                  f"{name}: the kernel allows the pair but the DMA test failed: {line}")
            row["expect"] = "data moved and intact"
            regions[c].append((off, DMA_LEN, seed, True))
            if p == "ivsh":
                ivsh_expect = [(seed, off, 2)]
        else:
            err, err_name = sc.refusal
            ck.ok(r.get("write_error") == str(-err), f"{name}: refused pair, write should fail -{err}: {line}")
            nw = next((ln for ln in lines if ln.startswith("kdma-nowrite ") and ln.split()[1:4] == [p, c, str(off)]
                       and ln.split()[6] == mode), "")
            ck.ok(kv(nw).get("read_error") == str(-err),
                  f"{name}: refused pair, read (storage -> p2pmem) should fail -{err}: {nw}")
            row["read_error"] = kv(nw).get("read_error")
            row["expect"] = f"{err_name} both directions"
            regions[c].append((off, DMA_LEN, seed, False))
            if p == "ivsh":
                ivsh_expect = [(seed, off, 1)]
        result["dma"].append(row)
    ud = [ln for ln in lines if ln.startswith("udma ")]
    ck.ok(len(ud) == (len(t.udma) if sc.p2pmem_allocate else 0), f"{len(ud)} p2pmem/allocate runs reported")
    for line in ud:
        f = line.split()
        p, c, off = f[1], f[2], int(f[3])
        seed = seed_for(sc, p, c, off)
        r = kv(line)
        name = f"udma {p}->{c} @{off}"
        row = {"run": f"p2pmem/allocate {p}->{c}", "result": r.get("result"),
               "write_error": r.get("write_errno"), "read_error": r.get("read_errno")}
        if sc.data_artefact.get((p, c)):
            ck.ok(allowed(kern, (p, c)) and r.get("write_errno") == "0" and r.get("read_errno") == "0",
                  f"{name}: the kernel allows the pair, the I/O must not fail: {line}")
            regions[c].append((off, DMA_LEN, seed, None))
            row["expect"] = "I/O ok; data not asserted (QEMU artefact, see note)"
        elif allowed(kern, (p, c)):
            ck.ok(r.get("result") == "PASS", f"{name}: the kernel allows the pair but the O_DIRECT test failed: {line}")
            regions[c].append((off, DMA_LEN, seed, True))
            row["expect"] = "data moved and intact"
        else:
            err, err_name = sc.refusal
            ck.ok(r.get("write_errno") == str(err) and r.get("read_errno") == str(err),
                  f"{name}: refused pair, pwrite and pread should fail with {err_name}: {line}")
            row["expect"] = f"{err_name} both directions"
            regions[c].append((off, DMA_LEN, seed, False))
        result["dma"].append(row)

    # Disk images: the pattern where DMA passed, the old bytes where it failed, nothing else touched.
    # (ext4 disks change by design: verify's scratch files are checked in check_verify.)
    for serial, path in disks.items():
        if serial in t.fs_disks:
            continue
        regs = sorted(regions.get(serial, []))
        with open(path, "rb") as f:
            data = f.read()
        init = memoryview(initial_disk(sc, serial))
        data = memoryview(data)
        h_init, h_now, pos = hashlib.sha256(), hashlib.sha256(), 0
        for off, n, seed, expect in regs:
            h_init.update(init[pos:off])
            h_now.update(data[pos:off])
            pos = off + n
            got = bytes(data[off:off + n])
            if expect is None:
                continue
            if expect:
                cnt, first = pattern.first_mismatch(got, int(seed, 16), off)
                ck.ok(cnt == 0, f"{serial}.img: {cnt} bytes at [{off}, +{n}) differ from the pattern (first at {first})")
            else:
                ck.ok(got == init[off:off + n], f"{serial}.img: refused DMA changed [{off}, +{n})")
        h_init.update(init[pos:])
        h_now.update(data[pos:])
        ck.ok(h_init.hexdigest() == h_now.hexdigest(),
              f"{serial}.img: bytes outside the test regions changed (sha256 before {h_init.hexdigest()[:12]}, "
              f"after {h_now.hexdigest()[:12]})")

    if ivsh:
        with open(ivsh, "rb") as f:
            mem = f.read()
        for seed, off, copies in ivsh_expect:
            want = pattern.region(int(seed, 16), off, DMA_LEN)
            n = 0
            start = mem.find(want[:64])
            while start >= 0:
                if mem[start:start + DMA_LEN] == want:
                    n += 1
                start = mem.find(want[:64], start + 1)
            ck.ok(n == copies, f"ivshmem memory holds {n} copies of the {off} pattern, expected {copies} "
                               f"({'source + what the NVMe wrote' if copies == 2 else 'only the source: the NVMe must not have written'})")


def check_capture(sc, ck, w, p2pcheck, rdir, out, dev, chk, kern, update_fixtures, result):
    crc = read(os.path.join(out, "capture.rc")).strip()
    if not ck.ok(crc == "0" and os.path.exists(os.path.join(out, "capture.tar.gz")),
                 f"p2pcheck capture failed (exit {crc}): {read(os.path.join(out, 'capture.out'))[:300]}"):
        return
    root = os.path.join(rdir, "capture-root")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    with tarfile.open(os.path.join(out, "capture.tar.gz")) as tf:
        tf.extractall(root, filter="fully_trusted") if hasattr(tarfile, "data_filter") else tf.extractall(root)
    tops = os.listdir(root)
    if len(tops) == 1 and os.path.isdir(os.path.join(root, tops[0])) and tops[0] not in ("sys", "proc"):
        inner = os.path.join(root, tops[0])
        for x in os.listdir(inner):
            os.rename(os.path.join(inner, x), os.path.join(root, x))
        os.rmdir(inner)
    # Empty directories stay: one is evidence (sys/module/nvme_core/parameters/ without `multipath`
    # says the kernel has no native multipath; without the folder that fact is unknown).
    gpus = ",".join(dev[p][0] for p in sc.t.providers)
    nvmes = ",".join(dev[c][0] for c in sc.t.clients)
    rc, text, err = replay(p2pcheck, root, gpus, nvmes)
    rep = json.loads(text) if text.strip().startswith("{") else None
    if not ck.ok(rep is not None, f"replay of the capture failed (exit {rc}): {err[:300]}"):
        return
    live = sorted((pair_core(p) for p in chk.get("pairs", [])), key=lambda x: (x["gpu"], x["nvme"])) if chk else []
    again = sorted((pair_core(p) for p in rep.get("pairs", [])), key=lambda x: (x["gpu"], x["nvme"]))
    ck.ok(live == again, "the capture replayed on the host gives other verdicts than the live run:\n"
          + json.dumps({"live": live, "replay": again}, indent=1)[:3000])
    fx = os.path.join(FIXTURES, sc.name)
    args = f"--gpu {gpus} --nvme {nvmes}\n"
    archive = fixture_archive(sc.name)
    if update_fixtures and sc.fixture:
        shutil.rmtree(fx, ignore_errors=True)
        os.makedirs(os.path.join(fx, "expected"))
        pack_capture(root, archive)
        # The archive must give back exactly the tree it was made from (contents, symlink targets).
        back = os.path.join(rdir, "capture-check")
        shutil.rmtree(back, ignore_errors=True)
        unpack_capture(archive, back)
        d = subprocess.run(["diff", "-r", "--no-dereference", root, back], capture_output=True, text=True)
        ck.ok(d.returncode == 0, f"{os.path.relpath(archive, REPO)} does not unpack to the captured tree:\n"
              + d.stdout[:2000] + d.stderr[:500])
        with open(os.path.join(fx, "args"), "w") as f:
            f.write(args)
        # expected output: p2pcheck on the stored archive, the `source` line removed
        rc2, text2, err2 = replay(p2pcheck, archive, gpus, nvmes, how="--dump")
        with open(os.path.join(fx, "expected", "check.json"), "w") as f:
            f.write(strip_source(text2))
        with open(os.path.join(fx, "expected", "exit_code"), "w") as f:
            f.write(f"{rc2}\n")
        kj = {"scenario": sc.name, "describe": sc.t.describe, "cpu": CPUS[sc.cpu][2], "kernel": sc.kernel,
              "cmdline": read(os.path.join(out, "cmdline")).strip(),
              "pairs": [{"provider": p, "client": c, "provider_bdf": dev[p][0], "client_bdf": dev[c][0],
                         "distance": int(kern[(p, c)]["distance"]), "map_type": kern[(p, c)].get("map_type"),
                         "map_reason": kern[(p, c)].get("map_reason")}
                        for p in sc.t.providers for c in sc.t.clients]}
        with open(os.path.join(fx, "expected", "kernel.json"), "w") as f:
            json.dump(kj, f, indent=1)
            f.write("\n")
        log(f"{sc.name}: wrote {os.path.relpath(fx, REPO)}")
    # The stored fixture replayed by the same binary: differences come from the trees alone.
    if not sc.fixture:
        return
    if not ck.ok(os.path.isfile(archive), f"no stored fixture {os.path.relpath(archive, REPO)} "
                 f"(run: tests/lab/lab.py run --update-fixtures {sc.name}, review, commit)"):
        return
    ck.ok(read(os.path.join(fx, "args")) == args,
          f"fixture args differ: {read(os.path.join(fx, 'args')).strip()} vs {args.strip()}")
    rc3, text3, err3 = replay(p2pcheck, archive, gpus, nvmes, how="--dump")
    stored = json.loads(text3) if text3.strip().startswith("{") else None
    if not ck.ok(stored is not None, f"replay of the stored fixture failed (exit {rc3}): {err3[:300]}"):
        return
    old = sorted((pair_core(p) for p in stored.get("pairs", [])), key=lambda x: (x["gpu"], x["nvme"]))
    ck.ok(old == again, "a fresh capture's verdicts differ from the stored fixture "
          f"{os.path.relpath(fx, REPO)}:\n" + json.dumps({"stored": old, "fresh": again}, indent=1)[:3000])
    kj = load_json(os.path.join(fx, "expected", "kernel.json")) or {}
    stored_k = {(k["provider"], k["client"]): (k["distance"], k["map_type"]) for k in kj.get("pairs", [])}
    fresh_k = {(p, c): (int(kern[(p, c)]["distance"]), kern[(p, c)].get("map_type"))
               for p in sc.t.providers for c in sc.t.clients if (p, c) in kern}
    ck.ok(stored_k == fresh_k, f"the kernel's verdicts differ from the stored fixture's kernel.json: "
          f"stored {stored_k}, fresh {fresh_k}")


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
    global VERBOSE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=("prepare", "run", "list"))
    ap.add_argument("scenarios", nargs="*")
    ap.add_argument("--p2pcheck", default=os.path.join(REPO, "build", "p2pcheck"))
    ap.add_argument("--work", default=os.environ.get("P2PCHECK_LAB_WORK", os.path.join(REPO, "build", "lab")))
    ap.add_argument("--update-fixtures", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep disk images and guest files of passing runs")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_intermixed_args()
    VERBOSE = a.verbose
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
