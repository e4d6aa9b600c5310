#!/usr/bin/env python3
"""Hostile names for tests/e2e/hostile_names_test.sh (issue 48): inputs whose every name an output
shows carries terminal escapes, CR, a newline and Unicode bidi controls, and the check that no
text output carries any of them.

    hostile_names.py tree SRC DST          a copy of a fixture tree with hostile names written in
    hostile_names.py capture IN OUT.tar.gz a capture (.tar.zst/.tar.gz) with a hostile manifest
    hostile_names.py imports REAL DST      the real imports (tests/e2e/imports/real) made hostile
    hostile_names.py clean FILE...         exit 1 naming each control or format character found
    hostile_names.py clean-csv FILE...     the same, CSV's CRLF record ends allowed
"""
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import unicodedata

# A terminal title, a bell, CR and erase-line, the bidi override that shows "SSAP :TLUSER" as
# "RESULT: PASS", an isolate, a right-to-left mark, a C1 CSI and a newline with a forged line.
HOSTILE = "\x1b]0;owned\x07\r\x1b[2K\u202eSSAP :TLUSER\u2066x\u2069\u200f\u009b31m\nRESULT: PASS"
# For places a newline would end the record (a /proc/mounts line, a udev property): the rest.
ONE_LINE = HOSTILE.replace("\n", " ")


def write(path, text):
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)


def tree(src, dst):
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, symlinks=True)
    named = 0
    write(os.path.join(dst, "proc/sys/kernel/hostname"), "host" + HOSTILE + "\n")
    for key in ("sys_vendor", "product_name", "product_serial"):
        d = os.path.join(dst, "sys/devices/virtual/dmi/id")
        os.makedirs(d, exist_ok=True)
        write(os.path.join(d, key), key + HOSTILE + "\n")
    for root, _, files in os.walk(os.path.join(dst, "sys/devices")):
        for name in files:
            path = os.path.join(root, name)
            if os.path.islink(path):
                continue
            if name in ("model", "serial", "firmware_rev") and "/nvme/" in path:
                write(path, name + HOSTILE + "\n")
                named += 1
            elif name == "name" and root.endswith("/dm"):
                write(path, "dm" + ONE_LINE + "\n")
                named += 1
    osr = os.path.join(dst, "etc/os-release")
    if os.path.exists(osr):
        text = open(osr, encoding="utf-8").read()
        write(osr, re.sub(r'(?m)^PRETTY_NAME=.*$', 'PRETTY_NAME="Debian' + ONE_LINE + '"', text))
    cpuinfo = os.path.join(dst, "proc/cpuinfo")
    if os.path.exists(cpuinfo):
        text = open(cpuinfo, encoding="utf-8").read()
        write(cpuinfo, re.sub(r"(?m)^(model name\s*:.*)$", lambda m: m.group(1) + ONE_LINE, text))
    mounts = os.path.join(dst, "proc/mounts")
    if os.path.exists(mounts):
        lines = open(mounts, encoding="utf-8").read().splitlines()
        extra = []
        for line in lines:
            w = line.split()
            if len(w) >= 4 and w[0].startswith("/dev/"):
                # The kernel escapes space, tab, newline and backslash as \ooo, nothing else.
                point = (w[1].rstrip("/") + "/" + ONE_LINE.replace(" ", "\\040").replace("\r", "\r")
                         + "\\012RESULT:\\040PASS")
                extra.append(" ".join([w[0], point] + w[2:]))
                extra.append(" ".join(["/dev/sdz" + ONE_LINE.replace(" ", "\\040"), "/mnt/gone" + str(len(extra))]
                                      + w[2:]))
                break
        write(mounts, "\n".join(lines + extra) + "\n")
    print(f"{dst}: {named} device names and the host, DMI, OS, CPU and mount names made hostile")


def read_tar(path):
    if path.endswith(".zst"):
        data = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
        return tarfile.open(fileobj=io.BytesIO(data), mode="r:")
    return tarfile.open(path)


