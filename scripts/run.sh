#!/usr/bin/env bash
# The main job: build the tool (only it: no unit tests), then check this machine; on a machine
# without a GPU, also the bundled reference fixture (an 8-GPU AMD EPYC server), so a newcomer sees
# what a real verdict looks like.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh --tool || exit 1
echo "== p2pcheck check (this machine) =="
./build/p2pcheck check "$@"
rc=$?
if [ "$rc" -eq 4 ]; then
  echo
  # Fixture trees are not committed: generate this one (python3 stdlib, under a second) into
  # build/fixtures and run from build/ so the report names it fixtures/epyc-mi300x-8gpu/root.
  python3 tools/mkfixture.py fixtures/epyc-mi300x-8gpu/machine.toml --out build/fixtures > /dev/null || exit 1
  echo "== no GPU–NVMe pair here; the bundled reference fixture: p2pcheck check --root fixtures/epyc-mi300x-8gpu/root =="
  (cd build && ./p2pcheck --root fixtures/epyc-mi300x-8gpu/root check "$@")
  rc=$?
fi
exit "$rc"
