#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target into OUTDIR/<target>/, made at test time from what
the repository already holds (nothing generated is committed): the QEMU lab captures
(fixtures/lab/*/*.tar.zst, real kernel-made trees), the fixture machines (tools/mkfixture.py),
the real imports (tests/e2e/imports/real), and the hostile inputs (tests/e2e/hostile, committed and
generated). Seeds are named by their SHA-1, as libFuzzer names what it adds.

    python3 tests/fuzz/seeds.py OUTDIR
"""
import bz2
import gzip
import hashlib
import importlib.util
import io
import lzma
import os
import subprocess
import sys
import tarfile
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOSTILE = os.path.join(REPO, "tests", "e2e", "hostile")
REAL = os.path.join(REPO, "tests", "e2e", "imports", "real")
LAB = os.path.join(REPO, "fixtures", "lab")
# Inputs past this are not what fuzzing learns from (libFuzzer's -max_len is smaller); bigger
# files still seed the targets cut to this size.
MAX_SEED = 256 * 1024

seeds = {}


def seed(target, data):
    if isinstance(data, str):
        data = data.encode()
    data = data[:MAX_SEED]
    seeds.setdefault(target, {})[hashlib.sha1(data).hexdigest()] = data


def read(path):
    with open(path, "rb") as f:
        return f.read()


def unpack(data):
    """Decompressed bytes of gzip, xz, bzip2 or zstd data; the bytes themselves otherwise (and
    for the hostile inputs that only look compressed)."""
    try:
        if data[:2] == b"\x1f\x8b":
            return gzip.decompress(data)
        if data[:6] == b"\xfd7zXZ\x00":
            return lzma.decompress(data)
        if data[:3] == b"BZh":
            return bz2.decompress(data)
        if data[:4] == b"\x28\xb5\x2f\xfd":
            return subprocess.run(["zstd", "-dcq"], input=data, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  check=True).stdout
    except (OSError, EOFError, lzma.LZMAError, subprocess.CalledProcessError):
        pass
    return data


def members(tar_data):
    """(name, TarInfo, bytes or None) of a tar's members, or [] when it is not a tar."""
    try:
        with tarfile.open(fileobj=io.BytesIO(tar_data)) as tar:
            return [(m.name, m, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]
    except (tarfile.TarError, EOFError, OSError):
        return []


def tar_of(entries):
    """An uncompressed tar of (TarInfo, bytes or None) entries, in order."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def trimmed_capture(entries, devices=2):
    """A capture cut to its manifest, /proc, /boot, /etc, live/ and the first `devices` PCI
    functions with the bus links to them: a few dozen members, small enough to mutate."""
    keep, kept_devices = [], []
    for name, info, data in entries:
        rel = name.split("/", 1)[1] if "/" in name else ""
        if rel.startswith("sys/bus/pci/devices/") and rel.count("/") == 4:
            if len(kept_devices) >= devices:
                continue
            kept_devices.append(os.path.basename(info.linkname))
        keep.append((name, info, data))
    out = []
    for name, info, data in keep:
        rel = name.split("/", 1)[1] if "/" in name else ""
        if rel.startswith("sys/devices/") and not any(d in rel for d in kept_devices) and not info.isdir():
            continue
        if info.isdir():
            continue
        out.append((info, data))
    return tar_of(out)


def lab_captures():
    for scenario in sorted(os.listdir(LAB)):
        path = os.path.join(LAB, scenario, scenario + ".tar.zst")
        if os.path.exists(path):
            yield scenario, path


def from_captures():
    for i, (scenario, path) in enumerate(lab_captures()):
        packed = read(path)
        entries = members(unpack(packed))
        files = {name.split("/", 1)[1]: data for name, info, data in entries if data is not None and "/" in name}
        if i < 3:
            seed("dump", packed)
            small = trimmed_capture(entries)
            seed("dump", small)
            seed("dump", gzip.compress(small, mtime=0))
            seed("archive", small)
            seed("archive", lzma.compress(small))
        for rel, data in files.items():
            if rel.endswith("/config") and rel.startswith("sys/devices/"):
                seed("pci_config", data)
            elif rel.startswith("sys/") and len(data) < 64 and i < 2:
                seed("sysfs_text", data)
        for rel, target in (("proc/cmdline", "cmdline"), ("proc/cpuinfo", "cpuinfo"), ("proc/mounts", "mounts"),
                            ("etc/os-release", "os_release"), ("manifest.json", "manifest")):
            if rel in files:
                seed(target, files[rel])
        if "proc/config.gz" in files:
            seed("kconfig_gz", files["proc/config.gz"])
            config = gzip.decompress(files["proc/config.gz"])
            seed("kconfig", config)
            wanted = (b"CONFIG_PCI", b"CONFIG_IOMMU", b"CONFIG_AMD", b"CONFIG_HSA", b"CONFIG_DRM_AMD", b"CONFIG_ZONE",
                      b"CONFIG_MEMORY_HOTPLUG", b"CONFIG_DMABUF", b"CONFIG_BLK")
            small = b"".join(line + b"\n" for line in config.splitlines() if line.startswith(wanted))
            seed("kconfig", small)
            seed("kconfig_gz", gzip.compress(small, mtime=0))
        for rel, data in files.items():
            if rel == "live/kmod.json":
                seed("live_json", b"\x00" + data)
            elif rel == "live/verify.json":
                seed("live_json", b"\x01" + data)


def from_fixtures(tmp):
    out = os.path.join(tmp, "fixtures")
    subprocess.run([sys.executable, os.path.join(REPO, "tools", "mkfixture.py"), "--all", "--out", out],
                   check=True, stdout=subprocess.DEVNULL)
    for name in sorted(os.listdir(out)):
        root = os.path.join(out, name, "root")
        for rel, target in (("proc/cmdline", "cmdline"), ("proc/cpuinfo", "cpuinfo"), ("proc/mounts", "mounts"),
                            ("etc/os-release", "os_release"), ("usr/lib/os-release", "os_release")):
            if os.path.isfile(os.path.join(root, rel)):
                seed(target, read(os.path.join(root, rel)))
        boot = os.path.join(root, "boot")
        for f in sorted(os.listdir(boot)) if os.path.isdir(boot) else []:
            if f.startswith("config-"):
                seed("kconfig", read(os.path.join(boot, f)))
                seed("kconfig_gz", gzip.compress(read(os.path.join(boot, f)), mtime=0))
        nodes = os.path.join(root, "sys/class/kfd/kfd/topology/nodes")
        for node in sorted(os.listdir(nodes)) if os.path.isdir(nodes) else []:
            d = os.path.join(nodes, node)
            parts = [os.path.join(d, "properties"), os.path.join(d, "mem_banks/0/properties"),
                     os.path.join(d, "io_links/0/properties")]
            seed("kfd", b"\x00".join(read(p) if os.path.isfile(p) else b"" for p in parts))
        for dirpath, _, filenames in os.walk(os.path.join(root, "sys/devices")):
            if "config" in filenames:
                seed("pci_config", read(os.path.join(dirpath, "config")))


def from_imports():
    for f in sorted(os.listdir(REAL)):
        path = os.path.join(REAL, f)
        if not os.path.isfile(path):
            continue
        packed = read(path)
        seed("dump", packed)
        plain = unpack(packed)
        if f.startswith("lspci"):
            seed("lspci", plain)
        elif f.startswith("udev"):
            seed("udev", plain)
        elif f.startswith("hwloc"):
            seed("hwloc", plain)
        elif f.startswith("sosreport"):
            seed("sosreport", plain)
        elif f.startswith("capture"):
            for name, info, data in members(plain):
                if name.endswith("/manifest.json"):
                    seed("manifest", data)
    bundle = os.path.join(REAL, "bundle")
    if os.path.isdir(bundle):
        lspci, tree, cpuinfo = (read(os.path.join(bundle, f)) for f in ("lspci-xxxx.txt", "lspci-tv.txt", "cpuinfo"))
        seed("lspci", lspci + b"\x00" + tree + b"\x00" + cpuinfo)
        seed("lspci", lspci + b"\x00\x00" + cpuinfo)
        seed("cpuinfo", cpuinfo)
        for data in (lspci, tree, cpuinfo):
            seed("dump", data)


def from_hostile(tmp):
    gen = os.path.join(tmp, "hostile")
    subprocess.run([sys.executable, os.path.join(HOSTILE, "generate.py"), gen], check=True, stdout=subprocess.DEVNULL)
    spec = importlib.util.spec_from_file_location("hostile_generate", os.path.join(HOSTILE, "generate.py"))
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    for cfg in (generate.gpu_config(), generate.gpu_config(cap_loop=True, ext_loop=True),
                generate.gpu_config(rebar_size=19), generate.gpu_config(rebar_size=5, ext_at_end=True)):
        seed("pci_config", cfg)
    files = [os.path.join(HOSTILE, f) for f in sorted(os.listdir(HOSTILE))
             if f not in ("EXPECTED", "generate.py", "make-corpus.py")]
    files += [os.path.join(gen, f) for f in sorted(os.listdir(gen)) if os.path.isfile(os.path.join(gen, f))
              and f != "CASES"]
    for path in files:
        name = os.path.basename(path)
        data = read(path)
        if len(data) > MAX_SEED:
            continue
        seed("dump", data)
        if name.startswith("lspci"):
            seed("lspci", data)
        elif name.startswith("udev"):
            seed("udev", data)
        elif name.startswith("hwloc"):
            seed("hwloc", data)
        plain = unpack(data)
        entries = members(plain)
        if not entries:
            continue
        seed("archive", data)
        if name.startswith("sos"):
            seed("sosreport", plain)
        for member, info, content in entries:
            if content is None:
                continue
            if member.endswith("manifest.json"):
                seed("manifest", content)
            elif member.endswith("live/kmod.json"):
                seed("live_json", b"\x00" + content)
            elif member.endswith("live/verify.json"):
                seed("live_json", b"\x01" + content)
            elif member.endswith("/config"):
                seed("pci_config", content)


def from_plans_and_reports():
    """Plans (fixtures/plans) for `plan`; the fixtures' and lab's saved check --json for `saved_report`."""
    plans = os.path.join(REPO, "fixtures", "plans")
    for f in sorted(os.listdir(plans)):
        if f.endswith(".toml"):
            seed("plan", read(os.path.join(plans, f)))
    seed("plan", b"[cpu]\nvendor = 'AuthenticAMD'\nfamily = 0x19\n[a.b.c]\nd = { e.f = 1 }\n")
    for dirpath, _, filenames in sorted(os.walk(os.path.join(REPO, "fixtures"))):
        if os.path.basename(dirpath) == "expected" and "check.json" in filenames:
            data = read(os.path.join(dirpath, "check.json"))
            if len(data) <= MAX_SEED:
                seed("saved_report", data)


def from_btf():
    """The saved BTF of real kernels (tests/live/btf) for `btf`; mounts with a mountinfo (NUL between)."""
    btf = os.path.join(REPO, "tests", "live", "btf")
    for f in sorted(os.listdir(btf)):
        if f.endswith(".btf"):
            seed("btf", read(os.path.join(btf, f)))
    seed("mounts", b"/dev/root / ext4 rw 0 0\ntmpfs /run tmpfs rw 0 0\n\0"
                   b"22 1 259:2 / / rw - ext4 /dev/root rw\n23 22 0:25 / /run rw - tmpfs tmpfs rw\n")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        from_captures()
        from_fixtures(tmp)
        from_imports()
        from_hostile(tmp)
        from_plans_and_reports()
        from_btf()
    for word in ("0x1002", "0x030000", "16.0 GT/s PCIe", "8.0 GT/s", "2.5 GT/s PCIe", "Unknown", "-1", "0000:41:00.0",
                 "41:00.0", "nvme0c1n1", "nvme0n1p2", "6.8.0-142-generic", "2026-11-30T09:13:54Z",
                 "BOOT_IMAGE=/vmlinuz root=/dev/sda1 iommu=pt amd_iommu=on pci=disable_acs_redir=0000:00:01.1"):
        seed("sysfs_text", word)
    seed("os_release", 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n')
    seed("os_release", 'NAME="Red Hat Enterprise Linux"\nID="rhel"\nID_LIKE="fedora"\nVERSION_ID="9.8"\n')
    total = 0
    for target, files in sorted(seeds.items()):
        d = os.path.join(out, target)
        os.makedirs(d, exist_ok=True)
        for digest, data in files.items():
            with open(os.path.join(d, digest), "wb") as f:
                f.write(data)
        total += len(files)
    print(f"{total} seeds for {len(seeds)} targets in {out}: " +
          ", ".join(f"{t} {len(f)}" for t, f in sorted(seeds.items())))


if __name__ == "__main__":
    main()
