// The `verify` subcommand as main.cc wires it: registered on an App that has the shared options,
// reading --gpu/--nvme/--root/--json from that App when it runs.
#include "verify_command.h"

#include <gtest/gtest.h>

#include "p2pcheck/source/error.h"

namespace p2pcheck::cli {
namespace {

// The shared options exactly as main.cc declares them.
struct Cli {
  CLI::App app{"p2pcheck"};
  std::string root, dump, color = "auto";
  bool json = false, ascii = false;
  std::vector<std::string> gpu, nvme;
  std::shared_ptr<VerifyCommand> verify;
  CLI::App* check = nullptr;
  Cli() {
    app.require_subcommand(0, 1);
    app.add_option("--root", root);
    app.add_option("--dump", dump);
    app.add_flag("--json", json);
    app.add_option("--color", color);
    app.add_flag("--ascii", ascii);
    app.add_option("--gpu", gpu)->delimiter(',');
    app.add_option("--nvme", nvme)->delimiter(',');
    check = app.add_subcommand("check", "");
    check->fallthrough();
    verify = add_verify_command(app);
  }
  void parse(std::vector<std::string> args) {
    std::reverse(args.begin(), args.end());  // CLI11 takes them last-first
    app.parse(args);
  }
};

std::string usage_error(Cli& c) {
  try {
    c.verify->run();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(VerifyCommand, SelectedOnlyWhenGiven) {
  Cli c;
  c.parse({"check"});
  EXPECT_FALSE(c.verify->selected());
  Cli v;
  v.parse({"verify", "--target", "/tmp"});
  EXPECT_TRUE(v.verify->selected());
}

TEST(VerifyCommand, LiveOnly) {
  Cli c;
  c.parse({"--root", "fixtures/x/root", "verify", "--target", "/tmp"});
  EXPECT_NE(usage_error(c).find("--root and --dump replay other machines"), std::string::npos);
  Cli d;
  d.parse({"verify", "--dump", "x.tar.zst", "--target", "/tmp"});  // shared options fall through
  EXPECT_NE(usage_error(d).find("verify moves real data on this machine"), std::string::npos);
}

TEST(VerifyCommand, OptionsReachThePlan) {
  Cli none;
  none.parse({"verify"});
  EXPECT_NE(usage_error(none).find("--target DIR"), std::string::npos);
  Cli raw;
  raw.parse({"verify", "--raw", "/dev/nvme9n1", "--offset", "4096"});
  EXPECT_NE(usage_error(raw).find("--allow-destructive"), std::string::npos);
  Cli size;
  size.parse({"verify", "--target", "/tmp", "--size", "5T"});
  EXPECT_NE(usage_error(size).find("unknown unit"), std::string::npos);
  Cli engine;
  EXPECT_THROW(engine.parse({"verify", "--target", "/tmp", "--engine", "dma"}), CLI::ValidationError);
}

TEST(VerifyCommand, ATargetNotOnAnNvmeOfThisMachineIsRefused) {
  // Live: wherever this runs, --gpu names a function that does not exist.
  Cli c;
  c.parse({"verify", "--gpu", "0000:ff:1f.7", "--target", "/tmp"});
  std::string e = usage_error(c);
  EXPECT_NE(e.find("0000:ff:1f.7"), std::string::npos) << e;
}

}  // namespace
}  // namespace p2pcheck::cli
