"""config_space, pcie_capability, extended_capabilities: the bytes of `config` files."""

import struct
import unittest

import support
from mkfixture.extended_capabilities import acs_control
from mkfixture.kernel import KernelSettings
from mkfixture.pci_function import PciFunction

FEATURES_MACHINE = """
[[host_bridge]]
bus = 0

[[pci]]
bdf = "00:02.0"
id = "1002:74a1"
bars = ["0:m64p:256M", "5:m32:512K"]
rebar = ["0:256M-16G:256M"]
dsn = "00-11-22-33-44-55-66-77"
msix = { count = 4, bar = 5, table = 0x1000, pba = 0x2000 }

[[pci]]
bdf = "00:03.0"
id = "8086:1234"
port = "pci"
bars = ["0:io:256"]
"""


class ConfigBytes:
    def __init__(self, data):
        self.data = data

    def u8(self, offset):
        return self.data[offset]

    def u16(self, offset):
        return struct.unpack_from("<H", self.data, offset)[0]

    def u32(self, offset):
        return struct.unpack_from("<I", self.data, offset)[0]


def config_files(toml_text):
    machine = support.machine(toml_text)
    return {f.name: ConfigBytes(machine.tree.files[f.path.lstrip("/") + "/config"])
            for f in machine.pci.functions}


class AcsControlTest(unittest.TestCase):
    def control(self, kernel_table, **spec):
        function = PciFunction(dict({"bdf": "00:01.1", "id": "1022:14ab", "port": "root_port",
                                     "sec": 1}, **spec))
        return acs_control(function, KernelSettings({"kernel": kernel_table}))

    def test_iommu_enables_sv_rr_cr_uf_where_capable(self):
        self.assertEqual(self.control({"iommu": "amd"}, acs=0x5F), 0x1D)
        self.assertEqual(self.control({"iommu": "intel"}, acs=0x11), 0x11)

    def test_no_iommu_leaves_acs_off(self):
        self.assertEqual(self.control({}, acs=0x5F), 0)

    def test_disable_acs_redir_clears_the_redirect_bits(self):
        kernel = {"iommu": "amd", "disable_acs_redir": ["0000:00:01.1"]}
        self.assertEqual(self.control(kernel, acs=0x5F), 0x11)

    def test_explicit_control_and_no_capability(self):
        self.assertEqual(self.control({"iommu": "amd"}, acs=0x5F, acs_ctrl=0x7), 0x7)
        self.assertIsNone(self.control({"iommu": "amd"}))


class BridgeConfigTest(unittest.TestCase):
    def setUp(self):
        self.config = config_files(support.SWITCH_MACHINE)
        self.root_port = self.config["0000:00:01.1"]

    def test_type1_header_bus_numbers_and_command(self):
        rp = self.root_port
        self.assertEqual(len(rp.data), 4096)
        self.assertEqual((rp.u16(0), rp.u16(2)), (0x1022, 0x14AB))
        self.assertEqual(rp.u8(0xE), 0x01)
        self.assertEqual((rp.u8(0x18), rp.u8(0x19), rp.u8(0x1A)), (0, 1, 4))
        # memory decode, bus master, parity/SERR, INTx disabled (pcieport uses MSI)
        self.assertEqual(rp.u16(4), 0x0546)

    def test_windows(self):
        rp = self.root_port
        self.assertEqual((rp.u16(0x20), rp.u16(0x22)), (0xE000, 0xE000))
        self.assertEqual((rp.u16(0x24), rp.u16(0x26)), (0x0001, 0x1FF1))
        self.assertEqual((rp.u32(0x28), rp.u32(0x2C)), (0x100, 0x100))
        self.assertEqual((rp.u8(0x1C), rp.u8(0x1D)), (0xF1, 0x01))   # no I/O window

    def test_capability_chain(self):
        rp = self.root_port
        self.assertEqual(rp.u8(0x34), 0x40)
        chain = []
        offset = rp.u8(0x34)
        while offset:
            chain.append((offset, rp.u8(offset)))
            offset = rp.u8(offset + 1)
        self.assertEqual(chain, [(0x40, 0x01), (0x50, 0x05), (0x70, 0x10), (0xC0, 0x0D)])

    def test_link_trained_to_the_slower_end(self):
        rp = self.root_port
        self.assertEqual(rp.u16(0x72), 0x42)                 # v2, Root Port
        self.assertEqual(rp.u32(0x7C) & 0x3FF, 0x104)        # capable: 16 GT/s x16
        self.assertEqual(rp.u16(0x80), 0x48)                 # common clock, RCB 128
        self.assertEqual(rp.u16(0x82), 0x3104)               # 16 GT/s x16, slot clock, DL active
        upstream = self.config["0000:01:00.0"]
        self.assertEqual(upstream.u16(0x82), 0x1104)         # same link, seen from below
        downstream = self.config["0000:02:00.0"]
        self.assertEqual(downstream.u16(0x82), 0x3105)       # 32 GT/s x16 to the GPU

    def test_aer_then_acs_extended_capabilities(self):
        rp = self.root_port
        self.assertEqual(rp.u32(0x100), 0x15020001)          # AER v2, next 0x150
        self.assertEqual(rp.u32(0x150), 0x0001000D)          # ACS v1, last
        self.assertEqual((rp.u16(0x154), rp.u16(0x156)), (0x5F, 0x1D))


