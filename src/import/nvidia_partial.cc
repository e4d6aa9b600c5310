// An older nvidia-bug-report's lspci sections: every function of `lspci -nn`, placed by `lspci -t`,
// with the config space of the NVIDIA and PLX functions its -d sections dump and none elsewhere.
#include "nvidia_partial.h"

#include <map>
#include <set>

#include "import_lspci.h"
#include "lspci_listing.h"
#include "lspci_text.h"
#include "lspci_text_config.h"
#include "lspci_tree.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

using Parents = std::map<Bdf, std::optional<Bdf>>;

// What the -d sections give: config spaces, drivers and, from their -v lines, BAR sizes (the
// kernel's resource file, as the lspci -vvv text import writes it).
struct Dumped : LspciDump {
  std::map<Bdf, std::string> resources;
};

// The BAR sizes of a -d section's functions: its -v lines ("Memory at ... [size=16M]"), read by the
// lspci text parser and placed by the BARs' addresses in the same section's dumps.
void read_bar_sizes(const ReportText& d, const std::string& name, Dumped& all) {
  LspciText text = parse_lspci_text(d.body, name);
  for (TextFunction& fn : text.functions) {
    // A block the -vvv import would leave out (-v prints "[100] Advanced Error Reporting", no "v1")
    // still has its BAR lines: each is taken only where a dumped BAR holds its address.
    auto config = all.configs.find(fn.bdf);
    if (config == all.configs.end() || all.resources.count(fn.bdf)) continue;
    if (place_regions(fn, config->second) > 0) all.resources[fn.bdf] = resource_from_text(fn);
  }
}

// Config spaces and drivers of the -d sections; a section of a vendor the machine lacks is empty.
Dumped read_dumps(SysfsBuilder& builder, const PartialLspci& sections, const std::string& name) {
  Dumped all;
  for (const ReportText& d : sections.dumps) {
    LspciDump one = read_lspci_dump(std::string(d.body), name, d.first_line, true);
    for (auto& [bdf, config] : one.configs) all.configs.emplace(bdf, std::move(config));  // the first copy counts
    all.drivers.merge(one.drivers);
    for (SkippedRecord& r : one.skipped) builder.skipped(std::move(r));
    read_bar_sizes(d, name, all);
  }
  return all;
}

// The -t drawing, or nullopt when there is none or it cannot be followed (then said in a note).
std::optional<Parents> read_tree(SysfsBuilder& builder, const PartialLspci& sections, const std::string& name) {
  if (!sections.tree) return std::nullopt;
  try {
    return parse_lspci_tree(std::string(sections.tree->body), name, sections.tree->first_line);
  } catch (const Error& e) {
    builder.note(std::string("its lspci -t section was not used (") + e.what() +
                 "): hierarchy from the dumped bridges' bus numbers only");
    return std::nullopt;
  }
}

// Each function's upstream bridge as the sections tell it: the -t drawing's, else the dumped
// bridge whose bus range holds its bus most narrowly, else (without a drawing) none on bus 00.
// A function it cannot place is left out, with why.
Parents place(SysfsBuilder& builder, const std::map<Bdf, SynthFunction>& fns, const std::optional<Parents>& tree,
              const std::string& name) {
  struct Range {
    Bdf bridge;
    std::uint8_t sec, sub;
  };
  std::vector<Range> ranges;
  for (const auto& [bdf, fn] : fns)
    if (const std::string* c = fn.config ? &*fn.config : nullptr; c && (((*c)[0x0e] & 0x7f) == 1) && (*c)[0x19])
      ranges.push_back({bdf, static_cast<std::uint8_t>((*c)[0x19]), static_cast<std::uint8_t>((*c)[0x1a])});
  Parents out;
  for (const auto& [bdf, fn] : fns) {
    if (tree)
      if (auto it = tree->find(bdf); it != tree->end()) {
        out[bdf] = it->second;
        continue;
      }
    const Range* best = nullptr;
    for (const Range& r : ranges)  // a handful of PLX ports
      if (r.bridge.domain == bdf.domain && r.bridge != bdf && r.sec <= bdf.bus && bdf.bus <= r.sub &&
          (!best || r.sec > best->sec))
        best = &r;
    if (best)
      out[bdf] = best->bridge;
    else if (!tree && bdf.bus == 0)
      out[bdf] = std::nullopt;
    else if (tree)
      builder.skipped("functions of its lspci -nn section are not in its lspci -t drawing", bdf.str(),
                      name + ": " + bdf.str() + " is not in its lspci -t drawing; device left out");
    else
      builder.skipped("functions have no known upstream bridge (no lspci -t section)", bdf.str(),
                      name + ": " + bdf.str() + ": no lspci -t section, and no dumped bridge's bus range holds bus " +
                          hex(bdf.bus, 2) + "; device left out");
  }
  return out;
}

