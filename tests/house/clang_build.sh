#!/usr/bin/env bash
# The clang build (ctest clang_tree, label clang): configures BUILD with clang, AddressSanitizer,
# UBSan, _GLIBCXX_ASSERTIONS and libFuzzer instrumentation (cmake/reliability.cmake), builds what
# the asan_suite and fuzz_* tests run (p2pcheck, unit_tests, every fuzz target), and fails on any
# compiler warning in our sources. One build serves all three, so CI compiles the tree once more,
# not three times. The flags are tests/fuzz/run.sh's, so the same BUILD serves it too.
#   tests/house/clang_build.sh BUILD
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath -m "$1")
# shellcheck source=scripts/ccache-env.sh
. "$repo/scripts/ccache-env.sh"
launcher=("${ccache_launcher[@]}")
start=$SECONDS
# A build directory cmake would refuse or misuse is made again: one configured for another
# checkout (a copied tree), another compiler or without the fuzz option.
cache=$build/CMakeCache.txt
if [ -f "$cache" ] && ! { grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$repo" "$cache" &&
  grep -q '^CMAKE_CXX_COMPILER:.*clang++$' "$cache" && grep -qx 'P2PCHECK_FUZZ:BOOL=ON' "$cache"; }; then
  echo "clang_tree: $build was configured for another tree or compiler; starting it afresh"
  rm -rf "$build"
fi
mkdir -p "$build"
# -O1 -g1: what fuzzing and sanitizer runs use; it compiles in about half the time of -O2 -g.
cmake -S "$repo" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -DP2PCHECK_TESTS=ON -DP2PCHECK_FUZZ=ON "${launcher[@]}" > "$build/clang-configure.log" 2>&1 ||
  { cat "$build/clang-configure.log"; echo "FAIL: clang configure"; exit 1; }
cmake --build "$build" --target p2pcheck unit_tests hipfile_double fuzz_targets -j"$(nproc)" > "$build/clang-build.log" 2>&1
rc=$?
# Warnings fail the test as -Werror would, without making the flags differ from the fuzz build's
# (ccache replays a cached compile's warnings, so a warm cache still shows them).
warnings=$(grep -E "^$repo/.*(warning|error):|^\.\./.*(warning|error):" "$build/clang-build.log" | sort -u)
[ $rc -eq 0 ] || { grep -E "error" "$build/clang-build.log" | head -30; echo "FAIL: the clang build fails ($build/clang-build.log)"; exit 1; }
[ -z "$warnings" ] || { echo "$warnings" | head -30; echo "FAIL: clang warns ($build/clang-build.log)"; exit 1; }
echo "clang build (ASan+UBSan+_GLIBCXX_ASSERTIONS, libFuzzer), no warnings, in $((SECONDS - start)) s: $build"
