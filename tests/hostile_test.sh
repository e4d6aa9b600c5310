#!/usr/bin/env bash
# The hostile-input corpus (tests/hostile/, made by make-corpus.py): each file must make
# `p2pcheck --dump FILE check` exit 5 with a message matching its EXPECTED pattern (which names the
# member or file at fault), and nothing may be written: neither in the working directory nor in
# TMPDIR (the one private place an import may use, and must clean up).
# Usage: tests/hostile_test.sh BINARY
set -u
bin=$(realpath "$1")
corpus=$(cd "$(dirname "$0")/hostile" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/cwd" "$tmp/tmpdir"
passed=0; failed=0
while IFS=$'\t' read -r file pattern; do
  case "$file" in ''|'#'*) continue ;; esac
  out=$(cd "$tmp/cwd" && TMPDIR="$tmp/tmpdir" timeout 60 "$bin" --dump "$corpus/$file" check 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne 5 ]; then
    echo "FAIL $file: exit $rc, wanted 5"; echo "$out" | sed 's/^/    /' | head -5; failed=$((failed + 1)); continue
  fi
  if ! grep -qE -- "$pattern" <<< "$out"; then
    echo "FAIL $file: message lacks /$pattern/"; echo "$out" | sed 's/^/    /' | head -5; failed=$((failed + 1)); continue
  fi
  left=$(find "$tmp/cwd" "$tmp/tmpdir" -mindepth 1)
  if [ -n "$left" ]; then
    echo "FAIL $file: left files behind: $(tr '\n' ' ' <<< "$left")"; failed=$((failed + 1))
    rm -rf "${tmp:?}/cwd/"* "${tmp:?}/tmpdir/"*; continue
  fi
  passed=$((passed + 1))
done < "$corpus/EXPECTED"
[ "$passed" -ge 20 ] || { echo "FAIL: only $passed hostile files passed; the corpus must hold at least 20"; failed=$((failed + 1)); }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
