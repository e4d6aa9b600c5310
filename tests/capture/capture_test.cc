#include "p2pcheck/capture/capture.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <sys/stat.h>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/import/dump.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/report/report.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/memory_source.h"
#include "test_paths.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::ConfigSpace;
using testing::FakeRoot;
using testing::TempDir;  // only where capture writes or unpacks an archive file: that is under test
using testing::TreeWriter;

// A machine with one switch, a GPU and an NVMe drive below it; enough for run_check.
void small_machine(const TreeWriter& dir) {
  const std::string rp = "sys/devices/pci0000:00/0000:00:01.0";
  auto fn = [&](const std::string& path, const std::string& bdf, std::uint16_t vendor, std::uint16_t device,
                std::uint32_t cls, const std::string& config) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%04x\n", vendor);
    dir.write(path + "/vendor", buf);
    std::snprintf(buf, sizeof buf, "0x%04x\n", device);
    dir.write(path + "/device", buf);
    std::snprintf(buf, sizeof buf, "0x%06x\n", cls);
    dir.write(path + "/class", buf);
    dir.write(path + "/config", config);
    dir.link("sys/bus/pci/devices/" + bdf, "../../.." + path.substr(3));
  };
  fn("sys/devices/pci0000:00/0000:00:00.0", "0000:00:00.0", 0x1022, 0x14a4, 0x060000,
     ConfigSpace(0x1022, 0x14a4, 0x060000, false).bytes());
  fn(rp, "0000:00:01.0", 0x1022, 0x14ab, 0x060400,
     ConfigSpace(0x1022, 0x14ab, 0x060400, true).pcie(4).acs(0x5f, 0x1d).bytes());
  fn(rp + "/0000:01:00.0", "0000:01:00.0", 0x1002, 0x74a1, 0x120000,
     ConfigSpace(0x1002, 0x74a1, 0x120000, false).pcie(0).bytes());
  fn(rp + "/0000:01:00.1", "0000:01:00.1", 0x144d, 0xa826, 0x010802,
     ConfigSpace(0x144d, 0xa826, 0x010802, false).pcie(0).bytes());
  dir.write(rp + "/0000:01:00.1/nvme/nvme0/serial", "S4EWNX0R123456      \n");
  dir.write(rp + "/0000:01:00.1/nvme/nvme0/model", "SAMSUNG MZWLR7T6HALA-00007\n");
  dir.write(rp + "/0000:01:00.1/nvme/nvme0/cntlid", "1\n");  // listed, never read
  dir.link(rp + "/0000:01:00.1/nvme/nvme0/device", "../../../0000:01:00.1");
  dir.link("sys/class/nvme/nvme0", "../../devices/pci0000:00/0000:00:01.0/0000:01:00.1/nvme/nvme0");
  dir.write(
      "proc/cpuinfo",
      "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC 9654\n\n");
  dir.write("proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
  dir.write("proc/sys/kernel/hostname", "gpu-node-17.example.com\n");
  dir.write("boot/config-6.8.0-45-generic", "CONFIG_PCI_P2PDMA=y\n");
  dir.write("proc/modules", "amdgpu 15032320 0 - Live 0xffffffffc1a00000\n");
  dir.write("proc/kallsyms", "ffffffffa1c00000 T _stext\nffffffffc1a4f2d0 t kfd_ais_rw_file\t[amdgpu]\n");
  dir.link(rp + "/0000:01:00.0/driver", "../../../../bus/pci/drivers/amdgpu");
  dir.mkdir("sys/bus/pci/drivers/amdgpu");
}

