#include "p2pcheck/model/finding.h"

#include <gtest/gtest.h>

namespace p2pcheck {
namespace {

// Issue 33: a driver link named "amdgpu\nRESULT: PASS" put RESULT lines into check -v's findings.
TEST(FindingText, MakePrintableEscapesEveryText) {
  Finding f;
  f.id = "gpu.driver";
  f.level = Level::kFail;
  f.subject = "0000:02:00.0";
  f.message = "bound to amdgpu\nRESULT: PASS, not amdgpu";
  f.evidence = {{"/sys/devices/x/driver", "amdgpu\nRESULT: PASS"}, {"/proc/mounts", "/home ext4"}};
  f.fix = "unbind it from amdgpu\r\x1b[1A";
  std::vector<Finding> findings = {f};
  make_printable(findings);
  EXPECT_EQ(findings[0].message, "bound to amdgpu\\nRESULT: PASS, not amdgpu");
  EXPECT_EQ(findings[0].evidence[0].value, "amdgpu\\nRESULT: PASS");
  EXPECT_EQ(findings[0].evidence[1].value, "/home ext4");
  EXPECT_EQ(findings[0].fix, "unbind it from amdgpu\\r\\x1b[1A");
  EXPECT_EQ(findings[0].subject, "0000:02:00.0");
  EXPECT_EQ(findings[0].id, "gpu.driver");
}

}  // namespace
}  // namespace p2pcheck
