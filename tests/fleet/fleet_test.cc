#include "p2pcheck/fleet/fleet.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <optional>
#include <sstream>

#include "p2pcheck/capture/capture.h"
#include "p2pcheck/checks/check.h"
#include "p2pcheck/fleet/host_summary.h"
#include "p2pcheck/import/dump.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_read.h"
#include "p2pcheck/source/source.h"
#include "test_paths.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

namespace fs = std::filesystem;

HostFinding finding(const char* id, Level level, const char* fix = "") { return {id, level, "", "msg", fix, true}; }

HostPair pair(Verdict verdict, Cause cause, std::vector<const char*> acs_ports = {}) {
  HostPair p;
  p.gpu = "0000:03:00.0";
  p.nvme = "0000:05:00.0";
  p.verdict = p.to_gpu = p.from_gpu = verdict;
  p.map_type = verdict == Verdict::kSupported ? "BUS_ADDR" : "NOT_SUPPORTED";
  p.cause = cause;
  for (const char* port : acs_ports) p.acs_ports.push_back(*Bdf::parse(port));
  return p;
}

HostSummary host(const char* name, Result result, std::vector<HostFinding> findings, std::vector<HostPair> pairs,
                 const char* topology = "aaaa") {
  HostSummary s;
  s.host = name;
  s.input = std::string(name) + ".tar.zst";
  s.format = "capture";
  s.result = result;
  s.findings = std::move(findings);
  s.pairs = std::move(pairs);
  s.topology = topology;
  return s;
}

TEST(Fleet, GroupsFailuresByCauseAndMachinesByTopology) {
  std::vector<HostSummary> hosts = {
      host("n3", Result::kFail, {finding("kernel.config_p2pdma", Level::kFail, "rebuild")},
           {pair(Verdict::kNotSupported, Cause::kKernelConfigP2pdma),
            pair(Verdict::kNotSupported, Cause::kKernelConfigP2pdma)}),
      host("n1", Result::kFail, {finding("kernel.config_p2pdma", Level::kFail, "rebuild")}, {}),
      host("n2", Result::kFail, {finding("gpu.ais", Level::kPass)},
           {pair(Verdict::kNotSupported, Cause::kAcsRedirect, {"0000:02:00.0"})}, "bbbb"),
      host("n4", Result::kFail, {}, {pair(Verdict::kNotSupported, Cause::kAcsRedirect, {"0000:42:00.0"})}, "bbbb"),
      host("n5", Result::kUnknown, {finding("storage.unknown", Level::kUnknown)},
           {pair(Verdict::kUnknown, Cause::kAcsUnknown)}),
      host("n0", Result::kPass, {finding("gpu.ais", Level::kPass)}, {pair(Verdict::kSupported, Cause::kNone)}, ""),
  };
  FleetReport r = build_fleet_report(hosts, {{"bad.bin", "not a recognised dump"}}, 7);
  ASSERT_EQ(r.hosts.size(), 6u);
  EXPECT_EQ(r.hosts[0].host, "n0");  // sorted by host
  EXPECT_EQ(r.failing, 4u);
  EXPECT_EQ(r.unknown, 1u);
  EXPECT_EQ(r.passing, 1u);
  EXPECT_EQ(r.result, FleetResult::kFail);  // a failing host is certain whatever is unread
  ASSERT_EQ(r.failures.size(), 2u);
  // Each host once per cause, however many of its pairs or findings have it; the fix once.
  EXPECT_EQ(r.failures[0].cause, "kernel.config_p2pdma");
  EXPECT_EQ(r.failures[0].hosts.size(), 2u);
  EXPECT_EQ(r.failures[0].pairs, 2u);
  EXPECT_EQ(r.failures[0].fix, "rebuild");
  EXPECT_EQ(r.failures[0].fix_host, "");
  EXPECT_EQ(r.failures[1].cause, "pair.acs_redirect");
  EXPECT_EQ(r.failures[1].fix, "boot with pci=disable_acs_redir=0000:02:00.0");
  EXPECT_EQ(r.failures[1].fix_host, "n2");  // the hosts' ports differ: the fix says whose it is
  EXPECT_FALSE(r.failures[1].title.empty());
  EXPECT_EQ(r.failures[0].title, "msg");  // the finding's words, not fleet's for its pairs
  EXPECT_EQ(r.failures[0].title_host, "");
  ASSERT_EQ(r.unknowns.size(), 2u);
  EXPECT_EQ(r.unknowns[0].cause, "pair.acs_unknown");
  EXPECT_EQ(r.unknowns[0].pair_cause, Cause::kAcsUnknown);
  // A kernel cause's pairs join that finding's group: a group of findings, not of pairs.
  EXPECT_EQ(r.failures[0].pair_cause, Cause::kKernelConfigP2pdma);
  EXPECT_FALSE(r.failures[0].pairs_only());
  EXPECT_TRUE(r.failures[1].pairs_only());
  // Topologies: the biggest group first, named after its first host; n0 has no tree.
  ASSERT_EQ(r.topologies.size(), 2u);
  EXPECT_EQ(r.topologies[0].fingerprint, "aaaa");
  EXPECT_EQ(r.topologies[0].hosts.size(), 3u);
  EXPECT_EQ(r.hosts[r.topologies[0].hosts[0]].host, "n1");
}

