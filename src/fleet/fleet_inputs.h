// What fleet.cc and fleet_inputs.cc share about an input before it is read.
#pragma once

#include <string>

namespace p2pcheck::fleet_detail {

bool is_dir(const std::string& path);
// A saved report: text starting with '{' and no raw control bytes (a binary file that begins with
// '{' is a dump to judge, not a broken report).
bool looks_like_json(const std::string& head);

}  // namespace p2pcheck::fleet_detail
