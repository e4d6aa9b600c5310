#!/usr/bin/env python3
"""mkfixture.py - build a fake Linux root (/sys, /proc, /boot, /etc) from a compact TOML description.

Usage
-----
    python3 tools/mkfixture.py fixtures/<name>/machine.toml      # writes fixtures/<name>/root/ (git-ignored)
    python3 tools/mkfixture.py --all                             # every fixtures/*/machine.toml
    python3 tools/mkfixture.py --all --out build/fixtures        # writes build/fixtures/<name>/root/ (what ctest uses)
    python3 tools/mkfixture.py --nonroot FILE.toml               # force config_bytes = 64

The output directory is deleted and recreated; output is deterministic (same input -> same bytes,
no timestamps). Python 3.11 standard library only. The tree never contains empty directories
(git cannot store them), so e.g. an empty holders/ or slaves/ directory of a block device is
simply absent. All symlinks are relative and stay inside root/.

Description format (TOML; every table optional unless noted)
-------------------------------------------------------------
[machine]
  description     free text (documentation only)
  base            path (relative to this file) of another machine.toml to inherit from. Tables are
                  merged recursively, everything else (arrays included) is replaced by this file.
  config_bytes    truncate every PCI `config` file to this many bytes (64 = what a non-root
                  reader gets from sysfs).
  proc_modules_addresses  false -> /proc/modules shows 0x0000000000000000 (non-root view)

[kernel]
  release         "6.8.0-142-generic" -> /proc/sys/kernel/osrelease, /boot/config-<release>
  version         /proc/version text
  cmdline         /proc/cmdline text
  config          list of lines written to /boot/config-<release> (after a generated header)
  iommu           "amd" | "intel" | "none": an IOMMU driver is active (it calls pci_request_acs(),
                  so every function with an ACS capability gets ctrl = cap & (SV|RR|CR|UF))
  iommu_domain    default iommu group `type`: "DMA-FQ" | "DMA" | "identity"
  disable_acs_redir  list of BDFs whose RR|CR|EC control bits stay clear (pci=disable_acs_redir=)
  kfd_version     kernel version whose KFD properties layout to use (default: release)
  dm_major        block major of device-mapper (default 253)

[os]  release = literal /etc/os-release text
[proc] mounts = list of /proc/mounts lines
[dmi] key = value -> /sys/devices/virtual/dmi/id/<key>

[cpu]  vendor_id family model stepping model_name microcode mhz cache_size sockets
       cores_per_socket threads_per_core numa_per_socket cpuid_level flags vmx_flags bugs bogomips
       tlb_size address_sizes power_management hypervisor(bool: adds the `hypervisor` flag)
       apicid_bits (bits per socket in the APIC id, default from core/thread count)
       enumeration "thread-major" (default, Intel/Zen MADT order: all first threads of socket 0,
       socket 1, ..., then the SMT siblings) | "socket-major" (0,1 = siblings; pre-Zen AMD)
  /proc/cpuinfo gets one full block per logical CPU.

[modules.<name>]   one /proc/modules line each, in file order (most recently loaded first)
  size refcnt used_by(list) taint("OE") version srcversion parameters(table) builtin(bool)
  -> /sys/module/<name>/{initstate,refcnt,coresize,taint,version,parameters/*,drivers/pci:<d>}

[[iommu]]  name ("ivhd0" | "dmar0"), pci (BDF of the AMD IOMMU function; absent for Intel,
           whose units live in /sys/devices/virtual/iommu), attrs = { "amd-iommu/cap" = "..." }

[[host_bridge]]  bus (required), domain (0), numa_node (0), iommu (unit name),
                 mmio32 / mmio64 / io: allocation bases for BARs and bridge windows below it

[template.<name>]  any [[pci]] keys; a [[pci]] entry (or template) says use = "<name>"
                   (or a list of names) to start from those values.

[[pci]]  one PCI function.  Keys:
  bdf       "0000:05:00.0" or "05:00.0" (required)
  id        "1002:74a1" vendor:device (required)
  subsys    "1002:0c34" (default: same as id; bridges carry it in an SSVID capability)
  class     0x120000   rev 0x00
  port      endpoint | legacy_endpoint | rciep | rcec | root_port | upstream | downstream |
            pcie_pci_bridge | pci_pcie_bridge | pci (conventional function, 256-byte config,
            no PCI Express capability) | pci_bridge (conventional PCI-to-PCI bridge)
  header    0 | 1 override (e.g. Intel 00:00.0 DMI host bridge: header 0 but a Root Port cap)
  sec       secondary bus number of a bridge (children are the functions on that bus)
  subordinate  override (default: highest bus below)
  driver    driver name (-> driver link, uevent DRIVER=, /sys/bus/pci/drivers/<d>/<BDF>)
  numa_node, iommu_group (int; false = none; default: next free number), irq, dma_bits
  bars      ["0:m64p:256G", "2:m64p:2M", "4:io:256", "5:m32:512K"]  types m32 m32p m64 m64p io
  rom       "128K" (assigned, disabled) | "shadow" (boot VGA: 0xc0000-0xdffff, flags 0x212)
  link      "gen5x16" link capability; cur "gen3x8" current link (default: min of both ends)
  slot      physical slot number (Slot Implemented)
  acs       ACS capability bits (0x5f...); acs_ctrl overrides the computed control value
  aer       include AER (default true for PCI Express functions)
  rebar     ["0:256M-256G:256G"]  bar:smallest-largest:current
  sriov     { total, num, vf_device, offset, stride, bars = ["0:m64:16K"], vf_driver,
              vf_link_like_pf = true }  -> VFs are generated at PF devfn + offset + i*stride
  ari       ARI capability (default: true when sriov)
  dsn       "00-11-22-33-44-55-66-77" Device Serial Number capability
  msi       number of MSI vectors (0 = no MSI cap); msi_on: enabled (default: bridges w/ driver)
  msix      vector count (0 = none) or { count, bar, table, pba }
  caps      explicit standard capability list, e.g. ["pm","msi","pcie","msix","ssvid"] or []
  p2pmem    { size, available, published }  (p2pmem/allocate appears on kernels >= 6.2)
  kfd       { ...KFD node properties... } -> a KFD topology GPU node for this function
  drm       { card = 1, render = 128 } -> drm/cardN, drm/renderDM and /sys/class/drm links
  boot_vga  true/false (VGA class functions get a boot_vga file)
  files     { "relative/name" = "content" } extra files inside the function directory
  iommu_group_of  BDF whose IOMMU group this function shares (e.g. conventional PCI behind a
            PCIe-to-PCI bridge)
  vga_path  bridge forwards legacy VGA (BridgeCtl VGA+VGA16)
  overrides (rarely needed): caps_at = { pcie = 0x90 }, command, status, bridge_ctl, intpin,
            devcap, devctl, devcap2, devctl2, sltcap, sltctl, pmc, port_number, aspm, noflr

[kfd]  cpu = { ...properties of the CPU nodes... }, generation_id, system = { platform_oem, ... }

[[nvme]]  ctrl "nvme0", pci BDF, model serial firmware cntlid subsysnqn queue_count sqsize
          multipath (bool: native-multipath layout under /sys/devices/virtual/nvme-subsystem)
          namespaces = [{ nsid = 1, size = "7681501126656" or 15002931888 sectors ("s" suffix),
                          lbs = 4096, parts = ["512M", "1G", "*"] }]

[[dm]]    name "dm-0", dm_name "rl-root", uuid "LVM-...", slaves ["nvme0n1p3"], size
[[md]]    name "md0", level "raid0", slaves ["nvme6n1", "nvme7n1"], size, chunk, metadata
[[loop]]  name "loop0", backing_file "/var/lib/snapd/snaps/core22_1380.snap", size

[[file]]     path = "etc/hostname", text = "..." | hex = "0a0b..."   (escape hatch)
[[symlink]]  path = "sys/foo", target = "../bar"                      (relative, literal)

Sizes accept plain integers or strings with K/M/G/T suffixes (powers of 1024); "s" = 512-byte
sectors. Device directories are nested exactly as Linux nests them:
/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/...
"""

import argparse
import os
import shutil
import struct
import sys
import tomllib

# ----------------------------------------------------------------------------------------------
# helpers

SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}


def size_of(v):
    """'256G' -> bytes, '100s' -> 100*512, int -> int."""
    if isinstance(v, int):
        return v
    s = str(v).strip()
    if s.endswith("s"):
        return int(s[:-1], 0) * 512
    if s and s[-1].upper() in SUFFIX:
        return int(float(s[:-1]) * SUFFIX[s[-1].upper()])
    return int(s, 0)


