"""[[nvme]]: NVMe controllers below their PCI function, their subsystems and namespaces, in the
plain layout or the native-multipath one (namespaces under the subsystem, path devices hidden)."""

from .block import NVME_MAJOR
from .sizes import SECTOR_BYTES, size_of

NVME_CHAR_MAJOR = 241
FIRST_EUI64 = 0x0025388a01000000


def write_nvme(machine, block_devices):
    for controller in machine.desc.get("nvme", []):
        write_controller(machine, block_devices, controller)


def write_controller(machine, block_devices, n):
    tree = machine.tree
    ctrl = n["ctrl"]
    instance = int(ctrl[4:])
    function = machine.pci.function(n["pci"])
    controller_path = function.path + "/nvme/" + ctrl
    tree.link("sys/class/nvme/" + ctrl, controller_path)
    tree.link(controller_path + "/device", function.path)
    tree.link(controller_path + "/subsystem", "/sys/class/nvme")
    model, serial, firmware = n["model"], n["serial"], n["firmware"]
    char_major = n.get("char_major", NVME_CHAR_MAJOR)
    nqn = n.get("subsysnqn", "nqn.2014.08.org.nvmexpress:%04x%04x%-20s%-40s"
                % (function.vendor, function.subsys_vendor, serial, model))
    files = {"model": model, "serial": serial, "firmware_rev": firmware, "transport": "pcie",
             "address": function.name, "state": "live", "cntlid": str(n.get("cntlid", 0)),
             "subsysnqn": nqn, "queue_count": str(n.get("queue_count", 65)),
             "sqsize": str(n.get("sqsize", 1023)), "numa_node": str(function.numa_node),
             "kato": "0", "dev": "%d:%d" % (char_major, instance)}
    # hostnqn / hostid / ctrl_loss_tmo exist only for fabrics controllers (ctrl->opts)
    for key, value in files.items():
        tree.write(controller_path + "/" + key, value + "\n")
    tree.write(controller_path + "/uevent", "MAJOR=%d\nMINOR=%d\nDEVNAME=%s\nNVME_TRTYPE=pcie\n"
               % (char_major, instance, ctrl))
    # subsystem (always registered, CONFIG_NVME_MULTIPATH or not)
    subsystem_path = "/sys/devices/virtual/nvme-subsystem/nvme-subsys%d" % instance
    tree.link("sys/class/nvme-subsystem/nvme-subsys%d" % instance, subsystem_path)
    for key, value in (("model", model), ("serial", serial), ("firmware_rev", firmware),
                       ("subsysnqn", nqn), ("iopolicy", n.get("iopolicy", "numa")),
                       ("subsystype", "nvm")):
        if key == "subsystype" and machine.kernel.version < (5, 18):
            continue
        tree.write(subsystem_path + "/" + key, value + "\n")
    tree.link(subsystem_path + "/" + ctrl, controller_path)
    tree.link(subsystem_path + "/subsystem", "/sys/class/nvme-subsystem")
    tree.write(subsystem_path + "/uevent", "")
    for namespace in n.get("namespaces", []):
        write_namespace(machine, block_devices, instance, controller_path, subsystem_path,
                        namespace, n.get("multipath", False))


def write_namespace(machine, block_devices, instance, controller_path, subsystem_path,
                    namespace, multipath):
    tree = machine.tree
    nsid = namespace.get("nsid", 1)
    disk_name = "nvme%dn%d" % (instance, nsid)
    sectors = size_of(namespace["size"]) // SECTOR_BYTES
    block_size = namespace.get("lbs", 512)
    wwid = namespace.get("wwid", "eui.%016x" % (FIRST_EUI64 + instance * 16 + nsid))
    namespace_files = {"nsid": "%d\n" % nsid, "wwid": "%s\n" % wwid}
    if multipath:
        hidden_name = "nvme%dc%dn%d" % (instance, instance, nsid)
        hidden_path = controller_path + "/" + hidden_name
        block_devices.write_disk(hidden_path, hidden_name, sectors, block_size, NVME_MAJOR, None,
                                 hidden=True)
        tree.link(hidden_path + "/device", controller_path)
        disk_path = subsystem_path + "/" + disk_name
        block_devices.write_disk(disk_path, disk_name, sectors, block_size, NVME_MAJOR,
                                 block_devices.next_minor(), namespace_files)
        tree.link(disk_path + "/device", subsystem_path)
        tree.link(disk_path + "/slaves/" + hidden_name, hidden_path)
        tree.link(hidden_path + "/holders/" + disk_name, disk_path)
    else:
        disk_path = controller_path + "/" + disk_name
        block_devices.write_disk(disk_path, disk_name, sectors, block_size, NVME_MAJOR,
                                 block_devices.next_minor(), namespace_files)
        tree.link(disk_path + "/device", controller_path)
    if namespace.get("parts"):
        block_devices.write_partitions(disk_path, disk_name, sectors, namespace["parts"],
                                       NVME_MAJOR)
