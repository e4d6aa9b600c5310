#!/usr/bin/env bash
# Golden outputs of every fixture: `tests/e2e/golden.sh BINARY check [TREES]` compares, `... update`
# rewrites fixtures/<name>/expected/ in the source tree (review the diff before committing). Each
# fixture is analysed through --root and through a tar.gz of itself (--dump), which must give
# identical results.
# TREES is the generated fixtures directory (<TREES>/<name>/root, made by
# `python3 tools/mkfixture.py --all --out TREES`); default $P2PCHECK_FIXTURE_TREES, else
# build/fixtures. The binary runs from TREES' parent with relative `fixtures/<name>/root`, because
# the outputs name their source ("source: tree fixtures/<name>/root").
set -u
bin=$(realpath "$1"); mode=$2
src=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
trees=${3:-${P2PCHECK_FIXTURE_TREES:-$src/build/fixtures}}
[ "$(basename "$trees")" = fixtures ] || { echo "golden.sh: $trees: the generated directory must be named fixtures/"; exit 1; }
cd "$trees/.." 2>/dev/null || { echo "golden.sh: no generated fixtures at $trees (python3 tools/mkfixture.py --all --out $trees)"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0; seen=0

run_all() {  # fixture root -> files in $2
  local root=$1 out=$2
  mkdir -p "$out"
  : > "$out/exit_codes.txt"
  for cmd in "topo --json" "paths --json" "check --json" "check --color never" "topo --color never --ascii"; do
    local name
    name=$(echo "$cmd" | awk '{print $1}')$(echo "$cmd" | grep -q -- --json && echo .json || echo .txt)
    # The goldens hold indented JSON (--json alone is one line) and text at the default width
    # (80 columns: no terminal, and $COLUMNS unset so the caller's shell cannot change them).
    # check/paths JSON as users get it (schema_version 2): a changed decision shows in its
    # `decisions` row, a changed route in `functions`.
    # shellcheck disable=SC2086
    COLUMNS= "$bin" --root "$root" ${cmd/--json/--json=pretty} > "$out/$name" 2>"$out/$name.stderr"
    echo "$cmd: $?" >> "$out/exit_codes.txt"
    [ -s "$out/$name.stderr" ] && cat "$out/$name.stderr" >> "$out/stderr.txt"
    rm -f "$out/$name.stderr"
  done
  # A fixture's own further commands (fixtures/<name>/golden-commands): "FILE: ARGS" a line.
  local extra
  extra=$src/fixtures/$(basename "$(dirname "$root")")/golden-commands
  [ -f "$extra" ] || return 0
  while IFS= read -r line; do
    case $line in '' | '#'*) continue ;; esac
    local file=${line%%: *} args=${line#*: }
    # shellcheck disable=SC2086
    COLUMNS= "$bin" --root "$root" $args > "$out/$file" 2>"$out/$file.stderr"
    echo "$args: $?" >> "$out/exit_codes.txt"
    [ -s "$out/$file.stderr" ] && cat "$out/$file.stderr" >> "$out/stderr.txt"
    rm -f "$out/$file.stderr"
  done < "$extra"
}

# What a customer would send about the fixture, made with the real tools (lspci reads the tree
# through pciutils' sysfs backend; the udev database as tests/e2e/imports/fixture_udev.py derives it),
# analysed as such: expected/imports/<input>.check.txt. They must show no FAIL or WARN about what the
# input cannot carry (drivers, KFD, modules, mounts, libraries): those read "not in this ... input".
run_imports() {  # fixture-name -> files in $2/imports
  local name=$1 out=$2/imports dir=fixtures/$1/imports sysfs
  sysfs="sysfs.path=$(pwd)/fixtures/$1/root/sys/bus/pci"
  mkdir -p "$out" "$dir/bundle"
  lspci -A linux-sysfs -O "$sysfs" -xxxx > "$dir/lspci.txt" 2>/dev/null
  lspci -A linux-sysfs -O "$sysfs" -k -xxxx > "$dir/bundle/lspci-xxxx.txt" 2>/dev/null
  cp "fixtures/$1/root/proc/cpuinfo" "$dir/bundle/cpuinfo"
  python3 "$src/tests/e2e/imports/fixture_udev.py" "fixtures/$1/root" > "$dir/udev.txt"
  : > "$out/exit_codes.txt"
  for input in lspci.txt bundle udev.txt; do
    COLUMNS= "$bin" --dump "$dir/$input" check --color never > "$out/${input%.txt}.check.txt" 2>/dev/null
    echo "${input%.txt}: $?" >> "$out/exit_codes.txt"
  done
}

# The committed descriptions decide which fixtures exist; each must have been generated.
for toml in "$src"/fixtures/*/machine.toml; do
  [ -f "$toml" ] || continue
  name=$(basename "$(dirname "$toml")"); expected=$src/fixtures/$name/expected
  seen=$((seen + 1))
  if [ ! -d "fixtures/$name/root/sys" ]; then
    echo "FAIL $name: no generated tree $trees/$name/root (python3 tools/mkfixture.py --all --out $trees)"
    failed=$((failed + 1)); continue
  fi
  run_all "fixtures/$name/root" "$tmp/$name"
  run_imports "$name" "$tmp/$name"
  if [ "$mode" = update ]; then
    rm -rf "$expected"; cp -r "$tmp/$name" "$expected"
    echo "updated fixtures/$name/expected"; continue
  fi
  if diff -ru "$expected" "$tmp/$name" > "$tmp/$name.diff"; then
    passed=$((passed + 1))
  else
    echo "FAIL $name: output differs from fixtures/$name/expected (run scripts/update-golden.sh and review)"
    head -40 "$tmp/$name.diff"; failed=$((failed + 1))
  fi
  # The same tree as an archive must analyse identically (modulo the source line).
  tar -C "fixtures/$name" -czf "$tmp/$name.tar.gz" root
  "$bin" --dump "$tmp/$name.tar.gz" check --json=pretty | grep -v '"source"' > "$tmp/$name.dump.json"
  grep -v '"source"' "$tmp/$name/check.json" > "$tmp/$name.root.json"
  if cmp -s "$tmp/$name.dump.json" "$tmp/$name.root.json"; then passed=$((passed + 1)); else
    echo "FAIL $name: --dump of the archived tree differs from --root"; failed=$((failed + 1)); fi
done
[ "$seen" -gt 0 ] || { echo "golden.sh: no fixtures/*/machine.toml in $src"; exit 1; }

# The real examples in tests/e2e/imports/real (one machine, one moment): their check text, run from the
# source tree so the outputs name them by their relative path; expected in tests/e2e/imports/expected.
mkdir -p "$tmp/real"
for input in "$src"/tests/e2e/imports/real/*; do
  case $input in *.py | *.sh) continue ;; esac
  base=$(basename "$input")
  (cd "$src" && COLUMNS= "$bin" --dump "tests/e2e/imports/real/$base" check --color never > "$tmp/real/$base.check.txt" 2>/dev/null
   echo "$base: $?" >> "$tmp/real/exit_codes.txt")
done
if [ "$mode" = update ]; then
  rm -rf "$src/tests/e2e/imports/expected"; cp -r "$tmp/real" "$src/tests/e2e/imports/expected"
  echo "updated tests/e2e/imports/expected"
elif diff -ru "$src/tests/e2e/imports/expected" "$tmp/real" > "$tmp/real.diff"; then
  passed=$((passed + 1))
else
  echo "FAIL the real imports' output differs from tests/e2e/imports/expected (run scripts/update-golden.sh and review)"
  head -40 "$tmp/real.diff"; failed=$((failed + 1))
fi
[ "$mode" = update ] && [ "$failed" -eq 0 ] && exit 0
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
