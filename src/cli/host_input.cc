#include "host_input.h"

#include <ctime>

#include "p2pcheck/fleet/fleet.h"
#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/source/error.h"

namespace p2pcheck::cli {

JudgedHost judged_host(const CheckReport& report, const Input& input) {
  JudgedHost h;
  const nlohmann::ordered_json* manifest = input.replay ? &input.replay->manifest : nullptr;
  h.summary = summarize_report(report, manifest, report.source);
  if (input.source && input.source->is_live()) {
    h.captured_at = static_cast<double>(std::time(nullptr));
  } else if (manifest && manifest->contains("captured_at") && (*manifest)["captured_at"].is_string()) {
    if (auto t = parse_iso_time((*manifest)["captured_at"].get<std::string>())) h.captured_at = static_cast<double>(*t);
  }
  return h;
}

JudgedHost selected_host(const GlobalOptions& o) {
  Input input = open_input(o);
  auto report = checked(input, o);
  return judged_host(*report, input);
}

HostSummary named_host(const std::string& path, const std::string& role, const GlobalOptions& o) {
  FleetOptions options;
  options.check = check_options(o);
  try {
    return read_host(path, options);
  } catch (const Error& e) {
    throw Error("", "cannot read the " + role + " " + e.what());
  } catch (const UsageError& e) {
    throw Error("", "cannot read the " + role + " " + path + ": " + e.what());
  }
}

}  // namespace p2pcheck::cli
