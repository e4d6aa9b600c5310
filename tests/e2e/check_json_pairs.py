"""Each pair of a `check --json` document in full, for the tests that compare pairs member by member.

check --json (schema_version 4, docs/json.md) writes a pair as [gpu, nvme, decision, distance,
gpu_ports, nvme_ports]: indexes into `devices` and `decisions`, the kernel's distance, and its two
sides' ACS redirect ports as indexes into `port_lists`; the module's answers are in `kernel_answers`
by pair index. records() gives each as a dict; pairs_in_full() joins them as docs/json.md's
"Migrating" sections say a reader does: the row's members, the record's, the NVMe's name from
`nvme`, the ACS redirect ports with their `acs_fix` and fix, and `path_distance` from the
`functions` table (the upstream links from each device to the common bridge, or to its host bridge
when there is none). The row's sentences speak of "the pair's listed ports" (explain --json names
them). A document of another schema or version is an error.
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


def records(doc):
    """Each pair as {gpu, nvme, decision, distance, acs_redirect, kernel}: BDFs, its decisions row's
    index, the kernel's distance, its ACS redirect ports (the GPU side's, then the NVMe side's) and
    the p2pprobe module's answer (None where it gave none)."""
    if doc.get("schema") != "p2pcheck.check" or doc.get("schema_version") != 4:
        raise ValueError(f"not a check --json of schema_version 4: schema {doc.get('schema')!r}, "
                         f"schema_version {doc.get('schema_version')!r}")
    devices = doc["devices"]
    kernel = {}
    for answer in doc["kernel_answers"]:
        answer = dict(answer)
        kernel[answer.pop("pair")] = answer
    lists = doc["port_lists"]
    return [{"gpu": devices[g], "nvme": devices[n], "decision": d, "distance": distance,
             "acs_redirect": lists[gp] + lists[np], "kernel": kernel.get(i)}
            for i, (g, n, d, distance, gp, np) in enumerate(doc["pairs"])]


def pairs_in_full(doc):
    """{(gpu, nvme): pair} with every member version 1 printed but `hops` and the bandwidth ceiling,
    and the locality its decision row names."""
    names = {c["bdf"]: c["name"] for c in doc.get("nvme", [])}
    functions = doc["functions"]
    out = {}
    for record in records(doc):
        pair = {"gpu": record["gpu"], "nvme": record["nvme"], "nvme_name": names.get(record["nvme"])}
        pair.update(doc["decisions"][record["decision"]])
        pair["distance"] = record["distance"]
        pair["path_distance"] = path_distance(functions, record["gpu"], record["nvme"], pair["common_bridge"])
        pair["kernel"] = record["kernel"]
        ports = record["acs_redirect"]
        pair["acs_redirect"] = ports
        pair["acs_fix"] = "pci=disable_acs_redir=" + ";".join(ports) if ports else None
        if pair["fix"] and not pair["fix"]["devices"] and pair["fix"]["kind"] in ("same_switch", "same_host_bridge"):
            pair["fix"] = dict(pair["fix"], devices=[record["gpu"], record["nvme"]])
        if pair["fix"] and pair["fix"]["kind"] == "disable_acs_redir":
            pair["fix"] = dict(pair["fix"], devices=ports, kernel_cmdline=pair["acs_fix"])
        out[(record["gpu"], record["nvme"])] = pair
    return out
