// A saved `check --json` as `p2pcheck fleet` reads one: summarised by type, its result judged
// again from its pairs and findings, its names made printable, then every fleet output.
#include "fuzz.h"
#include "p2pcheck/fleet/fleet.h"
#include "p2pcheck/fleet/fleet_csv.h"
#include "p2pcheck/fleet/fleet_html.h"
#include "p2pcheck/fleet/fleet_json.h"
#include "p2pcheck/fleet/fleet_junit.h"
#include "p2pcheck/fleet/fleet_text.h"
#include "p2pcheck/fleet/printable_summary.h"
#include "p2pcheck/fleet/saved_result.h"
#include "p2pcheck/source/json_read.h"
#include "p2pcheck/source/json_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace p2pcheck;
  fuzz::rejecting_bad_input([&] {
    auto doc = parse_outside_json(std::string(fuzz::as_text(data, size)), "saved.json");
    if (!doc) return;
    HostSummary host = summarize_check_json(*doc, "saved.json");
    recompute_saved_result(host);
    make_printable(host);
    // Two hosts, so the groups by cause join a second one.
    HostSummary twin = host;
    twin.host += "-2";
    FleetReport report = build_fleet_report({host, twin}, {{"bad.bin", "not a recognised dump"}}, 3);
    (void)fleet_text(report, TextStyle{true, true});
    (void)fleet_csv(report);
    (void)json_text(fleet_json(report));
    (void)fleet_html(report);
    (void)fleet_junit(report);
  });
  return 0;
}
