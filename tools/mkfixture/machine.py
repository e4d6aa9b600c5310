"""One machine: the description read into kernel settings, CPUs and the PCI hierarchy, and the
order in which every part of the tree is written (block minors and diskseq depend on it)."""

import os

from .block import BlockDevices
from .cpus import CpuTopology, write_cpu_and_node_lists, write_cpuinfo
from .description import load_description
from .iommu import write_iommu_groups, write_iommu_units
from .kernel import KernelSettings
from .kernel_modules import write_modules
from .kfd import write_kfd
from .nvme import write_nvme
from .system_files import write_extra_files, write_kernel_and_os_files
from .sysfs_pci import write_pci
from .topology import PciTopology
from .tree import Tree


class Machine:
    def __init__(self, desc):
        self.desc = desc
        self.kernel = KernelSettings(desc)
        machine_table = desc.get("machine", {})
        # 64 = what a non-root reader gets from a `config` file
        self.config_bytes = machine_table.get("config_bytes")
        self.module_addresses_visible = machine_table.get("proc_modules_addresses", True)
        self.cpus = CpuTopology(desc.get("cpu", {}))
        self.pci = PciTopology(desc, self.kernel.iommu)
        self.tree = Tree()

    def write(self):
        """Fill self.tree."""
        write_kernel_and_os_files(self)
        write_cpuinfo(self)
        write_cpu_and_node_lists(self)
        iommu_unit_paths = write_iommu_units(self)
        write_pci(self, iommu_unit_paths)
        write_iommu_groups(self)
        write_modules(self)
        write_kfd(self)
        block_devices = BlockDevices(self.tree, self.kernel)
        write_nvme(self, block_devices)
        block_devices.write_stacked(self.desc)
        write_extra_files(self)


def generate(toml_path, out_root=None, force_config_bytes=None):
    """Write the tree of one machine.toml to out_root (default: root/ next to it)."""
    desc = load_description(toml_path)
    if force_config_bytes is not None:
        desc.setdefault("machine", {})["config_bytes"] = force_config_bytes
    machine = Machine(desc)
    machine.write()
    if out_root is None:
        out_root = os.path.join(os.path.dirname(os.path.abspath(toml_path)), "root")
    machine.tree.flush(out_root)
    return out_root
