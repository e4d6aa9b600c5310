"""pci_names, sizes, kernel versions and reading machine.toml (base inheritance, templates)."""

import os
import tempfile
import unittest

import support
from mkfixture.description import deep_merge, expand_templates, load_description
from mkfixture.kernel import kernel_version
from mkfixture.pci_names import bdf_name, canonical_bdf, parse_bdf, parse_id, parse_link
from mkfixture.sizes import align_up, size_of


class PciNamesTest(unittest.TestCase):
    def test_bdf_with_and_without_domain(self):
        self.assertEqual(parse_bdf("0000:05:00.0"), (0, 5, 0, 0))
        self.assertEqual(parse_bdf("c1:1f.7"), (0, 0xC1, 0x1F, 7))
        self.assertEqual(parse_bdf("0001:00:02.1"), (1, 0, 2, 1))

    def test_sysfs_name(self):
        self.assertEqual(bdf_name(0, 0xC1, 0x1F, 7), "0000:c1:1f.7")
        self.assertEqual(canonical_bdf("05:00.0"), "0000:05:00.0")

    def test_bad_bdf_raises(self):
        with self.assertRaises(ValueError):
            parse_bdf("00:1g.0")

    def test_id_and_link(self):
        self.assertEqual(parse_id("1002:74a1"), (0x1002, 0x74A1))
        self.assertEqual(parse_link("gen5x16"), (5, 16))
        self.assertEqual(parse_link("Gen3x1"), (3, 1))


class SizesTest(unittest.TestCase):
    def test_suffixes_are_powers_of_1024(self):
        self.assertEqual(size_of("256G"), 256 << 30)
        self.assertEqual(size_of("512K"), 512 << 10)
        self.assertEqual(size_of("1.5M"), 3 << 19)

    def test_sectors_ints_and_hex(self):
        self.assertEqual(size_of("100s"), 51200)
        self.assertEqual(size_of(4096), 4096)
        self.assertEqual(size_of("0x1000"), 4096)

    def test_align_up(self):
        self.assertEqual(align_up(0, 0x1000), 0)
        self.assertEqual(align_up(1, 0x1000), 0x1000)
        self.assertEqual(align_up(0x1000, 0x1000), 0x1000)


class KernelVersionTest(unittest.TestCase):
    def test_release_strings(self):
        self.assertEqual(kernel_version("6.8.0-142-generic"), (6, 8, 0))
        self.assertEqual(kernel_version("5.14.0-427.el9.x86_64"), (5, 14, 0))
        self.assertEqual(kernel_version("6.10"), (6, 10, 0))
        self.assertEqual(kernel_version("6.9-rc3"), (6, 9, 0))


class DescriptionTest(unittest.TestCase):
    def test_tables_merge_arrays_replace(self):
        base = {"kernel": {"release": "6.8", "config": ["A=y"]}, "pci": [1, 2]}
        merged = deep_merge(base, {"kernel": {"config": ["B=y"]}, "pci": [3]})
        self.assertEqual(merged, {"kernel": {"release": "6.8", "config": ["B=y"]}, "pci": [3]})
        self.assertEqual(base["kernel"]["config"], ["A=y"])    # the base is left alone

    def test_base_is_inherited_relative_to_the_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "parent"))
            os.makedirs(os.path.join(tmp, "child"))
            with open(os.path.join(tmp, "parent", "machine.toml"), "w") as f:
                f.write('[machine]\ndescription = "parent"\n[kernel]\nrelease = "6.8.0"\n'
                        'cmdline = "quiet"\n')
            child = os.path.join(tmp, "child", "machine.toml")
            with open(child, "w") as f:
                f.write('[machine]\nbase = "../parent/machine.toml"\nconfig_bytes = 64\n'
                        '[kernel]\ncmdline = "iommu=pt"\n')
            desc = load_description(child)
        self.assertEqual(desc["kernel"], {"release": "6.8.0", "cmdline": "iommu=pt"})
        self.assertEqual(desc["machine"]["config_bytes"], 64)
        self.assertEqual(desc["machine"]["base"], "../parent/machine.toml")

    def test_templates_nest_and_the_entry_wins(self):
        templates = {"gpu": {"id": "1002:74a1", "link": "gen5x16", "kfd": {"simd_count": 1}},
                     "slot": {"use": "gpu", "link": "gen4x16", "kfd": {"simd_count": 2}}}
        spec = expand_templates({"bdf": "05:00.0", "use": ["slot"], "kfd": {"gpu_id": 7}},
                                templates)
        self.assertEqual(spec, {"id": "1002:74a1", "link": "gen4x16", "bdf": "05:00.0",
                                "kfd": {"simd_count": 2, "gpu_id": 7}})

    def test_template_expanded_for_every_pci_entry(self):
        machine = support.machine(support.SWITCH_MACHINE)
        downstream = machine.pci.function("02:01.0")
        self.assertEqual((downstream.port, downstream.sec, downstream.spec["acs"]),
                         ("downstream", 4, 0x5F))

    def test_template_errors(self):
        with self.assertRaisesRegex(SystemExit, "^mkfixture: unknown template nope$"):
            expand_templates({"use": "nope"}, {})
        with self.assertRaisesRegex(SystemExit, "^mkfixture: template loop at a$"):
            expand_templates({"use": "a"}, {"a": {"use": "b"}, "b": {"use": "a"}})


if __name__ == "__main__":
    unittest.main()
