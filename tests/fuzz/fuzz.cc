// The shared part of the fuzz targets (fuzz.h).
#include "fuzz.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/report/check.h"
#include "p2pcheck/report/compact_json.h"
#include "p2pcheck/report/topo.h"
#include "p2pcheck/source/archive.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_text.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck::fuzz {

void analyse(Source& source, const PairSelection& selection) {
  CheckOptions options;
  options.selection = selection;
  auto report = run_check(source, options);
  for (const TextStyle& style : {TextStyle{false, true}, TextStyle{true, false}}) {
    (void)result_line(*report, style);
    (void)check_text(*report, style, true);
    (void)topology_text(report->topo, report->inv, style);
  }
  (void)json_text(check_document(*report));
  (void)json_text(topology_json(report->topo, report->inv));
}

namespace {

// "--gpu A,B --nvme C" (a lab scenario's args file) as the CLI's selection.
PairSelection parse_args(const std::string& text) {
  PairSelection sel;
  std::vector<std::string> words = split_words(text);
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == "--gpu") sel.gpu = split(words[i + 1], ',');
    if (words[i] == "--nvme") sel.nvme = split(words[i + 1], ',');
  }
  return sel;
}

BaseMachine load_base() {
  const char* dir = std::getenv("P2PCHECK_FUZZ_BASE");
  std::string scenario = dir ? dir : P2PCHECK_SOURCE_DIR "/fixtures/lab/vfy-epyc";
  std::string archive = scenario + "/" + basename(scenario) + ".tar.zst";
  BaseMachine base;
  base.tree = load_archive(archive).tree.subtree(std::string("/") + kCaptureTopFolder);
  const MemoryTree::Node* manifest = base.tree.find(kManifestPath);
  if (!manifest) throw Error(archive, "no manifest.json: not a p2pcheck capture");
  if (auto info = parse_capture_manifest(manifest->data, archive))
    for (auto& [path, failure] : info->failures) base.tree.add_failure(path, failure);
  std::ifstream args(scenario + "/args");
  std::stringstream text;
  text << args.rdbuf();
  base.selection = parse_args(text.str());
  return base;
}

}  // namespace

const BaseMachine& base_machine() {
  // Loaded before the first input: a base that does not load is a broken setup, not a finding.
  static const BaseMachine base = [] {
    try {
      return load_base();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fuzz: cannot load the base machine (set P2PCHECK_FUZZ_BASE): %s\n", e.what());
      std::exit(2);
    }
  }();
  return base;
}

void analyse_base_with(const std::map<std::string, std::string>& files) {
  const BaseMachine& base = base_machine();
  auto tree = std::make_shared<MemoryTree>(base.tree);
  for (const auto& [path, bytes] : files) tree->add_file(path, bytes);
  auto source = open_memory_source(tree, "fuzz input");
  analyse(*source, base.selection);
}

std::vector<std::string> split_input(std::string_view data, std::size_t parts) {
  std::vector<std::string> out;
  while (out.size() + 1 < parts) {
    std::size_t nul = data.find('\0');
    if (nul == std::string_view::npos) break;
    out.emplace_back(data.substr(0, nul));
    data.remove_prefix(nul + 1);
  }
  out.emplace_back(data);
  out.resize(parts);
  return out;
}

}  // namespace p2pcheck::fuzz
