#!/usr/bin/env python3
"""The README's examples are real output: every `$ cd build && ./p2pcheck ...` or `$ ./p2pcheck ...`
example in README.md is run (from the directory holding the generated fixtures/, with BINARY as
./p2pcheck) and each line it shows, except "...", must appear in the output, in order.
Usage: readme_examples.py README.md BINARY TREES_PARENT"""
import os
import subprocess
import sys


def examples(readme):
    lines = open(readme, encoding="utf-8").read().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        cmd = None
        for prefix in ("    $ cd build && ./p2pcheck ", "    $ ./p2pcheck "):
            if line.startswith(prefix):
                cmd = "./p2pcheck " + line[len(prefix):]
        i += 1
        if cmd is None:
            continue
        shown = []
        while i < len(lines) and lines[i].startswith("    ") and not lines[i].startswith("    $ "):
            shown.append(lines[i][4:])
            i += 1
        # A blank line inside the block belongs to the output when more output follows it.
        while i + 1 < len(lines) and lines[i] == "" and lines[i + 1].startswith("    ") \
                and not lines[i + 1].startswith("    $ "):
            shown.append("")
            i += 1
            while i < len(lines) and lines[i].startswith("    ") and not lines[i].startswith("    $ "):
                shown.append(lines[i][4:])
                i += 1
        yield cmd, shown


def main():
    readme, binary, where = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3]
    failed = ran = 0
    for cmd, shown in examples(readme):
        env = dict(os.environ, PATH=os.path.dirname(binary) + ":" + os.environ["PATH"])
        out = subprocess.run(["bash", "-c", cmd.replace("./p2pcheck", binary, 1).replace("./p2pcheck", binary)],
                             cwd=where, env=env, capture_output=True, text=True).stdout.splitlines()
        ran += 1
        at = 0
        for want in shown:
            if want == "..." or want == "":
                continue
            while at < len(out) and out[at] != want:
                at += 1
            if at == len(out):
                print(f"FAIL README example `{cmd}`: its line is not in the output (in order):\n  {want}")
                failed += 1
                break
            at += 1
    if ran == 0:
        print("FAIL no README example found")
        failed += 1
    print(f"{ran} README examples run, {failed} differ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
