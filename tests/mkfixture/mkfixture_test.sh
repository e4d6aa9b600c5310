#!/usr/bin/env bash
# The fixture trees are not committed: tools/mkfixture.py generates them from fixtures/*/machine.toml
# (into the build tree, see tests/CMakeLists.txt). This checks the generator itself:
#   - every fixtures/*/machine.toml generates a root/ (and there is at least one);
#   - it is deterministic: a second run agrees with the trees ctest generated (fixtures_generate,
#     $P2PCHECK_FIXTURE_TREES), file contents byte for byte, symlink targets as text; run by hand
#     without that variable it runs the generator twice;
#   - no tree contains an empty directory (an archive or a copy may drop it, so a tree must not
#     depend on one), an absolute symlink or a dangling symlink;
#   - nothing is stale: a fixtures/<name>/ with expected/ but no machine.toml fails.
set -u
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

if ! python3 tools/mkfixture.py --all --out "$tmp/a" >/dev/null; then
  echo "mkfixture_test: generator failed"; exit 1
fi
first=${P2PCHECK_FIXTURE_TREES:-}
if [ -z "$first" ] || [ ! -d "$first" ]; then
  first=$tmp/b
  if ! python3 tools/mkfixture.py --all --out "$first" >/dev/null; then
    echo "mkfixture_test: generator failed (second run)"; exit 1
  fi
fi

shopt -s nullglob
tomls=(fixtures/*/machine.toml)
[ ${#tomls[@]} -gt 0 ] || { echo "mkfixture_test: no fixtures/*/machine.toml"; exit 1; }
for toml in "${tomls[@]}"; do
  name=$(basename "$(dirname "$toml")")
  if [ ! -d "$tmp/a/$name/root/sys" ]; then
    fail "$name" "generated no root/sys from $toml"; continue
  fi
  ok=1
  if ! diff -r --no-dereference "$tmp/a/$name/root" "$first/$name/root" >"$tmp/det.txt" 2>&1; then
    fail "$name" "two generator runs differ: $(head -3 "$tmp/det.txt" | tr '\n' '|')"; ok=0
  fi
  empty=$(find "$tmp/a/$name/root" -type d -empty | head -3)
  if [ -n "$empty" ]; then
    fail "$name" "generator made empty directories: $empty"; ok=0
  fi
  bad=$(find "$tmp/a/$name/root" -type l -lname '/*' | head -3)
  if [ -n "$bad" ]; then
    fail "$name" "absolute symlinks: $bad"; ok=0
  fi
  dangling=$(find "$tmp/a/$name/root" -xtype l | head -3)
  if [ -n "$dangling" ]; then
    fail "$name" "dangling symlinks: $dangling"; ok=0
  fi
  [ $ok -eq 1 ] && { echo "ok   $name"; passed=$((passed + 1)); }
done
# Reviewed outputs whose description is gone would never be checked again.
for expected in fixtures/*/expected; do
  name=$(basename "$(dirname "$expected")")
  [ -f "fixtures/$name/machine.toml" ] || fail "$name" "fixtures/$name/expected without machine.toml"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
