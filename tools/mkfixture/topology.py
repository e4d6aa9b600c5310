"""The PCI hierarchy: functions and their VFs placed below host bridges and bridges, bus numbers,
addresses, and the numbers Linux hands out in enumeration order (IOMMU groups, IRQs)."""

from .address_allocation import allocate_addresses
from .description import expand_templates
from .pci_function import Bar, HostBridge, PciFunction
from .pci_names import bdf_name, canonical_bdf, parse_bdf

FIRST_IRQ = 24    # the first vector after the legacy ISA/IOAPIC pins


class PciTopology:
    def __init__(self, desc, iommu_mode):
        self.host_bridges = [HostBridge(spec) for spec in desc.get("host_bridge", [])]
        templates = desc.get("template", {})
        self.functions = [PciFunction(expand_templates(spec, templates))
                          for spec in desc.get("pci", [])]
        self.by_name = {}
        for function in self.functions:
            if function.name in self.by_name:
                raise SystemExit("mkfixture: duplicate function %s" % function.name)
            self.by_name[function.name] = function
        self.add_virtual_functions()
        self.connect_parents()
        self.mark_multifunction_devices()
        for function in self.functions:
            if function.is_bridge and function.subordinate is None:
                function.subordinate = self.highest_bus_below(function)
        allocate_addresses(self.host_bridges)
        self.ordered = self.enumeration_order()
        self.number_iommu_groups(iommu_mode)
        self.number_irqs()

    def function(self, bdf):
        """The function a description names by BDF ('05:00.0' or '0000:05:00.0')."""
        return self.by_name[canonical_bdf(bdf)]

    def host_bridge_of(self, bdf):
        """The host bridge whose root bus the function is on."""
        domain, bus, _, _ = parse_bdf(bdf)
        for host_bridge in self.host_bridges:
            if host_bridge.domain == domain and host_bridge.bus == bus:
                return host_bridge
        raise SystemExit("mkfixture: %s is not on a root bus" % bdf)

    def add_virtual_functions(self):
        """VF i of a PF is at routing ID PF + offset + i * stride (SR-IOV)."""
        for pf in list(self.functions):
            if not pf.sriov:
                continue
            sriov = pf.sriov
            for i in range(sriov.get("num", 0)):
                rid = (pf.bus << 8 | pf.devfn) + sriov.get("offset", 1) + i * sriov.get("stride", 1)
                bus, devfn = rid >> 8, rid & 0xFF
                vf_spec = {
                    "bdf": bdf_name(pf.dom, bus, devfn >> 3, devfn & 7),
                    "id": "%04x:%04x" % (pf.vendor, sriov["vf_device"]),
                    "subsys": "%04x:%04x" % (pf.subsys_vendor, pf.subsys_device),
                    "class": pf.class_code, "rev": pf.rev, "port": "endpoint",
                    "msix": sriov.get("vf_msix", 8), "msi": 0, "aer": False,
                    "ari": pf.spec.get("ari", True),
                }
                if sriov.get("vf_driver"):
                    vf_spec["driver"] = sriov["vf_driver"]
                if pf.link_cap:
                    vf_spec["link"] = "gen%dx%d" % pf.link_cap
                vf = PciFunction(vf_spec)
                vf.is_vf = True
                vf.pf = pf
                vf.vf_index = i
                vf.bars = [Bar(bar.index, bar.kind, bar.size) for bar in pf.iov_bars]
                pf.vfs.append(vf)
                if vf.name in self.by_name:
                    raise SystemExit("mkfixture: VF %s collides" % vf.name)
                self.by_name[vf.name] = vf
                self.functions.append(vf)

    def connect_parents(self):
        """A function's parent is the host bridge of its bus or the bridge whose secondary it is."""
        host_bridge_by_bus = {(hb.domain, hb.bus): hb for hb in self.host_bridges}
        bridge_by_secondary = {}
        for function in self.functions:
            if function.is_bridge:
                key = (function.dom, function.sec)
                if key in bridge_by_secondary:
                    raise SystemExit("mkfixture: two bridges with secondary bus %02x" % function.sec)
                bridge_by_secondary[key] = function
        for function in self.functions:
            if function.is_vf:
                function.parent = function.pf.parent
                continue
            key = (function.dom, function.bus)
            if key in host_bridge_by_bus:
                function.parent = host_bridge_by_bus[key]
            elif key in bridge_by_secondary:
                function.parent = bridge_by_secondary[key]
            else:
                raise SystemExit("mkfixture: no host bridge or bridge for bus of %s" % function.name)
            function.parent.children.append(function)
        for function in self.functions:
            if function.is_vf:
                function.parent.children.append(function)
        for node in self.host_bridges + self.functions:
            node.children.sort(key=lambda child: (child.bus, child.dev, child.fn))

    def mark_multifunction_devices(self):
        """Header Type bit 7: more than one function in the slot (VFs do not count)."""
        slots = {}
        for function in self.functions:
            if not function.is_vf:
                slots.setdefault((function.dom, function.bus, function.dev), []).append(function)
        for functions in slots.values():
            if len(functions) > 1:
                for function in functions:
                    function.multifunction = True

    def highest_bus_below(self, bridge):
        highest = bridge.sec
        for child in bridge.children:
            highest = max(highest, child.bus)
            if child.is_bridge:
                below = child.subordinate
                if below is None:
                    below = self.highest_bus_below(child)
                highest = max(highest, below)
        return highest

    def enumeration_order(self):
        """Every function reachable from a host bridge, in BDF order."""
        reached = []

        def walk(node):
            for child in node.children:
                reached.append(child)
                if isinstance(child, PciFunction) and child.is_bridge:
                    walk(child)
        for host_bridge in sorted(self.host_bridges, key=lambda hb: (hb.domain, hb.bus)):
            walk(host_bridge)
        reached.sort(key=lambda f: (f.dom, f.bus, f.dev, f.fn))
        return reached

    def number_iommu_groups(self, iommu_mode):
        """Explicit iommu_group numbers first, then the next free number in enumeration order."""
        used = set()
        for function in self.functions:
            group = function.spec.get("iommu_group")
            if isinstance(group, int) and not isinstance(group, bool):
                function.iommu_group = group
                used.add(group)
        if iommu_mode == "none":
            return
        next_group = 0
        for function in self.ordered:
            group = function.spec.get("iommu_group")
            if group is False or function.iommu_group is not None:
                continue
            if function.spec.get("iommu_group_of"):
                continue
            while next_group in used:
                next_group += 1
            function.iommu_group = next_group
            used.add(next_group)
        for function in self.ordered:
            other = function.spec.get("iommu_group_of")
            if other:
                function.iommu_group = self.function(other).iommu_group

    def number_irqs(self):
        irq = FIRST_IRQ
        for function in self.ordered:
            if function.is_vf and function.irq is None:
                function.irq = 0          # VFs have no INTx
            if function.irq is None:
                function.irq = irq
                irq += 1
