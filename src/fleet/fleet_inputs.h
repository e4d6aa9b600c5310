// What fleet.cc and fleet_inputs.cc share about an input before it is read.
#pragma once

#include <string>

namespace p2pcheck::fleet_detail {

bool is_dir(const std::string& path);

}  // namespace p2pcheck::fleet_detail
