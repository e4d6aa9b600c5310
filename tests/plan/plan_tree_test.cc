// A plan entered as an import's tree (plan_tree) is the machine the plan describes: the model read
// back from the tree is the one the plan reader numbered, and every pair is decided as before.
#include <gtest/gtest.h>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/input/input.h"
#include "p2pcheck/plan/plan.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

// What the fixtures' plans leave out: ACS not given (on a PF too), VFs, a root-complex integrated device, a host
// bridge without a function at 00.0, a link not decided, no [kernel] at all.
const char* kOdd = R"(
[cpu]
vendor = "GenuineIntel"
family = 6
model = 85
model_name = "Xeon"

[[host_bridge]]
name = "hb0"
bus = 0x00
device = "none"

[[host_bridge]]
name = "hb1"
bus = 0x80
device = "8086:2020"

[[root_port]]
name = "rp0"
host_bridge = "hb0"
id = "8086:2030"
link = "gen4x16"

[[root_port]]
name = "rp1"
host_bridge = "hb1"
id = "8086:2030"
link = "unknown"
acs = "none"

[[switch]]
name = "sw"
at = "rp0"
id = "10b5:8747"
link = "gen3x16"
  [[switch.downstream]]
  name = "dsp0"
  acs = { capability = ["SV", "RR", "CR", "UF"], control = ["SV", "RR"] }
  [[switch.downstream]]
  name = "dsp1"

[[gpu]]
name = "gpu0"
at = "dsp0"
id = "1002:740f"
link = "gen4x16"
acs = "unknown"
vfs = 2

[[nvme]]
name = "nvme4"
at = "dsp1"
id = "144d:a826"
link = "gen4x4"
vfs = 1

[[nvme]]
name = "boot"
at = "rp1"
id = "144d:a80a"

[[device]]
name = "accel"
at = "hb1"
slot = "04.0"
id = "8086:0b25"
)";

// The plan's tree and manifest, read back as the CLI reads any input.
struct Entered {
  std::unique_ptr<Source> source;
  CaptureInfo info;
  MachineState state;
};
Entered enter(const Plan& plan, Load load = Load::kEverything) {
  Entered e;
  e.source = open_memory_source(plan_tree(plan), "plan " + plan.file);
  e.info = *read_capture_info(*e.source);
  e.state = load_machine_state(*e.source, load);
  describe_machine(e.info, e.state);
  return e;
}