// The placed functions whose every bridge up to the root bus is placed too: a path without one of
// its bridges is not the kernel's. One walk per chain, each function settled once (no loops).
std::set<Bdf> complete_paths(SysfsBuilder& builder, const Parents& parents, const std::string& name) {
  std::map<Bdf, bool> settled;
  for (const auto& [start, unused] : parents) {
    std::vector<Bdf> chain;
    std::set<Bdf> on_chain;
    std::optional<Bdf> at = start;
    bool ok = true;
    while (at && !settled.count(*at)) {
      auto it = parents.find(*at);
      if (it == parents.end() || !on_chain.insert(*at).second) {
        ok = false;
        break;
      }
      chain.push_back(*at);
      at = it->second;
    }
    if (at && settled.count(*at)) ok = settled[*at];
    for (const Bdf& b : chain) {
      settled[b] = ok;
      if (!ok)
        builder.skipped("devices are below a bridge the report does not place", b.str(),
                        name + ": " + b.str() + ": a bridge above it is not in its lspci sections; device left out");
    }
  }
  std::set<Bdf> out;
  for (const auto& [bdf, ok] : settled)
    if (ok) out.insert(bdf);
  return out;
}

bool is_gpu(const SynthFunction& fn) {
  std::uint8_t base = static_cast<std::uint8_t>(fn.class_code >> 16);
  return (fn.vendor == 0x10de || fn.vendor == 0x1002) && (base == 0x03 || base == 0x12);
}

// The listed function without config space: IDs and class from its -nn line.
SynthFunction listed_function(const ListedFunction& l, int& nvme_assumed) {
  SynthFunction fn;
  fn.bdf = l.bdf;
  fn.vendor = l.vendor;
  fn.device = l.device;
  fn.class_code = l.class_code;
  fn.revision = l.revision;
  // lspci -nn prints no programming interface: a non-volatile memory controller is taken as NVMe.
  if ((l.class_code >> 8) == 0x0108 && !l.prog_if_shown) {
    fn.class_code |= 0x02;
    ++nvme_assumed;
  }
  return fn;
}

// The dumped function: IDs and class from its config space, as the lspci import reads them.
SynthFunction dumped_function(const Bdf& bdf, const std::string& c, const Dumped& dumps) {
  SynthFunction fn;
  fn.bdf = bdf;
  take_config_identity(c, fn);
  if (auto it = dumps.drivers.find(bdf); it != dumps.drivers.end()) fn.driver = it->second;
  if (auto it = dumps.resources.find(bdf); it != dumps.resources.end()) fn.resource = it->second;
  return fn;
}

void add_partial_notes(SysfsBuilder& builder, const PartialLspci& sections, const PartialSummary& s, bool tree_used,
                       int nvme_assumed) {
  const std::string ask = "ask for `sudo lspci -xxxx` and `lspci -tv` from the machine, or a `p2pcheck capture`";
  builder.note("an older nvidia-bug-report: its lspci -d sections dump " + std::to_string(s.with_config) +
               " NVIDIA and PLX functions (256 bytes each); of the other " +
               std::to_string(s.functions - s.with_config) + " only IDs and class are in it");
  if (s.nvmes_without_config)
    builder.note(
        "no NVMe config space in this report (its lspci sections dump only NVIDIA and PLX devices): the "
        "ACS, port types and links of the NVMe and of the bridges without a dump are unknown, so pairs "
        "through them stay UNKNOWN; " +
        ask);
  if (nvme_assumed)
    builder.note(std::to_string(nvme_assumed) +
                 " non-volatile memory controllers [0108] are taken as NVMe (prog-if 02): lspci -nn does not print "
                 "the programming interface");
  if (!sections.listing)
    builder.note(
        "no lspci -nn section: only the functions its -d sections dump are known, not the bridges and "
        "devices around them; " +
        ask);
  if (!tree_used)
    builder.note(
        "hierarchy from the dumped bridges' bus numbers (no usable lspci -t section): a function on another "
        "bus than 00 and not below a dumped bridge is left out; " +
        ask);
  else
    builder.note("hierarchy from its lspci -t section");
}

}  // namespace

PartialSummary add_partial_lspci(SysfsBuilder& builder, const PartialLspci& sections, const std::string& name) {
  Dumped dumps = read_dumps(builder, sections, name);
  std::map<Bdf, SynthFunction> fns;
  int nvme_assumed = 0;
  if (sections.listing) {
    LspciListing listing = parse_lspci_listing(std::string(sections.listing->body), name, sections.listing->first_line);
    for (SkippedRecord& r : listing.skipped) builder.skipped(std::move(r));
    for (const ListedFunction& l : listing.functions)
      if (!dumps.configs.count(l.bdf)) fns.emplace(l.bdf, listed_function(l, nvme_assumed));
  }
  for (const auto& [bdf, c] : dumps.configs) fns.emplace(bdf, dumped_function(bdf, c, dumps));
  std::optional<Parents> tree = read_tree(builder, sections, name);
  Parents parents = place(builder, fns, tree, name);
  std::set<Bdf> placed = complete_paths(builder, parents, name);
  PartialSummary summary;
  for (auto& [bdf, fn] : fns) {
    if (!placed.count(bdf)) continue;
    fn.parent = parents.at(bdf);
    ++summary.functions;
    summary.with_config += fn.config ? 1 : 0;
    summary.with_bar_sizes += fn.resource ? 1 : 0;
    summary.gpus += is_gpu(fn) ? 1 : 0;
    summary.nvmes += fn.class_code == 0x010802 ? 1 : 0;
    summary.nvmes_without_config += fn.class_code == 0x010802 && !fn.config ? 1 : 0;
    builder.add_function(std::move(fn));
  }
  add_partial_notes(builder, sections, summary, tree.has_value(), nvme_assumed);
  if (!dumps.configs.empty()) note_config_sizes(builder, dumps.configs);
  return summary;
}

}  // namespace p2pcheck
