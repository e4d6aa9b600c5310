#include "p2pcheck/input/input.h"

#include <gtest/gtest.h>

#include "import/import_fixture.h"
#include "p2pcheck/source/error.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

const std::string kPlan = std::string(P2PCHECK_SOURCE_DIR) + "/fixtures/plans/xeon-broadwell-switch-acs.toml";

CaptureInfo info_of(const std::string& manifest) {
  return *parse_capture_manifest(
      R"({"schema": "p2pcheck.capture", "schema_version": 3, "format": "plan",
          "not_carried": {"format": "plan", "phrase": "not in a plan", "paths": ["/sys/class/dmi/id"]}, )" +
          manifest + "}",
      "manifest.json");
}

TEST(Input, APlanComesThroughTheDoorByItsHeadOrByItsOption) {
  for (bool option : {false, true}) {
    OpenedDump plan = open_input_path(kPlan, ImportOptions{}, option);
    ASSERT_TRUE(plan.info);
    EXPECT_EQ(plan.info->format, "plan");
    EXPECT_EQ(plan.source->describe(), "plan " + kPlan);
    EXPECT_EQ(uncarried_areas(*plan.info).why, "not in a plan");
    EXPECT_EQ(uncarried_areas(*plan.info).areas.size(), 5u);
    EXPECT_EQ(device_selector(*plan.info, "gpu1"), "0000:05:00.0");
    nlohmann::ordered_json j;
    add_input_summary(j, *plan.info);
    EXPECT_EQ(j.at("plan").at("file"), kPlan);
    EXPECT_FALSE(j.contains("capture"));
  }
}

TEST(Input, AnImportDescribesItselfAsACapture) {
  char dir[] = "/tmp/p2pcheck-input-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string file = std::string(dir) + "/lspci.txt";
  FILE* f = fopen(file.c_str(), "w");
  fputs(testing::small_lspci().c_str(), f);
  fclose(f);
  OpenedDump dump = open_input_path(file, {});
  std::remove(file.c_str());
  rmdir(dir);
  ASSERT_TRUE(dump.info);
  EXPECT_EQ(dump.info->format, "lspci");
  nlohmann::ordered_json j;
  add_input_summary(j, *dump.info);
  EXPECT_EQ(j.at("capture").at("format"), "lspci");
  EXPECT_FALSE(j.contains("plan"));
  EXPECT_TRUE(uncarried_areas(*dump.info).areas.empty());
  EXPECT_TRUE(device_names(*dump.info).empty());
}

// Every command (check, topo, fleet) loads an input's machine through load_input_state: what its
// manifest says is on it, so a plan's evidence cites the plan wherever it is judged.
TEST(Input, TheMachineIsLoadedWithWhatItsManifestSays) {
  OpenedDump plan = open_input_path(kPlan, ImportOptions{});
  ASSERT_TRUE(plan.info);
  MachineState described = load_input_state(*plan.source, &*plan.info, Load::kForCheck);
  EXPECT_EQ(described.machine.cpu.evidence_file, kPlan + " [cpu]");
  EXPECT_EQ(described.topo.functions.at(*Bdf::parse("0000:05:00.0")).name, "gpu1");
  EXPECT_FALSE(described.machine.identity.redacted);
  MachineState bare = load_input_state(*plan.source, nullptr, Load::kForCheck);
  EXPECT_EQ(bare.machine.cpu.evidence_file, "/proc/cpuinfo");
}

// A dump's own manifest may not call it a plan (a plan's title and summary come only from a plan).
TEST(Input, OnlyThePlanDoorMakesAPlansManifest) {
  std::optional<CaptureInfo> info = info_of(R"("title": "planned server from x.toml")");
  try {
    refuse_plan_manifest(info, "dump.tar.gz");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dump.tar.gz: its manifest.json says format \"plan\""), std::string::npos)
        << e.what();
  }
  info->format = "capture";
  EXPECT_NO_THROW(refuse_plan_manifest(info, "dump.tar.gz"));
}

TEST(Input, NamesFromAManifestAreTakenOnlyWhenAPlanCouldHaveGivenThem) {
  // A manifest is input: a name that would need escaping, or no address, is left out.
  CaptureInfo info = info_of(R"("device_names": {"gpu0": "0000:03:00.0", "bad name": "0000:04:00.0",
      "esc\u001b": "0000:05:00.0", "nowhere": "0000:zz:00.0", "num": 7},
      "host_bridge_names": {"0000:00": "socket0", "0000:40": "\u001b[31m"},
      "not_carried_areas": ["iommu", "storage", "a_made_up_area"],
      "origins": {"/proc/cpuinfo": "s.toml [cpu]\u001b", "/boot/config-6.8": 3})");
  auto names = device_names(info);
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0].first, "gpu0");
  MachineState state;
  Topology& topo = state.topo;
  topo.functions[*Bdf::parse("0000:03:00.0")].bdf = *Bdf::parse("0000:03:00.0");
  topo.host_bridges["0000:00"].id = "0000:00";
  topo.host_bridges["0000:40"].id = "0000:40";
  state.machine.cpu.evidence_file = "/proc/cpuinfo";
  state.machine.config.file = "/boot/config-6.8";
  describe_machine(info, state);
  EXPECT_EQ(state.machine.cpu.evidence_file, "s.toml [cpu]\\x1b");  // the origin named, escaped
  EXPECT_EQ(state.machine.config.file, "/boot/config-6.8");         // no origin given: the file itself
  EXPECT_EQ(topo.functions.at(*Bdf::parse("0000:03:00.0")).name, "gpu0");
  EXPECT_EQ(topo.host_bridges.at("0000:00").name, "socket0");
  EXPECT_EQ(topo.host_bridges.at("0000:40").name, "");
  EXPECT_EQ(device_selector(info, "bad name"), "bad name");  // not a name: judged as given
  UncarriedAreas areas = uncarried_areas(info);
  EXPECT_EQ(areas.areas, (std::vector<CheckArea>{CheckArea::kIommu, CheckArea::kStorage}));
}

TEST(Input, ABrokenPlanIsTheReadersErrorNamingFileAndLine) {
  char dir[] = "/tmp/p2pcheck-input-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string bad = std::string(dir) + "/bad.toml";
  FILE* f = fopen(bad.c_str(), "w");
  fputs("[cpu\n", f);
  fclose(f);
  // Given as --plan it is read as a plan; by its head it is nothing a door knows.
  try {
    open_input_path(bad, ImportOptions{}, true);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(bad + ":1: not valid TOML"), std::string::npos) << e.what();
  }
  try {
    open_input_path(bad, ImportOptions{});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a recognised dump"), std::string::npos) << e.what();
  }
  std::remove(bad.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace p2pcheck
