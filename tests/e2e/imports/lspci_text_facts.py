#!/usr/bin/env python3
"""lspci_text_facts.py P2PCHECK TEXT [-- ARGS...]: every fact an `lspci -vvv` text carries is what
p2pcheck reports from it (issue 50), and none it carries is called unknown.

Reads the text itself (line by line in Python, not p2pcheck's parser) and compares with what
`p2pcheck --dump TEXT ARGS topo --json` and `check --json` say:

  acs        each function's ACSCtl bits (topo acs.control, presence "present"); a PCIe function
             listing no extended capability, or "<access denied>": ACS "unknown", never "absent"
  link       LnkCap speed/width (link.max_speed_gts/max_width), LnkSta's (speed_gts/width) where printed
  port       the Express port type (port_type)
  numa       "NUMA node: N" (numa_node); where the text has such lines, a function without one is -1
  iommu      "IOMMU group: N" (iommu_group)
  driver     "Kernel driver in use: X" (driver)
  bus        a bridge's secondary bus: the functions on it have it as their parent
  wording    no "not in this lspci output" for NUMA where the text printed NUMA nodes, nor for
             drivers where it printed drivers

Exits 1 listing what differs."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check_json_pairs import pairs_in_full  # noqa: E402
import facts_main

DEV = re.compile(r"^((?:[0-9a-f]{4,5}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) ")
CAP = re.compile(r"^\tCapabilities: \[([0-9a-f]+)( v\d+)?\] (.*)$")
SPEED = {"2.5GT/s": 2.5, "5GT/s": 5.0, "8GT/s": 8.0, "16GT/s": 16.0, "32GT/s": 32.0, "64GT/s": 64.0}
ACS = ["SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans"]
PORTS = [("Legacy Endpoint", "legacy_endpoint"), ("Endpoint", "endpoint"), ("Root Port", "root_port"),
         ("Upstream Port", "switch_upstream"), ("Downstream Port", "switch_downstream"),
         ("PCI-Express to PCI/PCI-X Bridge", "pcie_to_pci_bridge"), ("PCI/PCI-X to PCI-Express Bridge", "pci_to_pcie_bridge"),
         ("Root Complex Integrated Endpoint", "rc_integrated_endpoint"),
         ("Root Complex Event Collector", "rc_event_collector")]


def text_facts(path):
    fns, cur, cap = {}, None, None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n").rstrip("\r")
        m = DEV.match(line)
        if m:
            cur = fns.setdefault(facts_main.full(m.group(1)), {"caps": [], "ext": False, "express": None})
            cap = None
            continue
        if cur is None or not line.startswith("\t"):
            continue
        if line.startswith("\t\t"):
            body = line.strip()
            if cap == "acs" and body.startswith("ACSCtl:"):
                cur["acs"] = sum(1 << i for i, n in enumerate(ACS) if n + "+" in body.split())
            if cap == "express" and body.startswith(("LnkCap:", "LnkSta:")):
                key = "max" if body.startswith("LnkCap:") else "cur"
                s = re.search(r"Speed ([0-9.]+GT/s)", body)
                w = re.search(r"Width x(\d+)", body)
                if s and s.group(1) in SPEED:
                    cur[key + "_speed"] = SPEED[s.group(1)]
                if w and int(w.group(1)):  # x0: no link reported, which p2pcheck shows as null
                    cur[key + "_width"] = int(w.group(1))
            continue
        cap = None
        m = CAP.match(line)
        if m:
            name = m.group(3)
            cur["ext"] = cur["ext"] or bool(m.group(2))
            if name.startswith("Access Control Services"):
                cap = "acs"
            elif name.startswith("Express "):
                cap = "express"
                cur["express"] = next((t for words, t in PORTS if re.match(r"(\(v\d\) )?" + re.escape(words), name[8:])), None)
        elif line == "\tCapabilities: <access denied>":
            cur["denied"] = True
        elif line.startswith("\tNUMA node: "):
            cur["numa"] = int(line.split(":")[1])
        elif line.startswith("\tIOMMU group: "):
            cur["iommu"] = int(line.split(":")[1])
        elif line.startswith("\tKernel driver in use: "):
            cur["driver"] = line.split(": ", 1)[1].strip()
        elif line.startswith("\tBus: "):
            cur["secondary"] = int(re.search(r"secondary=([0-9a-f]{2})", line).group(1), 16)
    return fns


def compare(binary, path, args):
    fns = text_facts(path)
    topo = json.loads(facts_main.p2pcheck([binary, "--dump", path] + args + ["topo", "--json"]))
    check = json.loads(facts_main.p2pcheck([binary, "--dump", path] + args + ["check", "--json"]))
    got = {f["bdf"]: f for f in topo["functions"]}
    problems, counted = [], {"acs": 0, "unknown acs": 0, "links": 0, "numa": 0, "iommu": 0, "drivers": 0, "parents": 0}
    numa_shown = any("numa" in f for f in fns.values())
    drivers_shown = any("driver" in f for f in fns.values())
    by_secondary = {f["secondary"]: b for b, f in fns.items() if "secondary" in f}

    def want(bdf, what, expected, actual):
        if expected != actual:
            problems.append("%s %s: the text says %r, p2pcheck %r" % (bdf, what, expected, actual))

    for bdf, f in fns.items():
        g = got.get(bdf)
        if g is None:
            problems.append("%s: in the text, not in topo --json" % bdf)
            continue
        acs = g.get("acs") or {}
        if "acs" in f and not f.get("denied"):
            control = acs.get("control")
            want(bdf, "ACS control", ("present", f["acs"]), (acs.get("presence"), int(control, 16) if control else None))
            counted["acs"] += 1
        elif f.get("denied") or (f["express"] and not f["ext"]):
            want(bdf, "ACS (not read)", "unknown", acs.get("presence"))
            counted["unknown acs"] += 1
        if f["express"]:
            want(bdf, "port type", f["express"], g.get("port_type"))
            link = g.get("link") or {}
            for key, field in (("max_speed", "max_speed_gts"), ("max_width", "max_width"), ("cur_speed", "speed_gts"),
                               ("cur_width", "width")):
                if key in f and not f.get("denied"):
                    want(bdf, "link " + key, f[key], link.get(field))
            counted["links"] += 1
        if numa_shown:
            want(bdf, "NUMA node", f.get("numa", -1), g.get("numa_node"))
            counted["numa"] += "numa" in f
        want(bdf, "IOMMU group", f.get("iommu"), g.get("iommu_group"))
        counted["iommu"] += "iommu" in f
        if drivers_shown:
            want(bdf, "driver", f.get("driver"), g.get("driver") or None)
            counted["drivers"] += "driver" in f
        bus = int(bdf.split(":")[1], 16)
        if bus in by_secondary:
            want(bdf, "parent", by_secondary[bus], g.get("parent"))
            counted["parents"] += 1
    for pair in pairs_in_full(check).values():
        why = (pair.get("locality") or {}).get("why") or ""
        if numa_shown and "NUMA node not in this lspci output" in why:
            problems.append("locality %s-%s: the text prints NUMA nodes, p2pcheck says %s" % (pair["gpu"], pair["nvme"], why))
    if drivers_shown:
        for f in check["findings"]:
            if "driver" in f["id"] and f.get("state") == "not_carried":
                problems.append("finding %s: the text shows drivers, p2pcheck says %s" % (f["id"], f["message"]))
    if not fns:
        problems.append("no PCI function in the text")
    return problems, ", ".join("%d %s" % (n, k) for k, n in counted.items())


if __name__ == "__main__":
    facts_main.run(__doc__, compare, "lspci -vvv")
