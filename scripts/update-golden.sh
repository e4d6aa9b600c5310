#!/usr/bin/env bash
# One command to regenerate every fixture's expected output: builds, generates every fixture tree
# from its machine.toml into build/fixtures (trees are never committed), then rewrites
# fixtures/<name>/expected/. Review `git diff fixtures/` before committing: the expected files are
# the reviewed verdicts. (The QEMU lab's fixtures/lab/*/expected: tests/lab/replay_test.sh BINARY update.)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
rm -rf build/fixtures
python3 tools/mkfixture.py --all --out build/fixtures
tests/e2e/golden.sh build/p2pcheck update build/fixtures
