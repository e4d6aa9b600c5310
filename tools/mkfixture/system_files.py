"""The machine's files outside /sys/devices/pci*: kernel identity (/proc/version, /proc/cmdline,
/boot/config-*), /etc/os-release, /proc/mounts, DMI, and the [[file]]/[[symlink]] escape hatch."""


def with_newline(text):
    return text if text.endswith("\n") else text + "\n"


def kernel_config_text(release, lines):
    """/boot/config-<release>: the header `make` writes, then the lines from the description."""
    header = ("#\n# Automatically generated file; DO NOT EDIT.\n"
              "# Linux/x86 %s Kernel Configuration\n#\n" % release.split("-")[0])
    return header + "".join(line + "\n" for line in lines)


def write_kernel_and_os_files(machine):
    tree = machine.tree
    desc = machine.desc
    kernel = desc.get("kernel", {})
    release = machine.kernel.release
    tree.write("proc/sys/kernel/osrelease", release + "\n")
    tree.write("proc/version", with_newline(kernel.get("version", "Linux version %s" % release)))
    tree.write("proc/cmdline", with_newline(kernel.get("cmdline", "")))
    config = kernel.get("config")
    if config is not None:
        tree.write("boot/config-%s" % release, kernel_config_text(release, config))
    os_release = desc.get("os", {}).get("release")
    if os_release is not None:
        tree.write("etc/os-release", with_newline(os_release))
    mounts = desc.get("proc", {}).get("mounts")
    if mounts is not None:
        tree.write("proc/mounts", "".join(line + "\n" for line in mounts))
    dmi = desc.get("dmi")
    if dmi:
        for key, value in dmi.items():
            tree.write("sys/devices/virtual/dmi/id/%s" % key, "%s\n" % value)
        tree.link("sys/class/dmi/id", "/sys/devices/virtual/dmi/id")


def write_extra_files(machine):
    """[[file]] (text or hex bytes) and [[symlink]] (target written as is)."""
    tree = machine.tree
    for entry in machine.desc.get("file", []):
        if "hex" in entry:
            tree.write(entry["path"], bytes.fromhex(entry["hex"]))
        else:
            tree.write(entry["path"], entry.get("text", ""))
    for entry in machine.desc.get("symlink", []):
        tree.literal_link(entry["path"], entry["target"])
