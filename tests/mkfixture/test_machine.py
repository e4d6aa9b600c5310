"""machine and the writers: the contents of a small machine's tree (PCI attributes, NVMe and
the block devices stacked on it, modules, /proc), and the errors bad descriptions give."""

import unittest

import support

STORAGE_MACHINE = """
[kernel]
release = "6.8.0-1-generic"
cmdline = "quiet iommu=pt"

[os]
release = 'NAME="Ubuntu"'

[cpu]
vendor_id = "AuthenticAMD"
family = 25
model = 17
model_name = "AMD EPYC 9654 96-Core Processor"
cores_per_socket = 4
flags = "fpu"

[modules.nvme]
size = 61440
used_by = []

[[host_bridge]]
bus = 0

[[pci]]
bdf = "00:01.2"
id = "1022:14ab"
port = "root_port"
sec = 1
link = "gen4x4"
driver = "pcieport"

[[pci]]
bdf = "01:00.0"
id = "144d:a80a"
class = 0x010802
link = "gen4x4"
driver = "nvme"
bars = ["0:m64:16K"]

[[nvme]]
ctrl = "nvme0"
pci = "01:00.0"
model = "SAMSUNG MZQL2"
serial = "S64FNE0R"
firmware = "GDC5302Q"
namespaces = [{ nsid = 1, size = "64G", parts = ["512M", "1G", "*"] }]

[[md]]
name = "md0"
level = "raid1"
slaves = ["nvme0n1p3"]
size = "62G"

[[dm]]
name = "dm-0"
dm_name = "vg-root"
slaves = ["md0"]
size = "60G"
"""

DEVICE = "sys/devices/pci0000:00/0000:00:01.2/0000:01:00.0"


class PciAttributesTest(unittest.TestCase):
    def setUp(self):
        self.machine = support.machine(STORAGE_MACHINE)
        self.files = self.machine.tree.files
        self.links = self.machine.tree.links

    def test_identity_files(self):
        self.assertEqual(self.files[DEVICE + "/vendor"], b"0x144d\n")
        self.assertEqual(self.files[DEVICE + "/class"], b"0x010802\n")
        self.assertEqual(self.files[DEVICE + "/max_link_speed"], b"16.0 GT/s PCIe\n")
        self.assertEqual(self.files[DEVICE + "/current_link_width"], b"4\n")
        self.assertEqual(self.files[DEVICE + "/local_cpulist"], b"0-3\n")
        self.assertEqual(self.files[DEVICE + "/dma_mask_bits"], b"64\n")
        self.assertIn(b"DRIVER=nvme\nPCI_CLASS=10802\nPCI_ID=144D:A80A\n",
                      self.files[DEVICE + "/uevent"])

    def test_resource_file(self):
        lines = self.files[DEVICE + "/resource"].decode().splitlines()
        self.assertEqual(len(lines), 13)
        self.assertEqual(lines[0], "0x00000000e0000000 0x00000000e0003fff 0x0000000000140204")
        self.assertEqual(lines[1], "0x0000000000000000 0x0000000000000000 0x0000000000000000")
        bridge = self.files["sys/devices/pci0000:00/0000:00:01.2/resource"].decode().splitlines()
        self.assertEqual(len(bridge), 17)
        self.assertEqual(bridge[14], "0x00000000e0000000 0x00000000e00fffff 0x0000000000000200")

    def test_bus_and_driver_links(self):
        self.assertEqual(self.links["sys/bus/pci/devices/0000:01:00.0"], "/" + DEVICE)
        self.assertEqual(self.links[DEVICE + "/driver"], "/sys/bus/pci/drivers/nvme")
        self.assertEqual(self.links["sys/bus/pci/drivers/nvme/module"], "/sys/module/nvme")
        self.assertEqual(self.links["sys/module/nvme/drivers/pci:nvme"],
                         "/sys/bus/pci/drivers/nvme")
        self.assertEqual(self.links["sys/class/pci_bus/0000:01"],
                         "/sys/devices/pci0000:00/0000:00:01.2/pci_bus/0000:01")
        self.assertNotIn(DEVICE + "/iommu_group", self.links)        # no IOMMU

    def test_proc_and_etc(self):
        self.assertEqual(self.files["proc/cmdline"], b"quiet iommu=pt\n")
        self.assertEqual(self.files["proc/sys/kernel/osrelease"], b"6.8.0-1-generic\n")
        self.assertEqual(self.files["etc/os-release"], b'NAME="Ubuntu"\n')
        self.assertEqual(self.files["proc/modules"],
                         b"nvme 61440 0 - Live 0xffffffffc0040000\n")
        self.assertEqual(self.files["sys/devices/system/node/node0/cpumap"], b"f\n")
        self.assertEqual(self.files["proc/cpuinfo"].count(b"processor\t:"), 4)

    def test_config_bytes_truncates_config(self):
        text = STORAGE_MACHINE.replace("[kernel]", "[machine]\nconfig_bytes = 64\n\n[kernel]")
        truncated = support.machine(text)
        self.assertEqual(len(truncated.tree.files[DEVICE + "/config"]), 64)
        self.assertEqual(len(self.files[DEVICE + "/config"]), 4096)


