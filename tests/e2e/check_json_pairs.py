"""Each pair of a `check --json` document in full, for the tests that compare pairs member by member.

check --json (schema_version 2, docs/json.md) writes a pair as {gpu, nvme, decision, distance[,
kernel]}, its decision once in `decisions`. pairs_in_full() joins them as docs/json.md's
"Migrating from schema_version 1" says a reader does: the row's members, the record's, the NVMe's
name from `nvme`, and `path_distance` from the `functions` table (the upstream links from each
device to the common bridge, or to its host bridge when there is none). A document of another schema or version is an error.
"""


def _chain(functions, bdf, common):
    # The device and its upstream bridges, up to (not including) the common bridge.
    out = []
    while bdf is not None and bdf != common:
        out.append(bdf)
        if len(out) > len(functions):
            raise ValueError(f"check --json: functions: an upstream loop through {bdf}")
        bdf = functions[bdf]["upstream"]
    return out


def path_distance(functions, gpu, nvme, common):
    # Below a common bridge the hops up to it; without one, up to each host bridge.
    return len(_chain(functions, gpu, common)) + len(_chain(functions, nvme, common))


def pairs_in_full(doc):
    """{(gpu, nvme): pair} with every member version 1 printed but `hops` and the bandwidth ceiling."""
    if doc.get("schema") != "p2pcheck.check" or doc.get("schema_version") != 2:
        raise ValueError(f"not a check --json of schema_version 2: schema {doc.get('schema')!r}, "
                         f"schema_version {doc.get('schema_version')!r}")
    names = {c["bdf"]: c["name"] for c in doc.get("nvme", [])}
    functions = doc["functions"]
    out = {}
    for record in doc["pairs"]:
        pair = {"gpu": record["gpu"], "nvme": record["nvme"], "nvme_name": names.get(record["nvme"])}
        pair.update(doc["decisions"][record["decision"]])
        pair["distance"] = record["distance"]
        pair["path_distance"] = path_distance(functions, record["gpu"], record["nvme"], pair["common_bridge"])
        pair["kernel"] = record.get("kernel")
        if pair["fix"] and not pair["fix"]["devices"] and pair["fix"]["kind"] in ("same_switch", "same_host_bridge"):
            pair["fix"] = dict(pair["fix"], devices=[record["gpu"], record["nvme"]])
        out[(record["gpu"], record["nvme"])] = pair
    return out
