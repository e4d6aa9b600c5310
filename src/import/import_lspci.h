// lspci -x dumps, shared by the lspci and nvidia-bug-report imports.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "p2pcheck/import/import.h"
#include "p2pcheck/import/sysfs_builder.h"
#include "p2pcheck/model/pci.h"

namespace p2pcheck {

struct LspciFunctions {
  std::map<Bdf, std::string> configs;  // each function's config space, as libpci read it
  bool have_drivers = false;           // lspci -k's "Kernel driver in use" lines were there
  int disagreements = 0;               // functions whose lspci -t parent is not the bus numbers' one
};

// What an lspci -x/-xxx/-xxxx dump holds: each function's config space as libpci read it, lspci
// -k's drivers, and the devices left out (for SysfsBuilder::skipped).
struct LspciDump {
  std::map<Bdf, std::string> configs;
  std::map<Bdf, std::string> drivers;
  std::vector<SkippedRecord> skipped;
};
// Error naming `name` (and the line, numbered from `first_line`) when the dump is past the limits,
// or holds no readable function and not `may_be_empty` (a section of one vendor's devices may be).
LspciDump read_lspci_dump(const std::string& dump, const std::string& name, int first_line, bool may_be_empty);

// Every function of an lspci -x/-xxx/-xxxx dump added to `builder`, each below its upstream bridge
// (from `tree_text`, an lspci -t drawing, when given). A device whose lines cannot be read is left
// out with a note (SysfsBuilder::skipped), and so is one whose bridge was; Error, naming the dump,
// when none is left or the dump is past the limits. Lines are numbered from `first_line` (the dump's
// first line in the file it came from).
LspciFunctions add_lspci_functions(SysfsBuilder& builder, const std::string& dump, const std::string* tree_text,
                                   const std::string& name, int first_line = 1);

// Each function of `configs` (its config space as lspci read it) added to `builder` below its
// upstream bridge: from `tree_text` (an lspci -t drawing) when given, else the bridges' bus numbers.
// `seeds` hold what else the input told of a function (driver, NUMA node, ...); IDs, class and
// config come from `configs`. With `devices_left_out`, a function whose bridge may have been left
// out is left out too. Returns how many functions lspci -t places elsewhere than the bus numbers.
int add_config_functions(SysfsBuilder& builder, const std::map<Bdf, std::string>& configs,
                         std::map<Bdf, SynthFunction> seeds, const std::string* tree_text, const std::string& name,
                         bool devices_left_out);

// What lspci output, a dump or -vvv text (`input`: "dump", "text"), cannot carry: the CPU unless
// /proc/cpuinfo is beside it (`cpuinfo`) or --cpu supplies it, the kernel's files and the machine's
// areas; then the notes on the kernel and on where the hierarchy came from (`tree`: an lspci -t
// drawing, with the functions it places elsewhere than the bus numbers).
void note_lspci_limits(SysfsBuilder& builder, const std::string& cpuinfo, const ImportOptions& options,
                       const char* input, bool tree, int disagreements);

// A function's IDs, class and revision as its config header gives them, and the config itself.
void take_config_identity(const std::string& config, SynthFunction& fn);

// The note that the dump lacks extended config space (lspci -x/-xxx, or not root), when it does.
void note_config_sizes(SysfsBuilder& builder, const std::map<Bdf, std::string>& configs);

}  // namespace p2pcheck
