"""The command line: python3 tools/mkfixture.py [--all] [--out DIR] [--nonroot] [machine.toml ...]."""

import argparse
import os

from .machine import generate

# tools/mkfixture/cli.py -> the repository's fixtures/ (the --help text names it from tools/)
DEFAULT_FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "..", "fixtures")
NONROOT_CONFIG_BYTES = 64


def main(argv=None):
    parser = argparse.ArgumentParser(description="Generate a fake Linux root from a machine.toml")
    parser.add_argument("toml", nargs="*", help="fixtures/<name>/machine.toml")
    parser.add_argument("--all", action="store_true",
                        help="regenerate every fixtures/*/machine.toml")
    parser.add_argument("--fixtures", default=None,
                        help="fixtures directory (default: ../fixtures)")
    parser.add_argument("--out", default=None,
                        help="write <out>/<name>/root instead of next to the toml")
    parser.add_argument("--nonroot", action="store_true",
                        help="truncate config files to 64 bytes (like config_bytes = 64)")
    args = parser.parse_args(argv)
    paths = list(args.toml)
    if args.all:
        fixtures = args.fixtures or DEFAULT_FIXTURES
        for name in sorted(os.listdir(fixtures)):
            path = os.path.join(fixtures, name, "machine.toml")
            if os.path.isfile(path):
                paths.append(path)
    if not paths:
        parser.error("give a machine.toml or --all")
    for path in paths:
        out_root = None
        if args.out:
            machine_name = os.path.basename(os.path.dirname(os.path.abspath(path)))
            out_root = os.path.join(args.out, machine_name, "root")
        written = generate(path, out_root, NONROOT_CONFIG_BYTES if args.nonroot else None)
        print("mkfixture: wrote %s" % os.path.relpath(written))
    return 0
