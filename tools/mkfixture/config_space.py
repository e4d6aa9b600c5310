"""A function's `config` file: the type 0/1 header and the standard capability chain (PM, MSI,
PCI Express, MSI-X, SSVID, VPD); the extended capabilities come from extended_capabilities."""

from .extended_capabilities import write_extended_capabilities
from .pci_function import Bar
from .pcie_capability import write_pcie_capability
from .registers import Registers
from .sizes import align_up

# Where each standard capability sits unless caps_at moves it: (offset, length).
STANDARD_CAPABILITY_LAYOUT = {"pm": (0x40, 8), "msi": (0x50, 0x18), "pcie": (0x70, 0x3C),
                              "msix": (0xB0, 0xC), "ssvid": (0xC0, 8), "vpd": (0xC8, 8)}


def standard_capabilities(function):
    """The standard capability list in chain order: `caps`, else the usual set for its kind."""
    spec = function.spec
    if "caps" in spec:
        caps = list(spec["caps"])
    elif function.is_vf:
        caps = ["pcie", "msix"]
    elif function.is_bridge:
        caps = ["pm", "msi", "pcie", "ssvid"] if function.pcie else ["pm", "msi", "ssvid"]
    elif function.pcie:
        caps = ["pm", "msi", "pcie", "msix"]
    else:
        caps = ["pm", "msi"]
    if "msi" in spec and spec["msi"] == 0 and "msi" in caps:
        caps.remove("msi")
    msix = msix_spec(function)
    if isinstance(msix, int) and msix == 0 and "msix" in caps:
        caps.remove("msix")
    if not function.pcie and "pcie" in caps:
        caps.remove("pcie")
    return caps


def msix_spec(function):
    """`msix`: a vector count (0 = none) or { count, bar, table, pba }."""
    return function.spec.get("msix", 0 if function.is_bridge else 32)


def config_space(function, link, acs_control):
    """The full config space (4096 bytes for PCI Express, else 256). link is the current link
    (link_training.current_link), acs_control the ACS Control value the kernel left."""
    spec = function.spec
    regs = Registers(4096 if function.pcie else 256)
    caps = standard_capabilities(function)
    # a bridge with a driver (pcieport) uses MSI; an endpoint driver prefers MSI-X
    msi_on = spec.get("msi_on", function.is_bridge and function.driver is not None)
    msix_on = function.driver is not None and "msix" in caps and not msi_on
    write_common_header(regs, function, caps, msi_on, msix_on)
    if function.header == 0:
        write_type0_header(regs, function)
    else:
        write_type1_header(regs, function)
    pin = spec.get("intpin", 0 if function.is_vf else 1)
    regs.put8(0x3C, (function.irq if function.irq < 255 else 0xFF) if pin else 0xFF)
    regs.put8(0x3D, pin)
    write_standard_capabilities(regs, function, caps, msi_on, msix_on, link)
    if function.pcie:
        write_extended_capabilities(regs, function, acs_control)
    return bytes(regs.data)


def command_register(function, msi_on, msix_on):
    """What the driver (or the PCI core for a bridge) enabled: decoding, bus master, INTx off."""
    command = function.spec.get("command")
    if command is not None:
        return command
    if function.is_vf:
        # memory decoding of a VF is controlled by the PF's VF MSE bit; vfio-pci leaves an
        # unused VF disabled, a host driver makes it a bus master
        return 0x0004 if (function.driver and function.driver != "vfio-pci") else 0
    command = 0
    has_io = any(bar.kind == "io" for bar in function.bars) or "io" in function.windows
    has_mem = (any(bar.kind != "io" for bar in function.bars)
               or "mem" in function.windows or "pref" in function.windows)
    if function.driver or function.is_bridge:
        if has_io:
            command |= 0x1
        if has_mem:
            command |= 0x2
        command |= 0x4
    if function.is_bridge:
        command |= 0x0140   # ParErr+ SERR+
    if msi_on or msix_on:
        command |= 0x0400
    return command


def write_common_header(regs, function, caps, msi_on, msix_on):
    """The registers both header types share, and the BARs."""
    spec = function.spec
    if function.is_vf:
        # a VF's Vendor/Device ID read as all ones (SR-IOV)
        regs.put16(0, 0xFFFF)
        regs.put16(2, 0xFFFF)
    else:
        regs.put16(0, function.vendor)
        regs.put16(2, function.device)
    regs.put16(4, command_register(function, msi_on, msix_on))
    regs.put16(6, spec.get("status", 0x0010 if caps else 0x0000))
    regs.put8(8, function.rev)
    regs.put8(9, function.class_code & 0xFF)
    regs.put8(10, (function.class_code >> 8) & 0xFF)
    regs.put8(11, (function.class_code >> 16) & 0xFF)
    regs.put8(0xC, spec.get("cacheline", 0x10 if function.is_bridge else 0))
    regs.put8(0xE, function.header | (0x80 if function.multifunction else 0))
    bar_count = 2 if function.header == 1 else 6
    for bar in function.bars:
        if bar.index >= bar_count:
            raise SystemExit("mkfixture: %s: BAR%d not possible" % (function.name, bar.index))
        if function.is_vf:
            continue
        regs.put32(0x10 + 4 * bar.index, bar.register_low())
        if bar.is_64bit:
            regs.put32(0x10 + 4 * (bar.index + 1), bar.address >> 32)


