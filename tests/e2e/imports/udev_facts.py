#!/usr/bin/env python3
"""udev_facts.py P2PCHECK DB [-- ARGS...]: every fact a `udevadm info --export-db` carries is what
p2pcheck reports from it (issue 50), and none it carries is called unknown.

Reads the database itself (its P: and E: lines, in Python, not p2pcheck's parser; .xz read with
lzma) and compares with what `p2pcheck --dump DB ARGS topo --json` and `check --json` say:

  pci        each SUBSYSTEM=pci record: PCI_ID (vendor, device), PCI_SUBSYS_ID, PCI_CLASS, the
             sysfs path (/sys + DEVPATH) and the parent (the PCI function the path names before it)
  driver     DRIVER= of each PCI function (driver); none where the record has no DRIVER=
  nvme       each SUBSYSTEM=nvme controller below a PCI function (nvme[] name and bdf, in topo and
             check), its namespaces (block disks below it) and the first namespace's ID_MODEL,
             ID_SERIAL_SHORT, ID_REVISION (model, serial, firmware)
  multipath  a path node (nvme<s>c<c>n<n>) means native multipath is on: storage.nvme_multipath
             FAILs naming it
  dmi        the dmi record's MODALIAS svn/pn fields (identity dmi_vendor, dmi_product); without
             one, "not in this udev database"
  cpu        CPU 0's MODALIAS: vendor, family, model, the hypervisor feature (check cpu)
  numa       the database has no NUMA node: p2pcheck reports none (null), never a number it made up

Prints what differs (the fact, the file, both values) and exits 1; else a one-line summary."""
import json
import lzma
import re
import facts_main

