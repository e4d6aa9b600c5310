#include "p2pcheck/fleet/fingerprint.h"

#include <gtest/gtest.h>

namespace p2pcheck {
namespace {

Function fn(const char* bdf, std::optional<const char*> parent, std::uint16_t vendor, std::uint16_t device,
            std::uint32_t class_code, PortType port) {
  Function f;
  f.bdf = *Bdf::parse(bdf);
  if (parent) f.parent = *Bdf::parse(*parent);
  f.vendor = vendor;
  f.device = device;
  f.class_code = class_code;
  f.port_type = port;
  return f;
}

// A root port with a switch below it: a GPU and an NVMe on its downstream ports.
Topology server(const char* root_bus, std::uint8_t bus, bool swap_slots, std::uint16_t gpu = 0x74a1) {
  Topology t;
  auto b = [&](int offset, const char* devfn) {
    char text[32];
    std::snprintf(text, sizeof text, "0000:%02x:%s", bus + offset, devfn);
    return std::string(text);
  };
  std::string rp = b(0, "01.1"), usp = b(1, "00.0"), dsp0 = b(2, "00.0"), dsp1 = b(2, "01.0");
  std::string a = b(3, "00.0"), c = b(4, "00.0");
  for (auto f : {fn(rp.c_str(), std::nullopt, 0x1022, 0x14ab, 0x060400, PortType::kRootPort),
                 fn(usp.c_str(), rp.c_str(), 0x1000, 0xc030, 0x060400, PortType::kUpstreamPort),
                 fn(dsp0.c_str(), usp.c_str(), 0x1000, 0xc030, 0x060400, PortType::kDownstreamPort),
                 fn(dsp1.c_str(), usp.c_str(), 0x1000, 0xc030, 0x060400, PortType::kDownstreamPort),
                 fn(a.c_str(), (swap_slots ? dsp1 : dsp0).c_str(), 0x1002, gpu, 0x120000, PortType::kEndpoint),
                 fn(c.c_str(), (swap_slots ? dsp0 : dsp1).c_str(), 0x144d, 0xa824, 0x010802, PortType::kEndpoint)})
    t.functions[f.bdf] = f;
  HostBridge hb;
  hb.id = root_bus;
  hb.root_devices = {*Bdf::parse(rp)};
  t.host_bridges[hb.id] = hb;
  return t;
}

TEST(FleetFingerprint, SameBuildSameHashWhateverTheBusNumbers) {
  Topology a = server("0000:00", 0x00, false), b = server("0000:40", 0x40, true);
  EXPECT_EQ(topology_shape(a), topology_shape(b));
  EXPECT_EQ(topology_fingerprint(a), topology_fingerprint(b));
  EXPECT_EQ(topology_fingerprint(a).size(), 16u);
  EXPECT_NE(topology_shape(a).find("1002:74a1/120000/endpoint"), std::string::npos) << topology_shape(a);
}

TEST(FleetFingerprint, AnotherCardOrAnotherPlaceDiffers) {
  Topology a = server("0000:00", 0x00, false);
  EXPECT_NE(topology_fingerprint(a), topology_fingerprint(server("0000:00", 0x00, false, 0x740f)));
  // The NVMe moved from the switch to the root bus: another shape.
  Topology moved = a;
  moved.functions.at(*Bdf::parse("0000:04:00.0")).parent.reset();
  moved.host_bridges.at("0000:00").root_devices.push_back(*Bdf::parse("0000:04:00.0"));
  EXPECT_NE(topology_fingerprint(a), topology_fingerprint(moved));
  // Unknown port types (a capture without root) are another view of the machine, and say so.
  Topology nonroot = a;
  for (auto& [bdf, f] : nonroot.functions) f.port_type = PortType::kUnknown;
  EXPECT_NE(topology_fingerprint(a), topology_fingerprint(nonroot));
}

TEST(FleetFingerprint, EmptyTreeHasAHashToo) {
  Topology empty;
  EXPECT_EQ(topology_shape(empty), "");
  EXPECT_EQ(topology_fingerprint(empty), "cbf29ce484222325");
}

}  // namespace
}  // namespace p2pcheck
