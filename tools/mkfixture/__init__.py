"""mkfixture: a fake Linux root (/sys, /proc, /boot, /etc) from a compact machine.toml.

tools/mkfixture.py runs it and documents the machine.toml format. One module per concern:
  reading the description   description, kernel, cpus, pci_names, pci_function, sizes
  the PCI hierarchy         topology, address_allocation, link_training
  config-space bytes        config_space, pcie_capability, extended_capabilities, registers
  the files written         sysfs_pci, iommu, kernel_modules, kfd, nvme, block, system_files
  the output                tree (in memory, then flushed to disk in sorted order)
  tying it together         machine (what is written, in which order), cli
"""

from .cli import main
from .machine import Machine, generate

__all__ = ["Machine", "generate", "main"]
