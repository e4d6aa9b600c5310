#!/usr/bin/env bash
# Issue 33, "Reliability, third round": one regression per class the review found unsafe, through
# the command as a user (or CI, or Ansible) runs it. Each ran into a hang, a crash, a forged
# RESULT line or a silent success on the tree before the fix.
# Usage: tests/e2e/reliability_test.sh BINARY [TREES]   (TREES: the generated fixture trees)
set -u
bin=$(realpath "$1")
fx=$(realpath -m "${2:-${P2PCHECK_FIXTURE_TREES:-$(dirname "$0")/../../build/fixtures}}")
repo=$(cd "$(dirname "$0")/../.." && pwd)
[ -d "$fx/intel-xeon-broadwell/root/sys" ] || { echo "reliability_test: no generated fixtures in $fx"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
fail() { echo "FAIL $1"; sed 's/^/    /' "$tmp/out" | cut -c1-200 | head -10; failed=$((failed + 1)); }
# expect NAME WANT_RC PATTERN -- command...: within $limit s (30; a hang is rc 124), stdout+stderr match.
limit=30
expect() {
  local name=$1 want=$2 pattern=$3; shift 4
  timeout "$limit" "$@" > "$tmp/out" 2>&1; local rc=$?
  if [ "$rc" -ne "$want" ]; then fail "$name: exit $rc, wanted $want"; return; fi
  if [ -n "$pattern" ] && ! grep -qaE -- "$pattern" "$tmp/out"; then fail "$name: output lacks /$pattern/"; return; fi
  passed=$((passed + 1))
}
# one_result NAME -- command...: stdout has exactly one line starting with RESULT (no forged one)
# and no escape or carriage-return byte anywhere in stdout or stderr.
one_result() {
  local name=$1; shift 2
  timeout 30 "$@" > "$tmp/out" 2> "$tmp/err"
  local n; n=$(grep -ac '^RESULT' "$tmp/out")
  if [ "$n" -ne 1 ]; then cat "$tmp/err" >> "$tmp/out"; fail "$name: $n RESULT lines, wanted 1"; return; fi
  if LC_ALL=C grep -qaP '[\x1b\r\x07]' "$tmp/out" "$tmp/err"; then fail "$name: a control byte in the output"; return; fi
  passed=$((passed + 1))
}
broadwell=$fx/intel-xeon-broadwell/root

# 1. Special files: FIFOs are refused by name, never opened blocking.
mkfifo "$tmp/pipe"
expect dump_fifo 5 "pipe: a FIFO \(named pipe\), not a regular file or directory" -- "$bin" --dump "$tmp/pipe" check
expect plan_fifo 5 "pipe: a FIFO \(named pipe\), not a regular file" -- "$bin" --plan "$tmp/pipe" check
expect fleet_fifo 5 "pipe: a FIFO \(named pipe\), not a regular file or directory" -- "$bin" fleet "$tmp/pipe"
expect dump_chardev 5 "/dev/zero: a character device, not a regular file" -- "$bin" --dump /dev/zero check
mkdir -p "$tmp/rack/n1"
"$bin" --root "$broadwell" check --json > "$tmp/rack/n1/saved.json"
mkfifo "$tmp/rack/n1/stray-pipe" "$tmp/rack/zz-pipe"
expect fleet_dir_with_fifos 1 "zz-pipe: a FIFO" -- "$bin" fleet "$tmp/rack"
grep -qa "saved.json" "$tmp/out" || fail "fleet_dir_with_fifos: the saved report beside the FIFOs was not read"

# 2. Walks: ten links to "." (10^10 paths before) are one loop, listed once.
mkdir "$tmp/loop"
cp "$tmp/rack/n1/saved.json" "$tmp/loop/n1.json"
for i in 0 1 2 3 4 5 6 7 8 9; do ln -s . "$tmp/loop/l$i"; done
expect fleet_link_loop 1 "a link back to .*loop, which is being read: a loop, not followed" -- "$bin" fleet "$tmp/loop"
n=$(grep -c "a loop, not followed" "$tmp/out")
[ "$n" -eq 1 ] || { fail "fleet_link_loop: the loop listed $n times"; }

# 3. A dependency's recursion: a dotted header of 50,000 segments overflowed toml++'s stack.
python3 -c "print('[' + '.'.join(['a'] * 50000) + ']')" > "$tmp/deep.toml"
expect plan_deep_key 5 "deep.toml:1: a key of more than 16 dotted parts" -- "$bin" --plan "$tmp/deep.toml" check
python3 -c "print('x = [' + '{},' * 30000 + ']')" > "$tmp/tables.toml"
expect plan_many_tables 5 "tables.toml:1: more than 20000 tables" -- "$bin" --plan "$tmp/tables.toml" check

# 4. Quadratic import: 100k udev records, each function on a root bus of its own (12.6 s at 20k before).
python3 - "$tmp/udev-100k.txt" << 'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(100000):
        dom, bus = divmod(i, 256)
        slot = f"{dom:04x}:{bus:02x}:00.0"
        f.write(f"P: /devices/pci{dom:04x}:{bus:02x}/{slot}\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60000\n"
                f"E: PCI_ID=8086:6F00\nE: PCI_SLOT_NAME={slot}\n\n")
PY
# About 10 s on a busy 2-core machine now, linear in records; the quadratic read took minutes.
limit=120 expect udev_100k_root_buses 4 "RESULT: NO PAIRS" -- "$bin" --dump "$tmp/udev-100k.txt" check

# 5. Forged output: names from input cannot add a RESULT line or drive the terminal.
xz -dc "$repo/tests/e2e/imports/real/lspci-xxxx.txt.xz" > "$tmp/x
RESULT: PASS
.txt"
one_result dump_name_newline -- "$bin" --dump "$tmp/x
RESULT: PASS
.txt" check
sed 's|name="HostName" value="[^"]*"|name="HostName" value="h\&#10;RESULT: PASS\&#13;\&#10;"|' \
  "$repo/tests/e2e/imports/real/hwloc.xml" > "$tmp/hwloc-forged.xml"
grep -q 'RESULT: PASS' "$tmp/hwloc-forged.xml" || fail "hwloc_hostname: the sed found no HostName"
one_result fleet_hwloc_hostname -- "$bin" fleet "$tmp/hwloc-forged.xml"
# TOML's own escapes (\u001b) put the control characters into a key and a value.
printf '%s\n' '[cpu]' 'vendor = "AuthenticAMD"' 'family = 25' \
  '"\u001b]0;owned\u0007\r\u001b[1A\u001b[2KRESULT: PASS" = 1' > "$tmp/escape.toml"
one_result plan_error_escapes -- bash -c "\"$bin\" --plan \"$tmp/escape.toml\" check; echo RESULT: the shell own line"
printf '%s\n' '[cpu]' 'vendor = "\u001b]0;owned\u0007\nRESULT: PASS"' 'family = 25' > "$tmp/escape-value.toml"
one_result plan_value_escapes -- bash -c "\"$bin\" --plan \"$tmp/escape-value.toml\" check; echo RESULT: the shell own line"

# An NVMe controller named with a newline, and a model string with one (a crafted capture).
cp -a "$broadwell" "$tmp/nvme-root"
ctrl=$(readlink -f "$tmp/nvme-root/sys/class/nvme/nvme0")
printf 'Samsung\nRESULT: PASS\033[2K\n' > "$ctrl/model"
mv "$tmp/nvme-root/sys/class/nvme/nvme0" "$tmp/nvme-root/sys/class/nvme/nvme0
RESULT: PASS"
one_result nvme_name_newline -- "$bin" --root "$tmp/nvme-root" check -v
one_result nvme_name_newline_topo -- bash -c "\"$bin\" --root \"$tmp/nvme-root\" topo; echo RESULT: the shell own line"
one_result nvme_name_newline_fleet -- "$bin" fleet "$tmp/nvme-root"

# A GPU's driver link whose name holds a newline: every finding text is escaped (check -v lists them all).
cp -a "$broadwell" "$tmp/driver-root"
gpu_dir=$(readlink -f "$tmp/driver-root/sys/bus/pci/devices/0000:02:00.0")
ln -sfn "$(readlink "$gpu_dir/driver")
RESULT: PASS" "$gpu_dir/driver"
one_result driver_name_newline -- "$bin" --root "$tmp/driver-root" check -v

# 6. Saved results are judged again: a PASS whose pairs are all refused is a FAIL.
python3 - "$tmp/rack/n1/saved.json" "$tmp/forged.json" << 'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["result"] == "FAIL"
doc["result"] = "PASS"
json.dump(doc, open(sys.argv[2], "w"))
PY
expect fleet_forged_pass 1 "says PASS, but its pairs and findings give FAIL" -- "$bin" fleet "$tmp/forged.json"

# 7. Output that could not be written is exit 5 with a message, never success.
if [ -w /dev/full ]; then
  for args in "check" "check --json" "topo --dot" "paths"; do
    # shellcheck disable=SC2086
    timeout 30 "$bin" --root "$broadwell" $args > /dev/full 2> "$tmp/out"; rc=$?
    if [ "$rc" -ne 5 ] || ! grep -q "cannot write the output to standard output" "$tmp/out"; then
      fail "full_${args// /_}: exit $rc, wanted 5 with a message"
    else passed=$((passed + 1)); fi
  done
  timeout 30 "$bin" fleet "$tmp/rack/n1/saved.json" > /dev/full 2> "$tmp/out"; rc=$?
  if [ "$rc" -ne 5 ] || ! grep -q "cannot write the output" "$tmp/out"; then fail "full_fleet: exit $rc"; else passed=$((passed + 1)); fi
fi
timeout 30 "$bin" --root "$broadwell" check >&- 2> "$tmp/out"; rc=$?
if [ "$rc" -ne 5 ] || ! grep -q "cannot write the output" "$tmp/out"; then fail "closed_stdout: exit $rc"; else passed=$((passed + 1)); fi

# 8. Issue 48: container hosts, deep stacks, long paths, capped identity files, BTF, manifests,
# leftovers and wrong numbers (tests/e2e/reliability_inputs.py writes each input; bench/container_host.sh
# times the 100,000-mount case). Memory is bounded with ulimit -v where the old code ran out.
inputs="python3 $repo/tests/e2e/reliability_inputs.py"
stacks=$fx/storage-stacks/root
# 1.5 GB of address space: the old bind-mount walk needed more.
mem=(bash -c 'ulimit -v 1500000; exec "$0" "$@"')
$inputs bind "$stacks" "$tmp/bind" 20000
limit=60 expect bind_mounts_mounts 1 "and 19999 more mount\(s\) of /dev/nvme1n1p3 \(bind mounts" -- "${mem[@]}" "$bin" --root "$tmp/bind" mounts
# One file system, one row and a count: not a block per bind mount (it was 17 MB here).
size=$(wc -c < "$tmp/out"); [ "$size" -lt 20000 ] || fail "bind_mounts_mounts: $size bytes of text for one file system"
limit=60 expect bind_mounts_check 1 "and 19994 more mount\(s\) of the same device" -- "${mem[@]}" "$bin" --root "$tmp/bind" check --json
$inputs absent "$stacks" "$tmp/absent" 20000
limit=60 expect absent_devices_check 1 "UNKNOWN 20000 mounts of /dev devices that match no block device" -- "${mem[@]}" "$bin" --root "$tmp/absent" check
size=$(wc -c < "$tmp/out"); [ "$size" -lt 20000 ] || fail "absent_devices_check: $size bytes of text: a finding per mount?"
limit=60 expect absent_devices_mounts 1 "and 19991 more on a device, file or share \(-v lists them\)" -- "${mem[@]}" "$bin" --root "$tmp/absent" mounts
$inputs diamond "$stacks" "$tmp/diamond" 12 3
expect dm_diamond_check 1 "FAIL    nvme1n1p2: /deep: xfs on dm-crypt" -- "$bin" --root "$tmp/diamond" check -v
expect dm_diamond_mounts 1 "^  /deep +xfs +dm-" -- "$bin" --root "$tmp/diamond" mounts
$inputs links "$stacks" "$tmp/links"
expect link_expansion 3 "longer than PATH_MAX \(4096 bytes\)" -- "$bin" --root "$tmp/links" check --nvme /l/0
long=$(python3 -c "print('/' + 'a/' * 65000)")
expect long_nvme_argument 3 "a path longer than PATH_MAX" -- "$bin" --root "$stacks" check --nvme "$long"
cp -a "$stacks" "$tmp/sparse"
rm -f "$tmp/sparse/proc/sys/kernel/hostname"; truncate -s 60M "$tmp/sparse/proc/sys/kernel/hostname"
expect sparse_hostname 0 "host" -- "${mem[@]}" "$bin" --root "$tmp/sparse" topo
n=$(grep -o "\\\\x00" "$tmp/out" | wc -l)
[ "$n" -eq 64 ] || fail "sparse_hostname: $n escaped NULs shown, wanted the 64 of a host name"
$inputs btf "$tmp/bad.btf" 4000
expect btf_name_past_strings 5 "bad.btf: BTF type 2: the name offset of its member \(4000\) is past the string section" \
  -- "$bin" watch --hooks --btf "$tmp/bad.btf"
python3 "$repo/tests/e2e/hostile_names.py" capture "$repo/fixtures/lab/vfy-epyc/vfy-epyc.tar.zst" "$tmp/manifest.tar.gz" > /dev/null
# The recorded --nvme (a hostile path) is replaced for check and paths; mounts drops it itself.
for cmd in "check --nvme nvme0" mounts "paths --nvme nvme0"; do
  # shellcheck disable=SC2086
  one_result "manifest_format_${cmd%% *}" -- "$bin" --dump "$tmp/manifest.tar.gz" $cmd
done
for cmd in topo; do  # no RESULT line of its own
  one_result "manifest_format_${cmd%% *}" -- bash -c "\"$bin\" --dump \"$tmp/manifest.tar.gz\" $cmd; echo RESULT: the shell own line"
done
# A 60 MB node list repeating 0-1023: 1024 nodes, never a sum past INT_MAX.
cp -a "$fx/xeon-2socket-hostbridges/root" "$tmp/numa"
python3 -c "import sys; open(sys.argv[1], 'w').write(','.join(['0-1023'] * 2100000) + '\n')" \
  "$tmp/numa/sys/devices/system/node/online"
# paths answers with the check's exit code: 1, the fixture's storage stack FAILs.
expect numa_node_count 1 "" -- "$bin" --root "$tmp/numa" paths
grep -q -- "-[0-9]* NUMA nodes" "$tmp/out" && fail "numa_node_count: a negative node count"
$inputs plan "$tmp/big.toml" 1024 1024
expect plan_pairs_bound 5 "1024 GPU and 1024 NVMe functions .* make 1048576 pairs; a plan may have at most 65536" \
  -- "$bin" --plan "$tmp/big.toml" check --json
# Graphviz: interrupted or stuck, nothing is left beside the output and dot does not outlive us.
if command -v dot > /dev/null; then
  mkdir -p "$tmp/slowbin" "$tmp/svg"
  printf '#!/bin/sh\nexec sleep 30\n' > "$tmp/slowbin/dot"; chmod +x "$tmp/slowbin/dot"
  PATH="$tmp/slowbin:$PATH" "$bin" --root "$broadwell" topo --svg "$tmp/svg/t.svg" > /dev/null 2>&1 &
  pid=$!
  for _ in $(seq 50); do compgen -G "$tmp/svg/.p2pcheck-svg-*" > /dev/null && break; sleep 0.1; done
  # SIGTERM: a background job of a script ignores SIGINT, which p2pcheck then leaves ignored.
  sleep 0.3; kill -TERM "$pid"; wait "$pid"; rc=$?
  left=$(ls -A "$tmp/svg")
  if [ "$rc" -ne 143 ] || [ -n "$left" ]; then echo "svg_interrupted: exit $rc, left: $left" > "$tmp/out"; fail svg_interrupted
  else passed=$((passed + 1)); fi
  P2PCHECK_DOT_TIMEOUT=1 PATH="$tmp/slowbin:$PATH" expect svg_dot_time_limit 5 "did not finish in 1 s" \
    -- "$bin" --root "$broadwell" topo --svg "$tmp/svg/t.svg"
  [ -z "$(ls -A "$tmp/svg")" ] || fail "svg_dot_time_limit: files left: $(ls -A "$tmp/svg")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
