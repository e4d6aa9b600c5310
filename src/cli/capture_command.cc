// `p2pcheck capture`: records what the analysis reads (and, live, what only the machine can tell)
// into one archive to replay with --dump.
#include <iostream>

#include "commands.h"
#include "p2pcheck/capture/capture.h"
#include "p2pcheck/live/device_actions.h"
#include "p2pcheck/model/pci.h"
#include "p2pcheck/source/error.h"

namespace p2pcheck::cli {
namespace {

struct CaptureOptions {
  std::string output;
  bool force = false, redact = false;
};

int run_capture(const GlobalOptions& o, const CaptureOptions& c) {
  if (!o.selection.gpu.empty() || !o.selection.nvme.empty() || !o.assume_kernel.empty())
    throw UsageError("capture records the whole machine; --gpu, --nvme and --assume-kernel apply when replaying it");
  capture_compression_for(c.output);  // a name the writer would refuse, refused before any reading
  auto source = open_source(o);
  std::unique_ptr<DeviceActions> actions;
  if (source->is_live()) actions = open_live_device_actions();
  CaptureSet set = collect_capture(*source, actions.get(), c.redact);
  CaptureWritten w = write_capture(set, CaptureOutput{c.output, c.force});
  std::size_t files = 0, links = 0;
  for (const auto& e : set.entries) {
    files += e.kind == EntryKind::kFile;
    links += e.kind == EntryKind::kLink;
  }
  std::cout << "wrote " << w.file << ": " << files << " files, " << links << " links, " << format_size(w.bytes) << " ("
            << (w.compression == "none" ? "tar" : "tar + " + w.compression) << ") from " << source->describe()
            << (c.redact ? ", redacted" : "") << "\n";
  for (const auto& n : set.notes) std::cout << "  note: " << n << "\n";
  std::cout << "replay with: p2pcheck --dump " << w.file << " check\n";
  return kExitOk;
}

}  // namespace

Command add_capture_command(CLI::App& app, const GlobalOptions& o) {
  auto* sub = app.add_subcommand("capture", "write a compressed tar of what the analysis reads, to replay with --dump");
  // Static: CLI11 fills these during parse, after this function has returned.
  static CaptureOptions c;
  sub->add_option("-o,--output", c.output, "the archive to write: .tar.zst (default), .tar.gz, .tar.xz or .tar")
      ->default_val("p2pcheck-capture.tar.zst");
  sub->add_flag("--force", c.force, "replace FILE if it exists");
  sub->add_flag("--redact", c.redact,
                "replace serial numbers, host names, UUIDs and MAC addresses by stable placeholders");
  sub->fallthrough();
  return {sub, [&o] { return run_capture(o, c); }};
}

}  // namespace p2pcheck::cli