HostFinding stack(Level level, const char* cause, const char* fix) {
  HostFinding f{"storage.stack", level, "nvme0n1", std::string("a stack with ") + cause, fix, true};
  f.cause = cause;
  return f;
}

// A group is one problem: the same finding and cause, with that finding's own fix (never another
// finding's of the same id: the vfat INFO's "nothing to do unless..." on an md FAIL); hosts without
// a pair are counted apart, in no group.
TEST(Fleet, EachCauseGroupIsOneProblemWithItsOwnFix) {
  std::vector<HostSummary> hosts = {
      host("md1", Result::kFail,
           {stack(Level::kInfo, "not-a-data-file-system", "HIPFILE_UNSUPPORTED_FILE_SYSTEMS=true"),
            stack(Level::kFail, "md", "put the data on a plain namespace")},
           {pair(Verdict::kSupported, Cause::kNone)}),
      host("md2", Result::kFail, {stack(Level::kFail, "md", "put the data on a plain namespace")},
           {pair(Verdict::kSupported, Cause::kNone)}),
      host("crypt", Result::kFail, {stack(Level::kFail, "dm-crypt", "use the drive's own encryption")},
           {pair(Verdict::kSupported, Cause::kNone)}),
      host("nopairs", Result::kNoPairs, {finding("kernel.config_p2pdma", Level::kFail, "rebuild")}, {}),
  };
  FleetReport r = build_fleet_report(hosts, {}, 4);
  EXPECT_EQ(r.failing, 3u);
  EXPECT_EQ(r.no_pairs, 1u);
  ASSERT_EQ(r.failures.size(), 2u);
  EXPECT_EQ(r.failures[0].label(), "storage.stack:md");
  EXPECT_EQ(r.failures[0].hosts.size(), 2u);
  EXPECT_EQ(r.failures[0].fix, "put the data on a plain namespace");
  EXPECT_EQ(r.failures[0].title, "a stack with md");
  EXPECT_EQ(r.failures[1].label(), "storage.stack:dm-crypt");
  EXPECT_EQ(r.failures[1].fix, "use the drive's own encryption");
  EXPECT_EQ(r.failures[1].title_host, "");  // not "as on md1": a group of its own
  for (const CauseGroup& g : r.failures)
    for (std::size_t h : g.hosts) EXPECT_NE(r.hosts[h].host, "nopairs") << g.label();
}

