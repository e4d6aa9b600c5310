#!/usr/bin/env python3
"""Writes the hostile-input corpus of tests/e2e/hostile/ and its EXPECTED list (file <TAB> pattern the
error message must match). Every file must make `p2pcheck --dump FILE check` exit 5 with a message
naming the member or file at fault, and write nothing anywhere. Standard library only, and
deterministic (fixed mtimes, fixed "random" bytes), so re-running it reproduces the committed files.

    python3 tests/e2e/hostile/make-corpus.py        # rewrites tests/e2e/hostile/*, review, commit
"""
import gzip
import io
import lzma
import os
import random
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = []


def config(vendor=0x8086, device=0x6F00, cls=0x060000, size=4096):
    c = bytearray(size)
    c[0:2] = vendor.to_bytes(2, "little")
    c[2:4] = device.to_bytes(2, "little")
    c[9:12] = cls.to_bytes(3, "little")
    return bytes(c)


def small_root(prefix="root/"):
    """A minimal captured root: one host bridge device, as (name, kind, data) members."""
    dev = "sys/devices/pci0000:00/0000:00:00.0"
    return [
        (prefix + dev + "/vendor", "file", b"0x8086\n"),
        (prefix + dev + "/device", "file", b"0x6f00\n"),
        (prefix + dev + "/class", "file", b"0x060000\n"),
        (prefix + dev + "/config", "file", config()),
        (prefix + "sys/bus/pci/devices/0000:00:00.0", "symlink", "../../../devices/pci0000:00/0000:00:00.0"),
        (prefix + "proc/cpuinfo", "file", b"processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 79\n\n"),
    ]


def tar_bytes(members, fmt=tarfile.PAX_FORMAT):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tar:
        for name, kind, data in members:
            info = tarfile.TarInfo(name)
            info.mtime = 0
            if kind == "file":
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
                continue
            if kind == "zeros":  # a file of `data` zero bytes, streamed
                info.size = data
                tar.addfile(info, ZeroReader(data))
                continue
            info.type = {"symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE, "dir": tarfile.DIRTYPE,
                         "chr": tarfile.CHRTYPE, "blk": tarfile.BLKTYPE, "fifo": tarfile.FIFOTYPE}[kind]
            if kind in ("symlink", "hardlink"):
                info.linkname = data
            tar.addfile(info)
    return buf.getvalue()


class ZeroReader(io.RawIOBase):
    def __init__(self, n):
        self.left = n

    def readinto(self, b):
        n = min(len(b), self.left)
        b[:n] = bytes(n)
        self.left -= n
        return n


def gz(data):
    return gzip.compress(data, mtime=0)


def xz(data):
    return lzma.compress(data, preset=9)


def write(name, data, pattern):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
    EXPECTED.append((name, pattern))


