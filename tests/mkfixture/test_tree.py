"""tree: the in-memory tree, its errors, and what flush() puts on disk."""

import os
import stat
import tempfile
import unittest

import support
from mkfixture.tree import Tree


class TreeTest(unittest.TestCase):
    def test_duplicate_path_is_an_error(self):
        tree = Tree()
        tree.write("/proc/cmdline", "quiet\n")
        with self.assertRaisesRegex(SystemExit, "^mkfixture: duplicate path proc/cmdline$"):
            tree.write("proc/cmdline", "x")
        with self.assertRaisesRegex(SystemExit, "^mkfixture: duplicate path proc/cmdline$"):
            tree.link("proc/cmdline", "/sys")

    def test_file_used_as_a_directory_is_an_error(self):
        tree = Tree()
        tree.write("proc/cmdline", "quiet\n")
        tree.write("proc/cmdline/x", "")
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaisesRegex(SystemExit,
                                        "^mkfixture: proc/cmdline is both a file and a directory$"):
                tree.flush(os.path.join(tmp, "root"))

    def test_flush_writes_files_and_relative_links(self):
        tree = Tree()
        tree.write("sys/devices/pci0000:00/0000:00:01.0/vendor", "0x1022\n")
        tree.write("sys/devices/pci0000:00/0000:00:01.0/config", b"\x22\x10")
        tree.link("sys/bus/pci/devices/0000:00:01.0", "/sys/devices/pci0000:00/0000:00:01.0")
        tree.literal_link("etc/localtime", "/usr/share/zoneinfo/UTC")
        with tempfile.TemporaryDirectory() as tmp:
            root = os.path.join(tmp, "root")
            os.makedirs(os.path.join(root, "stale"))         # replaced, not merged
            tree.flush(root)
            device = os.path.join(root, "sys/devices/pci0000:00/0000:00:01.0")
            with open(os.path.join(device, "vendor")) as f:
                self.assertEqual(f.read(), "0x1022\n")
            with open(os.path.join(device, "config"), "rb") as f:
                self.assertEqual(f.read(), b"\x22\x10")
            link = os.path.join(root, "sys/bus/pci/devices/0000:00:01.0")
            self.assertEqual(os.readlink(link), "../../../devices/pci0000:00/0000:00:01.0")
            self.assertTrue(os.path.samefile(link, device))
            self.assertEqual(os.readlink(os.path.join(root, "etc/localtime")),
                             "/usr/share/zoneinfo/UTC")
            self.assertFalse(os.path.exists(os.path.join(root, "stale")))
            self.assertEqual(stat.S_IMODE(os.stat(os.path.join(device, "vendor")).st_mode), 0o644)
            self.assertEqual(stat.S_IMODE(os.stat(device).st_mode), 0o755)

    def test_machine_tree_has_no_empty_directories_and_only_relative_links(self):
        machine = support.machine(support.SWITCH_MACHINE)
        with tempfile.TemporaryDirectory() as tmp:
            root = os.path.join(tmp, "root")
            machine.tree.flush(root)
            for dirpath, dirnames, filenames in os.walk(root):
                self.assertTrue(dirnames or filenames, dirpath)
                for name in dirnames + filenames:
                    full = os.path.join(dirpath, name)
                    if os.path.islink(full):
                        self.assertFalse(os.readlink(full).startswith("/"), full)
                        self.assertTrue(os.path.exists(full), full)    # not dangling


if __name__ == "__main__":
    unittest.main()
