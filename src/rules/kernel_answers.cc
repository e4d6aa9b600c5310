// When the kernel's answer and p2pcheck's decision agree (kernel_answers.h).
#include "p2pcheck/rules/kernel_answers.h"

namespace p2pcheck {

bool agrees(const PairDecision& ours, const KernelVerdict& kernel) {
  int our_distance = ours.distance.value_or(-2);  // unknown never agrees: we had to decide
  if (our_distance != kernel.distance) return false;
  if (kernel.map_type == MapType::kUnknown || ours.map_type == MapType::kUnknown) return true;
  return ours.map_type == kernel.map_type;
}

}  // namespace p2pcheck
