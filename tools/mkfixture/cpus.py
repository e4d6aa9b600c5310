"""The [cpu] table: logical CPU numbering, NUMA nodes, /proc/cpuinfo and /sys/devices/system."""


def cpulist(cpus):
    """[0, 1, 2, 5] -> '0-2,5' (Linux %*pbl)."""
    cpus = sorted(cpus)
    ranges = []
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        ranges.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(ranges)


def cpumask(cpus, nbits):
    """Linux %*pb: 32-bit hex chunks, most significant first, comma separated."""
    mask = 0
    for cpu in cpus:
        mask |= 1 << cpu
    chunks = []
    nchunks = (nbits + 31) // 32
    for k in range(nchunks - 1, -1, -1):
        value = (mask >> (32 * k)) & 0xFFFFFFFF
        if k == nchunks - 1:
            bits = nbits - 32 * k
            width = (bits + 3) // 4
        else:
            width = 8
        chunks.append("%0*x" % (width, value))
    return ",".join(chunks)


class CpuTopology:
    """Logical CPU i -> (socket, core, thread), and which CPUs each NUMA node holds."""

    def __init__(self, cpu_table):
        self.sockets = cpu_table.get("sockets", 1)
        self.cores_per_socket = cpu_table.get("cores_per_socket", 1)
        self.threads_per_core = cpu_table.get("threads_per_core", 1)
        self.numa_per_socket = cpu_table.get("numa_per_socket", 1)
        self.count = self.sockets * self.cores_per_socket * self.threads_per_core
        self.cpus = []
        if cpu_table.get("enumeration", "thread-major") == "socket-major":
            for socket in range(self.sockets):
                for core in range(self.cores_per_socket):
                    for thread in range(self.threads_per_core):
                        self.cpus.append((socket, core, thread))
        else:
            for thread in range(self.threads_per_core):
                for socket in range(self.sockets):
                    for core in range(self.cores_per_socket):
                        self.cpus.append((socket, core, thread))
        self.nodes = {}
        for i, (socket, core, _) in enumerate(self.cpus):
            node = socket * self.numa_per_socket + core * self.numa_per_socket // self.cores_per_socket
            self.nodes.setdefault(node, []).append(i)

    def node_cpus(self, node):
        """A device without a NUMA node (-1) is local to every CPU."""
        if node is None or node < 0:
            return list(range(self.count))
        return self.nodes.get(node, [])