class BlockDevicesTest(unittest.TestCase):
    def setUp(self):
        machine = support.machine(STORAGE_MACHINE)
        self.files = machine.tree.files
        self.links = machine.tree.links
        self.disk = DEVICE + "/nvme/nvme0/nvme0n1"

    def test_namespace_is_a_disk_below_its_controller(self):
        self.assertEqual(self.links["sys/block/nvme0n1"], "/" + self.disk)
        self.assertEqual(self.files[self.disk + "/dev"], b"259:0\n")
        self.assertEqual(self.files[self.disk + "/size"], b"134217728\n")
        self.assertIn(b"DISKSEQ=1\n", self.files[self.disk + "/uevent"])
        self.assertEqual(self.files[DEVICE + "/nvme/nvme0/address"], b"0000:01:00.0\n")

    def test_partitions_are_mib_aligned_and_star_takes_the_rest(self):
        starts_sizes = [(self.files["%s/nvme0n1p%d/start" % (self.disk, n)],
                         self.files["%s/nvme0n1p%d/size" % (self.disk, n)]) for n in (1, 2, 3)]
        self.assertEqual(starts_sizes, [(b"2048\n", b"1048576\n"), (b"1050624\n", b"2097152\n"),
                                        (b"3147776\n", b"131067904\n")])
        self.assertEqual(self.files[self.disk + "/nvme0n1p3/dev"], b"259:3\n")

    def test_stacked_devices_link_slaves_and_holders(self):
        md = "sys/devices/virtual/block/md0"
        self.assertEqual(self.files[md + "/dev"], b"9:0\n")
        self.assertEqual(self.links[md + "/slaves/nvme0n1p3"], "/" + self.disk + "/nvme0n1p3")
        self.assertEqual(self.links[self.disk + "/nvme0n1p3/holders/md0"], "/" + md)
        self.assertEqual(self.files[md + "/md/dev-nvme0n1p3/slot"], b"0\n")
        self.assertEqual(self.files["sys/devices/virtual/block/dm-0/dev"], b"253:0\n")
        self.assertEqual(self.files["sys/devices/virtual/block/dm-0/dm/name"], b"vg-root\n")


class BadDescriptionTest(unittest.TestCase):
    HOST_BRIDGE = "[[host_bridge]]\nbus = 0\n"

    def assert_error(self, toml_text, message):
        with self.assertRaises(SystemExit) as caught:
            support.machine(self.HOST_BRIDGE + toml_text)
        self.assertEqual(str(caught.exception), message)

    def test_unknown_port_type(self):
        self.assert_error('[[pci]]\nbdf = "00:01.0"\nid = "1022:1480"\nport = "rootport"\n',
                          "mkfixture: 0000:00:01.0: unknown port type 'rootport'")

    def test_bridge_without_secondary_bus(self):
        self.assert_error('[[pci]]\nbdf = "00:01.1"\nid = "1022:1483"\nport = "root_port"\n',
                          "mkfixture: bridge 0000:00:01.1 needs sec = <secondary bus>")

    def test_duplicate_function(self):
        entry = '[[pci]]\nbdf = "%s"\nid = "1022:1480"\n'
        self.assert_error(entry % "00:01.0" + entry % "0000:00:01.0",
                          "mkfixture: duplicate function 0000:00:01.0")

    def test_bus_without_bridge(self):
        self.assert_error('[[pci]]\nbdf = "05:00.0"\nid = "1002:74a1"\n',
                          "mkfixture: no host bridge or bridge for bus of 0000:05:00.0")

    def test_two_bridges_with_one_secondary_bus(self):
        entry = '[[pci]]\nbdf = "%s"\nid = "1022:1483"\nport = "root_port"\nsec = 1\n'
        self.assert_error(entry % "00:01.1" + entry % "00:01.2",
                          "mkfixture: two bridges with secondary bus 01")

    def test_bad_bars(self):
        self.assert_error('[[pci]]\nbdf = "00:01.0"\nid = "1022:1480"\nbars = ["0:m16:4K"]\n',
                          "mkfixture: bad BAR type 'm16'")
        self.assert_error('[[pci]]\nbdf = "00:01.1"\nid = "1022:1483"\nport = "root_port"\n'
                          'sec = 1\nbars = ["3:m32:4K"]\n',
                          "mkfixture: 0000:00:01.1: BAR3 not possible")

    def test_unknown_slave(self):
        self.assert_error('[[dm]]\nname = "dm-0"\ndm_name = "x"\nsize = "1G"\nslaves = ["sda"]\n',
                          "mkfixture: dm-0: unknown slave sda")

    def test_iommu_unit_off_the_root_bus(self):
        self.assert_error('[[iommu]]\nname = "ivhd0"\npci = "03:00.2"\n',
                          "mkfixture: 03:00.2 is not on a root bus")

    def test_extra_file_over_a_generated_one(self):
        self.assert_error('[[file]]\npath = "proc/cmdline"\ntext = "x"\n',
                          "mkfixture: duplicate path proc/cmdline")


if __name__ == "__main__":
    unittest.main()
