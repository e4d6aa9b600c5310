#!/usr/bin/env python3
"""make-large-machine.py - write a machine.toml (tools/mkfixture.py format) for a big server.

Usage
-----
    python3 bench/make-large-machine.py                      # ~1000 PCI functions, TOML on stdout
    python3 bench/make-large-machine.py --devices 300 -o /tmp/big/machine.toml

The machine is modelled on fixtures/epyc-mi300x-8gpu/machine.toml (2-socket AMD Genoa): its
[kernel], [os], [proc], [dmi], [cpu], [modules], [kfd], [[file]], [[symlink]] and the Genoa /
PEX89xxx / NVMe templates are read from that file with tomllib and re-emitted. On top of that it
generates:

  * host bridges (8 per 2-socket set, like Genoa's 4 root complexes per socket), each with its
    root complex, AMD IOMMU (one [[iommu]] per host bridge), RCEC and one dummy host bridge +
    root port per slot;
  * S PCIe switches (Broadcom PEX89xxx: upstream port + 7 downstream ports), spread round-robin
    over the host bridges; each switch carries
      - 2 AMD Radeon PRO W7900 GPUs (driver amdgpu) with their HDMI/DP audio function, each
        behind the GPU's own internal upstream/downstream port pair (as Navi 31 cards really are),
      - 4 NVMe controllers (Samsung PM1743 / KIOXIA CM7, one [[nvme]] + one namespace each),
      - 1 dual-port NVIDIA ConnectX-7 NIC (mlx5_core) with SR-IOV VFs;
  * a boot NVMe on a CPU root port, the ASPEED BMC behind its PCIe-to-PCI bridge, and an Intel
    X710 quad-port NIC per host bridge as further filler.

S is chosen from --devices (about one switch per 42 functions) and the number of SR-IOV VFs is
then set so that the total number of PCI functions is --devices (exactly, unless --devices is
too small for the fixed part). Buses are handed out per host bridge as needed; when a PCI domain
runs out of its 256 buses the next host bridge starts a new domain (segment), as multi-segment
servers do. Output is deterministic: same arguments -> same bytes. Python 3.11 stdlib only.
"""

import argparse
import json
import math
import os
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "..", "fixtures", "epyc-mi300x-8gpu", "machine.toml")

GPUS_PER_SWITCH = 2
NVME_PER_SWITCH = 4
FUNCS_PER_SWITCH_GUESS = 42       # fixed functions of a switch slot (24) + ~18 VFs
MAX_SWITCHES_PER_HB = 3
VF_TOTAL = 64                     # SR-IOV TotalVFs per ConnectX-7 PF

BASE_TEMPLATES = ["genoa-rc", "genoa-iommu", "genoa-rcec", "genoa-dummy", "genoa-rp",
                  "pex89-usp", "pex89-dsp", "pex89-dsp-x4", "pm1743", "cm7"]

