// SmallMachine: the small switch machine the model tests (tests/model) and the kernel-walk tests
// (tests/rules) share, built in memory.
#pragma once

#include <gtest/gtest.h>

#include "p2pcheck/model/inventory.h"
#include "p2pcheck/model/topology.h"
#include "test_tree.h"

namespace p2pcheck::testing {

// pci0000:00: root ports 00:01.0 and 00:02.0, an RCiEP 00:04.0 and a host bridge at 00:00.0.
// Below 00:01.0 a switch (01:00.0 up, 02:01.0 / 02:02.0 down) with a GPU (03:00.0, plus audio .1)
// and an NVMe (04:00.0 with a VF 04:00.2). Below 00:02.0 a second NVMe (05:00.0).
class SmallMachine : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeSysfs sys(root_);
    std::string hb = "sys/devices/pci0000:00";
    sys.add(hb, "0000:00:00.0", 0x1022, 0x14a4, 0x060000, ConfigSpace(0x1022, 0x14a4, 0x060000, false).bytes(256));
    std::string rp1 = sys.add(hb, "0000:00:01.0", 0x1022, 0x14ab, 0x060400,
                              ConfigSpace(0x1022, 0x14ab, 0x060400, true).pcie(4).acs(0x5f, 0x1d).bytes());
    std::string rp2 = sys.add(hb, "0000:00:02.0", 0x1022, 0x14ab, 0x060400,
                              ConfigSpace(0x1022, 0x14ab, 0x060400, true).pcie(4).acs(0x5f, 0x1d).bytes());
    sys.add(hb, "0000:00:04.0", 0x1022, 0x14dc, 0x088000, ConfigSpace(0x1022, 0x14dc, 0x088000, false).pcie(9).bytes());
    std::string up = sys.add(rp1, "0000:01:00.0", 0x1000, 0xc030, 0x060400,
                             ConfigSpace(0x1000, 0xc030, 0x060400, true).pcie(5).bytes());
    std::string dn1 = sys.add(up, "0000:02:01.0", 0x1000, 0xc030, 0x060400,
                              ConfigSpace(0x1000, 0xc030, 0x060400, true).pcie(6).acs(0x5f, 0x1d).bytes());
    std::string dn2 = sys.add(up, "0000:02:02.0", 0x1000, 0xc030, 0x060400,
                              ConfigSpace(0x1000, 0xc030, 0x060400, true).pcie(6).bytes());
    sys.add(dn1, "0000:03:00.0", 0x1002, 0x74a1, 0x120000,
            ConfigSpace(0x1002, 0x74a1, 0x120000, false).pcie(0).bytes());
    sys.add(dn1, "0000:03:00.1", 0x1002, 0xab38, 0x040300,
            ConfigSpace(0x1002, 0xab38, 0x040300, false).pcie(0).bytes());
    std::string nvme = sys.add(dn2, "0000:04:00.0", 0x144d, 0xa824, 0x010802,
                               ConfigSpace(0x144d, 0xa824, 0x010802, false).pcie(0).bytes());
    std::string vf = sys.add(dn2, "0000:04:00.2", 0x144d, 0xa824, 0x010802,
                             ConfigSpace(0xffff, 0xffff, 0x010802, false).pcie(0).bytes());
    root_.link(vf + "/physfn", "../0000:04:00.0");
    std::string bare = sys.add(rp2, "0000:05:00.0", 0x144d, 0xa824, 0x010802,
                               ConfigSpace(0x144d, 0xa824, 0x010802, false).pcie(0).bytes());
    // 05:00.0 is bound to nvme (its controller not registered yet); the VF is handed to a VM.
    root_.write("sys/bus/pci/drivers/nvme/bind", "");
    root_.write("sys/bus/pci/drivers/vfio-pci/bind", "");
    root_.link(bare + "/driver", "../../../../bus/pci/drivers/nvme");
    root_.link(vf + "/driver", "../../../../../../bus/pci/drivers/vfio-pci");
    root_.write(nvme + "/nvme/nvme0/model", "SAMSUNG MZQL23T8HCLS-00A07\n");
    root_.write(nvme + "/nvme/nvme0/nvme0n1/size", "2048\n");
    root_.link(nvme + "/nvme/nvme0/device", "../../../0000:04:00.0");
    root_.link("sys/class/nvme/nvme0",
               "../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0/0000:04:00.0/nvme/nvme0");
    root_.link("sys/block/nvme0n1",
               "../devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0/0000:04:00.0/nvme/nvme0/nvme0n1");
    root_.write(nvme + "/nvme/nvme0/nvme0n1/nvme0n1p1/partition", "1\n");
    source_ = root_.source();
    topo_ = read_topology(*source_, decoder_);
    inv_ = read_inventory(*source_, topo_);
  }
  const Function& fn(const char* bdf) { return topo_.at(*Bdf::parse(bdf)); }

  FakeRoot root_;
  PciDecoder decoder_;
  std::unique_ptr<Source> source_;
  Topology topo_;
  Inventory inv_;
};

}  // namespace p2pcheck::testing
