// `p2pcheck explain GPU NVME`: one pair hop by hop, and which of the kernel's rules decided.
#include <iostream>

#include "commands.h"
#include "p2pcheck/report/report.h"
#include "p2pcheck/source/json_text.h"

namespace p2pcheck::cli {

static int run_explain(GlobalOptions o, const std::vector<std::string>& pair) {
  o.selection.gpu = {pair.at(0)};
  o.selection.nvme = {pair.at(1)};
  o.selection.gpu_named_by = "explain's GPU";
  o.selection.nvme_named_by = "explain's NVMe";
  Input input = open_input(o);
  auto report = checked(input, o);
  const PairDecision& d = report->pairs.at(0);
  if (o.json) {
    auto j = explain_json(*report, d);
    if (input.replay) j["identity"]["redacted"] = replay_redacted(*input.replay);
    std::cout << json_output(o, j) << "\n";
  } else
    print_text(o, explain_text(*report, d, text_style(o)));
  return d.verdict == Verdict::kSupported ? kExitOk : d.verdict == Verdict::kUnknown ? kExitUnknown : kExitFail;
}

Command add_explain_command(CLI::App& app, const GlobalOptions& o) {
  auto* sub = app.add_subcommand("explain", "one pair hop by hop: which rule decided");
  // Static: CLI11 writes the positionals here during parse, after this function has returned.
  static std::vector<std::string> pair;
  sub->add_option("pair", pair, "GPU and NVMe (PCI address, nvme0, /dev/nvme0n1)")
      ->expected(2)
      ->required()
      ->option_text("GPU NVME");
  sub->fallthrough();
  return {sub, [&o] { return run_explain(o, pair); }};
}

}  // namespace p2pcheck::cli
