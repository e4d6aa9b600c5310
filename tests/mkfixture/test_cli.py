"""The command line, through tools/mkfixture.py as every script runs it: output, exit codes and
messages."""

import os
import subprocess
import sys
import tempfile
import unittest

import support

SMALL_MACHINE = """
[kernel]
cmdline = "quiet"

[[host_bridge]]
bus = 0

[[pci]]
bdf = "00:01.0"
id = "1022:1480"
"""


def run(*args, cwd=None):
    return subprocess.run([sys.executable, support.LAUNCHER, *args], cwd=cwd,
                          capture_output=True, text=True)


class CommandLineTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = self.tmp.name

    def write_machine(self, name, text):
        os.makedirs(os.path.join(self.dir, name))
        path = os.path.join(self.dir, name, "machine.toml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_out_gets_one_root_per_machine(self):
        toml = self.write_machine("small", SMALL_MACHINE)
        result = run("--out", "trees", toml, cwd=self.dir)
        self.assertEqual((result.returncode, result.stderr), (0, ""))
        self.assertEqual(result.stdout, "mkfixture: wrote trees/small/root\n")
        with open(os.path.join(self.dir, "trees/small/root/proc/cmdline")) as f:
            self.assertEqual(f.read(), "quiet\n")

    def test_default_output_is_next_to_the_toml_and_nonroot_truncates(self):
        toml = self.write_machine("small", SMALL_MACHINE)
        result = run("--nonroot", toml, cwd=self.dir)
        self.assertEqual(result.stdout, "mkfixture: wrote small/root\n")
        config = os.path.join(self.dir, "small/root/sys/devices/pci0000:00/0000:00:01.0/config")
        self.assertEqual(os.path.getsize(config), 64)

    def test_all_takes_every_machine_of_the_fixtures_directory(self):
        self.write_machine("b", SMALL_MACHINE)
        self.write_machine("a", SMALL_MACHINE)
        os.makedirs(os.path.join(self.dir, "not-a-machine"))
        result = run("--all", "--fixtures", self.dir, "--out", "trees", cwd=self.dir)
        self.assertEqual(result.stdout, "mkfixture: wrote trees/a/root\n"
                                        "mkfixture: wrote trees/b/root\n")

    def test_error_message_and_exit_code(self):
        toml = self.write_machine("bad", SMALL_MACHINE + 'port = "rootport"\n')
        result = run("--out", "trees", toml, cwd=self.dir)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout, "")
        self.assertEqual(result.stderr, "mkfixture: 0000:00:01.0: unknown port type 'rootport'\n")

    def test_missing_required_key_is_a_traceback(self):
        toml = self.write_machine("bad", SMALL_MACHINE.replace('id = "1022:1480"\n', ""))
        result = run("--out", "trees", toml, cwd=self.dir)
        self.assertEqual(result.returncode, 1)
        self.assertTrue(result.stderr.endswith("KeyError: 'id'\n"), result.stderr)

    def test_usage_errors(self):
        result = run()
        self.assertEqual(result.returncode, 2)
        self.assertTrue(result.stderr.endswith(
            "mkfixture.py: error: give a machine.toml or --all\n"), result.stderr)
        help_text = run("--help")
        self.assertEqual(help_text.returncode, 0)
        self.assertIn("Generate a fake Linux root from a machine.toml", help_text.stdout)

    def test_package_runs_as_a_module(self):
        toml = self.write_machine("small", SMALL_MACHINE)
        result = subprocess.run([sys.executable, "-m", "mkfixture", "--out", "trees", toml],
                                cwd=self.dir, capture_output=True, text=True,
                                env=dict(os.environ, PYTHONPATH=support.TOOLS))
        self.assertEqual(result.stdout, "mkfixture: wrote trees/small/root\n")


if __name__ == "__main__":
    unittest.main()
