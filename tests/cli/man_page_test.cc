#include "man_page.h"

#include <gtest/gtest.h>

#include "p2pcheck/source/error.h"

namespace p2pcheck::cli {
namespace {

// A small app shaped like p2pcheck's: global options, a command with options, a nested command.
struct SmallApp {
  CLI::App app{"tool: does things"};
  std::string root, output, ko;
  std::string json_style;
  std::vector<std::string> pair;
  SmallApp() {
    app.set_version_flag("-V,--version", "tool 1.0");
    app.add_option("--root", root, "a captured root");
    app.add_flag("--json{compact}", json_style, "machine-readable")->option_text("[=pretty]");
    std::string hidden;
    app.add_option("--man-page", hidden, "hidden")->group("");
    auto* capture = app.add_subcommand("capture", "write an archive");
    capture->add_option("-o,--output", output, "the archive")->default_val("x.tar.zst")->option_text("FILE");
    auto* explain = app.add_subcommand("explain", "one pair");
    explain->add_option("pair", pair, "GPU and NVMe")->expected(2)->required()->option_text("GPU NVME");
    auto* kmod = app.add_subcommand("kmod", "the module");
    kmod->add_subcommand("load", "load it")->add_option("--ko", ko, "the .ko file");
  }
};

std::string section(const std::string& path, const std::string& extra = "") {
  return "@COMMAND " + path + "@\nProse of " + path + ".\n" + extra + ".EX\np2pcheck " + path + "\n.EE\n";
}
const std::string kSynopsis = ".SH SYNOPSIS\ntool \\fBcapture\\fR | \\fBexplain\\fR | \\fBkmod\\fR\n";
const std::string kAllSections = kSynopsis + ".SH COMMANDS\n" + section("capture") + section("explain") +
                                 section("kmod") + section("kmod load", "@OPTIONS@\n");

TEST(ManPage, OptionsComeFromTheRegistrations) {
  SmallApp s;
  std::string page = man_page(s.app, ".TH TOOL 1 \"\" \"@VERSION@\"\n.SH OPTIONS\n@OPTIONS@\n" + kAllSections, "t.in",
                              "tool 1.0 (git abc)");
  EXPECT_NE(page.find(".TH TOOL 1 \"\" \"tool 1.0 (git abc)\""), std::string::npos) << page;
  // Each option as --help shows it, minus escaped as \- so it searches and copies as typed.
  // A value without a name of its own reads VALUE; CLI11's type labels never show.
  EXPECT_NE(page.find(".TP\n\\fB\\-\\-root\\fR \\fIVALUE\\fR\na captured root\n"), std::string::npos) << page;
  EXPECT_NE(page.find(".TP\n\\fB\\-\\-json\\fR\\fI[=pretty]\\fR\n"), std::string::npos) << page;
  for (const char* artefact : {"TEXT", "REQUIRED", "x 2", "{compact}", ":{"})
    EXPECT_EQ(page.find(artefact), std::string::npos) << artefact << " in\n" << page;
  EXPECT_NE(page.find("\\fB\\-V\\fR, \\fB\\-\\-version\\fR"), std::string::npos) << page;
  EXPECT_NE(page.find("\\fB\\-o\\fR, \\fB\\-\\-output\\fR \\fIFILE\\fR\nthe archive"), std::string::npos) << page;
  EXPECT_NE(page.find("\\fBGPU NVME\\fR"), std::string::npos) << page;
  EXPECT_NE(page.find(".SS \"p2pcheck kmod load\"\nload it\n.PP\nProse of kmod load.\n.TP\n\\fB\\-\\-ko\\fR"),
            std::string::npos)
      << page;
  // Hidden options stay out, as in --help; -h,--help is listed once, with the global options.
  EXPECT_EQ(page.find("man\\-page"), std::string::npos) << page;
  size_t help = page.find("\\fB\\-\\-help\\fR");
  ASSERT_NE(help, std::string::npos);
  EXPECT_EQ(page.find("\\fB\\-\\-help\\fR", help + 1), std::string::npos) << page;
}

TEST(ManPage, ACommandWithoutItsSectionOrExampleFails) {
  SmallApp s;
  std::string no_kmod_load = kSynopsis + ".SH COMMANDS\n" + section("capture") + section("explain") + section("kmod");
  try {
    man_page(s.app, no_kmod_load, "t.in", "v");
    FAIL() << "a missing command passed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no @COMMAND kmod load@ line"), std::string::npos) << e.what();
  }
  std::string no_example = kAllSections + "@COMMAND capture@\n";
  EXPECT_THROW(man_page(s.app, no_example, "t.in", "v"), Error);  // twice, and without example
  std::string example_of_another = kSynopsis + ".SH COMMANDS\n@COMMAND capture@\n.EX\np2pcheck explain a b\n.EE\n" +
                                   section("explain") + section("kmod") + section("kmod load");
  try {
    man_page(s.app, example_of_another, "t.in", "v");
    FAIL() << "an example of another command passed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("`p2pcheck capture` has no example"), std::string::npos) << e.what();
  }
  EXPECT_THROW(man_page(s.app, kAllSections + section("frobnicate"), "t.in", "v"), Error);
  EXPECT_THROW(man_page(s.app, kAllSections + "@TYPO@\n", "t.in", "v"), Error);
  // A command the synopsis leaves out (as `watch` once was): the first screen must name every one.
  std::string no_kmod_synopsis = kAllSections;
  const std::string kmod = " | \\fBkmod\\fR";
  no_kmod_synopsis.replace(no_kmod_synopsis.find(kmod), kmod.size(), "");
  try {
    man_page(s.app, no_kmod_synopsis, "t.in", "v");
    FAIL() << "a synopsis without kmod passed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SYNOPSIS: no line for `p2pcheck kmod`"), std::string::npos) << e.what();
  }
}

TEST(ManPage, TextIsEscapedForRoff) {
  SmallApp s;
  std::string text = kSynopsis + ".SH COMMANDS\n" + section("capture") + section("explain") + section("kmod") +
                     section("kmod load") + ".SH X\nkeep \\fBthis\\fR\n";
  std::string page = man_page(s.app, text, "t.in", "a\\b");
  EXPECT_NE(page.find("keep \\fBthis\\fR\n"), std::string::npos);  // the template's own roff is kept
  CLI::App app{"x"};
  std::string v;
  app.add_option("--v", v, ".starts with a dot and has a \\ backslash");
  page = man_page(app, ".SH OPTIONS\n@OPTIONS@\n", "t.in", "v");
  EXPECT_NE(page.find("\n\\&.starts with a dot and has a \\e backslash\n"), std::string::npos) << page;
}

}  // namespace
}  // namespace p2pcheck::cli
