#!/usr/bin/env python3
"""hwloc_facts.py P2PCHECK XML [--tree ROOT] [-- ARGS...]: every fact the hwloc XML carries that
p2pcheck once reported missing is reported from it (issue 50).

Reads the XML itself (xml.etree, not p2pcheck's parser, and by another route: cpusets where the
import reads nodesets) and compares with what `p2pcheck --dump XML ARGS` says:

  numa       each PCI function's NUMA node (topo --json numa_node): the NUMANode whose cpuset is that
             of the object hwloc hangs the I/O tree below; -1 below the top object of a machine of
             several nodes (local to every CPU). Pairs whose two ends have one are not
             "NUMA node not in this hwloc XML" (check --json locality).
  nvme       each function with NVMe OS devices below it (nvme0n1, nvme0c1n1) has that controller's
             name (topo --json and check --json nvme[]), and the block devices as its namespaces.
  multipath  a path node (nvme<s>c<c>n<n>) means native multipath is on: storage.nvme_multipath
             FAILs naming it; without one the XML cannot tell, and it stays unknown (not_carried).
  wording    no "needs root" or "not read as root" in check, topo, paths, explain: a file has no user.

With --tree ROOT (the fixture the XML was made from) also the tree's own answers: the same NUMA
node (or -1 on the tree where it has one node and hwloc names it), the same controller names, the
same NODE/SYS locality, and multipath FAIL where the tree FAILs. Exits 1 listing what differs."""
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check_json_pairs import pairs_in_full  # noqa: E402
import facts_main

IO_TYPES = {"Bridge", "PCIDev", "OSDev", "Misc"}
NVME = re.compile(r"^nvme(\d+)(?:c(\d+))?n(\d+)$|^nvme(\d+)$")


def xml_facts(path):
    """{busid: numa or None}, {busid: (controller or None, [blocks])}, path nodes seen, NUMA node count."""
    root = ET.parse(path).getroot()
    top = next(o for o in root if o.tag == "object")
    nodes = {}  # complete_cpuset -> os_index
    for o in root.iter("object"):
        if o.get("type") == "NUMANode":
            nodes.setdefault(o.get("complete_cpuset") or o.get("cpuset"), []).append(int(o.get("os_index")))
    numa, nvme, path_nodes = {}, {}, []

    def walk(obj, io_parent):
        if obj.get("type") not in IO_TYPES:
            io_parent = obj
        busid = obj.get("pci_busid")
        if busid:
            cpuset = io_parent.get("complete_cpuset") or io_parent.get("cpuset")
            match = nodes.get(cpuset, [])
            numa[busid] = (match[0] if len(match) == 1 else -1 if io_parent is top and len(nodes) > 1 else None) \
                if nodes else None
            names = [c.get("name") for c in obj if c.tag == "object" and c.get("type") == "OSDev"]
            found = [(n, NVME.match(n or "")) for n in names]
            found = [(n, m) for n, m in found if m]
            if found:
                exact = {"nvme" + (m.group(2) or m.group(4)) for n, m in found if m.group(2) or m.group(4)}
                inferred = {"nvme" + m.group(1) for n, m in found if m.group(1) and not m.group(2)}
                names = exact or inferred
                ctrl = next(iter(names)) if len(names) == 1 else None
                nvme[busid] = (ctrl, sorted(n for n, m in found if m.group(3) and ("nvme" + (m.group(2) or m.group(1))) == ctrl))
                path_nodes.extend(n for n, m in found if m.group(2))
        for child in obj:
            if child.tag == "object":
                walk(child, io_parent)

    walk(top, top)
    # A name two functions claim names neither (no kernel writes that).
    claimed = [c for c, _ in nvme.values() if c]
    nvme = {b: (c if c and claimed.count(c) == 1 else None, blocks) for b, (c, blocks) in nvme.items()}
    return numa, nvme, path_nodes, len({i for v in nodes.values() for i in v})


def answers(binary, where, args):
    topo = json.loads(facts_main.p2pcheck([binary] + where + args + ["topo", "--json"]))
    check = json.loads(facts_main.p2pcheck([binary] + where + args + ["check", "--json"]))
    return topo, check


