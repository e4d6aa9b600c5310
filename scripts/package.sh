#!/usr/bin/env bash
# Builds the Debian packages into build/packages/ (after installing what that needs):
#   p2pcheck_<version>_<arch>.deb    the tool, p2pcheck(1), bash completion, docs, a reference machine
#   p2pprobe-dkms_<version>_all.deb  the p2pprobe kernel module's source, built by DKMS when installed
# Install both: sudo apt install ./build/packages/p2pcheck_*.deb ./build/packages/p2pprobe-dkms_*.deb
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh --package
tests=(); [ -f build/CMakeCache.txt ] || tests=(-DP2PCHECK_TESTS=OFF)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${tests[@]}" >/dev/null
# The binary, the man page and the reference machine, then cpack (packaging/CMakeLists.txt).
cmake --build build --target debs -j"$(nproc)"
version=$(sed -nE 's/^project\(p2pcheck VERSION ([0-9.]+) .*/\1/p' CMakeLists.txt)
ls -l "build/packages/p2pcheck_${version}_$(dpkg --print-architecture).deb" "build/packages/p2pprobe-dkms_${version}_all.deb"
