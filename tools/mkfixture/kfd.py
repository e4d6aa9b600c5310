"""[kfd] and kfd = {...} on GPUs: the amdgpu KFD topology (/sys/class/kfd/kfd/topology), one
node per NUMA node's CPUs, then one per GPU, in the layout of the KFD version."""

KFD_DEVICE = "236:0"
FIRST_GPU_ID = 1000
FIRST_RENDER_MINOR = 128


def write_kfd(machine):
    gpus = [f for f in machine.pci.ordered if f.spec.get("kfd")]
    if not gpus:
        return
    tree = machine.tree
    kfd = machine.desc.get("kfd", {})
    base = "/sys/devices/virtual/kfd/kfd"
    tree.link("sys/class/kfd/kfd", base)
    tree.write(base + "/dev", "%s\n" % kfd.get("dev", KFD_DEVICE))
    tree.write(base + "/uevent", "MAJOR=%s\nMINOR=%s\nDEVNAME=kfd\n"
               % tuple(kfd.get("dev", KFD_DEVICE).split(":")))
    topology = base + "/topology"
    tree.write(topology + "/generation_id", "%d\n" % kfd.get("generation_id", 1))
    system = kfd.get("system", {})
    tree.write(topology + "/system_properties",
               "platform_oem %d\nplatform_id %d\nplatform_rev %d\n" % (
                   system.get("platform_oem", 0), system.get("platform_id", 0),
                   system.get("platform_rev", 0)))
    node_id = 0
    cpu_properties = kfd.get("cpu", {})
    for numa_node in sorted(machine.cpus.nodes):
        properties = dict(cpu_properties)
        properties.setdefault("cpu_cores_count", len(machine.cpus.nodes[numa_node]))
        properties.setdefault("cpu_core_id_base", min(machine.cpus.nodes[numa_node]))
        write_node(machine, topology + "/nodes/%d" % node_id, properties, gpu=False, gpu_id=0,
                   name="")
        node_id += 1
    for i, function in enumerate(gpus):
        properties = dict(function.spec["kfd"])
        gpu_id = properties.pop("gpu_id", FIRST_GPU_ID + i)
        name = properties.pop("name", "")
        properties["vendor_id"] = function.vendor
        properties["device_id"] = function.device
        properties["location_id"] = (function.bus << 8) | function.devfn
        properties["domain"] = function.dom
        if "drm_render_minor" not in properties:
            drm = function.spec.get("drm", {})
            properties["drm_render_minor"] = drm.get("render", FIRST_RENDER_MINOR + i)
        write_node(machine, topology + "/nodes/%d" % node_id, properties, gpu=True,
                   gpu_id=gpu_id, name=name)
        node_id += 1


def write_node(machine, path, properties, gpu, gpu_id, name):
    tree = machine.tree
    tree.write(path + "/properties", node_properties_text(properties, gpu, machine.kernel.kfd_version))
    tree.write(path + "/gpu_id", "%d\n" % gpu_id)
    tree.write(path + "/name", "%s\n" % name)


def node_properties_text(properties, gpu, kfd_version):
    """The `properties` file: keys in the kernel's order; a key missing from properties is 0."""
    lines = []

    def property32(key):
        lines.append("%s %d\n" % (key, properties.get(key, 0) & 0xFFFFFFFF))

    def property64(key):
        lines.append("%s %d\n" % (key, properties.get(key, 0)))

    for key in ("cpu_cores_count", "simd_count", "mem_banks_count", "caches_count",
                "io_links_count"):
        property32(key)
    if kfd_version >= (6, 0):
        property32("p2p_links_count")
    for key in ("cpu_core_id_base", "simd_id_base", "max_waves_per_simd", "lds_size_in_kb",
                "gds_size_in_kb", "num_gws", "wave_front_size", "array_count",
                "simd_arrays_per_engine", "cu_per_simd_array", "simd_per_cu",
                "max_slots_scratch_cu", "gfx_target_version", "vendor_id", "device_id",
                "location_id", "domain", "drm_render_minor"):
        property32(key)
    property64("hive_id")
    property32("num_sdma_engines")
    property32("num_sdma_xgmi_engines")
    property32("num_sdma_queues_per_engine")
    property32("num_cp_queues")
    if gpu:
        property32("max_engine_clk_fcompute")
        lines.append("local_mem_size 0\n")
        property32("fw_version")
        property32("capability")
        if kfd_version >= (6, 7):
            property64("debug_prop")
        property32("sdma_fw_version")
        property64("unique_id")
        if kfd_version >= (6, 5):
            property32("num_xcc")
    property32("max_engine_clk_ccompute")
    return "".join(lines)
