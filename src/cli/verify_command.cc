#include "verify_command.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <thread>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_text.h"
#include "p2pcheck/source/source.h"
#include "p2pcheck/verify/verify.h"
#include "p2pcheck/verify/verify_report.h"
#include "text_locale.h"

namespace p2pcheck::cli {

VerifyCommand::VerifyCommand(CLI::App& parent) : parent_(parent) {
  sub_ =
      parent.add_subcommand("verify", "move real data by P2P DMA between each GPU (or provider) and NVMe, both ways");
  sub_->add_option("--target", targets_,
                   "a directory on a file system of each NVMe to test (repeatable); a new scratch file is created, "
                   "used and removed there")
      ->option_text("DIR");
  sub_->add_option("--raw", raw_,
                   "write the NVMe namespace or partition itself (needs --offset and --allow-destructive; refused if "
                   "mounted or held)")
      ->option_text("DEVICE");
  sub_->add_option("--offset", offset_, "raw mode: first byte to overwrite (8M, 1G or bytes; a multiple of 4096)")
      ->option_text("BYTES");
  sub_->add_flag("--allow-destructive", allow_destructive_,
                 "raw mode: confirm that [offset, offset+size) of the device is overwritten");
  sub_->add_option("--size", size_,
                   "bytes each way (64M, 1G; default 64 MiB or the provider's free p2pmem, whichever is smaller)")
      ->option_text("BYTES");
  sub_->add_option("--engine", engine_, "auto, hipfile (AMD GPU), kmod (/dev/p2pprobe) or p2pmem (kernel 6.2+)")
      ->option_text("auto|hipfile|kmod|p2pmem")
      ->check(CLI::IsMember({"auto", "hipfile", "kmod", "p2pmem"}));
  sub_->add_option("--direction", direction_,
                   "both (default), to-device (storage -> GPU: the NVMe writes device memory) or to-storage (GPU -> "
                   "storage: the NVMe reads it)")
      ->option_text("both|to-device|to-storage")
      ->check(CLI::IsMember({"both", "to-device", "to-storage"}));
  sub_->add_option("--timeout", timeout_, "seconds to wait for one direction before calling it dropped (default 60)")
      ->option_text("SECONDS");
  sub_->add_flag("--force", force_, "run even on kernels known to corrupt memory with P2PDMA (RHEL 9.8, 10.2)");
  sub_->add_flag("--try-anyway", try_anyway_, "run pairs the kernel is expected to refuse, to show its refusal");
  sub_->add_option("--seed", seed_, "pattern seed (default: random)")->option_text("N");
  sub_->add_option("--results", results_,
                   std::string("where to leave the JSON results for capture (default ") + kVerifyResultsPath + ")")
      ->option_text("FILE");
  sub_->add_flag("--no-results", no_results_, "do not write the results file");
  sub_->fallthrough();
}

std::vector<std::string> VerifyCommand::parent_strings(const std::string& name) const {
  const CLI::Option* opt = parent_.get_option_no_throw(name);
  return opt && opt->count() ? opt->results() : std::vector<std::string>{};
}

bool VerifyCommand::parent_flag(const std::string& name) const {
  const CLI::Option* opt = parent_.get_option_no_throw(name);
  return opt && opt->count() > 0;
}

namespace {

// --color and --ascii read as the other commands read them (print_text).
TextStyle terminal_style(const std::vector<std::string>& color, bool ascii) {
  TextStyle style;
  std::string mode = color.empty() ? "auto" : color.back();
  style.color = mode == "always" || (mode == "auto" && isatty(STDOUT_FILENO) && !getenv("NO_COLOR"));
  style.unicode = !ascii && !locale_wants_ascii();
  return style;
}

// A line on stderr as each transfer starts (one can take up to --timeout), and real sleeps while a
// failed transfer waits to see whether its NVMe is being removed.
void show_progress(VerifyEnvironment& env) {
  env.pause = [](std::chrono::milliseconds wait) { std::this_thread::sleep_for(wait); };
  env.on_transfer_start = [](const PairPlan& pp, Direction d) {
    std::cerr << "p2pcheck: " << (pp.nvme_name.empty() ? pp.decision.walk.pair().nvme.str() : pp.nvme_name) << ": "
              << direction_label(pp, d) << " ..." << std::endl;
  };
}

// The results are a convenience for a later capture: failing to save them does not fail verify.
void save_results_for_capture(const nlohmann::ordered_json& doc, const std::string& path) {
  try {
    save_verify_results(doc, path);
  } catch (const Error& e) {
    std::cerr << "p2pcheck: results not saved for capture: " << e.what() << "\n";
  }
}

// A worker is still blocked in the dropped transfer and may return at any moment: leave
// without running static destructors under it. The kernel holds the exit until the I/O ends.
[[noreturn]] void exit_under_abandoned_transfer(int code) {
  std::cout.flush();
  std::cerr << "p2pcheck: waiting for the kernel to give up on the abandoned transfer before exiting\n";
  std::_Exit(code);
}

}  // namespace

int VerifyCommand::run() {
  if (!parent_strings("--root").empty() || !parent_strings("--dump").empty())
    throw UsageError("verify moves real data on this machine; --root and --dump replay other machines");
  if (!parent_strings("--plan").empty())
    throw UsageError("verify moves real data on this machine; --plan describes a server not built yet");
  VerifyOptions o;
  o.selection.gpu = parent_strings("--gpu");
  o.selection.nvme = parent_strings("--nvme");
  o.targets = targets_;
  o.raw_devices = raw_;
  if (!offset_.empty()) o.offset = parse_size(offset_, "--offset");
  o.allow_destructive = allow_destructive_;
  if (!size_.empty()) o.size = parse_size(size_);
  if (engine_ != "auto") o.engine = parse_engine_kind(engine_);
  o.timeout_s = timeout_;
  if (direction_ != "both") o.directions = {*parse_direction(direction_)};
  o.force = force_;
  o.try_anyway = try_anyway_;
  o.seed = seed_;
  const bool json = parent_flag("--json");
  const auto json_style = parent_strings("--json");
  const int json_indent = !json_style.empty() && json_style.back() == "pretty" ? 2 : -1;
  TextStyle style = terminal_style(parent_strings("--color"), parent_flag("--ascii"));
  // --ascii means ASCII throughout, as for the other commands (print_text).
  auto plain = [&style](const std::string& text) { return style.unicode ? text : ascii_text(text); };

  auto source = open_live_source();
  std::shared_ptr<VerifyIo> io = open_live_io();
  auto plan = plan_verify(*source, *io, o);
  if (plan->pairs.empty()) {
    std::cerr << "p2pcheck: no GPU–NVMe pair found; name the provider with --gpu and the NVMe with --nvme\n";
    return 4;
  }
  // Shown before anything moves: the raw-mode warning must come first.
  if (json)
    for (const auto& w : plan->warnings) std::cerr << "p2pcheck: warning: " << w << "\n";
  else
    std::cout << plain(verify_plan_text(*plan, style)) << std::flush;
  if (geteuid() != 0)
    std::cerr << "p2pcheck: not root: /dev/p2pprobe, p2pmem/allocate, raw devices and /dev/kmsg need root\n";

  auto engines = open_live_engines(io);
  auto kmsg = open_live_kernel_log();
  VerifyEnvironment env{*source, io, *engines, kmsg.get(), nullptr, nullptr, nullptr};
  show_progress(env);
  VerifyReport report = run_verify(std::move(plan), env);
  auto doc = verify_json(report);
  if (json)
    std::cout << json_text(doc, json_indent) << "\n";
  else
    std::cout << plain(verify_text(report, style));
  if (!no_results_) save_results_for_capture(doc, results_.empty() ? kVerifyResultsPath : results_);
  const int code = report.result == Level::kPass ? 0 : report.result == Level::kFail ? 1 : 2;
  if (report.abandoned) exit_under_abandoned_transfer(code);
  return code;
}

std::shared_ptr<VerifyCommand> add_verify_command(CLI::App& app) { return std::make_shared<VerifyCommand>(app); }

}  // namespace p2pcheck::cli
