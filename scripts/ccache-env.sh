# shellcheck shell=bash disable=SC2034
# Sourced by scripts/build.sh and tests/house/clang_build.sh: compile through ccache when it is installed,
# sharing its cache between clones of this repository. Sets ccache_launcher (cmake arguments, empty
# without ccache) and exports what ccache reads.
ccache_launcher=()
if command -v ccache > /dev/null; then
  ccache_launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Paths inside the clone are hashed relative to it, and the build directory is left out of the
  # hash, so another clone's compile of the same file is a hit (its debug info names that clone).
  CCACHE_BASEDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  export CCACHE_BASEDIR CCACHE_NOHASHDIR=1
fi
