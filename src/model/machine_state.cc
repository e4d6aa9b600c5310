#include "p2pcheck/model/machine_state.h"

#include "p2pcheck/model/pci.h"

namespace p2pcheck {

MachineState load_machine_state(Source& source, Load what) {
  MachineState state;
  state.source = source.describe();
  // One decoder per thread, kept: libpci parses pci.ids on its first name lookup, which was a third
  // of the time of a small machine's load when `fleet` loads a thousand of them. It holds no state
  // of a machine between loads (each function's device is made and freed in decode_config).
  thread_local PciDecoder decoder;
  state.topo =
      read_topology(source, decoder, what == Load::kForCheck ? FunctionDetail::kForDecisions : FunctionDetail::kAll);
  state.inv = read_inventory(source, state.topo);
  if (what == Load::kForCheck)  // the checks judge the GPUs' BARs (gpu_device.cc)
    for (const Bdf& gpu : state.inv.gpus)
      if (auto fn = state.topo.functions.find(gpu); fn != state.topo.functions.end())
        read_function_bars(source, fn->second);
  if (what != Load::kPciOnly)
    state.machine = read_machine(source);
  else
    state.machine.identity = read_identity(source);
  return state;
}

}  // namespace p2pcheck
