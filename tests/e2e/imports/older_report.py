#!/usr/bin/env python3
"""older_report.py TREE_CHECK TREE_TOPO IMPORT_CHECK IMPORT_TOPO IMPORT_TEXT: an older nvidia-bug-report
(NVIDIA and PLX functions dumped, the rest only listed) judged honestly against the tree it came from.

  - every GPU of the tree is in the import; an NVIDIA GPU (its config dumped) with the tree's link
    speed and width, and the tree's BAR sizes (from the -v lines of its dump section), never none
  - a pair the import decides has the tree's verdict, and claims a map type (BUS_ADDR or through the
    host bridge) below a common bridge only with config space for every function on its path: with
    any ACS unknown, a verdict is given only where it stands either way (map type UNKNOWN); through
    the root complex the kernel reads no ACS, and the host bridge's IDs come from lspci -nn
  - a pair the tree does not have is one whose NVMe's driver the report does not show (the tree
    leaves out an NVMe bound to vfio-pci; the report names no driver for a function it does not dump)
  - where the tree has an NVMe the report does not dump, the text says so and what to ask for

Prints what is wrong and exits 1; prints a one-line summary and exits 0 otherwise."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check_json_pairs import pairs_in_full  # noqa: E402

NOTE = "no NVMe config space in this report (its lspci sections dump only NVIDIA and PLX devices)"
ASK = "ask for `sudo lspci -xxxx` and `lspci -tv` from the machine, or a `p2pcheck capture`"


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    tree_check, tree_topo, imp_check, imp_topo = (json.load(open(p)) for p in sys.argv[1:5])
    text = open(sys.argv[5]).read()
    bad = []
    tfn = {f["bdf"]: f for f in tree_topo["functions"]}
    ifn = {f["bdf"]: f for f in imp_topo["functions"]}
    for gpu in tree_topo["gpus"]:
        if gpu not in imp_topo["gpus"]:
            bad.append(f"GPU {gpu} of the tree is not in the import")
        elif tfn[gpu]["vendor"] == "10de":
            want = {k: tfn[gpu]["link"][k] for k in ("speed_gts", "width")}
            got = {k: ifn[gpu]["link"][k] for k in ("speed_gts", "width")}
            if want != got:
                bad.append(f"GPU {gpu}: link {got}, the tree's {want}")
            want_bars = [(b["index"], b["size"]) for b in tfn[gpu]["bars"] if b["index"] < 6]
            got_bars = [(b["index"], b["size"]) for b in ifn[gpu]["bars"]]
            if want_bars != got_bars:
                bad.append(f"GPU {gpu}: BARs (index, size) {got_bars}, the tree's {want_bars}")
    tp, ip = pairs_in_full(tree_check), pairs_in_full(imp_check)
    decided = 0
    for key, pair in ip.items():
        if pair["verdict"] == "unknown":
            continue
        decided += 1
        if key not in tp:
            if ifn[key[1]]["driver"] is not None:
                bad.append(f"pair {key}: {pair['verdict']}, not a pair of the tree")
            continue
        if tp[key]["verdict"] != pair["verdict"]:
            bad.append(f"pair {key}: {pair['verdict']}, the tree's {tp[key]['verdict']}")
        common = pair["common_bridge"]
        if common and pair["map_type"] != "UNKNOWN":
            path = [common]
            for end in key:
                at = end
                while at and at != common:
                    path.append(at)
                    at = ifn[at]["parent"]
            for b in path:
                if not ifn[b]["config_size"]:
                    bad.append(f"pair {key}: {pair['map_type']} below {common}, but {b} has no config space in the report")
    nvme_undumped = [n["bdf"] for n in tree_topo["nvme"] if tfn[n["bdf"]]["vendor"] not in ("10de", "10b5")]
    if nvme_undumped and (NOTE not in text or ASK not in text):
        bad.append(f"NVMe {nvme_undumped[0]} is not dumped, and the text does not say so and what to ask for")
    for line in bad[:20]:
        print(line)
    if bad:
        sys.exit(1)
    print(f"{len(tree_topo['gpus'])} GPUs, {len(ip)} pairs ({decided} decided, as the tree), {len(nvme_undumped)} NVMe "
          "without config space noted")


if __name__ == "__main__":
    main()
