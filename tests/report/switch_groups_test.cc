// switch_groups: from the port types, and from the tree where an import carries none.
#include "p2pcheck/report/switch_groups.h"

#include <gtest/gtest.h>

#include "small_machine.h"

namespace p2pcheck {
namespace {

using testing::SmallMachine;

std::vector<const Function*> all(const Topology& topo) {
  std::vector<const Function*> out;
  for (const auto& [bdf, fn] : topo.functions) out.push_back(&fn);
  return out;
}

std::vector<std::string> names(const SwitchGroup& g) {
  std::vector<std::string> out = {g.upstream->bdf.str()};
  for (const Function* p : g.downstream) out.push_back(p->bdf.str());
  return out;
}

class SwitchGroupsTest : public SmallMachine {};

TEST_F(SwitchGroupsTest, PortTypesSayWhichBridgesAreASwitch) {
  auto groups = switch_groups(topo_, all(topo_));
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(names(groups[0]), (std::vector<std::string>{"0000:01:00.0", "0000:02:01.0", "0000:02:02.0"}));
  EXPECT_FALSE(groups[0].inferred);
}

TEST_F(SwitchGroupsTest, WithoutPortTypesTheTreeDoes) {
  // As an lspci or udev import without config space: every port type unknown.
  for (auto& [bdf, fn] : topo_.functions) fn.port_type = PortType::kUnknown;
  auto groups = switch_groups(topo_, all(topo_));
  ASSERT_EQ(groups.size(), 1u) << "root ports on the root bus are no switch";
  EXPECT_EQ(names(groups[0]), (std::vector<std::string>{"0000:01:00.0", "0000:02:01.0", "0000:02:02.0"}));
  EXPECT_TRUE(groups[0].inferred);
}

TEST_F(SwitchGroupsTest, OnlyShownPortsJoin) {
  std::vector<const Function*> shown = {&fn("0000:00:01.0"), &fn("0000:01:00.0"), &fn("0000:02:02.0")};
  auto groups = switch_groups(topo_, shown);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(names(groups[0]), (std::vector<std::string>{"0000:01:00.0", "0000:02:02.0"}));
}

TEST_F(SwitchGroupsTest, AKnownPortTypeIsNotOverruled) {
  // A PCIe-to-PCI bridge with bridges below it stays what its type says.
  for (auto& [bdf, fn] : topo_.functions) fn.port_type = PortType::kUnknown;
  topo_.functions.at(*Bdf::parse("0000:01:00.0")).port_type = PortType::kPcieToPciBridge;
  EXPECT_TRUE(switch_groups(topo_, all(topo_)).empty());
}

TEST_F(SwitchGroupsTest, WithoutPortTypesADownstreamPortIsNeverAnUpstreamPort) {
  // A bridge below the switch's downstream port 02:02.0, and one below that: a second switch
  // (03:00.0 its upstream port, 04:00.0 its downstream port), not a switch made of 02:02.0 and 03:00.0.
  for (auto [bdf, parent] : {std::pair{"0000:03:00.0", "0000:02:02.0"}, std::pair{"0000:04:00.0", "0000:03:00.0"}}) {
    Function bridge = fn("0000:02:02.0");
    bridge.bdf = *Bdf::parse(bdf);
    bridge.parent = *Bdf::parse(parent);
    topo_.functions.erase(bridge.bdf);
    topo_.functions.emplace(bridge.bdf, bridge);
  }
  for (auto& [bdf, fn] : topo_.functions) fn.port_type = PortType::kUnknown;
  auto groups = switch_groups(topo_, all(topo_));
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(names(groups[0]), (std::vector<std::string>{"0000:01:00.0", "0000:02:01.0", "0000:02:02.0"}));
  EXPECT_EQ(names(groups[1]), (std::vector<std::string>{"0000:03:00.0", "0000:04:00.0"}));
}

}  // namespace
}  // namespace p2pcheck
