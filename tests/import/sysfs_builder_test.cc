// The builder groups records left out by kind, as data: the replay prints one line per kind.
#include "p2pcheck/import/sysfs_builder.h"

#include <gtest/gtest.h>

#include "import_fixture.h"

namespace p2pcheck {
namespace {

TEST(SysfsBuilder, RecordsOfOneKindAreOneGroupWithEverySubject) {
  SysfsBuilder builder("lspci", "lspci.txt");
  builder.skipped("lspci.txt: line 1: a record of no kind");
  for (int i = 0; i < 60; ++i) {
    Bdf bdf{0, 1, static_cast<std::uint8_t>(i / 8), static_cast<std::uint8_t>(i % 8)};
    builder.skipped("devices have no config space dump", bdf.str(), "lspci.txt: line " + std::to_string(i) + ": x");
  }
  builder.add_function(SynthFunction{*Bdf::parse("00:00.0"), std::nullopt, "", 0x1022, 0x14a4, {}, {}, 0x060000});
  auto src = testing::as_source(builder.finish());
  auto info = read_capture_info(*src);
  ASSERT_EQ(info->input_note_groups.size(), 2u);
  EXPECT_EQ(info->input_note_groups[0].first, "lspci.txt: line 1: a record of no kind");
  const InputNoteGroup& g = info->input_note_groups[1];
  EXPECT_EQ(g.kind, "devices have no config space dump");
  EXPECT_EQ(g.count, 60u);
  ASSERT_EQ(g.subjects.size(), 60u);
  EXPECT_EQ(g.subjects[9], "0000:01:01.1");
  EXPECT_EQ(g.first, "lspci.txt: line 0: x");
  // The flat notes stay as before for JSON readers: the first 50 and a count.
  ASSERT_EQ(info->input_notes.size(), 51u);
  EXPECT_EQ(info->input_notes.back(), "and 11 more records left out");
}

}  // namespace
}  // namespace p2pcheck