class FakeActions : public DeviceActions {
 public:
  bool root = true;
  bool module = true;
  std::optional<std::string> verify;
  bool is_root() override { return root; }
  std::string hostname() override { return "gpu-node-17.example.com"; }
  std::time_t now() override { return 1796000000; }
  NvmeIdentity nvme_identity(const std::string& controller, const Bdf& bdf) override {
    NvmeIdentity id;
    id.controller = controller;
    id.bdf = bdf;
    id.identify_ok = true;
    id.model = "SAMSUNG MZWLR7T6HALA-00007";
    id.serial = "S4EWNX0R123456";
    id.firmware = "MPK7525Q";
    id.registers_ok = true;
    id.cmb = decode_cmb(0x2, 0x4 << 12 | 0x2 << 8 | 0x18);  // BAR2, 4 x 1 MiB, WDS+RDS
    return id;
  }
  HipProbe hip_probe() override {
    HipProbe p;
    p.hip_runtime.library = "libamdhip64.so";
    p.hip_runtime.error = "not here";
    p.hipfile.library = "libhipfile.so";
    p.hipfile.error = "not here";
    return p;
  }
  KernelModuleAnswers kernel_module(const std::vector<DevicePair>& pairs) override {
    KernelModuleAnswers a;
    if (!module) {
      a.problem = "/dev/p2pprobe: not present";
      return a;
    }
    a.available = true;
    a.info.api_version = 1;
    a.info.module_version = "0.1";
    for (const auto& p : pairs)
      a.verdicts.push_back({p, KernelVerdict{2, MapType::kBusAddr, "", false, "amdgpu", "nvme"}});
    return a;
  }
  std::optional<std::string> saved_results(const SavedResults&) override { return verify; }
  WatchStart start_watch(const WatchHookPlan& plan) override { return {nullptr, "not in a test", ENOSYS, plan}; }
};

const CaptureEntry* entry(const CaptureSet& set, const std::string& path) {
  for (const auto& e : set.entries)
    if (e.path == path) return &e;
  return nullptr;
}

nlohmann::ordered_json check_doc(Source& source) {
  auto j = check_document(*run_check(source, CheckOptions{}));
  j.erase("source");
  return j;
}

TEST(Capture, StoresWhatTheAnalysisReadAndNamesWhatItOnlyListed) {
  FakeRoot dir;
  small_machine(dir);
  auto src = dir.source();
  CaptureSet set = collect_capture(*src, nullptr, false);
  const std::string nvme = "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.1/nvme/nvme0";
  ASSERT_TRUE(entry(set, nvme + "/model"));
  EXPECT_EQ(entry(set, nvme + "/model")->data, "SAMSUNG MZWLR7T6HALA-00007\n");
  // Listed, never read: named in the manifest by its directory, and no member of its own.
  EXPECT_FALSE(entry(set, nvme + "/cntlid"));
  const auto& groups = set.manifest["uncaptured"];
  auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g["dir"] == nvme; });
  ASSERT_NE(group, groups.end());
  EXPECT_NE(std::find((*group)["names"].begin(), (*group)["names"].end(), "cntlid"), (*group)["names"].end());
  EXPECT_EQ(set.manifest["schema_version"], 3);
  // Every directory holding only placeholders is stored, so the unpacked capture has their place.
  for (const auto& g : groups) {
    const CaptureEntry* d = entry(set, g["dir"].get<std::string>());
    EXPECT_TRUE(d && d->kind == EntryKind::kDir) << g["dir"];
  }
  ASSERT_TRUE(entry(set, "/sys/class/nvme/nvme0"));
  EXPECT_EQ(entry(set, "/sys/class/nvme/nvme0")->kind, EntryKind::kLink);
  // The machine's identity is read like any other file, so a replay names the same machine.
  ASSERT_TRUE(entry(set, "/proc/sys/kernel/hostname"));
  EXPECT_EQ(entry(set, "/proc/sys/kernel/hostname")->data, "gpu-node-17.example.com\n");
  EXPECT_FALSE(entry(set, "/etc/hostname"));  // never read by the analysis
  ASSERT_TRUE(entry(set, "/proc/kallsyms"));  // read for amdgpu's AIS
  // Redacted, the symbols stay and the KASLR addresses go.
  auto again = dir.source();
  CaptureSet redacted = collect_capture(*again, nullptr, true);
  EXPECT_EQ(entry(redacted, "/proc/kallsyms")->data,
            "0000000000000000 T _stext\n0000000000000000 t kfd_ais_rw_file\t[amdgpu]\n");
  EXPECT_EQ(set.manifest["schema"], kCaptureSchema);
  EXPECT_EQ(set.manifest["as_root"], nullptr);  // a tree does not say
  EXPECT_EQ(set.mtime, 0);
}

