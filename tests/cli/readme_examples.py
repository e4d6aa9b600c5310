#!/usr/bin/env python3
"""The README's examples are real output: every `$ cd build && ./p2pcheck ...` or `$ ./p2pcheck ...`
example in README.md is run with BINARY as ./p2pcheck, and each line it shows, except "...", must
appear in the output, in order; an example that crashes (a signal, a sanitizer's report) fails.
The README is written from the source tree with its build in build/: `fixtures/...` are the trees
generated in the build directory, `../fixtures/...` and `../README.md` are the source tree's. So the
examples run in a scratch copy of that layout, made of links: <scratch>/build (the working
directory) holds fixtures -> BUILD/fixtures, and <scratch> holds the source tree's entries. The
examples then read as written, their output names the paths as the README does, and whatever they
write stays in the scratch directory, whichever BUILD directory the tests run from.
Usage: readme_examples.py README.md BINARY BUILD   (BUILD: the build directory, holding fixtures/)"""
import os
import re
import subprocess
import sys
import tempfile


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


# What a crash leaves: a sanitizer's report, or bash's word for a command killed by a signal.
CRASHED = re.compile(r"==[0-9]+==ERROR: [A-Za-z]+Sanitizer|^SUMMARY: [A-Za-z]+Sanitizer|: runtime error: |"
                     r"^bash: line [0-9]+: +[0-9]+ (Segmentation fault|Aborted|Bus error|Killed)", re.M)


def layout(scratch, readme, build):
    """<scratch> as the source tree and <scratch>/build as its build directory, all links."""
    src = os.path.dirname(os.path.realpath(readme))
    for name in os.listdir(src):
        if name != "build":
            os.symlink(os.path.join(src, name), os.path.join(scratch, name))
    os.mkdir(os.path.join(scratch, "build"))
    os.symlink(os.path.join(os.path.realpath(build), "fixtures"), os.path.join(scratch, "build", "fixtures"))
    return os.path.join(scratch, "build")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    readme, binary, build = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3]
    if not os.path.isdir(os.path.join(build, "fixtures")):
        sys.exit(f"FAIL no generated fixtures in {build}/fixtures (python3 tools/mkfixture.py --all --out {build}/fixtures)")
    with tempfile.TemporaryDirectory(prefix="readme-examples.") as scratch:
        return run(readme, binary, layout(scratch, readme, build))


def run(readme, binary, where):
    failed = ran = 0
    for cmd, shown in examples(readme):
        env = dict(os.environ, PATH=os.path.dirname(binary) + ":" + os.environ["PATH"])
        done = subprocess.run(["bash", "-c", cmd.replace("./p2pcheck", binary, 1).replace("./p2pcheck", binary)],
                              cwd=where, env=env, capture_output=True, text=True)
        out = done.stdout.splitlines()
        ran += 1
        if done.returncode < 0 or done.returncode >= 128 or CRASHED.search(done.stderr + done.stdout):
            print(f"FAIL README example `{cmd}` crashed (exit {done.returncode}):\n  " +
                  "\n  ".join((done.stderr or done.stdout).splitlines()[-5:]))
            failed += 1
            continue
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
