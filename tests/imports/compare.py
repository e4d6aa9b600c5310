#!/usr/bin/env python3
"""compare.py MODE REFERENCE IMPORT: checks an import's JSON against the tree it came from.

  pairs-exact    check --json (--json-schema 1): every pair's decision is identical (the format carries every fact)
  pairs-decided  check --json: same pairs, same common bridge and path distance; where the import
                 decided, the same verdict; the map type the same or UNKNOWN; what is unknown named
  topo-identity  topo --json: same functions (BDF, parent, IDs, class) and host bridges
  topo-config    topo-identity plus what config space decodes to (port type, ACS, config size)

Prints what differs and exits 1; prints a one-line summary and exits 0 otherwise."""
import json
import sys

EXACT = ("verdict", "map_type", "distance", "path_distance", "common_bridge", "acs_redirect", "acs_unknown", "acs_fix", "unknowns")


def pairs(doc):
    # Each pair in full: schema_version 1 (`--json-schema 1 check --json`; 2's pairs are references).
    if doc.get("schema_version") != 1:
        sys.exit(f"compare.py: check --json schema_version {doc.get('schema_version')!r}; pass --json-schema 1")
    return {(p["gpu"], p["nvme"]): p for p in doc["pairs"]}


def functions(doc):
    return {f["bdf"]: f for f in doc["functions"]}


def main():
    mode, ref_path, imp_path = sys.argv[1:4]
    ref, imp = (json.load(open(p)) for p in (ref_path, imp_path))
    bad = []
    if mode.startswith("pairs"):
        rp, ip = pairs(ref), pairs(imp)
        if set(rp) != set(ip):
            bad.append(f"pairs differ: only in tree {sorted(set(rp) - set(ip))[:3]}, only in import {sorted(set(ip) - set(rp))[:3]}")
        decided = 0
        for key in sorted(set(rp) & set(ip)):
            r, i = rp[key], ip[key]
            fields = EXACT if mode == "pairs-exact" else ("common_bridge", "path_distance")
            for f in fields:
                if r.get(f) != i.get(f):
                    bad.append(f"{key} {f}: tree {r.get(f)!r}, import {i.get(f)!r}")
            for flow in ("to_gpu", "from_gpu"):
                if mode == "pairs-exact" and r["flows"][flow]["verdict"] != i["flows"][flow]["verdict"]:
                    bad.append(f"{key} flows.{flow}: tree {r['flows'][flow]['verdict']}, import {i['flows'][flow]['verdict']}")
            if mode == "pairs-decided":
                if i["verdict"] == "unknown":
                    if not i["unknowns"]:
                        bad.append(f"{key}: unknown without saying what is unknown")
                else:
                    decided += 1
                    if r["verdict"] != i["verdict"]:
                        bad.append(f"{key} verdict: tree {r['verdict']!r}, import {i['verdict']!r} (the import decided wrongly)")
                # A verdict can stand while the map type stays open (on Zen both ways are allowed).
                # (what is unknown then may change only the route: unknown_either_way names it)
                named = i["unknowns"] or i.get("unknown_either_way")
                if i["map_type"] != r["map_type"] and (i["map_type"] != "UNKNOWN" or not named):
                    bad.append(f"{key} map_type: tree {r['map_type']!r}, import {i['map_type']!r}")
        summary = f"{len(rp)} pairs" + (f", {decided} decided by the import" if mode == "pairs-decided" else "")
    else:
        rf, inf = functions(ref), functions(imp)
        if set(rf) != set(inf):
            bad.append(f"functions differ: only in reference {sorted(set(rf) - set(inf))[:5]}, only in import {sorted(set(inf) - set(rf))[:5]}")
        keys = ["parent", "vendor", "device", "class"]
        if mode == "topo-config":
            keys += ["port_type", "acs", "config_size", "header_type"]
        for bdf in sorted(set(rf) & set(inf)):
            for k in keys:
                if rf[bdf].get(k) != inf[bdf].get(k):
                    bad.append(f"{bdf} {k}: reference {rf[bdf].get(k)!r}, import {inf[bdf].get(k)!r}")
        hb = lambda d: {(h["id"], h.get("bridge_device")) for h in d["host_bridges"]}
        if hb(ref) != hb(imp):
            bad.append(f"host bridges: reference {sorted(hb(ref))}, import {sorted(hb(imp))}")
        summary = f"{len(rf)} functions"
    for line in bad[:12]:
        print("   ", line)
    if not bad:
        print("   ", summary)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
