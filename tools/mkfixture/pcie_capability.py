"""The PCI Express capability: device, link and slot registers, and their "2" versions."""

from .pci_names import DOWNSTREAM_FACING, NO_LINK_PORTS, PORT_TYPES

ENDPOINT_PORTS = ("endpoint", "legacy_endpoint", "rciep")


def write_pcie_capability(regs, function, offset, next_offset, link):
    """link: the current (speed, width) from link_training, or None."""
    spec = function.spec
    slot = spec.get("slot")
    regs.put8(offset, 0x10)
    regs.put8(offset + 1, next_offset)
    capabilities = 0x2 | (PORT_TYPES[function.port] << 4) | (0x100 if slot is not None else 0)
    regs.put16(offset + 2, capabilities)
    endpoint = function.port in ENDPOINT_PORTS
    write_device_registers(regs, function, offset, endpoint)
    has_link = function.port not in NO_LINK_PORTS
    if has_link:
        write_link_registers(regs, function, offset, endpoint, link)
    if slot is not None:
        slot_capabilities = (slot << 19) | (75 << 7)      # physical slot, 75 W power limit
        regs.put32(offset + 0x14, spec.get("sltcap", slot_capabilities))
        regs.put16(offset + 0x18, spec.get("sltctl", 0x03C0))  # attention/power indicators off
        present = any(not child.is_vf for child in function.children)
        regs.put16(offset + 0x1A, 0x0040 if present else 0x0000)
    write_device_registers_2(regs, function, offset)
    if has_link:
        write_link_registers_2(regs, function, offset, link)


def write_device_registers(regs, function, offset, endpoint):
    spec = function.spec
    device_capabilities = 0x2 | 0x20 | 0x8000     # MPS 512, ExtTag, RBER
    if endpoint:
        device_capabilities |= (7 << 6) | (7 << 9)   # L0s/L1 acceptable latency: no limit
        if not spec.get("noflr"):
            device_capabilities |= 0x10000000
    if function.is_vf:
        device_capabilities = 0x10008FE2
    regs.put32(offset + 4, spec.get("devcap", device_capabilities))
    device_control = 0x2000 | 0x0020 | 0x0100 | 0x000F
    if endpoint:
        device_control |= 0x0010 | 0x0800
    if function.is_vf:
        device_control = 0x0000
    regs.put16(offset + 8, spec.get("devctl", device_control))
    regs.put16(offset + 0xA, 0x0000)


def supported_link(function):
    """The Link Capabilities speed/width; a VF shows its PF's."""
    link_cap = function.link_cap or (0, 0)
    if function.is_vf and function.pf.link_cap:
        link_cap = function.pf.link_cap
    return link_cap


def write_link_registers(regs, function, offset, endpoint, link):
    spec = function.spec
    link_cap = function.link_cap or (0, 0)
    if function.is_vf and function.pf.link_cap and spec.get("vf_link_like_pf", True):
        link_cap = function.pf.link_cap
    capabilities = link_cap[0] | (link_cap[1] << 4)
    aspm = spec.get("aspm", 0x2)             # L1 supported
    capabilities |= aspm << 10
    capabilities |= (0x6 << 12) | (0x6 << 15)  # L0s/L1 exit latency
    if endpoint:
        capabilities |= 0x40000                 # ClockPM
    if function.port in DOWNSTREAM_FACING:
        capabilities |= 0x80000 | 0x100000 | 0x200000   # SurpriseDown, LLActRep, BwNot
    capabilities |= 0x400000                    # ASPM optionality compliance
    port_number = spec.get("port_number", function.dev if function.port == "downstream" else 0)
    capabilities |= (port_number & 0xFF) << 24
    if function.is_vf:
        capabilities = link_cap[0] | (link_cap[1] << 4)
    regs.put32(offset + 0xC, capabilities)
    linked = link is not None and link[1] > 0
    control = 0x0040 if linked else 0x0000     # Common clock
    if function.port == "root_port":
        control |= 0x0008                      # Read Completion Boundary 128
    if function.is_vf:
        control = 0
    regs.put16(offset + 0x10, control)
    status = 0
    if link is not None:
        status = link[0] | (link[1] << 4)
        if linked and not function.is_vf:
            status |= 0x1000                       # slot clock
            if function.port in DOWNSTREAM_FACING:
                status |= 0x2000                   # DL active
    regs.put16(offset + 0x12, status)


def write_device_registers_2(regs, function, offset):
    spec = function.spec
    device_capabilities_2 = 0x0000001F | 0x800
    if function.port in DOWNSTREAM_FACING:
        device_capabilities_2 |= 0x20 | 0x40         # ARI forwarding, AtomicOp routing
    if function.port == "root_port":
        device_capabilities_2 |= 0x180
    regs.put32(offset + 0x24, spec.get("devcap2", device_capabilities_2))
    device_control_2 = 0
    if function.port in DOWNSTREAM_FACING:
        if any(child.ari_capable() for child in function.children):
            device_control_2 |= 0x20                 # ARI forwarding enabled
    regs.put16(offset + 0x28, spec.get("devctl2", device_control_2))


def write_link_registers_2(regs, function, offset, link):
    link_cap = supported_link(function)
    speeds = 0
    for generation in range(1, link_cap[0] + 1):
        speeds |= 1 << generation
    regs.put32(offset + 0x2C, speeds)
    regs.put16(offset + 0x30, link_cap[0] if not function.is_vf else 0)
    status_2 = 0
    if link is not None and link[0] >= 3 and not function.is_vf:
        status_2 = 0x1E      # equalization complete, phases 1-3 successful
    regs.put16(offset + 0x32, status_2)
