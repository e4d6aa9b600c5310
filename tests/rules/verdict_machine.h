// The small machines the rules' tests build: host bridges, root ports, switches and endpoints in
// a FakeRoot, with ACS where asked, decided with decide_pair() for a kernel release.
#pragma once

#include <algorithm>
#include <gtest/gtest.h>

#include "p2pcheck/rules/verdict.h"
#include "test_tree.h"

namespace p2pcheck::testing {

constexpr std::uint16_t kNoAcs = 0xffff;

inline std::string bdfs(const std::vector<const Function*>& fns) {
  std::string s;
  for (const Function* f : fns) s += (s.empty() ? "" : " ") + f->bdf.str();
  return s;
}

// Builds small trees: host bridges, root ports, switches, endpoints, with ACS where asked.
class Machine : public ::testing::Test {
 protected:
  std::string host_bridge(const std::string& id, std::uint16_t vendor = 0x8086, std::uint16_t device = 0x6f00,
                          const std::string& devfn = "00.0") {
    std::string dir = "sys/devices/pci" + id;
    if (vendor)
      sys_.add(dir, id + ":" + devfn, vendor, device, 0x060000,
               ConfigSpace(vendor, device, 0x060000, false).bytes(256));
    else
      root_.mkdir(dir);
    return dir;
  }
  std::string port(const std::string& parent, const std::string& bdf, int type, std::uint16_t acs_ctrl = kNoAcs,
                   std::uint16_t vendor = 0x8086, std::uint16_t device = 0x6f02) {
    ConfigSpace cfg(vendor, device, 0x060400, true);
    cfg.pcie(type);
    if (acs_ctrl != kNoAcs) cfg.acs(0x005f, acs_ctrl);
    return sys_.add(parent, bdf, vendor, device, 0x060400, cfg.bytes());
  }
  std::string endpoint(const std::string& parent, const std::string& bdf, std::uint32_t cls, int type = 0,
                       std::uint16_t acs_ctrl = kNoAcs, size_t config_size = 4096) {
    std::uint16_t vendor = cls == 0x010802 ? 0x144d : 0x1002;
    ConfigSpace cfg(vendor, 0x1234, cls, false);
    cfg.pcie(type);
    if (acs_ctrl != kNoAcs) cfg.acs(0x005f, acs_ctrl);
    return sys_.add(parent, bdf, vendor, 0x1234, cls, cfg.bytes(config_size));
  }
  void cpu(const std::string& vendor, int family) {
    machine_.cpu.vendor_id = vendor;
    machine_.cpu.family = family;
  }
  PairDecision decide(const std::string& gpu, const std::string& nvme,
                      const std::string& kernel = "6.8.0-142-generic") {
    source_ = root_.source();
    topo_ = read_topology(*source_, decoder_);
    inv_ = read_inventory(*source_, topo_);
    machine_.config.file = p2pdma_.empty() ? "" : "/boot/config";
    if (!p2pdma_.empty()) machine_.config.options["CONFIG_PCI_P2PDMA"] = p2pdma_;
    machine_.kernel_release = kernel;
    KernelRules rules = kernel_rules_for(machine_, assume_);
    return decide_pair(topo_, machine_, rules, {*Bdf::parse(gpu), *Bdf::parse(nvme)});
  }
  // A switch below root port 00:01.0 with downstream ports 02:01.0 (GPU 03:00.0) and 02:02.0 (NVMe 04:00.0).
  void switch_machine(std::uint16_t rp_acs, std::uint16_t up_acs, std::uint16_t gpu_port_acs,
                      std::uint16_t nvme_port_acs, std::uint16_t gpu_acs = kNoAcs) {
    std::string hb = host_bridge("0000:00");
    std::string rp = port(hb, "0000:00:01.0", 4, rp_acs);
    std::string up = port(rp, "0000:01:00.0", 5, up_acs, 0x10b5, 0x8747);
    std::string d1 = port(up, "0000:02:01.0", 6, gpu_port_acs, 0x10b5, 0x8747);
    std::string d2 = port(up, "0000:02:02.0", 6, nvme_port_acs, 0x10b5, 0x8747);
    endpoint(d1, "0000:03:00.0", 0x120000, 0, gpu_acs);
    endpoint(d2, "0000:04:00.0", 0x010802);
  }

  FakeRoot root_;  // in memory: each test states its tree, nothing touches the disk
  FakeSysfs sys_{root_};
  PciDecoder decoder_;
  std::unique_ptr<Source> source_;
  Topology topo_;
  Inventory inv_;
  p2pcheck::Machine machine_;
  std::string p2pdma_ = "y";  // empty: no kernel config found
  std::optional<std::string> assume_;
};

}  // namespace p2pcheck::testing
