"""The PCI part of sysfs: /sys/devices/pciDDDD:BB/... with every attribute file of each function,
its pci_bus, /sys/bus/pci/{devices,drivers} and the DRM card/render nodes of GPUs."""

import os

from .config_space import config_space
from .cpus import cpulist, cpumask
from .extended_capabilities import acs_control
from .iommu import link_function_to_iommu
from .kernel_modules import driver_module
from .link_training import current_link
from .pci_function import (IORESOURCE_MEM, IORESOURCE_PREFETCH, IORESOURCE_READONLY,
                           IORESOURCE_SIZEALIGN, PciFunction)
from .pci_names import DOWNSTREAM_FACING, LINK_SPEED_TEXT, NO_LINK_PORTS
from .sizes import size_of

# The DMA mask each driver sets (dma_mask_bits, consistent_dma_mask_bits); any other: 32.
DEFAULT_DMA_BITS = {"amdgpu": 44, "nvme": 64, "nvidia": 47, "ioatdma": 64, "snd_hda_intel": 64,
                    "xhci_hcd": 64, "ahci": 64, "vfio-pci": 32, "ast": 32, "pcieport": 32}
DRM_MAJOR = 226


def write_pci(machine, iommu_unit_paths):
    tree = machine.tree
    tree.write("sys/bus/pci/drivers_autoprobe", "1\n")
    tree.write("sys/bus/pci/uevent", "")
    tree.write("sys/bus/pci/rescan", "")
    tree.write("sys/bus/pci/resource_alignment", "\n")
    for host_bridge in machine.pci.host_bridges:
        path = host_bridge.path
        tree.write(path + "/uevent", "")
        tree.write(path + "/power/control", "auto\n")
        tree.write(path + "/power/runtime_status", "unsupported\n")
        tree.write(path + "/power/runtime_enabled", "disabled\n")
        tree.write(path + "/power/async", "disabled\n")
        write_pci_bus(machine, path + "/pci_bus/" + host_bridge.busname(), path,
                      host_bridge.numa_node)
    by_driver = {}
    for function in machine.pci.ordered:
        write_function(machine, function, iommu_unit_paths)
        if function.driver:
            by_driver.setdefault(function.driver, []).append(function)
    for driver, functions in sorted(by_driver.items()):
        driver_path = "sys/bus/pci/drivers/" + driver
        for name in ("bind", "unbind", "new_id", "remove_id", "uevent"):
            tree.write(driver_path + "/" + name, "")
        module = driver_module(driver, machine.desc.get("modules", {}))
        if module:
            tree.link(driver_path + "/module", "/sys/module/" + module)
        for function in functions:
            tree.link(driver_path + "/" + function.name, function.path)


def modalias(function):
    return "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X" % (
        function.vendor, function.device, function.subsys_vendor, function.subsys_device,
        (function.class_code >> 16) & 0xFF, (function.class_code >> 8) & 0xFF,
        function.class_code & 0xFF)


def uevent_text(function):
    text = ""
    if function.driver:
        text += "DRIVER=%s\n" % function.driver
    text += "PCI_CLASS=%04X\n" % function.class_code
    text += "PCI_ID=%04X:%04X\n" % (function.vendor, function.device)
    text += "PCI_SUBSYS_ID=%04X:%04X\n" % (function.subsys_vendor, function.subsys_device)
    text += "PCI_SLOT_NAME=%s\n" % function.name
    text += "MODALIAS=%s\n" % modalias(function)
    return text


