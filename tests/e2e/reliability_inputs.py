#!/usr/bin/env python3
"""Inputs of issue 48's classes, written from a generated fixture tree (tests/e2e/reliability_test.sh,
bench/container_host.sh). Each copies ROOT (storage-stacks: nvme1n1p3 holds an xfs file system) to DST
and adds what a real machine or a hostile dump holds:

    reliability_inputs.py bind ROOT DST N       N bind mounts of nvme1n1p3 (a Kubernetes node's kubelet volumes)
    reliability_inputs.py absent ROOT DST N     N mounts of /dev devices sysfs lacks
    reliability_inputs.py tmpfs ROOT DST N B    N tmpfs mounts, each in mountinfo, and B more block devices
    reliability_inputs.py diamond ROOT DST L W  L layers of W device-mapper devices, each over every one below
    reliability_inputs.py links ROOT DST        40 links that expand to 79,560 path components
    reliability_inputs.py plan OUT G N          a plan of G GPUs and N NVMe drives (G + N <= 2048)
    reliability_inputs.py btf OUT OFFSET        BTF whose one struct member's name is at OFFSET
"""
import os
import shutil
import sys


def copy(root, dst):
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(root, dst, symlinks=True)


def base_mounts(dst):
    return open(os.path.join(dst, "proc/mounts")).read().splitlines()


def write_mounts(dst, lines):
    with open(os.path.join(dst, "proc/mounts"), "w") as f:
        f.write("\n".join(lines) + "\n")


def bind(root, dst, n):
    copy(root, dst)
    extra = [f"/dev/nvme1n1p3 /var/lib/kubelet/pods/{i:08x}-5e4c-4f0a-9d1e/volumes/kubernetes.io~local-volume/pv-{i} "
             "xfs rw,relatime,attr2,inode64,logbufs=8,logbsize=32k,noquota 0 0" for i in range(n)]
    write_mounts(dst, base_mounts(dst) + extra)


def absent(root, dst, n):
    copy(root, dst)
    write_mounts(dst, base_mounts(dst) + [f"/dev/sdx{i} /mnt/absent/{i} ext4 rw,relatime 0 0" for i in range(n)])


def block_device(dst, name, majmin, slaves=(), dm_name=None):
    """A virtual block device in /sys/devices/virtual/block with /sys/block and /sys/class/block links."""
    d = os.path.join(dst, "sys/devices/virtual/block", name)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "dev"), "w").write(majmin + "\n")
    if dm_name:
        os.makedirs(os.path.join(d, "dm"), exist_ok=True)
        open(os.path.join(d, "dm/name"), "w").write(dm_name + "\n")
        open(os.path.join(d, "dm/uuid"), "w").write(f"CRYPT-PLAIN-{dm_name}\n")
    for s in slaves:
        os.makedirs(os.path.join(d, "slaves"), exist_ok=True)
        os.symlink(f"../../{s}", os.path.join(d, "slaves", s))
        below = os.path.join(dst, "sys/devices/virtual/block", s, "holders")
        if os.path.isdir(os.path.dirname(below)):
            os.makedirs(below, exist_ok=True)
            os.symlink(f"../../{name}", os.path.join(below, name))
    for link_dir, up in (("sys/block", "../devices"), ("sys/class/block", "../../devices")):
        os.symlink(f"{up}/virtual/block/{name}", os.path.join(dst, link_dir, name))


def tmpfs(root, dst, n, blocks):
    copy(root, dst)
    for i in range(blocks):
        block_device(dst, f"ram{i}", f"1:{i}")
    lines = base_mounts(dst)
    info = [f"{i + 100} 1 0:{i + 100} / {line.split()[1]} rw - {line.split()[2]} {line.split()[0]} rw"
            for i, line in enumerate(lines)]
    for i in range(n):
        lines.append(f"tmpfs /run/k/{i} tmpfs rw,nosuid,nodev 0 0")
        info.append(f"{i + 200000} 1 0:{i + 5000} / /run/k/{i} rw - tmpfs tmpfs rw")
    write_mounts(dst, lines)
    os.makedirs(os.path.join(dst, "proc/self"), exist_ok=True)
    with open(os.path.join(dst, "proc/self/mountinfo"), "w") as f:
        f.write("\n".join(info) + "\n")


