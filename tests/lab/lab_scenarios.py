# SPDX-License-Identifier: GPL-2.0
"""The scenarios: a topology, a CPU and a kernel, with the verify and watch runs each boots and what
the host must find after each (PairExpect, VerifyRun, WatchExpect)."""
import dataclasses

from lab_watch import PathExpect, WatchExpect, WatchRun
from lab_topology import ALLOW_Q35, CPUS, EINVAL, EREMOTEIO, MiB, TOPOLOGIES, VIOMMU_BUS_ADDR


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
    kernel: str = "6.12"      # 6.12 | 6.1 | 7.3 | stock | 6.12+allow29c0 (ALLOW_Q35)
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
    # The allowlist source p2pcheck must name in the guest (check --json kernel.allowlist.source), and
    # whether the host then reads the same rows from the kernel's bzImage + System.map and a .deb of it.
    allowlist_source: str = ""
    offline_table: bool = False

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
        return self.kernel in ("6.12", "7.3", ALLOW_Q35)

    def expected(self, pair):
        """(distance, map_type) the kernel must give."""
        if self.kernel == "stock":
            return -1, "UNKNOWN"
        kind, d = self.t.pairs[pair]
        if kind == "bus":
            return d, "BUS_ADDR"
        # AMD Zen passes the host check; on the variant kernel q35's host bridge is on the allowlist.
        allowed = CPUS[self.cpu][1] or self.kernel == ALLOW_Q35
        return (d, "THRU_HOST_BRIDGE") if allowed else (-1, "NOT_SUPPORTED")


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


def _verify_intel(errno="EREMOTEIO"):
    """Intel with q35's unlisted host bridge: the switch pair passes, the root-port pair is refused, with
    `errno` (EREMOTEIO up to 6.16, EINVAL from 6.17)."""
    refused = PairExpect(outcomes=REFUSED2, refused_by="kernel", errno=errno)
    return [
        VerifyRun("rp-refused", F2 + " --size 1M --json", 1,
                  {("cmb0", "f2"): PairExpect(status="refused", text="the kernel will refuse this pair")}),
        VerifyRun("rp-try-kmod", F2 + " --size 1M --try-anyway --engine kmod --json", 1,
                  {("cmb0", "f2"): dataclasses.replace(refused, engine="kmod")},
                  watch=WatchExpect(1, "FAIL", {("cmb0", "f2"): PathExpect("refused", errno=errno)})),
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
    """7.3 (watch's 6.17+ hook, blk_rq_dma_map_iter_start): 6.12's runs by bus address in the switch, through
    the host bridge across root ports (captured after), and the storage stack's refusal on loop."""
    runs = {v.name: v for v in _verify_epyc()}
    return [runs["sw-kmod"], runs["ivsh-auto"], dataclasses.replace(runs["rp-auto"], capture_after=True), runs["loop"]]


def _verify_k73_intel():
    """7.3 on Intel: 6.12's refused runs, failing with EINVAL now, each watched, and the switch pair."""
    runs = {v.name: v for v in _verify_intel("EINVAL")}
    return [runs["rp-try-kmod"], dataclasses.replace(runs["rp-try-p2pmem"], watch=runs["rp-try-kmod"].watch),
            dataclasses.replace(runs["sw-auto"], watch=WatchExpect(0, "P2P SEEN", {("cmb0", "f1"): BUS_8M}))]


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
    # The kernel's own allowlist (issue 47): the variant allows the Intel pair through q35's host bridge,
    # p2pcheck reads that from /proc/kcore; the plain kernel (no KALLSYMS_ALL, no kcore) refuses it by 6.12's table.
    s.append(Scenario("kt-skx", "rp2", "skx", kernel=ALLOW_Q35, note="kernel's own allowlist adds 8086:29c0",
                      allowlist_source="running kernel", offline_table=True, fixture=False))
    s.append(Scenario("ktplain-skx", "rp2", "skx", note="the same pair on the plain kernel",
                      allowlist_source="table for upstream 6.12", fixture=False))
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
    # `watch -- COMMAND` counts the command's process tree: its child dd reads r1 while another dd,
    # started outside watch, reads f2 round after round (the command waits for two of its rounds).
    # Only r1 is counted; f2's reads are said to be left out, and `--replay --all` counts them.
    beside = WatchRun("tree-dd", "sh -c 'dd if=$1 of=/dev/null bs=1M count=4 iflag=direct; "
                                 "n=$(wc -l < /tmp/beside.n); i=0; "
                                 "while [ $(wc -l < /tmp/beside.n) -lt $((n + 2)) ] && [ $i -lt 60 ]; do "
                                 "sleep 1; i=$((i + 1)); done' sh {dev:r1}",
                      WatchExpect(4, "NO P2P", host=(("r1", "to_device", 4 * MiB, "dd"),), scope="command_tree",
                                  not_counted=(("f2", "dd"),)),
                      beside="while [ ! -e /tmp/beside.stop ]; do dd if={dev:f2} of=/dev/null bs=64k count=1 "
                             "iflag=direct 2>/dev/null; echo x >> /tmp/beside.n; done")
    s.append(Scenario("vfy-epyc", "vfy", "epyc", note="p2pcheck verify", verify=_verify_epyc(),
                      watch_runs=[host_dd, beside]))
    s.append(Scenario("vfy-skx", "vfy", "skx", note="p2pcheck verify", verify=_verify_intel()))
    s.append(Scenario("vfy-k61-epyc", "vfy", "epyc", kernel="6.1", note="p2pcheck verify", verify=_verify_k61()))
    s.append(Scenario("vfy-k73-epyc", "vfy", "epyc", kernel="7.3", note="p2pcheck verify and watch on 7.3",
                      verify=_verify_k73_epyc()))
    s.append(Scenario("vfy-k73-skx", "vfy", "skx", kernel="7.3", note="p2pcheck verify and watch on 7.3",
                      verify=_verify_k73_intel()))
    return {x.name: x for x in s}


SCENARIOS = _scenarios()
