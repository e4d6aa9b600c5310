#!/usr/bin/env bash
# Configures and builds p2pcheck into build/ (after installing its Debian dependencies).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
