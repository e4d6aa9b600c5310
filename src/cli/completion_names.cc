#include "completion_names.h"

#include <algorithm>

#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/printable.h"

namespace p2pcheck::cli {

namespace {

bool in(const std::vector<Bdf>& list, const Bdf& bdf) { return std::find(list.begin(), list.end(), bdf) != list.end(); }

// A name with a space or a control character would break the shell's word list: left out.
void add(std::string& out, const std::string& word) {
  if (word.empty() || printable(word) != word || word.find_first_of(" \t") != std::string::npos) return;
  out += word + "\n";
}

}  // namespace

std::string completion_names(const GlobalOptions& o, const std::string& kind) {
  if (kind != "gpu" && kind != "nvme") throw UsageError("--complete " + kind + ": expected gpu or nvme");
  Input input = open_input(o);
  MachineState state = load_state(input, Load::kPciOnly);
  std::vector<Bdf> nvme_bdfs;
  for (const NvmeController& c : state.inv.nvmes) nvme_bdfs.push_back(c.bdf);
  std::string out;
  if (input.replay)  // the names the input gives its devices (a plan's), first
    for (const auto& [name, bdf] : device_names(*input.replay))
      if (kind == "gpu" ? in(state.inv.gpus, bdf) : in(nvme_bdfs, bdf)) add(out, name);
  if (kind == "gpu") {
    for (const Bdf& gpu : state.inv.gpus) add(out, gpu.str());
    if (state.inv.gpus.empty())
      for (const auto& [bdf, function] : state.topo.functions) add(out, bdf.str());
    return out;
  }
  for (const NvmeController& c : state.inv.nvmes) {
    add(out, c.name);
    for (const NvmeNamespace& ns : c.namespaces) add(out, ns.name);
  }
  for (const Bdf& bdf : nvme_bdfs) add(out, bdf.str());
  return out;
}

}  // namespace p2pcheck::cli