TEST(Capture, ReplaysToTheSameCheckThroughDumpAndUnpackedRoot) {
  FakeRoot dir;
  TempDir out;
  small_machine(dir);
  auto src = dir.source();
  auto expected = check_doc(*src);
  auto fresh = dir.source();
  CaptureSet set = collect_capture(*fresh, nullptr, false);
  std::string file = out.path() + "/cap.tar.zst";
  CaptureWritten w = write_capture(set, {file, false});
  EXPECT_EQ(w.compression, "zstd");
  auto replay = open_dump_source(file);
  EXPECT_EQ(check_doc(*replay), expected);
  // Reading a placeholder says it was not captured: unknown, never an empty value; a listing
  // shows it as the machine's did.
  FileRead r = replay->read("/sys/class/nvme/nvme0/cntlid");
  EXPECT_EQ(r.status, ReadStatus::kFailed);
  EXPECT_NE(r.error.find("not in this capture"), std::string::npos);
  const std::vector<std::string> listed = src->list("/sys/class/nvme/nvme0");
  EXPECT_EQ(replay->list("/sys/class/nvme/nvme0"), listed);
  // Unpacked, the file is not there, yet the manifest makes the root answer the same.
  std::filesystem::create_directories(out.path() + "/x");
  ASSERT_EQ(std::system(("tar -C " + out.path() + "/x -xf " + file).c_str()), 0);
  const std::string unpacked = out.path() + "/x/" + kCaptureTopFolder;
  EXPECT_FALSE(std::filesystem::exists(unpacked + "/sys/class/nvme/nvme0/cntlid"));
  auto tree_replay = with_capture_manifest(open_tree_source(unpacked));
  EXPECT_EQ(check_doc(*tree_replay), expected);
  EXPECT_EQ(tree_replay->read("/sys/class/nvme/nvme0/cntlid").error, kNotCaptured);
  EXPECT_TRUE(tree_replay->exists("/sys/class/nvme/nvme0/cntlid"));
  EXPECT_EQ(tree_replay->list("/sys/class/nvme/nvme0"), listed);
}

TEST(Capture, UnreadableFilesReplayAsUnreadable) {
  FakeRoot dir;
  TempDir out;
  small_machine(dir);
  // The same machine through a memory tree in which the kernel config is denied.
  auto tsrc = dir.source();
  MemoryTree copy;
  for (const char* f : {"/proc/cpuinfo", "/proc/sys/kernel/osrelease"}) copy.add_file(f, tsrc->read(f).bytes);
  copy.add_failure("/boot/config-6.8.0-45-generic", {ReadStatus::kDenied, "", "Permission denied"});
  copy.add_dir("/sys/bus/pci/devices");
  auto src = open_memory_source(std::make_shared<const MemoryTree>(std::move(copy)), "memory");
  CaptureSet set = collect_capture(*src, nullptr, false);
  EXPECT_EQ(set.manifest["unreadable"]["/boot/config-6.8.0-45-generic"]["status"], "denied");
  std::string file = out.path() + "/cap.tar.gz";
  write_capture(set, {file, false});
  auto replay = open_dump_source(file);
  FileRead r = replay->read("/boot/config-6.8.0-45-generic");
  EXPECT_EQ(r.status, ReadStatus::kDenied);
  EXPECT_EQ(r.error, "Permission denied");
  // Unpacked and opened as a root, the manifest still says so.
  std::filesystem::create_directories(out.path() + "/x");
  ASSERT_EQ(std::system(("tar -C " + out.path() + "/x -xzf " + file).c_str()), 0);
  auto tree_replay = with_capture_manifest(open_tree_source(out.path() + "/x/" + kCaptureTopFolder));
  EXPECT_EQ(tree_replay->read("/boot/config-6.8.0-45-generic").status, ReadStatus::kDenied);
}

