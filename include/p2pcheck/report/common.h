// What every command's output shares: the JSON schema version, text styling, a function's label
// and JSON, and the small JSON and text helpers the per-command files build with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "p2pcheck/model/finding.h"
#include "p2pcheck/model/inventory.h"
#include "p2pcheck/model/locality.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/model/route.h"
#include "p2pcheck/rules/pair_walk.h"
#include "p2pcheck/rules/tri.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

// Bumped when a field changes meaning or disappears; new fields do not bump it. docs/json.md.
inline constexpr int kJsonSchemaVersion = 1;

struct TextStyle {
  bool color = false;   // ANSI colour, only when printing to a terminal
  bool unicode = true;  // box-drawing characters for trees
  // Columns the text may use (the terminal's, $COLUMNS, else kDefaultTextWidth): the pair matrix
  // fits its blocks to it. The CLI measures it; the library only takes the number.
  std::size_t width = kDefaultTextWidth;
  // Columns long lines (findings) fold at; 0 leaves them whole, as for a pipe or a file, where a
  // finding stays one line to grep. The CLI sets it for a terminal or an explicit $COLUMNS.
  std::size_t wrap = 0;
  static constexpr std::size_t kDefaultTextWidth = 80;
};

// For --ascii: the text with its non-ASCII punctuation spelled in ASCII ("—" -> "-", "→" -> "->",
// "…" -> "..."); any other non-ASCII character (a model name, say) becomes "?".
std::string ascii_text(std::string_view text);

// What every command's JSON starts with (docs/json.md): schema, schema_version, tool_version, source.
nlohmann::ordered_json json_envelope(const std::string& schema, const std::string& source);
// `identity`: hostname and DMI vendor/product/serial (null when unreadable, never ""), `redacted`
// when they are --redact placeholders (MachineIdentity::redacted: the CLI sets it from a capture's
// manifest when it opens the input).
nlohmann::ordered_json identity_json(const MachineIdentity& identity);

// "machine: Dell Inc. PowerEdge R740, host r740-07\n": DMI vendor and product and the host name,
// each said unknown (with why) or redacted where so: the text header of check, topo and explain.
std::string identity_line(const MachineIdentity& identity);

// One-line description: "0000:41:00.0 [1002:74a1] AMD Instinct MI300X"; with the name the input
// gives it (a plan's), "0000:03:00.0 (gpu0) [1002:74a1] ...".
std::string function_label(const Function& fn);
// "gpu0 " for a function the input names (a plan's name, escaped), else "": what goes before its BDF.
std::string name_prefix(const Function& fn);
// A pair's locality (model/locality.h): class, nvidia_smi word, why (null when known); with
// `nodes`, each end's NUMA node too (null when not known), as explain --json prints it.
nlohmann::ordered_json locality_json(const Locality& locality, bool nodes);
nlohmann::ordered_json function_json(const Topology& topo, const Function& fn, const Inventory& inv);
// true, false, or null for unknown.
nlohmann::ordered_json tri_json(Tri value);
// "nvme0 " for an NVMe function with a registered controller, else "": what goes before its BDF.
std::string nvme_name_prefix(const Inventory& inv, const Bdf& bdf);

// Helpers for src/report/ only; a namespace of their own so callers' local helpers of the same
// name (colored, pad) do not clash.
namespace report_detail {

using json = nlohmann::ordered_json;

using p2pcheck::hex;  // source/sysfs_text.h
json opt_bdf(const std::optional<Bdf>& bdf);
json text_or_null(const std::string& s);  // "" -> null
// RESULT's causes: "storage.stack (nvme6n1, nvme7n1), watch.unpaired"; past three subjects, the first and a count.
using Causes = std::vector<std::pair<std::string, std::vector<std::string>>>;  // id -> subjects, first seen first
std::string causes_line(const Causes& causes);
// The ANSI color of a finding level's word: green PASS, red FAIL, yellow WARN, magenta UNKNOWN.
const char* level_color(Level l);
template <typename T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}
// An empty object with room for `keys` members, filled with j["key"] = ...: an ordered_map that
// grows copies (never moves) what it holds, since its pairs have a const key; so does every
// {{"key", value}, ...} list, one growth per power of two.
json object_for(std::size_t keys);
json link_json(const Topology& topo, const Function& fn);
json acs_json(const Acs& acs);
// The hop by hop part of a path: a pair in full (pair_decision_json) lists it.
json hops_json(const Topology& topo, const Inventory& inv, const PairWalk& walk);
json bdfs_json(const std::vector<const Function*>& fns);
json nvme_name_json(const PairWalk& walk, const Inventory& inv);
json common_bridge_json(const PairWalk& walk);

std::string colored(const TextStyle& style, const char* code, const std::string& text);
// "nvme2" before "nvme10": digit runs compared as numbers, the rest as text.
bool natural_less(std::string_view a, std::string_view b);
// UTF-8 code points: the columns a text without colour takes on a terminal.
std::size_t code_points(std::string_view text);
// Pads to `width` code points (UTF-8), at least one space after.
std::string pad(const std::string& s, std::size_t width);
// `line` folded at spaces to `width` columns, each further line indented by `indent` spaces; a word
// longer than a line (a path, a command line) is never broken. A UTF-8 character takes one column,
// an ANSI colour sequence none.
std::string wrap_line(std::string_view line, std::size_t width, std::size_t indent);
// Every line of `text` wider than `width` folded as wrap_line does, its next lines under the text
// after its label ("  FAIL    ", "  why   ", "evidence: ", "  - "); width 0 leaves the text as it is.
std::string fold_to_width(const std::string& text, std::size_t width);

}  // namespace report_detail
}  // namespace p2pcheck
