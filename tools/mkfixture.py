#!/usr/bin/env python3
"""mkfixture.py - build a fake Linux root (/sys, /proc, /boot, /etc) from a compact TOML description.

Usage
-----
    python3 tools/mkfixture.py fixtures/<name>/machine.toml      # writes fixtures/<name>/root/ (git-ignored)
    python3 tools/mkfixture.py --all                             # every fixtures/*/machine.toml
    python3 tools/mkfixture.py --all --out build/fixtures        # writes build/fixtures/<name>/root/ (what ctest uses)
    python3 tools/mkfixture.py --nonroot FILE.toml               # force config_bytes = 64

The output directory is deleted and recreated; output is deterministic (same input -> same bytes,
no timestamps). Python 3.11 standard library only. The tree never contains empty directories
(git cannot store them), so e.g. an empty holders/ or slaves/ directory of a block device is
simply absent. All symlinks are relative and stay inside root/.

Description format (TOML; every table optional unless noted)
-------------------------------------------------------------
[machine]
  description     free text (documentation only)
  base            path (relative to this file) of another machine.toml to inherit from. Tables are
                  merged recursively, everything else (arrays included) is replaced by this file.
  config_bytes    truncate every PCI `config` file to this many bytes (64 = what a non-root
                  reader gets from sysfs).
  proc_modules_addresses  false -> /proc/modules shows 0x0000000000000000 (non-root view)

[kernel]
  release         "6.8.0-142-generic" -> /proc/sys/kernel/osrelease, /boot/config-<release>
  version         /proc/version text
  cmdline         /proc/cmdline text
  config          list of lines written to /boot/config-<release> (after a generated header)
  iommu           "amd" | "intel" | "none": an IOMMU driver is active (it calls pci_request_acs(),
                  so every function with an ACS capability gets ctrl = cap & (SV|RR|CR|UF))
  iommu_domain    default iommu group `type`: "DMA-FQ" | "DMA" | "identity"
  disable_acs_redir  list of BDFs whose RR|CR|EC control bits stay clear (pci=disable_acs_redir=)
  kfd_version     kernel version whose KFD properties layout to use (default: release)
  dm_major        block major of device-mapper (default 253)

[os]  release = literal /etc/os-release text
[proc] mounts = list of /proc/mounts lines
[dmi] key = value -> /sys/devices/virtual/dmi/id/<key>

[cpu]  vendor_id family model stepping model_name microcode mhz cache_size sockets
       cores_per_socket threads_per_core numa_per_socket cpuid_level flags vmx_flags bugs bogomips
       tlb_size address_sizes power_management hypervisor(bool: adds the `hypervisor` flag)
       apicid_bits (bits per socket in the APIC id, default from core/thread count)
       enumeration "thread-major" (default, Intel/Zen MADT order: all first threads of socket 0,
       socket 1, ..., then the SMT siblings) | "socket-major" (0,1 = siblings; pre-Zen AMD)
  /proc/cpuinfo gets one full block per logical CPU.

[modules.<name>]   one /proc/modules line each, in file order (most recently loaded first)
  size refcnt used_by(list) taint("OE") version srcversion parameters(table) builtin(bool)
  -> /sys/module/<name>/{initstate,refcnt,coresize,taint,version,parameters/*,drivers/pci:<d>}

[[iommu]]  name ("ivhd0" | "dmar0"), pci (BDF of the AMD IOMMU function; absent for Intel,
           whose units live in /sys/devices/virtual/iommu), attrs = { "amd-iommu/cap" = "..." }

[[host_bridge]]  bus (required), domain (0), numa_node (0), iommu (unit name),
                 mmio32 / mmio64 / io: allocation bases for BARs and bridge windows below it

[template.<name>]  any [[pci]] keys; a [[pci]] entry (or template) says use = "<name>"
                   (or a list of names) to start from those values.

[[pci]]  one PCI function.  Keys:
  bdf       "0000:05:00.0" or "05:00.0" (required)
  id        "1002:74a1" vendor:device (required)
  subsys    "1002:0c34" (default: same as id; bridges carry it in an SSVID capability)
  class     0x120000   rev 0x00
  port      endpoint | legacy_endpoint | rciep | rcec | root_port | upstream | downstream |
            pcie_pci_bridge | pci_pcie_bridge | pci (conventional function, 256-byte config,
            no PCI Express capability) | pci_bridge (conventional PCI-to-PCI bridge)
  header    0 | 1 override (e.g. Intel 00:00.0 DMI host bridge: header 0 but a Root Port cap)
  sec       secondary bus number of a bridge (children are the functions on that bus)
  subordinate  override (default: highest bus below)
  driver    driver name (-> driver link, uevent DRIVER=, /sys/bus/pci/drivers/<d>/<BDF>)
  numa_node, iommu_group (int; false = none; default: next free number), irq, dma_bits
  bars      ["0:m64p:256G", "2:m64p:2M", "4:io:256", "5:m32:512K"]  types m32 m32p m64 m64p io
  rom       "128K" (assigned, disabled) | "shadow" (boot VGA: 0xc0000-0xdffff, flags 0x212)
  link      "gen5x16" link capability; cur "gen3x8" current link (default: min of both ends)
  slot      physical slot number (Slot Implemented)
  acs       ACS capability bits (0x5f...); acs_ctrl overrides the computed control value
  aer       include AER (default true for PCI Express functions)
  rebar     ["0:256M-256G:256G"]  bar:smallest-largest:current
  sriov     { total, num, vf_device, offset, stride, bars = ["0:m64:16K"], vf_driver,
              vf_link_like_pf = true }  -> VFs are generated at PF devfn + offset + i*stride
  ari       ARI capability (default: true when sriov)
  dsn       "00-11-22-33-44-55-66-77" Device Serial Number capability
  msi       number of MSI vectors (0 = no MSI cap); msi_on: enabled (default: bridges w/ driver)
  msix      vector count (0 = none) or { count, bar, table, pba }
  caps      explicit standard capability list, e.g. ["pm","msi","pcie","msix","ssvid"] or []
  p2pmem    { size, available, published }  (p2pmem/allocate appears on kernels >= 6.2)
  kfd       { ...KFD node properties... } -> a KFD topology GPU node for this function
  drm       { card = 1, render = 128 } -> drm/cardN, drm/renderDM and /sys/class/drm links
  boot_vga  true/false (VGA class functions get a boot_vga file)
  files     { "relative/name" = "content" } extra files inside the function directory
  iommu_group_of  BDF whose IOMMU group this function shares (e.g. conventional PCI behind a
            PCIe-to-PCI bridge)
  vga_path  bridge forwards legacy VGA (BridgeCtl VGA+VGA16)
  overrides (rarely needed): caps_at = { pcie = 0x90 }, command, status, bridge_ctl, intpin,
            devcap, devctl, devcap2, devctl2, sltcap, sltctl, pmc, port_number, aspm, noflr

[kfd]  cpu = { ...properties of the CPU nodes... }, generation_id, system = { platform_oem, ... }

[[nvme]]  ctrl "nvme0", pci BDF, model serial firmware cntlid subsysnqn queue_count sqsize
          multipath (bool: native-multipath layout under /sys/devices/virtual/nvme-subsystem)
          namespaces = [{ nsid = 1, size = "7681501126656" or 15002931888 sectors ("s" suffix),
                          lbs = 4096, parts = ["512M", "1G", "*"] }]

[[dm]]    name "dm-0", dm_name "rl-root", uuid "LVM-...", slaves ["nvme0n1p3"], size
[[md]]    name "md0", level "raid0", slaves ["nvme6n1", "nvme7n1"], size, chunk, metadata
[[loop]]  name "loop0", backing_file "/var/lib/snapd/snaps/core22_1380.snap", size

[[file]]     path = "etc/hostname", text = "..." | hex = "0a0b..."   (escape hatch)
[[symlink]]  path = "sys/foo", target = "../bar"                      (relative, literal)

Sizes accept plain integers or strings with K/M/G/T suffixes (powers of 1024); "s" = 512-byte
sectors. Device directories are nested exactly as Linux nests them:
/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/...
"""

import sys

# The code is the package tools/mkfixture/ beside this file (Python imports a package before a
# module of the same name). This file stays the entry point every script and CMake rule runs.
from mkfixture.cli import main

if __name__ == "__main__":
    sys.exit(main())