def diamond(root, dst, layers, width):
    """dm devices in `layers` layers of `width`, each over all of the layer below, the bottom over an
    unused NVMe partition (nvme1n1p2), mounted from the top: width^layers routes through the stack."""
    copy(root, dst)
    below = ["nvme1n1p2"]
    # nvme1n1p2 lives below its controller: its holders/ are written here through /sys/class/block.
    part = os.path.realpath(os.path.join(dst, "sys/class/block/nvme1n1p2"))
    n = 0
    for layer in range(layers):
        names = [f"dm-{100 + n + i}" for i in range(width)]
        for name in names:
            block_device(dst, name, f"253:{100 + n}", below if below != ["nvme1n1p2"] else (), f"d{layer}-{name}")
            if below == ["nvme1n1p2"]:
                d = os.path.join(dst, "sys/devices/virtual/block", name, "slaves")
                os.makedirs(d, exist_ok=True)
                os.symlink(os.path.relpath(part, d), os.path.join(d, "nvme1n1p2"))
                os.makedirs(os.path.join(part, "holders"), exist_ok=True)
                os.symlink(os.path.relpath(os.path.join(dst, "sys/devices/virtual/block", name),
                                           os.path.join(part, "holders")), os.path.join(part, "holders", name))
            n += 1
        below = names
    lines = base_mounts(dst) + [f"/dev/{below[0]} /deep xfs rw,relatime 0 0"]
    write_mounts(dst, lines)


def links(root, dst):
    """/l/0 .. /l/38, each link's target the next link and 2,040 components below it, /l/39 -> /data:
    40 links (the kernel's limit) and 79,560 components, each of which the old walk rebuilt the
    whole path so far for."""
    copy(root, dst)
    os.makedirs(os.path.join(dst, "l"), exist_ok=True)
    for i in range(39):
        os.symlink(f"{i + 1}/" + "x/" * 2040, os.path.join(dst, "l", str(i)))
    os.symlink("/data", os.path.join(dst, "l", "39"))


def plan(out, gpus, nvmes):
    """A plan within the documented bounds: ten PCI domains, each a host bridge with 7 root ports
    and a 32-port switch on each (70 switches, 2,240 ports), `gpus` GPUs then `nvmes` NVMe drives."""
    lines = ['[cpu]', 'vendor = "AuthenticAMD"', 'family = 0x19']
    ports = []
    for d in range(10):
        lines += ['[[host_bridge]]', f'name = "hb{d}"', f'domain = {d}', 'bus = 0', 'device = "1022:14a4"']
        for r in range(7):
            lines += ['[[root_port]]', f'name = "rp{d}_{r}"', f'host_bridge = "hb{d}"', 'id = "1022:14ab"',
                      '[[switch]]', f'name = "sw{d}_{r}"', f'at = "rp{d}_{r}"', 'id = "10b5:8747"']
            for p in range(32):
                lines += ['[[switch.downstream]]', f'name = "sw{d}_{r}_{p}"']
                ports.append(f"sw{d}_{r}_{p}")
    for i in range(gpus):
        lines += ['[[gpu]]', f'name = "gpu{i}"', f'at = "{ports[i]}"', 'id = "1002:74a1"']
    for i in range(nvmes):
        lines += ['[[nvme]]', f'name = "nv{i}"', f'at = "{ports[gpus + i]}"', 'id = "144d:a826"']
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def btf(out, member_name):
    """BTF of an int, struct pci_p2pdma_pagemap { int provider; } and enum req_op { REQ_OP_READ },
    the member's name offset `member_name` (past the 52-byte string section: libbpf 1.1 takes it)."""
    import struct
    strings = b"\0int\0pci_p2pdma_pagemap\0provider\0req_op\0REQ_OP_READ\0"
    types = struct.pack("<4I", 1, 1 << 24, 4, 32) + struct.pack("<6I", 5, (4 << 24) | 1, 8, member_name, 1, 0) + \
        struct.pack("<5I", 33, (6 << 24) | 1, 4, 40, 0)
    header = struct.pack("<HBBIIIII", 0xEB9F, 1, 0, 24, 0, len(types), len(types), len(strings))
    with open(out, "wb") as f:
        f.write(header + types + strings)


if __name__ == "__main__":
    kind, args = sys.argv[1], sys.argv[2:]
    if kind == "plan":
        plan(args[0], int(args[1]), int(args[2]))
    elif kind == "btf":
        btf(args[0], int(args[1]))
    else:
        ints = [int(a) for a in args[2:]]
        {"bind": bind, "absent": absent, "tmpfs": tmpfs, "diamond": diamond, "links": links}[kind](args[0], args[1], *ints)
