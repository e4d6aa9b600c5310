#!/usr/bin/env bash
# Golden outputs of every fixture: `tests/golden.sh BINARY check` compares, `... update` rewrites
# fixtures/<name>/expected/ (review the diff before committing). Each fixture is analysed through
# --root and through a tar.gz of itself (--dump), which must give identical results.
set -u
bin=$(realpath "$1"); mode=$2
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0

run_all() {  # fixture root -> files in $2
  local root=$1 out=$2
  mkdir -p "$out"
  : > "$out/exit_codes.txt"
  for cmd in "topo --json" "paths --json" "check --json" "check --color never" "topo --color never --ascii"; do
    local name
    name=$(echo "$cmd" | awk '{print $1}')$(echo "$cmd" | grep -q -- --json && echo .json || echo .txt)
    # shellcheck disable=SC2086
    "$bin" --root "$root" $cmd > "$out/$name" 2>"$out/$name.stderr"
    echo "$cmd: $?" >> "$out/exit_codes.txt"
    [ -s "$out/$name.stderr" ] && cat "$out/$name.stderr" >> "$out/stderr.txt"
    rm -f "$out/$name.stderr"
  done
}

for dir in fixtures/*/; do
  name=$(basename "$dir")
  [ -d "$dir/root" ] || continue
  run_all "fixtures/$name/root" "$tmp/$name"
  if [ "$mode" = update ]; then
    rm -rf "fixtures/$name/expected"; cp -r "$tmp/$name" "fixtures/$name/expected"
    echo "updated fixtures/$name/expected"; continue
  fi
  if diff -ru "fixtures/$name/expected" "$tmp/$name" > "$tmp/$name.diff"; then
    passed=$((passed + 1))
  else
    echo "FAIL $name: output differs from fixtures/$name/expected (run scripts/update-golden.sh and review)"
    head -40 "$tmp/$name.diff"; failed=$((failed + 1))
  fi
  # The same tree as an archive must analyse identically (modulo the source line).
  tar -C "fixtures/$name" -czf "$tmp/$name.tar.gz" root
  "$bin" --dump "$tmp/$name.tar.gz" check --json | grep -v '"source"' > "$tmp/$name.dump.json"
  grep -v '"source"' "$tmp/$name/check.json" > "$tmp/$name.root.json"
  if cmp -s "$tmp/$name.dump.json" "$tmp/$name.root.json"; then passed=$((passed + 1)); else
    echo "FAIL $name: --dump of the archived tree differs from --root"; failed=$((failed + 1)); fi
done
[ "$mode" = update ] && exit 0
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
