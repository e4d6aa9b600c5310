#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `watch -- COMMAND` counts that command's process tree (issue 46), proven on this machine's own
# kernel where it lets watch load its probe: while the command's child dd writes 2 MiB with O_DIRECT,
# a loop started outside watch writes too, round after round (the command waits for two of its
# rounds). Only the command's tree is counted; the other dd's are said to be left out, and
# `watch --replay --all` of the run's recording counts them. Exit 77 (skipped) where the probe cannot
# load (not root, no BTF, a kernel that refuses BPF) or the directory is on no block device.
#   tests/e2e/watch_tree_test.sh BINARY
set -u
bin=$(realpath "$1")
work=$(mktemp -d -p "$PWD" watch-tree.XXXXXX) || exit 1
bg=
trap 'touch "$work/stop"; [ -n "$bg" ] && wait "$bg"; rm -rf "$work"' EXIT
"$bin" watch --duration 0.2 > "$work/probe.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 4 ]; then
  echo "SKIP: watch cannot count here (exit $rc): $(tail -1 "$work/probe.out")"
  exit 77
fi
if [ "$(stat -f -c %T "$work")" = tmpfs ]; then
  echo "SKIP: $work is on tmpfs: O_DIRECT writes there reach no block device"
  exit 77
fi
: > "$work/beside.pids"
(
  while [ ! -e "$work/stop" ]; do
    dd if=/dev/zero of="$work/beside" bs=64k count=1 oflag=direct conv=notrunc 2> /dev/null &
    echo $! >> "$work/beside.pids"
    wait $!
  done
) &
bg=$!
"$bin" watch --json --record "$work/rec.json" -- sh -c '
  dd if=/dev/zero of="$1/mine" bs=1M count=2 oflag=direct 2> /dev/null
  n=$(wc -l < "$1/beside.pids"); i=0
  while [ "$(wc -l < "$1/beside.pids")" -lt $((n + 2)) ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done' \
  sh "$work" > "$work/tree.json" 2> "$work/tree.err"
echo $? > "$work/tree.rc"
"$bin" watch --replay "$work/rec.json" --all --json > "$work/all.json" 2> "$work/all.err"
touch "$work/stop"
wait "$bg"
bg=
python3 - "$work" << 'PY'
import json, sys
work = sys.argv[1]
failed = []
def ok(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failed.append(what)
beside = {int(p) for p in open(f"{work}/beside.pids").read().split()}
rc = open(f"{work}/tree.rc").read().strip()
ok(rc in ("0", "4"), f"watch -- COMMAND exits 0 or 4: {rc} {open(f'{work}/tree.err').read()[-300:]}")
tree = json.load(open(f"{work}/tree.json"))
scope = tree["scope"]
ok(scope["processes"] == "command_tree", f"scope {scope['processes']}")
counted = [p for row in tree["host"] + tree["pairs"] for p in row["processes"]]
ok(not [p for p in counted if p["pid"] in beside], f"no process outside the tree is counted: {counted}")
mine = sum(p["bytes"] for row in tree["host"] if row["direction"] == "to_storage"
           for p in row["processes"] if p["comm"] == "dd")
ok(mine >= 2 << 20, f"the command's dd wrote at least 2 MiB, counted: {mine}")
left = [p for p in scope["not_counted"]["processes"] if p["pid"] in beside]
ok(left and scope["not_counted"]["requests"] >= 1, f"the other dd's I/O is said to be left out: {scope['not_counted']}")
everyone = json.load(open(f"{work}/all.json"))
ok(everyone["scope"]["processes"] == "machine", f"--replay --all scope {everyone['scope']['processes']}")
again = [p for row in everyone["host"] for p in row["processes"] if p["pid"] in beside]
ok(bool(again), "--replay --all counts the other dd's I/O")
sys.exit(1 if failed else 0)
PY
