#!/usr/bin/env bash
# Regenerate every fixture from its machine.toml into a temporary directory and compare with the
# committed trees: file contents byte for byte, symlink targets as text (diff --no-dereference),
# and the set of paths. Fails when tools/mkfixture.py and fixtures/*/root have drifted apart; the fix
# is `python3 tools/mkfixture.py --all` and committing the result.
# Also checks that the generator is deterministic (two runs agree) and that no tree contains an
# empty directory (git cannot store one, so a fresh clone would differ from the generator output).
set -u
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

if ! python3 tools/mkfixture.py --all --out "$tmp/a" >/dev/null; then
  echo "mkfixture_test: generator failed"; exit 1
fi
if ! python3 tools/mkfixture.py --all --out "$tmp/b" >/dev/null; then
  echo "mkfixture_test: generator failed (second run)"; exit 1
fi

shopt -s nullglob
for toml in fixtures/*/machine.toml; do
  name=$(basename "$(dirname "$toml")")
  ok=1
  if ! diff -r --no-dereference "$tmp/a/$name/root" "$tmp/b/$name/root" >"$tmp/det.txt" 2>&1; then
    fail "$name" "two generator runs differ: $(head -3 "$tmp/det.txt" | tr '\n' '|')"; ok=0
  fi
  if [ ! -d "fixtures/$name/root" ]; then
    fail "$name" "fixtures/$name/root is missing (run python3 tools/mkfixture.py --all)"; ok=0
  elif ! diff -r --no-dereference "fixtures/$name/root" "$tmp/a/$name/root" >"$tmp/diff.txt" 2>&1; then
    fail "$name" "committed tree differs from generator output ($(wc -l <"$tmp/diff.txt") diff lines):"
    head -10 "$tmp/diff.txt" | sed 's/^/    /'
    ok=0
  fi
  empty=$(find "$tmp/a/$name/root" -type d -empty | head -3)
  if [ -n "$empty" ]; then
    fail "$name" "generator made empty directories (not storable in git): $empty"; ok=0
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
for root in fixtures/*/root; do
  name=$(basename "$(dirname "$root")")
  [ -f "fixtures/$name/machine.toml" ] || fail "$name" "root/ without machine.toml"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
