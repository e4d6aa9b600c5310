#!/usr/bin/env bash
# Issue 48: no text output carries a control or bidi character from any input. Every fixture tree
# is copied with hostile names (host, DMI, OS, CPU, NVMe model/serial/firmware, dm names, mount
# points and a mount of a device sysfs lacks: terminal escapes, CR, a newline with a forged
# "RESULT: PASS", U+202E/U+2066/U+200F, a C1 CSI; tests/e2e/hostile_names.py), the real imports
# likewise, and captures with a hostile manifest (format, source, notes, selection, unreadable
# texts); each goes through every command that prints text, and hostile_names.py checks stdout
# and stderr of each: a newline is the only control character allowed.
# Usage: tests/e2e/hostile_names_test.sh BINARY [TREES]
set -u
bin=$(realpath "$1")
fx=$(realpath -m "${2:-${P2PCHECK_FIXTURE_TREES:-$(dirname "$0")/../../build/fixtures}}")
repo=$(cd "$(dirname "$0")/../.." && pwd)
names="python3 $repo/tests/e2e/hostile_names.py"
[ -d "$fx/storage-stacks/root/sys" ] || { echo "hostile_names_test: no generated fixtures in $fx"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0; runs=0
# run NAME -- command...: a crash (a signal) fails; any exit code of the tool's own is an answer.
# $clean: `clean`, or `clean-csv` for CSV output.
clean=clean
run() {
  local name=$1; shift 2
  timeout 120 "$@" > "$tmp/out.$runs" 2> "$tmp/err.$runs"; local rc=$?
  if [ "$rc" -ge 124 ]; then echo "FAIL $name: exit $rc"; failed=$((failed + 1)); fi
  if ! $names $clean "$tmp/out.$runs" "$tmp/err.$runs" > "$tmp/why"; then
    echo "FAIL $name: a control or format character in the output"; sed 's/^/    /' "$tmp/why"
    failed=$((failed + 1))
  else passed=$((passed + 1)); fi
  runs=$((runs + 1))
}
# Every command that prints text, on one input (given as the options that open it).
commands() {
  local name=$1; shift
  run "$name check" -- "$bin" "$@" check -v
  run "$name topo" -- "$bin" "$@" topo
  run "$name topo --paths" -- "$bin" "$@" topo --paths
  run "$name topo --dot" -- "$bin" "$@" topo --dot
  run "$name paths" -- "$bin" "$@" paths
  run "$name mounts" -- "$bin" "$@" mounts
  local pair
  pair=$("$bin" "$@" check --json 2> /dev/null | python3 -c 'import json, sys
d = json.load(sys.stdin); p = d["pairs"][0]; print(d["devices"][p[0]], d["devices"][p[1]])' 2> /dev/null)
  # shellcheck disable=SC2086
  [ -n "$pair" ] && run "$name explain" -- "$bin" "$@" explain $pair
  run "$name capture" -- "$bin" "$@" capture --force -o "$tmp/cap.tar.gz"
}

inputs=()
for root in "$fx"/*/root; do
  name=$(basename "$(dirname "$root")")
  $names tree "$root" "$tmp/trees/$name" > /dev/null || { echo "FAIL $name: no hostile copy"; failed=$((failed + 1)); }
  commands "$name" --root "$tmp/trees/$name"
  # The mount on NVMe whose point is hostile, named as --nvme (a path, resolved in the tree).
  point=$(python3 -c 'import sys
for line in open(sys.argv[1]):
    w = line.split()
    if len(w) > 1 and "RESULT" in w[1]: print(w[1].replace("\\040", " ").replace("\\012", "\n")); break' \
    "$tmp/trees/$name/proc/mounts")
  [ -n "$point" ] && run "$name check --nvme PATH" -- "$bin" --root "$tmp/trees/$name" check --nvme "$point"
  inputs+=("$tmp/trees/$name")
done
run "fleet of the trees" -- "$bin" fleet "${inputs[@]}"

# Captures: one of a hostile tree, the lab's, each with a hostile manifest.
"$bin" --root "$tmp/trees/storage-stacks" capture -o "$tmp/storage.tar.gz" > /dev/null 2>&1
for cap in "$tmp/storage.tar.gz" "$repo/fixtures/lab/vfy-epyc/vfy-epyc.tar.zst"; do
  out="$tmp/hostile-$(basename "${cap%%.*}").tar.gz"
  $names capture "$cap" "$out" > /dev/null || { echo "FAIL $cap: no hostile copy"; failed=$((failed + 1)); }
  commands "$(basename "$out")" --dump "$out"
  inputs+=("$out")
done

# Imports: hwloc, lspci and udev with hostile names and records an import leaves out with a note.
$names imports "$repo/tests/e2e/imports/real" "$tmp/imports" > /dev/null
for f in "$tmp"/imports/*; do
  commands "$(basename "$f")" --dump "$f"
  "$bin" --dump "$f" capture --force -o "$tmp/imported.tar.gz" > /dev/null 2>&1
  commands "capture of $(basename "$f")" --dump "$tmp/imported.tar.gz"
  inputs+=("$f")
done
run "fleet of everything" -- "$bin" fleet "${inputs[@]}"
clean=clean-csv run "fleet --csv" -- "$bin" fleet --csv "${inputs[@]}"

echo "$passed passed, $failed failed ($runs runs)"
[ "$failed" -eq 0 ]