// On every fixture (and the same under a what-if kernel) each group's fix is a fix of a finding of
// that id, level and cause on the host it is quoted from, and every host in the group has one.
TEST(Fleet, EveryGroupsFixComesFromItsOwnFinding) {
  std::vector<HostSummary> hosts;
  for (const auto& entry : fs::directory_iterator(P2PCHECK_FIXTURES)) {
    const std::string root = entry.path().string() + "/root";
    if (!fs::exists(root + "/sys")) continue;
    for (std::optional<std::string> kernel :
         {std::optional<std::string>(), std::optional<std::string>("5.14.0-687.el9")}) {
      auto source = open_tree_source(root);
      CheckOptions options;
      options.what_if_kernel = kernel;
      auto report = run_check(*source, options);
      hosts.push_back(summarize_report(*report, nullptr, entry.path().filename().string() + (kernel ? "-w" : "")));
    }
  }
  FleetReport r = build_fleet_report(hosts, {}, hosts.size());
  ASSERT_FALSE(r.failures.empty());
  for (const auto* groups : {&r.failures, &r.unknowns})
    for (const CauseGroup& g : *groups) {
      if (g.pairs_only()) continue;
      for (std::size_t h : g.hosts) {
        const HostSummary& host = r.hosts[h];
        bool has = false, has_fix = false;
        for (const HostFinding& f : host.findings)
          if (f.concerns && f.id == g.cause && f.level == g.level && f.cause == g.detail) {
            has = true;
            has_fix = has_fix || f.fix == g.fix;
          }
        EXPECT_TRUE(has) << g.label() << " on " << host.host;
        const std::string& from = g.fix_host.empty() ? r.hosts[g.hosts.front()].host : g.fix_host;
        if (host.host == from && !g.fix.empty()) {
          EXPECT_TRUE(has_fix) << g.label() << ": " << g.fix;
        }
        if (g.fix_host.empty() && !g.fix.empty()) {
          EXPECT_TRUE(has_fix) << g.label() << " on " << host.host;
        }
        EXPECT_NE(host.result, Result::kNoPairs) << g.label();
      }
    }
}

HostFix acs_fix(std::vector<const char*> ports, std::vector<HostFixStep> steps = {}) {
  HostFix fix;
  for (const char* port : ports) fix.acs_ports.push_back(*Bdf::parse(port));
  fix.steps = std::move(steps);
  return fix;
}

// One change per host, and hosts grouped by the whole of it: a pair cause's fix names every port
// the host needs, not its first pair's; hosts whose changes differ anywhere are in different groups.
TEST(Fleet, GroupsHostsByTheirWholeFix) {
  HostFixStep md{"storage.stack", "nvme6n1, nvme7n1", "put the data on a plain namespace", ""};
  std::vector<HostSummary> hosts = {
      host("a", Result::kFail, {},
           {pair(Verdict::kNotSupported, Cause::kAcsRedirect, {"0000:03:11.0"}),
            pair(Verdict::kNotSupported, Cause::kAcsRedirect, {"0000:03:09.0"})}),
      host("b", Result::kFail, {}, {pair(Verdict::kNotSupported, Cause::kAcsRedirect, {"0000:03:09.0"})}),
      host("c", Result::kFail, {}, {pair(Verdict::kNotSupported, Cause::kAcsRedirect, {"0000:03:09.0"})}),
      host("d", Result::kFail, {}, {pair(Verdict::kNotSupported, Cause::kAcsRedirect, {"0000:03:09.0"})}),
      host("e", Result::kPass, {}, {pair(Verdict::kSupported, Cause::kNone)}),
      host("f", Result::kPass, {}, {pair(Verdict::kSupported, Cause::kNone)}),
  };
  hosts[0].fix = acs_fix({"0000:03:09.0", "0000:03:11.0"});
  hosts[1].fix = acs_fix({"0000:03:09.0", "0000:03:11.0"});
  hosts[2].fix = acs_fix({"0000:03:09.0", "0000:03:11.0"}, {md});
  hosts[3].fix = acs_fix({"0000:03:09.0", "0000:03:11.0"});
  hosts[4].fix = HostFix{};  // nothing to do: in no group
  FleetReport r = build_fleet_report(hosts, {}, 6);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].fix, "boot with pci=disable_acs_redir=0000:03:09.0;0000:03:11.0");
  EXPECT_EQ(r.failures[0].fix_host, "");  // every host's whole command line is the same
  ASSERT_EQ(r.fixes.size(), 2u);
  ASSERT_EQ(r.fixes[0].hosts.size(), 3u);  // a, b, d: the same command line and nothing else
  EXPECT_EQ(r.hosts[r.fixes[0].hosts[0]].host, "a");
  EXPECT_EQ(r.hosts[r.fixes[0].hosts[2]].host, "d");
  EXPECT_EQ(acs_param(r.fixes[0].fix), "pci=disable_acs_redir=0000:03:09.0;0000:03:11.0");
  ASSERT_EQ(r.fixes[1].hosts.size(), 1u);  // c also needs its storage changed
  EXPECT_EQ(r.hosts[r.fixes[1].hosts[0]].host, "c");
  ASSERT_EQ(r.fixes[1].fix.steps.size(), 1u);
  ASSERT_EQ(r.without_fix.size(), 1u);  // f: a report without host_fix is said, not grouped as fine
  EXPECT_EQ(r.hosts[r.without_fix[0]].host, "f");
}

