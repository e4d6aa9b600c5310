// What the running kernel says of a pair through the p2pprobe module, beside p2pcheck's decision:
// the module's own description, its answers for the pairs asked, and when the two agree. Data and
// one comparison only: live/ asks the module (p2pprobe_client.h), checks/ reports the answers.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "p2pcheck/model/pci.h"
#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {

struct ModuleInfo {
  unsigned api_version = 0;
  bool p2pdma = false;  // the module's kernel has CONFIG_PCI_P2PDMA
  bool provider_driver = false;
  std::string module_version, kernel_release;
};

// What the loaded module answered, asked once per pair.
struct ModuleAnswers {
  bool asked = false;         // a module was there to ask
  std::string not_asked_why;  // when not: "not loaded", "needs root"; empty means p2pprobe is not loaded
  std::string device;         // the device node asked ("/dev/p2pprobe")
  ModuleInfo info;
  std::map<std::pair<Bdf, Bdf>, KernelVerdict> verdicts;  // (GPU, NVMe)
  std::string error;  // why the module stopped answering; empty when it answered every pair
};

// "Agree" as the kmod issue defines it: same distance, same supported-or-not, and the same map
// type where the module could observe it.
bool agrees(const PairDecision& ours, const KernelVerdict& kernel);

}  // namespace p2pcheck
