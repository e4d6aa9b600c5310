#!/usr/bin/env bash
# Capture and replay of a generated switch fabric (bench/make-large-machine.py), where many pairs
# share one decision: capture records the reads without deciding the pairs, and the replay must
# still give every pair exactly the --root answer. Two variants of the fabric: as generated (AMD
# Zen, ACS redirect on every port: every pair through the root complex, allowed) and with an Intel
# CPU and no redirect on the switches' downstream ports (switch-local pairs BUS_ADDR, the others
# refused by the host-bridge allowlist). Compared through --root and --dump: check --json and
# paths --json, topo --json, the check text, explain of some
# pairs, and the exit codes; a capture of the capture holds the same members.
# Usage: tests/e2e/capture_fabric_test.sh BINARY [HxLxF]   (default 3x2x5: 189 functions, 1,296 pairs)
set -u
bin=$(realpath "$1")
fabric=${2:-3x2x5}
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }

python3 bench/make-large-machine.py --fabric "$fabric" -o "$tmp/amd/machine.toml" || { echo "generator failed"; exit 1; }
mkdir -p "$tmp/intel"
# Intel: through the root complex only between allowlisted host bridges (none here); no ACS
# redirect on the downstream ports keeps switch-local pairs below their switch.
sed -e '/^\[cpu\]/,/^\[/{s/^vendor_id = .*/vendor_id = "GenuineIntel"/;s/^family = .*/family = 6/;s/^model = .*/model = 143/;s/^model_name = .*/model_name = "Intel(R) Xeon(R) Platinum 8480+"/}' \
    -e '/^\[template\.pex89-dsp\]/,/^\[/s/^acs = .*/acs = 19/' "$tmp/amd/machine.toml" > "$tmp/intel/machine.toml"
grep -q 'GenuineIntel' "$tmp/intel/machine.toml" && grep -q '^acs = 19' "$tmp/intel/machine.toml" ||
  { echo "the Intel variant was not made (generator format changed?)"; exit 1; }

text_without_source() {  # the check text minus what says where the bytes came from (and the blank
  # line the replay's block leaves; cat -s: one blank line for several)
  grep -v -e '^replaying a capture by ' -e '^source: ' "$1" | sed '1{/^$/d}' | cat -s
}

for variant in amd intel; do
  python3 tools/mkfixture.py --out "$tmp/trees" "$tmp/$variant/machine.toml" > /dev/null || { fail "$variant: mkfixture"; continue; }
  root=$tmp/trees/$variant/root
  cap=$tmp/$variant.tar.zst
  "$bin" --root "$root" capture -o "$cap" > /dev/null || { fail "$variant: capture failed"; continue; }
  out=$tmp/$variant/out
  mkdir -p "$out"
  i=0
  while IFS= read -r args; do
    i=$((i + 1))
    # shellcheck disable=SC2086  # the arguments are split on purpose
    "$bin" --root "$root" $args > "$out/root.$i" 2> /dev/null; rc_root=$?
    # shellcheck disable=SC2086
    "$bin" --dump "$cap" $args > "$out/dump.$i" 2> /dev/null; rc_dump=$?
    if [ "$rc_root" = "$rc_dump" ]; then ok; else fail "$variant: $args: exit $rc_root through --root, $rc_dump replayed"; fi
    case "$args" in
      *--json*) printf '%s\t%s\t%s\n' "$variant: $args" "$out/root.$i" "$out/dump.$i" >> "$tmp/compare.list" ;;
      *)
        if diff <(text_without_source "$out/root.$i") <(text_without_source "$out/dump.$i") > "$out/diff.$i"; then ok; else
          fail "$variant: $args: the replay's text differs"; head -5 "$out/diff.$i"
        fi ;;
    esac
  done <<EOF
check --json
paths --json
topo --json
-v check
EOF
  # Every pair is in the comparisons above; explain some of them hop by hop, in text.
  "$bin" --root "$root" check --json > "$out/pairs.json" 2> /dev/null
  pairs=$(python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
p, devices = doc["pairs"], doc["devices"]
print(len(p))
for x in (p[0], p[len(p) // 2], p[-1]):
    print(devices[x[0]], devices[x[1]])' "$out/pairs.json")
  [ "$(head -1 <<< "$pairs")" -gt 500 ] && ok || fail "$variant: only $(head -1 <<< "$pairs") pairs; the fabric should have hundreds"
  while read -r gpu nvme; do
    "$bin" --root "$root" explain "$gpu" "$nvme" > "$out/explain.root" 2>&1
    "$bin" --dump "$cap" explain "$gpu" "$nvme" > "$out/explain.dump" 2>&1
    if diff <(text_without_source "$out/explain.root") <(text_without_source "$out/explain.dump") > /dev/null; then ok; else
      fail "$variant: explain $gpu $nvme differs replayed"
    fi
  done < <(tail -n +2 <<< "$pairs")
  # A capture of the capture reads, and so stores, the same members.
  "$bin" --dump "$cap" capture -o "$tmp/$variant.again.tar.zst" > /dev/null || fail "$variant: capture of the capture failed"
  if cmp -s <(tar --zstd -tf "$cap") <(tar --zstd -tf "$tmp/$variant.again.tar.zst"); then ok; else
    fail "$variant: the capture of the capture holds other members"
  fi
done

# The two variants must decide differently: the fabric shows passes and refusals, not one verdict.
verdicts=$(python3 -c '
import json, sys
seen = set()
for f in sys.argv[1:]:
    seen |= {d["verdict"] for d in json.load(open(f))["decisions"]}
print(" ".join(sorted(seen)))' "$tmp"/amd/out/pairs.json "$tmp"/intel/out/pairs.json)
[ "$verdicts" = "not_supported supported" ] && ok || fail "verdicts over both variants: '$verdicts'"

json=$(python3 tests/e2e/json_same.py --list "$tmp/compare.list")
grep -v "passed, .* failed" <<< "$json"
jp=$(tail -1 <<< "$json" | awk '{print $1}'); jf=$(tail -1 <<< "$json" | awk '{print $3}')
passed=$((passed + jp)); failed=$((failed + jf))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$jp" -eq 6 ]  # 2 variants x check, paths, topo --json
