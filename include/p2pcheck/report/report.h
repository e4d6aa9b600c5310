// Turns results into JSON documents and text. The library only builds strings; the CLI prints.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "p2pcheck/model/inventory.h"
#include "p2pcheck/rules/paths.h"

namespace p2pcheck {

// Bumped when a field changes meaning or disappears; new fields do not bump it. docs/json.md.
inline constexpr int kJsonSchemaVersion = 1;

nlohmann::ordered_json function_json(const Topology& topo, const Function& fn, const Inventory& inv);
nlohmann::ordered_json topology_json(const Topology& topo, const Inventory& inv);
nlohmann::ordered_json path_json(const Topology& topo, const PairPath& path, const Inventory& inv);
nlohmann::ordered_json paths_json(const Topology& topo, const Inventory& inv, const std::vector<PairPath>& paths);

struct TextStyle {
  bool color = false;    // ANSI colour, only when printing to a terminal
  bool unicode = true;   // box-drawing characters for trees
};

std::string topology_text(const Topology& topo, const Inventory& inv, const TextStyle& style);
std::string paths_text(const Topology& topo, const Inventory& inv, const std::vector<PairPath>& paths,
                       const TextStyle& style);
// One-line description: "0000:41:00.0 [1002:74a1] AMD Instinct MI300X".
std::string function_label(const Function& fn);

}  // namespace p2pcheck

#include "p2pcheck/checks/check.h"

namespace p2pcheck {

nlohmann::ordered_json check_json(const CheckReport& report);
std::string check_text(const CheckReport& report, const TextStyle& style);
// One pair hop by hop: which devices the kernel looked at, what each said, which rule decided.
std::string explain_text(const CheckReport& report, const PairDecision& pair, const TextStyle& style);
nlohmann::ordered_json decision_json(const Topology& topo, const PairDecision& d, const Inventory& inv);

}  // namespace p2pcheck
