// `p2pcheck explain GPU NVME`: one pair hop by hop, and which of the kernel's rules decided.
#include <iostream>

#include "commands.h"
#include "p2pcheck/report/mounts.h"
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
  // A path whose stack reaches several NVMe (md over two namespaces) is one pair per controller.
  nlohmann::ordered_json docs = nlohmann::ordered_json::array();
  std::string text = targets_text(report->targets);
  int code = kExitOk;
  for (std::size_t i = 0; i < report->pairs.size(); ++i) {
    const PairDecision& d = report->pairs.at(i);
    if (o.json) {
      auto j = explain_json(*report, d);
      if (!report->targets.empty()) j["targets"] = targets_json(report->targets);
      docs.push_back(std::move(j));
    } else {
      text += (i ? "\n" : "") + explain_text(*report, d, text_style(o));
    }
    int pair_code = d.verdict == Verdict::kSupported ? kExitOk
                    : d.verdict == Verdict::kUnknown ? kExitUnknown
                                                     : kExitFail;
    if (pair_code == kExitFail || (pair_code == kExitUnknown && code == kExitOk)) code = pair_code;
  }
  // GPU-direct I/O on that path goes through the stack: one that makes hipFile fall back fails it.
  for (const PathTarget& t : report->targets)
    if (t.stack_finding && t.stack_finding->level == Level::kFail) code = kExitFail;
  if (o.json)
    std::cout << json_output(o, docs.size() == 1 ? docs[0] : docs) << "\n";
  else
    print_text(o, text);
  return code;
}

Command add_explain_command(CLI::App& app, const GlobalOptions& o) {
  auto* sub = app.add_subcommand("explain", "one pair hop by hop: which rule decided");
  // Static: CLI11 writes the positionals here during parse, after this function has returned.
  static std::vector<std::string> pair;
  sub->add_option("pair", pair, "GPU and NVMe (PCI address, nvme0, /dev/nvme0n1, or a mount point or file path)")
      ->expected(2)
      ->required()
      ->option_text("GPU NVME");
  sub->fallthrough();
  return {sub, [&o] { return run_explain(o, pair); }};
}

}  // namespace p2pcheck::cli
