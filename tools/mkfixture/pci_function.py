"""A PCI function as a [[pci]] entry describes it, its BARs, and the host bridge it hangs below."""

from .pci_names import (BRIDGE_PORTS, CONVENTIONAL_PORTS, PORT_TYPES, bdf_name, parse_bdf,
                        parse_id, parse_link)
from .sizes import size_of

# Linux's struct resource flags, as the sysfs `resource` file prints them.
IORESOURCE_IO = 0x100
IORESOURCE_MEM = 0x200
IORESOURCE_PREFETCH = 0x2000
IORESOURCE_READONLY = 0x4000
IORESOURCE_SIZEALIGN = 0x40000
IORESOURCE_MEM_64 = 0x100000

BAR_KINDS = ("m32", "m32p", "m64", "m64p", "io")


class Bar:
    def __init__(self, index, kind, size, iov=False):
        self.index = index
        self.kind = kind          # m32 m32p m64 m64p io
        self.size = size
        self.iov = iov            # an SR-IOV BAR of the PF: one slice per VF
        self.address = None       # assigned by address_allocation
        self.total = size         # IOV BAR: size * TotalVFs

    @property
    def is_64bit(self):
        return self.kind in ("m64", "m64p")

    @property
    def prefetchable(self):
        return self.kind in ("m32p", "m64p")

    @property
    def window(self):
        """Which bridge window the BAR lives in."""
        if self.kind == "io":
            return "io"
        if self.kind == "m64p":
            return "pref"
        return "mem"

    def resource_flags(self):
        if self.kind == "io":
            return 0x1 | IORESOURCE_IO | IORESOURCE_SIZEALIGN
        low = 0
        if self.is_64bit:
            low |= 0x4
        if self.prefetchable:
            low |= 0x8
        flags = low | IORESOURCE_MEM | IORESOURCE_SIZEALIGN
        if self.prefetchable:
            flags |= IORESOURCE_PREFETCH
        if self.is_64bit:
            flags |= IORESOURCE_MEM_64
        return flags

    def register_low(self):
        """The BAR register (the low dword of a 64-bit BAR): address and type bits."""
        if self.kind == "io":
            return (self.address & 0xFFFFFFFC) | 0x1
        value = self.address & 0xFFFFFFF0
        if self.is_64bit:
            value |= 0x4
        if self.prefetchable:
            value |= 0x8
        return value


def parse_bars(specs, iov=False):
    """["0:m64p:256G", "4:io:256"] -> [Bar, ...]."""
    bars = []
    for spec in specs or []:
        index, kind, size = spec.split(":")
        if kind not in BAR_KINDS:
            raise SystemExit("mkfixture: bad BAR type %r" % kind)
        bars.append(Bar(int(index), kind, size_of(size), iov))
    return bars


class HostBridge:
    def __init__(self, spec):
        self.domain = spec.get("domain", 0)
        self.bus = spec["bus"]
        self.numa_node = spec.get("numa_node", 0)
        self.iommu = spec.get("iommu")
        # where BARs and bridge windows below this root bus are allocated from
        self.bases = {"mem": spec.get("mmio32", 0xE0000000), "pref": spec.get("mmio64", 1 << 40),
                      "io": spec.get("io", 0x1000)}
        self.name = "pci%04x:%02x" % (self.domain, self.bus)
        self.path = "/sys/devices/" + self.name
        self.children = []

    def busname(self):
        return "%04x:%02x" % (self.domain, self.bus)


class PciFunction:
    def __init__(self, spec):
        self.spec = spec
        self.dom, self.bus, self.dev, self.fn = parse_bdf(spec["bdf"])
        self.name = bdf_name(self.dom, self.bus, self.dev, self.fn)
        self.vendor, self.device = parse_id(spec["id"])
        self.subsys_vendor, self.subsys_device = parse_id(spec.get("subsys", spec["id"]))
        self.class_code = spec.get("class", 0)
        self.rev = spec.get("rev", 0)
        self.driver = spec.get("driver")
        self.port = spec.get("port", "endpoint")
        if self.port not in PORT_TYPES and self.port not in CONVENTIONAL_PORTS:
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
            for bar in parse_bars(self.sriov.get("bars"), iov=True):
                bar.total = bar.size * self.sriov["total"]
                self.iov_bars.append(bar)
        self.is_vf = False
        self.pf = None
        self.vf_index = None
        self.vfs = []
        self.parent = None       # PciFunction (bridge) or HostBridge
        self.children = []       # functions on the secondary bus
        self.windows = {}        # "mem" | "pref" | "io" -> (base, size)
        self.subordinate = spec.get("subordinate")
        self.iommu_group = None
        self.link_cap = parse_link(spec["link"]) if "link" in spec else None
        self.link_cur = parse_link(spec["cur"]) if "cur" in spec else None
        self.multifunction = False
        self.irq = spec.get("irq")

    @property
    def devfn(self):
        return (self.dev << 3) | self.fn

    @property
    def is_bridge(self):
        return self.header == 1

    def host_bridge(self):
        parent = self.parent
        while isinstance(parent, PciFunction):
            parent = parent.parent
        return parent

    @property
    def numa_node(self):
        if "numa_node" in self.spec:
            return self.spec["numa_node"]
        return self.host_bridge().numa_node

    @property
    def path(self):
        """Its sysfs directory, nested below its bridges (a VF sits beside its PF)."""
        if self.is_vf:
            return self.pf.parent.path + "/" + self.name
        return self.parent.path + "/" + self.name

    def all_bars(self):
        bars = list(self.bars)
        if self.rom_bar:
            bars.append(self.rom_bar)
        bars.extend(self.iov_bars)
        return bars

    def ari_capable(self):
        """Whether it has an ARI capability (by default: SR-IOV PFs)."""
        return self.spec.get("ari", bool(self.sriov))