def compare(binary, xml, tree, args):
    problems = []
    numa, nvme, path_nodes, node_count = xml_facts(xml)
    topo, check = answers(binary, ["--dump", xml], args)
    got_numa = {f["bdf"]: f["numa_node"] for f in topo["functions"]}
    for busid, node in numa.items():
        if busid in got_numa and node is not None and got_numa[busid] != node:
            problems.append("numa %s: the XML says %s, p2pcheck %s" % (busid, node, got_numa[busid]))
    for pair in pairs_in_full(check).values():
        ends = (numa.get(pair["gpu"]), numa.get(pair["nvme"]))
        why = (pair.get("locality") or {}).get("why") or ""
        if None not in ends and "not in this hwloc XML" in why:
            problems.append("locality %s-%s: the XML gives nodes %s, p2pcheck says %s" % (pair["gpu"], pair["nvme"], ends, why))
    names = {c["bdf"]: c for c in topo["nvme"]}
    check_names = {c["bdf"]: c["name"] for c in check["nvme"]}
    for busid, (ctrl, blocks) in nvme.items():
        got = names.get(busid, {})
        if (got.get("name") or None) != ctrl or (check_names.get(busid) or None) != ctrl:
            problems.append("nvme %s: the XML names %s, p2pcheck %s / %s" % (busid, ctrl, got.get("name"), check_names.get(busid)))
        elif ctrl and sorted(n["name"] for n in got.get("namespaces", [])) != sorted(
                {re.sub(r"c\d+n", "n", b) for b in blocks}):
            problems.append("nvme %s: namespaces %s, p2pcheck %s" % (busid, blocks, got.get("namespaces")))
    mp = [f for f in check["findings"] if f["id"] == "storage.nvme_multipath"]
    if path_nodes and not (mp and mp[0]["level"] == "FAIL" and all(p in mp[0]["message"] for p in path_nodes)):
        problems.append("multipath: the XML shows %s, p2pcheck %s" % (path_nodes, mp))
    if not path_nodes and mp and (mp[0]["level"] != "UNKNOWN" or mp[0].get("state") != "not_carried"):
        problems.append("multipath: no path node in the XML, yet p2pcheck says %s" % mp)
    text = "".join(facts_main.p2pcheck([binary, "--dump", xml] + args + cmd) for cmd in (["check", "-v"], ["topo"], ["paths"]))
    if check["pairs"]:
        first = check["pairs"][0]
        text += facts_main.p2pcheck([binary, "--dump", xml] + args + ["explain", check["devices"][first[0]], check["devices"][first[1]]])
    for words in ("needs root", "not read as root"):
        if words in text:
            problems.append("wording: %r in the output for an XML file: %s" % (
                words, [line for line in text.splitlines() if words in line][:2]))
    if tree:
        problems += against_tree(binary, tree, args, topo, check, node_count)
    facts = "%d functions with a NUMA node, %d NVMe named, %d path nodes" % (
        sum(v is not None for v in numa.values()), sum(c is not None for c, _ in nvme.values()), len(path_nodes))
    return problems, facts


def against_tree(binary, tree, args, topo, check, node_count):
    problems = []
    ttopo, tcheck = answers(binary, ["--root", tree], args)
    tnuma = {f["bdf"]: f["numa_node"] for f in ttopo["functions"]}
    one_node = node_count == 1
    for f in topo["functions"]:
        want, got = tnuma.get(f["bdf"]), f["numa_node"]
        if got is not None and want is not None and got != want and not (want == -1 and one_node):
            problems.append("tree numa %s: the tree says %s, the hwloc import %s" % (f["bdf"], want, got))
    tnames = {c["bdf"]: c["name"] for c in ttopo["nvme"]}
    for c in topo["nvme"]:
        if c["name"] and c["name"] != tnames.get(c["bdf"]):
            problems.append("tree nvme %s: the tree names %s, the hwloc import %s" % (c["bdf"], tnames.get(c["bdf"]), c["name"]))
    tpairs = {key: p["locality"]["class"] for key, p in pairs_in_full(tcheck).items()}
    for p in pairs_in_full(check).values():
        want = tpairs.get((p["gpu"], p["nvme"]))
        if want in ("same_numa_node", "across_numa_nodes") and p["locality"]["class"] != want:
            problems.append("tree locality %s-%s: the tree says %s, the hwloc import %s" % (p["gpu"], p["nvme"], want, p["locality"]))
    tmp = [f["level"] for f in tcheck["findings"] if f["id"] == "storage.nvme_multipath"]
    mp = [f["level"] for f in check["findings"] if f["id"] == "storage.nvme_multipath"]
    if tmp == ["FAIL"] and mp != ["FAIL"]:
        problems.append("tree multipath: the tree FAILs, the hwloc import says %s" % mp)
    return problems


def main():
    argv = sys.argv[1:]
    args = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    tree = None
    if "--tree" in argv:
        tree = argv[argv.index("--tree") + 1]
        argv = [a for a in argv if a not in ("--tree", tree)]
    if len(argv) != 2:
        sys.exit(__doc__)
    problems, facts = compare(argv[0], argv[1], tree, args)
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print("hwloc facts agree: " + facts)


if __name__ == "__main__":
    main()