void expect_same_model(const Plan& plan) {
  SCOPED_TRACE(plan.file);
  const Topology& want = plan.state.topo;
  Entered e = enter(plan);
  const Topology& got = e.state.topo;
  EXPECT_EQ(got.source_description, want.source_description);
  EXPECT_EQ(got.numa_nodes_unknown, "not in a plan");
  ASSERT_EQ(got.functions.size(), want.functions.size());
  for (const auto& [bdf, w] : want.functions) {
    SCOPED_TRACE(bdf.str());
    ASSERT_TRUE(got.functions.count(bdf));
    const Function& g = got.functions.at(bdf);
    EXPECT_EQ(g.sysfs_path, w.sysfs_path);
    EXPECT_EQ(g.parent, w.parent);
    EXPECT_EQ(g.host_bridge, w.host_bridge);
    EXPECT_EQ(g.vendor, w.vendor);
    EXPECT_EQ(g.device, w.device);
    EXPECT_EQ(g.class_code, w.class_code);
    EXPECT_EQ(g.header_type, w.header_type);
    EXPECT_EQ(g.port_type, w.port_type);
    EXPECT_EQ(g.link.max_speed, w.link.max_speed);
    EXPECT_EQ(g.link.max_width, w.link.max_width);
    EXPECT_EQ(g.link.cur_speed, w.link.cur_speed);
    EXPECT_EQ(g.link.cur_width, w.link.cur_width);
    EXPECT_EQ(g.acs.presence, w.acs.presence);
    EXPECT_EQ(g.acs.capability, w.acs.capability);
    EXPECT_EQ(g.acs.control, w.acs.control);
    EXPECT_EQ(g.rebar_presence, w.rebar_presence);
    EXPECT_EQ(g.sriov_presence, w.sriov_presence);
    EXPECT_EQ(g.sriov.num_vfs, w.sriov.num_vfs);
    EXPECT_EQ(g.sriov.vf_device, w.sriov.vf_device);
    EXPECT_EQ(g.physfn, w.physfn);
    EXPECT_EQ(g.driver, "");
    EXPECT_EQ(g.driver_not_carried, "not in a plan");
    EXPECT_EQ(g.numa_unknown, "not in a plan");
    EXPECT_EQ(g.name, w.name);
  }
  // A host bridge is found through its functions, as in a machine's sysfs: one planned with nothing on
  // its root bus is not in the tree.
  for (const auto& [id, w] : want.host_bridges) {
    SCOPED_TRACE(id);
    ASSERT_EQ(got.host_bridges.count(id), w.root_devices.empty() ? 0u : 1u);
    if (w.root_devices.empty()) continue;
    const HostBridge& g = got.host_bridges.at(id);
    EXPECT_EQ(g.sysfs_path, w.sysfs_path);
    EXPECT_EQ(g.bridge_device, w.bridge_device);
    EXPECT_EQ(g.name, w.name);
  }
  EXPECT_EQ(e.state.inv.gpus, plan.state.inv.gpus);
  ASSERT_EQ(e.state.inv.nvmes.size(), plan.state.inv.nvmes.size());
  for (std::size_t i = 0; i < plan.state.inv.nvmes.size(); ++i) {
    EXPECT_EQ(e.state.inv.nvmes[i].bdf, plan.state.inv.nvmes[i].bdf);
    EXPECT_EQ(e.state.inv.nvmes[i].name, plan.state.inv.nvmes[i].name);
  }
  const Machine& m = e.state.machine;
  EXPECT_EQ(m.cpu.vendor_id, plan.state.machine.cpu.vendor_id);
  EXPECT_EQ(m.cpu.family, plan.state.machine.cpu.family);
  EXPECT_EQ(m.cpu.model, plan.state.machine.cpu.model);
  EXPECT_EQ(m.cpu.model_name, plan.state.machine.cpu.model_name);
  EXPECT_EQ(m.kernel_release, plan.state.machine.kernel_release);
  EXPECT_EQ(m.config.get("CONFIG_PCI_P2PDMA"), plan.state.machine.config.get("CONFIG_PCI_P2PDMA"));
  for (const char* key : {"hostname", "dmi_vendor", "dmi_product", "dmi_serial"})
    EXPECT_EQ(m.identity.why.at(key), "not in a plan") << key;
  EXPECT_EQ(m.kernel_table.origin, KernelTableOrigin::kNone);
  EXPECT_EQ(m.kernel_table.why_not, "");  // not tried: a plan has no running kernel to ask
  // Evidence cites the plan, as before: "FILE [cpu]", "FILE [kernel] p2pdma".
  EXPECT_EQ(m.cpu.evidence_file, plan.state.machine.cpu.evidence_file);
  if (!plan.state.machine.config.file.empty()) {
    EXPECT_EQ(m.config.file, plan.state.machine.config.file);
  }
}

// Every pair as the plan's own model decides it and as its tree does, under `kernel`.
void expect_same_decisions(const Plan& plan, const char* kernel) {
  SCOPED_TRACE(plan.file + " --assume-kernel " + (kernel ? kernel : "(the plan's)"));
  CheckOptions options;
  if (kernel) options.what_if_kernel = kernel;
  auto empty = open_memory_source(std::make_shared<const MemoryTree>(), "plan " + plan.file);
  options.not_carried = {"not in a plan",
                         {CheckArea::kKernelModule, CheckArea::kIommu, CheckArea::kGpuStack, CheckArea::kStorage,
                          CheckArea::kRecordedVerify}};
  auto before = run_check(plan.state, *empty, options);
  Entered e = enter(plan, Load::kForCheck);
  EXPECT_EQ(uncarried_areas(e.info).areas, options.not_carried.areas);
  EXPECT_EQ(uncarried_areas(e.info).why, "not in a plan");
  options.not_carried = uncarried_areas(e.info);
  auto now = run_check(std::move(e.state), *e.source, options);
  ASSERT_EQ(now->pairs.size(), before->pairs.size());
  for (std::size_t i = 0; i < before->pairs.size(); ++i) {
    SCOPED_TRACE(before->pairs.gpu(i).bdf.str() + " <-> " + before->pairs.nvme(i).bdf.str());
    EXPECT_EQ(now->pairs.gpu(i).bdf, before->pairs.gpu(i).bdf);
    EXPECT_EQ(now->pairs.nvme(i).bdf, before->pairs.nvme(i).bdf);
    EXPECT_EQ(now->pairs[i].verdict, before->pairs[i].verdict);
    EXPECT_EQ(now->pairs[i].map_type, before->pairs[i].map_type);
    EXPECT_EQ(now->pairs[i].distance, before->pairs[i].distance);
  }
  EXPECT_EQ(now->result, before->result);
  EXPECT_GT(before->pairs.size(), 0u);
}

