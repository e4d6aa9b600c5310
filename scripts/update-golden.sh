#!/usr/bin/env bash
# Regenerates every fixture tree from its machine.toml and every fixture's expected output.
# Review `git diff fixtures/` before committing: the expected files are the reviewed verdicts.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 tools/mkfixture.py --all
scripts/build.sh
tests/golden.sh build/p2pcheck update
