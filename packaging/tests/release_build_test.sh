#!/usr/bin/env bash
# ctest release_build (FIXTURES_SETUP p2pcheck_release): scripts/release.sh into BUILD/release, its
# portable build in <source>/build-portable (beside build/, at the same depth: ccache shares objects
# between build directories only when the source is the same relative path from them). Skipped, saying why, when the bullseye sysroot can be neither
# found in ~/.cache/p2pcheck-pkg nor made (debootstrap needs deb.debian.org).
# Usage: packaging/tests/release_build_test.sh BUILD
set -u
build=$(cd "$1" && pwd)
. "$(dirname "$0")/release_lib.sh"
chroot_of bullseye > /dev/null || exit $?
exec "$src/scripts/release.sh" "$build/release" "$src/build-portable"
