#!/usr/bin/env bash
# `p2pcheck --version` and `-V` name the version and the git revision the binary was built from;
# cmake/git-revision.cmake falls back to `git archive`'s stamp and then "unknown" outside a checkout;
# and the versions written in the sources agree (CMake, the tool, the module, its dkms.conf).
# Usage: packaging/tests/version_test.sh BINARY
set -u
bin=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

ver=$(sed -nE 's/^project\(p2pcheck VERSION ([0-9.]+) .*/\1/p' "$src/CMakeLists.txt")
[ -n "$ver" ] || fail "no project(p2pcheck VERSION ...) in CMakeLists.txt"
tool=$(sed -nE 's/.*kToolVersion = "([^"]+)".*/\1/p' "$src/include/p2pcheck/source/version.h")
dkms=$(sed -nE 's/^PACKAGE_VERSION="([^"]+)"/\1/p' "$src/kmod/dkms.conf")
module=$(sed -nE 's/^#define P2PPROBE_MODULE_VERSION "([^"]+)"/\1/p' "$src/kmod/p2pprobe.c")
for v in "kToolVersion=$tool" "dkms.conf=$dkms" "P2PPROBE_MODULE_VERSION=$module"; do
  [ "${v#*=}" = "$ver" ] || fail "version $v differs from CMakeLists.txt's $ver (the packages are named by it)"
done

long=$("$bin" --version); rc=$?
[ "$rc" -eq 0 ] || fail "--version exit $rc"
short=$("$bin" -V) || fail "-V exit $?"
[ "$long" = "$short" ] || fail "-V printed '$short', --version '$long'"
if hash=$(git -c safe.directory='*' -C "$src" rev-parse --short=12 HEAD 2>/dev/null); then
  # describe: the hash alone, or <tag>-<n>-g<hash> once there are tags; -dirty with local changes.
  [[ $long =~ ^p2pcheck\ $ver\ \(git\ ([^ ]*-g)?$hash(-dirty)?\)$ ]] ||
    fail "--version printed '$long', wanted 'p2pcheck $ver (git $hash)' (HEAD; rebuilt since the last commit?)"
  # A source archive made by git archive carries the commit (export-subst in .gitattributes).
  stamped=$(git -c safe.directory='*' -C "$src" archive HEAD cmake/git-revision.txt | tar -xO)
  [ -n "$stamped" ] && [[ $hash == "$stamped"* ]] ||
    fail "git archive stamps cmake/git-revision.txt with '$stamped', wanted HEAD $hash"
else
  echo "note: $src is not a git checkout; --version says: $long"
  [[ $long =~ ^p2pcheck\ $ver\ \(git\ .+\)$ ]] || fail "--version printed '$long'"
fi

# The revision script on a tree that is no git checkout: the archive stamp, else unknown; an
# explicit revision (-DP2PCHECK_GIT_REVISION) wins.
revision() {  # revision DIR [REVISION]
  cmake -DSOURCE_DIR="$1" -DREVISION="${2-}" -DOUTPUT="$tmp/rev.h" -P "$src/cmake/git-revision.cmake" &&
    sed -nE 's/^#define P2PCHECK_GIT_REVISION "(.*)"$/\1/p' "$tmp/rev.h"
}
mkdir -p "$tmp/tarball/cmake"
cp "$src/cmake/git-revision.txt" "$tmp/tarball/cmake/"
# In a checkout the file holds the placeholder, never a hash.
grep -q '^\$Format:%h\$$' "$tmp/tarball/cmake/git-revision.txt" || fail "cmake/git-revision.txt lost its \$Format:%h\$ placeholder"
got=$(revision "$tmp/tarball")
[ "$got" = "unknown (not built from a git checkout)" ] || fail "plain copy: revision '$got'"
echo 0123456789ab > "$tmp/tarball/cmake/git-revision.txt"
got=$(revision "$tmp/tarball")
[ "$got" = "0123456789ab" ] || fail "archive stamp: revision '$got'"
got=$(revision "$tmp/tarball" "1.2-debian3")
[ "$got" = "1.2-debian3" ] || fail "-DP2PCHECK_GIT_REVISION: revision '$got'"
got=$(revision "$tmp/tarball" 'a"b\c')
[ "$got" = "a_b_c" ] || fail "quotes and backslashes must not reach the C string: '$got'"

[ "$failed" -eq 0 ] && echo "version: ok ($long)"
[ "$failed" -eq 0 ]
