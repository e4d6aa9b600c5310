# SPDX-License-Identifier: GPL-2.0
"""The lab's fixed facts: where things are, sizes and errnos, the kernels, the emulated CPUs and
the PCIe topologies QEMU builds (each with the pairs the kernel must allow and how)."""
import dataclasses
import os

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
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
# 6.12+allow29c0 (variants/allow29c0.*): 6.12 with q35's host bridge 8086:29c0 on its P2PDMA allowlist
# and CONFIG_KALLSYMS_ALL + CONFIG_PROC_KCORE, so p2pcheck reads the table from /proc/kcore.
LAB_SERIES = ("6.12", "6.1", "7.3", "6.12+allow29c0")
ALLOW_Q35 = "6.12+allow29c0"
Q35_HOST_BRIDGE = "8086:29c0"
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

# The kernel's own allowlist (issue 47): one pair across two root ports, through q35's host bridge.
TOPOLOGIES["rp2"] = Topology(
    "rp2", "cmb0 (16 MiB CMB) and n1 on two root ports of pcie.0: the pair goes through the host bridge 8086:29c0",
    [*_rp(1, "0x10"), *_rp(2, "0x11"), *_nvme("cmb0", "rp1", cmb=True), *_nvme("n1", "rp2")],
    [("cmb0", True), ("n1", False)], ["cmb0"], ["n1"],
    {("cmb0", "n1"): ("thb", 4)},
    [("cmb0", "n1", OFF_KVFS, False), ("cmb0", "n1", OFF_KBIO, True)],
    [("cmb0", "n1", OFF_UDMA)])

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
