#include "usage_errors.h"

#include <gtest/gtest.h>

#include "help_format.h"

namespace p2pcheck::cli {
namespace {

// An app shaped like p2pcheck's: global options, commands with options and positionals.
struct SmallApp {
  CLI::App app{"tool"};
  std::string root, json_style, svg, hidden, cpu;
  bool verbose = false;
  std::vector<std::string> pair;
  SmallApp() {
    app.formatter(std::make_shared<HelpFormatter>());
    app.require_subcommand(0, 1);
    app.add_option("--root", root, "a captured root")->option_text("DIR");
    app.add_flag("--json{compact}", json_style, "machine-readable")->option_text("[=pretty]");
    app.add_option("--man-page", hidden, "hidden")->group("");
    app.add_option("--cpu", cpu, "a value without a name of its own");
    auto* check = app.add_subcommand("check", "judge");
    check->add_flag("-v,--verbose", verbose, "more");
    app.add_subcommand("topo", "draw")->add_option("--svg", svg, "picture")->option_text("FILE");
    app.add_subcommand("explain", "one pair")->add_option("pair", pair, "GPU and NVMe")->expected(2);
  }
  // What the user reads for `tool ARGS...`, or "parsed" when the line is fine.
  std::string error_for(std::vector<std::string> args) {
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
      app.parse(reversed);  // CLI11 takes a vector in reverse order
    } catch (const CLI::ParseError& e) {
      return usage_error_text(app, e, args);
    }
    return "parsed";
  }
};

TEST(UsageErrors, EditDistanceCountsSingleEdits) {
  EXPECT_EQ(edit_distance("check", "check"), 0u);
  EXPECT_EQ(edit_distance("chek", "check"), 1u);
  EXPECT_EQ(edit_distance("--jsn", "--json"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("banana", "check"), 6u);
}

TEST(UsageErrors, AMistypedOptionGetsTheClosestOneOfItsCommand) {
  SmallApp s;
  EXPECT_EQ(s.error_for({"--jsn"}),
            "p2pcheck: unknown option '--jsn'; did you mean '--json'?\nsee `p2pcheck --help`\n");
  EXPECT_EQ(s.error_for({"check", "--verbos"}),
            "p2pcheck: unknown option '--verbos'; did you mean '--verbose'?\nsee `p2pcheck check --help`\n");
  // A global option is suggested inside a command too; "--json=x" is judged by its name.
  EXPECT_EQ(s.error_for({"check", "--rot=x"}),
            "p2pcheck: unknown option '--rot'; did you mean '--root'?\nsee `p2pcheck check --help`\n");
}

TEST(UsageErrors, AnOptionOfAnotherCommandSaysWhichOne) {
  SmallApp s;
  EXPECT_EQ(s.error_for({"check", "--svg", "x.svg"}),
            "p2pcheck: '--svg' is an option of `p2pcheck topo`, not of `check` (then not understood: 'x.svg')\n"
            "see `p2pcheck check --help`\n");
}

TEST(UsageErrors, NothingCloseIsSuggestedAndHiddenOptionsNever) {
  SmallApp s;
  EXPECT_EQ(s.error_for({"--banana"}), "p2pcheck: unknown option '--banana'\nsee `p2pcheck --help`\n");
  EXPECT_EQ(s.error_for({"--man-pag"}), "p2pcheck: unknown option '--man-pag'\nsee `p2pcheck --help`\n");
}

TEST(UsageErrors, WordsAreEchoedInTheOrderTyped) {
  SmallApp s;
  EXPECT_EQ(s.error_for({"check", "one", "two", "three"}),
            "p2pcheck: unexpected argument 'one': `check` takes no arguments (then not understood: 'two' 'three')\n"
            "see `p2pcheck check --help`\n");
}

TEST(UsageErrors, MistypedCommands) {
  SmallApp s;
  EXPECT_EQ(s.error_for({"chek"}), "p2pcheck: unknown command 'chek'; did you mean 'check'?\nsee `p2pcheck --help`\n");
  SmallApp t;
  EXPECT_EQ(t.error_for({"banana"}), "p2pcheck: unknown command 'banana'\nsee `p2pcheck --help`\n");
}

TEST(UsageErrors, OtherErrorsKeepCLI11sReasonAndPointAtHelp) {
  SmallApp s;
  std::string text = s.error_for({"explain", "04:00.0"});
  EXPECT_EQ(text.rfind("p2pcheck: ", 0), 0u) << text;
  EXPECT_NE(text.find("see `p2pcheck explain --help`\n"), std::string::npos) << text;
}

TEST(UsageErrors, WordsFromTheCommandLineArePrintedEscaped) {
  SmallApp s;
  std::string text = s.error_for({"--x\x1b]0;t\a"});
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\a'), std::string::npos) << text;
}

TEST(HelpFormat, OptionsReadAsTheDocsWriteThem) {
  SmallApp s;
  EXPECT_EQ(option_synopsis(s.app.get_option("--root")), "--root DIR");
  EXPECT_EQ(option_synopsis(s.app.get_option("--json")), "--json[=pretty]");
  EXPECT_EQ(option_synopsis(s.app.get_option("--cpu")), "--cpu VALUE");
  EXPECT_EQ(option_synopsis(s.app.get_subcommand("check")->get_option("-v")), "-v,--verbose");  // a flag takes none
  EXPECT_EQ(option_synopsis(s.app.get_help_ptr()), "-h,--help");
  std::string help = s.app.help();
  for (const char* artefact : {"TEXT", "REQUIRED", "{compact}", ":{"})
    EXPECT_EQ(help.find(artefact), std::string::npos) << artefact << " in\n" << help;
  std::string explain_help = s.app.get_subcommand("explain")->help();
  EXPECT_EQ(explain_help.find("x 2"), std::string::npos) << explain_help;
}

}  // namespace
}  // namespace p2pcheck::cli
