#!/usr/bin/env python3
"""json_same.py A B [--placeholders]: exit 0 when two p2pcheck JSON documents are equal apart from
`source` (where the bytes came from) and `capture` (what a replay says about itself, with
`identity.redacted`). With
--placeholders, strings may also differ where B holds a redaction placeholder. Prints the first
differences otherwise.

--live: A is a run on the live machine: its live-only findings (id "kmod.*": the kernel module
was or was not asked) are left out, since a replay never asks a kernel module.

json_same.py --list FILE: each line "NAME<TAB>A<TAB>B[<TAB>--placeholders]"; one process for many
comparisons (python's start-up dominates otherwise). Prints "FAIL NAME" per difference and
"N passed, M failed"."""
import json
import sys

MARKERS = ("SERIAL-0", "ID-0", "host-0", "00000000-0000-4000-8000-", "02:00:00:00:", "0000000000000000 ")


def load(path, live=False):
    with open(path) as f:
        doc = json.load(f)
    if isinstance(doc, dict):
        doc.pop("source", None)
        doc.pop("capture", None)
        # Whether the identity is redacted describes the capture, like `capture`; its values are
        # compared (as placeholders with --placeholders).
        if isinstance(doc.get("identity"), dict):
            doc["identity"].pop("redacted", None)
        if live and "findings" in doc:
            doc["findings"] = [f for f in doc["findings"] if not f.get("id", "").startswith("kmod.")]
    return doc


def diff(a, b, where, loose, out):
    if isinstance(a, str) and isinstance(b, str):
        if a != b and not (loose and any(m in b for m in MARKERS)):
            out.append(f"{where}: {a!r} != {b!r}")
    elif type(a) is not type(b):
        out.append(f"{where}: {type(a).__name__} != {type(b).__name__}")
    elif isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{where}/{k}: only on one side")
            else:
                diff(a[k], b[k], f"{where}/{k}", loose, out)
    elif isinstance(a, list):
        if len(a) != len(b):
            out.append(f"{where}: {len(a)} != {len(b)} entries")
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{where}/{i}", loose, out)
    elif a != b:
        out.append(f"{where}: {a!r} != {b!r}")


def main():
    if sys.argv[1] == "--list":
        passed = failed = 0
        with open(sys.argv[2]) as f:
            for line in f:
                name, a, b, *flags = line.rstrip("\n").split("\t")
                out = []
                try:
                    diff(load(a, "--live" in flags), load(b), "", "--placeholders" in flags, out)
                except (OSError, ValueError) as e:
                    out.append(str(e))
                if out:
                    failed += 1
                    print(f"FAIL {name}")
                    for d in out[:10]:
                        print("   ", d)
                else:
                    passed += 1
        print(f"{passed} passed, {failed} failed")
        sys.exit(1 if failed else 0)
    loose = "--placeholders" in sys.argv
    a, b = load(sys.argv[1], "--live" in sys.argv), load(sys.argv[2])
    out = []
    diff(a, b, "", loose, out)
    for line in out[:10]:
        print("   ", line)
    sys.exit(1 if out else 0)


if __name__ == "__main__":
    main()
