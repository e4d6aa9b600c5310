#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (ctest). Extra arguments go to ctest,
# e.g. scripts/test.sh -LE lab for the quick loop without the QEMU lab.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
# The QEMU lab's own packages (qemu, busybox, kernel build tools); its kernels build on first run.
tests/lab/setup-deps.sh
# The release suite (label `release`: the portable binary built twice against a bullseye sysroot,
# its packages installed in three chroots) costs two cold builds a run: `scripts/test.sh -L release`.
# `-L release` asks for it; any -LE given also keeps it out (`-LE lab` -> `-LE 'lab|release'`).
args=() excluded=0
while [ $# -gt 0 ]; do
  if [ "$1" = -LE ] && [ $# -gt 1 ]; then args+=(-LE "$2|release"); excluded=1; shift 2; continue; fi
  case "$1" in *release*) excluded=1 ;; esac
  args+=("$1"); shift
done
[ "$excluded" = 1 ] || args+=(-LE release)
ctest --test-dir build --output-on-failure -j"$(nproc)" "${args[@]}"
