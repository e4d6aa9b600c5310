// The udev import at fleet scale (issue 33, item 2): udevadm databases of 20k to 100k PCI records,
// every function on a root bus of its own (the shape that made the topology read cost host bridges
// x functions: 12.6 s at 20k before). Imported and loaded as `--dump FILE check` does, in memory.
// Reports only; the ctest `bench_udev` runs it briefly and asserts nothing about time
// (tests/e2e/reliability_test.sh bounds the 100k case through the command).
#include <benchmark/benchmark.h>
#include <cstdio>
#include <string>

#include "p2pcheck/import/dump.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/model/machine_state.h"

namespace p2pcheck {
namespace {

std::string udev_database(std::size_t records) {
  std::string db;
  char buf[256];
  for (std::size_t i = 0; i < records; ++i) {
    unsigned domain = static_cast<unsigned>(i / 256), bus = static_cast<unsigned>(i % 256);
    std::snprintf(buf, sizeof buf,
                  "P: /devices/pci%04x:%02x/%04x:%02x:00.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60000\n"
                  "E: PCI_ID=8086:6F00\nE: PCI_SLOT_NAME=%04x:%02x:00.0\n\n",
                  domain, bus, domain, bus, domain, bus);
    db += buf;
  }
  return db;
}

void BM_UdevRootBusPerFunction(benchmark::State& st) {
  const std::string db = udev_database(static_cast<std::size_t>(st.range(0)));
  for (auto _ : st) {
    auto source = open_dump_bytes(db, "udev.txt", ImportOptions{});
    MachineState state = load_machine_state(*source, Load::kForCheck);
    benchmark::DoNotOptimize(state.topo.host_bridges.size());
  }
  st.counters["records/s"] =
      benchmark::Counter(static_cast<double>(st.range(0)), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_UdevRootBusPerFunction)->Arg(20000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace p2pcheck

BENCHMARK_MAIN();
