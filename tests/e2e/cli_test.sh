#!/usr/bin/env bash
# End-to-end checks of the p2pcheck command: the live backend on this GPU-less machine, exit codes,
# and clear errors for bad input. Usage: tests/e2e/cli_test.sh BINARY [TREES]
# TREES: the generated fixture trees (<TREES>/<name>/root), else $P2PCHECK_FIXTURE_TREES, else
# build/fixtures.
set -u
bin=$1
fx=$(realpath -m "${2:-${P2PCHECK_FIXTURE_TREES:-$(dirname "$0")/../../build/fixtures}}")
src=$(cd "$(dirname "$0")/../.." && pwd)  # the source tree: saved BTF in tests/live/btf
cd "$(dirname "$0")/../.." || exit 1
[ -d "$fx/epyc-mi300x-8gpu/root/sys" ] || { echo "cli_test: no generated fixtures in $fx (python3 tools/mkfixture.py --all --out $fx)"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
# A crash is never an answer, whatever the exit code: a signal (128+N) or a sanitizer's report.
crashed='==[0-9]+==ERROR: [A-Za-z]+Sanitizer|^SUMMARY: [A-Za-z]+Sanitizer|: runtime error: '
# expect NAME WANT_RC PATTERN -- command...: exit WANT_RC, a line matching PATTERN (an extended regex
# of the expected line, never empty) and no crash; the output stays in $tmp/out. Returns 1 on failure.
expect() {
  local name=$1 want=$2 pattern=$3 why=; shift 4
  "$@" > "$tmp/out" 2>&1; local rc=$?
  if [ "$rc" -ge 128 ] || grep -qE -- "$crashed" "$tmp/out"; then why="crashed (exit $rc)"
  elif [ "$rc" -ne "$want" ]; then why="exit $rc, wanted $want"
  elif [ -z "$pattern" ]; then why="no expected output given (the test must say what to see)"
  elif ! grep -qE -- "$pattern" "$tmp/out"; then why="output lacks /$pattern/"; fi
  if [ -n "$why" ]; then
    echo "FAIL $name: $why"; sed 's/^/    /' "$tmp/out" | head -20; failed=$((failed + 1)); return 1; fi
  passed=$((passed + 1))
}
ascii_only() {  # NAME: $tmp/out (the last expect's output) holds no byte above 0x7f
  if LC_ALL=C grep -qP '[^\x00-\x7f]' "$tmp/out"; then
    echo "FAIL $1: non-ASCII bytes"; LC_ALL=C grep -nP '[^\x00-\x7f]' "$tmp/out" | head -3; failed=$((failed + 1))
  else passed=$((passed + 1)); fi
}

# The live machine: PCI devices but no GPU here, so the tool must say so plainly.
if expect live_json 0 '^  "source": "live /",$' -- "$bin" topo --json=pretty && ! grep -q '"gpus": \[\]' "$tmp/out"; then
  echo "note: this machine has a GPU; skipping the GPU-less live checks"
elif grep -q '"gpus": \[\]' "$tmp/out"; then
  expect live_topo 0 "no AMD or NVIDIA GPU found in live /" -- "$bin" topo
  expect live_paths 4 "no GPU–NVMe pair found in live /" -- "$bin" paths
  expect live_check 4 "^RESULT: NO PAIRS — no GPU–NVMe pair in live / " -- "$bin" check
  expect live_default_is_check 4 "^RESULT: NO PAIRS — no GPU–NVMe pair in live / " -- "$bin"
fi
# verify writes real data: it must be told where, only on this machine, and never off the NVMe.
expect verify_needs_target 3 "name where, --target DIR" -- "$bin" verify
expect verify_live_only 3 "verify moves real data on this machine" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" verify --target /tmp
expect verify_raw_confirm 3 "add --allow-destructive" -- "$bin" verify --raw /dev/null --offset 1M
expect verify_bad_offset 3 "--offset -8M: expected a size" -- "$bin" verify --raw /dev/null --offset -8M --allow-destructive
expect verify_bad_direction 3 "^p2pcheck: --direction: sideways not in \{both,to-device,to-storage\}$" -- "$bin" verify --target /tmp --direction sideways
if [ -d /sys/class/nvme ] && [ -n "$(ls /sys/class/nvme 2>/dev/null)" ]; then :; else
  expect verify_target_not_nvme 3 "^p2pcheck: (--target /tmp: its file system sits on .+, which is not on a local NVMe controller; |--gpu 00:00\.0: no PCI function)" -- "$bin" verify --gpu 00:00.0 --nvme 00:00.0 --target /tmp
fi
# watch: option mistakes are usage errors before anything loads.
expect watch_bad_interval 3 "^p2pcheck: --interval must be more than 0 seconds$" -- "$bin" watch --interval 0
expect watch_btf_needs_hooks 3 "^p2pcheck: --btf is for --hooks or --save-btf" -- "$bin" watch --btf /dev/null
expect watch_hooks_with_command 3 "^p2pcheck: --hooks loads nothing and runs nothing: drop it, or drop \`-- true \.\.\.\`$" -- "$bin" watch --hooks --btf "$src/tests/live/btf/lab-7.3.4.btf" -- true
expect watch_hooks_73 0 "^  P2P decision: blk_rq_dma_map_iter_start$" -- "$bin" watch --hooks --btf "$src/tests/live/btf/lab-7.3.4.btf"
expect watch_all_with_pid 3 "^p2pcheck: --all counts every process; --pid counts only some: give one of them$" -- "$bin" watch --all --pid 1
# A selection that names no function of the machine is a usage error, as for check (issue 46).
lab_rec=$src/fixtures/lab/vfy-epyc/watch/watch-host-dd.json lab_cap=$src/fixtures/lab/vfy-epyc/vfy-epyc.tar.zst
expect watch_gpu_names_nothing 3 "^p2pcheck: --gpu 0000:99:00.0: no PCI function at that address in " -- "$bin" --gpu 0000:99:00.0 --dump "$lab_cap" watch --replay "$lab_rec"
expect watch_nvme_names_nothing 3 "^p2pcheck: --nvme nvme9: no NVMe controller or namespace of that name in " -- "$bin" --nvme nvme9 --dump "$lab_cap" watch --replay "$lab_rec"
expect watch_replay_words 4 "^  host memory  nvme2n1 \(0000:05:00\.0\)  host  storage -> memory " -- "$bin" --dump "$lab_cap" --color never watch --replay "$lab_rec"
# Where this machine lets watch load its probe: --duration ends the watching, never the command,
# and watch does not wait for it.
"$bin" watch --duration 0.2 > /dev/null 2>&1; watch_rc=$?
if [ $watch_rc -eq 0 ] || [ $watch_rc -eq 4 ]; then
  expect watch_duration_leaves_command 4 "^p2pcheck: watch: stopped watching; sleep \(pid [0-9]+\) is still running$" -- "$bin" watch --duration 0.5 -- sleep 3
fi
# No kernel module can load here: the tool says so and how to get one.
if [ ! -e /dev/p2pprobe ]; then
  expect kmod_status 1 "^p2pprobe: not loaded$" -- "$bin" kmod status
  expect kmod_status_json 1 '"loaded": false' -- "$bin" kmod status --json=pretty
  expect kmod_unload_noop 0 "^p2pprobe is not loaded$" -- "$bin" kmod unload
fi

# A sysfs string that is not UTF-8 (a vendor's model field) is shown replaced, never a crash.
cp -a "$fx/epyc-mi300x-8gpu/root" "$tmp/badutf8"
printf 'SAMSUNG \xff\xfe MZWLO7T6\n' > "$tmp/badutf8/sys/class/nvme/nvme0/model"
expect bad_utf8_topo_json 0 '"model": "SAMSUNG .+ MZWLO7T6"' -- "$bin" --root "$tmp/badutf8" topo --json=pretty
expect bad_utf8_check_json 1 '"schema": "p2pcheck.check"' -- "$bin" --root "$tmp/badutf8" check --json=pretty

# check --json: schema_version 4 (paths --json: its own version 2); versions 1, 2 and 3 are retired,
# and a script that asks for one hears why and where to read how to migrate (docs/json.md).
epyc=$fx/epyc-mi300x-8gpu/root
expect check_json_default_v4 1 '^  "schema_version": 4,$' -- "$bin" --root "$epyc" check --json=pretty
expect check_json_schema_4 1 '^  "schema_version": 4,$' -- "$bin" --root "$epyc" check --json=pretty --json-schema 4
expect paths_json_default_v2 1 '^  "schema_version": 2,$' -- "$bin" --root "$epyc" paths --json=pretty
expect check_json_schema_1 3 '^p2pcheck: --json-schema: schema_version 1 \(every pair in full\) is retired: read version 4.s decisions table \(docs/json.md, "Migrating from schema_version 1"\)' -- "$bin" --root "$epyc" --json-schema 1 check --json
expect check_json_schema_2 3 '^p2pcheck: --json-schema: schema_version 2 \(each pair an object with its locality\) is retired: read version 4.s pairs, \[gpu, nvme, decision, distance, gpu_ports, nvme_ports\] \(docs/json.md, "Migrating from schema_version 2"\)' -- "$bin" --root "$epyc" --json-schema 2 check --json
expect check_json_schema_3 3 '^p2pcheck: --json-schema: schema_version 3 \(decisions rows naming each pair.s ACS redirect ports\) is retired: read version 4.s pairs, \[gpu, nvme, decision, distance, gpu_ports, nvme_ports\], their ACS redirect ports in port_lists \(docs/json.md, "Migrating from schema_version 3"\)' -- "$bin" --root "$epyc" --json-schema 3 check --json
expect json_schema_5 3 '^p2pcheck: --json-schema: 5 is not a schema_version check --json writes \(4\)$' -- "$bin" --root "$epyc" --json-schema 5 check --json

# Exit codes and messages on the fixtures.
expect broadwell_explain 1 "not on 6.8's P2PDMA allowlist" -- "$bin" --root "$fx/intel-xeon-broadwell/root" explain 02:00.0 nvme0
# Problems first: PASS and INFO only with -v; --quiet is the RESULT line alone; --ascii is ASCII.
expect epyc_problems_first 1 "and [0-9]+ passed, [0-9]+ for information \(-v lists them\)" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" check
expect epyc_verbose 1 "^  PASS    CONFIG_PCI_P2PDMA=y" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" check -v
expect epyc_quiet 1 "^RESULT: FAIL — failing: storage.stack \(nvme6n1, nvme7n1\); all 72 GPU–NVMe pairs allowed$" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" check --quiet &&
  if [ "$(wc -l < "$tmp/out")" -eq 1 ]; then passed=$((passed + 1)); else
    echo "FAIL epyc_quiet_one_line: $(wc -l < "$tmp/out") lines"; failed=$((failed + 1)); fi
# -q on every command with a RESULT: that line alone; topo (no verdict) prints nothing.
for cmd in paths mounts; do
  expect "epyc_quiet_$cmd" 1 "^RESULT: FAIL — failing: storage.stack \(nvme6n1, nvme7n1\)" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" -q "$cmd" &&
    if [ "$(wc -l < "$tmp/out")" -eq 1 ]; then passed=$((passed + 1)); else
      echo "FAIL epyc_quiet_${cmd}_one_line: $(wc -l < "$tmp/out") lines"; failed=$((failed + 1)); fi
done
"$bin" --root "$fx/epyc-mi300x-8gpu/root" -q topo > "$tmp/out" 2>&1; rc=$?
if [ "$rc" -eq 0 ] && [ ! -s "$tmp/out" ]; then passed=$((passed + 1)); else
  echo "FAIL epyc_quiet_topo: exit $rc, $(wc -c < "$tmp/out") bytes"; failed=$((failed + 1)); fi
# --nvme narrows the result to the selected pairs: md0's members are not among them.
expect selection_scopes_result 0 "^RESULT: PASS — all 8 GPU–NVMe pairs allowed" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" check --nvme nvme0 --quiet
# Each command's exit code and a line of its answer, spelt in ASCII: "CODE|REGEX|COMMAND".
ascii_answers=(
  "1|^RESULT: FAIL - failing: storage\.stack \(nvme6n1, nvme7n1\); all 72 GPU-NVMe pairs allowed$|check -v"
  "0|^8 GPU\(s\), 9 NVMe controller\(s\), 75 PCI functions under 8 host bridge\(s\)$|topo"
  "1|^GPU 0000:03:00\.0 <-> nvme0 0000:05:00\.0: allowed \(THRU_HOST_BRIDGE\) - ACS redirect on 0000:02:00\.0, 0000:02:02\.0 sends the traffic up|paths"
  "0|^Verdict: THRU_HOST_BRIDGE, supported, distance 4$|explain 0000:03:00.0 nvme0")
for a in "${ascii_answers[@]}"; do
  IFS='|' read -r code pattern cmd <<< "$a"
  # shellcheck disable=SC2086
  expect "ascii_$cmd" "$code" "$pattern" -- "$bin" --root "$epyc" --ascii $cmd && ascii_only "ascii_only_$cmd"
done
# topo fits its lines to COLUMNS (80 when unset and not a terminal); --paths keeps only the pairs' routes.
for cols in "" 60 132; do
  expect "topo_fits_columns_${cols:-unset}" 0 "^8 GPU\(s\), 9 NVMe controller\(s\)" -- env ${cols:+COLUMNS=$cols} "$bin" --root "$epyc" --ascii topo &&
    # A line of one word (the tree's path, deep in a build directory) is never cut: it is copied whole.
    if [ "$(awk '!/^ *[^ ]+$/ { print length($0) }' "$tmp/out" | sort -n | tail -1)" -le "${cols:-80}" ]; then passed=$((passed + 1)); else
      echo "FAIL topo_fits_columns_${cols:-unset}: a line wider than ${cols:-80}"; failed=$((failed + 1)); fi
done
expect topo_paths 0 "^--paths: 6 functions on the pairs' routes" -- "$bin" --root "$epyc" topo --paths --gpu 43:00.0 --nvme nvme2 &&
  if ! grep -q "0000:03:00.0" "$tmp/out" && grep -q "0000:45:00.0" "$tmp/out"; then passed=$((passed + 1)); else
    echo "FAIL topo_paths: a function off the route is listed, or the NVMe is missing"; failed=$((failed + 1)); fi
expect topo_paths_dot 0 "^ +f_0000_45_00_0 \[" -- "$bin" --root "$epyc" topo --paths --dot --gpu 43:00.0 --nvme nvme2 &&
  if ! grep -q "f_0000_03_00_0" "$tmp/out"; then passed=$((passed + 1)); else
    echo "FAIL topo_paths_dot: a GPU off the route is drawn"; failed=$((failed + 1)); fi
expect topo_paths_json 3 "topo --paths is a view of the tree" -- "$bin" --root "$epyc" topo --paths --json
# A capture is a tar: a name that promises another format is refused before anything is read or written.
expect capture_zip_name 3 "^p2pcheck: foo\.zip: a capture is a tar archive; name it \.tar\.zst \(zstd\)" -- \
  env -C "$tmp" "$bin" --root "$epyc" capture -o foo.zip &&
  if [ ! -e "$tmp/foo.zip" ]; then passed=$((passed + 1)); else echo "FAIL capture_zip_name: foo.zip written"; failed=$((failed + 1)); fi
# A mistyped command gets a suggestion; subcommand --help lists the global options that apply.
expect did_you_mean 3 "did you mean 'check'\?" -- "$bin" chek
expect did_you_mean_prefix 3 "did you mean 'topo'\?" -- "$bin" topology
expect no_suggestion_far_off 3 "^p2pcheck: unknown command 'banana'$" -- "$bin" banana
expect subcommand_help_globals 0 "^  --assume-kernel REL " -- "$bin" explain --help
# A mistyped option gets the closest one; an option of another command says which; the words are
# echoed in the order typed; explain's errors name explain's words, not an option never typed.
expect option_did_you_mean 3 "^p2pcheck: unknown option '--jsn'; did you mean '--json'\?$" -- "$bin" --jsn
expect command_option_did_you_mean 3 "^see \`p2pcheck check --help\`$" -- "$bin" check --verbos &&
  expect command_option_did_you_mean_line 3 "^p2pcheck: unknown option '--verbos'; did you mean '--verbose'\?$" -- "$bin" check --verbos
expect option_of_topo 3 "'--svg' is an option of \`p2pcheck topo\`, not of \`check\` \(then not understood: 'x.svg'\)" -- "$bin" check --svg x.svg
expect words_in_typed_order 3 "unexpected argument 'one': \`check\` takes no arguments \(then not understood: 'two' 'three'\)" -- "$bin" check one two three
expect explain_names_its_word 3 "^p2pcheck: explain's NVMe nvme9: " -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" explain 04:00.0 nvme9
# --help and the man page show options as the docs write them, none of CLI11's type labels.
for cmd in "" check explain topo paths capture fleet kmod "kmod load" verify; do
  # shellcheck disable=SC2086
  expect "help_$cmd" 0 "^Usage: .*p2pcheck ${cmd:+$cmd }\[OPTIONS\]" -- "$bin" $cmd --help || continue
  if grep -nE 'TEXT|REQUIRED|x 2|\{compact\}|:\{|INT|UINT|FLOAT' "$tmp/out"; then
    echo "FAIL help_artefacts '$cmd': CLI11 type labels in --help"; failed=$((failed + 1)); else passed=$((passed + 1)); fi
done
# A locale that is not UTF-8 gets ASCII as --ascii does; an unset locale keeps UTF-8.
for a in "${ascii_answers[@]}"; do
  IFS='|' read -r code pattern cmd <<< "$a"
  [ "$cmd" = paths ] && continue
  # shellcheck disable=SC2086
  expect "lang_c_$cmd" "$code" "$pattern" -- env -u LC_ALL -u LC_CTYPE LANG=C "$bin" --root "$epyc" $cmd &&
    ascii_only "lang_c_ascii_only_$cmd"
done
expect unset_locale_utf8 1 "^RESULT: FAIL — failing: storage\.stack \(nvme6n1, nvme7n1\); all 72 GPU–NVMe pairs allowed$" -- \
  env -u LC_ALL -u LC_CTYPE -u LANG "$bin" --root "$epyc" check --quiet
# check and explain fold at $COLUMNS (no line past it but one long word, no trailing blank); a pipe
# without it keeps one line per finding.
xeon="$fx/xeon-broadwell-switch-acs/root"
: > "$tmp/narrow"
expect narrow_check 1 "^RESULT: FAIL — " -- env COLUMNS=60 "$bin" --root "$xeon" check -v && cat "$tmp/out" >> "$tmp/narrow"
expect narrow_explain 1 "^Verdict: NOT_SUPPORTED, not_supported, distance -1$" -- \
  env COLUMNS=60 "$bin" --root "$xeon" explain 0000:05:00.0 0000:07:00.0 && cat "$tmp/out" >> "$tmp/narrow"
long=$(perl -CSD -ne 'print "trailing blank: $_" if / \n$/' "$tmp/narrow"; sed '1,/^RESULT/d' "$tmp/narrow" | perl -CSD -ne 's/\e\[[0-9;]*m//g; chomp; my $l = length($_); s/^\s*(\w+: )?//; print "$_\n" if $l > 60 && /\s/')
if [ -n "$long" ] || ! grep -q '^          evidence: ' "$tmp/narrow"; then
  echo "FAIL findings_fold: lines past COLUMNS=60 or no folded evidence:"; echo "$long" | head -3; failed=$((failed + 1)); else passed=$((passed + 1)); fi
expect findings_unfolded_in_a_pipe 1 '^  FAIL    amdgpu has no AIS .*hipFile falls back to POSIX I/O' -- env -u COLUMNS "$bin" --root "$xeon" check
expect epyc_explain 0 "common upstream bridge" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" explain 0000:03:00.0 /dev/nvme0n1
expect any_two_functions 0 "^    route    ACS redirect on 0000:02:00\.0, 0000:02:01\.0 sends it up to host bridge 0000:00 and back down: it does not turn at the common bridge 0000:01:00\.0; path distance 4$" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" paths --gpu 03:00.0 --nvme 04:00.0
expect nonroot_unknown 0 "ask for a capture taken as root" -- "$bin" --root "$fx/epyc-mi300x-8gpu-nonroot/root" topo

# Usage errors: exit 3.
expect bad_gpu 3 "--gpu 77:00.0: no PCI function" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" paths --gpu 77:00.0
expect bad_nvme 3 "--nvme nvme42" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" check --nvme nvme42
expect bad_subcommand 3 "^p2pcheck: unknown command 'frobnicate'$" -- "$bin" frobnicate
expect bad_kernel 3 "kernel banana: expected a release" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" check --assume-kernel banana
expect what_if_labelled 1 "^RESULT: FAIL — if booted with kernel 4.18.0-553.el8_10.x86_64: 72 refused of 72 GPU–NVMe pair\(s\)" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" check --quiet --what-if-kernel 4.18.0-553.el8_10.x86_64
expect fail_on_minus_stack 0 "not counted \(--fail-on -stack\): failing: storage.stack" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" check --quiet --fail-on=-stack
expect fail_on_adds_to_default 1 "^RESULT: FAIL — failing: storage.stack" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" check --quiet --fail-on unknown
expect fail_on_empty 3 "--fail-on: an empty list" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" check --fail-on ''
expect fail_on_known_bad_minus_refused 1 "^RESULT: FAIL — 4 refused of 4" -- "$bin" --root "$fx/rhel98-epyc/root" check --quiet --fail-on=-refused,-stack
expect fail_on_bad_word 3 "--fail-on nope: 'nope' is no category; expected" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" check --fail-on nope
# Issue 47: a distribution kernel's release says little about its allowlist: UNKNOWN and how to know,
# never a refusal built on upstream 5.14's table; a file that is no kernel is refused by name.
expect what_if_distro_unknown 2 "^RESULT: UNKNOWN — if booted with kernel 5\.14\.0-570\.58\.1\.el9_6\.x86_64: .*undecided.*the kernel package \(--what-if-kernel FILE\)" -- "$bin" --root "$fx/xeon-sapphire-rapids/root" check --quiet --what-if-kernel 5.14.0-570.58.1.el9_6.x86_64
expect what_if_distro_json 2 '"source": "table for upstream 5.14"' -- "$bin" --root "$fx/xeon-sapphire-rapids/root" check --json=pretty --what-if-kernel 5.14.0-570.58.1.el9_6.x86_64
echo "not a kernel" > "$tmp/vmlinuz-6.12.1"
expect what_if_not_a_kernel 5 "vmlinuz-6\.12\.1: not a kernel image or package" -- "$bin" --root "$fx/xeon-sapphire-rapids/root" check --what-if-kernel "$tmp/vmlinuz-6.12.1"
expect supplied_not_used 1 "--kernel-release 6.8 not used: the input shows its own kernel release" -- "$bin" --root "$fx/rhel98-epyc/root" check --kernel-release 6.8
expect root_and_dump 3 "^p2pcheck: --root and --dump select different sources; give one$" -- "$bin" --root "$fx/epyc-mi300x-8gpu/root" --dump x.tar topo

# Bad input: exit 5, naming the file and what was expected.
expect missing_root 5 "/does/not/exist: cannot open root directory" -- "$bin" --root /does/not/exist topo
echo "hello" > "$tmp/garbage.tar"
expect garbage_dump 5 "garbage.tar: not a recognised dump" -- "$bin" --dump "$tmp/garbage.tar" topo
cp -r "$fx/opteron-6300-prezen/root" "$tmp/broken"
cfg=$(find "$tmp/broken/sys/devices" -name config | head -1)
head -c 100 "$cfg" > "$tmp/cfg" && mv "$tmp/cfg" "$cfg"
expect truncated_config 5 "config: 100 bytes; expected 4096" -- "$bin" --root "$tmp/broken" topo
cp -r "$fx/opteron-6300-prezen/root" "$tmp/escape"
ln -sfn ../../../../../../etc "$tmp/escape/sys/bus/pci/devices/0000:00:00.0"
expect escaping_link 5 "leaves the root" -- "$bin" --root "$tmp/escape" topo
cp -r "$fx/opteron-6300-prezen/root" "$tmp/vanished"
rm -rf "$tmp/vanished/sys/devices/pci0000:00/0000:00:02.0"
expect vanished_device 5 "does not exist" -- "$bin" --root "$tmp/vanished" topo

# One fix per host: every refused pair's ACS ports in one command line, resolved (no placeholder),
# merged with what the machine already boots with (addresses and vendor:device entries kept).
host_fix() {  # root -> the host fix's kernel command line; check exits 1 (its pairs are refused)
  "$bin" --root "$1" check --json > "$tmp/host_fix.json" 2> "$tmp/host_fix.err"; local rc=$?
  if [ "$rc" -ne 1 ] || grep -qE -- "$crashed" "$tmp/host_fix.err"; then
    echo "check --json exit $rc, wanted 1"; cat "$tmp/host_fix.err"; return 1; fi
  python3 - "$tmp/host_fix.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert "{acs_redirect}" not in json.dumps(j["host_fix"]) and "{common_bridge}" not in json.dumps(j["host_fix"])
print(j["host_fix"]["kernel_cmdline"])
PY
}
expect host_fix_acs 0 "^pci=disable_acs_redir=0000:03:09.0;0000:03:11.0$" -- host_fix "$fx/xeon-broadwell-switch-acs/root"
cp -r "$fx/xeon-broadwell-switch-acs/root" "$tmp/booted"
echo "ro intel_iommu=on pci=disable_acs_redir=0000:00:01.0;pci:10b5:8747" > "$tmp/booted/proc/cmdline"
expect host_fix_merges_the_booted_list 0 "^pci=disable_acs_redir=0000:00:01.0;0000:03:09.0;0000:03:11.0;pci:10b5:8747$" -- host_fix "$tmp/booted"
expect host_fix_text 1 "kernel command line: pci=disable_acs_redir=0000:03:09.0;0000:03:11.0" -- "$bin" --root "$fx/xeon-broadwell-switch-acs/root" check

# Mounts and files as the NVMe side (issue 36): a path resolves through the mount table and the
# block layer to its controllers; one on no NVMe is an error naming the path, mount and device; an
# input without a mount table says so and is UNKNOWN, never an empty PASS.
st=$fx/storage-stacks/root
expect nvme_path_md 1 "^  /data/run1: on /data, xfs on /dev/md0$" -- "$bin" --root "$st" --nvme /data/run1 check
expect nvme_path_md_note 1 "hipFile/GDS will not go peer-to-peer through md0 \(md\)" -- "$bin" --root "$st" --nvme /data/run1 check
expect nvme_path_two_pairs 1 "2 GPU–NVMe pairs allowed" -- "$bin" --root "$st" --nvme /data/run1 check --quiet
expect nvme_path_direct_stack_passes 0 "^  why     storage.stack PASS: /mnt/fast.040lane, /mnt/odd.012name: xfs on nvme1n1p3" -- "$bin" --root "$st" --nvme /mnt/fast\ lane check
# Only the path's own stack counts: the md array on another partition of the same drive does not.
expect nvme_path_own_stack_only 0 "^RESULT: PASS — the GPU–NVMe pair is allowed$" -- "$bin" --root "$st" --nvme /mnt/fast\ lane check --quiet
expect nvme_path_md_fails_alone 1 "^RESULT: FAIL — failing: storage.stack \(nvme0n1p4, nvme1n1p1\); all 2 GPU–NVMe pairs allowed$" -- "$bin" --root "$st" --nvme /data check --quiet
expect nvme_path_relative 0 "^  srv/work/x \(/srv/work/x\): on /srv/work, ext4 on /dev/mapper/vg0-work$" -- "$bin" --root "$st" --nvme srv/work/x paths
expect nvme_path_tmpfs 3 "^p2pcheck: --nvme /tmp/x: /tmp/x is on tmpfs mounted on /tmp \(device tmpfs\), which is not on an NVMe" -- "$bin" --root "$st" --nvme /tmp/x check
expect nvme_path_nfs 3 "nfs4 mounted on /net/home \(device fileserver:/export/home\), which is not on an NVMe" -- "$bin" --root "$st" explain 16:00.0 /net/home/ada
expect explain_path_stack_fails 1 "^  /home/ada: on /home, ext4 on /dev/mapper/home_crypt$" -- "$bin" --root "$st" explain 16:00.0 /home/ada
expect mounts_text 1 "^  /data +xfs +md0 \\(md\\) → nvme0n1p4, nvme1n1p1 +nvme0 nvme1 +1 +NO: the stack" -- "$bin" --root "$st" mounts
expect mounts_json 1 '^  "schema": "p2pcheck.mounts",$' -- "$bin" --root "$st" mounts --json=pretty
expect mounts_no_nvme_option 3 "^p2pcheck: --nvme does not apply to \`mounts\`" -- "$bin" --root "$st" --nvme nvme0 mounts
lspci -A linux-sysfs -O "sysfs.path=$st/sys/bus/pci" -xxxx > "$tmp/st-lspci.txt" 2>/dev/null
expect mounts_lspci_not_carried 2 "^mounts: unknown: the mount table is not in this lspci output$" -- "$bin" --dump "$tmp/st-lspci.txt" mounts
expect mounts_lspci_json_unknown 2 '"unknown":"the mount table is not in this lspci output"' -- "$bin" --dump "$tmp/st-lspci.txt" mounts --json
expect nvme_path_lspci 3 "^p2pcheck: --nvme /data: which NVMe holds it is unknown: the mount table is not in this lspci output" -- "$bin" --dump "$tmp/st-lspci.txt" --nvme /data check
tar -C "$st/.." -czf "$tmp/st.tar.gz" root
expect mounts_dump 1 "^  /srv/work +ext4 +dm-2 \\(LVM\\) → nvme1n1p2 " -- "$bin" --dump "$tmp/st.tar.gz" mounts
# A directory of several machines' inputs is a fleet: --dump says so and where to go.
mkdir "$tmp/many"; cp "$tmp/st.tar.gz" "$tmp/many/host-a.tar.gz"; cp "$tmp/st.tar.gz" "$tmp/many/host-b.tar.gz"
expect dump_dir_of_machines 5 "holds 2 machines' inputs \\(host-a.tar.gz, host-b.tar.gz\\), not one machine's dump: \`p2pcheck fleet $tmp/many\` reads every one" -- "$bin" --dump "$tmp/many" check
# A redacted capture's identity says so in mounts as in check (the CLI marks it where it opens the input).
"$bin" --root "$st" capture --redact -o "$tmp/st-redacted.tar.zst" > /dev/null 2>&1
expect mounts_redacted 1 '"redacted":true,"unread"' -- "$bin" --dump "$tmp/st-redacted.tar.zst" mounts --json

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
