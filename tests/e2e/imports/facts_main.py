"""The command line every *_facts.py script shares: BINARY INPUT [-- p2pcheck arguments...]; each
problem on a line of its own and exit 1, else one line saying which facts agreed."""
import os
import subprocess
import sys


def run(doc, compare, what):
    argv = sys.argv[1:]
    args = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    if len(argv) != 2:
        sys.exit(doc)
    problems, facts = compare(argv[0], argv[1], args)
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(what + " facts agree: " + facts)


def p2pcheck(cmd):
    """A p2pcheck run's stdout: any result's exit code (PASS, FAIL, UNKNOWN, NO PAIRS), else stop."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1, 2, 4):
        sys.exit("%s: exit %d: %s\n%s" % (os.path.basename(sys.argv[0]), p.returncode, " ".join(cmd), p.stderr))
    return p.stdout


def full(bdf):
    """A PCI address with its domain (lspci leaves out 0000:)."""
    return bdf if bdf.count(":") == 2 else "0000:" + bdf