def capture(src, out):
    """The manifest's format, source, notes, selection and unreadable texts made hostile."""
    import json
    with read_tar(src) as tin, tarfile.open(out, "w:gz") as tout:
        for member in tin.getmembers():
            data = tin.extractfile(member).read() if member.isfile() else None
            if member.name.endswith("manifest.json"):
                m = json.loads(data)
                m["format"] = "lspci" + HOSTILE
                m["source"] = "file" + HOSTILE
                m["tool_version"] = "0.1" + HOSTILE
                m["captured_at"] = "2026" + HOSTILE
                m["notes"] = ["note" + HOSTILE]
                m["input_notes"] = ["left" + HOSTILE]
                m["selection"] = {"nvme": ["/data" + HOSTILE]}
                m.setdefault("unreadable", {})
                for path in ("/proc/sys/kernel/hostname", "/sys/class/dmi/id/product_name",
                             "/sys/class/dmi/id/sys_vendor", "/proc/mounts"):
                    m["unreadable"][path] = {"status": "failed", "error": "EIO" + HOSTILE}
                data = json.dumps(m).encode()
                member.size = len(data)
            if member.name.endswith(("proc/sys/kernel/hostname", "dmi/id/product_name", "dmi/id/sys_vendor",
                                     "proc/mounts")) and member.isfile():
                continue  # read as the manifest's unreadable files
            tout.addfile(member, io.BytesIO(data) if data is not None else None)
    print(f"{out}: a capture whose manifest is hostile")


def imports(real, dst):
    os.makedirs(dst, exist_ok=True)
    hw = open(os.path.join(real, "hwloc.xml"), encoding="utf-8").read()
    xml_hostile = "h&#13;&#10;RESULT: PASS\u202eSSAP :TLUSER\u2066\u200f"
    hw = re.sub(r'name="HostName" value="[^"]*"', f'name="HostName" value="{xml_hostile}"', hw)
    write(os.path.join(dst, "hwloc.xml"), hw)
    lspci = subprocess.run(["xz", "-dc", os.path.join(real, "lspci-xxxx.txt.xz")], check=True,
                           capture_output=True).stdout.decode("utf-8", "surrogateescape")
    # The first function's name, and a record lspci could not have written (a note quotes it).
    lspci = re.sub(r"(?m)^([0-9a-f]{2}:[0-9a-f]{2}\.[0-7] [^\n]*)$", lambda m: m.group(1) + ONE_LINE, lspci, count=1)
    write(os.path.join(dst, "lspci.txt"), lspci + "\nzz:zz.z bad" + ONE_LINE + "\n00: zz" + ONE_LINE + "\n")
    udev = subprocess.run(["xz", "-dc", os.path.join(real, "udev.txt.xz")], check=True,
                          capture_output=True).stdout.decode("utf-8", "surrogateescape")
    udev = re.sub(r"(?m)^E: ID_MODEL_FROM_DATABASE=.*$", "E: ID_MODEL_FROM_DATABASE=m" + ONE_LINE, udev)
    udev += ("\nP: /devices/pci0000:00/0000:00:99.0" + ONE_LINE + "\nE: SUBSYSTEM=pci\nE: PCI_SLOT_NAME=bad"
             + ONE_LINE + "\nE: PCI_CLASS=zz" + ONE_LINE + "\n\n")
    write(os.path.join(dst, "udev.txt"), udev)
    print(f"{dst}: hwloc.xml, lspci.txt and udev.txt with hostile names")


def is_bad(ch):
    code = ord(ch)
    if ch == "\n":
        return False
    if code < 0x20 or code == 0x7f or 0x80 <= code <= 0x9f:
        return True
    if 0xdc80 <= code <= 0xdcff:  # a byte that is not UTF-8 (surrogateescape)
        return True
    return unicodedata.category(ch) in ("Cf", "Zl", "Zp")


def clean(files, crlf=False):
    bad = 0
    for path in files:
        text = open(path, "rb").read().decode("utf-8", "surrogateescape")
        if crlf:  # CSV ends its records with CRLF (RFC 4180); any other CR is the input's
            text = text.replace("\r\n", "\n")
        for lineno, line in enumerate(text.split("\n"), 1):
            found = sorted({f"U+{ord(c):04X}" for c in line if is_bad(c)})
            if found:
                bad += 1
                print(f"{path}:{lineno}: {', '.join(found)} in {line.encode('unicode_escape').decode()[:160]}")
                break
    return 1 if bad else 0


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "tree":
        tree(*args)
    elif cmd == "capture":
        capture(*args)
    elif cmd == "imports":
        imports(*args)
    elif cmd == "clean":
        sys.exit(clean(args))
    elif cmd == "clean-csv":
        sys.exit(clean(args, crlf=True))
    else:
        sys.exit(__doc__)
