#!/usr/bin/env bash
# The build itself refuses an upward #include (src/CMakeLists.txt: each layer compiles against a
# view of include/ holding only its own and the lower layers' headers), not only
# tests/layers_test.py. In a temporary copy of the sources, configured afresh:
#   1. model/route.cc as it is compiles (the copy builds; what fails below is the include);
#   2. with `#include "p2pcheck/report/check.h"` planted (report/ is above model/), its compile
#      fails, naming that header;
#   3. the same line planted in fleet/markup.cc (fleet/ is above report/) compiles;
#   4. `#include "p2pcheck/live/device_actions.h"` planted in checks/links.cc fails: live/ is below
#      checks/ but not one of the layers it uses (src/layers.txt), so no check can talk to a device.
# Usage: tests/house/layers_build_test.sh SOURCE_DIR
set -u -o pipefail
src=${1:?usage: layers_build_test.sh SOURCE_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

mkdir "$tmp/src"
cp -a "$src/CMakeLists.txt" "$src/cmake" "$src/src" "$src/include" "$src/kmod" "$src/packaging" "$tmp/src/"
launcher=()
# shellcheck source=../scripts/ccache-env.sh
. "$src/scripts/ccache-env.sh" && launcher=("${ccache_launcher[@]}")
CCACHE_BASEDIR=$tmp/src
if ! cmake -S "$tmp/src" -B "$tmp/build" -DP2PCHECK_TESTS=OFF -DP2PCHECK_WATCH=OFF "${launcher[@]}" \
  > "$tmp/configure.log" 2>&1; then
  echo "FAIL the copy does not configure:"; tail -20 "$tmp/configure.log"; exit 1
fi

compile() {  # LAYER/FILE.cc: the layer library's own compile of that one object
  make -C "$tmp/build/src" "${1%.cc}.cc.o" > "$tmp/compile.log" 2>&1
}
plant() {  # LAYER/FILE.cc [HEADER]: the include line first (report/check.h unless named)
  { echo "#include \"${2:-p2pcheck/report/check.h}\""; cat "$tmp/src/src/$1"; } > "$tmp/planted" &&
    mv "$tmp/planted" "$tmp/src/src/$1"
}

if compile model/route.cc; then ok; else fail "model/route.cc does not compile in the copy:"; tail -5 "$tmp/compile.log"; fi
plant model/route.cc
if compile model/route.cc; then
  fail "model/route.cc compiled with an include of report/check.h (a higher layer)"
elif grep -q 'p2pcheck/report/check.h: No such file or directory' "$tmp/compile.log"; then ok
else fail "model/route.cc failed, but not on the planted include:"; tail -5 "$tmp/compile.log"; fi
plant fleet/markup.cc
if compile fleet/markup.cc; then ok; else
  fail "fleet/markup.cc did not compile with report/check.h (a lower layer):"; tail -5 "$tmp/compile.log"; fi
if compile checks/links.cc; then :; else fail "checks/links.cc does not compile in the copy:"; tail -5 "$tmp/compile.log"; fi
plant checks/links.cc p2pcheck/live/device_actions.h
if compile checks/links.cc; then
  fail "checks/links.cc compiled with an include of live/device_actions.h (live/ is not checks/'s to use)"
elif grep -q 'p2pcheck/live/device_actions.h: No such file or directory' "$tmp/compile.log"; then ok
else fail "checks/links.cc failed, but not on the planted include:"; tail -5 "$tmp/compile.log"; fi
echo "layers_build: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -eq 4 ]
