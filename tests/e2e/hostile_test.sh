#!/usr/bin/env bash
# The hostile-input corpus (tests/e2e/hostile/, made by make-corpus.py): each file must make
# `p2pcheck --dump FILE check` exit 5 with a message matching its EXPECTED pattern (which names the
# member or file at fault), and nothing may be written: neither in the working directory nor in
# TMPDIR (the one private place an import may use, and must clean up).
# Then the inputs tests/e2e/hostile/generate.py writes at test time (below).
# Usage: tests/e2e/hostile_test.sh BINARY
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

# The generated inputs (tests/e2e/hostile/generate.py): one per class of crash found in review, and
# the ones too large to commit. Each has its own exit code (5, or a normal result for input that
# is odd but valid) and pattern, and runs with its virtual memory capped at 512 MiB, so a small
# input that expands without bound fails here, not on a customer's laptop. A build that cannot
# start under the cap (AddressSanitizer reserves terabytes of shadow memory) runs without it.
gen="$tmp/generated"
python3 "$corpus/generate.py" "$gen" > /dev/null || { echo "FAIL: generate.py"; exit 1; }
limit=(ulimit -v 524288)
if ! (ulimit -v 524288 && "$bin" --version > /dev/null 2>&1); then
  echo "note: $bin does not start under ulimit -v 512 MiB (sanitizer build?): generated inputs run without the cap"
  limit=(true)
fi
generated=0
while IFS=$'\t' read -r file want pattern args; do
  [ -n "$file" ] || continue
  cmd=${args//\{\}/$gen/$file}
  # shellcheck disable=SC2086  # the arguments are words by design
  out=$(cd "$tmp/cwd" && "${limit[@]}" && TMPDIR="$tmp/tmpdir" timeout 60 "$bin" --color never $cmd 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL $file: exit $rc, wanted $want"; echo "$out" | cut -c1-200 | sed 's/^/    /' | head -5; failed=$((failed + 1)); continue
  fi
  if ! grep -qE -- "$pattern" <<< "$out"; then
    echo "FAIL $file: output lacks /$pattern/"; echo "$out" | cut -c1-200 | sed 's/^/    /' | head -5; failed=$((failed + 1)); continue
  fi
  left=$(find "$tmp/cwd" "$tmp/tmpdir" -mindepth 1)
  if [ -n "$left" ]; then
    echo "FAIL $file: left files behind: $(tr '\n' ' ' <<< "$left")"; failed=$((failed + 1))
    rm -rf "${tmp:?}/cwd/"* "${tmp:?}/tmpdir/"*; continue
  fi
  generated=$((generated + 1)); passed=$((passed + 1))
done < "$gen/CASES"
[ "$generated" -ge 30 ] || { echo "FAIL: only $generated generated inputs passed; generate.py writes more"; failed=$((failed + 1)); }

[ "$passed" -ge 20 ] || { echo "FAIL: only $passed hostile files passed; the corpus must hold at least 20"; failed=$((failed + 1)); }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