def human(n):
    for suf, mul in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n % mul == 0 and n >= mul:
            return "%d%s" % (n // mul, suf)
    return str(n)


def align_up(x, a):
    return (x + a - 1) // a * a


def kver(release):
    nums = []
    for part in release.split("-")[0].split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        nums.append(int(digits) if digits else 0)
    while len(nums) < 3:
        nums.append(0)
    return tuple(nums[:3])


def cpulist(cpus):
    """[0,1,2,5] -> '0-2,5' (Linux %*pbl)."""
    cpus = sorted(cpus)
    out = []
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def cpumask(cpus, nbits):
    """Linux %*pb: 32-bit hex chunks, most significant first, comma separated."""
    mask = 0
    for c in cpus:
        mask |= 1 << c
    chunks = []
    nchunks = (nbits + 31) // 32
    for k in range(nchunks - 1, -1, -1):
        val = (mask >> (32 * k)) & 0xFFFFFFFF
        if k == nchunks - 1:
            bits = nbits - 32 * k
            width = (bits + 3) // 4
        else:
            width = 8
        chunks.append("%0*x" % (width, val))
    return ",".join(chunks)


def parse_bdf(s):
    parts = s.split(":")
    if len(parts) == 2:
        parts = ["0000"] + parts
    dom = int(parts[0], 16)
    bus = int(parts[1], 16)
    dev, fn = parts[2].split(".")
    return dom, bus, int(dev, 16), int(fn, 16)


def bdf_name(dom, bus, dev, fn):
    return "%04x:%02x:%02x.%x" % (dom, bus, dev, fn)


def parse_id(s):
    v, d = s.split(":")
    return int(v, 16), int(d, 16)


def parse_link(s):
    """'gen5x16' -> (5, 16)."""
    s = s.lower()
    g, w = s[3:].split("x")
    return int(g), int(w)


SPEED_STR = {0: "Unknown", 1: "2.5 GT/s PCIe", 2: "5.0 GT/s PCIe", 3: "8.0 GT/s PCIe",
             4: "16.0 GT/s PCIe", 5: "32.0 GT/s PCIe", 6: "64.0 GT/s PCIe"}

PORT_TYPES = {"endpoint": 0, "legacy_endpoint": 1, "root_port": 4, "upstream": 5, "downstream": 6,
              "pcie_pci_bridge": 7, "pci_pcie_bridge": 8, "rciep": 9, "rcec": 10}
BRIDGE_PORTS = {"root_port", "upstream", "downstream", "pcie_pci_bridge", "pci_pcie_bridge",
                "pci_bridge"}
DOWNSTREAM_FACING = {"root_port", "downstream"}

# Linux resource flags
IORESOURCE_IO = 0x100
IORESOURCE_MEM = 0x200
IORESOURCE_PREFETCH = 0x2000
IORESOURCE_READONLY = 0x4000
IORESOURCE_SIZEALIGN = 0x40000
IORESOURCE_MEM_64 = 0x100000

DEFAULT_DMA_BITS = {"amdgpu": 44, "nvme": 64, "nvidia": 47, "ioatdma": 64, "snd_hda_intel": 64,
                    "xhci_hcd": 64, "ahci": 64, "vfio-pci": 32, "ast": 32, "pcieport": 32}


def deep_merge(base, over):
    out = dict(base)
    for k, v in over.items():
        if k in out and isinstance(out[k], dict) and isinstance(v, dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def load_description(path):
    with open(path, "rb") as f:
        data = tomllib.load(f)
    base = data.get("machine", {}).get("base")
    if base:
        parent = load_description(os.path.join(os.path.dirname(path), base))
        # the base's own `base` / description must not leak into the child
        data = deep_merge(parent, data)
        data["machine"]["base"] = base
    return data


# ----------------------------------------------------------------------------------------------
# output tree (in memory, flushed in sorted order)

class Tree:
    def __init__(self):
        self.files = {}   # "sys/bus/..." -> bytes
        self.links = {}   # "sys/bus/..." -> absolute target inside root ("/sys/devices/...")
        self.raw_links = {}

    def write(self, path, data):
        path = path.lstrip("/")
        if isinstance(data, str):
            data = data.encode()
        if path in self.files or path in self.links:
            raise SystemExit("mkfixture: duplicate path %s" % path)
        self.files[path] = data

    def link(self, path, target):
        path = path.lstrip("/")
        if path in self.files or path in self.links:
            raise SystemExit("mkfixture: duplicate path %s" % path)
        self.links[path] = "/" + target.lstrip("/")

    def raw_link(self, path, target):
        path = path.lstrip("/")
        self.raw_links[path] = target

    def flush(self, root):
        if os.path.lexists(root):
            shutil.rmtree(root)
        os.makedirs(root)
        allpaths = set(self.files) | set(self.links) | set(self.raw_links)
        for p in allpaths:
            parent = os.path.dirname(p)
            while parent:
                if parent in self.files or parent in self.links:
                    raise SystemExit("mkfixture: %s is both a file and a directory" % parent)
                parent = os.path.dirname(parent)
        for p in sorted(self.files):
            full = os.path.join(root, p)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(self.files[p])
            os.chmod(full, 0o644)
        for p in sorted(self.links):
            full = os.path.join(root, p)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            rel = os.path.relpath(self.links[p], "/" + os.path.dirname(p))
            os.symlink(rel, full)
        for p in sorted(self.raw_links):
            full = os.path.join(root, p)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            os.symlink(self.raw_links[p], full)
        # directory modes are not tracked by git; keep them uniform anyway
        for dirpath, dirnames, _ in os.walk(root):
            for d in dirnames:
                full = os.path.join(dirpath, d)
                if not os.path.islink(full):
                    os.chmod(full, 0o755)


# ----------------------------------------------------------------------------------------------
# PCI model

class Bar:
    def __init__(self, index, kind, size, iov=False):
        self.index = index
        self.kind = kind          # m32 m32p m64 m64p io
        self.size = size
        self.iov = iov
        self.addr = None
        self.total = size         # IOV BAR: size * TotalVFs

    @property
    def is64(self):
        return self.kind in ("m64", "m64p")

    @property
    def pref(self):
        return self.kind in ("m32p", "m64p")

    @property
    def window(self):
        """Which bridge window the BAR lives in."""
        if self.kind == "io":
            return "io"
        if self.kind == "m64p":
            return "pref"
        return "mem"

    def flags(self):
        if self.kind == "io":
            return 0x1 | IORESOURCE_IO | IORESOURCE_SIZEALIGN
        low = 0
        if self.is64:
            low |= 0x4
        if self.pref:
            low |= 0x8
        f = low | IORESOURCE_MEM | IORESOURCE_SIZEALIGN
        if self.pref:
            f |= IORESOURCE_PREFETCH
        if self.is64:
            f |= IORESOURCE_MEM_64
        return f

    def reg_low(self):
        if self.kind == "io":
            return (self.addr & 0xFFFFFFFC) | 0x1
        v = self.addr & 0xFFFFFFF0
        if self.is64:
            v |= 0x4
        if self.pref:
            v |= 0x8
        return v


def parse_bars(specs, iov=False):
    bars = []
    for s in specs or []:
        idx, kind, size = s.split(":")
        if kind not in ("m32", "m32p", "m64", "m64p", "io"):
            raise SystemExit("mkfixture: bad BAR type %r" % kind)
        bars.append(Bar(int(idx), kind, size_of(size), iov))
    return bars


class Item:
    """Something placed inside a bridge window: a BAR or a child bridge's window."""

    def __init__(self, size, align, bar=None, bridge=None):
        self.size = size
        self.align = align
        self.bar = bar
        self.bridge = bridge
        self.off = 0


class HostBridge:
    def __init__(self, spec):
        self.domain = spec.get("domain", 0)
        self.bus = spec["bus"]
        self.numa_node = spec.get("numa_node", 0)
        self.iommu = spec.get("iommu")
        self.bases = {"mem": spec.get("mmio32", 0xE0000000), "pref": spec.get("mmio64", 1 << 40),
                      "io": spec.get("io", 0x1000)}
        self.name = "pci%04x:%02x" % (self.domain, self.bus)
        self.path = "/sys/devices/" + self.name
        self.children = []

    def busname(self):
        return "%04x:%02x" % (self.domain, self.bus)


class Func:
    def __init__(self, spec, machine):
        self.spec = spec
        self.m = machine
        self.dom, self.bus, self.dev, self.fn = parse_bdf(spec["bdf"])
        self.name = bdf_name(self.dom, self.bus, self.dev, self.fn)
        self.vendor, self.device = parse_id(spec["id"])
        self.svid, self.ssid = parse_id(spec.get("subsys", spec["id"]))
        self.klass = spec.get("class", 0)
        self.rev = spec.get("rev", 0)
        self.driver = spec.get("driver")
        self.port = spec.get("port", "endpoint")
        if self.port not in PORT_TYPES and self.port not in ("pci", "pci_bridge"):
            raise SystemExit("mkfixture: %s: unknown port type %r" % (self.name, self.port))
        self.pcie = self.port in PORT_TYPES
        self.header = spec.get("header", 1 if self.port in BRIDGE_PORTS else 0)
        self.sec = spec.get("sec")
        if self.header == 1 and self.sec is None:
            raise SystemExit("mkfixture: bridge %s needs sec = <secondary bus>" % self.name)
        self.bars = parse_bars(spec.get("bars"))
        self.rom = spec.get("rom")
        self.rom_bar = None
        if self.rom and self.rom != "shadow":
            self.rom_bar = Bar(6, "m32", size_of(self.rom))
        self.sriov = spec.get("sriov")
        self.iov_bars = []
        if self.sriov:
            for b in parse_bars(self.sriov.get("bars"), iov=True):
                b.total = b.size * self.sriov["total"]
                self.iov_bars.append(b)
        self.is_vf = False
        self.pf = None
        self.vf_index = None
        self.vfs = []
        self.parent = None       # Func (bridge) or HostBridge
        self.children = []       # functions on the secondary bus
        self.windows = {}        # kind -> (base, size)
        self.subordinate = spec.get("subordinate")
        self.iommu_group = None
        self.link_cap = parse_link(spec["link"]) if "link" in spec else None
        self.link_cur = parse_link(spec["cur"]) if "cur" in spec else None
        self.multifunction = False
        self.irq = spec.get("irq")

    # -- helpers
    @property
    def devfn(self):
        return (self.dev << 3) | self.fn

    @property
    def is_bridge(self):
        return self.header == 1

    def host_bridge(self):
        p = self.parent
        while isinstance(p, Func):
            p = p.parent
        return p

    @property
    def numa_node(self):
        if "numa_node" in self.spec:
            return self.spec["numa_node"]
        return self.host_bridge().numa_node

    @property
    def path(self):
        if self.is_vf:
            return self.pf.parent_path() + "/" + self.name
        return self.parent_path() + "/" + self.name

    def parent_path(self):
        return self.parent.path

    def all_bars(self):
        out = list(self.bars)
        if self.rom_bar:
            out.append(self.rom_bar)
        out.extend(self.iov_bars)
        return out


class Machine:
    def __init__(self, desc, src):
        self.d = desc
        self.src = src
        self.t = Tree()
        k = desc.get("kernel", {})
        self.release = k.get("release", "6.8.0-generic")
        self.kv = kver(self.release)
        self.kfd_kv = kver(k.get("kfd_version", self.release))
        self.iommu_mode = k.get("iommu", "none")
        self.iommu_domain = k.get("iommu_domain", "DMA-FQ")
        self.no_acs_redir = set(k.get("disable_acs_redir", []))
        self.dm_major = k.get("dm_major", 253)
        mach = desc.get("machine", {})
        self.config_bytes = mach.get("config_bytes")
        self.mod_addrs = mach.get("proc_modules_addresses", True)
        self.templates = desc.get("template", {})
        self.cpu_layout()
        self.block_minor = 0
        self.diskseq = 0
        self.disks = {}          # name -> abs sysfs path
        self.build_pci()

    # ------------------------------------------------------------------ CPU topology
    def cpu_layout(self):
        c = self.d.get("cpu", {})
        self.sockets = c.get("sockets", 1)
        self.cores = c.get("cores_per_socket", 1)
        self.threads = c.get("threads_per_core", 1)
        self.nps = c.get("numa_per_socket", 1)
        self.ncpus = self.sockets * self.cores * self.threads
        self.cpus = []   # index -> (socket, core, thread)
        if c.get("enumeration", "thread-major") == "socket-major":
            for s in range(self.sockets):
                for co in range(self.cores):
                    for th in range(self.threads):
                        self.cpus.append((s, co, th))
        else:
            for th in range(self.threads):
                for s in range(self.sockets):
                    for co in range(self.cores):
                        self.cpus.append((s, co, th))
        self.nodes = {}
        for i, (s, co, th) in enumerate(self.cpus):
            node = s * self.nps + co * self.nps // self.cores
            self.nodes.setdefault(node, []).append(i)

    def node_cpus(self, node):
        if node is None or node < 0:
            return list(range(self.ncpus))
        return self.nodes.get(node, [])

    # ------------------------------------------------------------------ PCI tree
    def expand(self, spec, seen=()):
        uses = spec.get("use", [])
        if isinstance(uses, str):
            uses = [uses]
        out = {}
        for u in uses:
            if u in seen:
                raise SystemExit("mkfixture: template loop at %s" % u)
            if u not in self.templates:
                raise SystemExit("mkfixture: unknown template %s" % u)
            out = deep_merge(out, self.expand(self.templates[u], seen + (u,)))
        spec = {k: v for k, v in spec.items() if k != "use"}
        return deep_merge(out, spec)

    def build_pci(self):
        self.hbs = [HostBridge(h) for h in self.d.get("host_bridge", [])]
        hb_by_bus = {(h.domain, h.bus): h for h in self.hbs}
        self.funcs = []
        for raw in self.d.get("pci", []):
            self.funcs.append(Func(self.expand(raw), self))
        by_name = {}
        for f in self.funcs:
            if f.name in by_name:
                raise SystemExit("mkfixture: duplicate function %s" % f.name)
            by_name[f.name] = f
        # VFs
        for pf in list(self.funcs):
            if not pf.sriov:
                continue
            sr = pf.sriov
            for i in range(sr.get("num", 0)):
                rid = (pf.bus << 8 | pf.devfn) + sr.get("offset", 1) + i * sr.get("stride", 1)
                bus, devfn = rid >> 8, rid & 0xFF
                vspec = {
                    "bdf": bdf_name(pf.dom, bus, devfn >> 3, devfn & 7),
                    "id": "%04x:%04x" % (pf.vendor, sr["vf_device"]),
                    "subsys": "%04x:%04x" % (pf.svid, pf.ssid),
                    "class": pf.klass, "rev": pf.rev, "port": "endpoint",
                    "msix": sr.get("vf_msix", 8), "msi": 0, "aer": False,
                    "ari": pf.spec.get("ari", True),
                }
                if sr.get("vf_driver"):
                    vspec["driver"] = sr["vf_driver"]
                if pf.link_cap:
                    vspec["link"] = "gen%dx%d" % pf.link_cap
                vf = Func(vspec, self)
                vf.is_vf = True
                vf.pf = pf
                vf.vf_index = i
                vf.bars = []
                for b in pf.iov_bars:
                    vb = Bar(b.index, b.kind, b.size)
                    vf.bars.append(vb)
                pf.vfs.append(vf)
                if vf.name in by_name:
                    raise SystemExit("mkfixture: VF %s collides" % vf.name)
                by_name[vf.name] = vf
                self.funcs.append(vf)
        self.by_name = by_name
        # parents
        bridges_by_sec = {}
        for f in self.funcs:
            if f.is_bridge:
                key = (f.dom, f.sec)
                if key in bridges_by_sec:
                    raise SystemExit("mkfixture: two bridges with secondary bus %02x" % f.sec)
                bridges_by_sec[key] = f
        for f in self.funcs:
            if f.is_vf:
                f.parent = f.pf.parent
                continue
            key = (f.dom, f.bus)
            if key in hb_by_bus:
                f.parent = hb_by_bus[key]
            elif key in bridges_by_sec:
                f.parent = bridges_by_sec[key]
            else:
                raise SystemExit("mkfixture: no host bridge or bridge for bus of %s" % f.name)
            f.parent.children.append(f)
        for f in self.funcs:
            if f.is_vf:
                f.parent.children.append(f)
        order = lambda x: (x.bus, x.dev, x.fn)
        for obj in self.hbs + self.funcs:
            obj.children.sort(key=order)
        # multi-function detection (VFs excluded)
        slots = {}
        for f in self.funcs:
            if not f.is_vf:
                slots.setdefault((f.dom, f.bus, f.dev), []).append(f)
        for lst in slots.values():
            if len(lst) > 1:
                for f in lst:
                    f.multifunction = True
        # subordinate bus numbers
        for f in self.funcs:
            if f.is_bridge and f.subordinate is None:
                f.subordinate = self.max_bus(f)
        # address allocation
        for hb in self.hbs:
            for kind in ("mem", "pref", "io"):
                items = self.bus_items(hb.children, kind)
                self.place(items, kind, hb.bases[kind])
        # depth-first ordering for numbering (IOMMU groups, irqs, ...)
        self.ordered = []

        def walk(node):
            for c in node.children:
                self.ordered.append(c)
                if isinstance(c, Func) and c.is_bridge:
                    walk(c)
        for hb in sorted(self.hbs, key=lambda h: (h.domain, h.bus)):
            walk(hb)
        self.ordered.sort(key=lambda f: (f.dom, f.bus, f.dev, f.fn))
        # IOMMU groups
        used = set()
        for f in self.funcs:
            g = f.spec.get("iommu_group")
            if isinstance(g, int) and not isinstance(g, bool):
                f.iommu_group = g
                used.add(g)
        nxt = 0
        if self.iommu_mode != "none":
            for f in self.ordered:
                g = f.spec.get("iommu_group")
                if g is False or f.iommu_group is not None:
                    continue
                if f.spec.get("iommu_group_of"):
                    continue
                while nxt in used:
                    nxt += 1
                f.iommu_group = nxt
                used.add(nxt)
            for f in self.ordered:
                other = f.spec.get("iommu_group_of")
                if other:
                    f.iommu_group = self.by_name[parse_name(other)].iommu_group
        # irqs
        irq = 24
        for f in self.ordered:
            if f.is_vf and f.irq is None:
                f.irq = 0          # VFs have no INTx
            if f.irq is None:
                f.irq = irq
                irq += 1

    def max_bus(self, f):
        m = f.sec
        for c in f.children:
            m = max(m, c.bus)
            if c.is_bridge:
                m = max(m, c.subordinate if c.subordinate is not None else self.max_bus(c))
        return m

    def bus_items(self, children, kind):
        items = []
        for c in children:
            if c.is_vf:
                continue
            for b in c.all_bars():
                if b.window == kind:
                    size = b.total
                    items.append(Item(size, b.size if b.iov else size, bar=b))
            if c.is_bridge:
                sub = self.bus_items(c.children, kind)
                gran = 0x1000 if kind == "io" else 0x100000
                if sub:
                    size, align = self.pack(sub, gran)
                    it = Item(size, align, bridge=c)
                    it.sub = sub
                    items.append(it)
        return items

    @staticmethod
    def pack(items, gran):
        items.sort(key=lambda i: (-i.align, -i.size))
        off = 0
        for it in items:
            off = align_up(off, it.align)
            it.off = off
            off += it.size
        align = max([gran] + [i.align for i in items])
        return align_up(max(off, gran), gran), align

    def place(self, items, kind, base):
        if not items:
            return
        gran = 0x1000 if kind == "io" else 0x100000
        _, align = self.pack(items, gran)
        self.assign(items, kind, align_up(base, align))

    def assign(self, items, kind, base):
        for it in items:
            addr = base + it.off
            if it.bar is not None:
                it.bar.addr = addr
            else:
                it.bridge.windows[kind] = (addr, it.size)
                self.assign(it.sub, kind, addr)

    # ------------------------------------------------------------------ link helpers
    def link_partner(self, f):
        """For a function below a downstream-facing port: that port; for a downstream-facing port:
        the function 0 below it."""
        if f.port in DOWNSTREAM_FACING:
            kids = [c for c in f.children if c.pcie and not c.is_vf]
            return kids[0] if kids else None
        p = f.parent
        if isinstance(p, Func) and p.port in DOWNSTREAM_FACING:
            return p
        return None

    def current_link(self, f):
        """(speed, width) as shown in Link Status, or None when the function has no link."""
        if f.is_vf:
            return (0, 0)
        if not f.pcie or f.link_cap is None:
            return None
        if f.link_cur:
            return f.link_cur
        partner = self.link_partner(f)
        if f.port in DOWNSTREAM_FACING:
            if partner is None:
                return (1, 0) if "link_down" not in f.spec else tuple(f.spec["link_down"])
            if partner.link_cur:
                return partner.link_cur
            if partner.link_cap is None:
                return f.link_cap
            return (min(f.link_cap[0], partner.link_cap[0]), min(f.link_cap[1], partner.link_cap[1]))
        if partner is not None:
            return self.current_link(partner)
        # function 1..7 of a multi-function device shares function 0's link
        if f.fn != 0:
            f0 = self.by_name.get(bdf_name(f.dom, f.bus, f.dev, 0))
            if f0 is not None:
                return self.current_link(f0)
        return f.link_cap

    # ------------------------------------------------------------------ ACS
    def acs_ctrl(self, f):
        cap = f.spec.get("acs")
        if cap is None:
            return None
        if "acs_ctrl" in f.spec:
            return f.spec["acs_ctrl"]
        ctrl = 0
        if self.iommu_mode != "none":
            ctrl = cap & (0x01 | 0x04 | 0x08 | 0x10)
            if f.name in self.no_acs_redir:
                ctrl &= ~(0x04 | 0x08 | 0x20)
        return ctrl

    # ------------------------------------------------------------------ config space
    def config_space(self, f):
        pcie = f.pcie
        size = 4096 if pcie else 256
        c = bytearray(size)
        s = f.spec

        def w8(o, v):
            struct.pack_into("<B", c, o, v & 0xFF)

        def w16(o, v):
            struct.pack_into("<H", c, o, v & 0xFFFF)

        def w32(o, v):
            struct.pack_into("<I", c, o, v & 0xFFFFFFFF)

        if f.is_vf:
            w16(0, 0xFFFF)
            w16(2, 0xFFFF)
        else:
            w16(0, f.vendor)
            w16(2, f.device)
        # capabilities chosen
        if "caps" in s:
            caps = list(s["caps"])
        elif f.is_vf:
            caps = ["pcie", "msix"]
        elif f.is_bridge:
            caps = ["pm", "msi", "pcie", "ssvid"] if pcie else ["pm", "msi", "ssvid"]
        elif pcie:
            caps = ["pm", "msi", "pcie", "msix"]
        else:
            caps = ["pm", "msi"]
        if "msi" in s and s["msi"] == 0 and "msi" in caps:
            caps.remove("msi")
        msix = s.get("msix", 0 if f.is_bridge else 32)
        if isinstance(msix, int) and msix == 0 and "msix" in caps:
            caps.remove("msix")
        if not pcie and "pcie" in caps:
            caps.remove("pcie")
        has_io = any(b.kind == "io" for b in f.bars) or "io" in f.windows
        has_mem = any(b.kind != "io" for b in f.bars) or "mem" in f.windows or "pref" in f.windows
        msi_on = s.get("msi_on", f.is_bridge and f.driver is not None)
        msix_on = f.driver is not None and "msix" in caps and not msi_on
        cmd = s.get("command")
        if cmd is None:
            cmd = 0
            if f.is_vf:
                # memory decoding of a VF is controlled by the PF's VF MSE bit; vfio-pci leaves an
                # unused VF disabled, a host driver makes it a bus master
                cmd = 0x0004 if (f.driver and f.driver != "vfio-pci") else 0
            else:
                if f.driver or f.is_bridge:
                    if has_io:
                        cmd |= 0x1
                    if has_mem:
                        cmd |= 0x2
                    cmd |= 0x4
                if f.is_bridge:
                    cmd |= 0x0140   # ParErr+ SERR+
                if msi_on or msix_on:
                    cmd |= 0x0400
        w16(4, cmd)
        status = s.get("status", 0x0010 if caps else 0x0000)
        w16(6, status)
        w8(8, f.rev)
        w8(9, f.klass & 0xFF)
        w8(10, (f.klass >> 8) & 0xFF)
        w8(11, (f.klass >> 16) & 0xFF)
        w8(0xC, s.get("cacheline", 0x10 if f.is_bridge else 0))
        hdr = f.header | (0x80 if f.multifunction else 0)
        w8(0xE, hdr)
        # BARs
        nbars = 2 if f.header == 1 else 6
        for b in f.bars:
            if b.index >= nbars:
                raise SystemExit("mkfixture: %s: BAR%d not possible" % (f.name, b.index))
            if f.is_vf:
                continue
            w32(0x10 + 4 * b.index, b.reg_low())
            if b.is64:
                w32(0x10 + 4 * (b.index + 1), b.addr >> 32)
        if f.header == 0:
            if not f.is_vf:
                w16(0x2C, f.svid)
                w16(0x2E, f.ssid)
            if f.rom_bar:
                w32(0x30, f.rom_bar.addr & 0xFFFFF800)
        else:
            w8(0x18, f.bus)
            w8(0x19, f.sec)
            w8(0x1A, f.subordinate)
            io = f.windows.get("io")
            if io:
                base, sz = io
                lim = base + sz - 1
                w8(0x1C, ((base >> 8) & 0xF0) | 0x1)
                w8(0x1D, ((lim >> 8) & 0xF0) | 0x1)
                w16(0x30, base >> 16)
                w16(0x32, lim >> 16)
            else:
                w8(0x1C, 0xF1)
                w8(0x1D, 0x01)
            mem = f.windows.get("mem")
            if mem:
                base, sz = mem
                w16(0x20, (base >> 16) & 0xFFF0)
                w16(0x22, ((base + sz - 1) >> 16) & 0xFFF0)
            else:
                w16(0x20, 0xFFF0)
                w16(0x22, 0x0000)
            pref = f.windows.get("pref")
            if pref:
                base, sz = pref
                lim = base + sz - 1
                w16(0x24, ((base >> 16) & 0xFFF0) | 0x1)
                w16(0x26, ((lim >> 16) & 0xFFF0) | 0x1)
                w32(0x28, base >> 32)
                w32(0x2C, lim >> 32)
            else:
                w16(0x24, 0xFFF1)
                w16(0x26, 0x0001)
            if f.rom_bar:
                w32(0x38, f.rom_bar.addr & 0xFFFFF800)
            bctl = s.get("bridge_ctl", 0x0002 | (0x0018 if s.get("vga_path") else 0))
            w16(0x3E, bctl)
        pin = s.get("intpin", 0 if f.is_vf else 1)
        w8(0x3C, (f.irq if f.irq < 255 else 0xFF) if pin else 0xFF)
        w8(0x3D, pin)
        # standard capability chain
        layout = {"pm": (0x40, 8), "msi": (0x50, 0x18), "pcie": (0x70, 0x3C), "msix": (0xB0, 0xC),
                  "ssvid": (0xC0, 8), "vpd": (0xC8, 8)}
        caps_at = s.get("caps_at", {})
        positions = []
        for name in caps:
            off = caps_at.get(name, layout[name][0])
            positions.append((name, off))
        if positions:
            w8(0x34, positions[0][1])
        for i, (name, off) in enumerate(positions):
            nxt = positions[i + 1][1] if i + 1 < len(positions) else 0
            if name == "pm":
                w8(off, 0x01)
                w8(off + 1, nxt)
                pmc = s.get("pmc", 0xC803 if f.is_bridge else 0x0003)
                w16(off + 2, pmc)
                w16(off + 4, 0x0008)
            elif name == "msi":
                w8(off, 0x05)
                w8(off + 1, nxt)
                nvec = s.get("msi", 1 if f.is_bridge else 32)
                mmc = max(0, (nvec - 1).bit_length())
                ctrl = 0x0080 | 0x0100 | (mmc << 1)
                if msi_on:
                    ctrl |= 0x1
                w16(off + 2, ctrl)
                if msi_on:
                    w32(off + 4, 0xFEE00000 | ((f.irq & 0xFF) << 12))
                    w16(off + 0xC, 0x4020 + (f.irq & 0xFF))
            elif name == "msix":
                w8(off, 0x11)
                w8(off + 1, nxt)
                if isinstance(msix, dict):
                    cnt = msix.get("count", 32)
                    bir = msix.get("bar")
                    table = msix.get("table")
                    pba = msix.get("pba")
                else:
                    cnt, bir, table, pba = msix, None, None, None
                if bir is None:
                    mems = [b for b in f.bars if b.kind != "io"]
                    smalls = [b for b in mems if b.kind in ("m32", "m64")]
                    bir = (smalls or mems or [Bar(0, "m32", 0)])[0].index
                bsize = next((b.size for b in f.bars if b.index == bir), 0x4000)
                if table is None:
                    table = 0x2000 if bsize >= 0x4000 else 0
                if pba is None:
                    pba = table + align_up(cnt * 16, 0x1000)
                ctrl = (cnt - 1) | (0x8000 if msix_on else 0)
                w16(off + 2, ctrl)
                w32(off + 4, table | bir)
                w32(off + 8, pba | bir)
            elif name == "ssvid":
                w8(off, 0x0D)
                w8(off + 1, nxt)
                w16(off + 4, f.svid)
                w16(off + 6, f.ssid)
            elif name == "pcie":
                self.pcie_cap(f, c, off, nxt)
            elif name == "vpd":
                w8(off, 0x03)
                w8(off + 1, nxt)
        # extended capabilities
        if pcie:
            ext = []
            if s.get("aer", not f.is_vf):
                ext.append("aer")
            if s.get("acs") is not None:
                ext.append("acs")
            if s.get("ari", bool(f.sriov)):
                ext.append("ari")
            if f.sriov:
                ext.append("sriov")
            if s.get("rebar"):
                ext.append("rebar")
            if s.get("dsn"):
                ext.append("dsn")
            sizes = {"aer": 0x48, "acs": 0x8, "ari": 0x8, "sriov": 0x40, "dsn": 0xC,
                     "rebar": 4 + 8 * len(s.get("rebar", []))}
            offs = []
            off = 0x100
            for name in ext:
                offs.append((name, off))
                off = align_up(off + sizes[name], 0x10)
            for i, (name, off) in enumerate(offs):
                nxt = offs[i + 1][1] if i + 1 < len(offs) else 0
                ids = {"aer": (0x0001, 2), "acs": (0x000D, 1), "ari": (0x000E, 1),
                       "sriov": (0x0010, 1), "rebar": (0x0015, 1), "dsn": (0x0003, 1)}
                cid, ver = ids[name]
                w32(off, cid | (ver << 16) | (nxt << 20))
                if name == "aer":
                    w32(off + 0x08, 0x00400000)            # UE mask: UncorrIntErr? keep default
                    w32(off + 0x0C, 0x00462030)            # UE severity (spec default)
                    w32(off + 0x14, 0x0000E000)            # CE mask (AdvNonFatalErr...)
                    w32(off + 0x18, 0x000000A0)            # ECRC gen/check capable
                elif name == "acs":
                    w16(off + 4, s["acs"])
                    w16(off + 6, self.acs_ctrl(f))
                elif name == "ari":
                    nextfn = 0
                    if f.sriov:
                        nextfn = 0
                    w16(off + 4, nextfn << 8)
                elif name == "sriov":
                    sr = f.sriov
                    ari_hier = s.get("ari", True)
                    w32(off + 0x04, 0x00000000)
                    ctrl = 0
                    if sr.get("num", 0):
                        ctrl |= 0x1 | 0x8        # VF Enable, VF MSE
                    if ari_hier:
                        ctrl |= 0x10
                    w16(off + 0x08, ctrl)
                    w16(off + 0x0C, sr.get("initial", sr["total"]))
                    w16(off + 0x0E, sr["total"])
                    w16(off + 0x10, sr.get("num", 0))
                    w16(off + 0x14, sr.get("offset", 1))
                    w16(off + 0x16, sr.get("stride", 1))
                    w16(off + 0x1A, sr["vf_device"])
                    w32(off + 0x1C, 0x00000553)          # supported page sizes
                    w32(off + 0x20, 0x00000001)          # system page size 4K
                    for b in f.iov_bars:
                        o = off + 0x24 + 4 * b.index
                        w32(o, b.reg_low())
                        if b.is64:
                            w32(o + 4, b.addr >> 32)
                elif name == "rebar":
                    entries = s["rebar"]
                    for k, e in enumerate(entries):
                        bar, rng, cur = e.split(":")
                        lo, hi = rng.split("-")
                        lo_i = (size_of(lo) >> 20).bit_length() - 1
                        hi_i = (size_of(hi) >> 20).bit_length() - 1
                        cur_i = (size_of(cur) >> 20).bit_length() - 1
                        capbits = 0
                        for j in range(lo_i, hi_i + 1):
                            capbits |= 1 << (j + 4)
                        w32(off + 4 + 8 * k, capbits & 0xFFFFFFFF)
                        ctrl = int(bar) | (cur_i << 8)
                        if k == 0:
                            ctrl |= len(entries) << 5
                        w32(off + 8 + 8 * k, ctrl)
                        real = next((b for b in f.bars if b.index == int(bar)), None)
                        if real is not None and real.size != size_of(cur):
                            raise SystemExit("mkfixture: %s: rebar current %s != BAR%s size"
                                             % (f.name, cur, bar))
                elif name == "dsn":
                    v = int(s["dsn"].replace("-", ""), 16)
                    w32(off + 4, v & 0xFFFFFFFF)
                    w32(off + 8, v >> 32)
        return bytes(c)

    def pcie_cap(self, f, c, off, nxt):
        s = f.spec

        def w16(o, v):
            struct.pack_into("<H", c, o, v & 0xFFFF)

        def w32(o, v):
            struct.pack_into("<I", c, o, v & 0xFFFFFFFF)

        ptype = PORT_TYPES[f.port]
        slot = s.get("slot")
        c[off] = 0x10
        c[off + 1] = nxt
        capreg = 0x2 | (ptype << 4) | (0x100 if slot is not None else 0)
        w16(off + 2, capreg)
        is_port = f.port in ("root_port", "upstream", "downstream")
        endpointish = f.port in ("endpoint", "legacy_endpoint", "rciep")
        devcap = 0x2 | 0x20 | 0x8000     # MPS 512, ExtTag, RBER
        if endpointish:
            devcap |= (7 << 6) | (7 << 9)
            if not s.get("noflr"):
                devcap |= 0x10000000
        if f.is_vf:
            devcap = 0x10008FE2
        w32(off + 4, s.get("devcap", devcap))
        devctl = 0x2000 | 0x0020 | 0x0100 | 0x000F
        if endpointish:
            devctl |= 0x0010 | 0x0800
        if f.is_vf:
            devctl = 0x0000
        w16(off + 8, s.get("devctl", devctl))
        w16(off + 0xA, 0x0000)
        # link registers (not for RCiEP / RCEC)
        has_link = f.port not in ("rciep", "rcec")
        cur = self.current_link(f)
        if has_link:
            cap = f.link_cap or (0, 0)
            if f.is_vf and f.pf.link_cap and s.get("vf_link_like_pf", True):
                cap = f.pf.link_cap
            lnkcap = cap[0] | (cap[1] << 4)
            aspm = s.get("aspm", 0x2)             # L1 supported
            lnkcap |= aspm << 10
            lnkcap |= (0x6 << 12) | (0x6 << 15)  # L0s/L1 exit latency
            if endpointish:
                lnkcap |= 0x40000                 # ClockPM
            if f.port in DOWNSTREAM_FACING:
                lnkcap |= 0x80000 | 0x100000 | 0x200000   # SurpriseDown, LLActRep, BwNot
            lnkcap |= 0x400000                    # ASPM optionality compliance
            port_no = s.get("port_number", f.dev if f.port == "downstream" else 0)
            lnkcap |= (port_no & 0xFF) << 24
            if f.is_vf:
                lnkcap = cap[0] | (cap[1] << 4)
            w32(off + 0xC, lnkcap)
            linked = cur is not None and cur[1] > 0
            lnkctl = 0x0040 if linked else 0x0000     # Common clock
            if f.port in ("root_port", "endpoint", "legacy_endpoint"):
                lnkctl |= 0x0008 if f.port == "root_port" else 0
            if f.is_vf:
                lnkctl = 0
            w16(off + 0x10, lnkctl)
            sta = 0
            if cur is not None:
                sta = cur[0] | (cur[1] << 4)
                if linked and not f.is_vf:
                    sta |= 0x1000                       # slot clock
                    if f.port in DOWNSTREAM_FACING:
                        sta |= 0x2000                   # DL active
            w16(off + 0x12, sta)
        if slot is not None:
            sltcap = (slot << 19) | (75 << 7)          # physical slot, 75 W power limit
            w32(off + 0x14, s.get("sltcap", sltcap))
            w16(off + 0x18, s.get("sltctl", 0x03C0))  # attention/power indicators off
            present = any(not k.is_vf for k in f.children)
            w16(off + 0x1A, 0x0040 if present else 0x0000)
        # device capabilities 2 / control 2
        devcap2 = 0x0000001F | 0x800
        if f.port in DOWNSTREAM_FACING:
            devcap2 |= 0x20 | 0x40                      # ARI forwarding, AtomicOp routing
        if f.port == "root_port":
            devcap2 |= 0x180
        w32(off + 0x24, s.get("devcap2", devcap2))
        devctl2 = 0
        if f.port in DOWNSTREAM_FACING:
            if any(k.spec.get("ari", bool(k.sriov)) for k in f.children):
                devctl2 |= 0x20
        w16(off + 0x28, s.get("devctl2", devctl2))
        if has_link:
            cap = f.link_cap or (0, 0)
            if f.is_vf and f.pf.link_cap:
                cap = f.pf.link_cap
            vec = 0
            for g in range(1, cap[0] + 1):
                vec |= 1 << g
            w32(off + 0x2C, vec)
            w16(off + 0x30, cap[0] if not f.is_vf else 0)
            sta2 = 0
            if cur is not None and cur[0] >= 3 and not f.is_vf:
                sta2 = 0x1E
            w16(off + 0x32, sta2)

    # ------------------------------------------------------------------ resource file
    def resource_text(self, f):
        lines = []
        res = [(0, 0, 0)] * (17 if f.is_bridge else 13)
        res = list(res)
        for b in f.bars:
            if b.addr is None and not f.is_vf:
                continue
            if f.is_vf:
                pb = next(x for x in f.pf.iov_bars if x.index == b.index)
                start = pb.addr + b.size * f.vf_index
                res[b.index] = (start, start + b.size - 1, pb.flags())
            else:
                res[b.index] = (b.addr, b.addr + b.size - 1, b.flags())
        if f.rom == "shadow":
            res[6] = (0xC0000, 0xDFFFF, 0x212)
        elif f.rom_bar:
            rb = f.rom_bar
            res[6] = (rb.addr, rb.addr + rb.size - 1,
                      IORESOURCE_MEM | IORESOURCE_PREFETCH | IORESOURCE_READONLY | IORESOURCE_SIZEALIGN)
        for b in f.iov_bars:
            res[7 + b.index] = (b.addr, b.addr + b.total - 1, b.flags())
        if f.is_bridge:
            io = f.windows.get("io")
            if io:
                res[13] = (io[0], io[0] + io[1] - 1, 0x101)
            mem = f.windows.get("mem")
            if mem:
                res[14] = (mem[0], mem[0] + mem[1] - 1, 0x200)
            pref = f.windows.get("pref")
            if pref:
                res[15] = (pref[0], pref[0] + pref[1] - 1, 0x102201)
        for a, b, fl in res:
            lines.append("0x%016x 0x%016x 0x%016x\n" % (a, b, fl))
        return "".join(lines)

    # ------------------------------------------------------------------ emit everything
    def emit(self):
        self.emit_proc_etc()
        self.emit_cpu_nodes()
        self.emit_iommu_units()
        self.emit_pci()
        self.emit_modules()
        self.emit_kfd()
        self.emit_nvme()
        self.emit_stacked()
        self.emit_extra()

    def emit_proc_etc(self):
        t = self.t
        k = self.d.get("kernel", {})
        t.write("proc/sys/kernel/osrelease", self.release + "\n")
        ver = k.get("version", "Linux version %s" % self.release)
        t.write("proc/version", ver if ver.endswith("\n") else ver + "\n")
        cmd = k.get("cmdline", "")
        t.write("proc/cmdline", cmd if cmd.endswith("\n") else cmd + "\n")
        cfg = k.get("config")
        if cfg is not None:
            head = ("#\n# Automatically generated file; DO NOT EDIT.\n"
                    "# Linux/x86 %s Kernel Configuration\n#\n" % self.release.split("-")[0])
            t.write("boot/config-%s" % self.release, head + "".join(l + "\n" for l in cfg))
        osr = self.d.get("os", {}).get("release")
        if osr is not None:
            t.write("etc/os-release", osr if osr.endswith("\n") else osr + "\n")
        mounts = self.d.get("proc", {}).get("mounts")
        if mounts is not None:
            t.write("proc/mounts", "".join(l + "\n" for l in mounts))
        dmi = self.d.get("dmi")
        if dmi:
            for key, val in dmi.items():
                t.write("sys/devices/virtual/dmi/id/%s" % key, "%s\n" % val)
            t.link("sys/class/dmi/id", "/sys/devices/virtual/dmi/id")
        self.emit_cpuinfo()

    def emit_cpuinfo(self):
        c = self.d.get("cpu")
        if not c:
            return
        flags = c["flags"].split()
        if c.get("hypervisor") and "hypervisor" not in flags:
            pos = flags.index("lahf_lm") if "lahf_lm" in flags else len(flags)
            flags.insert(pos, "hypervisor")
        tbits = (self.threads - 1).bit_length()
        cbits = (self.cores - 1).bit_length()
        sbits = c.get("apicid_bits", tbits + cbits)
        out = []
        for i, (s, co, th) in enumerate(self.cpus):
            apic = (s << sbits) | (co << tbits) | th
            b = []
            b.append("processor\t: %d\n" % i)
            b.append("vendor_id\t: %s\n" % c["vendor_id"])
            b.append("cpu family\t: %d\n" % c["family"])
            b.append("model\t\t: %d\n" % c["model"])
            b.append("model name\t: %s\n" % c["model_name"])
            b.append("stepping\t: %d\n" % c.get("stepping", 0))
            if c.get("microcode"):
                b.append("microcode\t: 0x%x\n" % c["microcode"])
            b.append("cpu MHz\t\t: %s\n" % c.get("mhz", "2000.000"))
            if c.get("cache_size"):
                b.append("cache size\t: %s\n" % c["cache_size"])
            b.append("physical id\t: %d\n" % s)
            b.append("siblings\t: %d\n" % (self.cores * self.threads))
            b.append("core id\t\t: %d\n" % co)
            b.append("cpu cores\t: %d\n" % self.cores)
            b.append("apicid\t\t: %d\n" % apic)
            b.append("initial apicid\t: %d\n" % apic)
            b.append("fpu\t\t: yes\n")
            b.append("fpu_exception\t: yes\n")
            b.append("cpuid level\t: %d\n" % c.get("cpuid_level", 13))
            b.append("wp\t\t: yes\n")
            b.append("flags\t\t: %s\n" % " ".join(flags))
            if c.get("vmx_flags"):
                b.append("vmx flags\t: %s\n" % c["vmx_flags"])
            b.append("bugs\t\t: %s\n" % c.get("bugs", ""))
            b.append("bogomips\t: %s\n" % c.get("bogomips", "4000.00"))
            if c.get("tlb_size"):
                b.append("TLB size\t: %s\n" % c["tlb_size"])
            b.append("clflush size\t: 64\n")
            b.append("cache_alignment\t: 64\n")
            b.append("address sizes\t: %s\n" % c.get("address_sizes", "46 bits physical, 48 bits virtual"))
            pm = c.get("power_management", "")
            b.append("power management:%s\n" % ((" " + pm) if pm else ""))
            b.append("\n")
            out.append("".join(b))
        self.t.write("proc/cpuinfo", "".join(out))

    def emit_cpu_nodes(self):
        if not self.d.get("cpu"):
            return
        t = self.t
        rng = "0-%d\n" % (self.ncpus - 1) if self.ncpus > 1 else "0\n"
        for f in ("online", "possible", "present"):
            t.write("sys/devices/system/cpu/%s" % f, rng)
        nodes = sorted(self.nodes)
        nl = cpulist(nodes) + "\n"
        for f in ("online", "possible", "has_cpu", "has_normal_memory"):
            t.write("sys/devices/system/node/%s" % f, nl)
        for n in nodes:
            t.write("sys/devices/system/node/node%d/cpulist" % n, cpulist(self.nodes[n]) + "\n")
            t.write("sys/devices/system/node/node%d/cpumap" % n, cpumask(self.nodes[n], self.ncpus) + "\n")

    def emit_iommu_units(self):
        t = self.t
        self.iommu_paths = {}
        for u in self.d.get("iommu", []):
            name = u["name"]
            if u.get("pci"):
                path = "/sys/devices/%s/%s/iommu/%s" % (
                    self.hb_for_bdf(u["pci"]).name, parse_name(u["pci"]), name)
            else:
                path = "/sys/devices/virtual/iommu/%s" % name
            self.iommu_paths[name] = path
            t.link("sys/class/iommu/%s" % name, path)
            t.link(path + "/subsystem", "/sys/class/iommu")
            t.write(path + "/uevent", "")
            t.write(path + "/power/control", "auto\n")
            t.write(path + "/power/runtime_status", "unsupported\n")
            if u.get("pci"):
                t.link(path + "/device", "/sys/devices/%s/%s" % (
                    self.hb_for_bdf(u["pci"]).name, parse_name(u["pci"])))
            for key, val in u.get("attrs", {}).items():
                t.write(path + "/" + key, val if val.endswith("\n") else val + "\n")

    def hb_for_bdf(self, bdf):
        dom, bus, _, _ = parse_bdf(bdf)
        for h in self.hbs:
            if h.domain == dom and h.bus == bus:
                return h
        raise SystemExit("mkfixture: %s is not on a root bus" % bdf)

    def emit_pci(self):
        t = self.t
        t.write("sys/bus/pci/drivers_autoprobe", "1\n")
        t.write("sys/bus/pci/uevent", "")
        t.write("sys/bus/pci/rescan", "")
        t.write("sys/bus/pci/resource_alignment", "\n")
        drivers = {}
        groups = {}
        for hb in self.hbs:
            hp = hb.path
            t.write(hp + "/uevent", "")
            t.write(hp + "/power/control", "auto\n")
            t.write(hp + "/power/runtime_status", "unsupported\n")
            t.write(hp + "/power/runtime_enabled", "disabled\n")
            t.write(hp + "/power/async", "disabled\n")
            self.emit_pci_bus(hp + "/pci_bus/" + hb.busname(), hp, hb.numa_node)
        for f in self.ordered:
            p = f.path
            t.link("sys/bus/pci/devices/" + f.name, p)
            t.write(p + "/vendor", "0x%04x\n" % f.vendor)
            t.write(p + "/device", "0x%04x\n" % f.device)
            t.write(p + "/subsystem_vendor", "0x%04x\n" % f.svid)
            t.write(p + "/subsystem_device", "0x%04x\n" % f.ssid)
            t.write(p + "/class", "0x%06x\n" % f.klass)
            t.write(p + "/revision", "0x%02x\n" % f.rev)
            cfg = self.config_space(f)
            if self.config_bytes is not None:
                cfg = cfg[: self.config_bytes]
            t.write(p + "/config", cfg)
            t.write(p + "/resource", self.resource_text(f))
            t.write(p + "/irq", "%d\n" % self.irq_value(f))
            t.write(p + "/numa_node", "%d\n" % f.numa_node)
            cpus = self.node_cpus(f.numa_node)
            t.write(p + "/local_cpulist", cpulist(cpus) + "\n")
            t.write(p + "/local_cpus", cpumask(cpus, self.ncpus) + "\n")
            enabled = f.driver is not None or f.is_bridge
            t.write(p + "/enable", "%d\n" % (1 if enabled else 0))
            dma = f.spec.get("dma_bits", DEFAULT_DMA_BITS.get(f.driver, 32))
            t.write(p + "/dma_mask_bits", "%d\n" % dma)
            t.write(p + "/consistent_dma_mask_bits", "%d\n" % dma)
            t.write(p + "/broken_parity_status", "0\n")
            t.write(p + "/msi_bus", "1\n")
            t.write(p + "/d3cold_allowed", "1\n")
            t.write(p + "/driver_override", "(null)\n")
            t.write(p + "/ari_enabled", "%d\n" % self.ari_enabled(f))
            if self.kv >= (5, 19):
                t.write(p + "/power_state", "D0\n")
            modalias = "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X" % (
                f.vendor, f.device, f.svid, f.ssid, (f.klass >> 16) & 0xFF,
                (f.klass >> 8) & 0xFF, f.klass & 0xFF)
            t.write(p + "/modalias", modalias + "\n")
            ue = ""
            if f.driver:
                ue += "DRIVER=%s\n" % f.driver
            ue += "PCI_CLASS=%04X\n" % f.klass
            ue += "PCI_ID=%04X:%04X\n" % (f.vendor, f.device)
            ue += "PCI_SUBSYS_ID=%04X:%04X\n" % (f.svid, f.ssid)
            ue += "PCI_SLOT_NAME=%s\n" % f.name
            ue += "MODALIAS=%s\n" % modalias
            t.write(p + "/uevent", ue)
            t.link(p + "/subsystem", "/sys/bus/pci")
            if f.driver:
                t.link(p + "/driver", "/sys/bus/pci/drivers/" + f.driver)
                drivers.setdefault(f.driver, []).append(f)
            if f.iommu_group is not None:
                t.link(p + "/iommu_group", "/sys/kernel/iommu_groups/%d" % f.iommu_group)
                groups.setdefault(f.iommu_group, []).append(f)
                hb = f.host_bridge()
                if hb.iommu and hb.iommu in self.iommu_paths:
                    ip = self.iommu_paths[hb.iommu]
                    t.link(p + "/iommu", ip)
                    t.link(ip + "/devices/" + f.name, p)
            if f.pcie:
                cap = f.link_cap or (0, 0)
                if f.port in ("rciep", "rcec"):
                    cap = (0, 0)
                if f.is_vf and f.pf.link_cap:
                    cap = f.pf.link_cap
                cur = self.current_link(f) or (0, 0)
                if f.port in ("rciep", "rcec"):
                    cur = (0, 0)
                t.write(p + "/max_link_speed", SPEED_STR[cap[0]] + "\n")
                t.write(p + "/max_link_width", "%d\n" % cap[1])
                t.write(p + "/current_link_speed", SPEED_STR[cur[0]] + "\n")
                t.write(p + "/current_link_width", "%d\n" % cur[1])
            if f.is_bridge:
                t.write(p + "/secondary_bus_number", "%d\n" % f.sec)
                t.write(p + "/subordinate_bus_number", "%d\n" % f.subordinate)
                self.emit_pci_bus(p + "/pci_bus/%04x:%02x" % (f.dom, f.sec), p, f.numa_node)
            if (f.klass >> 8) == 0x0300:
                t.write(p + "/boot_vga", "%d\n" % (1 if f.spec.get("boot_vga") else 0))
            if f.sriov:
                sr = f.sriov
                t.write(p + "/sriov_totalvfs", "%d\n" % sr["total"])
                t.write(p + "/sriov_numvfs", "%d\n" % sr.get("num", 0))
                t.write(p + "/sriov_offset", "%d\n" % sr.get("offset", 1))
                t.write(p + "/sriov_stride", "%d\n" % sr.get("stride", 1))
                t.write(p + "/sriov_vf_device", "%x\n" % sr["vf_device"])
                t.write(p + "/sriov_drivers_autoprobe", "1\n")
                for vf in f.vfs:
                    t.link(p + "/virtfn%d" % vf.vf_index, vf.path)
            if f.is_vf:
                t.link(p + "/physfn", f.pf.path)
            pm = f.spec.get("p2pmem")
            if pm:
                t.write(p + "/p2pmem/size", "%d\n" % size_of(pm["size"]))
                t.write(p + "/p2pmem/available", "%d\n" % size_of(pm.get("available", pm["size"])))
                t.write(p + "/p2pmem/published", "%d\n" % (1 if pm.get("published", True) else 0))
                if self.kv >= (6, 2):
                    t.write(p + "/p2pmem/allocate", "")
            drm = f.spec.get("drm")
            if drm:
                self.emit_drm(f, drm)
            for name, content in f.spec.get("files", {}).items():
                t.write(p + "/" + name, content)
        for drv, lst in sorted(drivers.items()):
            dp = "sys/bus/pci/drivers/" + drv
            for n in ("bind", "unbind", "new_id", "remove_id", "uevent"):
                t.write(dp + "/" + n, "")
            mod = self.driver_module(drv)
            if mod:
                t.link(dp + "/module", "/sys/module/" + mod)
            for f in lst:
                t.link(dp + "/" + f.name, f.path)
        for g, lst in sorted(groups.items()):
            gp = "sys/kernel/iommu_groups/%d" % g
            t.write(gp + "/type", "%s\n" % self.iommu_domain)
            if self.iommu_mode == "amd":
                rr = ("0x00000000fee00000 0x00000000feefffff msi\n"
                      "0x000000fd00000000 0x000000ffffffffff reserved\n")
            else:
                rr = "0x00000000fee00000 0x00000000feefffff msi\n"
            t.write(gp + "/reserved_regions", rr)
            for f in lst:
                t.link(gp + "/devices/" + f.name, f.path)

    def driver_module(self, drv):
        mods = self.d.get("modules", {})
        name = drv.replace("-", "_")
        if name in mods and not mods[name].get("builtin"):
            return name
        if drv == "vfio-pci" and "vfio_pci" in mods:
            return "vfio_pci"
        return None

    def irq_value(self, f):
        return f.irq

    def ari_enabled(self, f):
        p = f.parent
        if isinstance(p, Func) and p.port in DOWNSTREAM_FACING:
            if any(k.spec.get("ari", bool(k.sriov)) for k in p.children):
                return 1
        return 0

    def emit_pci_bus(self, path, devpath, node):
        t = self.t
        cpus = self.node_cpus(node)
        t.write(path + "/cpuaffinity", cpumask(cpus, self.ncpus) + "\n")
        t.write(path + "/cpulistaffinity", cpulist(cpus) + "\n")
        t.write(path + "/rescan", "")
        t.write(path + "/uevent", "")
        t.write(path + "/power/control", "auto\n")
        t.link(path + "/device", devpath)
        t.link(path + "/subsystem", "/sys/class/pci_bus")
        t.link("sys/class/pci_bus/" + os.path.basename(path), path)

    def emit_drm(self, f, drm):
        t = self.t
        for kind, minor in (("card", drm.get("card")), ("renderD", drm.get("render"))):
            if minor is None:
                continue
            name = "%s%d" % (kind, minor)
            p = f.path + "/drm/" + name
            t.write(p + "/dev", "226:%d\n" % minor)
            t.write(p + "/uevent", "MAJOR=226\nMINOR=%d\nDEVNAME=dri/%s\n" % (minor, name))
            t.link(p + "/device", f.path)
            t.link(p + "/subsystem", "/sys/class/drm")
            t.link("sys/class/drm/" + name, p)

    # ------------------------------------------------------------------ modules
    def emit_modules(self):
        t = self.t
        mods = self.d.get("modules", {})
        lines = []
        addr = 0xFFFFFFFFC0040000
        for name, m in reversed(list(mods.items())):   # load order: last line loaded first
            if m.get("builtin"):
                continue
            m["_addr"] = addr
            addr += align_up(m.get("size", 16384), 0x1000) + 0x1000
        for name, m in mods.items():
            mp = "sys/module/" + name
            for k, v in m.get("parameters", {}).items():
                t.write(mp + "/parameters/" + k, "%s\n" % v)
            if m.get("version"):
                t.write(mp + "/version", m["version"] + "\n")
            if m.get("builtin"):
                continue
            used = m.get("used_by", [])
            refcnt = m.get("refcnt", len(used))
            users = "".join(u + "," for u in used) or "-"
            a = m["_addr"] if self.mod_addrs else 0
            line = "%s %d %d %s Live 0x%016x" % (name, m.get("size", 16384), refcnt, users, a)
            if m.get("taint"):
                line += " (%s)" % m["taint"]
            lines.append(line + "\n")
            t.write(mp + "/initstate", "live\n")
            t.write(mp + "/refcnt", "%d\n" % refcnt)
            t.write(mp + "/coresize", "%d\n" % m.get("size", 16384))
            t.write(mp + "/taint", "%s\n" % m.get("taint", ""))
            t.write(mp + "/uevent", "")
            if m.get("srcversion"):
                t.write(mp + "/srcversion", m["srcversion"] + "\n")
            for u in used:
                t.link(mp + "/holders/" + u, "/sys/module/" + u)
        for drv in sorted({f.driver for f in self.funcs if f.driver}):
            mod = self.driver_module(drv)
            if mod:
                t.link("sys/module/%s/drivers/pci:%s" % (mod, drv), "/sys/bus/pci/drivers/" + drv)
        if mods:
            t.write("proc/modules", "".join(lines))

    # ------------------------------------------------------------------ KFD
    def emit_kfd(self):
        gpus = [f for f in self.ordered if f.spec.get("kfd")]
        if not gpus:
            return
        t = self.t
        kfd = self.d.get("kfd", {})
        base = "/sys/devices/virtual/kfd/kfd"
        t.link("sys/class/kfd/kfd", base)
        t.write(base + "/dev", "%s\n" % kfd.get("dev", "236:0"))
        t.write(base + "/uevent", "MAJOR=%s\nMINOR=%s\nDEVNAME=kfd\n" % tuple(kfd.get("dev", "236:0").split(":")))
        tp = base + "/topology"
        t.write(tp + "/generation_id", "%d\n" % kfd.get("generation_id", 1))
        sysp = kfd.get("system", {})
        t.write(tp + "/system_properties",
                "platform_oem %d\nplatform_id %d\nplatform_rev %d\n" % (
                    sysp.get("platform_oem", 0), sysp.get("platform_id", 0), sysp.get("platform_rev", 0)))
        nid = 0
        cpu_props = kfd.get("cpu", {})
        for node in sorted(self.nodes):
            props = dict(cpu_props)
            props.setdefault("cpu_cores_count", len(self.nodes[node]))
            props.setdefault("cpu_core_id_base", min(self.nodes[node]))
            self.kfd_node(tp + "/nodes/%d" % nid, props, gpu=False, gpu_id=0, name="")
            nid += 1
        for i, f in enumerate(gpus):
            props = dict(f.spec["kfd"])
            gpu_id = props.pop("gpu_id", 1000 + i)
            name = props.pop("name", "")
            props["vendor_id"] = f.vendor
            props["device_id"] = f.device
            props["location_id"] = (f.bus << 8) | f.devfn
            props["domain"] = f.dom
            if "drm_render_minor" not in props:
                drm = f.spec.get("drm", {})
                props["drm_render_minor"] = drm.get("render", 128 + i)
            self.kfd_node(tp + "/nodes/%d" % nid, props, gpu=True, gpu_id=gpu_id, name=name)
            nid += 1

    def kfd_node(self, path, p, gpu, gpu_id, name):
        kv = self.kfd_kv
        keys32 = ["cpu_cores_count", "simd_count", "mem_banks_count", "caches_count",
                  "io_links_count"]
        out = []

        def p32(k):
            out.append("%s %d\n" % (k, p.get(k, 0) & 0xFFFFFFFF))

        def p64(k):
            out.append("%s %d\n" % (k, p.get(k, 0)))

        for k in keys32:
            p32(k)
        if kv >= (6, 0):
            p32("p2p_links_count")
        for k in ("cpu_core_id_base", "simd_id_base", "max_waves_per_simd", "lds_size_in_kb",
                  "gds_size_in_kb", "num_gws", "wave_front_size", "array_count",
                  "simd_arrays_per_engine", "cu_per_simd_array", "simd_per_cu",
                  "max_slots_scratch_cu", "gfx_target_version", "vendor_id", "device_id",
                  "location_id", "domain", "drm_render_minor"):
            p32(k)
        p64("hive_id")
        p32("num_sdma_engines")
        p32("num_sdma_xgmi_engines")
        p32("num_sdma_queues_per_engine")
        p32("num_cp_queues")
        if gpu:
            p32("max_engine_clk_fcompute")
            out.append("local_mem_size 0\n")
            p32("fw_version")
            p32("capability")
            if kv >= (6, 7):
                p64("debug_prop")
            p32("sdma_fw_version")
            p64("unique_id")
            if kv >= (6, 5):
                p32("num_xcc")
        p32("max_engine_clk_ccompute")
        t = self.t
        t.write(path + "/properties", "".join(out))
        t.write(path + "/gpu_id", "%d\n" % gpu_id)
        t.write(path + "/name", "%s\n" % name)

    # ------------------------------------------------------------------ NVMe / block
    def next_minor(self):
        m = self.block_minor
        self.block_minor += 1
        return m

    def emit_queue(self, path, lbs, extra=None):
        t = self.t
        q = {"logical_block_size": lbs, "physical_block_size": lbs, "hw_sector_size": lbs,
             "minimum_io_size": lbs, "optimal_io_size": 0, "rotational": 0,
             "max_sectors_kb": 1280, "max_hw_sectors_kb": 2048, "nr_requests": 1023,
             "scheduler": "[none] mq-deadline", "write_cache": "write back",
             "dma_alignment": 3, "nomerges": 0, "read_ahead_kb": 128}
        if extra:
            q.update(extra)
        for k, v in q.items():
            t.write(path + "/queue/" + k, "%s\n" % v)

    def emit_disk(self, path, name, sectors, lbs, major, minor, extra_files=None, hidden=False,
                  queue_extra=None):
        t = self.t
        t.write(path + "/size", "%d\n" % sectors)
        t.write(path + "/ro", "0\n")
        t.write(path + "/removable", "0\n")
        t.write(path + "/alignment_offset", "0\n")
        t.write(path + "/discard_alignment", "0\n")
        t.write(path + "/ext_range", "%d\n" % (256 if major == 259 else 1))
        if not hidden:
            self.diskseq += 1
            t.write(path + "/dev", "%d:%d\n" % (major, minor))
            ue = "MAJOR=%d\nMINOR=%d\nDEVNAME=%s\nDEVTYPE=disk\n" % (major, minor, name)
            if self.kv >= (5, 15):
                ue += "DISKSEQ=%d\n" % self.diskseq
            t.write(path + "/uevent", ue)
            t.link("sys/dev/block/%d:%d" % (major, minor), path)
        else:
            t.write(path + "/uevent", "DEVTYPE=disk\n")
        t.link(path + "/subsystem", "/sys/class/block")
        t.link("sys/block/" + name, path)
        t.link("sys/class/block/" + name, path)
        self.emit_queue(path, lbs, queue_extra)
        for k, v in (extra_files or {}).items():
            t.write(path + "/" + k, v)
        self.disks[name] = path

    def emit_parts(self, disk_path, disk_name, total_sectors, parts, major):
        t = self.t
        start = 2048
        last_usable = total_sectors - 34
        for i, ps in enumerate(parts, 1):
            if ps == "*":
                size = last_usable - start + 1
                size -= size % 2048
            else:
                size = size_of(ps) // 512
            pname = "%s%s%d" % (disk_name, "p" if disk_name[-1].isdigit() else "", i)
            pp = disk_path + "/" + pname
            minor = self.next_minor()
            t.write(pp + "/partition", "%d\n" % i)
            t.write(pp + "/start", "%d\n" % start)
            t.write(pp + "/size", "%d\n" % size)
            t.write(pp + "/ro", "0\n")
            t.write(pp + "/alignment_offset", "0\n")
            t.write(pp + "/discard_alignment", "0\n")
            t.write(pp + "/dev", "%d:%d\n" % (major, minor))
            t.write(pp + "/uevent", "MAJOR=%d\nMINOR=%d\nDEVNAME=%s\nDEVTYPE=partition\nPARTN=%d\n"
                    % (major, minor, pname, i))
            t.link(pp + "/subsystem", "/sys/class/block")
            t.link("sys/class/block/" + pname, pp)
            t.link("sys/dev/block/%d:%d" % (major, minor), pp)
            self.disks[pname] = pp
            start = align_up(start + size, 2048)

    def emit_nvme(self):
        t = self.t
        for n in self.d.get("nvme", []):
            ctrl = n["ctrl"]
            inst = int(ctrl[4:])
            f = self.by_name[parse_name(n["pci"])]
            cp = f.path + "/nvme/" + ctrl
            t.link("sys/class/nvme/" + ctrl, cp)
            t.link(cp + "/device", f.path)
            t.link(cp + "/subsystem", "/sys/class/nvme")
            model, serial, fw = n["model"], n["serial"], n["firmware"]
            nqn = n.get("subsysnqn", "nqn.2014.08.org.nvmexpress:%04x%04x%-20s%-40s"
                        % (f.vendor, f.svid, serial, model))
            files = {"model": model, "serial": serial, "firmware_rev": fw, "transport": "pcie",
                     "address": f.name, "state": "live", "cntlid": str(n.get("cntlid", 0)),
                     "subsysnqn": nqn, "queue_count": str(n.get("queue_count", 65)),
                     "sqsize": str(n.get("sqsize", 1023)), "numa_node": str(f.numa_node),
                     "kato": "0", "dev": "%d:%d" % (n.get("char_major", 241), inst)}
            # hostnqn / hostid / ctrl_loss_tmo exist only for fabrics controllers (ctrl->opts)
            for k, v in files.items():
                t.write(cp + "/" + k, v + "\n")
            t.write(cp + "/uevent", "MAJOR=%d\nMINOR=%d\nDEVNAME=%s\nNVME_TRTYPE=pcie\n"
                    % (n.get("char_major", 241), inst, ctrl))
            # subsystem (always registered, CONFIG_NVME_MULTIPATH or not)
            sp = "/sys/devices/virtual/nvme-subsystem/nvme-subsys%d" % inst
            t.link("sys/class/nvme-subsystem/nvme-subsys%d" % inst, sp)
            for k, v in (("model", model), ("serial", serial), ("firmware_rev", fw),
                         ("subsysnqn", nqn), ("iopolicy", n.get("iopolicy", "numa")),
                         ("subsystype", "nvm")):
                if k == "subsystype" and self.kv < (5, 18):
                    continue
                t.write(sp + "/" + k, v + "\n")
            t.link(sp + "/" + ctrl, cp)
            t.link(sp + "/subsystem", "/sys/class/nvme-subsystem")
            t.write(sp + "/uevent", "")
            mp = n.get("multipath", False)
            for ns in n.get("namespaces", []):
                nsid = ns.get("nsid", 1)
                dname = "nvme%dn%d" % (inst, nsid)
                sectors = size_of(ns["size"]) // 512
                lbs = ns.get("lbs", 512)
                nsfiles = {"nsid": "%d\n" % nsid,
                           "wwid": "%s\n" % ns.get("wwid", "eui.%016x" % (0x0025388a01000000 + inst * 16 + nsid))}
                if mp:
                    hidden = "nvme%dc%dn%d" % (inst, inst, nsid)
                    hp = cp + "/" + hidden
                    self.emit_disk(hp, hidden, sectors, lbs, 259, None, hidden=True)
                    t.link(hp + "/device", cp)
                    dp = sp + "/" + dname
                    self.emit_disk(dp, dname, sectors, lbs, 259, self.next_minor(), nsfiles)
                    t.link(dp + "/device", sp)
                    t.link(dp + "/slaves/" + hidden, hp)
                    t.link(hp + "/holders/" + dname, dp)
                else:
                    dp = cp + "/" + dname
                    self.emit_disk(dp, dname, sectors, lbs, 259, self.next_minor(), nsfiles)
                    t.link(dp + "/device", cp)
                if ns.get("parts"):
                    self.emit_parts(dp, dname, sectors, ns["parts"], 259)

    def emit_stacked(self):
        t = self.t
        for kind, major in (("loop", 7), ("md", 9), ("dm", self.dm_major)):
            for i, e in enumerate(self.d.get(kind, [])):
                name = e["name"]
                minor = int("".join(ch for ch in name if ch.isdigit()))
                dp = "/sys/devices/virtual/block/" + name
                sectors = size_of(e["size"]) // 512
                extra = {}
                if kind == "dm":
                    extra = {"dm/name": e["dm_name"] + "\n", "dm/uuid": e.get("uuid", "") + "\n",
                             "dm/suspended": "0\n", "dm/use_blk_mq": "1\n"}
                elif kind == "md":
                    extra = {"md/level": e["level"] + "\n",
                             "md/raid_disks": "%d\n" % len(e.get("slaves", [])),
                             "md/array_state": e.get("array_state", "clean") + "\n",
                             "md/metadata_version": e.get("metadata", "1.2") + "\n",
                             "md/chunk_size": "%d\n" % size_of(e.get("chunk", "512K"))}
                elif kind == "loop":
                    extra = {"loop/backing_file": e["backing_file"] + "\n",
                             "loop/offset": "0\n", "loop/sizelimit": "0\n",
                             "loop/autoclear": "%d\n" % e.get("autoclear", 1),
                             "loop/partscan": "0\n", "loop/dio": "%d\n" % e.get("dio", 0)}
                self.emit_disk(dp, name, sectors, e.get("lbs", 512), major, minor, extra,
                               queue_extra={"rotational": e.get("rotational", 0)})
                for k, sl in enumerate(e.get("slaves", [])):
                    if sl not in self.disks:
                        raise SystemExit("mkfixture: %s: unknown slave %s" % (name, sl))
                    t.link(dp + "/slaves/" + sl, self.disks[sl])
                    t.link(self.disks[sl] + "/holders/" + name, dp)
                    if kind == "md":
                        t.link(dp + "/md/dev-%s/block" % sl, self.disks[sl])
                        t.write(dp + "/md/dev-%s/state" % sl, "in_sync\n")
                        t.write(dp + "/md/dev-%s/slot" % sl, "%d\n" % k)

    def emit_extra(self):
        for f in self.d.get("file", []):
            if "hex" in f:
                self.t.write(f["path"], bytes.fromhex(f["hex"]))
            else:
                self.t.write(f["path"], f.get("text", ""))
        for s in self.d.get("symlink", []):
            self.t.raw_link(s["path"], s["target"])


def parse_name(bdf):
    return bdf_name(*parse_bdf(bdf))


# ----------------------------------------------------------------------------------------------

def generate(toml_path, out_root=None, force_config_bytes=None):
    desc = load_description(toml_path)
    if force_config_bytes is not None:
        desc.setdefault("machine", {})["config_bytes"] = force_config_bytes
    m = Machine(desc, toml_path)
    m.emit()
    if out_root is None:
        out_root = os.path.join(os.path.dirname(os.path.abspath(toml_path)), "root")
    m.t.flush(out_root)
    return out_root


def main(argv=None):
    ap = argparse.ArgumentParser(description="Generate a fake Linux root from a machine.toml")
    ap.add_argument("toml", nargs="*", help="fixtures/<name>/machine.toml")
    ap.add_argument("--all", action="store_true", help="regenerate every fixtures/*/machine.toml")
    ap.add_argument("--fixtures", default=None, help="fixtures directory (default: ../fixtures)")
    ap.add_argument("--out", default=None,
                    help="write <out>/<name>/root instead of next to the toml")
    ap.add_argument("--nonroot", action="store_true",
                    help="truncate config files to 64 bytes (like config_bytes = 64)")
    a = ap.parse_args(argv)
    paths = list(a.toml)
    if a.all:
        fx = a.fixtures or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
        for name in sorted(os.listdir(fx)):
            p = os.path.join(fx, name, "machine.toml")
            if os.path.isfile(p):
                paths.append(p)
    if not paths:
        ap.error("give a machine.toml or --all")
    for p in paths:
        out = None
        if a.out:
            out = os.path.join(a.out, os.path.basename(os.path.dirname(os.path.abspath(p))), "root")
        r = generate(p, out, 64 if a.nonroot else None)
        print("mkfixture: wrote %s" % os.path.relpath(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
