#!/usr/bin/env bash
# One result model: for every input we have (each fixture tree, the lspci / lspci -k / udev / hwloc
# imports made from it with the real tools, every QEMU lab capture, the real imports in
# tests/e2e/imports/real), the text's RESULT line, --quiet, the JSON `result` and the exit code say
# the same thing: PASS 0, FAIL 1, UNKNOWN 2, NO PAIRS 4; its JSON holds no PASS without observed
# evidence and a result its counts give (tests/e2e/result_json_check.py), and --fail-on with every
# category fails whatever is not a clean pass.
# Usage: tests/e2e/result_test.sh BINARY [TREES]   (TREES as in tests/e2e/golden.sh; default build/fixtures)
set -u
bin=$(realpath "$1")
fx=$(realpath -m "${2:-${P2PCHECK_FIXTURE_TREES:-$(dirname "$0")/../../build/fixtures}}")
cd "$(dirname "$0")/../.." || exit 1
[ -d "$fx/epyc-mi300x-8gpu/root/sys" ] || { echo "result_test: no generated fixtures in $fx"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
: > "$tmp/seen"
passed=0; failed=0; inputs=0
declare -A code=([PASS]=0 [FAIL]=1 [UNKNOWN]=2 ["NO PAIRS"]=4)

agree() {  # NAME ARGS... : the four answers for one input must agree
  local name=$1; shift
  inputs=$((inputs + 1))
  local json=$tmp/$inputs.json strict=""
  "$bin" "$@" check --color never > "$tmp/text" 2> /dev/null; local text_rc=$?
  "$bin" "$@" check --quiet --color never > "$tmp/quiet" 2> /dev/null; local quiet_rc=$?
  "$bin" "$@" check --json > "$json" 2> /dev/null; local json_rc=$?
  local line word
  line=$(grep -m1 '^RESULT: ' "$tmp/text")
  word=$(sed -E 's/^RESULT: ([A-Z ]+) — .*/\1/' <<< "$line")
  local why=""
  [ -n "$line" ] || why="no RESULT line"
  [ -z "$why" ] && [ -z "${code[$word]+x}" ] && why="RESULT word '$word' is not PASS/FAIL/UNKNOWN/NO PAIRS"
  [ -z "$why" ] && [ "$text_rc" -ne "${code[$word]}" ] && why="exit $text_rc but RESULT: $word"
  [ -z "$why" ] && [ "$json_rc" -ne "$text_rc" ] && why="--json exits $json_rc, text $text_rc"
  [ -z "$why" ] && [ "$quiet_rc" -ne "$text_rc" ] && why="--quiet exits $quiet_rc, text $text_rc"
  [ -z "$why" ] && [ "$(cat "$tmp/quiet")" != "$line" ] && why="--quiet prints '$(head -c 200 "$tmp/quiet")'"
  # The strictest policy fails on anything that is not a clean pass, and says so in every form.
  local strict_rc=""
  if [ -z "$why" ] && [ "$word" != "NO PAIRS" ]; then
    strict=$tmp/$inputs.strict.json
    "$bin" "$@" check --json --fail-on refused,stack,unknown,warn > "$strict" 2> /dev/null; strict_rc=$?
  fi
  echo "$word" >> "$tmp/seen"
  # The JSON of every input is judged at the end in one python3 run (result_json_check.py --agreement).
  [ -z "$why" ] && printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$json" "$word" "$strict" "$strict_rc" >> "$tmp/agreement"
  if [ -z "$why" ]; then passed=$((passed + 1)); else echo "FAIL $name: $why"; failed=$((failed + 1)); fi
}

have_lstopo=0; command -v lstopo > /dev/null && have_lstopo=1
for dir in "$fx"/*/; do
  name=$(basename "$dir"); root="$dir/root"
  [ -d "$root/sys" ] || continue
  w=$tmp/$name; mkdir -p "$w/bundle"
  agree "$name tree" --root "$root"
  rel=$(cat "$root/proc/sys/kernel/osrelease")
  agree "$name tree, first NVMe only" --root "$root" --nvme "$(ls "$root/sys/class/nvme" 2> /dev/null | head -1 || echo nvme0)"
  lspci -A linux-sysfs -O "sysfs.path=$root/sys/bus/pci" -xxxx > "$w/lspci.txt" 2> /dev/null
  agree "$name lspci -xxxx" --dump "$w/lspci.txt"
  agree "$name lspci -xxxx --cpu amd-zen --kernel-release $rel" --dump "$w/lspci.txt" --cpu amd-zen --kernel-release "$rel"
  agree "$name lspci -xxxx --cpu amd-zen --kernel-release $rel --kernel-config p2pdma=y" --dump "$w/lspci.txt" \
    --cpu amd-zen --kernel-release "$rel" --kernel-config p2pdma=y
  agree "$name tree, what-if 6.8" --root "$root" --what-if-kernel 6.8
  lspci -A linux-sysfs -O "sysfs.path=$root/sys/bus/pci" -k -xxxx > "$w/bundle/lspci-xxxx.txt" 2> /dev/null
  cp "$root/proc/cpuinfo" "$w/bundle/cpuinfo"
  agree "$name lspci -k bundle" --dump "$w/bundle"
  python3 tests/e2e/imports/fixture_udev.py "$root" > "$w/udev.txt"
  agree "$name udev" --dump "$w/udev.txt"
  if [ $have_lstopo -eq 1 ]; then
    HWLOC_COMPONENTS=-x86 lstopo --whole-io --input "$root" --of xml > "$w/hwloc.xml" 2> /dev/null &&
      agree "$name hwloc" --dump "$w/hwloc.xml" --cpu intel
  fi
done
for capture in fixtures/lab/*/*.tar.zst; do
  [ -f "$capture" ] || continue
  read -r -a args < "$(dirname "$capture")/args"  # the QEMU devices the lab names as GPU and NVMe
  agree "lab $(basename "$capture")" --dump "$capture" "${args[@]}"
done
for input in tests/e2e/imports/real/*; do
  case $input in *.py | *.sh) continue ;; esac
  agree "real $(basename "$input")" --dump "$input"
done

# The live machine (no pair on a GPU-less builder: NO PAIRS).
agree "live /"

# Each input's JSON: its result is the text's, it holds no PASS without evidence, and the strictest
# policy fails whatever is not a clean pass.
: >> "$tmp/agreement"
python3 tests/e2e/result_json_check.py --agreement "$tmp/agreement" > "$tmp/json_problems"; json_rc=$?
cat "$tmp/json_problems"
json_failed=$(grep -c '^FAIL ' "$tmp/json_problems")
[ "$json_rc" -eq 0 ] || [ "$json_failed" -gt 0 ] || json_failed=1
passed=$((passed - json_failed)); failed=$((failed + json_failed))

# Not vacuous: the inputs above give every result (NO PAIRS only where this machine has no pair).
for want in PASS FAIL UNKNOWN; do
  grep -qx "$want" "$tmp/seen" || { echo "FAIL no input gave $want"; failed=$((failed + 1)); }
done
echo "$passed of $inputs inputs agree, $failed disagree ($(sort "$tmp/seen" | uniq -c | tr -s ' \n' ' '))"
[ "$failed" -eq 0 ] && [ "$inputs" -gt 40 ]