def write_type0_header(regs, function):
    if not function.is_vf:
        regs.put16(0x2C, function.subsys_vendor)
        regs.put16(0x2E, function.subsys_device)
    if function.rom_bar:
        regs.put32(0x30, function.rom_bar.address & 0xFFFFF800)


def write_type1_header(regs, function):
    """Bus numbers and the I/O, memory and prefetchable windows (an unused one: base > limit)."""
    spec = function.spec
    regs.put8(0x18, function.bus)
    regs.put8(0x19, function.sec)
    regs.put8(0x1A, function.subordinate)
    io = function.windows.get("io")
    if io:
        base, size = io
        limit = base + size - 1
        regs.put8(0x1C, ((base >> 8) & 0xF0) | 0x1)
        regs.put8(0x1D, ((limit >> 8) & 0xF0) | 0x1)
        regs.put16(0x30, base >> 16)
        regs.put16(0x32, limit >> 16)
    else:
        regs.put8(0x1C, 0xF1)
        regs.put8(0x1D, 0x01)
    mem = function.windows.get("mem")
    if mem:
        base, size = mem
        regs.put16(0x20, (base >> 16) & 0xFFF0)
        regs.put16(0x22, ((base + size - 1) >> 16) & 0xFFF0)
    else:
        regs.put16(0x20, 0xFFF0)
        regs.put16(0x22, 0x0000)
    pref = function.windows.get("pref")
    if pref:
        base, size = pref
        limit = base + size - 1
        regs.put16(0x24, ((base >> 16) & 0xFFF0) | 0x1)
        regs.put16(0x26, ((limit >> 16) & 0xFFF0) | 0x1)
        regs.put32(0x28, base >> 32)
        regs.put32(0x2C, limit >> 32)
    else:
        regs.put16(0x24, 0xFFF1)
        regs.put16(0x26, 0x0001)
    if function.rom_bar:
        regs.put32(0x38, function.rom_bar.address & 0xFFFFF800)
    bridge_control = spec.get("bridge_ctl", 0x0002 | (0x0018 if spec.get("vga_path") else 0))
    regs.put16(0x3E, bridge_control)


def write_standard_capabilities(regs, function, caps, msi_on, msix_on, link):
    spec = function.spec
    caps_at = spec.get("caps_at", {})
    positions = [(name, caps_at.get(name, STANDARD_CAPABILITY_LAYOUT[name][0])) for name in caps]
    if positions:
        regs.put8(0x34, positions[0][1])
    for i, (name, offset) in enumerate(positions):
        next_offset = positions[i + 1][1] if i + 1 < len(positions) else 0
        if name == "pm":
            regs.put8(offset, 0x01)
            regs.put8(offset + 1, next_offset)
            regs.put16(offset + 2, spec.get("pmc", 0xC803 if function.is_bridge else 0x0003))
            regs.put16(offset + 4, 0x0008)
        elif name == "msi":
            write_msi_capability(regs, function, offset, next_offset, msi_on)
        elif name == "msix":
            write_msix_capability(regs, function, offset, next_offset, msix_on)
        elif name == "ssvid":
            regs.put8(offset, 0x0D)
            regs.put8(offset + 1, next_offset)
            regs.put16(offset + 4, function.subsys_vendor)
            regs.put16(offset + 6, function.subsys_device)
        elif name == "pcie":
            write_pcie_capability(regs, function, offset, next_offset, link)
        elif name == "vpd":
            regs.put8(offset, 0x03)
            regs.put8(offset + 1, next_offset)


def write_msi_capability(regs, function, offset, next_offset, msi_on):
    regs.put8(offset, 0x05)
    regs.put8(offset + 1, next_offset)
    vectors = function.spec.get("msi", 1 if function.is_bridge else 32)
    multiple_message_capable = max(0, (vectors - 1).bit_length())
    control = 0x0080 | 0x0100 | (multiple_message_capable << 1)   # 64-bit, per-vector masking
    if msi_on:
        control |= 0x1
    regs.put16(offset + 2, control)
    if msi_on:
        regs.put32(offset + 4, 0xFEE00000 | ((function.irq & 0xFF) << 12))
        regs.put16(offset + 0xC, 0x4020 + (function.irq & 0xFF))


def write_msix_capability(regs, function, offset, next_offset, msix_on):
    regs.put8(offset, 0x11)
    regs.put8(offset + 1, next_offset)
    msix = msix_spec(function)
    if isinstance(msix, dict):
        count = msix.get("count", 32)
        bir = msix.get("bar")
        table = msix.get("table")
        pba = msix.get("pba")
    else:
        count, bir, table, pba = msix, None, None, None
    if bir is None:
        # the table goes in the first non-prefetchable memory BAR, else the first memory BAR
        memory_bars = [bar for bar in function.bars if bar.kind != "io"]
        plain = [bar for bar in memory_bars if bar.kind in ("m32", "m64")]
        bir = (plain or memory_bars or [Bar(0, "m32", 0)])[0].index
    bar_size = next((bar.size for bar in function.bars if bar.index == bir), 0x4000)
    if table is None:
        table = 0x2000 if bar_size >= 0x4000 else 0
    if pba is None:
        pba = table + align_up(count * 16, 0x1000)
    control = (count - 1) | (0x8000 if msix_on else 0)
    regs.put16(offset + 2, control)
    regs.put32(offset + 4, table | bir)
    regs.put32(offset + 8, pba | bir)
