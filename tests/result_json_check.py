#!/usr/bin/env python3
"""What one `check --json` must hold whatever the input (tests/result_test.sh runs it on every input):
- no PASS without evidence: every PASS finding is `observed`, with evidence naming a file and a value;
- every finding's state is one of the five provenance states, a not_carried one never FAIL or WARN;
- the result is the one the counts give under the document's own fail_on (README's table);
- the counts are the pairs' verdicts and the concerning findings' levels.
Usage: result_json_check.py CHECK.json  (exit 1 with one line per problem)"""
import json
import sys

STATES = {"observed", "not_carried", "unreadable", "supplied", "what_if"}


def result_for(counts, fail_on):
    if counts["pairs"] == 0:
        return "NO PAIRS"
    checks = counts["checks"]
    unknown = counts["undecided"] > 0 or checks["unknown"] > 0
    if (("refused" in fail_on and counts["refused"] > 0) or ("stack" in fail_on and checks["failing"] > 0)
            or ("unknown" in fail_on and unknown) or ("warn" in fail_on and checks["warn"] > 0)):
        return "FAIL"
    return "UNKNOWN" if unknown else "PASS"


def problems(doc):
    out = []
    for f in doc["findings"]:
        where = f"finding {f['id']} ({f['subject'] or 'machine'})"
        if f["state"] not in STATES:
            out.append(f"{where}: state {f['state']!r}")
        if f["level"] == "PASS":
            if f["state"] != "observed":
                out.append(f"{where}: PASS from a {f['state']} fact")
            if not f["evidence"] or any(not e["file"] or not e["value"] for e in f["evidence"]):
                out.append(f"{where}: PASS without evidence: {f['message']}")
        if f["state"] == "not_carried" and f["level"] in ("FAIL", "WARN"):
            out.append(f"{where}: {f['level']} from a fact the input cannot carry")
    counts = doc["counts"]
    want = result_for(counts, doc["fail_on"])
    if doc["result"] != want:
        out.append(f"result {doc['result']} but the counts {counts} under fail_on {doc['fail_on']} give {want}")
    concerning = [f for f in doc["findings"] if f["concerns_selected_pairs"]]
    for level, key in (("FAIL", "failing"), ("UNKNOWN", "unknown"), ("WARN", "warn")):
        n = sum(f["level"] == level for f in concerning)
        if counts["checks"][key] != n:
            out.append(f"counts.checks.{key} {counts['checks'][key]} but {n} {level} findings concern the pairs")
    if counts["allowed"] + counts["refused"] + counts["undecided"] != counts["pairs"]:
        out.append(f"counts do not add up: {counts}")
    return out


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    found = problems(doc)
    for p in found:
        print(p)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
