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
[ $# -gt 0 ] || set -- -LE release
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