class EndpointConfigTest(unittest.TestCase):
    def test_bars_subsystem_and_msix(self):
        gpu = config_files(support.SWITCH_MACHINE)["0000:03:00.0"]
        self.assertEqual((gpu.u32(0x10), gpu.u32(0x14)), (0x0000000C, 0x100))   # 64-bit pref
        self.assertEqual(gpu.u32(0x18), 0xE0000000)
        self.assertEqual((gpu.u16(0x2C), gpu.u16(0x2E)), (0x1002, 0x74A1))
        self.assertEqual(gpu.u16(4), 0x0406)
        # MSI-X in the non-prefetchable BAR2: 32 vectors, enabled, table 0x2000, PBA 0x3000
        self.assertEqual((gpu.u8(0xB0), gpu.u16(0xB2)), (0x11, 0x801F))
        self.assertEqual((gpu.u32(0xB4), gpu.u32(0xB8)), (0x2002, 0x3002))

    def test_resizable_bar_and_serial_number(self):
        gpu = config_files(FEATURES_MACHINE)["0000:00:02.0"]
        self.assertEqual(gpu.u32(0x100) & 0xFFFF, 0x0001)     # AER first
        self.assertEqual(gpu.u32(0x150), 0x16010015)          # ReBAR v1, next 0x160
        self.assertEqual(gpu.u32(0x154), 0x7F000)             # 256M..16G
        self.assertEqual(gpu.u32(0x158), 0x820)               # BAR0, 1 BAR, now 256M
        self.assertEqual(gpu.u32(0x160), 0x00010003)          # DSN, last
        self.assertEqual((gpu.u32(0x164), gpu.u32(0x168)), (0x44556677, 0x00112233))
        self.assertEqual((gpu.u32(0xB4), gpu.u32(0xB8)), (0x1005, 0x2005))

    def test_conventional_function_has_256_bytes(self):
        legacy = config_files(FEATURES_MACHINE)["0000:00:03.0"]
        self.assertEqual(len(legacy.data), 256)
        self.assertEqual(legacy.u32(0x10), 0x1001)            # I/O BAR at the I/O base 0x1000
        self.assertEqual(legacy.u8(0x34), 0x40)
        self.assertEqual(legacy.u8(0x51), 0)                  # PM, MSI; no PCI Express

    def test_rebar_current_must_match_the_bar(self):
        bad = FEATURES_MACHINE.replace('"0:256M-16G:256M"', '"0:256M-16G:16G"')
        with self.assertRaisesRegex(SystemExit,
                                    "^mkfixture: 0000:00:02.0: rebar current 16G != BAR0 size$"):
            support.machine(bad)


class SriovConfigTest(unittest.TestCase):
    def test_pf_capability_and_vf_ids(self):
        config = config_files(support.SRIOV_MACHINE)
        pf = config["0000:41:00.0"]
        self.assertEqual(pf.u32(0x150), 0x1601000E)          # ARI, next 0x160
        self.assertEqual(pf.u32(0x160) & 0xFFFF, 0x0010)      # SR-IOV
        self.assertEqual(pf.u16(0x168), 0x19)                 # VF Enable, VF MSE, ARI hierarchy
        self.assertEqual([pf.u16(0x160 + o) for o in (0x0E, 0x10, 0x14, 0x16, 0x1A)],
                         [8, 2, 2, 1, 0x101E])
        self.assertEqual((pf.u32(0x184), pf.u32(0x188)), (0x0200000C, 0x100))
        vf = config["0000:41:00.2"]
        self.assertEqual((vf.u16(0), vf.u16(2)), (0xFFFF, 0xFFFF))


if __name__ == "__main__":
    unittest.main()
