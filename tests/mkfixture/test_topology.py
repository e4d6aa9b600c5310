"""topology and address_allocation: bus numbers, parents, VFs, BAR/window addresses, and the
numbers handed out in BDF order (IOMMU groups, IRQs)."""

import unittest

import support
from mkfixture.topology import PciTopology


def topology(toml_text, iommu="none"):
    return PciTopology(support.description(toml_text), iommu)


class BusNumberingTest(unittest.TestCase):
    def setUp(self):
        self.pci = topology(support.SWITCH_MACHINE)

    def test_subordinate_is_the_highest_bus_below(self):
        subordinate = {f.name: f.subordinate for f in self.pci.functions if f.is_bridge}
        self.assertEqual(subordinate, {"0000:00:01.1": 4, "0000:01:00.0": 4,
                                       "0000:02:00.0": 3, "0000:02:01.0": 4})

    def test_parents_follow_secondary_buses(self):
        endpoint = self.pci.function("04:00.0")
        chain = []
        node = endpoint.parent
        while hasattr(node, "parent"):
            chain.append(node.name)
            node = node.parent
        self.assertEqual(chain, ["0000:02:01.0", "0000:01:00.0", "0000:00:01.1"])
        self.assertEqual(node.name, "pci0000:00")
        self.assertEqual(endpoint.path, "/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/"
                                        "0000:02:01.0/0000:04:00.0")

    def test_enumeration_order_is_bdf_order(self):
        self.assertEqual([f.name for f in self.pci.ordered],
                         ["0000:00:01.1", "0000:01:00.0", "0000:02:00.0", "0000:02:01.0",
                          "0000:03:00.0", "0000:04:00.0"])

    def test_irqs_from_24_in_bdf_order(self):
        self.assertEqual([f.irq for f in self.pci.ordered], [24, 25, 26, 27, 28, 29])

    def test_iommu_groups_only_with_an_iommu(self):
        self.assertEqual({f.iommu_group for f in self.pci.functions}, {None})
        with_iommu = topology(support.SWITCH_MACHINE, iommu="amd")
        self.assertEqual([f.iommu_group for f in with_iommu.ordered], [0, 1, 2, 3, 4, 5])

    def test_explicit_iommu_group_is_skipped_by_the_numbering(self):
        text = support.SWITCH_MACHINE.replace('bdf = "00:01.1"', 'bdf = "00:01.1"\niommu_group = 1')
        groups = [f.iommu_group for f in topology(text, iommu="intel").ordered]
        self.assertEqual(groups, [1, 0, 2, 3, 4, 5])


class AddressAllocationTest(unittest.TestCase):
    def setUp(self):
        self.pci = topology(support.SWITCH_MACHINE)

    def bar(self, bdf, index):
        return next(b for b in self.pci.function(bdf).bars if b.index == index)

    def test_prefetchable_bars_from_the_64bit_base(self):
        self.assertEqual(self.bar("03:00.0", 0).address, 1 << 40)
        self.assertEqual(self.bar("04:00.0", 0).address, (1 << 40) + (256 << 20))

    def test_32bit_bar_from_the_32bit_base(self):
        self.assertEqual(self.bar("03:00.0", 2).address, 0xE0000000)

    def test_windows_cover_their_children(self):
        windows = {f.name: f.windows for f in self.pci.functions if f.is_bridge}
        self.assertEqual(windows["0000:00:01.1"]["pref"], (1 << 40, 512 << 20))
        self.assertEqual(windows["0000:02:01.0"]["pref"], ((1 << 40) + (256 << 20), 256 << 20))
        self.assertEqual(windows["0000:02:00.0"]["mem"], (0xE0000000, 1 << 20))
        self.assertNotIn("mem", windows["0000:02:01.0"])
        self.assertNotIn("io", windows["0000:00:01.1"])


class VirtualFunctionTest(unittest.TestCase):
    def setUp(self):
        self.pci = topology(support.SRIOV_MACHINE)
        self.pf = self.pci.function("41:00.0")

    def test_vfs_at_offset_and_stride_after_the_pf(self):
        self.assertEqual([vf.name for vf in self.pf.vfs], ["0000:41:00.2", "0000:41:00.3"])
        vf = self.pf.vfs[1]
        self.assertEqual((vf.is_vf, vf.vf_index, vf.device, vf.irq), (True, 1, 0x101E, 0))
        self.assertEqual(vf.path, "/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.3")

    def test_iov_bar_holds_every_vf_after_the_pf_bars(self):
        iov_bar = self.pf.iov_bars[0]
        self.assertEqual(iov_bar.total, 8 << 20)
        self.assertEqual(iov_bar.address, (1 << 40) + (32 << 20))
        self.assertEqual(self.pci.function("40:01.1").windows["pref"], (1 << 40, 40 << 20))

    def test_multifunction_ignores_vfs(self):
        flags = {f.name: f.multifunction for f in self.pci.functions}
        self.assertEqual(flags, {"0000:40:01.1": False, "0000:41:00.0": True,
                                 "0000:41:00.1": True, "0000:41:00.2": False,
                                 "0000:41:00.3": False})

    def test_numa_node_from_the_host_bridge(self):
        self.assertEqual({f.numa_node for f in self.pci.functions}, {1})

    def test_vf_collision_is_an_error(self):
        with self.assertRaisesRegex(SystemExit, "^mkfixture: VF 0000:41:00.1 collides$"):
            topology(support.SRIOV_MACHINE.replace("offset = 2", "offset = 1"))


if __name__ == "__main__":
    unittest.main()
