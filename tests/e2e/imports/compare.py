#!/usr/bin/env python3
"""compare.py MODE REFERENCE IMPORT [--none-decided]: checks an import's JSON against the tree it came from.

  pairs-exact    check --json: every pair's decision is identical (the format carries every fact)
  pairs-decided  check --json: same pairs, same common bridge and path distance; where the import
                 decided, the same verdict; the map type the same or UNKNOWN; what is unknown named
  topo-identity  topo --json: same functions (BDF, parent, IDs, class) and host bridges
  topo-config    topo-identity plus what config space decodes to (port type, ACS, config size)
  topo-text      topo-config for lspci -vvv text, which cannot say how far config space was read where a
                 function lists no extended capability: there the import's 256 bytes may stand for the
                 reference's 4096, only if its ACS is then unknown (never absent) or it is conventional PCI

The pairs modes need pairs to compare: the reference must have GPU-NVMe pairs and at least one of
them must be decided (a verdict other than unknown) in the import, as it is in the tree; with
--none-decided the caller expects the import to decide none (every pair unknown, each naming what
is unknown). The topo modes need at least one function. An empty comparison is never a pass.

Prints what differs and exits 1; prints a one-line summary and exits 0 otherwise."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check_json_pairs import pairs_in_full  # noqa: E402

EXACT = ("verdict", "map_type", "distance", "path_distance", "common_bridge", "acs_redirect", "acs_unknown", "acs_fix", "unknowns")


def load(path, schema):
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        sys.exit(f"compare.py: {path} is not JSON ({e}): did the command that wrote it fail?")
    if doc.get("schema") != schema:
        sys.exit(f"compare.py: {path}: schema {doc.get('schema')!r}, wanted {schema!r}")
    return doc


def pairs(doc, path):
    # Each pair in full: its record joined with its decisions row.
    try:
        return pairs_in_full(doc)
    except (ValueError, KeyError, IndexError, TypeError) as e:
        sys.exit(f"compare.py: {path}: {e}")


def functions(doc):
    return {f["bdf"]: f for f in doc["functions"]}


def main():
    if len(sys.argv) not in (4, 5) or sys.argv[4:] not in ([], ["--none-decided"]) or \
            sys.argv[1] not in ("pairs-exact", "pairs-decided", "topo-identity", "topo-config", "topo-text"):
        sys.exit(__doc__)
    mode, ref_path, imp_path = sys.argv[1:4]
    none_decided = sys.argv[4:] == ["--none-decided"]
    schema = "p2pcheck.check" if mode.startswith("pairs") else "p2pcheck.topo"
    ref, imp = (load(p, schema) for p in (ref_path, imp_path))
    bad = []
    if mode.startswith("pairs"):
        rp, ip = pairs(ref, ref_path), pairs(imp, imp_path)
        # A format without drivers (hwloc) cannot show that a function is bound so no one can use
        # it (an NVMe VF on vfio-pci): the tree leaves it out, the import pairs it like any other.
        unusable = {b for f in ref["findings"] if f["id"] == "inventory.unusable" for b in f["devices"]}
        if not any(f["id"] == "inventory.unusable" for f in imp["findings"]):
            ip = {k: v for k, v in ip.items() if k[0] not in unusable and k[1] not in unusable}
        if set(rp) != set(ip):
            bad.append(f"pairs differ: only in tree {sorted(set(rp) - set(ip))[:3]}, only in import {sorted(set(ip) - set(rp))[:3]}")
        decided = 0  # pairs the import decided
        for key in sorted(set(rp) & set(ip)):
            r, i = rp[key], ip[key]
            fields = EXACT if mode == "pairs-exact" else ("common_bridge", "path_distance")
            for f in fields:
                if r.get(f) != i.get(f):
                    bad.append(f"{key} {f}: tree {r.get(f)!r}, import {i.get(f)!r}")
            for flow in ("to_device", "to_storage"):
                if mode == "pairs-exact" and r["flows"][flow]["verdict"] != i["flows"][flow]["verdict"]:
                    bad.append(f"{key} flows.{flow}: tree {r['flows'][flow]['verdict']}, import {i['flows'][flow]['verdict']}")
            if i["verdict"] != "unknown":
                decided += 1
            if mode == "pairs-decided":
                if i["verdict"] == "unknown":
                    if not i["unknowns"]:
                        bad.append(f"{key}: unknown without saying what is unknown")
                elif r["verdict"] != i["verdict"]:
                    bad.append(f"{key} verdict: tree {r['verdict']!r}, import {i['verdict']!r} (the import decided wrongly)")
                # A verdict can stand while the map type stays open (on Zen both ways are allowed).
                # (what is unknown then may change only the route: unknown_either_way names it)
                named = i["unknowns"] or i.get("unknown_either_way")
                if i["map_type"] != r["map_type"] and (i["map_type"] != "UNKNOWN" or not named):
                    bad.append(f"{key} map_type: tree {r['map_type']!r}, import {i['map_type']!r}")
        machine = f"the tree has {len(ref.get('gpus', []))} GPU(s), {len(ref.get('nvme', []))} NVMe and {len(rp)} pair(s)"
        # First, so that a long list of differences never hides it.
        if not rp:
            bad.insert(0, f"no GPU-NVMe pair to compare ({machine}): this test compares pairs, an empty list is no pass")
        elif none_decided and decided:
            bad.insert(0, f"the import decided {decided} of {len(ip)} pair(s) ({machine}); the test expects none decided")
        elif not none_decided and not decided:
            bad.insert(0, f"no GPU-NVMe pair decided by the import: every verdict unknown ({machine}); "
                          "the test expects at least one decided pair")
        summary = f"{len(rp)} pairs, {decided} decided by the import"
    else:
        rf, inf = functions(ref), functions(imp)
        if set(rf) != set(inf):
            bad.append(f"functions differ: only in reference {sorted(set(rf) - set(inf))[:5]}, only in import {sorted(set(inf) - set(rf))[:5]}")
        keys = ["parent", "vendor", "device", "class"]
        if mode in ("topo-config", "topo-text"):
            keys += ["port_type", "acs", "config_size", "header_type"]
        for bdf in sorted(set(rf) & set(inf)):
            r, i = rf[bdf], inf[bdf]
            # The text's silence on extended config space: its size, and so ACS, left open.
            open_size = mode == "topo-text" and (r["config_size"], i["config_size"]) == (4096, 256) and \
                (i["port_type"] == "pci" or i["acs"]["presence"] == "unknown")
            for k in keys:
                if open_size and k == "config_size" or (open_size and k == "acs" and i["port_type"] != "pci"):
                    continue
                if rf[bdf].get(k) != inf[bdf].get(k):
                    bad.append(f"{bdf} {k}: reference {rf[bdf].get(k)!r}, import {inf[bdf].get(k)!r}")
        hb = lambda d: {(h["id"], h.get("bridge_device")) for h in d["host_bridges"]}
        if hb(ref) != hb(imp):
            bad.append(f"host bridges: reference {sorted(hb(ref))}, import {sorted(hb(imp))}")
        if not rf:
            bad.insert(0, "no PCI function in the reference: nothing compared, which is no pass")
        summary = f"{len(rf)} functions"
    for line in bad[:12]:
        print("   ", line)
    if not bad:
        print("   ", summary)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
