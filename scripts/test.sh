#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (ctest), the release suite included. Extra arguments
# go to ctest, e.g. scripts/test.sh -LE lab for the quick loop without the QEMU lab.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
# The QEMU lab's own packages (qemu, busybox, kernel build tools); its kernels build on first run.
tests/lab/setup-deps.sh
# The release suite (label `release`: the portable binary built twice against a bullseye sysroot,
# its packages installed in three chroots) runs with everything else; a loop that leaves anything
# out leaves it out too (`-LE lab` -> `-LE 'lab|release'`), unless an argument names it.
args=() named=0
for a in "$@"; do case "$a" in *release*) named=1 ;; esac; done
while [ $# -gt 0 ]; do
  if [ "$1" = -LE ] && [ $# -gt 1 ] && [ "$named" = 0 ]; then args+=(-LE "$2|release"); shift 2; continue; fi
  args+=("$1"); shift
done
ctest --test-dir build --output-on-failure -j"$(nproc)" "${args[@]}"