def write_function(machine, function, iommu_unit_paths):
    tree = machine.tree
    path = function.path
    spec = function.spec
    tree.link("sys/bus/pci/devices/" + function.name, path)
    tree.write(path + "/vendor", "0x%04x\n" % function.vendor)
    tree.write(path + "/device", "0x%04x\n" % function.device)
    tree.write(path + "/subsystem_vendor", "0x%04x\n" % function.subsys_vendor)
    tree.write(path + "/subsystem_device", "0x%04x\n" % function.subsys_device)
    tree.write(path + "/class", "0x%06x\n" % function.class_code)
    tree.write(path + "/revision", "0x%02x\n" % function.rev)
    link = current_link(function, machine.pci.by_name)
    config = config_space(function, link, acs_control(function, machine.kernel))
    if machine.config_bytes is not None:
        config = config[: machine.config_bytes]
    tree.write(path + "/config", config)
    tree.write(path + "/resource", resource_text(function))
    tree.write(path + "/irq", "%d\n" % function.irq)
    tree.write(path + "/numa_node", "%d\n" % function.numa_node)
    cpus = machine.cpus.node_cpus(function.numa_node)
    tree.write(path + "/local_cpulist", cpulist(cpus) + "\n")
    tree.write(path + "/local_cpus", cpumask(cpus, machine.cpus.count) + "\n")
    enabled = function.driver is not None or function.is_bridge
    tree.write(path + "/enable", "%d\n" % (1 if enabled else 0))
    dma_bits = spec.get("dma_bits", DEFAULT_DMA_BITS.get(function.driver, 32))
    tree.write(path + "/dma_mask_bits", "%d\n" % dma_bits)
    tree.write(path + "/consistent_dma_mask_bits", "%d\n" % dma_bits)
    tree.write(path + "/broken_parity_status", "0\n")
    tree.write(path + "/msi_bus", "1\n")
    tree.write(path + "/d3cold_allowed", "1\n")
    tree.write(path + "/driver_override", "(null)\n")
    tree.write(path + "/ari_enabled", "%d\n" % ari_enabled(function))
    if machine.kernel.version >= (5, 19):
        tree.write(path + "/power_state", "D0\n")
    tree.write(path + "/modalias", modalias(function) + "\n")
    tree.write(path + "/uevent", uevent_text(function))
    tree.link(path + "/subsystem", "/sys/bus/pci")
    if function.driver:
        tree.link(path + "/driver", "/sys/bus/pci/drivers/" + function.driver)
    link_function_to_iommu(machine, function, iommu_unit_paths)
    if function.pcie:
        write_link_attributes(machine, function, link)
    if function.is_bridge:
        tree.write(path + "/secondary_bus_number", "%d\n" % function.sec)
        tree.write(path + "/subordinate_bus_number", "%d\n" % function.subordinate)
        write_pci_bus(machine, path + "/pci_bus/%04x:%02x" % (function.dom, function.sec), path,
                      function.numa_node)
    if (function.class_code >> 8) == 0x0300:
        tree.write(path + "/boot_vga", "%d\n" % (1 if spec.get("boot_vga") else 0))
    if function.sriov:
        write_sriov_attributes(machine, function)
    if function.is_vf:
        tree.link(path + "/physfn", function.pf.path)
    p2pmem = spec.get("p2pmem")
    if p2pmem:
        write_p2pmem_attributes(machine, function, p2pmem)
    drm = spec.get("drm")
    if drm:
        write_drm_nodes(machine, function, drm)
    for name, content in spec.get("files", {}).items():
        tree.write(path + "/" + name, content)


def write_link_attributes(machine, function, link):
    """max_link_* from Link Capabilities, current_link_* from Link Status."""
    supported = function.link_cap or (0, 0)
    if function.port in NO_LINK_PORTS:
        supported = (0, 0)
    if function.is_vf and function.pf.link_cap:
        supported = function.pf.link_cap
    current = link or (0, 0)
    if function.port in NO_LINK_PORTS:
        current = (0, 0)
    tree = machine.tree
    path = function.path
    tree.write(path + "/max_link_speed", LINK_SPEED_TEXT[supported[0]] + "\n")
    tree.write(path + "/max_link_width", "%d\n" % supported[1])
    tree.write(path + "/current_link_speed", LINK_SPEED_TEXT[current[0]] + "\n")
    tree.write(path + "/current_link_width", "%d\n" % current[1])


def write_sriov_attributes(machine, function):
    tree = machine.tree
    path = function.path
    sriov = function.sriov
    tree.write(path + "/sriov_totalvfs", "%d\n" % sriov["total"])
    tree.write(path + "/sriov_numvfs", "%d\n" % sriov.get("num", 0))
    tree.write(path + "/sriov_offset", "%d\n" % sriov.get("offset", 1))
    tree.write(path + "/sriov_stride", "%d\n" % sriov.get("stride", 1))
    tree.write(path + "/sriov_vf_device", "%x\n" % sriov["vf_device"])
    tree.write(path + "/sriov_drivers_autoprobe", "1\n")
    for vf in function.vfs:
        tree.link(path + "/virtfn%d" % vf.vf_index, vf.path)


