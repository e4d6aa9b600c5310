// topology_text: lines fit the width, names are cut before facts are dropped, and --paths's subset.
#include "p2pcheck/report/topo.h"

#include <gtest/gtest.h>

#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/source/sysfs_text.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

std::size_t columns(const std::string& line) {
  std::size_t n = 0;
  for (unsigned char c : line)
    if ((c & 0xc0) != 0x80) ++n;
  return n;
}

class TopoText : public ::testing::Test {
 protected:
  void SetUp() override {
    auto source = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/epyc-mi300x-8gpu/root");
    state_ = load_machine_state(*source, Load::kPciOnly);
  }
  std::string text(std::size_t width, bool unicode = true, const std::set<Bdf>* only = nullptr) {
    TextStyle style;
    style.width = width;
    style.unicode = unicode;
    return topology_text(state_.topo, state_.inv, style, only);
  }
  MachineState state_;
};

TEST_F(TopoText, EveryLineFitsTheWidthAndEveryFunctionIsListed) {
  for (std::size_t width : {60u, 80u, 100u}) {
    for (bool unicode : {true, false}) {
      std::string out = text(width, unicode);
      // A single word (the source's path, in a deep build directory) is never cut: it is copied whole.
      for (const std::string& line : split(out, '\n')) {
        if (line.find(' ', line.find_first_not_of(' ')) != std::string::npos) {
          EXPECT_LE(columns(line), width) << width << ": " << line;
        }
      }
      for (const auto& [bdf, fn] : state_.topo.functions)
        EXPECT_NE(out.find(bdf.str()), std::string::npos) << bdf.str();
      // The facts stay; only names are cut.
      EXPECT_NE(out.find("ACS redirect [SV RR CR UF]"), std::string::npos);
      EXPECT_NE(out.find("driver amdgpu"), std::string::npos);
      // Names are cut in the middle: whose it is and which model stay (issue 50).
      if (width < 100) {
        EXPECT_NE(out.find(unicode ? "…" : "..."), std::string::npos) << "no name was cut at " << width;
      }
      EXPECT_NE(out.find("Samsung "), std::string::npos) << width;
      EXPECT_NE(out.find(" PM174X"), std::string::npos) << width << "\n" << out;
    }
  }
}

TEST_F(TopoText, AWideTerminalGetsWholeLines) {
  std::string out = text(400);
  EXPECT_EQ(out.find("…"), std::string::npos);
  EXPECT_NE(out.find("0000:01:00.0 [1000:c030] Broadcom / LSI PEX890xx PCIe Gen 5 Switch  <switch upstream port>  "
                     "32 GT/s x16  driver pcieport\n"),
            std::string::npos);
}

TEST_F(TopoText, CarriedOnLinesKeepTheTreeDrawn) {
  // The switch's upstream port has children: its carried-on annotations sit beside their stem.
  std::string out = text(60);
  std::size_t at = out.find("0000:01:00.0 [1000:c030]");
  ASSERT_NE(at, std::string::npos);
  std::size_t next = out.find('\n', at) + 1;
  std::string line = out.substr(next, out.find('\n', next) - next);
  EXPECT_EQ(line.rfind("      │  ", 0), 0u) << line;
}

TEST_F(TopoText, OnlyTheFunctionsAsked) {
  std::set<Bdf> only;
  for (const char* b : {"0000:40:01.1", "0000:41:00.0", "0000:42:00.0", "0000:43:00.0", "0000:42:02.0", "0000:45:00.0"})
    only.insert(*Bdf::parse(b));
  std::string out = text(80, true, &only);
  for (const auto& [bdf, fn] : state_.topo.functions)  // tree lines: "├─ BDF" or "└─ BDF"
    EXPECT_EQ(out.find("─ " + bdf.str()) != std::string::npos, only.count(bdf) != 0) << bdf.str();
  EXPECT_NE(out.find("host bridge 0000:40"), std::string::npos);
  EXPECT_EQ(out.find("host bridge 0000:00"), std::string::npos);
  EXPECT_NE(out.find("nvme2"), std::string::npos);
  EXPECT_EQ(out.find("  nvme0  "), std::string::npos);
  EXPECT_NE(out.find("--paths: 6 functions on the pairs' routes"), std::string::npos);
}

}  // namespace
}  // namespace p2pcheck
