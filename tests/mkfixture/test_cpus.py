"""cpus: Linux's CPU list/mask formats, CPU numbering and NUMA nodes, /proc/cpuinfo."""

import unittest

import support
from mkfixture.cpus import CpuTopology, cpuinfo_text, cpulist, cpumask


class FormatTest(unittest.TestCase):
    def test_cpulist_ranges(self):
        self.assertEqual(cpulist([8, 7, 5, 0, 1, 2]), "0-2,5,7-8")
        self.assertEqual(cpulist([3]), "3")

    def test_cpumask_chunks_most_significant_first(self):
        self.assertEqual(cpumask(range(40), 40), "ff,ffffffff")
        self.assertEqual(cpumask([32], 64), "00000001,00000000")
        self.assertEqual(cpumask([0], 4), "1")


class TopologyTest(unittest.TestCase):
    TABLE = {"sockets": 2, "cores_per_socket": 2, "threads_per_core": 2}

    def test_thread_major_puts_smt_siblings_last(self):
        topology = CpuTopology(self.TABLE)
        self.assertEqual(topology.count, 8)
        self.assertEqual(topology.cpus[2], (1, 0, 0))
        self.assertEqual(topology.cpus[4], (0, 0, 1))
        self.assertEqual(topology.nodes, {0: [0, 1, 4, 5], 1: [2, 3, 6, 7]})

    def test_socket_major_keeps_siblings_together(self):
        topology = CpuTopology(dict(self.TABLE, enumeration="socket-major"))
        self.assertEqual(topology.cpus[1], (0, 0, 1))
        self.assertEqual(topology.nodes, {0: [0, 1, 2, 3], 1: [4, 5, 6, 7]})

    def test_numa_per_socket_splits_the_cores(self):
        topology = CpuTopology({"sockets": 1, "cores_per_socket": 4, "numa_per_socket": 2})
        self.assertEqual(topology.nodes, {0: [0, 1], 1: [2, 3]})

    def test_no_numa_node_means_every_cpu(self):
        topology = CpuTopology(self.TABLE)
        self.assertEqual(topology.node_cpus(-1), list(range(8)))
        self.assertEqual(topology.node_cpus(1), [2, 3, 6, 7])


class CpuinfoTest(unittest.TestCase):
    def test_blocks_and_apic_ids(self):
        table = {"sockets": 2, "cores_per_socket": 2, "threads_per_core": 2,
                 "vendor_id": "GenuineIntel", "family": 6, "model": 85,
                 "model_name": "Xeon", "flags": "fpu lahf_lm abm", "hypervisor": True}
        blocks = cpuinfo_text(table, CpuTopology(table)).split("\n\n")
        self.assertEqual(blocks[-1], "")              # every block ends with a blank line
        self.assertEqual(len(blocks) - 1, 8)
        # APIC id: socket << 2 | core << 1 | thread
        self.assertIn("apicid\t\t: 4\n", blocks[2])
        self.assertIn("apicid\t\t: 1\n", blocks[4])
        self.assertIn("flags\t\t: fpu hypervisor lahf_lm abm\n", blocks[0])
        self.assertTrue(blocks[0].startswith("processor\t: 0\nvendor_id\t: GenuineIntel\n"))


class SysfsListsTest(unittest.TestCase):
    def test_cpu_and_node_files(self):
        files = support.machine("""
[cpu]
vendor_id = "AuthenticAMD"
family = 25
model = 17
model_name = "EPYC"
flags = "fpu"
sockets = 2
cores_per_socket = 20
""").tree.files
        self.assertEqual(files["sys/devices/system/cpu/online"], b"0-39\n")
        self.assertEqual(files["sys/devices/system/node/possible"], b"0-1\n")
        self.assertEqual(files["sys/devices/system/node/node1/cpulist"], b"20-39\n")
        self.assertEqual(files["sys/devices/system/node/node1/cpumap"], b"ff,fff00000\n")
        # each CPU's topology, as hwloc's Linux backend reads it: CPU 21 is core 1 of package 1
        self.assertEqual(files["sys/devices/system/cpu/cpu21/topology/physical_package_id"], b"1\n")
        self.assertEqual(files["sys/devices/system/cpu/cpu21/topology/core_id"], b"1\n")
        self.assertEqual(files["sys/devices/system/cpu/cpu21/topology/core_cpus_list"], b"21\n")
        self.assertEqual(files["sys/devices/system/cpu/cpu21/topology/package_cpus_list"], b"20-39\n")
        self.assertEqual(files["sys/devices/system/cpu/cpu21/topology/package_cpus"], b"ff,fff00000\n")


if __name__ == "__main__":
    unittest.main()
