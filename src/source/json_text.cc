// json_text(): a value's whole text, through the one writer of every JSON output (json_writer.h).
#include "p2pcheck/source/json_text.h"

#include "p2pcheck/source/json_writer.h"

namespace p2pcheck {
namespace {

template <typename Json>
std::string text_of(const Json& j, int indent) {
  std::string out;
  JsonWriter(out, indent).value(j);
  return out;
}

}  // namespace

std::string json_text(const nlohmann::json& j, int indent) { return text_of(j, indent); }
std::string json_text(const nlohmann::ordered_json& j, int indent) { return text_of(j, indent); }

}  // namespace p2pcheck
