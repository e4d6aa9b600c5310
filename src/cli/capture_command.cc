// `p2pcheck capture`: records what the analysis reads (and, live, what only the machine can tell)
// into one archive to replay with --dump.
#include <iostream>

#include "commands.h"
#include "p2pcheck/capture/capture.h"
#include "p2pcheck/live/device_actions.h"
#include "p2pcheck/model/pci.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/printable.h"

namespace p2pcheck::cli {
namespace {

struct CaptureOptions {
  std::string output;
  bool force = false, redact = false;
};

int run_capture(const GlobalOptions& o, const CaptureOptions& c) {
  if (!o.what_if_kernel.empty() || !o.kernel_release.empty() || !o.kernel_config.empty() || !o.cpu.empty() || o.fail_on)
    throw UsageError(
        "capture records the machine as it is; --what-if-kernel, --kernel-release, --kernel-config, --cpu and "
        "--fail-on apply when replaying it");
  capture_compression_for(c.output);  // a name the writer would refuse, refused before any reading
  auto source = open_source(o);
  std::unique_ptr<DeviceActions> actions;
  if (source->is_live()) actions = open_live_device_actions();
  // --gpu/--nvme: the pairs the capture is taken for, recorded so every replay (check, fleet)
  // judges those, as this machine's check would; the whole machine is recorded either way.
  CaptureSet set = collect_capture(*source, actions.get(), c.redact, o.selection);
  std::string from = source->describe();
  source.reset();  // its record of every read, a copy of the whole capture, is not needed to write it
  CaptureWritten w = write_capture(set, CaptureOutput{c.output, c.force});
  std::size_t files = 0, links = 0;
  for (const auto& e : set.entries) {
    files += e.kind == EntryKind::kFile;
    links += e.kind == EntryKind::kLink;
  }
  std::cout << "wrote " << w.file << ": " << files << " files, " << links << " links, " << format_size(w.bytes) << " ("
            << (w.compression == "none" ? "tar" : "tar + " + w.compression) << ") from " << from
            << (c.redact ? ", redacted" : "") << "\n";
  if (set.manifest.contains("selection")) {
    PairSelection recorded;  // our own manifest: the sides it has are arrays of strings
    const auto& sel = set.manifest["selection"];
    if (sel.contains("gpu")) recorded.gpu = sel["gpu"].get<std::vector<std::string>>();
    if (sel.contains("nvme")) recorded.nvme = sel["nvme"].get<std::vector<std::string>>();
    std::cout << "  pairs recorded for replays: " << printable(selection_args(recorded)) << "\n";
  }
  // Notes quote the input (a bad udev or lspci line): escaped as every name from input.
  for (const auto& n : set.notes) std::cout << "  note: " << printable(n) << "\n";
  std::cout << "replay with: p2pcheck --dump " << w.file << " check\n";
  free_at_exit(std::make_shared<CaptureSet>(std::move(set)));
  return kExitOk;
}

}  // namespace

Command add_capture_command(CLI::App& app, const GlobalOptions& o) {
  auto* sub = app.add_subcommand("capture", "write a compressed tar of what the analysis reads, to replay with --dump");
  // Static: CLI11 fills these during parse, after this function has returned.
  static CaptureOptions c;
  sub->add_option("-o,--output", c.output,
                  "the archive to write (default p2pcheck-capture.tar.zst): .tar.zst, .tar.gz, .tar.xz or .tar")
      ->default_val("p2pcheck-capture.tar.zst")
      ->option_text("FILE");
  sub->add_flag("--force", c.force, "replace FILE if it exists");
  sub->add_flag("--redact", c.redact,
                "replace serial numbers, host names, UUIDs and MAC addresses by stable placeholders");
  sub->fallthrough();
  return {sub, [&o] { return run_capture(o, c); }};
}

}  // namespace p2pcheck::cli