BDF = re.compile(r"^[0-9a-f]{4,5}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
CTRL = re.compile(r"^nvme\d+$")
NS = re.compile(r"^nvme(\d+)(c\d+)?n\d+$")
VENDORS = {0: "GenuineIntel", 1: "CyrixInstead", 2: "AuthenticAMD", 5: "CentaurHauls", 9: "HygonGenuine"}
DMI_TAGS = {"svn": "dmi_vendor", "pn": "dmi_product"}


def records(path):
    opener = lzma.open if path.endswith(".xz") else open
    out, cur = [], None
    with opener(path, "rt", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("P: "):
                cur = {"P": line[3:]}
                out.append(cur)
            elif not line:
                cur = None
            elif cur is not None and line.startswith("E: ") and "=" in line:
                key, value = line[3:].split("=", 1)
                cur.setdefault(key, value)
    return out


def db_facts(path):
    pci, nvme, path_nodes, dmi, cpu = {}, {}, [], None, None
    for r in records(path):
        sub, devpath = r.get("SUBSYSTEM"), r["P"]
        parts = devpath.split("/")
        if sub == "pci":
            bdf = r.get("PCI_SLOT_NAME") or parts[-1]
            vendor, device = r["PCI_ID"].lower().split(":")
            above = [p for p in parts[:-1] if BDF.match(p)]
            f = {"vendor": vendor, "device": device, "class": "%06x" % int(r["PCI_CLASS"], 16),
                 "sysfs_path": "/sys" + devpath, "parent": above[-1] if above else None, "driver": r.get("DRIVER")}
            if "PCI_SUBSYS_ID" in r:
                f["subsystem_vendor"], f["subsystem_device"] = r["PCI_SUBSYS_ID"].lower().split(":")
            pci[bdf] = f
        elif sub == "nvme" and len(parts) >= 3 and CTRL.match(parts[-1]) and parts[-2] == "nvme" and BDF.match(parts[-3]):
            nvme.setdefault(parts[-1], {"namespaces": [], "model": None})["bdf"] = parts[-3]
        elif sub == "block" and r.get("DEVTYPE") == "disk" and len(parts) >= 4 and NS.match(parts[-1]) \
                and CTRL.match(parts[-2]) and parts[-3] == "nvme":
            c = nvme.setdefault(parts[-2], {"namespaces": [], "model": None})
            c["namespaces"].append(parts[-1])
            if NS.match(parts[-1]).group(2):
                path_nodes.append(parts[-1])
            if c["model"] is None:
                c["model"], c["serial"], c["firmware"] = (r.get(k) or None for k in ("ID_MODEL", "ID_SERIAL_SHORT", "ID_REVISION"))
        elif sub == "dmi" and r.get("MODALIAS", "").startswith("dmi:"):
            dmi = {}
            for field in r["MODALIAS"][4:].split(":"):
                for tag, key in DMI_TAGS.items():
                    if field.startswith(tag) and len(field) > len(tag) and key not in dmi:
                        dmi[key] = field[len(tag):]
        elif sub == "cpu" and devpath == "/devices/system/cpu/cpu0":
            m = re.match(r"^cpu:type:x86,ven([0-9A-Fa-f]{4})fam([0-9A-Fa-f]{4})mod([0-9A-Fa-f]{4}):feature:(.*)$", r.get("MODALIAS", ""))
            if m and int(m.group(1), 16) in VENDORS:
                cpu = {"vendor": VENDORS[int(m.group(1), 16)], "family": int(m.group(2), 16), "model": int(m.group(3), 16),
                       "hypervisor": "009F" in m.group(4).split(",")}
    return pci, {k: v for k, v in nvme.items() if "bdf" in v}, path_nodes, dmi, cpu


def compare(binary, path, args):
    topo = json.loads(facts_main.p2pcheck([binary, "--dump", path] + args + ["topo", "--json"]))
    check = json.loads(facts_main.p2pcheck([binary, "--dump", path] + args + ["check", "--json"]))
    return db_problems(path, topo, check, "not in this udev database")


def db_problems(path, topo, check, not_carried, dmi_here=True):
    """What p2pcheck's answers (topo, check) say otherwise than the database at `path`; `not_carried`
    is how p2pcheck names what the input lacks; dmi_here False: DMI comes from elsewhere (a
    sosreport's sys/class/dmi copies), not compared here."""
    pci, nvme, path_nodes, dmi, cpu = db_facts(path)
    problems = []

    def want(what, expected, actual):
        if expected != actual:
            problems.append("%s: %s says %r, p2pcheck %r" % (what, path, expected, actual))

    got = {f["bdf"]: f for f in topo["functions"]}
    for bdf, f in pci.items():
        g = got.get(bdf)
        if g is None:
            problems.append("%s: in %s, not in topo --json" % (bdf, path))
            continue
        for key, value in f.items():
            want("%s %s" % (bdf, key), value, g.get(key))
        want("%s NUMA node (the database has none)" % bdf, None, g.get("numa_node"))
    names = {c["name"]: c for c in topo["nvme"]}
    check_names = {c["name"]: c["bdf"] for c in check["nvme"]}
    for name, c in nvme.items():
        g = names.get(name)
        if g is None:
            problems.append("NVMe %s below %s: in %s, not in topo --json (its controllers: %s)" % (name, c["bdf"], path, sorted(names)))
            continue
        want("NVMe %s bdf" % name, c["bdf"], g["bdf"])
        want("NVMe %s bdf (check)" % name, c["bdf"], check_names.get(name))
        want("NVMe %s namespaces" % name, sorted(set(re.sub(r"c\d+n", "n", n) for n in c["namespaces"])),
             sorted(n["name"] for n in g["namespaces"]))
        if c["model"] is not None:
            for key in ("model", "serial", "firmware"):
                want("NVMe %s %s" % (name, key), c[key], g.get(key) or None)
    mp = [f for f in check["findings"] if f["id"] == "storage.nvme_multipath"]
    if path_nodes and not (mp and mp[0]["level"] == "FAIL" and all(p in mp[0]["message"] for p in path_nodes)):
        problems.append("multipath: %s shows path nodes %s, p2pcheck %s" % (path, path_nodes, mp))
    ident = check["identity"]
    for key in DMI_TAGS.values() if dmi_here else ():
        if dmi and key in dmi:
            want("DMI " + key, dmi[key], ident.get(key))
        else:
            want("DMI %s (no dmi record)" % key, not_carried, (ident.get("unread") or {}).get(key))
    if cpu:
        want("CPU", cpu, {k: check["cpu"].get(k) for k in cpu})
    if not pci:
        problems.append("no PCI record in %s" % path)
    facts = "%d PCI functions (%d with a driver), %d NVMe controllers, %d path nodes, DMI %s, CPU %s" % (
        len(pci), sum(1 for f in pci.values() if f["driver"]), len(nvme), len(path_nodes),
        "yes" if dmi else "none", "yes" if cpu else "none")
    return problems, facts


if __name__ == "__main__":
    facts_main.run(__doc__, compare, "udev")