EXTRA_TEMPLATES = {
    "navi31-usp": {   # the GPU's internal switch, upstream port
        "id": "1002:1478", "subsys": "1002:1478", "class": 0x060400, "rev": 0x10,
        "port": "upstream", "driver": "pcieport", "link": "gen4x16", "msi": 1,
    },
    "navi31-dsp": {   # the GPU's internal switch, downstream port
        "id": "1002:1479", "subsys": "1002:1479", "class": 0x060400, "rev": 0x10,
        "port": "downstream", "driver": "pcieport", "link": "gen4x16", "msi": 1,
    },
    "w7900": {
        "id": "1002:7448", "subsys": "1002:0e0d", "class": 0x030000, "rev": 0x00,
        "driver": "amdgpu", "link": "gen4x16",
        "bars": ["0:m64p:64G", "2:m64p:256M", "5:m32:1M"], "rom": "128K",
        "rebar": ["0:256M-64G:64G"], "msi": 1,
        "msix": {"count": 4, "bar": 5, "table": 0x42000, "pba": 0x43000},
        "kfd": {
            "name": "ip discovery", "simd_count": 192, "mem_banks_count": 1, "caches_count": 0,
            "io_links_count": 1, "p2p_links_count": 0, "simd_id_base": 2147487744,
            "max_waves_per_simd": 16, "lds_size_in_kb": 64, "num_gws": 64,
            "wave_front_size": 32, "array_count": 12, "simd_arrays_per_engine": 2,
            "cu_per_simd_array": 8, "simd_per_cu": 2, "max_slots_scratch_cu": 32,
            "gfx_target_version": 110000, "hive_id": 0, "num_sdma_engines": 2,
            "num_sdma_xgmi_engines": 0, "num_sdma_queues_per_engine": 6, "num_cp_queues": 8,
            "max_engine_clk_fcompute": 2495, "fw_version": 2060, "capability": 671588992,
            "debug_prop": 1495, "sdma_fw_version": 21, "num_xcc": 1,
            "max_engine_clk_ccompute": 3707,
        },
    },
    "w7900-audio": {
        "id": "1002:ab30", "subsys": "1002:ab30", "class": 0x040300, "rev": 0x00,
        "driver": "snd_hda_intel", "link": "gen4x16", "bars": ["0:m32:16K"], "msi": 1, "msix": 0,
    },
    "cx7": {
        "id": "15b3:1021", "subsys": "15b3:0040", "class": 0x020000, "rev": 0x00,
        "driver": "mlx5_core", "link": "gen5x16", "bars": ["0:m64p:32M"],
        "msix": {"count": 64, "bar": 0, "table": 0x2000, "pba": 0x3000},
    },
    "x710": {
        "id": "8086:1572", "subsys": "8086:0004", "class": 0x020000, "rev": 0x02,
        "driver": "i40e", "link": "gen3x8", "bars": ["0:m64p:8M", "3:m64p:32K"],
        "msix": {"count": 129, "bar": 3, "table": 0x0, "pba": 0x1000},
    },
}

EXTRA_MODULES = {
    "snd_hda_intel": {"size": 61440, "refcnt": 0},
    "mlx5_core": {"size": 2490368, "refcnt": 0},
    "i40e": {"size": 565248, "refcnt": 0},
}

NVME_MODELS = [
    ("pm1743", "SAMSUNG MZWLO7T6HBLA-00A07", "GDC7302Q", 6, 512,
     "nqn.1994-11.com.samsung:nvme:PM1743:2.5-inch:%s", "S7R6NE0W%06d"),
    ("cm7", "KIOXIA KCMYXRUG7T68", "0106    ", 1, 4096,
     "nqn.2019-10.com.kioxia:KCMYXRUG7T68:%s", "X3N0A%07dK"),
]


# ----------------------------------------------------------------------------------------------
# minimal deterministic TOML writer (only what machine.toml needs)