// host2 before host10, and the same for inputs; numbers with leading zeros still in number order.
TEST(Fleet, HostsSortNaturally) {
  std::vector<HostSummary> hosts;
  for (const char* name : {"host10", "host2", "host100", "host1", "rack2-node07", "rack10-node1", "rack2-node7b"})
    hosts.push_back(host(name, Result::kPass, {}, {pair(Verdict::kSupported, Cause::kNone)}));
  FleetReport r = build_fleet_report(hosts, {}, hosts.size());
  std::vector<std::string> order;
  for (const auto& h : r.hosts) order.push_back(h.host);
  EXPECT_EQ(order, (std::vector<std::string>{"host1", "host2", "host10", "host100", "rack2-node07", "rack2-node7b",
                                             "rack10-node1"}));
}

TEST(Fleet, TheResultsOrderOfStrength) {
  auto result = [](std::vector<Result> results, bool unreadable) {
    std::vector<HostSummary> hosts;
    int i = 0;
    for (Result res : results) hosts.push_back(host(("h" + std::to_string(i++)).c_str(), res, {}, {}));
    std::vector<UnreadableInput> bad;
    if (unreadable) bad.push_back({"x", "y"});
    return build_fleet_report(hosts, bad, hosts.size() + bad.size()).result;
  };
  EXPECT_EQ(result({Result::kPass, Result::kPass}, false), FleetResult::kPass);
  EXPECT_EQ(result({Result::kPass, Result::kFail, Result::kUnknown}, true), FleetResult::kFail);
  EXPECT_EQ(result({Result::kPass, Result::kUnknown}, true), FleetResult::kUnreadable);
  EXPECT_EQ(result({Result::kPass, Result::kUnknown, Result::kNoPairs}, false), FleetResult::kUnknown);
  EXPECT_EQ(result({Result::kPass, Result::kNoPairs}, false), FleetResult::kNoPairs);
  EXPECT_EQ(result({}, true), FleetResult::kUnreadable);
}

class FleetInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("p2pcheck-fleet-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "rack1" / "empty");
    fs::create_directories(dir_ / "bundle");
    write(dir_ / "rack1" / "garbage.bin", "\x01\x02 not a dump");
    write(dir_ / "rack1" / "bad.json", "{\"schema\": \"p2pcheck.check\", ");
    write(dir_ / "rack1" / "topo.json", "{\"schema\": \"p2pcheck.topo\", \"schema_version\": 1}");
    write(dir_ / "bundle" / "cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n\n");
    write(dir_ / "bundle" / "lspci.txt", "00:00.0 Host bridge: x\n");
  }
  void TearDown() override { fs::remove_all(dir_); }
  static void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  fs::path dir_;
};

TEST_F(FleetInputs, DirectoriesExpandAndOneMachineDirectoriesStayWhole) {
  std::vector<UnreadableInput> bad;
  std::vector<std::string> skipped;
  std::string fixture = std::string(P2PCHECK_FIXTURES) + "/xeon-sapphire-rapids/root";
  write(dir_ / "rack1" / "README", "collected on 2026-12-01\n");
  write(dir_ / "rack1" / "notes.json", "{\"ticket\": 4711}");
  write(dir_ / "rack1" / "node7.args", "--gpu 0000:03:00.0\n");
  auto inputs = expand_inputs({dir_.string(), fixture, (dir_ / "missing").string()}, bad, skipped);
  // Every file is a host (a binary file too: a failed upload is an unreadable host, never passed
  // over) but notes (README, notes.*) and a selection file, which is not even counted as skipped.
  std::vector<std::string> want = {(dir_ / "bundle").string(), (dir_ / "rack1" / "bad.json").string(),
                                   (dir_ / "rack1" / "garbage.bin").string(), (dir_ / "rack1" / "topo.json").string(),
                                   fixture};
  EXPECT_EQ(inputs, want);
  std::vector<std::string> want_skipped = {(dir_ / "rack1" / "README").string(),
                                           (dir_ / "rack1" / "notes.json").string()};
  EXPECT_EQ(skipped, want_skipped);
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_EQ(bad[0].input, (dir_ / "rack1" / "empty").string());
  EXPECT_NE(bad[0].reason.find("empty directory"), std::string::npos);
  EXPECT_NE(bad[1].reason.find("cannot open"), std::string::npos);
}

