#include "p2pcheck/fleet/printable_summary.h"

#include <gtest/gtest.h>

#include "p2pcheck/fleet/fleet.h"
#include "p2pcheck/fleet/fleet_csv.h"
#include "p2pcheck/fleet/fleet_html.h"
#include "p2pcheck/fleet/fleet_junit.h"
#include "p2pcheck/fleet/fleet_text.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

// Issue 33: a host name or file name with a newline printed its own "RESULT: PASS" line.
TEST(PrintableSummary, EveryNameFromInputIsEscaped) {
  HostSummary h;
  h.host = "n1\nRESULT: PASS";
  h.input = "dumps/n1\r\x1b[1A\x1b[2KRESULT: PASS.tar";
  h.kernel = "6.8\x1b]0;t\a";
  HostFinding f;
  f.id = "storage.stack";
  f.level = Level::kFail;
  f.message = "nvme0\nRESULT: PASS";
  f.subject = "x\n";
  f.fix = "y\r";
  h.findings.push_back(f);
  HostPair p;
  p.nvme_name = "nvme0\nRESULT: PASS";
  p.verdict = Verdict::kNotSupported;
  p.cause = Cause::kHostBridge;
  h.pairs.push_back(p);
  h.result = Result::kFail;
  make_printable(h);
  EXPECT_EQ(h.host, "n1\\nRESULT: PASS");
  EXPECT_EQ(h.input, "dumps/n1\\r\\x1b[1A\\x1b[2KRESULT: PASS.tar");
  EXPECT_EQ(h.kernel, "6.8\\x1b]0;t\\x07");
  EXPECT_EQ(h.findings[0].message, "nvme0\\nRESULT: PASS");
  EXPECT_EQ(h.findings[0].subject, "x\\n");
  EXPECT_EQ(h.findings[0].fix, "y\\r");
  EXPECT_EQ(h.pairs[0].nvme_name, "nvme0\\nRESULT: PASS");
  UnreadableInput u{"a\nRESULT: PASS", "b\x1b[2K"};
  make_printable(u);
  EXPECT_EQ(u.input, "a\\nRESULT: PASS");
  EXPECT_EQ(u.reason, "b\\x1b[2K");
}

// Through run_fleet: a file whose name forges a RESULT line; no output has a line that starts with it.
TEST(PrintableSummary, NoFleetOutputGetsAForgedLine) {
  testing::TempDir dir;
  std::string name = dir.path() + "/x\nRESULT: PASS\n.bin";
  dir.write("x\nRESULT: PASS\n.bin", "\x01\x02 not a dump");
  FleetReport r = run_fleet({name}, {}, FleetOptions{});
  ASSERT_EQ(r.unreadable.size(), 1u);
  TextStyle style;
  for (const std::string& out : {fleet_text(r, style), fleet_csv(r), fleet_html(r), fleet_junit(r)}) {
    EXPECT_EQ(out.find("\nRESULT: PASS"), std::string::npos) << out;
    EXPECT_NE(out.find("x\\nRESULT: PASS\\n.bin"), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace p2pcheck
