// JSON text as p2pcheck writes it everywhere: sysfs strings are not guaranteed UTF-8 (a vendor's
// model field), so bad bytes become U+FFFD instead of nlohmann's exception (an abort in the CLI).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace p2pcheck {

// Byte for byte what j.dump(indent, ' ', false, error_handler_t::replace) writes: JsonWriter's text
// of the value (json_writer.h says why it is not that call).
std::string json_text(const nlohmann::json& j, int indent = 2);
std::string json_text(const nlohmann::ordered_json& j, int indent = 2);

}  // namespace p2pcheck