def write_p2pmem_attributes(machine, function, p2pmem):
    tree = machine.tree
    path = function.path + "/p2pmem"
    tree.write(path + "/size", "%d\n" % size_of(p2pmem["size"]))
    tree.write(path + "/available", "%d\n" % size_of(p2pmem.get("available", p2pmem["size"])))
    tree.write(path + "/published", "%d\n" % (1 if p2pmem.get("published", True) else 0))
    if machine.kernel.version >= (6, 2):
        tree.write(path + "/allocate", "")


def resource_text(function):
    """The `resource` file: start end flags for BARs 0-5, the ROM, the 6 IOV BARs and, for a
    bridge, its 4 windows; an unused line is all zeros."""
    lines = []
    resources = [(0, 0, 0)] * (17 if function.is_bridge else 13)
    for bar in function.bars:
        if bar.address is None and not function.is_vf:
            continue
        if function.is_vf:
            # a VF's BAR is its slice of the PF's IOV BAR
            pf_bar = next(b for b in function.pf.iov_bars if b.index == bar.index)
            start = pf_bar.address + bar.size * function.vf_index
            resources[bar.index] = (start, start + bar.size - 1, pf_bar.resource_flags())
        else:
            resources[bar.index] = (bar.address, bar.address + bar.size - 1, bar.resource_flags())
    if function.rom == "shadow":
        resources[6] = (0xC0000, 0xDFFFF, 0x212)
    elif function.rom_bar:
        rom = function.rom_bar
        resources[6] = (rom.address, rom.address + rom.size - 1,
                        IORESOURCE_MEM | IORESOURCE_PREFETCH | IORESOURCE_READONLY
                        | IORESOURCE_SIZEALIGN)
    for bar in function.iov_bars:
        resources[7 + bar.index] = (bar.address, bar.address + bar.total - 1, bar.resource_flags())
    if function.is_bridge:
        io = function.windows.get("io")
        if io:
            resources[13] = (io[0], io[0] + io[1] - 1, 0x101)
        mem = function.windows.get("mem")
        if mem:
            resources[14] = (mem[0], mem[0] + mem[1] - 1, 0x200)
        pref = function.windows.get("pref")
        if pref:
            resources[15] = (pref[0], pref[0] + pref[1] - 1, 0x102201)
    for start, end, flags in resources:
        lines.append("0x%016x 0x%016x 0x%016x\n" % (start, end, flags))
    return "".join(lines)


def ari_enabled(function):
    """Linux enables ARI forwarding on a downstream-facing port when a function below has ARI."""
    parent = function.parent
    if isinstance(parent, PciFunction) and parent.port in DOWNSTREAM_FACING:
        if any(child.ari_capable() for child in parent.children):
            return 1
    return 0


def write_pci_bus(machine, path, device_path, numa_node):
    tree = machine.tree
    cpus = machine.cpus.node_cpus(numa_node)
    tree.write(path + "/cpuaffinity", cpumask(cpus, machine.cpus.count) + "\n")
    tree.write(path + "/cpulistaffinity", cpulist(cpus) + "\n")
    tree.write(path + "/rescan", "")
    tree.write(path + "/uevent", "")
    tree.write(path + "/power/control", "auto\n")
    tree.link(path + "/device", device_path)
    tree.link(path + "/subsystem", "/sys/class/pci_bus")
    tree.link("sys/class/pci_bus/" + os.path.basename(path), path)


def write_drm_nodes(machine, function, drm):
    """drm = { card = N, render = M } -> drm/cardN, drm/renderDM and their /sys/class/drm links."""
    tree = machine.tree
    for kind, minor in (("card", drm.get("card")), ("renderD", drm.get("render"))):
        if minor is None:
            continue
        name = "%s%d" % (kind, minor)
        path = function.path + "/drm/" + name
        tree.write(path + "/dev", "%d:%d\n" % (DRM_MAJOR, minor))
        tree.write(path + "/uevent", "MAJOR=%d\nMINOR=%d\nDEVNAME=dri/%s\n"
                   % (DRM_MAJOR, minor, name))
        tree.link(path + "/device", function.path)
        tree.link(path + "/subsystem", "/sys/class/drm")
        tree.link("sys/class/drm/" + name, path)