TEST_F(FleetInputs, UnreadableInputsAreListedNeverDropTheReport) {
  std::vector<UnreadableInput> bad;
  std::vector<std::string> skipped;
  std::string fixtures = P2PCHECK_FIXTURES;
  auto inputs = expand_inputs(
      {(dir_ / "rack1").string(), fixtures + "/xeon-sapphire-rapids/root", fixtures + "/intel-xeon-broadwell/root"},
      bad, skipped);
  FleetOptions options;
  options.jobs = 2;
  std::size_t calls = 0;
  options.progress = [&](std::size_t done, std::size_t total) {
    ++calls;
    EXPECT_LE(done, total);
  };
  FleetReport r = run_fleet(inputs, bad, options);
  EXPECT_EQ(calls, inputs.size());
  ASSERT_EQ(r.hosts.size(), 2u);
  EXPECT_EQ(r.hosts[0].host, "intel-xeon-broadwell");  // DIR/root is named after DIR
  ASSERT_EQ(r.unreadable.size(), 4u);                  // bad.json, the empty directory, garbage.bin, topo.json
  for (const auto& u : r.unreadable) EXPECT_FALSE(u.reason.empty()) << u.input;
  EXPECT_NE(r.unreadable[0].reason.find("not valid JSON"), std::string::npos) << r.unreadable[0].reason;
  EXPECT_NE(r.unreadable[2].reason.find("not a recognised dump"), std::string::npos) << r.unreadable[2].reason;
  EXPECT_NE(r.unreadable[3].reason.find("schema: expected \"p2pcheck.check\""), std::string::npos)
      << r.unreadable[3].reason;
  EXPECT_EQ(r.result, FleetResult::kFail);  // intel-xeon-broadwell fails
}

TEST_F(FleetInputs, ASelectionFileBesideAnInputNamesItsPairs) {
  write(dir_ / "node7.tar.zst", "not read here");
  write(dir_ / "node7.args", "--gpu 0000:03:00.0,0000:05:00.0\n--nvme 0000:04:00.0\n");
  auto selection = selection_beside((dir_ / "node7.tar.zst").string());
  ASSERT_TRUE(selection);
  EXPECT_EQ(selection->gpu, (std::vector<std::string>{"0000:03:00.0", "0000:05:00.0"}));
  EXPECT_EQ(selection->nvme, (std::vector<std::string>{"0000:04:00.0"}));
  EXPECT_FALSE(selection_beside((dir_ / "rack1" / "garbage.bin").string()));
  write(dir_ / "node7.args", "--gpu\n");
  EXPECT_THROW(selection_beside((dir_ / "node7.tar.zst").string()), Error);
  write(dir_ / "node7.args", "--cpu amd-zen\n");
  try {
    selection_beside((dir_ / "node7.tar.zst").string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), (dir_ / "node7.args").string());
  }
}

TEST_F(FleetInputs, ABinaryFileStartingWithABraceIsNotABrokenReport) {
  // Random bytes begin with '{' one time in 256: judged as a dump, never as a cut check --json.
  std::string bytes = "{";
  for (int i = 0; i < 64; ++i) bytes += static_cast<char>((i * 37 + 11) & 0xff);
  write(dir_ / "brace.bin", bytes);
  FleetReport r = run_fleet({(dir_ / "brace.bin").string()}, {}, FleetOptions{});
  ASSERT_EQ(r.unreadable.size(), 1u);
  EXPECT_NE(r.unreadable[0].reason.find("not a recognised dump"), std::string::npos) << r.unreadable[0].reason;
  // A text file that starts like a report and is cut stays "not valid JSON".
  write(dir_ / "cut.json", "{\n  \"schema\": \"p2pcheck.check\",\t");
  r = run_fleet({(dir_ / "cut.json").string()}, {}, FleetOptions{});
  ASSERT_EQ(r.unreadable.size(), 1u);
  EXPECT_NE(r.unreadable[0].reason.find("not valid JSON"), std::string::npos) << r.unreadable[0].reason;
}

