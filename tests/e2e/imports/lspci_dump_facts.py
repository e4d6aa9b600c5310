#!/usr/bin/env python3
"""lspci_dump_facts.py P2PCHECK DUMP [-- ARGS...]: every fact an `lspci -xxxx` dump (alone, or in a
directory with lspci -tv and cpuinfo) carries is what p2pcheck reports from it (issue 50).

Decodes the hex bytes itself (in Python, not p2pcheck's decoder; .xz read with lzma) and compares
with what `p2pcheck --dump DUMP ARGS topo --json` says:

  ids        vendor, device, class, revision (bytes 00-0b); an endpoint's subsystem IDs (2c-2f)
  size       how much config space was dumped (64, 256 or 4096 bytes: config_size)
  port       the PCI Express capability's port type (port_type)
  link       LnkCap's speed and width (link.max_speed_gts/max_width), LnkSta's (speed_gts/width)
  acs        the ACS extended capability's capability and control registers (acs.capability,
             acs.control, presence "present"); a PCIe function dumped to 4096 bytes without one is
             "absent"; one dumped to 256 bytes, and any dumped to 64, is "unknown", never "absent"
  parent     a bridge's secondary bus (byte 19): the functions on it have it as their parent
  driver     "Kernel driver in use: X" (lspci -k), where the dump has such lines

Prints what differs (the fact, the file, both values) and exits 1; else a one-line summary."""
import json
import lzma
import os
import re
import sys
import facts_main

DEV = re.compile(r"^((?:[0-9a-f]{4,5}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) ")
HEX = re.compile(r"^([0-9a-f]{2,3}): ((?:[0-9a-f]{2} ){15}[0-9a-f]{2})$")
SPEED = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
PORTS = {0: "endpoint", 1: "legacy_endpoint", 4: "root_port", 5: "switch_upstream", 6: "switch_downstream",
         7: "pcie_to_pci_bridge", 8: "pci_to_pcie_bridge", 9: "rc_integrated_endpoint", 10: "rc_event_collector"}


def dump_file(path):
    """The dump itself: the file, or the one file of a directory that holds hex lines."""
    if not os.path.isdir(path):
        return path
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        if os.path.isfile(full) and any(HEX.match(line.rstrip("\n")) for line in read_lines(full)[:50]):
            return full
    sys.exit("lspci_dump_facts.py: no lspci -x dump in " + path)


def read_lines(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt", errors="replace") as f:
        return f.readlines()


def functions(path):
    fns, cur = {}, None
    for line in read_lines(path):
        line = line.rstrip("\n")
        m = DEV.match(line)
        if m:
            cur = fns.setdefault(facts_main.full(m.group(1)), {"bytes": bytearray()})
            continue
        m = HEX.match(line)
        if cur is not None and m and int(m.group(1), 16) == len(cur["bytes"]):
            cur["bytes"] += bytes.fromhex(m.group(2))
        elif cur is not None and line.startswith("\tKernel driver in use: "):
            cur["driver"] = line.split(": ", 1)[1].strip()
    return {b: f for b, f in fns.items() if len(f["bytes"]) in (64, 256, 4096)}


def u16(c, at):
    return c[at] | c[at + 1] << 8


def u32(c, at):
    return u16(c, at) | u16(c, at + 2) << 16


def decode(c):
    """What the bytes say, keyed as topo --json names it."""
    f = {"vendor": "%04x" % u16(c, 0), "device": "%04x" % u16(c, 2), "revision": "%02x" % c[8],
         "class": "%06x" % (c[9] | c[10] << 8 | c[11] << 16), "config_size": len(c)}
    header = c[0x0e] & 0x7f
    if header == 0:
        f["subsystem_vendor"], f["subsystem_device"] = "%04x" % u16(c, 0x2c), "%04x" % u16(c, 0x2e)
    if header == 1:
        f["secondary"] = c[0x19]
    express = None
    if len(c) >= 256 and c[6] & 0x10:
        at, seen = c[0x34] & 0xfc, set()
        while at >= 0x40 and at not in seen:
            seen.add(at)
            if c[at] == 0x10:
                express = at
                break
            at = c[at + 1] & 0xfc
    if len(c) == 64:  # the header alone (not root): whether there is an ACS capability is unknown
        f["acs"] = {"presence": "unknown"}
    if express is not None:
        f["port_type"] = PORTS.get(c[express + 2] >> 4 & 0xf)
        cap, sta = u32(c, express + 0x0c), u16(c, express + 0x12)
        f["link"] = {"max_speed_gts": SPEED.get(cap & 0xf), "max_width": (cap >> 4 & 0x3f) or None,
                     "speed_gts": SPEED.get(sta & 0xf), "width": (sta >> 4 & 0x3f) or None}
        f["acs"] = {"presence": "unknown"} if len(c) < 4096 else acs(c)
    return f


def acs(c):
    at, seen = 0x100, set()
    while at >= 0x100 and at not in seen and at + 8 <= len(c):
        seen.add(at)
        header = u32(c, at)
        if header & 0xffff == 0x0d:
            return {"presence": "present", "capability": "0x%04x" % u16(c, at + 4), "control": "0x%04x" % u16(c, at + 6)}
        at = header >> 20 & 0xffc
    return {"presence": "absent"}


def compare(binary, path, args):
    source = dump_file(path)
    fns = functions(source)
    topo = json.loads(facts_main.p2pcheck([binary, "--dump", path] + args + ["topo", "--json"]))
    got = {f["bdf"]: f for f in topo["functions"]}
    problems = []
    counted = {"functions": 0, "links": 0, "acs": 0, "parents": 0, "drivers": 0}
    drivers_shown = any("driver" in f for f in fns.values())
    decoded = {b: decode(f["bytes"]) for b, f in fns.items()}
    by_secondary = {(b.split(":")[0], d["secondary"]): b for b, d in decoded.items() if d.get("secondary")}

    def want(bdf, what, expected, actual):
        if expected != actual:
            problems.append("%s %s: %s says %r, p2pcheck %r" % (bdf, what, source, expected, actual))

    for bdf, d in decoded.items():
        g = got.get(bdf)
        if g is None:
            problems.append("%s: in %s, not in topo --json" % (bdf, source))
            continue
        counted["functions"] += 1
        for key in ("vendor", "device", "revision", "class", "config_size", "subsystem_vendor", "subsystem_device",
                    "port_type"):
            if key in d:
                want(bdf, key, d[key], g.get(key))
        if "link" in d:
            want(bdf, "link", d["link"], {k: (g.get("link") or {}).get(k) for k in d["link"]})
            counted["links"] += 1
        if "acs" in d:
            want(bdf, "ACS", d["acs"], {k: (g.get("acs") or {}).get(k) for k in d["acs"]})
            counted["acs"] += d["acs"]["presence"] == "present"
        parent = by_secondary.get((bdf.split(":")[0], int(bdf.split(":")[1], 16)))
        if parent:
            want(bdf, "parent", parent, g.get("parent"))
            counted["parents"] += 1
        if drivers_shown:
            want(bdf, "driver", fns[bdf].get("driver"), g.get("driver") or None)
            counted["drivers"] += "driver" in fns[bdf]
    if not fns:
        problems.append("no PCI function dumped in " + source)
    return problems, ", ".join("%d %s" % (n, k) for k, n in counted.items())


if __name__ == "__main__":
    facts_main.run(__doc__, compare, "lspci -x dump")
