#!/usr/bin/env python3
"""What one `check --json` must hold whatever the input (tests/e2e/result_test.sh runs it on every input):
- no PASS without evidence: every PASS finding is `observed`, with evidence naming a file and a value;
- every finding's state is one of the five provenance states, a not_carried one never FAIL or WARN;
- the result is the one the counts give under the document's own fail_on (README's table);
- the counts are the pairs' verdicts and the concerning findings' levels.
Usage: result_json_check.py CHECK.json  (exit 1 with one line per problem)
       result_json_check.py --agreement TSV  (rows NAME, JSON, RESULT word of the text, STRICT JSON or "",
       its exit code: each document as above, its result the text's, the strict one's exit its result's
       and FAIL where the text says FAIL; one "FAIL NAME: why" line per input that does not hold)"""
import json
import sys

STATES = {"observed", "not_carried", "unreadable", "supplied", "what_if"}


def result_for(counts, fail_on):
    if counts["pairs"] == 0:
        return "NO PAIRS"
    checks = counts["checks"]
    unknown = counts["undecided"] > 0 or checks["unknown"] > 0
    if counts["allowed"] == 0 and counts["refused"] > 0:
        return "FAIL"  # no policy passes a selection with no pair allowed
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
    # No PASS beyond the evidence (issue 46): under the default policy or a tighter one, a PASS has
    # no refused pair, no failing finding that concerns the pairs, no doubt about the kernel.
    if doc["result"] == "PASS" and {"refused", "stack"} <= set(doc["fail_on"]):
        if counts["refused"] or counts["allowed"] == 0:
            out.append(f"PASS with {counts['refused']} refused and {counts['allowed']} allowed")
        for f in concerning:
            if f["level"] in ("FAIL", "UNKNOWN"):
                out.append(f"PASS while {f['id']} ({f['subject'] or 'machine'}) is {f['level']}")
        bad = [f for f in doc["findings"] if f["id"] == "kernel.known_bad" and f["level"] != "PASS"
               and f["level"] != "INFO"]
        if bad:
            out.append(f"PASS on a kernel that is or may be known-bad: {bad[0]['message']}")
    for level, key in (("FAIL", "failing"), ("UNKNOWN", "unknown"), ("WARN", "warn")):
        n = sum(f["level"] == level for f in concerning)
        if counts["checks"][key] != n:
            out.append(f"counts.checks.{key} {counts['checks'][key]} but {n} {level} findings concern the pairs")
    if counts["allowed"] + counts["refused"] + counts["undecided"] != counts["pairs"]:
        out.append(f"counts do not add up: {counts}")
    return out


CODES = {"PASS": 0, "FAIL": 1, "UNKNOWN": 2, "NO PAIRS": 4}


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def agreement_problem(json_path, word, strict_path, strict_rc):
    """Why one input's JSON disagrees with its text, or "" when it agrees."""
    try:
        doc = load(json_path)
    except (OSError, ValueError) as e:
        return f"check --json is not JSON: {e}"
    if doc.get("result") != word:
        return f"JSON result '{doc.get('result')}' but RESULT: {word}"
    found = problems(doc)
    if found:
        return " ".join(found[:3])
    if not strict_path:
        return ""
    try:
        strict = load(strict_path)
    except (OSError, ValueError) as e:
        return f"--fail-on all: not JSON: {e}"
    found = problems(strict)
    if found:
        return "--fail-on all: " + " ".join(found[:3])
    strict_word = strict.get("result")
    if CODES.get(strict_word, 9) != int(strict_rc):
        return f"--fail-on all exits {strict_rc}, says {strict_word}"
    if word == "FAIL" and strict_word != "FAIL":
        return f"--fail-on all turned FAIL into {strict_word}"
    return ""


def agreement(table):
    failed = 0
    with open(table, encoding="utf-8") as f:
        for row in f:
            name, json_path, word, strict_path, strict_rc = row.rstrip("\n").split("\t")
            why = agreement_problem(json_path, word, strict_path, strict_rc or "9")
            if why:
                print(f"FAIL {name}: {why}")
                failed += 1
    return 1 if failed else 0


def main():
    if sys.argv[1:2] == ["--agreement"]:
        return agreement(sys.argv[2])
    found = problems(load(sys.argv[1]))
    for p in found:
        print(p)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
