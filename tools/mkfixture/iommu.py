"""IOMMU units (/sys/class/iommu) and IOMMU groups (/sys/kernel/iommu_groups)."""

from .pci_names import canonical_bdf

# An AMD IOMMU also reserves the HyperTransport range below 1T.
MSI_REGION = "0x00000000fee00000 0x00000000feefffff msi\n"
AMD_RESERVED_REGIONS = MSI_REGION + "0x000000fd00000000 0x000000ffffffffff reserved\n"


def write_iommu_units(machine):
    """-> {unit name: its sysfs directory}. An AMD unit is a PCI function's child; Intel's are
    virtual devices."""
    tree = machine.tree
    unit_paths = {}
    for unit in machine.desc.get("iommu", []):
        name = unit["name"]
        if unit.get("pci"):
            function_path = "/sys/devices/%s/%s" % (
                machine.pci.host_bridge_of(unit["pci"]).name, canonical_bdf(unit["pci"]))
            path = function_path + "/iommu/" + name
        else:
            path = "/sys/devices/virtual/iommu/%s" % name
        unit_paths[name] = path
        tree.link("sys/class/iommu/%s" % name, path)
        tree.link(path + "/subsystem", "/sys/class/iommu")
        tree.write(path + "/uevent", "")
        tree.write(path + "/power/control", "auto\n")
        tree.write(path + "/power/runtime_status", "unsupported\n")
        if unit.get("pci"):
            tree.link(path + "/device", "/sys/devices/%s/%s" % (
                machine.pci.host_bridge_of(unit["pci"]).name, canonical_bdf(unit["pci"])))
        for key, value in unit.get("attrs", {}).items():
            tree.write(path + "/" + key, value if value.endswith("\n") else value + "\n")
    return unit_paths


def link_function_to_iommu(machine, function, unit_paths):
    """The function's iommu_group and iommu links, and the unit's link back to it."""
    if function.iommu_group is None:
        return
    tree = machine.tree
    path = function.path
    tree.link(path + "/iommu_group", "/sys/kernel/iommu_groups/%d" % function.iommu_group)
    unit = function.host_bridge().iommu
    if unit and unit in unit_paths:
        tree.link(path + "/iommu", unit_paths[unit])
        tree.link(unit_paths[unit] + "/devices/" + function.name, path)


def write_iommu_groups(machine):
    groups = {}
    for function in machine.pci.ordered:
        if function.iommu_group is not None:
            groups.setdefault(function.iommu_group, []).append(function)
    tree = machine.tree
    for group, members in sorted(groups.items()):
        group_path = "sys/kernel/iommu_groups/%d" % group
        tree.write(group_path + "/type", "%s\n" % machine.kernel.iommu_domain)
        regions = AMD_RESERVED_REGIONS if machine.kernel.iommu == "amd" else MSI_REGION
        tree.write(group_path + "/reserved_regions", regions)
        for function in members:
            tree.link(group_path + "/devices/" + function.name, function.path)