TEST(Capture, SameInputSameBytes) {
  FakeRoot dir;
  TempDir out;
  small_machine(dir);
  for (const char* name : {"a.tar.zst", "b.tar.zst", "a.tar.gz", "b.tar.gz", "a.tar.xz", "b.tar.xz"}) {
    auto src = dir.source();
    write_capture(collect_capture(*src, nullptr, false), {out.path() + "/" + name, false});
  }
  auto bytes = [&](const std::string& name) {
    std::ifstream in(out.path() + "/" + name, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  EXPECT_EQ(bytes("a.tar.zst"), bytes("b.tar.zst"));
  EXPECT_EQ(bytes("a.tar.gz"), bytes("b.tar.gz"));
  EXPECT_EQ(bytes("a.tar.xz"), bytes("b.tar.xz"));
}

// The member names of an uncompressed tar with short names (plain ustar headers), in order.
std::vector<std::string> tar_members(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::string tar((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::string> names;
  for (std::size_t at = 0; at + 512 <= tar.size() && tar[at] != '\0';) {
    names.emplace_back(tar.c_str() + at, strnlen(tar.c_str() + at, 100));
    std::size_t size = std::stoul(tar.substr(at + 124, 12), nullptr, 8);
    at += 512 + (size + 511) / 512 * 512;
  }
  return names;
}

// The writer sorts the members and adds every parent directory once, before what it holds, even
// where names sort between a directory and its contents ("a-x" and "a0" around "a/").
TEST(Capture, EveryDirectoryOnceAndBeforeItsContents) {
  TempDir out;
  CaptureSet set;
  set.manifest = {{"schema", "test"}};
  set.entries = {{"/sys", EntryKind::kDir, ""},         {"/sys/a-x", EntryKind::kFile, "1"},
                 {"/sys/a/b/c", EntryKind::kFile, "2"}, {"/sys/a/y", EntryKind::kLink, "b/c"},
                 {"/sys/a0", EntryKind::kFile, "3"},    {"/proc/x", EntryKind::kFile, "4"}};
  std::string file = out.path() + "/c.tar";
  CaptureWritten w = write_capture(set, {file, false});
  std::string top = std::string(kCaptureTopFolder);
  std::vector<std::string> expected = {top,
                                       top + "/manifest.json",
                                       top + "/proc",
                                       top + "/proc/x",
                                       top + "/sys",
                                       top + "/sys/a",
                                       top + "/sys/a-x",
                                       top + "/sys/a/b",
                                       top + "/sys/a/b/c",
                                       top + "/sys/a/y",
                                       top + "/sys/a0"};
  // tar writes directories with a trailing slash
  std::vector<std::string> got;
  for (std::string name : tar_members(file)) got.push_back(name.back() == '/' ? name.substr(0, name.size() - 1) : name);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(got, expected);
  EXPECT_EQ(w.members, expected.size());
}

TEST(Capture, NeverOverwritesUnlessForcedAndLeavesNoTemporaryFiles) {
  FakeRoot dir;
  TempDir out;
  small_machine(dir);
  auto src = dir.source();
  CaptureSet set = collect_capture(*src, nullptr, false);
  std::string file = out.path() + "/cap.tar";
  out.write("cap.tar", "precious");
  EXPECT_THROW(write_capture(set, {file, false}), UsageError);
  {
    std::ifstream in(file);
    std::string s((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(s, "precious");
  }
  const mode_t mask = umask(022);
  CaptureWritten w = write_capture(set, {file, true});
  umask(mask);
  EXPECT_GT(w.bytes, 8u);
  // Readable by the user who collects it, not only by root: 0666 less the umask, as any new file.
  struct stat st {};
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_THROW(write_capture(set, {out.path() + "/no/such/dir/cap.tar", false}), UsageError);
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(out.path())) {
    ++files;
    EXPECT_EQ(e.path().filename().string().find(".p2pcheck-capture-"), std::string::npos) << e.path();
  }
  EXPECT_EQ(files, 1);
}

TEST(Capture, LiveProbesGoUnderLiveWithTheirOwnSchema) {
  FakeRoot dir;
  TempDir out;
  small_machine(dir);
  auto src = dir.source();
  FakeActions actions;
  actions.root = false;
  actions.verify = R"({"schema": "p2pcheck.verify", "schema_version": 1, "pairs": []})";
  CaptureSet set = collect_capture(*src, &actions, false);
  ASSERT_TRUE(entry(set, "/live/nvme.json"));
  auto nvme = nlohmann::json::parse(entry(set, "/live/nvme.json")->data);
  EXPECT_EQ(nvme["schema"], "p2pcheck.live.nvme");
  EXPECT_EQ(nvme["controllers"][0]["identify"]["model"], "SAMSUNG MZWLR7T6HALA-00007");
  EXPECT_EQ(nvme["controllers"][0]["registers"]["cmb"]["size"], 4u << 20);
  EXPECT_EQ(nvme["controllers"][0]["registers"]["cmb"]["published_expected"], true);
  ASSERT_TRUE(entry(set, "/live/hip.json"));
  EXPECT_EQ(nlohmann::json::parse(entry(set, "/live/hip.json")->data)["schema"], "p2pcheck.live.hip");
  ASSERT_TRUE(entry(set, "/live/kmod.json"));
  auto kmod = nlohmann::json::parse(entry(set, "/live/kmod.json")->data);
  EXPECT_EQ(kmod["schema"], "p2pcheck.kmod");
  ASSERT_EQ(kmod["verdicts"].size(), 1u);
  EXPECT_EQ(kmod["verdicts"][0]["map_type"], "BUS_ADDR");
  EXPECT_EQ(kmod["verdicts"][0]["provider"], "0000:01:00.0");
  ASSERT_TRUE(entry(set, "/live/verify.json"));
  EXPECT_EQ(set.manifest["as_root"], false);
  EXPECT_EQ(set.manifest["captured_at"], "2026-11-30T00:53:20Z");
  EXPECT_NE(set.manifest["notes"].dump().find("captured without root"), std::string::npos);
  // Without the module or DMA results there are no such files at all: no placeholders.
  actions.module = false;
  actions.verify.reset();
  auto again = dir.source();
  CaptureSet without = collect_capture(*again, &actions, false);
  EXPECT_FALSE(entry(without, "/live/kmod.json"));
  EXPECT_FALSE(entry(without, "/live/verify.json"));
  EXPECT_NE(nlohmann::json(without.notes).dump().find("not in this capture: /dev/p2pprobe"), std::string::npos);
  // A capture of the capture keeps the live answers and the original facts.
  std::string file = out.path() + "/cap.tar.zst";
  write_capture(set, {file, false});
  auto replay = open_dump_source(file);
  auto info = read_capture_info(*replay);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->format, "capture");
  CaptureSet second = collect_capture(*replay, nullptr, false);
  EXPECT_TRUE(entry(second, "/live/nvme.json"));
  EXPECT_EQ(second.manifest["as_root"], false);
  EXPECT_EQ(second.mtime, 1796000000);
  EXPECT_EQ(second.manifest["source_manifest"]["hostname"], "gpu-node-17.example.com");
}

TEST(Capture, BrokenManifestOfOursIsAnErrorNamingIt) {
  MemoryTree tree;
  tree.add_dir("/sys/bus/pci/devices");
  tree.add_file(kManifestPath, "{\"schema\": \"p2pcheck.capture\", ");
  auto src = open_memory_source(std::make_shared<const MemoryTree>(std::move(tree)), "memory");
  try {
    read_capture_info(*src);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), kManifestPath);
  }
}

TEST(Capture, ManifestMembersAreReadByTypeAndNamed) {
  auto error = [](const std::string& manifest) {
    try {
      parse_capture_manifest(manifest, "x.tar:root/manifest.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string head = R"({"schema": "p2pcheck.capture", "schema_version": 1, )";
  EXPECT_EQ(error(R"({"schema": 5})"), "x.tar:root/manifest.json: schema: expected a string, found a number 5");
  EXPECT_EQ(error(head + R"("format": 7})"), "x.tar:root/manifest.json: format: expected a string, found a number 7");
  EXPECT_EQ(error(R"({"schema": "p2pcheck.capture", "schema_version": "1"})"),
            "x.tar:root/manifest.json: schema_version: expected an integer from 1 to 9223372036854775807, found a "
            "string \"1\"");
  EXPECT_EQ(error(R"({"schema": "p2pcheck.capture"})"),
            "x.tar:root/manifest.json: schema_version: expected an integer, found nothing");
  EXPECT_EQ(error(head + R"("notes": ["a", 2]})"),
            "x.tar:root/manifest.json: notes: expected an array of strings, found an array [\"a\",2]");
  EXPECT_EQ(error(head + R"("unreadable": {"/proc/x": {"status": 3}}})"),
            "x.tar:root/manifest.json: unreadable./proc/x.status: expected a string, found a number 3");
  EXPECT_EQ(error(head + R"("unreadable": {"/proc/x": "denied"}})"),
            "x.tar:root/manifest.json: unreadable./proc/x: expected an object, found a string \"denied\"");
  EXPECT_EQ(error(head + R"("uncaptured": [1]})"),
            "x.tar:root/manifest.json: uncaptured: expected an array of paths, found an array [1]");
  // From schema 3 the names are grouped by directory, each a name a listing could show.
  const std::string head3 = R"({"schema": "p2pcheck.capture", "schema_version": 3, )";
  EXPECT_EQ(error(head3 + R"("uncaptured": ["/a/b"]})"),
            "x.tar:root/manifest.json: uncaptured[0]: expected an object, found a string \"/a/b\"");
  EXPECT_EQ(error(head3 + R"("uncaptured": [{"dir": "a", "names": ["b"]}]})"),
            "x.tar:root/manifest.json: uncaptured[0].dir: expected an absolute directory, found a string \"a\"");
  EXPECT_EQ(error(head3 + R"("uncaptured": [{"dir": "/a"}]})"),
            "x.tar:root/manifest.json: uncaptured[0].names: expected an array of entry names (no '/', '.' or '..'), "
            "found nothing");
  for (const char* name : {R"("")", R"(".")", R"("..")", R"("c/d")", "7"})
    EXPECT_NE(error(head3 + R"("uncaptured": [{"dir": "/a", "names": ["b", )" + name + "]}]}")
                  .find("uncaptured[0].names: expected an array of entry names"),
              std::string::npos)
        << name;
  auto grouped = parse_capture_manifest(
      head3 + R"("uncaptured": [{"dir": "/", "names": ["top"]}, {"dir": "/a/b", "names": ["c", "d"]}]})", "m");
  ASSERT_TRUE(grouped);
  EXPECT_EQ(grouped->failures.size(), 3u);
  EXPECT_EQ(grouped->failures.at("/top").error, kNotCaptured);
  EXPECT_EQ(grouped->failures.at("/a/b/d").error, kNotCaptured);
  EXPECT_EQ(error(head + R"("source": )" + std::string(1000, '[') + std::string(1000, ']') + "}"),
            "x.tar:root/manifest.json: JSON nested deeper than 64 levels; p2pcheck never writes that");
  // Someone else's manifest.json, or none of ours, is not an error.
  EXPECT_FALSE(parse_capture_manifest(R"({"schema": "other"})", "m"));
  EXPECT_FALSE(parse_capture_manifest("[1, 2]", "m"));
  EXPECT_FALSE(parse_capture_manifest("not json", "m"));
  auto ok = parse_capture_manifest(
      head + R"("notes": ["n"], "unreadable": {"/a": {"status": "denied"}}, "uncaptured": ["/b"]})", "m");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->format, "capture");
  EXPECT_EQ(ok->notes, std::vector<std::string>{"n"});
  EXPECT_EQ(ok->failures.at("/a").status, ReadStatus::kDenied);
  EXPECT_EQ(ok->failures.at("/b").error, kNotCaptured);
  EXPECT_TRUE(ok->selection.gpu.empty() && ok->selection.nvme.empty());
  // "selection": what capture --gpu/--nvme recorded, as selectors; anything else names the member.
  auto sel = parse_capture_manifest(head + R"("selection": {"nvme": ["nvme0", "0000:05:00.0"]}})", "m");
  ASSERT_TRUE(sel);
  EXPECT_TRUE(sel->selection.gpu.empty());
  EXPECT_EQ(sel->selection.nvme, (std::vector<std::string>{"nvme0", "0000:05:00.0"}));
  EXPECT_EQ(error(head + R"("selection": {"gpu": "0000:03:00.0"}})"),
            "x.tar:root/manifest.json: selection.gpu: expected an array, found a string \"0000:03:00.0\"");
  EXPECT_NE(error(head + R"("selection": {"gpu": [""]}})").find("selection.gpu: expected an array of device selectors"),
            std::string::npos);
  EXPECT_NE(error(head + R"("selection": ["0000:03:00.0"]})").find("selection: expected an object"), std::string::npos);
}

// capture --gpu/--nvme: the machine whole, the selection in the manifest; a selector that matches
// nothing is refused before anything is written; a capture of the capture keeps the selection.
TEST(Capture, RecordsTheSelectionItWasTakenFor) {
  FakeRoot dir;
  small_machine(dir);
  PairSelection selection;
  selection.nvme = {"nvme0"};
  auto src = dir.source();
  CaptureSet set = collect_capture(*src, nullptr, false, selection);
  EXPECT_EQ(set.manifest["selection"], nlohmann::ordered_json::parse(R"({"nvme": ["nvme0"]})"));
  auto plain_src = dir.source();
  CaptureSet plain = collect_capture(*plain_src, nullptr, false);
  EXPECT_FALSE(plain.manifest.contains("selection"));
  EXPECT_EQ(set.entries.size(), plain.entries.size());  // the whole machine either way
  PairSelection missing;
  missing.gpu = {"0000:77:00.0"};
  auto again = dir.source();
  EXPECT_THROW(collect_capture(*again, nullptr, false, missing), UsageError);

  TempDir out;
  std::string file = out.path() + "/sel.tar.zst";
  write_capture(set, {file, false});
  auto replay = open_dump_source(file);
  auto info = read_capture_info(*replay);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->selection.nvme, selection.nvme);
  EXPECT_EQ(capture_summary_json(*info)["selection"], set.manifest["selection"]);
  CaptureSet second = collect_capture(*replay, nullptr, false);
  EXPECT_EQ(second.manifest["selection"], set.manifest["selection"]);
}

}  // namespace
}  // namespace p2pcheck