def cpuinfo_text(cpu_table, topology):
    """/proc/cpuinfo: one full block per logical CPU."""
    flags = cpu_table["flags"].split()
    if cpu_table.get("hypervisor") and "hypervisor" not in flags:
        # where Linux's flag order puts it
        pos = flags.index("lahf_lm") if "lahf_lm" in flags else len(flags)
        flags.insert(pos, "hypervisor")
    thread_bits = (topology.threads_per_core - 1).bit_length()
    core_bits = (topology.cores_per_socket - 1).bit_length()
    socket_shift = cpu_table.get("apicid_bits", thread_bits + core_bits)
    blocks = []
    for i, (socket, core, thread) in enumerate(topology.cpus):
        apic = (socket << socket_shift) | (core << thread_bits) | thread
        b = []
        b.append("processor\t: %d\n" % i)
        b.append("vendor_id\t: %s\n" % cpu_table["vendor_id"])
        b.append("cpu family\t: %d\n" % cpu_table["family"])
        b.append("model\t\t: %d\n" % cpu_table["model"])
        b.append("model name\t: %s\n" % cpu_table["model_name"])
        b.append("stepping\t: %d\n" % cpu_table.get("stepping", 0))
        if cpu_table.get("microcode"):
            b.append("microcode\t: 0x%x\n" % cpu_table["microcode"])
        b.append("cpu MHz\t\t: %s\n" % cpu_table.get("mhz", "2000.000"))
        if cpu_table.get("cache_size"):
            b.append("cache size\t: %s\n" % cpu_table["cache_size"])
        b.append("physical id\t: %d\n" % socket)
        b.append("siblings\t: %d\n" % (topology.cores_per_socket * topology.threads_per_core))
        b.append("core id\t\t: %d\n" % core)
        b.append("cpu cores\t: %d\n" % topology.cores_per_socket)
        b.append("apicid\t\t: %d\n" % apic)
        b.append("initial apicid\t: %d\n" % apic)
        b.append("fpu\t\t: yes\n")
        b.append("fpu_exception\t: yes\n")
        b.append("cpuid level\t: %d\n" % cpu_table.get("cpuid_level", 13))
        b.append("wp\t\t: yes\n")
        b.append("flags\t\t: %s\n" % " ".join(flags))
        if cpu_table.get("vmx_flags"):
            b.append("vmx flags\t: %s\n" % cpu_table["vmx_flags"])
        b.append("bugs\t\t: %s\n" % cpu_table.get("bugs", ""))
        b.append("bogomips\t: %s\n" % cpu_table.get("bogomips", "4000.00"))
        if cpu_table.get("tlb_size"):
            b.append("TLB size\t: %s\n" % cpu_table["tlb_size"])
        b.append("clflush size\t: 64\n")
        b.append("cache_alignment\t: 64\n")
        b.append("address sizes\t: %s\n"
                 % cpu_table.get("address_sizes", "46 bits physical, 48 bits virtual"))
        pm = cpu_table.get("power_management", "")
        b.append("power management:%s\n" % ((" " + pm) if pm else ""))
        b.append("\n")
        blocks.append("".join(b))
    return "".join(blocks)


def write_cpuinfo(machine):
    cpu_table = machine.desc.get("cpu")
    if not cpu_table:
        return
    machine.tree.write("proc/cpuinfo", cpuinfo_text(cpu_table, machine.cpus))


def write_cpu_and_node_lists(machine):
    """/sys/devices/system/cpu/{online,possible,present}, cpuN/topology and node/*."""
    if not machine.desc.get("cpu"):
        return
    tree = machine.tree
    topology = machine.cpus
    cpu_range = "0-%d\n" % (topology.count - 1) if topology.count > 1 else "0\n"
    for name in ("online", "possible", "present"):
        tree.write("sys/devices/system/cpu/%s" % name, cpu_range)
    nodes = sorted(topology.nodes)
    node_list = cpulist(nodes) + "\n"
    for name in ("online", "possible", "has_cpu", "has_normal_memory"):
        tree.write("sys/devices/system/node/%s" % name, node_list)
    for node in nodes:
        node_dir = "sys/devices/system/node/node%d" % node
        tree.write(node_dir + "/cpulist", cpulist(topology.nodes[node]) + "\n")
        tree.write(node_dir + "/cpumap", cpumask(topology.nodes[node], topology.count) + "\n")
    write_cpu_topology(tree, topology)


def write_cpu_topology(tree, topology):
    """/sys/devices/system/cpu/cpuN/topology, the files hwloc's Linux backend needs to see each CPU
    (without them lstopo --input gives up on the tree and describes the machine running it)."""
    cores, packages = {}, {}
    for i, (socket, core, _) in enumerate(topology.cpus):
        cores.setdefault((socket, core), []).append(i)
        packages.setdefault(socket, []).append(i)
    for i, (socket, core, _) in enumerate(topology.cpus):
        siblings, package = cores[(socket, core)], packages[socket]
        base = "sys/devices/system/cpu/cpu%d/topology/" % i
        tree.write(base + "physical_package_id", "%d\n" % socket)
        tree.write(base + "core_id", "%d\n" % core)
        for name, cpus in (("core_cpus", siblings), ("package_cpus", package)):
            tree.write(base + name, cpumask(cpus, topology.count) + "\n")
            tree.write(base + name + "_list", cpulist(cpus) + "\n")
