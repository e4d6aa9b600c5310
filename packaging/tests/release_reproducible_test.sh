#!/usr/bin/env bash
# scripts/release.sh is reproducible: a second run, from its own build directory into its own output
# directory, gives byte-identical artifacts to BUILD/release (ctest release_build's).
# Usage: packaging/tests/release_reproducible_test.sh BUILD
set -u
build=$(cd "$1" && pwd)
. "$(dirname "$0")/release_lib.sh"
tmp=$(mktemp -d -p "$build"); trap 'rm -rf "$tmp"' EXIT
first=$build/release
[ -f "$first/SHA256SUMS" ] || { echo "FAIL no $first/SHA256SUMS (ctest release_build runs scripts/release.sh)"; exit 1; }
# The second build directory stays (<source>/build-portable-2, beside build/ for ccache): a later run
# of this test rebuilds only what changed.
"$src/scripts/release.sh" "$tmp/release" "$src/build-portable-2" > "$tmp/release.log" 2>&1 ||
  { tail -30 "$tmp/release.log"; echo "FAIL the second scripts/release.sh"; exit 1; }
a=$(cd "$first" && ls) b=$(cd "$tmp/release" && ls)
[ "$a" = "$b" ] || fail "the two builds made different files: [$(echo $a)] and [$(echo $b)]"
for f in $a; do
  if cmp -s "$first/$f" "$tmp/release/$f"; then echo "same: $f"; else fail "$f differs between the two builds"; fi
done
[ "$failed" -eq 0 ] && echo "release_reproducible: ok ($(wc -l < "$first/SHA256SUMS") files byte-identical)"
[ "$failed" -eq 0 ]
