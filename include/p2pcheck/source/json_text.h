// JSON text as p2pcheck writes it everywhere: sysfs strings are not guaranteed UTF-8 (a vendor's
// model field), so bad bytes become U+FFFD instead of nlohmann's exception (an abort in the CLI).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace p2pcheck {

template <typename Json>
std::string json_text(const Json& j, int indent = 2) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace p2pcheck