def tval(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(tval(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join("%s = %s" % (tkey(k), tval(x)) for k, x in v.items()) + " }" \
            if v else "{}"
    raise TypeError("cannot write %r as TOML" % (v,))


def tkey(k):
    if k and all(c.isalnum() or c in "_-" for c in k):
        return k
    return json.dumps(k)


def table(out, header, d, array=False):
    out.append(("[[%s]]" if array else "[%s]") % header)
    for k, v in d.items():
        out.append("%s = %s" % (tkey(k), tval(v)))


# ----------------------------------------------------------------------------------------------

def bdf(dom, bus, dev, fn):
    return "%04x:%02x:%02x.%x" % (dom, bus, dev, fn)


class Builder:
    def __init__(self, devices, base):
        self.devices = devices
        self.base = base
        self.pci = []        # list of [[pci]] dicts
        self.nvme = []       # (bdf, model index)
        self.gpus = 0
        self.slot = 0
        self.nics = []       # PF dicts whose sriov num is filled in at the end
        self.boot = None     # BDF of the boot NVMe on a CPU root port, if any
        self.vfs = 0

    def add(self, **kw):
        self.pci.append(kw)
        return kw

    def next_slot(self):
        self.slot += 1
        return self.slot

    # ---- one switch below root port `rp_bdf`; returns the next free bus
    def switch(self, dom, bus, sw_index, numa):
        usp_bus, dsp_bus = bus, bus + 1
        nxt = bus + 2
        self.add(bdf=bdf(dom, usp_bus, 0, 0), use="pex89-usp", sec=dsp_bus,
                 dsn="00-80-5e-10-00-89-%02x-%02x" % (sw_index >> 8, sw_index & 0xFF))
        dev = 0
        # GPUs (+ audio) behind their internal USP/DSP
        for _ in range(GPUS_PER_SWITCH):
            ext = nxt
            self.add(bdf=bdf(dom, dsp_bus, dev, 0), use="pex89-dsp", sec=ext, slot=self.next_slot())
            dev += 1
            self.add(bdf=bdf(dom, ext, 0, 0), use="navi31-usp", sec=ext + 1)
            self.add(bdf=bdf(dom, ext + 1, 0, 0), use="navi31-dsp", sec=ext + 2)
            g = self.gpus
            self.gpus += 1
            self.add(bdf=bdf(dom, ext + 2, 0, 0), use="w7900",
                     drm={"card": 1 + g, "render": 128 + g},
                     kfd={"gpu_id": 10000 + g * 7919 % 50000,
                          "unique_id": (0x9E37_79B9_7F4A_7C15 * (g + 1)) & ((1 << 64) - 1)})
            self.add(bdf=bdf(dom, ext + 2, 0, 1), use="w7900-audio")
            nxt = ext + 3
        # NVMe
        for i in range(NVME_PER_SWITCH):
            self.add(bdf=bdf(dom, dsp_bus, dev, 0), use="pex89-dsp-x4", sec=nxt, slot=self.next_slot())
            dev += 1
            m = (sw_index + i) % len(NVME_MODELS)
            self.add(bdf=bdf(dom, nxt, 0, 0), use=NVME_MODELS[m][0])
            self.nvme.append((bdf(dom, nxt, 0, 0), m))
            nxt += 1
        # dual-port ConnectX-7 with SR-IOV (VF counts filled in by fill_vfs)
        self.add(bdf=bdf(dom, dsp_bus, dev, 0), use="pex89-dsp", sec=nxt, slot=self.next_slot())
        for fn in range(2):
            pf = self.add(bdf=bdf(dom, nxt, 0, fn), use="cx7",
                          dsn="b8-3f-d2-03-00-%02x-%02x-%02x" % (sw_index >> 8, sw_index & 0xFF, fn))
            self.nics.append(pf)
        nxt += 1
        return nxt

    def host_bridge_buses(self, nsw, extras):
        return 1 + nsw * (2 + GPUS_PER_SWITCH * 3 + NVME_PER_SWITCH + 1) + len(extras) * 2

    def build(self):
        nsw = max(1, round(self.devices / FUNCS_PER_SWITCH_GUESS))
        nhb = max(min(8, nsw), math.ceil(nsw / MAX_SWITCHES_PER_HB))
        per_hb = [nsw // nhb + (1 if i < nsw % nhb else 0) for i in range(nhb)]
        self.hbs, self.iommus = [], []
        dom, bus = 0, 0
        sw = 0
        for h in range(nhb):
            extras = []
            if h == 0:
                extras.append("x710")
            if h == nhb // 2 - 1 or nhb == 1:
                extras.append("bmc")
            if h == nhb - 1:
                extras.append("boot")
            need = self.host_bridge_buses(per_hb[h], extras)
            if bus + need > 256:
                dom, bus = dom + 1, 0
            root = bus
            numa = h * 2 // nhb if nhb > 1 else 0
            name = "ivhd%d" % h
            self.iommus.append({"name": name, "pci": bdf(dom, root, 0, 2),
                                "attrs": {"amd-iommu/cap": "0x00190000",
                                          "amd-iommu/features": "25bf732fa2295afe:53d"}})
            self.hbs.append({"domain": dom, "bus": root, "numa_node": numa, "iommu": name,
                             "mmio32": 0xC0000000 + h * 0x400000,
                             "mmio64": (h + 1) << 42})
            self.add(bdf=bdf(dom, root, 0, 0), use="genoa-rc")
            self.add(bdf=bdf(dom, root, 0, 2), use="genoa-iommu")
            self.add(bdf=bdf(dom, root, 0, 3), use="genoa-rcec")
            nxt = root + 1
            dev = 1
            for _ in range(per_hb[h]):
                self.add(bdf=bdf(dom, root, dev, 0), use="genoa-dummy")
                self.add(bdf=bdf(dom, root, dev, 1), use="genoa-rp", sec=nxt, slot=self.next_slot())
                nxt = self.switch(dom, nxt, sw, numa)
                sw += 1
                dev += 1
            for ex in extras:
                self.add(bdf=bdf(dom, root, dev, 0), use="genoa-dummy")
                if ex == "x710":       # onboard quad-port 10GbE on a Gen3 x8 root port
                    self.add(bdf=bdf(dom, root, dev, 1), use="genoa-rp", link="gen3x8", sec=nxt)
                    for fn in range(4):
                        self.add(bdf=bdf(dom, nxt, 0, fn), use="x710",
                                 dsn="40-a6-b7-ff-ff-00-%02x-%02x" % (h, fn))
                    nxt += 1
                elif ex == "bmc":      # ASPEED BMC, as in the 8-GPU fixture
                    self.add(bdf=bdf(dom, root, dev, 2), use="genoa-rp", id="1022:14aa",
                             link="gen2x1", sec=nxt, vga_path=True)
                    self.add(bdf=bdf(dom, nxt, 0, 0), id="1a03:1150", subsys="15d9:1c48",
                             **{"class": 0x060400}, rev=0x06, port="pcie_pci_bridge",
                             link="gen2x1", sec=nxt + 1, vga_path=True, msi=0, aer=False)
                    self.add(bdf=bdf(dom, nxt + 1, 0, 0), id="1a03:2000", subsys="15d9:1c48",
                             **{"class": 0x030000}, rev=0x52, port="pci", driver="ast",
                             bars=["0:m32:64M", "1:m32:256K"], rom="shadow", boot_vga=True,
                             msi=4, iommu_group_of=bdf(dom, nxt, 0, 0), drm={"card": 0})
                    nxt += 2
                elif ex == "boot":     # boot drive (PM9A3 M.2) directly on a CPU root port
                    self.add(bdf=bdf(dom, root, dev, 1), use="genoa-rp", id="1022:14a5",
                             link="gen4x4", sec=nxt, slot=self.next_slot())
                    self.boot = bdf(dom, nxt, 0, 0)
                    self.add(bdf=self.boot, id="144d:a80a", subsys="144d:a813",
                             **{"class": 0x010802}, driver="nvme", link="gen4x4",
                             bars=["0:m64:16K"],
                             msix={"count": 130, "bar": 0, "table": 0x3000, "pba": 0x2000})
                    nxt += 1
                dev += 1
            assert nxt - root <= need, (nxt - root, need)
            bus = nxt
        self.fill_vfs()

    def fill_vfs(self):
        remaining = max(0, self.devices - len(self.pci))
        n = len(self.nics)
        for i, pf in enumerate(self.nics):
            num = min(VF_TOTAL, remaining // n + (1 if i < remaining % n else 0))
            fn = int(pf["bdf"][-1])
            # ARI: PF0 VFs right after the two PFs, PF1 VFs after PF0's TotalVFs
            offset = 2 if fn == 0 else 1 + VF_TOTAL
            pf["sriov"] = {"total": VF_TOTAL, "num": num, "vf_device": 0x101E, "offset": offset,
                           "stride": 1, "bars": ["0:m64p:1M"], "vf_driver": "mlx5_core"}
        self.vfs = sum(p["sriov"]["num"] for p in self.nics)

    def comment(self):
        return "--devices %d" % self.devices

    # ---- whole TOML
    def render(self):
        b = self.base
        out = []
        out.append("# Generated by bench/make-large-machine.py %s; do not edit." % self.comment())
        out.append("# Regenerate: python3 bench/make-large-machine.py %s -o machine.toml"
                   % self.comment())
        total = len(self.pci) + self.vfs
        table(out, "machine", {
            "description": "Genoa 2P benchmark machine: %d PCI functions, %d switches, %d GPUs, "
                           "%d NVMe (generated)" % (total, sum(1 for p in self.pci if p.get("use") == "pex89-usp"), self.gpus,
                                                    len(self.nvme) + (1 if self.boot else 0))})
        for sect in ("kernel", "os", "dmi", "cpu"):
            if sect in b:
                out.append("")
                table(out, sect, b[sect])
        # mounts: keep the non-NVMe lines of the base machine, point / and /boot/efi at our boot drive
        nboot = len(self.nvme)
        mounts = [m for m in b.get("proc", {}).get("mounts", []) if not m.startswith("/dev/")]
        if self.boot:
            mounts.insert(5, "/dev/nvme%dn1p2 / ext4 rw,relatime 0 0" % nboot)
            mounts.append("/dev/nvme%dn1p1 /boot/efi vfat rw,relatime,fmask=0077,dmask=0077 0 0" % nboot)
        mounts.append("/dev/md0 /scratch xfs rw,relatime,attr2,inode64,noquota 0 0")
        out.append("")
        table(out, "proc", {"mounts": mounts})
        mods = dict(EXTRA_MODULES)
        mods.update(b.get("modules", {}))
        for name, m in mods.items():
            out.append("")
            table(out, "modules.%s" % name, m)
        for io in self.iommus:
            out.append("")
            table(out, "iommu", io, array=True)
        for hb in self.hbs:
            out.append("")
            table(out, "host_bridge", hb, array=True)
        if "kfd" in b:
            out.append("")
            table(out, "kfd", b["kfd"])
        tmpl = {k: b["template"][k] for k in BASE_TEMPLATES}
        tmpl.update(EXTRA_TEMPLATES)
        for name, t in tmpl.items():
            out.append("")
            table(out, "template.%s" % name, t)
        for p in self.pci:
            out.append("")
            table(out, "pci", p, array=True)
        for i, (addr, m) in enumerate(self.nvme + ([(self.boot, None)] if self.boot else [])):
            out.append("")
            if m is None:
                table(out, "nvme", {
                    "ctrl": "nvme%d" % i, "pci": addr, "model": "SAMSUNG MZ1L21T9HCLS-00A07",
                    "serial": "S665NE0T300456", "firmware": "GDC7302Q", "cntlid": 6,
                    "subsysnqn": "nqn.1994-11.com.samsung:nvme:PM9A3:M.2:S665NE0T300456",
                    "namespaces": [{"nsid": 1, "size": "3750748848s", "lbs": 512,
                                    "parts": ["1G", "*"]}]}, array=True)
                continue
            _, model, fw, cntlid, lbs, nqn, serial = NVME_MODELS[m]
            serial = serial % (600000 + i)
            table(out, "nvme", {
                "ctrl": "nvme%d" % i, "pci": addr, "model": model, "serial": serial,
                "firmware": fw, "cntlid": cntlid, "subsysnqn": nqn % serial,
                "namespaces": [{"nsid": 1, "size": "15002931888s", "lbs": lbs}]}, array=True)
        if len(self.nvme) >= 2:
            out.append("")
            table(out, "md", {"name": "md0", "level": "raid0", "slaves": ["nvme0n1", "nvme1n1"],
                              "size": "30005862400s", "chunk": "512K"}, array=True)
        for f in b.get("file", []):
            out.append("")
            table(out, "file", f, array=True)
        for s in b.get("symlink", []):
            out.append("")
            table(out, "symlink", s, array=True)
        return "\n".join(out) + "\n"


class FabricBuilder(Builder):
    """A PCIe fabric: H host bridges, each with one root port and L levels of switches of fanout F
    (each switch: an upstream port and F downstream ports); the F**L leaves of a host bridge are
    alternately one GPU and two NVMe (leaf i is a GPU when i % 3 == 0). 4x3x5 is the issue-14 tree:
    4 x (root complex + root port + 6 + 30 + 150 switch ports + 125 leaves) = 1,252 functions,
    168 GPUs x 332 NVMe = 55,776 pairs. Each host bridge gets its own PCI domain when its buses no
    longer fit in the current one."""

    def __init__(self, host_bridges, levels, fanout, base):
        super().__init__(0, base)
        self.shape = (host_bridges, levels, fanout)

    def comment(self):
        return "--fabric %dx%dx%d" % self.shape

    def leaf(self, dom, bus, index):
        at = bdf(dom, bus, 0, 0)
        if index % 3 == 0:
            g = self.gpus
            self.gpus += 1
            self.add(bdf=at, use="w7900", drm={"card": 1 + g, "render": 128 + g},
                     kfd={"gpu_id": 10000 + g * 7919 % 50000,
                          "unique_id": (0x9E37_79B9_7F4A_7C15 * (g + 1)) & ((1 << 64) - 1)})
        else:
            m = len(self.nvme) % len(NVME_MODELS)
            self.add(bdf=at, use=NVME_MODELS[m][0])
            self.nvme.append((at, m))

    # one switch whose upstream port is on `bus`; returns the next free bus
    def fabric_switch(self, dom, bus, level, counter):
        hbs, levels, fanout = self.shape
        self.add(bdf=bdf(dom, bus, 0, 0), use="pex89-usp", sec=bus + 1,
                 dsn="00-80-5e-10-00-89-%02x-%02x" % (len(self.pci) >> 8 & 0xFF, len(self.pci) & 0xFF))
        nxt = bus + 2
        for d in range(fanout):
            leaf = level == levels - 1
            self.add(bdf=bdf(dom, bus + 1, d, 0), use="pex89-dsp-x4" if leaf else "pex89-dsp", sec=nxt,
                     slot=self.next_slot())
            if leaf:
                self.leaf(dom, nxt, counter[0])
                counter[0] += 1
                nxt += 1
            else:
                nxt = self.fabric_switch(dom, nxt, level + 1, counter)
        return nxt

    def build(self):
        hbs, levels, fanout = self.shape
        bridges = 1 + sum(fanout ** i * (1 + fanout) for i in range(levels))
        need = 1 + bridges
        if need > 256:
            raise SystemExit("make-large-machine.py: %d buses per host bridge do not fit in a PCI domain" % need)
        self.hbs, self.iommus = [], []
        dom, bus = 0, 0
        for h in range(hbs):
            if bus + need > 256:
                dom, bus = dom + 1, 0
            root = bus
            self.hbs.append({"domain": dom, "bus": root, "numa_node": h * 2 // hbs if hbs > 1 else 0,
                             "mmio32": 0xC0000000 + h * 0x400000, "mmio64": (h + 1) << 44})
            self.add(bdf=bdf(dom, root, 0, 0), use="genoa-rc")
            self.add(bdf=bdf(dom, root, 1, 1), use="genoa-rp", sec=root + 1, slot=self.next_slot())
            nxt = self.fabric_switch(dom, root + 1, 0, [0])
            assert nxt - root <= need, (nxt - root, need)
            bus = nxt


def main(argv=None):
    ap = argparse.ArgumentParser(description="Write a machine.toml for a server with ~N PCI functions")
    ap.add_argument("--devices", type=int, default=1000, help="total PCI functions (default 1000)")
    ap.add_argument("--fabric", metavar="HxLxF",
                    help="a switch fabric instead: H host bridges, L switch levels, fanout F (4x3x5: 1,252 functions)")
    ap.add_argument("--base", default=BASE, help="machine.toml to take kernel/os/cpu/... from")
    ap.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    ap.add_argument("--summary", action="store_true", help="print counts to stderr")
    a = ap.parse_args(argv)
    if a.devices < 1:
        ap.error("--devices must be positive")
    with open(a.base, "rb") as f:
        base = tomllib.load(f)
    if a.fabric:
        try:
            h, l, f = (int(x) for x in a.fabric.split("x"))
        except ValueError:
            ap.error("--fabric takes HxLxF, e.g. 4x3x5")
        if h < 1 or l < 1 or f < 1:
            ap.error("--fabric: every number must be positive")
        b = FabricBuilder(h, l, f, base)
    else:
        b = Builder(a.devices, base)
    b.build()
    text = b.render()
    tomllib.loads(text)      # never hand mkfixture something that is not TOML
    if a.output == "-":
        sys.stdout.write(text)
    else:
        os.makedirs(os.path.dirname(os.path.abspath(a.output)), exist_ok=True)
        with open(a.output, "w") as f:
            f.write(text)
    if a.summary:
        nvmes = len(b.nvme) + (1 if b.boot else 0)
        sys.stderr.write("functions=%d switches=%d host_bridges=%d gpus=%d nvme=%d vfs=%d pairs=%d\n"
                         % (len(b.pci) + b.vfs, sum(1 for p in b.pci if p.get("use") == "pex89-usp"), len(b.hbs), b.gpus, nvmes,
                            b.vfs, b.gpus * nvmes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
