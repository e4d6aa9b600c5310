#include "p2pcheck/plan/plan.h"

#include <gtest/gtest.h>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/input/input.h"
#include "p2pcheck/source/error.h"

namespace p2pcheck {
namespace {

// An EPYC with one root port leading to a switch (two ports with ACS redirect off, one with it
// on) and one NVMe on a root port of its own.
const char* kSmall = R"(
description = "test server"
[cpu]
vendor = "AuthenticAMD"
family = 0x19
[kernel]
release = "6.8.0-142-generic"
p2pdma = "y"

[[host_bridge]]
name = "hb0"
bus = 0x40
device = "1022:14a4"

[[root_port]]
name = "rp-switch"
slot = "01.1"
id = "1022:14ab"
link = "gen5x16"
acs = { capability = ["SV", "RR", "CR", "UF"], control = ["SV"] }

[[root_port]]
name = "rp-nvme"
id = "1022:14ab"
link = "gen4x4"
acs = "none"

[[switch]]
name = "sw0"
at = "rp-switch"
id = "1000:c030"
link = "gen5x16"
acs = "none"
  [[switch.downstream]]
  name = "sw0.0"
  link = "gen5x16"
  acs = { capability = 0x1f, control = 0x01 }
  [[switch.downstream]]
  name = "sw0.1"
  link = "gen5x4"
  acs = { capability = 0x1f, control = 0x01 }
  [[switch.downstream]]
  name = "sw0.2"
  slot = "08.0"
  link = "gen5x4"
  acs = { capability = 0x1f, control = 0x1d }

[[gpu]]
name = "gpu0"
at = "sw0.0"
id = "1002:74a1"
class = 0x120000
link = "gen5x16"

[[nvme]]
name = "nvme0"
at = "sw0.1"
id = "144d:a826"
link = "gen5x4"

[[nvme]]
name = "nvme1"
at = "sw0.2"
id = "144d:a826"
link = "gen4x4"

[[nvme]]
name = "boot"
at = "rp-nvme"
id = "144d:a80a"
link = "gen4x4"
)";

Bdf bdf(const char* text) { return *Bdf::parse(text); }

// A plan entered as every input is (the CLI's door): its tree, what its manifest says it cannot
// carry and the names it gives, then the check.
struct CheckedPlan {
  std::unique_ptr<Source> source;
  std::unique_ptr<CheckReport> report;
};
CheckedPlan check_plan(const Plan& plan, CheckOptions options = {}) {
  CheckedPlan out;
  out.source = open_memory_source(plan_tree(plan), "plan " + plan.file);
  auto info = read_capture_info(*out.source);
  options.not_carried = uncarried_areas(*info);
  MachineState state = load_machine_state(*out.source, options.load);
  describe_machine(*info, state);
  out.report = run_check(std::move(state), *out.source, options);
  return out;
}

std::string plan_error(const std::string& text) {
  try {
    parse_plan(text, "p.toml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Plan, AssignsAddressesDepthFirstInDeviceOrder) {
  Plan plan = parse_plan(kSmall, "p.toml");
  EXPECT_EQ(plan.description, "test server");
  EXPECT_EQ(plan.names.at("hb0"), bdf("0000:40:00.0"));
  EXPECT_EQ(plan.names.at("rp-switch"), bdf("0000:40:01.1"));
  EXPECT_EQ(plan.names.at("rp-nvme"), bdf("0000:40:02.0"));  // the next free device after 01
  EXPECT_EQ(plan.names.at("sw0"), bdf("0000:41:00.0"));
  EXPECT_EQ(plan.names.at("sw0.0"), bdf("0000:42:00.0"));
  EXPECT_EQ(plan.names.at("sw0.1"), bdf("0000:42:01.0"));
  EXPECT_EQ(plan.names.at("sw0.2"), bdf("0000:42:08.0"));
  EXPECT_EQ(plan.names.at("gpu0"), bdf("0000:43:00.0"));
  EXPECT_EQ(plan.names.at("nvme0"), bdf("0000:44:00.0"));
  EXPECT_EQ(plan.names.at("nvme1"), bdf("0000:45:00.0"));
  EXPECT_EQ(plan.names.at("boot"), bdf("0000:46:00.0"));  // after the switch's buses

  const Topology& topo = plan.state.topo;
  const Function& dsp = topo.at(bdf("0000:42:00.0"));
  EXPECT_EQ(dsp.port_type, PortType::kDownstreamPort);
  EXPECT_EQ(dsp.parent, bdf("0000:41:00.0"));
  EXPECT_EQ(dsp.sysfs_path, "/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0/0000:42:00.0");
  EXPECT_EQ(topo.at(bdf("0000:42:08.0")).acs.control, kAcsSv | kAcsRr | kAcsCr | kAcsUf);
  // The NVMe link trains to the lower of both ends: a Gen4 drive in a Gen5 x4 port runs at Gen4.
  const Function& nvme1 = topo.at(bdf("0000:45:00.0"));
  EXPECT_EQ(nvme1.link.cur_speed, 16.0);
  EXPECT_EQ(topo.at(bdf("0000:42:08.0")).link.cur_speed, 16.0);
  EXPECT_EQ(topo.host_bridges.at("0000:40").bridge_device, bdf("0000:40:00.0"));

  EXPECT_EQ(plan.state.inv.gpus, std::vector<Bdf>{bdf("0000:43:00.0")});
  ASSERT_EQ(plan.state.inv.nvmes.size(), 3u);
  EXPECT_EQ(plan.state.inv.nvmes[0].name, "nvme0");
  EXPECT_EQ(plan.state.inv.nvmes[2].name, "");  // "boot" is not a kernel name: none is made up
  EXPECT_EQ(plan.state.machine.cpu.vendor_id, "AuthenticAMD");
  EXPECT_EQ(plan.state.machine.cpu.family, 0x19);
  EXPECT_EQ(plan.state.machine.config.get("CONFIG_PCI_P2PDMA"), "y");
  auto source = open_memory_source(plan_tree(plan), "plan p.toml");
  auto info = read_capture_info(*source);
  ASSERT_TRUE(info);
  EXPECT_EQ(device_selector(*info, "gpu0"), "0000:43:00.0");
  EXPECT_EQ(device_selector(*info, "0000:45:00.0"), "0000:45:00.0");
}

TEST(Plan, ChecksGiveTheRulesVerdictsAndUnknownForWhatAPlanCannotCarry) {
  Plan plan = parse_plan(kSmall, "p.toml");
  auto checked = check_plan(plan);
  auto& report = checked.report;
  ASSERT_EQ(report->pairs.size(), 3u);
  // gpu0-nvme0: both ports without redirect under one switch; nvme1's port redirects, and Zen
  // allows the root complex; boot: another root port, Zen allows it.
  EXPECT_EQ(report->pairs[0].map_type, MapType::kBusAddr);
  EXPECT_EQ(report->pairs[0].distance, 4);
  EXPECT_EQ(report->pairs[1].map_type, MapType::kThruHostBridge);
  EXPECT_EQ(report->pairs[2].map_type, MapType::kThruHostBridge);
  for (const auto& d : report->pairs) EXPECT_EQ(d.verdict, Verdict::kSupported);

  int not_in_plan = 0;
  for (const Finding& f : report->findings) {
    EXPECT_NE(f.level, Level::kFail) << f.id << ": " << f.message;
    EXPECT_NE(f.level, Level::kWarn) << f.id << ": " << f.message;
    if (f.message.find("not in a plan") != std::string::npos) {
      ++not_in_plan;
      EXPECT_EQ(f.level, Level::kUnknown) << f.id;
      EXPECT_EQ(f.evidence.size(), 1u) << f.id;  // names the plan
      EXPECT_FALSE(f.fix.empty()) << f.id;
    }
  }
  EXPECT_EQ(not_in_plan, 3);  // IOMMU, GPU stack, storage
  EXPECT_EQ(report->result, Result::kUnknown);
}

TEST(Plan, IntelWithoutAllowlistedHostBridgeRefusesTheRootComplexPath) {
  std::string text = kSmall;
  text.replace(text.find("AuthenticAMD"), 12, "GenuineIntel");
  text.replace(text.find("0x19"), 4, "6");
  auto checked = check_plan(parse_plan(text, "p.toml"));
  auto& report = checked.report;
  EXPECT_EQ(report->pairs[0].verdict, Verdict::kSupported);  // inside the switch
  EXPECT_EQ(report->pairs[1].verdict, Verdict::kNotSupported);
  EXPECT_EQ(report->result, Result::kFail);
}

TEST(Plan, UnknownAcsStaysUnknown) {
  std::string text = kSmall;
  const std::string acs = "acs = { capability = 0x1f, control = 0x01 }";
  text.replace(text.find(acs), acs.size(), "acs = \"unknown\"");
  CheckOptions options;
  options.what_if_kernel = "6.8";
  auto checked = check_plan(parse_plan(text, "p.toml"), options);
  auto& report = checked.report;
  // Zen passes the host check, so the pair is allowed either way; the map type stays open.
  EXPECT_EQ(report->pairs[0].map_type, MapType::kUnknown);
  EXPECT_EQ(report->pairs[0].verdict, Verdict::kSupported);
  const Function& port = report->topo.at(bdf("0000:42:00.0"));
  EXPECT_EQ(port.acs.presence, Presence::kUnknown);
  EXPECT_EQ(port.config_note, "ACS not in a plan");
  // Its neighbour's ACS was given: read from the tree's config image, not made unknown.
  EXPECT_EQ(report->topo.at(bdf("0000:42:01.0")).acs.presence, Presence::kPresent);
}

TEST(Plan, BadPlansNameTheLineAndWhatWasExpected) {
  EXPECT_EQ(plan_error("[cpu\n"), plan_error("[cpu\n"));  // stable
  EXPECT_NE(plan_error("[cpu\n").find("p.toml:1: not valid TOML"), std::string::npos) << plan_error("[cpu\n");
  EXPECT_NE(plan_error("[[host_bridge]]\nname = \"a\"\nbus = 0\ndevice = \"none\"\n").find("[cpu] is required"),
            std::string::npos);
  std::string text = kSmall;
  std::string typo = text;
  typo.replace(typo.find("p2pdma = \"y\""), 12, "p2p_dma = \"y\"");
  EXPECT_NE(plan_error(typo).find("p.toml:8: unknown key 'p2p_dma' in [kernel]"), std::string::npos)
      << plan_error(typo);
  std::string link = text;
  link.replace(link.find("link = \"gen5x16\""), 16, "link = \"gen9x16\"");
  EXPECT_NE(plan_error(link).find("expected gen1..gen6"), std::string::npos) << plan_error(link);
  std::string at = text;
  at.replace(at.find("at = \"sw0.1\""), 12, "at = \"sw9.1\"");
  EXPECT_NE(plan_error(at).find("at = 'sw9.1' is not"), std::string::npos) << plan_error(at);
  std::string twice = text;
  twice.replace(twice.find("at = \"sw0.1\""), 12, "at = \"sw0.0\"");
  EXPECT_NE(plan_error(twice).find("already has a device"), std::string::npos) << plan_error(twice);
  std::string loop = text;
  loop.replace(loop.find("at = \"rp-switch\""), 16, "at = \"sw0.0\"");
  loop.replace(loop.find("at = \"sw0.0\"\nid = \"1002"), 12, "at = \"rp-switch\"");
  EXPECT_NE(plan_error(loop).find("below itself"), std::string::npos) << plan_error(loop);
  std::string acs = text;
  acs.replace(acs.find("control = [\"SV\"]"), 16, "control = [\"SV\", \"EC\"]");
  EXPECT_NE(plan_error(acs).find("which the capability does not have"), std::string::npos) << plan_error(acs);
  std::string vendor = text;
  vendor.replace(vendor.find("AuthenticAMD"), 12, "AMD");
  EXPECT_NE(plan_error(vendor).find("p.toml:4: [cpu].vendor 'AMD': expected AuthenticAMD"), std::string::npos)
      << plan_error(vendor);
  std::string name = text;
  name.replace(name.find("name = \"nvme1\""), 14, "name = \"nvme0\"");
  EXPECT_NE(plan_error(name).find("the name 'nvme0' is used twice"), std::string::npos) << plan_error(name);
}

TEST(Plan, BusNumbersAreBounded) {
  // Eight switches, each taking two buses, starting at 0xf8: the numbers run out, and it says so.
  std::string text =
      "[cpu]\nvendor = \"GenuineIntel\"\nfamily = 6\n[[host_bridge]]\nname = \"hb\"\nbus = 0xf8\n"
      "device = \"none\"\n[[root_port]]\nname = \"rp\"\nid = \"8086:2030\"\n";
  std::string at = "rp";
  for (int i = 0; i < 8; ++i) {
    std::string s = "s" + std::to_string(i);
    text += "[[switch]]\nname = \"" + s + "\"\nat = \"" + at +
            "\"\nid = \"10b5:8747\"\n[[switch.downstream]]\nname = \"" + s + "p\"\n";
    at = s + "p";
  }
  EXPECT_NE(plan_error(text).find("runs out of bus numbers"), std::string::npos) << plan_error(text);
  // Buses of one host bridge must not run into the next one's.
  std::string overlap = kSmall;
  overlap += "[[host_bridge]]\nname = \"hb1\"\nbus = 0x44\ndevice = \"none\"\n";
  overlap.replace(overlap.find("[[root_port]]\nname = \"rp-switch\""), 13, "[[root_port]]\nhost_bridge = \"hb0\"");
  overlap.replace(overlap.find("[[root_port]]\nname = \"rp-nvme\""), 13, "[[root_port]]\nhost_bridge = \"hb0\"");
  EXPECT_NE(plan_error(overlap).find("runs into host bridge hb1"), std::string::npos) << plan_error(overlap);
}

}  // namespace
}  // namespace p2pcheck
