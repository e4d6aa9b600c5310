"""The command line every *_facts.py script shares: BINARY INPUT [-- p2pcheck arguments...]; each
problem on a line of its own and exit 1, else one line saying which facts agreed."""
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
