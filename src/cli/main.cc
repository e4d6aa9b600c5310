// The p2pcheck command: parses options, runs the library, prints, and picks the exit code.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "kmod_command.h"
#include "p2pcheck/source/json_text.h"
#include "p2pcheck/source/version.h"
#include "p2pcheck/capture/capture.h"
#include "p2pcheck/checks/check.h"
#include "p2pcheck/live/device_actions.h"
#include "p2pcheck/live/kmod_control.h"
#include "verify_command.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/report/report.h"
#include "p2pcheck/source/source.h"

namespace {

using namespace p2pcheck;

// Exit codes, documented in README.md.
enum Exit {
  kExitOk = 0,
  kExitFail = 1,
  kExitUnknown = 2,
  kExitUsage = 3,
  kExitNoPair = 4,
  kExitInput = 5,
};

struct Options {
  std::string root;
  std::string dump;
  bool json = false;
  std::string color = "auto";
  bool ascii = false;
  PairSelection selection;
  std::string assume_kernel;
  std::vector<std::string> explain_pair;
  std::string cpu;                 // --cpu, for imports that lack the CPU
  std::string output;              // capture -o
  bool force = false, redact = false;
};

std::unique_ptr<Source> open_source(const Options& o) {
  if (!o.root.empty() && !o.dump.empty()) throw UsageError("--root and --dump select different sources; give one");
  if (!o.cpu.empty() && o.dump.empty())
    throw UsageError("--cpu is for --dump imports that do not say which CPU the machine has (lspci dumps)");
  // An unpacked capture replays like the archive: what could not be read stays unreadable.
  if (!o.root.empty()) return with_capture_manifest(open_tree_source(o.root));
  if (!o.dump.empty()) return open_dump_source(o.dump, ImportOptions{o.cpu});
  return open_live_source();
}

// Replays of captures and imports say what they are and what they could not tell.
std::optional<CaptureInfo> replay_info(Source& source) {
  return source.is_live() ? std::nullopt : read_capture_info(source);
}

std::string replay_text(const std::optional<CaptureInfo>& info) {
  if (!info) return "";
  const auto& m = info->manifest;
  auto str = [&](const char* key) { return m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : std::string(); };
  std::string out;
  if (info->format == "capture") {
    std::string root = m.contains("as_root") && m["as_root"].is_boolean() ? (m["as_root"].get<bool>() ? "yes" : "no") : "unknown";
    out = "replaying a capture by p2pcheck " + str("tool_version") +
          (str("captured_at").empty() ? "" : " taken " + str("captured_at")) + (str("source").empty() ? "" : " from " + str("source")) +
          "; as root: " + root + "\n";
  } else {
    out = "imported from " + info->format + " input: " + str("source") + "\n";
  }
  for (const auto& n : info->notes) out += "  note: " + n + "\n";
  return out + "\n";
}

TextStyle text_style(const Options& o) {
  TextStyle style;
  style.color = o.color == "always" || (o.color == "auto" && isatty(STDOUT_FILENO) && !getenv("NO_COLOR"));
  style.unicode = !o.ascii;
  return style;
}

int run_topo(const Options& o) {
  auto source = open_source(o);
  auto info = replay_info(*source);
  PciDecoder decoder;
  Topology topo = read_topology(*source, decoder);
  Inventory inv = read_inventory(*source, topo);
  if (o.json) {
    auto j = topology_json(topo, inv);
    if (info) j["capture"] = capture_summary_json(*info);
    std::cout << json_text(j) << "\n";
  } else {
    std::cout << replay_text(info) << topology_text(topo, inv, text_style(o));
  }
  return kExitOk;
}

int run_paths(const Options& o) {
  auto source = open_source(o);
  PciDecoder decoder;
  Topology topo = read_topology(*source, decoder);
  Inventory inv = read_inventory(*source, topo);
  std::vector<PairPath> paths;
  for (const DevicePair& pair : select_pairs(topo, inv, o.selection)) paths.push_back(describe_path(topo, inv, pair));
  if (o.json)
    std::cout << json_text(paths_json(topo, inv, paths)) << "\n";
  else
    std::cout << paths_text(topo, inv, paths, text_style(o));
  if (paths.empty()) {
    std::cerr << "p2pcheck: no GPU–NVMe pair found in " << topo.source_description << " (" << inv.gpus.size()
              << " GPU(s), " << inv.nvmes.size() << " NVMe); name any two functions with --gpu and --nvme\n";
    return kExitNoPair;
  }
  return kExitOk;
}

int exit_for(Level result) {
  switch (result) {
    case Level::kFail: return kExitFail;
    case Level::kUnknown: return kExitUnknown;
    default: return kExitOk;
  }
}

std::unique_ptr<CheckReport> checked(Source& source, const Options& o) {
  CheckOptions options;
  options.selection = o.selection;
  // On the live machine the running kernel can answer for itself when p2pprobe is loaded.
  static std::unique_ptr<P2pprobeClient> kernel_module;
  if (source.is_live()) {
    kernel_module = open_kernel_module(options.kernel_module_problem);
    options.kernel_module = kernel_module.get();
  }
  if (!o.assume_kernel.empty()) {
    if (!parse_kernel_version(o.assume_kernel)) throw UsageError("--assume-kernel " + o.assume_kernel + ": expected a release such as 6.8 or 7.1.0");
    options.assume_kernel = o.assume_kernel;
  }
  return run_check(source, options);
}

int run_check_command(const Options& o) {
  auto source = open_source(o);
  auto info = replay_info(*source);
  auto report = checked(*source, o);
  if (o.json) {
    auto j = check_json(*report);
    if (info) j["capture"] = capture_summary_json(*info);
    std::cout << json_text(j) << "\n";
  } else {
    std::cout << replay_text(info) << check_text(*report, text_style(o));
  }
  if (report->pairs.empty()) {
    std::cerr << "p2pcheck: no GPU–NVMe pair found in " << report->source << " (" << report->inv.gpus.size()
              << " GPU(s), " << report->inv.nvmes.size() << " NVMe); name any two functions with --gpu and --nvme\n";
    return kExitNoPair;
  }
  return exit_for(report->result);
}

int run_explain(Options o) {
  o.selection.gpu = {o.explain_pair.at(0)};
  o.selection.nvme = {o.explain_pair.at(1)};
  auto source = open_source(o);
  auto report = checked(*source, o);
  const PairDecision& d = report->pairs.at(0);
  if (o.json)
    std::cout << json_text(decision_json(report->topo, d, report->inv)) << "\n";
  else
    std::cout << explain_text(*report, d, text_style(o));
  return d.verdict == Verdict::kSupported ? kExitOk : d.verdict == Verdict::kUnknown ? kExitUnknown : kExitFail;
}

// Records what the analysis reads (and, live, what only the machine can tell) into one archive.
int run_capture(const Options& o) {
  if (!o.selection.gpu.empty() || !o.selection.nvme.empty() || !o.assume_kernel.empty())
    throw UsageError("capture records the whole machine; --gpu, --nvme and --assume-kernel apply when replaying it");
  auto source = open_source(o);
  std::unique_ptr<DeviceActions> actions;
  if (source->is_live()) actions = open_live_device_actions();
  CaptureSet set = collect_capture(*source, actions.get(), o.redact);
  CaptureWritten w = write_capture(set, CaptureOutput{o.output, o.force});
  std::size_t files = 0, links = 0;
  for (const auto& e : set.entries) {
    files += e.kind == EntryKind::kFile;
    links += e.kind == EntryKind::kLink;
  }
  std::cout << "wrote " << w.file << ": " << files << " files, " << links << " links, " << format_size(w.bytes) << " ("
            << (w.compression == "none" ? "tar" : "tar + " + w.compression) << ") from " << source->describe()
            << (o.redact ? ", redacted" : "") << "\n";
  for (const auto& n : set.notes) std::cout << "  note: " << n << "\n";
  std::cout << "replay with: p2pcheck --dump " << w.file << " check\n";
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"p2pcheck: can each GPU move data straight to and from each NVMe drive by PCIe P2PDMA?"};
  app.set_version_flag("--version", std::string("p2pcheck ") + kToolVersion);
  app.require_subcommand(0, 1);
  Options o;
  app.add_option("--root", o.root, "analyse a captured Linux root directory (DIR/sys, DIR/proc, ...) instead of this machine");
  app.add_option("--dump", o.dump, "analyse a dump file (tar archive of a captured root, or a directory)");
  app.add_flag("--json", o.json, "machine-readable output (schema in docs/json.md)");
  app.add_option("--color", o.color, "colour: auto (on a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_flag("--ascii", o.ascii, "plain ASCII tree lines");
  app.add_option("--gpu", o.selection.gpu, "GPU side of the pairs: a PCI address (any function may stand in)")
      ->delimiter(',');
  app.add_option("--nvme", o.selection.nvme, "NVMe side: PCI address, nvme0, nvme0n1 or /dev/nvme0n1")
      ->delimiter(',');
  app.add_option("--assume-kernel", o.assume_kernel, "evaluate the rules of another kernel release (e.g. 7.1)");
  app.add_option("--cpu", o.cpu, "for --dump imports without the CPU (lspci dumps): amd-zen, amd-pre-zen, intel, hygon, or a /proc/cpuinfo file");
  auto* check = app.add_subcommand("check", "the verdict for every GPU–NVMe pair, with findings and fixes (default)");
  auto* explain = app.add_subcommand("explain", "one pair hop by hop: which rule decided");
  explain->add_option("pair", o.explain_pair, "GPU and NVMe (PCI address, nvme0, /dev/nvme0n1)")->expected(2)->required();
  auto* topo = app.add_subcommand("topo", "the PCI tree with roles, link speed and width, ACS state");
  auto* paths = app.add_subcommand("paths", "every GPU–NVMe pair with the hops between them");
  auto* capture = app.add_subcommand("capture", "write a compressed tar of what the analysis reads, to replay with --dump");
  capture->add_option("-o,--output", o.output, "the archive to write: .tar.zst (default), .tar.gz, .tar.xz or .tar")
      ->default_val("p2pcheck-capture.tar.zst");
  capture->add_flag("--force", o.force, "replace FILE if it exists");
  capture->add_flag("--redact", o.redact, "replace serial numbers, host names, UUIDs and MAC addresses by stable placeholders");
  for (auto* sub : {check, explain, topo, paths, capture}) sub->fallthrough();
  std::function<int()> kmod_run;
  auto* kmod = cli::add_kmod_command(app, kmod_run, o.json);
  auto verify = p2pcheck::cli::add_verify_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return e.get_exit_code() == 0 ? rc : kExitUsage;
  }
  try {
    if (verify->selected()) return verify->run();
    if (*capture) return run_capture(o);
    if (*topo) return run_topo(o);
    if (*paths) return run_paths(o);
    if (*explain) return run_explain(o);
    if (*kmod) return kmod_run ? kmod_run() : kExitUsage;
    return run_check_command(o);
  } catch (const UsageError& e) {
    std::cerr << "p2pcheck: " << e.what() << "\n";
    return kExitUsage;
  } catch (const Error& e) {
    std::cerr << "p2pcheck: " << e.what() << "\n";
    return kExitInput;
  }
  return kExitUsage;
}
