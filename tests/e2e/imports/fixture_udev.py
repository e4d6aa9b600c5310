#!/usr/bin/env python3
"""fixture_udev.py [--dmi] ROOT: prints the `udevadm info --export-db` records a machine with this
captured root would have for what the udev import reads (PCI functions, NVMe controllers and
namespaces, CPU 0 and, with --dmi, DMI's modalias), in udevadm's own format. udevadm cannot run on
a captured tree, so the import tests derive the database from each fixture this way; tests/e2e/imports/real/udev.txt.xz is a real one."""
import os
import sys

VENDORS = {"GenuineIntel": 0, "CyrixInstead": 1, "AuthenticAMD": 2, "CentaurHauls": 5, "HygonGenuine": 9}


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def database(root, with_dmi=False):
    """The database's text for the captured root ROOT; with_dmi: with the dmi record (the fixtures'
    goldens under fixtures/*/expected/imports are of databases without one)."""
    sysfs = os.path.join(root, "sys")
    out = []
    devices = os.path.join(sysfs, "bus/pci/devices")
    for name in sorted(os.listdir(devices)):
        real = os.path.realpath(os.path.join(devices, name))
        devpath = real[len(sysfs):]
        env = {"DEVPATH": devpath, "SUBSYSTEM": "pci"}
        driver = os.path.join(real, "driver")
        if os.path.islink(driver):
            env["DRIVER"] = os.path.basename(os.readlink(driver))
        env["PCI_CLASS"] = "%X" % int(read(os.path.join(real, "class")), 16)
        env["PCI_ID"] = "%04X:%04X" % (int(read(os.path.join(real, "vendor")), 16), int(read(os.path.join(real, "device")), 16))
        sv, sd = read(os.path.join(real, "subsystem_vendor")), read(os.path.join(real, "subsystem_device"))
        if sv and sd:
            env["PCI_SUBSYS_ID"] = "%04X:%04X" % (int(sv, 16), int(sd, 16))
        env["PCI_SLOT_NAME"] = name
        out.append((devpath, env))
    nvme = os.path.join(sysfs, "class/nvme")
    for ctrl in sorted(os.listdir(nvme)) if os.path.isdir(nvme) else []:
        real = os.path.realpath(os.path.join(nvme, ctrl))
        if "/devices/pci" not in real:
            continue
        out.append((real[len(sysfs):], {"DEVPATH": real[len(sysfs):], "SUBSYSTEM": "nvme", "DEVNAME": "/dev/" + ctrl}))
        for ns in sorted(os.listdir(real)):
            if ns.startswith("nvme") and "n" in ns[4:] and os.path.isdir(os.path.join(real, ns)):
                env = {"DEVPATH": real[len(sysfs):] + "/" + ns, "SUBSYSTEM": "block", "DEVTYPE": "disk", "DEVNAME": "/dev/" + ns,
                       "ID_MODEL": read(os.path.join(real, "model")), "ID_SERIAL_SHORT": read(os.path.join(real, "serial")),
                       "ID_REVISION": read(os.path.join(real, "firmware_rev"))}
                out.append((env["DEVPATH"], env))
    # DMI's modalias as drivers/firmware/dmi-id.c writes it: each value without spaces, colons or
    # control characters (ascii_filter), behind its tag.
    dmi = [(tag, read(os.path.join(sysfs, "class/dmi/id", f))) for tag, f in (
        ("bvn", "bios_vendor"), ("bvr", "bios_version"), ("svn", "sys_vendor"), ("pn", "product_name"),
        ("pvr", "product_version"), ("rvn", "board_vendor"), ("rn", "board_name"))]
    if with_dmi and any(v for _, v in dmi):
        alias = "dmi:" + "".join(tag + "".join(c for c in v if " " < c < "\x7f" and c != ":") + ":" for tag, v in dmi)
        out.append(("/devices/virtual/dmi/id", {"DEVPATH": "/devices/virtual/dmi/id", "SUBSYSTEM": "dmi", "MODALIAS": alias}))
    cpu = {}
    for line in read(os.path.join(root, "proc/cpuinfo")).split("\n\n")[0].splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            cpu[k.strip()] = v.strip()
    if cpu.get("vendor_id") in VENDORS:
        features = ",0000" + (",009F" if "hypervisor" in cpu.get("flags", "").split() else "")
        alias = "cpu:type:x86,ven%04Xfam%04Xmod%04X:feature:%s" % (VENDORS[cpu["vendor_id"]], int(cpu["cpu family"]), int(cpu["model"]), features)
        out.append(("/devices/system/cpu/cpu0", {"DEVPATH": "/devices/system/cpu/cpu0", "SUBSYSTEM": "cpu", "MODALIAS": alias}))
    text = []
    for devpath, env in out:
        text.append("P: " + devpath + "\nM: " + os.path.basename(devpath) + "\n")
        text.extend(f"E: {k}={v}\n" for k, v in env.items())
        text.append("\n")
    return "".join(text)


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[1:-1] not in ([], ["--dmi"]):
        sys.exit("usage: fixture_udev.py [--dmi] ROOT")
    sys.stdout.write(database(os.path.abspath(sys.argv[-1]), with_dmi=sys.argv[1] == "--dmi"))


if __name__ == "__main__":
    main()
