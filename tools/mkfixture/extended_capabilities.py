"""The PCI Express extended capabilities from offset 0x100: AER, ACS, ARI, SR-IOV, Resizable BAR
and Device Serial Number, and the ACS Control value the kernel leaves."""

from .sizes import align_up, size_of

# ACS capability/control bits
ACS_SV = 0x01    # Source Validation
ACS_RR = 0x04    # P2P Request Redirect
ACS_CR = 0x08    # P2P Completion Redirect
ACS_UF = 0x10    # Upstream Forwarding
ACS_EC = 0x20    # P2P Egress Control

# name -> (capability ID, version)
EXTENDED_CAPABILITY_IDS = {"aer": (0x0001, 2), "acs": (0x000D, 1), "ari": (0x000E, 1),
                           "sriov": (0x0010, 1), "rebar": (0x0015, 1), "dsn": (0x0003, 1)}


def acs_control(function, kernel):
    """ACS Control as Linux leaves it: with an IOMMU driver, pci_request_acs() enables SV, RR, CR
    and UF where capable; pci=disable_acs_redir= clears the redirect bits again. None: no ACS."""
    capability = function.spec.get("acs")
    if capability is None:
        return None
    if "acs_ctrl" in function.spec:
        return function.spec["acs_ctrl"]
    control = 0
    if kernel.iommu != "none":
        control = capability & (ACS_SV | ACS_RR | ACS_CR | ACS_UF)
        if function.name in kernel.acs_redir_disabled:
            control &= ~(ACS_RR | ACS_CR | ACS_EC)
    return control


def extended_capabilities(function):
    """The chain in order; each entry is (name, length in bytes)."""
    spec = function.spec
    chain = []
    if spec.get("aer", not function.is_vf):
        chain.append(("aer", 0x48))
    if spec.get("acs") is not None:
        chain.append(("acs", 0x8))
    if function.ari_capable():
        chain.append(("ari", 0x8))
    if function.sriov:
        chain.append(("sriov", 0x40))
    if spec.get("rebar"):
        chain.append(("rebar", 4 + 8 * len(spec.get("rebar", []))))
    if spec.get("dsn"):
        chain.append(("dsn", 0xC))
    return chain


def write_extended_capabilities(regs, function, acs_control_value):
    """Each capability 16-byte aligned after the previous one, starting at 0x100."""
    positions = []
    offset = 0x100
    for name, length in extended_capabilities(function):
        positions.append((name, offset))
        offset = align_up(offset + length, 0x10)
    for i, (name, offset) in enumerate(positions):
        next_offset = positions[i + 1][1] if i + 1 < len(positions) else 0
        cap_id, version = EXTENDED_CAPABILITY_IDS[name]
        regs.put32(offset, cap_id | (version << 16) | (next_offset << 20))
        if name == "aer":
            regs.put32(offset + 0x08, 0x00400000)            # UE mask: UncorrIntErr? keep default
            regs.put32(offset + 0x0C, 0x00462030)            # UE severity (spec default)
            regs.put32(offset + 0x14, 0x0000E000)            # CE mask (AdvNonFatalErr...)
            regs.put32(offset + 0x18, 0x000000A0)            # ECRC gen/check capable
        elif name == "acs":
            regs.put16(offset + 4, function.spec["acs"])
            regs.put16(offset + 6, acs_control_value)
        elif name == "ari":
            regs.put16(offset + 4, 0)    # Next Function Number 0: end of the ARI function list
        elif name == "sriov":
            write_sriov_capability(regs, function, offset)
        elif name == "rebar":
            write_resizable_bar_capability(regs, function, offset)
        elif name == "dsn":
            serial = int(function.spec["dsn"].replace("-", ""), 16)
            regs.put32(offset + 4, serial & 0xFFFFFFFF)
            regs.put32(offset + 8, serial >> 32)


def write_sriov_capability(regs, function, offset):
    sriov = function.sriov
    regs.put32(offset + 0x04, 0x00000000)
    control = 0
    if sriov.get("num", 0):
        control |= 0x1 | 0x8        # VF Enable, VF MSE
    if function.spec.get("ari", True):
        control |= 0x10             # ARI Capable Hierarchy
    regs.put16(offset + 0x08, control)
    regs.put16(offset + 0x0C, sriov.get("initial", sriov["total"]))
    regs.put16(offset + 0x0E, sriov["total"])
    regs.put16(offset + 0x10, sriov.get("num", 0))
    regs.put16(offset + 0x14, sriov.get("offset", 1))
    regs.put16(offset + 0x16, sriov.get("stride", 1))
    regs.put16(offset + 0x1A, sriov["vf_device"])
    regs.put32(offset + 0x1C, 0x00000553)          # supported page sizes
    regs.put32(offset + 0x20, 0x00000001)          # system page size 4K
    for bar in function.iov_bars:
        register = offset + 0x24 + 4 * bar.index
        regs.put32(register, bar.register_low())
        if bar.is_64bit:
            regs.put32(register + 4, bar.address >> 32)


def size_bit(size):
    """Resizable BAR encodes a size as log2(size / 1M)."""
    return (size_of(size) >> 20).bit_length() - 1


def write_resizable_bar_capability(regs, function, offset):
    """`rebar` entries "bar:smallest-largest:current"; current must be the BAR's size."""
    entries = function.spec["rebar"]
    for k, entry in enumerate(entries):
        bar, size_range, current = entry.split(":")
        smallest, largest = size_range.split("-")
        supported = 0
        for j in range(size_bit(smallest), size_bit(largest) + 1):
            supported |= 1 << (j + 4)
        regs.put32(offset + 4 + 8 * k, supported & 0xFFFFFFFF)
        control = int(bar) | (size_bit(current) << 8)
        if k == 0:
            control |= len(entries) << 5        # number of resizable BARs, in the first entry
        regs.put32(offset + 8 + 8 * k, control)
        real = next((b for b in function.bars if b.index == int(bar)), None)
        if real is not None and real.size != size_of(current):
            raise SystemExit("mkfixture: %s: rebar current %s != BAR%s size"
                             % (function.name, current, bar))