TEST(FleetRun, TheSameReportWhateverTheNumberOfThreads) {
  std::vector<std::string> inputs;
  for (const auto& entry : fs::directory_iterator(P2PCHECK_FIXTURES))
    if (fs::exists(entry.path() / "root" / "sys")) inputs.push_back((entry.path() / "root").string());
  ASSERT_GE(inputs.size(), 8u);
  // The same inputs under other names, to be sure order comes from the sort, not from the threads.
  std::vector<std::string> reversed(inputs.rbegin(), inputs.rend());
  FleetOptions one, four;
  one.jobs = 1;
  four.jobs = 4;
  FleetReport a = run_fleet(inputs, {}, one), b = run_fleet(reversed, {}, four);
  ASSERT_EQ(a.hosts.size(), inputs.size());
  ASSERT_EQ(b.hosts.size(), a.hosts.size());
  for (std::size_t i = 0; i < a.hosts.size(); ++i) {
    EXPECT_EQ(a.hosts[i].input, b.hosts[i].input);
    EXPECT_EQ(a.hosts[i].topology, b.hosts[i].topology);
    EXPECT_EQ(a.hosts[i].pairs.size(), b.hosts[i].pairs.size());
  }
  ASSERT_EQ(a.failures.size(), b.failures.size());
  for (std::size_t i = 0; i < a.failures.size(); ++i) {
    EXPECT_EQ(a.failures[i].cause, b.failures[i].cause);
    EXPECT_EQ(a.failures[i].hosts, b.failures[i].hosts);
  }
  // The epyc fixture and its non-root view are one machine seen two ways: other port types. Only
  // storage-stacks shares its PCI tree, with xeon-sapphire-rapids (the same machine, other disks).
  std::map<std::string, std::vector<std::string>> by_fingerprint;
  for (const auto& h : a.hosts) by_fingerprint[h.topology].push_back(h.input);
  for (const auto& [fingerprint, inputs] : by_fingerprint) {
    if (inputs.size() == 1) continue;
    ASSERT_EQ(inputs.size(), 2u) << inputs.front();
    EXPECT_NE((inputs[0] + inputs[1]).find("sapphire-rapids"), std::string::npos) << inputs[0] << " " << inputs[1];
    EXPECT_NE((inputs[0] + inputs[1]).find("storage-stacks"), std::string::npos) << inputs[0] << " " << inputs[1];
  }
  EXPECT_EQ(by_fingerprint.size(), a.hosts.size() - 1);
}

TEST(FleetRun, NoInputIsAUsageError) { EXPECT_THROW(run_fleet({}, {}, FleetOptions{}), UsageError); }

// A capture of `source` written to DIR/NAME, as `p2pcheck capture [--redact] [--gpu G --nvme N]` does.
std::string capture_to(Source& source, const testing::TempDir& dir, const std::string& name,
                       const PairSelection& selection = {}, bool redact = false) {
  std::string file = dir.path() + "/" + name;
  write_capture(collect_capture(source, nullptr, redact, selection), {file, false});
  return file;
}