TEST(PlanTree, TheFixturesPlansReadBackAsTheirModelAndDecideAsBefore) {
  for (const char* name : {"epyc-mi300x-8gpu", "xeon-2socket-hostbridges", "xeon-broadwell-switch-acs"}) {
    Plan plan = load_plan(std::string(P2PCHECK_SOURCE_DIR) + "/fixtures/plans/" + name + ".toml");
    expect_same_model(plan);
    for (const char* kernel : {static_cast<const char*>(nullptr), "6.1", "7.1"}) expect_same_decisions(plan, kernel);
  }
}

TEST(PlanTree, WhatAPlanLeavesOutStaysUnknownInItsTree) {
  Plan plan = parse_plan(kOdd, "odd.toml");
  expect_same_model(plan);
  expect_same_decisions(plan, "6.8");
  Entered e = enter(plan);
  // ACS not given: unknown with the plan's words, not absent; given "none": absent.
  EXPECT_EQ(e.state.topo.at(*Bdf::parse("0000:02:01.0")).acs.presence, Presence::kUnknown);
  EXPECT_EQ(e.state.topo.at(*Bdf::parse("0000:02:01.0")).config_note, "ACS not in a plan");
  EXPECT_EQ(e.state.topo.at(*Bdf::parse("0000:80:01.0")).acs.presence, Presence::kAbsent);
  // Resizable BAR is never in a plan; SR-IOV is where the plan gives VFs, its ACS unknown or not.
  const Function& gpu0 = e.state.topo.at(*Bdf::parse("0000:03:00.0"));
  EXPECT_EQ(gpu0.rebar_presence, Presence::kUnknown);
  EXPECT_EQ(gpu0.sriov_presence, Presence::kPresent);
  EXPECT_EQ(gpu0.sriov.num_vfs, 2);
  EXPECT_EQ(gpu0.acs.presence, Presence::kUnknown);
  EXPECT_EQ(gpu0.config_note, "ACS not in a plan");
  EXPECT_EQ(e.state.topo.at(*Bdf::parse("0000:03:00.1")).physfn, Bdf::parse("0000:03:00.0"));
  // Said in the manifest as an import says it: format, phrase, the plan's own object.
  EXPECT_EQ(e.info.format, "plan");
  EXPECT_EQ(e.info.not_carried.phrase, "not in a plan");
  EXPECT_EQ(e.info.manifest.at("title"), "planned server from odd.toml");
  EXPECT_EQ(e.info.manifest.at("plan").at("not_carried").size(), 5u);
  EXPECT_EQ(device_selector(e.info, "nvme4"), "0000:04:00.0");
}

TEST(PlanTree, AKernelConfigWithoutARelease) {
  // p2pdma given, no release: the config is /proc/config.gz, read back through gzip.
  std::string text = kOdd;
  text += "[kernel]\np2pdma = \"y\"\n";
  Plan plan = parse_plan(text, "odd.toml");
  Entered e = enter(plan);
  EXPECT_EQ(e.state.machine.config.get("CONFIG_PCI_P2PDMA"), "y");
  EXPECT_EQ(e.state.machine.config.file, "odd.toml [kernel] p2pdma");  // read from /proc/config.gz
  expect_same_decisions(plan, "6.8");
}

TEST(PlanTree, AKernelConfigThePlanDoesNotGiveIsNotInAPlan) {
  // A release but no p2pdma: the config is not in a plan (not a file looked for and missed), and so
  // are the command line and IOMMU units; the release the plan gives is read.
  std::string text = kOdd;
  text += "[kernel]\nrelease = \"6.12.5\"\n";
  Entered e = enter(parse_plan(text, "odd.toml"));
  const Machine& m = e.state.machine;
  EXPECT_EQ(m.kernel_release, "6.12.5");
  EXPECT_TRUE(m.config.file.empty());
  EXPECT_TRUE(m.config.options.empty());
  EXPECT_EQ(m.not_carried({"/proc/config.gz", "/boot"}), "not in a plan");
  EXPECT_EQ(m.not_carried({"/proc/cmdline"}), "not in a plan");
  EXPECT_EQ(m.not_carried({"/proc/sys/kernel/osrelease"}), "");
}

}  // namespace
}  // namespace p2pcheck
