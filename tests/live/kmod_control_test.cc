#include "p2pcheck/live/kmod_control.h"

#include <gtest/gtest.h>

#include "p2pcheck/source/error.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::FakeRoot;
using testing::TempDir;

class FakeRunner : public CommandRunner {
 public:
  std::vector<std::vector<std::string>> calls;
  std::map<std::string, CommandResult> answers;  // by argv[0]
  CommandResult run(const std::vector<std::string>& argv) override {
    calls.push_back(argv);
    auto it = answers.find(argv[0]);
    return it == answers.end() ? CommandResult{0, ""} : it->second;
  }
};

TEST(KmodControl, StatusReadsProcModules) {
  FakeRoot root;
  root.mkdir("sys");
  root.write("proc/modules", "nvme 57344 2 - Live 0x0000000000000000\np2pprobe 28672 0 - Live 0x0000000000000000\n");
  auto src = root.source();
  // Module files are looked for on the real disk (not through the source): an empty directory has none.
  TempDir modules;
  KmodStatus s = kmod_status(*src, {modules.path() + "/nothing.ko"});
  EXPECT_TRUE(s.loaded);
  EXPECT_EQ(s.state, "Live");
  EXPECT_FALSE(s.device_present);
  EXPECT_TRUE(s.modules_found.empty());
}

TEST(KmodControl, LoadPrefersModprobeThenABuiltModule) {
  FakeRunner runner;
  KmodStatus status;
  KmodAction a = kmod_load(runner, status, std::nullopt);
  EXPECT_TRUE(a.ok);
  EXPECT_EQ(a.command, "modprobe p2pprobe");

  runner.calls.clear();
  runner.answers["modprobe"] = {1, "modprobe: FATAL: Module p2pprobe not found"};
  status.modules_found = {"/src/kmod/p2pprobe.ko"};
  a = kmod_load(runner, status, std::nullopt);
  EXPECT_TRUE(a.ok);
  ASSERT_EQ(runner.calls.size(), 2u);
  EXPECT_EQ(runner.calls[1], (std::vector<std::string>{"insmod", "/src/kmod/p2pprobe.ko"}));
}

TEST(KmodControl, LoadExplainsWhatIsMissing) {
  FakeRunner runner;
  runner.answers["modprobe"] = {1, "modprobe: FATAL: Module p2pprobe not found"};
  KmodAction a = kmod_load(runner, KmodStatus{}, std::nullopt);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.message.find("make -C kmod"), std::string::npos);

  KmodStatus found;
  found.modules_found = {"/src/kmod/p2pprobe.ko"};
  runner.answers["insmod"] = {1, "insmod: ERROR: could not insert module: Invalid module format"};
  a = kmod_load(runner, found, std::nullopt);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.message.find("rebuild it against this one"), std::string::npos);

  EXPECT_THROW(kmod_load(runner, KmodStatus{}, std::string("/no/such.ko")), UsageError);
}

TEST(KmodControl, LoadAndUnloadAreIdempotent) {
  FakeRunner runner;
  KmodStatus loaded;
  loaded.loaded = true;
  EXPECT_TRUE(kmod_load(runner, loaded, std::nullopt).ok);
  EXPECT_TRUE(runner.calls.empty());
  EXPECT_TRUE(kmod_unload(runner, KmodStatus{}).ok);
  EXPECT_TRUE(runner.calls.empty());
  runner.answers["rmmod"] = {1, "rmmod: ERROR: Module p2pprobe is in use"};
  KmodAction a = kmod_unload(runner, loaded);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.message.find("unbind"), std::string::npos);
}

TEST(KmodControl, SearchPathsStartBesideTheBinary) {
  auto paths = module_search_paths("/home/u/p2pcheck/build/p2pcheck", "6.12.117");
  EXPECT_EQ(paths.front(), "/home/u/p2pcheck/build/../kmod/p2pprobe.ko");
  EXPECT_NE(std::find(paths.begin(), paths.end(), "/lib/modules/6.12.117/updates/dkms/p2pprobe.ko"), paths.end());
}

// The p2pprobe-dkms package: DKMS installs the module under updates/dkms of each kernel, compressed
// when the kernel's own modules are; status lists it and load falls back to insmod of it.
TEST(KmodControl, FindsTheDkmsInstalledModule) {
  TempDir fake_root;
  fake_root.write("lib/modules/6.1.0-57-amd64/updates/dkms/p2pprobe.ko",
                  "\x7f"
                  "ELF");
  fake_root.write("lib/modules/6.12.9-amd64/updates/dkms/p2pprobe.ko.xz",
                  "\xfd"
                  "7zXZ");
  FakeRoot live;
  live.mkdir("sys");
  live.write("proc/modules", "nvme 57344 2 - Live 0x0000000000000000\n");
  auto src = live.source();
  const std::string dkms = fake_root.path() + "/lib/modules/6.1.0-57-amd64/updates/dkms/p2pprobe.ko";
  KmodStatus s =
      kmod_status(*src, module_search_paths("/nonexistent/bin/p2pcheck", "6.1.0-57-amd64", fake_root.path()));
  EXPECT_FALSE(s.loaded);
  EXPECT_EQ(s.modules_found, std::vector<std::string>{dkms});
  s = kmod_status(*src, module_search_paths("/nonexistent/bin/p2pcheck", "6.12.9-amd64", fake_root.path()));
  EXPECT_EQ(s.modules_found,
            std::vector<std::string>{fake_root.path() + "/lib/modules/6.12.9-amd64/updates/dkms/p2pprobe.ko.xz"});
  // Another kernel's module is not this one's.
  EXPECT_TRUE(kmod_status(*src, module_search_paths("/nonexistent/bin/p2pcheck", "6.1.0-99-amd64", fake_root.path()))
                  .modules_found.empty());

  FakeRunner runner;
  runner.answers["modprobe"] = {1, "modprobe: FATAL: Module p2pprobe not found in directory /lib/modules/6.1.0-57"};
  s = kmod_status(*src, module_search_paths("/nonexistent/bin/p2pcheck", "6.1.0-57-amd64", fake_root.path()));
  KmodAction a = kmod_load(runner, s, std::nullopt);
  EXPECT_TRUE(a.ok);
  ASSERT_EQ(runner.calls.size(), 2u);
  EXPECT_EQ(runner.calls[1], (std::vector<std::string>{"insmod", dkms}));
  // Without any module the message names the package.
  runner.calls.clear();
  EXPECT_NE(kmod_load(runner, KmodStatus{}, std::nullopt).message.find("p2pprobe-dkms package"), std::string::npos);
}

TEST(KmodControl, RealRunnerRunsWithoutAShell) {
  auto runner = system_command_runner();
  CommandResult r = runner->run({"printf", "%s", "a;b $(x)"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "a;b $(x)");
  EXPECT_EQ(runner->run({"/nonexistent/binary"}).exit_code, 127);
}

}  // namespace
}  // namespace p2pcheck
