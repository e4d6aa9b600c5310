"""How machine.toml names PCI things: addresses (BDF), vendor:device IDs, links and port types."""


def parse_bdf(text):
    """'0000:05:00.0' or '05:00.0' -> (domain, bus, device, function)."""
    parts = text.split(":")
    if len(parts) == 2:
        parts = ["0000"] + parts
    domain = int(parts[0], 16)
    bus = int(parts[1], 16)
    device, function = parts[2].split(".")
    return domain, bus, int(device, 16), int(function, 16)


def bdf_name(domain, bus, device, function):
    """The name Linux gives the function in sysfs: '0000:05:00.0'."""
    return "%04x:%02x:%02x.%x" % (domain, bus, device, function)


def canonical_bdf(text):
    """'05:00.0' -> '0000:05:00.0' (how descriptions refer to functions by BDF)."""
    return bdf_name(*parse_bdf(text))


def parse_id(text):
    """'1002:74a1' -> (0x1002, 0x74a1)."""
    vendor, device = text.split(":")
    return int(vendor, 16), int(device, 16)


def parse_link(text):
    """'gen5x16' -> (5, 16): speed generation and width."""
    text = text.lower()
    generation, width = text[3:].split("x")
    return int(generation), int(width)


# What max_link_speed / current_link_speed print for each Link Status speed value.
LINK_SPEED_TEXT = {0: "Unknown", 1: "2.5 GT/s PCIe", 2: "5.0 GT/s PCIe", 3: "8.0 GT/s PCIe",
                   4: "16.0 GT/s PCIe", 5: "32.0 GT/s PCIe", 6: "64.0 GT/s PCIe"}

# `port` values of PCI Express functions -> Device/Port Type of the PCI Express capability.
PORT_TYPES = {"endpoint": 0, "legacy_endpoint": 1, "root_port": 4, "upstream": 5, "downstream": 6,
              "pcie_pci_bridge": 7, "pci_pcie_bridge": 8, "rciep": 9, "rcec": 10}
# Conventional PCI functions have no PCI Express capability.
CONVENTIONAL_PORTS = ("pci", "pci_bridge")
BRIDGE_PORTS = {"root_port", "upstream", "downstream", "pcie_pci_bridge", "pci_pcie_bridge",
                "pci_bridge"}
# Ports whose link partner is below them (the link's upstream end).
DOWNSTREAM_FACING = {"root_port", "downstream"}
# Root Complex integrated functions have no link.
NO_LINK_PORTS = ("rciep", "rcec")
