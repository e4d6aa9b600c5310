#include "p2pcheck/model/machine_state.h"

#include "p2pcheck/model/pci.h"

namespace p2pcheck {

MachineState load_machine_state(Source& source, Load what) {
  MachineState state;
  state.source = source.describe();
  PciDecoder decoder;
  state.topo = read_topology(source, decoder);
  state.inv = read_inventory(source, state.topo);
  if (what == Load::kEverything)
    state.machine = read_machine(source);
  else
    state.machine.identity = read_identity(source);
  return state;
}

}  // namespace p2pcheck
