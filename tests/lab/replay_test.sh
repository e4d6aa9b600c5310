#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Replays the QEMU lab's captures without QEMU: every
# fixtures/lab/<scenario>/<scenario>.tar.zst is a sysfs+proc tree a real 6.12 /
# 6.1 / Debian kernel made in the lab, in p2pcheck's capture format (captured in
# the guest by `p2pcheck capture`, see tests/lab/README.md).
#
#   tests/lab/replay_test.sh BINARY           compare (a fast, non-lab test)
#   tests/lab/replay_test.sh BINARY update    rewrite expected/check.json and
#       expected/exit_code from the stored captures after an intended output change
#       (review the diff; expected/kernel.json, the kernel's own answers, is
#       only ever written by a QEMU run: lab.py run --update-fixtures)
#
# For each fixture:
#   1. `p2pcheck --dump <scenario>.tar.zst check --json $(cat args)` minus its
#      "source" line == expected/check.json, and its exit code == expected/exit_code;
#   2. the same through --root of the archive unpacked (both readers agree);
#   3. every pair's distance / verdict / map type == the running kernel's own
#      answer recorded in the guest through kmod/p2pprobe (expected/kernel.json);
#      and where the capture holds answers in live/kmod.json (what the module said
#      when `p2pcheck capture` asked), the replay shows them on every pair, agreeing.
# expected/ is written by `tests/lab/lab.py run --update-fixtures SCENARIO`
# (from a fresh QEMU capture); review the diff before committing.
set -u
bin=$(realpath "$1")
mode=${2:-check}
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

shopt -s nullglob
dirs=(fixtures/lab/*/)
[ ${#dirs[@]} -gt 0 ] || { echo "replay_test: no fixtures/lab/*/"; exit 1; }
for dir in "${dirs[@]}"; do
	name=$(basename "$dir")
	dir=${dir%/}
	capture=$dir/$name.tar.zst
	for f in args "$name.tar.zst" expected/check.json expected/exit_code expected/kernel.json; do
		[ -e "$dir/$f" ] || { fail "$name" "missing $dir/$f"; continue 2; }
	done
	read -r -a args < "$dir/args"
	# The kernel comparison below reads each pair in full: its record joined with its decisions row
	# (tests/e2e/check_json_pairs.py).
	"$bin" --dump "$capture" check --json=pretty "${args[@]}" > "$tmp/$name.raw" 2> "$tmp/$name.err"
	rc=$?
	grep -v '"source"' "$tmp/$name.raw" > "$tmp/$name.json"
	if [ "$mode" = update ]; then
		cp "$tmp/$name.json" "$dir/expected/check.json"
		echo "$rc" > "$dir/expected/exit_code"
		echo "updated $dir/expected/check.json"
	fi
	ok=1
	if ! diff -u "$dir/expected/check.json" "$tmp/$name.json" > "$tmp/$name.diff"; then
		fail "$name" "output differs from $dir/expected/check.json"
		head -40 "$tmp/$name.diff"
		ok=0
	fi
	if [ "$rc" != "$(cat "$dir/expected/exit_code")" ]; then
		fail "$name" "exit code $rc, expected $(cat "$dir/expected/exit_code") ($(head -c 300 "$tmp/$name.err"))"
		ok=0
	fi
	# The archive unpacked (top folder p2pcheck-capture/) and read as a directory tree.
	root=$tmp/$name.root
	mkdir -p "$root"
	if ! tar --zstd -C "$root" -xf "$capture" || [ ! -d "$root/p2pcheck-capture/sys" ]; then
		fail "$name" "$capture does not unpack to p2pcheck-capture/sys"
		continue
	fi
	root=$root/p2pcheck-capture
	"$bin" --root "$root" check --json=pretty "${args[@]}" 2>/dev/null | grep -v '"source"' > "$tmp/$name.root.json"
	if ! cmp -s "$tmp/$name.root.json" "$tmp/$name.json"; then
		fail "$name" "--root of the unpacked archive differs from --dump"
		ok=0
	fi
	if ! python3 - "$tmp/$name.json" "$dir/expected/kernel.json" "$root" tests/e2e <<'EOF'
import json, os, sys
sys.path.insert(0, sys.argv[4])
from check_json_pairs import pairs_in_full
ours = pairs_in_full(json.load(open(sys.argv[1])))
kmod = os.path.join(sys.argv[3], "live", "kmod.json")
recorded = os.path.exists(kmod) and bool(json.load(open(kmod)).get("verdicts"))
kern = json.load(open(sys.argv[2]))
bad = 0
if len(ours) != len(kern["pairs"]) or not ours:
    print(f"  {len(ours)} pairs in our output, {len(kern['pairs'])} in kernel.json")
    bad += 1
for k in kern["pairs"]:
    o = ours.get((k["provider_bdf"], k["client_bdf"]))
    name = f"{k['provider']}->{k['client']} ({k['provider_bdf']} -> {k['client_bdf']})"
    if o is None:
        print(f"  {name}: not in our output"); bad += 1; continue
    if o["distance"] != k["distance"] or (o["verdict"] == "supported") != (k["distance"] >= 0):
        print(f"  {name}: ours distance {o['distance']} {o['verdict']}, kernel distance {k['distance']}"); bad += 1
    if k["map_reason"] == "probed" and o["map_type"] != k["map_type"]:
        print(f"  {name}: ours map type {o['map_type']}, kernel {k['map_type']}"); bad += 1
    if recorded and not (o.get("kernel") and o["kernel"].get("agrees") and o["kernel"]["distance"] == k["distance"]):
        print(f"  {name}: the capture's recorded kernel answer is not shown or disagrees: {o.get('kernel')}"); bad += 1
sys.exit(1 if bad else 0)
EOF
	then
		fail "$name" "a verdict differs from the kernel's own (expected/kernel.json)"
		ok=0
	fi
	[ "$ok" = 1 ] && passed=$((passed + 1))
done
# `watch --replay` of each lab watch recording (fixtures/lab/<scenario>/watch/watch-NAME.json, kept
# by lab.py --update-fixtures) judged on its scenario's capture: the text and exit code ==
# watch-NAME.expected (reviewed; rewritten in update mode).
for rec in fixtures/lab/*/watch/watch-*.json; do
	[ -f "$rec" ] || continue
	scenario=$(basename "$(dirname "$(dirname "$rec")")")
	capture=fixtures/lab/$scenario/$scenario.tar.zst
	want=${rec%.json}.expected
	got=$tmp/watch.out
	"$bin" --dump "$capture" --color never watch --replay "$rec" > "$got" 2>&1
	echo "exit $?" >> "$got"
	if [ "$mode" = update ]; then
		cp "$got" "$want"
		passed=$((passed + 1))
	elif cmp -s "$got" "$want"; then
		passed=$((passed + 1))
	else
		fail "$rec" "watch --replay differs from $want"
		diff "$want" "$got" | head -20
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
