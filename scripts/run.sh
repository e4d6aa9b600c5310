#!/usr/bin/env bash
# The main job: build, then check this machine; on a machine without a GPU, also the bundled
# reference fixture (an 8-GPU AMD EPYC server), so a newcomer sees what a real verdict looks like.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh || exit 1
echo "== p2pcheck check (this machine) =="
./build/p2pcheck check "$@"
rc=$?
if [ "$rc" -eq 4 ]; then
  echo
  echo "== no GPU–NVMe pair here; the bundled reference fixture: p2pcheck check --root fixtures/epyc-mi300x-8gpu/root =="
  ./build/p2pcheck --root fixtures/epyc-mi300x-8gpu/root check "$@"
  rc=$?
fi
exit "$rc"