std::string read_text(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The pairs `capture --gpu/--nvme` recorded are the pairs fleet judges: the same verdicts as a
// check with that selection; a capture of that capture keeps them.
TEST(FleetCaptures, RecordedSelectionIsJudgedAsCheckWould) {
  testing::TempDir out;
  auto tree = testing::FakeRoot::load(std::string(P2PCHECK_FIXTURES) + "/epyc-mi300x-8gpu/root");
  auto all = tree.source();
  auto whole = run_check(*all, CheckOptions{});
  ASSERT_GE(whole->pairs.size(), 4u);
  PairSelection selection;
  const DevicePair& chosen = whole->pairs[1].walk.pair();
  selection.gpu = {chosen.gpu.str()};
  selection.nvme = {chosen.nvme.str()};
  auto fresh = tree.source();
  std::string selected = capture_to(*fresh, out, "selected.tar.zst", selection);
  auto plain_src = tree.source();
  std::string plain = capture_to(*plain_src, out, "plain.tar.zst");

  HostSummary one = read_host(selected, FleetOptions{});
  ASSERT_EQ(one.pairs.size(), 1u);
  EXPECT_EQ(one.pairs[0].gpu, selection.gpu[0]);
  EXPECT_EQ(one.pairs[0].nvme, selection.nvme[0]);
  EXPECT_EQ(one.pairs[0].verdict, whole->pairs[1].verdict);
  EXPECT_EQ(read_host(plain, FleetOptions{}).pairs.size(), whole->pairs.size());  // nothing recorded: every pair

  auto replay = open_dump_source(selected);
  std::string again = capture_to(*replay, out, "again.tar.zst");
  EXPECT_EQ(read_host(again, FleetOptions{}).pairs.size(), 1u);
}

// The QEMU lab's captures were taken without a selection (their GPUs are stand-ins the default
// selection does not take): as stored they have no pairs; captured again with their `args`, fleet
// gives the verdicts of expected/check.json, which the running kernels confirmed.
TEST(FleetCaptures, LabCapturesWithTheirArgsGiveTheirVerdicts) {
  testing::TempDir out;
  std::size_t scenarios = 0;
  for (const auto& entry : fs::directory_iterator(std::string(P2PCHECK_SOURCE_DIR) + "/fixtures/lab")) {
    std::string name = entry.path().filename().string();
    std::string archive = (entry.path() / (name + ".tar.zst")).string();
    if (!fs::exists(archive)) continue;
    ++scenarios;
    std::istringstream args(read_text((entry.path() / "args").string()));
    PairSelection selection;
    for (std::string flag, value; args >> flag >> value;) {
      std::vector<std::string>& side = flag == "--gpu" ? selection.gpu : selection.nvme;
      ASSERT_TRUE(flag == "--gpu" || flag == "--nvme") << name << ": " << flag;
      for (std::size_t at = 0; at <= value.size();) {
        std::size_t comma = std::min(value.find(',', at), value.size());
        side.push_back(value.substr(at, comma - at));
        at = comma + 1;
      }
    }
    // As stored, its `args` beside it (the folder is named after it) names the pairs.
    ASSERT_EQ(selection_beside(archive), selection) << name;
    auto expected_doc = parse_outside_json(read_text((entry.path() / "expected" / "check.json").string()), name);
    ASSERT_TRUE(expected_doc) << name;
    EXPECT_EQ(to_string(read_host(archive, FleetOptions{}).result), (*expected_doc)["result"].get<std::string>())
        << name;
    auto replay = open_dump_source(archive);
    HostSummary host = read_host(capture_to(*replay, out, name + ".tar.zst", selection), FleetOptions{});
    auto expected = parse_outside_json(read_text((entry.path() / "expected" / "check.json").string()), name);
    ASSERT_TRUE(expected) << name;
    EXPECT_EQ(to_string(host.result), (*expected)["result"].get<std::string>()) << name;
    ASSERT_EQ(host.pairs.size(), (*expected)["pairs"].size()) << name;
    for (std::size_t i = 0; i < host.pairs.size(); ++i) {
      const auto& want = (*expected)["pairs"][i];  // [gpu, nvme, decision, distance]
      const auto& devices = (*expected)["devices"];
      const auto& decision = (*expected)["decisions"].at(want[2].get<std::size_t>());
      EXPECT_EQ(host.pairs[i].gpu, devices.at(want[0].get<std::size_t>()).get<std::string>()) << name;
      EXPECT_EQ(host.pairs[i].nvme, devices.at(want[1].get<std::size_t>()).get<std::string>()) << name;
      EXPECT_EQ(to_string(host.pairs[i].verdict), decision["verdict"].get<std::string>()) << name;
    }
    EXPECT_EQ(host.host, name);  // "(none)" is no name: the file's
  }
  EXPECT_GE(scenarios, 20u);
}

// A capture is named after the machine's own host name (identity.hostname, as check --json shows
// it); a redacted one after its file, since its name is the placeholder all redacted captures share.
TEST(FleetCaptures, HostNamedByItsIdentityUnlessRedacted) {
  testing::TempDir out;
  auto tree = testing::FakeRoot::load(std::string(P2PCHECK_FIXTURES) + "/xeon-sapphire-rapids/root");
  tree.write("proc/sys/kernel/hostname", "gpu-node-42\n");
  auto a = tree.source();
  HostSummary named = read_host(capture_to(*a, out, "renamed.tar.zst"), FleetOptions{});
  EXPECT_EQ(named.host, "gpu-node-42");
  auto b = tree.source();
  HostSummary redacted = read_host(capture_to(*b, out, "rack2-n09.tar.zst", {}, true), FleetOptions{});
  EXPECT_EQ(redacted.host, "rack2-n09");
  EXPECT_EQ(redacted.redacted, std::optional<bool>(true));
  EXPECT_EQ(named.topology, redacted.topology);
}

}  // namespace
}  // namespace p2pcheck
