#!/usr/bin/env bash
# Configures and builds p2pcheck into build/ (after installing its Debian dependencies).
#   scripts/build.sh          everything: the tool, the unit tests, the man page (scripts/test.sh)
#   scripts/build.sh --tool   the p2pcheck binary alone (scripts/run.sh: a verdict sooner)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --tool ]; then
  scripts/setup-deps.sh --tool
  # A first build without the unit tests (no GoogleTest); a build tree that has them keeps them.
  tests=(); [ -f build/CMakeCache.txt ] || tests=(-DP2PCHECK_TESTS=OFF)
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${tests[@]}" >/dev/null
  cmake --build build --target p2pcheck -j"$(nproc)"
else
  scripts/setup-deps.sh
  # ccache (scripts/ccache-env.sh): a later run of the suite, in this clone or another, compiles only
  # what changed.
  . scripts/ccache-env.sh
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DP2PCHECK_TESTS=ON "${ccache_launcher[@]}" >/dev/null
  cmake --build build -j"$(nproc)"
fi
