#!/usr/bin/env python3
"""Writes the generated hostile inputs into OUTDIR, with OUTDIR/CASES listing each as
    file <TAB> exit code <TAB> pattern (grep -E) the output must match <TAB> arguments
where the arguments are p2pcheck's, with {} standing for the file. These are the inputs too large
to commit (a 200 KB line, a hard-link bomb) and one per class of crash the review of issue 15
found, each made here from a few lines of Python so the test shows what it feeds in. Standard
library only; tests/e2e/hostile_test.sh runs them (under ulimit -v 512 MiB where the build allows).

    python3 tests/e2e/hostile/generate.py OUTDIR
"""
import importlib.util
import io
import json
import lzma
import os
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("make_corpus", os.path.join(HERE, "make-corpus.py"))
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)
config, tar_bytes, small_root, gz = corpus.config, corpus.tar_bytes, corpus.small_root, corpus.gz

OUT = None
CASES = []
DUMP_CHECK = "--dump {} check"
DUMP_TOPO = "--dump {} topo"
ROOT_CHECK = "--root {} check"


def case(name, data, rc, pattern, args=DUMP_CHECK):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    CASES.append((name, rc, pattern, args))


def re_escape(text):
    return "".join("\\" + c if c in ".[](){}*+?|^$\\" else c for c in text)


def lspci_hex(cfg):
    return "".join(f"{o:02x}: " + " ".join(f"{b:02x}" for b in cfg[o:o + 16]) + "\n" for o in range(0, len(cfg), 16))


def gpu_config(cap_loop=False, ext_loop=False, rebar_size=None, ext_at_end=False):
    """An AMD GPU's 4096-byte config space with a PCIe capability and, optionally, a Resizable BAR
    extended capability whose control register asks for BAR size code `rebar_size`."""
    c = bytearray(config(vendor=0x1002, device=0x73BF, cls=0x030000))
    c[0x06] = 0x10  # status: capability list
    c[0x34] = 0x40
    c[0x40] = 0x10  # PCI Express
    c[0x41] = 0x40 if cap_loop else 0x00  # next: itself
    c[0x42] = 0x02  # version 2, endpoint
    ext = 0xFF8 if ext_at_end else 0x100
    nxt = ext if ext_loop else 0
    if rebar_size is not None:
        c[ext:ext + 4] = (0x0015 | 1 << 16 | nxt << 20).to_bytes(4, "little")
        if ext + 12 <= len(c):
            c[ext + 4:ext + 8] = (0xFFFFFFF0).to_bytes(4, "little")  # every size supported
            c[ext + 8:ext + 12] = (0 | 1 << 5 | rebar_size << 8).to_bytes(4, "little")  # BAR0, one BAR
        else:
            c[0x100:0x104] = (0x0015 | 1 << 16 | ext << 20).to_bytes(4, "little")
    elif ext_loop:
        c[0x100:0x104] = (0x000D | 1 << 16 | 0x100 << 20).to_bytes(4, "little")  # ACS, next: itself
    return bytes(c)


def gpu_root(cfg, extra=()):
    """A captured root holding one GPU on the root bus beside the host bridge."""
    gpu = "sys/devices/pci0000:00/0000:00:01.0"
    return small_root() + [
        ("root/" + gpu + "/vendor", "file", b"0x1002\n"),
        ("root/" + gpu + "/device", "file", b"0x73bf\n"),
        ("root/" + gpu + "/class", "file", b"0x030000\n"),
        ("root/" + gpu + "/config", "file", cfg),
        ("root/sys/bus/pci/devices/0000:00:01.0", "symlink", "../../../devices/pci0000:00/0000:00:01.0"),
    ] + list(extra)


def capture(members, manifest=None):
    if manifest is not None:
        members = members + [("root/manifest.json", "file", manifest)]
    return gz(tar_bytes(members))


