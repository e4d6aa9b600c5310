#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (ctest). Extra arguments go to ctest,
# e.g. scripts/test.sh -LE lab for the quick loop without the QEMU lab.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
# The QEMU lab's own packages (qemu, busybox, kernel build tools); its kernels build on first run.
tests/lab/setup-deps.sh
# The clang/ASan/libFuzzer tests (labels clang, asan, fuzz) do not pass yet (README, issue 15):
# left out unless P2PCHECK_RELIABILITY=1.
exclude=(); [ "${P2PCHECK_RELIABILITY:-0}" = 1 ] || exclude=(-LE 'asan|fuzz|clang')
ctest --test-dir build --output-on-failure -j"$(nproc)" "${exclude[@]}" "$@"
