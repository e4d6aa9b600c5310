#!/usr/bin/env python3
"""fixture_nvidia_bug_report.py [--older] ROOT: prints an nvidia-bug-report.log for the machine of a captured
root, in the layout nvidia-bug-report.sh writes (sections opened by a rule of 44 underscores and the
command or "*** FILE" that made them): the prologue with its uname line, lspci -nntv, lspci -nn and
lspci -nnDvvvxxxx (pciutils reading the fixture through its sysfs backend), dmidecode's System
Information, and the /proc files the script copies. Real customers' reports are not ours to copy;
this builds the same layout from the fixtures, with sections p2pcheck must skip around them.
--older: the lspci sections of older nvidia-bug-report.sh versions instead: `lspci -d "10de:*" -v -xxx`
(256-byte dumps of NVIDIA functions), `lspci -d "10b5:*" -v -xxx` (PLX; often empty), `lspci -t` and
`lspci -nn`, with their headers as the script echoes them."""
import os
import subprocess
import sys

RULE = "_" * 44


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


def section(out, header, body):
    out.append(RULE + "\n\n" + header + "\n\n" + body.rstrip("\n") + "\n\n")


def copied(out, root, path):
    body = read(os.path.join(root, path.lstrip("/")))
    if body is None:
        out.append(RULE + "\n\n*** " + path + " does not exist\n\n")
        return
    section(out, "*** " + path, "*** ls: -r--r--r-- 1 root root 0 2026-12-01 10:00:00.000000000 +0000 " + path + "\n" + body)


def main():
    older = sys.argv[1] == "--older"
    root = os.path.abspath(sys.argv[-1])
    release = (read(os.path.join(root, "proc/sys/kernel/osrelease")) or "").strip()
    host = (read(os.path.join(root, "proc/sys/kernel/hostname")) or "fixture-host").strip()
    lspci = ["lspci", "-A", "linux-sysfs", "-O", "sysfs.path=" + os.path.join(root, "sys/bus/pci")]
    run = lambda *args: subprocess.run(lspci + list(args), capture_output=True, text=True).stdout
    out = []
    section(out, "Start of NVIDIA bug report log file.  Please include this file, along",
            "with a detailed description of your problem, when reporting a graphics\n"
            "driver bug via the NVIDIA Linux forum (see forums.developer.nvidia.com)\n\n"
            "nvidia-bug-report.sh Version: 35282527\n\nDate: Tue Dec  1 10:00:00 UTC 2026\n"
            f"uname: Linux {host} {release} #1 SMP PREEMPT_DYNAMIC x86_64 x86_64 x86_64 GNU/Linux\n"
            "command line flags: \n")
    copied(out, root, "/etc/issue")
    section(out, "ldd /usr/bin/glxinfo", "\tlinux-vdso.so.1 (0x00007ffc)\n")
    if older:
        section(out, '/usr/bin/lspci -d "10de:*" -v -xxx', run("-d", "10de:", "-v", "-xxx"))
        section(out, '/usr/bin/lspci -d "10b5:*" -v -xxx', run("-d", "10b5:", "-v", "-xxx"))
        section(out, "/usr/bin/lspci -t", run("-t"))
        section(out, "/usr/bin/lspci -nn", run("-nn"))
    else:
        section(out, "/usr/bin/lspci -nntv", run("-nntv"))
        section(out, "/usr/bin/lspci -nn", run("-nn"))
        section(out, "/usr/bin/lspci -nnDvvvxxxx", run("-nnDvvvxxxx"))
    dmi = {f: (read(os.path.join(root, "sys/class/dmi/id", f)) or "").strip()
           for f in ("sys_vendor", "product_name", "product_serial", "bios_vendor")}
    section(out, "/usr/sbin/dmidecode",
            "# dmidecode 3.5\nGetting SMBIOS data from sysfs.\n\nHandle 0x0000, DMI type 0, 26 bytes\n"
            f"BIOS Information\n\tVendor: {dmi['bios_vendor']}\n\n"
            "Handle 0x0001, DMI type 1, 27 bytes\nSystem Information\n"
            f"\tManufacturer: {dmi['sys_vendor']}\n\tProduct Name: {dmi['product_name']}\n"
            f"\tSerial Number: {dmi['product_serial']}\n\n"
            "Handle 0x0002, DMI type 2, 15 bytes\nBase Board Information\n\tManufacturer: Board Vendor\n")
    section(out, "Scanning kernel log files for NVIDIA kernel messages:", "No suitable log found.\n")
    for path in ("/proc/cmdline", "/proc/cpuinfo", "/proc/meminfo", "/proc/modules", "/proc/version",
                 "/proc/driver/nvidia/version"):
        copied(out, root, path)
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