def tree(name, members):
    """Writes `members` (as tar_bytes takes them) as a directory tree OUT/name/."""
    for path, kind, data in members:
        full = os.path.join(OUT, name, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if kind == "file":
            with open(full, "wb") as f:
                f.write(data)
        elif kind == "symlink":
            os.symlink(data, full)
        elif kind == "fifo":
            os.mkfifo(full)


def manifest(**fields):
    doc = {"schema": "p2pcheck.capture", "schema_version": 1, "format": "capture"}
    doc.update(fields)
    return json.dumps(doc).encode()


def udev_pci(slot, devpath=None):
    devpath = devpath or f"/devices/pci0000:00/{slot}"
    return (f"P: {devpath}\nE: SUBSYSTEM=pci\nE: PCI_CLASS=10802\nE: PCI_ID=144D:A808\n"
            f"E: PCI_SLOT_NAME={slot}\n\n")


def hardlink_bomb(links):
    """A 31 MiB file of zeros and `links` hard links to it: a few KB compressed. Each link used to
    copy the data (16 links reached 1.3 GB); now each copy counts against the archive's limits."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, kind, data in small_root():
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                info.type, info.linkname = tarfile.SYMTYPE, data
                tar.addfile(info)
        info = tarfile.TarInfo("root/proc/zeros")
        info.size = 31 << 20
        tar.addfile(info, corpus.ZeroReader(info.size))
        for i in range(links):
            link = tarfile.TarInfo(f"root/proc/link{i}")
            link.type, link.linkname = tarfile.LNKTYPE, "root/proc/zeros"
            tar.addfile(link)
    return lzma.compress(buf.getvalue(), preset=6)


def main():
    global OUT
    OUT = sys.argv[1]
    os.makedirs(OUT, exist_ok=True)
    long = 200 * 1024

    # std::regex recursed once per character (libstdc++) and overflowed the stack: SIGSEGV.
    # Format sniffing: a 65 KB first line, as text of no format and as an lspci device line.
    case("sniff-long-line.txt", b"a" * (65 * 1024) + b"\nmore\n", 5, r"sniff-long-line\.txt: not a recognised dump")
    case("sniff-long-device-line.txt", b"00:00.0 Host bridge: " + b"x" * (65 * 1024) + b"\n", 5,
         r"sniff-long-device-line\.txt: lspci output without a config-space hex dump")
    # lspci: a 200 KB device line is valid (the name is free text); a 200 KB hex line is not.
    hexdump = lspci_hex(config(size=256))
    case("lspci-long-device-line.txt", ("00:00.0 Host bridge: " + "x" * long + "\n" + hexdump).encode(), 0,
         r"0000:00:00\.0 \[8086:6f00\]", DUMP_TOPO)
    case("lspci-long-hex-line.txt", ("00:00.0 Host bridge: Intel\n" + hexdump + "00: " + "00 " * (long // 3) + "\n").encode(),
         5, r"lspci-long-hex-line\.txt: line 18: malformed hex line")
    case("lspci-long-driver-line.txt",
         ("00:00.0 Host bridge: Intel\n" + hexdump + "\tKernel driver in use: " + "d" * long + "\n").encode(), 0,
         r"0000:00:00\.0 \[8086:6f00\]", DUMP_TOPO)
    # udev: an 80 KB device path, in a PCI record and in an NVMe controller's.
    case("udev-long-path.txt", (udev_pci("0000:00:00.0") +
                                udev_pci("0000:00:01.0", "/devices/pci0000:00/" + "a" * (80 * 1024) + "/0000:00:01.0")).encode(),
         5, r"udev-long-path\.txt: line 7: device path of [0-9]+ bytes")
    case("udev-long-nvme-path.txt", (udev_pci("0000:00:00.0") + "P: /devices/pci0000:00/" + "b" * (80 * 1024) + "/" +
                                     "0000:00:00.0/nvme/nvme0\nE: SUBSYSTEM=nvme\n\n").encode(), 5,
         r"udev-long-nvme-path\.txt: line 7: device path of [0-9]+ bytes")
    # A kernel config line of 200 KB in a capture is odd but valid: it still parses, and the
    # CONFIG_PCI_P2PDMA line after it counts.
    release = "6.8.0-45-generic"
    cfg_text = ("CONFIG_LONG=" + "y" * long + "\nCONFIG_" + "A" * long + "=y\nCONFIG_PCI_P2PDMA=y\n").encode()
    case("config-long-line.tar.gz", capture(small_root() + [
        ("root/proc/sys/kernel/osrelease", "file", (release + "\n").encode()),
        (f"root/boot/config-{release}", "file", cfg_text)]), 4, r"PASS +CONFIG_PCI_P2PDMA=y", "--dump {} check -v")
    # A sosreport's lsmod with a 200 KB line, and a 4000-digit /proc/<pid> directory name.
    sos_db = udev_pci("0000:00:00.0").replace("PCI_CLASS=10802", "PCI_CLASS=60000").replace("144D:A808", "8086:6F00")
    sos = [("sosreport-x/sos_commands/devices/udevadm_info_--export-db", "file", sos_db.encode()),
           ("sosreport-x/proc/cpuinfo", "file", b"processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n\n"),
           ("sosreport-x/sos_commands/kernel/lsmod", "file",
            b"Module Size Used by\n" + b"m" * long + b" 1 0\nnvme 1 0\n"),
           ("sosreport-x/proc/" + "1" * 4000 + "/status", "file", b"x")]
    case("sos-long-lines.tar.xz", lzma.compress(tar_bytes(sos)), 0, r"0000:00:00\.0 \[8086:6f00\]", DUMP_TOPO)
    # Refusals say what the input showed and what to ask for (issue 50): a sosreport whose udev
    # database has no PCI device, and a /proc/cpuinfo alone.
    sos_no_pci = [("sosreport-x/sos_commands/devices/udevadm_info_--export-db", "file",
                   b"P: /devices/virtual/input/input0\nE: SUBSYSTEM=input\n\n"),
                  ("sosreport-x/sos_commands/kernel/uname_-a", "file", b"Linux node7 6.8.0-45-generic #45 SMP x86_64\n"),
                  ("sosreport-x/proc/cpuinfo", "file", b"processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n\n")]
    case("sos-no-pci.tar.xz", lzma.compress(tar_bytes(sos_no_pci)), 5,
         r"sos-no-pci\.tar\.xz: its sos_commands/devices/udevadm_info_--export-db holds 1 records and no PCI device "
         r"that could be read; it shows kernel 6\.8\.0-45-generic \(uname -a\), CPU GenuineIntel family 6, "
         r"1 processor \(proc/cpuinfo\); ask for `sos report -o devices,pci,kernel,processor,block` run as root")
    case("cpuinfo-alone.txt", b"processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
         b"model name\t: AMD EPYC 9654\n\nprocessor\t: 1\n\n", 5,
         r"cpuinfo-alone\.txt: /proc/cpuinfo alone describes no PCI devices \(it shows CPU AuthenticAMD family 25 model 17 "
         r"\(AMD EPYC 9654\), 2 processors\): ask for `sudo lspci -xxxx` and `lspci -tv`")
    # Records of one kind left out, one line: the count, the first subjects (issue 50).
    odd = udev_pci("0000:00:00.0").replace("E: PCI_CLASS", "odd one\nE: PCI_CLASS").replace("E: PCI_ID", "odd two\nE: PCI_ID")
    case("udev-odd-lines.txt", odd.replace("E: PCI_SLOT", "odd three\nE: PCI_SLOT").encode(), 4,
         r"left out: 3 lines are not 'X: value' as udevadm info --export-db prints them: line 3 line 5 line 7$", DUMP_CHECK)

    # nlohmann's type_error escaped main (std::terminate, exit 134): manifest members of the wrong
    # type, recorded live/*.json members of the wrong type, and JSON nested too deep to copy.
    root = small_root()
    case("manifest-schema-number.tar.gz", capture(root, b'{"schema": 5, "schema_version": 1}'), 5,
         r"manifest\.json: schema: expected a string, found a number 5")
    case("manifest-format-number.tar.gz", capture(root, manifest(format=7)), 5,
         r"manifest\.json: format: expected a string, found a number 7")
    # Only the plan door makes a plan's manifest: a dump whose manifest calls itself a plan (to take
    # a title and "not in a plan" areas) is refused, not shown as a planned server.
    case("manifest-says-plan.tar.gz",
         capture(root, manifest(format="plan", title="planned server from ok.toml", plan={"file": "ok.toml"})), 5,
         r"manifest-says-plan\.tar\.gz: its manifest\.json says format \"plan\"; expected a capture's manifest")
    case("manifest-version-string.tar.gz", capture(root, manifest(schema_version="1")), 5,
         r"manifest\.json: schema_version: expected an integer")
    case("manifest-notes-numbers.tar.gz", capture(root, manifest(notes=[1, 2])), 5,
         r"manifest\.json: notes: expected an array of strings")
    case("manifest-unreadable-status.tar.gz", capture(root, manifest(unreadable={"/proc/x": {"status": 3}})), 5,
         r"manifest\.json: unreadable\./proc/x\.status: expected a string")
    case("manifest-deep.tar.gz", capture(root, manifest()[:-1] + b', "source": ' + b"[" * 100000 + b"]" * 100000 + b"}"), 5,
         r"manifest\.json: JSON nested deeper than 64 levels")
    kmod = {"schema": "p2pcheck.kmod", "module": {"api_version": "3"}}
    case("kmod-api-version-string.tar.gz", capture(root + [("root/live/kmod.json", "file", json.dumps(kmod).encode())],
                                                   manifest()), 5,
         r"/live/kmod\.json: module\.api_version: expected an integer from 0 to [0-9]+, found a string \"3\"")
    kmod = {"schema": "p2pcheck.kmod", "verdicts": [{"provider": "0000:00:00.0", "client": "0000:00:00.0",
                                                     "distance": "far"}]}
    case("kmod-distance-string.tar.gz", capture(root + [("root/live/kmod.json", "file", json.dumps(kmod).encode())],
                                                manifest()), 5,
         r"/live/kmod\.json: verdicts\[0\]\.distance: expected an integer")
    verify = {"schema": "p2pcheck.verify", "summary": 5, "pairs": []}
    case("verify-summary-number.tar.gz", capture(root + [("root/live/verify.json", "file", json.dumps(verify).encode())],
                                                 manifest()), 5,
         r"/live/verify\.json: summary: expected a string, found a number 5")

    # Found by tests/e2e/memory_limit_test.py: a 2 KB archive of a 31 MiB "[0,0,...]" manifest (or
    # live/kmod.json) aborted with std::bad_alloc under 512 MiB, and 31 MiB of /proc/mounts lines
    # ran out of memory too. Outside JSON is now refused past 2^20 values, and procfs tables past
    # 100000 lines; these are just past each limit.
    many = b"[" + b"0," * (1 << 20) + b"0]"
    case("manifest-many-values.tar.gz", capture(root, manifest()[:-1] + b', "notes": ' + many + b"}"), 5,
         r"manifest\.json: JSON of more than 1048576 values")
    case("kmod-many-values.tar.gz", capture(root + [("root/live/kmod.json", "file", many)], manifest()), 5,
         r"/live/kmod\.json: JSON of more than 1048576 values")
    case("mounts-many-lines.tar.gz", capture(root + [("root/proc/mounts", "file", b"/dev/sda1 / ext4 rw 0 0\n" * 100001)]), 5,
         r"/proc/mounts: 100001 lines; no machine's has more than 100000")

    # Found by fuzzing in CI (fuzz_dump, libFuzzer's 10 s timeout): a 6 KB tar.gz of 99,884 mount lines,
    # within the limit, took 2.2 s under ASan (a string per line and per word; CI's load made it 15 s).
    # Rows are now views, so this reads as a table at its limit should: quickly, and to the end.
    case("mounts-at-line-limit.tar.gz", capture(root + [("root/proc/mounts", "file", b"/dev/sda1 / ext4 rw 0 0\n" * 100000)]),
         4, r"RESULT: NO PAIRS")
    # /proc/cmdline past what a kernel can print (1 MiB on s390 plus bootconfig's 64 KiB); it was
    # parsed once per device with ACS.
    case("cmdline-too-long.tar.gz", capture(root + [("root/proc/cmdline", "file", b"pci=disable_acs_redir=" + b"0:1.0;" * 200000)]),
         5, r"/proc/cmdline: 1200022 bytes; a kernel's command line is at most 1114120")
    config_lines = b"".join(b"CONFIG_X%d=y\n" % i for i in range(100001))
    case("config-many-lines.tar.gz", capture(root + [("root/proc/config.gz", "file", gz(config_lines))]), 5,
         r"/proc/config\.gz: 100001 lines; no machine's has more than 100000")

    # nlohmann's ordered objects search every key before each new one: a 3 MB manifest naming 100,000
    # unreadable files took a minute to parse (1M, within the value limit: hours). Objects are now
    # refused past 2^15 members; this one is just past it.
    wide = manifest(unreadable={f"/x/{i}": {"status": "denied"} for i in range((1 << 15) + 1)})
    case("manifest-wide-object.tar.gz", capture(root, wide), 5,
         r"manifest\.json: JSON object of more than 32768 members")

    # Found by fuzzing (fuzz_dump): a tar.gz without its 8-byte gzip trailer made libarchive fail a
    # data read with no error text, and appending that null string crashed p2pcheck (SIGSEGV).
    case("gzip-no-trailer.tar.gz", gz(tar_bytes(small_root() + [("root/proc/filler", "file", b"x" * 100000)]))[:-8], 5,
         r"gzip-no-trailer\.tar\.gz:root/proc/filler: cannot read member data: ")

    # PCI addresses with device 0x20 and above: shaped like one, but not one.
    case("udev-device-0x20.txt", udev_pci("0000:00:20.0").encode(), 5,
         r"udev-device-0x20\.txt: line 1: PCI device '0000:00:20\.0' is not named by a PCI address")
    case("udev-nvme-under-0x20.txt", (udev_pci("0000:00:00.0") +
                                      "P: /devices/pci0000:00/0000:00:20.0/nvme/nvme0\nE: SUBSYSTEM=nvme\n\n").encode(), 4,
         r"left out: .*udev-nvme-under-0x20\.txt: line 7: NVMe controller nvme0 below '0000:00:20\.0', which is not a PCI address")
    case("lspci-device-0x20.txt", ("00:20.0 Host bridge: Intel\n" + hexdump).encode(), 5,
         r"lspci-device-0x20\.txt: line 1: '00:20\.0' is not a PCI address")

    # Odd records real dumps carry (issue 32): each costs its record, with a note; the machine is
    # still judged. A bare line udev wrote itself inside a record, a device without its hex dump, a
    # row cut short, and an nvidia-bug-report cut in the middle of its lspci section.
    case("udev-bare-line.txt", (udev_pci("0000:00:00.0")[:-1] + "MODALIAS=hid:b0003g0001v0000046Dp0000C52B\n\n" +
                                udev_pci("0000:00:01.0")).encode(), 4,
         r"left out: .*udev-bare-line\.txt: line 6: 'MODALIAS=hid:b0003g0001v0000046Dp0000C52B' is not 'X: value'",
         DUMP_CHECK)
    case("lspci-device-without-hex.txt", ("00:00.0 Host bridge: Intel\n" + hexdump + "\n00:01.0 VGA: no hex\n\n").encode(),
         0, r"left out: .*lspci-device-without-hex\.txt: line 19: 0000:00:01\.0 has no config space dump", DUMP_TOPO)
    cut_row = hexdump.splitlines()
    cut_row[5] = cut_row[5][:20]
    case("lspci-row-cut.txt", ("00:00.0 Host bridge: Intel\n" + hexdump + "00:01.0 Ethernet: Intel\n" +
                               "\n".join(cut_row) + "\n").encode(),
         0, r"left out: .*lspci-row-cut\.txt: line 24: malformed hex line", DUMP_TOPO)
    sos_bad = [("sosreport-x/sos_commands/devices/udevadm_info_--export-db", "file",
                b"P: /devices/pci0000:00/0000:00:00.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60000\nE: PCI_ID=8086:6F00\n"
                b"E: PCI_SLOT_NAME=0000:00:00.0\n\n"),
               ("sosreport-x/proc/bus/pci/00/00.0", "file", config(size=100))]
    case("sos-bad-config.tar.xz", corpus.xz(tar_bytes(sos_bad)), 0,
         r"left out: .*sos-bad-config\.tar\.xz:proc/bus/pci/00/00\.0: 100 bytes; expected 4096, 256 or 64 bytes", DUMP_TOPO)
    rule = "_" * 44
    report = (f"{rule}\n\nStart of NVIDIA bug report log file.  Please include this file, along\n\n"
              "uname: Linux node7 6.8.0-90-generic #91 SMP x86_64 GNU/Linux\n\n"
              f"{rule}\n\n/usr/bin/lspci -nnDvvvxxxx\n\n0000:00:00.0 Host bridge [0600]: Intel\n" + hexdump +
              "\n0000:00:01.0 Ethernet controller [0200]: Intel\n" + hexdump[:150])
    case("nvidia-bug-report-cut.log", report.encode(), 0,
         r"left out: .*nvidia-bug-report-cut\.log: line 3[0-9]: malformed hex line .* for 0000:00:01\.0", DUMP_TOPO)

    # Shifts and sizes from config space: ReBAR size code 63 (1 << 83 was undefined), reserved
    # code 44, capability lists that point at themselves, a ReBAR capability at the very end of
    # config space, an absurd link speed and BAR ranges that run backwards or wrap.
    for code in (63, 44):
        case(f"rebar-size-{code}.tar.gz", capture(gpu_root(gpu_config(rebar_size=code))), 0, r"0000:00:01\.0 \[1002:73bf\]",
             DUMP_TOPO)
    case("rebar-size-19.tar.gz", capture(gpu_root(gpu_config(rebar_size=19))), 4, r"Resizable BAR0: current 512 GiB",
         "--dump {} check --json")
    case("cap-loop.tar.gz", capture(gpu_root(gpu_config(cap_loop=True, ext_loop=True))), 0,
         r"0000:00:01\.0 \[1002:73bf\]", DUMP_TOPO)
    case("rebar-at-end.tar.gz", capture(gpu_root(gpu_config(rebar_size=5, ext_at_end=True))), 0,
         r"0000:00:01\.0 \[1002:73bf\]", DUMP_TOPO)
    gpu = "root/sys/devices/pci0000:00/0000:00:01.0/"
    odd = [(gpu + "current_link_speed", "file", b"1e300 GT/s PCIe\n"), (gpu + "max_link_speed", "file", b"nan GT/s\n"),
           (gpu + "resource", "file", b"0x0000000000001000 0x0000000000000fff 0x0000000000040200\n"
                                      b"0x0000000000000000 0xffffffffffffffff 0x0000000000040200\n")]
    # A namespace of 2^54 sectors: its byte size (times 512) overflowed a signed 64-bit integer.
    nvme = "sys/devices/pci0000:00/0000:00:02.0"
    huge_ns = small_root() + [
        ("root/" + nvme + "/vendor", "file", b"0x144d\n"), ("root/" + nvme + "/device", "file", b"0xa808\n"),
        ("root/" + nvme + "/class", "file", b"0x010802\n"),
        ("root/" + nvme + "/config", "file", config(vendor=0x144D, device=0xA808, cls=0x010802)),
        ("root/sys/bus/pci/devices/0000:00:02.0", "symlink", "../../../devices/pci0000:00/0000:00:02.0"),
        ("root/" + nvme + "/nvme/nvme0/device", "symlink", "../../../0000:00:02.0"),
        ("root/" + nvme + "/nvme/nvme0/nvme0n1/size", "file", b"18014398509481984\n"),
        ("root/sys/class/nvme/nvme0", "symlink", "../../devices/pci0000:00/0000:00:02.0/nvme/nvme0"),
        ("root/sys/block/nvme0n1", "symlink", "../devices/pci0000:00/0000:00:02.0/nvme/nvme0/nvme0n1")]
    case("nvme-size-overflow.tar.gz", capture(huge_ns), 0, r"nvme0n1 size unknown", DUMP_TOPO)
    # 64 bytes of config space (a capture without root), so the link files are read, not decoded.
    case("odd-link-and-bars.tar.gz", capture(gpu_root(gpu_config()[:64], odd)), 0, r"0000:00:01\.0 \[1002:73bf\]",
         DUMP_TOPO)

    # Member names and link targets longer than Linux allows (PATH_MAX): the tree built from them
    # would cost their length squared.
    case("long-member-name.tar.gz", gz(tar_bytes(small_root() + [("root/sys/" + "d/" * 50000 + "f", "file", b"x")])), 5,
         r"long-member-name\.tar\.gz:root/sys/d/d/.*: member name of 100010 bytes")
    case("long-link-target.tar.gz", gz(tar_bytes(small_root() + [("root/sys/l", "symlink", "a/" * 50000)])), 5,
         r"long-link-target\.tar\.gz:root/sys/l: symlink target of 100000 bytes")

    # Hard links copied their target per link while the limits counted only the stream: 16 links
    # to a 31 MiB file in a few KB of xz reached 1.3 GB. Now each copy counts; the run is refused
    # at the first copy that makes the archive a bomb (and runs under ulimit -v 512 MiB).
    case("hardlink-bomb.tar.xz", hardlink_bomb(200), 5,
         r"hardlink-bomb\.tar\.xz:root/proc/link0: archive expands more than 1000 times its compressed size")

    # Directory trees (--root, an unpacked sosreport): links that climb out, absolute links (inside
    # the root, as in a chroot), fifos that would block a read, a sosreport whose proc/ is a link
    # to the host's /proc. Everything is opened through the root's descriptor without following
    # links, so none of it reaches the host.
    esc = [m for m in small_root() if not m[0].endswith("devices/0000:00:00.0")]
    tree("root-symlink-escape", esc + [("root/sys/bus/pci/devices/0000:00:00.0", "symlink", "../../../../../../../etc")])
    CASES.append(("root-symlink-escape/root", 5, r"/sys/bus/pci/devices/0000:00:00\.0: symlink to '(\.\./)+etc' leaves the root",
                  ROOT_CHECK))
    tree("root-absolute-link", esc + [("root/sys/bus/pci/devices/0000:00:00.0", "symlink", "/etc"),
                                      ("root/etc/os-release", "file", b"ID=debian\n")])
    CASES.append(("root-absolute-link/root", 5, r"p2pcheck: /etc/vendor: missing; every PCI function has it",
                  ROOT_CHECK))
    tree("root-fifo", [m for m in small_root() if not m[0].endswith("cpuinfo")] + [("root/proc/cpuinfo", "fifo", None)])
    CASES.append(("root-fifo/root", 4, r"no GPU", ROOT_CHECK))
    tree("sos-dir", [(n.replace("sosreport-x", "root"), k, d) for n, k, d in sos[:1]] +
         [("root/proc", "symlink", "/proc"), ("root/etc", "symlink", "../../../../../../../../etc"),
          ("root/sos_commands/kernel/lsmod", "fifo", None)])
    CASES.append(("sos-dir/root", 0, r"0000:00:00\.0 \[8086:6f00\]", DUMP_TOPO))

    with open(os.path.join(OUT, "CASES"), "w") as f:
        for name, rc, pattern, args in CASES:
            f.write(f"{name}\t{rc}\t{pattern}\t{args}\n")
    print(f"{len(CASES)} generated hostile inputs in {OUT}")


if __name__ == "__main__":
    main()
