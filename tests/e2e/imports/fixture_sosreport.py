#!/usr/bin/env python3
"""fixture_sosreport.py ROOT OUTDIR: writes OUTDIR/sosreport-HOST/, the sosreport a machine with this
captured root would give with `sos report -o devices,pci,kernel,processor,host,release`, holding
what the sosreport import reads, in sos's own layout:

  sos_commands/devices/udevadm_info_--export-db   the udev database (fixture_udev.py --dmi)
  proc/bus/pci/BB/DD.F (DDDD:BB/DD.F off domain 0) each function's config space, as the kernel's
                                                  /proc/bus/pci gives it (as many bytes as sysfs)
  proc/cpuinfo, proc/cmdline, etc/os-release      copied
  sos_commands/kernel/uname_-a, .../lsmod         what uname -a and lsmod print for the root
  boot/config-RELEASE, hostname                   copied
sos cannot run on a captured tree; tests/e2e/imports/real/sosreport.tar.xz is a real one."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_udev import database, read  # noqa: E402


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(text, bytes) else "w") as f:
        f.write(text)


def lsmod(modules):
    """lsmod's table from /proc/modules rows: name size count users."""
    rows = ["Module                  Size  Used by"]
    for line in modules.splitlines():
        words = line.split()
        if len(words) >= 3:
            users = words[3].rstrip(",") if len(words) > 3 and words[3] != "-" else ""
            rows.append("%-19s %8s  %s %s" % (words[0], words[1], words[2], users))
    return "\n".join(rows).rstrip() + "\n"


def main():
    root, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    release = read(os.path.join(root, "proc/sys/kernel/osrelease"))
    host = read(os.path.join(root, "proc/sys/kernel/hostname")) or "fixture-host"
    sos = os.path.join(out, "sosreport-" + host)
    write(os.path.join(sos, "sos_commands/devices/udevadm_info_--export-db"), database(root, with_dmi=True))
    devices = os.path.join(root, "sys/bus/pci/devices")
    for name in sorted(os.listdir(devices)):
        domain, bus, devfn = name.split(":")
        config = os.path.join(devices, name, "config")
        if os.path.isfile(config):
            folder = bus if domain == "0000" else domain + ":" + bus
            with open(config, "rb") as f:
                write(os.path.join(sos, "proc/bus/pci", folder, devfn), f.read())
    for path in ("proc/cpuinfo", "proc/cmdline", "etc/os-release", "boot/config-" + release):
        if release and os.path.isfile(os.path.join(root, path)):
            os.makedirs(os.path.dirname(os.path.join(sos, path)), exist_ok=True)
            shutil.copyfile(os.path.join(root, path), os.path.join(sos, path))
    if release:
        write(os.path.join(sos, "sos_commands/kernel/uname_-a"),
              "Linux %s %s #1 SMP PREEMPT_DYNAMIC x86_64 x86_64 x86_64 GNU/Linux\n" % (host, release))
    modules = read(os.path.join(root, "proc/modules"))
    if modules:
        write(os.path.join(sos, "sos_commands/kernel/lsmod"), lsmod(modules))
    write(os.path.join(sos, "hostname"), host + "\n")
    print(sos)


if __name__ == "__main__":
    main()