def main():
    rnd = random.Random(20261130)
    root = small_root()

    # Member names and kinds.
    write("absolute-name.tar", tar_bytes([("/etc/passwd", "file", b"x")]), r"absolute-name\.tar:/etc/passwd: absolute member name")
    write("dotdot-name.tar.gz", gz(tar_bytes(root + [("root/sys/../../../etc/cron.d/evil", "file", b"x")])),
          r"dotdot-name\.tar\.gz:root/sys/\.\./\.\./\.\./etc/cron\.d/evil: member name contains '\.\.'")
    write("dotdot-hardlink.tar", tar_bytes(root + [("root/sys/shadow", "hardlink", "root/../../etc/shadow")]),
          r"dotdot-hardlink\.tar:root/\.\./\.\./etc/shadow: member name contains '\.\.'")
    write("hardlink-forward.tar", tar_bytes([("root/sys/a", "hardlink", "root/sys/b")] + root),
          r"hardlink-forward\.tar:root/sys/a: hard link to a member that is not earlier")
    write("char-device.tar", tar_bytes(root + [("root/sys/kmem", "chr", None)]), r"char-device\.tar:root/sys/kmem: device node, fifo or socket")
    write("block-device.tar.xz", xz(tar_bytes(root + [("root/dev/sda", "blk", None)])), r"block-device\.tar\.xz:root/dev/sda: device node, fifo or socket")
    write("fifo.tar.gz", gz(tar_bytes(root + [("root/proc/fifo", "fifo", None)])), r"fifo\.tar\.gz:root/proc/fifo: device node, fifo or socket")

    # Links that leave the root, or never end.
    esc = [m for m in root if not m[0].endswith("devices/0000:00:00.0")]
    esc.append(("root/sys/bus/pci/devices/0000:00:00.0", "symlink", "../../../../../../../etc"))
    write("symlink-escape.tar.gz", gz(tar_bytes(esc)), r"/sys/bus/pci/devices/0000:00:00\.0: symlink to '\.\./\.\./\.\./\.\./\.\./\.\./\.\./etc' leaves the root")
    loop = [m for m in root if not m[0].endswith("devices/0000:00:00.0")]
    loop += [("root/sys/bus/pci/devices/0000:00:00.0", "symlink", "loop-a"), ("root/sys/bus/pci/devices/loop-a", "symlink", "0000:00:00.0")]
    write("symlink-loop.tar", tar_bytes(loop), r"/sys/bus/pci/devices/(0000:00:00\.0|loop-a): too many levels of symbolic links")

    # Sizes: a file far larger than any sysfs or proc file, and a compression bomb.
    write("huge-member.tar.xz", xz(tar_bytes(root + [("root/sys/huge", "zeros", 65 << 20)])),
          r"huge-member\.tar\.xz:root/sys/huge: member is 68157440 bytes; no captured file may exceed 64 MiB")
    bomb = root + [(f"root/proc/bomb{i}", "zeros", 40 << 20) for i in range(4)]
    write("bomb.tar.xz", xz(tar_bytes(bomb)), r"bomb\.tar\.xz:root/proc/bomb[0-9]+: archive expands more than 1000 times its compressed size")

    # Truncated and garbage.
    good = gz(tar_bytes(root + [("root/proc/filler", "file", bytes(rnd.getrandbits(8) for _ in range(30000)))]))
    write("truncated.tar.gz", good[: len(good) // 2], r"truncated\.tar\.gz(:root/proc/filler: cannot read member data|: broken or truncated archive|: not a readable tar archive: truncated gzip input)")
    plain = tar_bytes(root + [("root/proc/filler", "file", bytes(rnd.getrandbits(8) for _ in range(20000)))])
    write("truncated.tar", plain[: len(plain) - 12000], r"truncated\.tar(:root/proc/filler: cannot read member data|: broken or truncated archive)")
    write("garbage.bin", bytes(rnd.getrandbits(8) for _ in range(4096)), r"garbage\.bin: not a recognised dump")
    write("garbage.gz", gz(bytes(rnd.getrandbits(8) for _ in range(4096))), r"garbage\.gz: not a recognised dump")
    write("empty.tar.zst.bin", b"\x28\xb5\x2f\xfd", r"empty\.tar\.zst\.bin: (broken or truncated archive|not a readable tar archive|not a recognised dump)")

    # Well-formed archives with broken content.
    short = [m if not m[0].endswith("/config") else (m[0], "file", config(size=100)) for m in root]
    write("config-wrong-length.tar.gz", gz(tar_bytes(short)), r"/sys/devices/pci0000:00/0000:00:00\.0/config: 100 bytes; expected 4096")
    # The class file, which is always read (the IDs come from config space where it holds them).
    bad_class = [m if not m[0].endswith("/class") else (m[0], "file", b"banana\n") for m in root]
    write("class-not-hex.tar.gz", gz(tar_bytes(bad_class)), r"/sys/devices/pci0000:00/0000:00:00\.0/class: expected a hex number")
    vanished = [m for m in root if "devices/pci0000:00" not in m[0]]
    write("vanished-device.tar.gz", gz(tar_bytes(vanished)), r"/sys/bus/pci/devices/0000:00:00\.0: points at a device directory that does not exist")
    write("no-sys.tar", tar_bytes([("etc/os-release", "file", b"ID=debian\n")]), r"no-sys\.tar: no sys/ directory .* \(it holds etc\).*: ask for a `p2pcheck capture`, or `sos report -o devices,pci,kernel,processor,block`")
    manifest = b'{"schema": "p2pcheck.capture", "schema_version": 1, "unreadable": '
    write("manifest-broken.tar.gz", gz(tar_bytes(root + [("root/manifest.json", "file", manifest)])), r"/manifest\.json: not valid JSON")
    newer = b'{"schema": "p2pcheck.capture", "schema_version": 99}'
    write("manifest-newer.tar.gz", gz(tar_bytes(root + [("root/manifest.json", "file", newer)])), r"/manifest\.json: schema_version 99 is newer")

    # Imports.
    hexdump = "".join(f"{o:02x}: " + " ".join(f"{b:02x}" for b in config(size=256)[o:o + 16]) + "\n" for o in range(0, 256, 16))
    write("lspci-bad-hex.txt", ("00:00.0 Host bridge: Intel\n" + hexdump.replace("30: 00", "30: 0g")).encode(),
          r"lspci-bad-hex\.txt: line 5: malformed hex line")
    cut = "".join(hexdump.splitlines(True)[:3])
    write("lspci-cut.txt", ("00:00.0 Host bridge: Intel\n" + cut + "\n").encode(), r"lspci-cut\.txt: 0000:00:00\.0: config space dump is not 64, 256 or 4096 bytes")
    write("lspci-no-hex.txt", b"00:00.0 Host bridge: Intel Corporation Device 0d57\n00:01.0 VGA compatible controller: AMD\n",
          r"lspci-no-hex\.txt: lspci output without a config-space hex dump")
    write("udev-bad.txt", b"P: /devices/pci0000:00/0000:00:00.0\nE: SUBSYSTEM=pci\nE: PCI_ID=8086:6F00\nthis is not udev\n",
          r"udev-bad\.txt: line 4: 'this is not udev' is not 'X: value'")
    write("udev-bad-id.txt", b"P: /devices/pci0000:00/0000:00:00.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60000\nE: PCI_ID=zzzz:6F00\n\n",
          r"udev-bad-id\.txt: line 1: PCI_ID=zzzz is not the hex value udev writes")
    write("hwloc-broken.xml", b'<?xml version="1.0"?>\n<topology version="2.0">\n  <object type="Machine">\n</topology>\n',
          r"hwloc-broken\.xml: line [0-9]+: not well-formed XML")
    write("hwloc-xxe.xml", b'<?xml version="1.0"?>\n<!DOCTYPE topology [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n'
          b'<topology version="2.0"><object type="Machine"><info name="OSRelease" value="&e;"/></object></topology>\n',
          r"hwloc-xxe\.xml(: no PCI objects|: line 3: not well-formed XML: Attribute references external entity)")
    sos = [("sosreport-x/sos_commands/pci/lspci_-nnvv", "file", b"00:00.0 Host bridge [0600]: Intel [8086:6f00]\n"),
           ("sosreport-x/proc/cpuinfo", "file", b"processor\t: 0\nvendor_id\t: GenuineIntel\n")]
    write("sos-no-udev.tar.xz", xz(tar_bytes(sos)), r"sos-no-udev\.tar\.xz: sosreport without sos_commands/devices/udevadm_info_--export-db .*; it shows CPU GenuineIntel, "
          r"1 processor \(proc/cpuinfo\), lspci -nnvv of 1 PCI functions \(sos_commands/pci\); ask for `sos report -o devices,pci,kernel,processor,block`")

    with open(os.path.join(HERE, "EXPECTED"), "w") as f:
        f.write("# file<TAB>pattern (grep -E) its error message must match; written by make-corpus.py\n")
        for name, pattern in EXPECTED:
            f.write(f"{name}\t{pattern}\n")
    print(f"{len(EXPECTED)} hostile files written to {HERE}")


if __name__ == "__main__":
    main()
