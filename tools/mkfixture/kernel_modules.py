"""[modules.<name>]: /proc/modules and /sys/module/<name>, and which module a PCI driver is."""

from .sizes import align_up

# Load addresses start in the x86-64 module area (MODULES_VADDR = 0xffffffffc0000000).
FIRST_MODULE_ADDRESS = 0xFFFFFFFFC0040000
DEFAULT_MODULE_SIZE = 16384


def driver_module(driver, modules):
    """The loaded module providing a PCI driver, or None (built in, or not described)."""
    name = driver.replace("-", "_")
    if name in modules and not modules[name].get("builtin"):
        return name
    if driver == "vfio-pci" and "vfio_pci" in modules:
        return "vfio_pci"
    return None


def module_addresses(modules):
    """Load addresses: the last line of /proc/modules was loaded first, at the lowest address."""
    addresses = {}
    address = FIRST_MODULE_ADDRESS
    for name, module in reversed(list(modules.items())):
        if module.get("builtin"):
            continue
        addresses[name] = address
        address += align_up(module.get("size", DEFAULT_MODULE_SIZE), 0x1000) + 0x1000
    return addresses


def write_modules(machine):
    tree = machine.tree
    modules = machine.desc.get("modules", {})
    addresses = module_addresses(modules)
    lines = []
    for name, module in modules.items():
        module_path = "sys/module/" + name
        for key, value in module.get("parameters", {}).items():
            tree.write(module_path + "/parameters/" + key, "%s\n" % value)
        if module.get("version"):
            tree.write(module_path + "/version", module["version"] + "\n")
        if module.get("builtin"):
            continue
        size = module.get("size", DEFAULT_MODULE_SIZE)
        used_by = module.get("used_by", [])
        refcnt = module.get("refcnt", len(used_by))
        users = "".join(user + "," for user in used_by) or "-"
        # a non-root reader sees zero addresses
        address = addresses[name] if machine.module_addresses_visible else 0
        line = "%s %d %d %s Live 0x%016x" % (name, size, refcnt, users, address)
        if module.get("taint"):
            line += " (%s)" % module["taint"]
        lines.append(line + "\n")
        tree.write(module_path + "/initstate", "live\n")
        tree.write(module_path + "/refcnt", "%d\n" % refcnt)
        tree.write(module_path + "/coresize", "%d\n" % size)
        tree.write(module_path + "/taint", "%s\n" % module.get("taint", ""))
        tree.write(module_path + "/uevent", "")
        if module.get("srcversion"):
            tree.write(module_path + "/srcversion", module["srcversion"] + "\n")
        for user in used_by:
            tree.link(module_path + "/holders/" + user, "/sys/module/" + user)
    for driver in sorted({f.driver for f in machine.pci.functions if f.driver}):
        module = driver_module(driver, modules)
        if module:
            tree.link("sys/module/%s/drivers/pci:%s" % (module, driver),
                      "/sys/bus/pci/drivers/" + driver)
    if modules:
        tree.write("proc/modules", "".join(lines))
