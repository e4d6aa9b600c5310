#!/usr/bin/env bash
# Imports give the same verdicts as the tree they came from, where the format carries the facts.
#
# From every fixture this test makes what a customer would send (with the real tools: lspci reads
# the fixture through pciutils' sysfs backend, lstopo through hwloc's --input; the udev database is
# derived by tests/e2e/imports/fixture_udev.py since udevadm cannot read a captured tree) and compares:
#   lspci -k -xxxx + lspci -tv + cpuinfo (a directory)   every pair decided identically
#   lspci -xxxx alone with --cpu                        every pair decided identically
#   udev database, hwloc XML (no config space)          same paths; where the import decides, the
#                                                       same verdict; otherwise it says what is unknown
#   capture of the lspci import                          replays identically (any input -> an archive)
#   nvidia-bug-report.log.gz (its sections from lspci)  every pair decided identically
#   lspci -nnDvvvk text (no hex dump), alone with --cpu   every pair decided identically; and its facts
#     and in a directory with lspci -tv and cpuinfo       (ACSCtl, links, NUMA, IOMMU, drivers, bus
#                                                        numbers) are p2pcheck's (lspci_text_facts.py)
#   an older nvidia-bug-report (NVIDIA/PLX dumped)      GPUs and links shown, no pair decided
#                                                       without the config space it needs
#   sosreport (fixture_sosreport.py: sos's layout)       same paths; where it decides, the same verdict
# Each format's facts (IDs, drivers, NVMe names, config space, CPU, kernel, ...) are read from the
# input by a script of tests/e2e/imports/ itself (udev_facts.py, lspci_dump_facts.py,
# sosreport_facts.py, lspci_text_facts.py, hwloc_facts.py) and must be what p2pcheck reports.
# Kernel facts are not in these formats: both sides are evaluated with --assume-kernel <fixture's>.
# No comparison passes empty: there are pairs and the import decides at least one (compare.py), and
# each command exits with its result's code (check --json: its `result`), never a crash; the text of
# every input, fixture and real, gives its RESULT within the first 15 lines.
# Then the real examples in tests/e2e/imports/real/ (one machine, one moment; make-real-inputs.sh) must
# describe the same PCI tree as the capture taken beside them.
# Usage: tests/e2e/imports_test.sh BINARY [TREES]
# TREES: the generated fixture trees (<TREES>/<name>/root), else $P2PCHECK_FIXTURE_TREES, else
# build/fixtures.
set -u
bin=$(realpath "$1")
fx=$(realpath -m "${2:-${P2PCHECK_FIXTURE_TREES:-$(dirname "$0")/../../build/fixtures}}")
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
check() {  # name mode reference import [--none-decided]
  local name=$1 out; shift
  if out=$(python3 tests/e2e/imports/compare.py "$@" 2>&1); then passed=$((passed + 1)); else
    echo "FAIL $name"; failed=$((failed + 1)); fi
  echo "$out" | sed "s/^/  $name: /" | head -12 >&2
}
py_check() {  # name SCRIPT arguments...: a checker of tests/e2e/imports/, its output under the name
  local name=$1 script=$2 out; shift 2
  if out=$(python3 "tests/e2e/imports/$script" "$@" 2>&1); then passed=$((passed + 1)); else
    echo "FAIL $name"; failed=$((failed + 1)); fi
  echo "$out" | sed "s/^/  $name: /" | head -12 >&2
}
# The answer within the first screen (issue 50): on every input, check's RESULT line comes within
# 15 lines, before a long list of notes (both streams, as a terminal shows them).
result_first() {  # name p2pcheck-arguments... (before `check`)
  local name=$1 out=$tmp/first.txt at; shift
  "$bin" "$@" check --color never > "$out" 2>&1
  at=$(grep -n '^RESULT' "$out" | head -1 | cut -d: -f1)
  if [ -n "$at" ] && [ "$at" -le 15 ]; then passed=$((passed + 1)); else
    echo "FAIL $name: RESULT on line ${at:-(none)} of $(wc -l < "$out"), not within the first 15"
    head -20 "$out" | sed 's/^/    /' >&2; failed=$((failed + 1))
  fi
}
# A crash is never an answer, whatever the exit code: a signal (128+N) or a sanitizer's report.
crashed='==[0-9]+==ERROR: [A-Za-z]+Sanitizer|^SUMMARY: [A-Za-z]+Sanitizer|: runtime error: '
result_code() {  # check --json's result -> its exit code (docs/json.md), else "none"
  python3 -c 'import json, sys
print({"PASS": 0, "FAIL": 1, "UNKNOWN": 2, "NO PAIRS": 4}.get(json.load(open(sys.argv[1])).get("result"), "none"))' "$1" 2> /dev/null ||
    echo none
}
# What each input's check must end in comes from a reviewed table, not from the binary under test:
# tests/e2e/imports/results.txt, "NAME<TAB>RESULT" a line. P2PCHECK_UPDATE_RESULTS=1 rewrites
# it from this run (review the diff as any golden's).
results=tests/e2e/imports/results.txt
declare -A expected_result=()
while IFS=$'\t' read -r rname rresult; do [ -n "$rname" ] && expected_result[$rname]=$rresult; done < "$results"
seen_results=$tmp/results.seen
code_of() { case $1 in PASS) echo 0 ;; FAIL) echo 1 ;; UNKNOWN) echo 2 ;; "NO PAIRS") echo 4 ;; *) echo none ;; esac; }
# run NAME WANT OUT -- command...: stdout to OUT, stderr to OUT.err; WANT is the exit code, or `result`
# for check --json: the code of NAME's RESULT in the table (PASS 0, FAIL 1, UNKNOWN 2, NO PAIRS 4),
# which the JSON's `result` must say too. Another exit code or a crash fails it (the output compared
# after it is then not compared); returns 1 then.
run() {
  local name=$1 want=$2 out=$3 rc why= wrote=; shift 4
  "$@" > "$out" 2> "$out.err"; rc=$?
  if [ "$want" = result ]; then
    wrote=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("result"))' "$out" 2> /dev/null)
    printf '%s\t%s\n' "$name" "$wrote" >> "$seen_results"
    if [ "${P2PCHECK_UPDATE_RESULTS:-}" = 1 ]; then want=$(code_of "$wrote")
    elif [ -z "${expected_result[$name]+x}" ]; then why="no expected result for it in $results"
    else
      want=$(code_of "${expected_result[$name]}")
      [ "$wrote" = "${expected_result[$name]}" ] || why="check --json says result ${wrote:-(none)}, $results ${expected_result[$name]}"
    fi
  fi
  if [ "$rc" -ge 128 ] || grep -qE -- "$crashed" "$out.err"; then why="crashed (exit $rc)"
  elif [ -z "$why" ] && [ "$rc" != "$want" ]; then why="exit $rc, wanted $want"; fi
  [ -z "$why" ] && return 0
  echo "FAIL $name: $why: $*"; sed 's/^/    /' "$out.err" | head -5; failed=$((failed + 1)); return 1
}
cpu_keyword() {  # /proc/cpuinfo -> --cpu value
  awk -F': *' '/^vendor_id/ {v=$2} /^cpu family/ {f=$2; exit} END {
    if (v == "AuthenticAMD") print (f >= 23 ? "amd-zen" : "amd-pre-zen");
    else if (v == "HygonGenuine") print "hygon"; else print "intel" }' "$1"
}
have_lstopo=0; command -v lstopo > /dev/null && have_lstopo=1
[ $have_lstopo -eq 1 ] || echo "note: lstopo (Debian package hwloc) not installed; hwloc imports of the fixtures skipped"

fixtures=0
for dir in "$fx"/*/; do
  name=$(basename "$dir"); root=$(cd "$dir/root" 2>/dev/null && pwd) || continue
  [ -d "$root/sys" ] || continue
  fixtures=$((fixtures + 1))
  rel=$(cat "$root/proc/sys/kernel/osrelease"); cpu=$(cpu_keyword "$root/proc/cpuinfo")
  w=$tmp/$name; mkdir -p "$w/bundle"
  run "$name tree" result "$w/tree.json" -- "$bin" --root "$root" check --json --assume-kernel "$rel"
  result_first "$name tree text" --root "$root"

  lspci -A linux-sysfs -O "sysfs.path=$root/sys/bus/pci" -k -xxxx > "$w/bundle/lspci-xxxx.txt" 2>/dev/null
  lspci -A linux-sysfs -O "sysfs.path=$root/sys/bus/pci" -tv > "$w/bundle/lspci-tv.txt" 2>/dev/null
  cp "$root/proc/cpuinfo" "$w/bundle/cpuinfo"
  run "$name lspci bundle" result "$w/lspci-bundle.json" -- "$bin" --dump "$w/bundle" check --json --assume-kernel "$rel" &&
    check "$name lspci bundle" pairs-exact "$w/tree.json" "$w/lspci-bundle.json"
  result_first "$name lspci bundle text" --dump "$w/bundle" --assume-kernel "$rel"
  run "$name lspci --cpu $cpu" result "$w/lspci.json" -- "$bin" --dump "$w/bundle/lspci-xxxx.txt" --cpu "$cpu" check --json --assume-kernel "$rel" &&
    check "$name lspci --cpu $cpu" pairs-exact "$w/tree.json" "$w/lspci.json"
  # What the hex bytes say (IDs, size, port type, links, ACS registers, parents, drivers), decoded
  # by the script itself, is what p2pcheck reports from the dump, alone and in its directory.
  py_check "$name lspci facts" lspci_dump_facts.py "$bin" "$w/bundle/lspci-xxxx.txt" -- --cpu "$cpu" --assume-kernel "$rel"
  py_check "$name lspci bundle facts" lspci_dump_facts.py "$bin" "$w/bundle" -- --assume-kernel "$rel"

  if run "$name lspci import captured" 0 "$w/capture.txt" -- "$bin" --dump "$w/bundle" capture -o "$w/lspci.tar.zst"; then
    if grep -qE "^wrote $w/lspci\.tar\.zst: [0-9]+ files, " "$w/capture.txt"; then passed=$((passed + 1)); else
      echo "FAIL $name lspci import captured: no 'wrote $w/lspci.tar.zst: N files' line"; failed=$((failed + 1)); fi
  fi
  run "$name lspci import replayed" result "$w/lspci-replay.json" -- "$bin" --dump "$w/lspci.tar.zst" check --json --assume-kernel "$rel" &&
    check "$name lspci import captured and replayed" pairs-exact "$w/lspci-bundle.json" "$w/lspci-replay.json"

  # nvidia-bug-report.log.gz in the script's layout: config space, tree, CPU and uname are in it,
  # the kernel config is not (given here as the fixture has it): every pair decided identically.
  python3 tests/e2e/imports/fixture_nvidia_bug_report.py "$root" | gzip > "$w/nvidia-bug-report.log.gz"
  config=(); [ -f "$root/boot/config-$rel" ] && config=(--kernel-config "$root/boot/config-$rel")
  run "$name tree, its own kernel" result "$w/tree-own.json" -- "$bin" --root "$root" check --json
  run "$name nvidia-bug-report" result "$w/nvbug.json" -- "$bin" --dump "$w/nvidia-bug-report.log.gz" "${config[@]}" check --json &&
    check "$name nvidia-bug-report" pairs-exact "$w/tree-own.json" "$w/nvbug.json"
  result_first "$name nvidia-bug-report text" --dump "$w/nvidia-bug-report.log.gz" "${config[@]}"

  # lspci -vvv text without a hex dump: config space rebuilt from what it prints, the same verdicts.
  mkdir -p "$w/vvv"
  lspci -A linux-sysfs -O "sysfs.path=$root/sys/bus/pci" -nnDvvvk > "$w/vvv/lspci-vvv.txt" 2>/dev/null
  cp "$w/bundle/lspci-tv.txt" "$w/bundle/cpuinfo" "$w/vvv/"
  run "$name lspci -vvv --cpu $cpu" result "$w/vvv.json" -- "$bin" --dump "$w/vvv/lspci-vvv.txt" --cpu "$cpu" check --json --assume-kernel "$rel" &&
    check "$name lspci -vvv --cpu $cpu" pairs-exact "$w/tree.json" "$w/vvv.json"
  result_first "$name lspci -vvv text" --dump "$w/vvv/lspci-vvv.txt" --cpu "$cpu" --assume-kernel "$rel"
  run "$name lspci -vvv bundle" result "$w/vvv-bundle.json" -- "$bin" --dump "$w/vvv" check --json --assume-kernel "$rel" &&
    check "$name lspci -vvv bundle" pairs-exact "$w/tree.json" "$w/vvv-bundle.json"
  py_check "$name lspci -vvv facts" lspci_text_facts.py "$bin" "$w/vvv/lspci-vvv.txt" -- --cpu "$cpu" --assume-kernel "$rel"

  # An older nvidia-bug-report.sh's layout: NVIDIA and PLX functions dumped (256 bytes), the rest
  # only in lspci -nn and -t. The GPUs, their links and the tree are shown; a pair needing a config
  # space the report lacks stays unknown, and the text says what to ask for (older_report.py).
  python3 tests/e2e/imports/fixture_nvidia_bug_report.py --older "$root" | gzip > "$w/nvidia-bug-report-older.log.gz"
  older=(--dump "$w/nvidia-bug-report-older.log.gz" "${config[@]}")
  result_first "$name older nvidia-bug-report text" "${older[@]}"
  run "$name tree topo" 0 "$w/tree-topo.json" -- "$bin" --root "$root" topo --json &&
    run "$name older nvidia-bug-report" result "$w/nvbug-older.json" -- "$bin" "${older[@]}" check --json &&
    run "$name older nvidia-bug-report topo" 0 "$w/nvbug-older-topo.json" -- "$bin" "${older[@]}" topo --json &&
    run "$name older nvidia-bug-report text" "$(result_code "$w/nvbug-older.json")" "$w/nvbug-older.txt" -- "$bin" "${older[@]}" check --color never &&
    py_check "$name older nvidia-bug-report" older_report.py "$w/tree-own.json" "$w/tree-topo.json" "$w/nvbug-older.json" \
      "$w/nvbug-older-topo.json" "$w/nvbug-older.txt"

  python3 tests/e2e/imports/fixture_udev.py --dmi "$root" > "$w/udev.txt"
  run "$name udev" result "$w/udev.json" -- "$bin" --dump "$w/udev.txt" check --json --assume-kernel "$rel" &&
    check "$name udev" pairs-decided "$w/tree.json" "$w/udev.json"
  result_first "$name udev text" --dump "$w/udev.txt" --assume-kernel "$rel"
  py_check "$name udev facts" udev_facts.py "$bin" "$w/udev.txt" -- --assume-kernel "$rel"

  # A sosreport in sos's layout (udev database, proc/bus/pci copies, cpuinfo, cmdline, uname -a,
  # lsmod, the kernel config): every pair decided as on the tree, and its facts are p2pcheck's.
  sos=$(python3 tests/e2e/imports/fixture_sosreport.py "$root" "$w/sos")
  run "$name sosreport" result "$w/sos.json" -- "$bin" --dump "$sos" check --json --assume-kernel "$rel" &&
    check "$name sosreport" pairs-decided "$w/tree.json" "$w/sos.json"
  result_first "$name sosreport text" --dump "$sos"
  py_check "$name sosreport facts" sosreport_facts.py "$bin" "$sos"

  if [ $have_lstopo -eq 1 ]; then
    # lstopo takes the CPU from CPUID and the kernel from uname() of the machine running it even
    # with --input, so those are left out (the CPU comes from --cpu instead). The fixtures carry
    # each CPU's topology files, which hwloc's Linux backend needs to read the tree at all.
    HWLOC_COMPONENTS=-x86 lstopo --whole-io --input "$root" --of xml 2>/dev/null |
      grep -v -E 'name="(OSRelease|OSVersion|HostName|Architecture)"' > "$w/hwloc.xml"
    run "$name hwloc" result "$w/hwloc.json" -- "$bin" --dump "$w/hwloc.xml" --cpu "$cpu" check --json --assume-kernel "$rel" &&
      check "$name hwloc" pairs-decided "$w/tree.json" "$w/hwloc.json"
    result_first "$name hwloc text" --dump "$w/hwloc.xml" --cpu "$cpu" --assume-kernel "$rel"
    # What the XML carries beside the tree (NUMA nodes, NVMe names, multipath), read from the XML
    # by the script itself and compared with the import and with the tree it came from.
    py_check "$name hwloc facts" hwloc_facts.py "$bin" "$w/hwloc.xml" --tree "$root" -- --cpu "$cpu" --assume-kernel "$rel"
    # Plain `lstopo --of xml` leaves out "unimportant" functions such as a root bus's 00.0, the
    # kernel's host bridge device: the import must then leave the allowlist question open. On
    # intel-xeon-broadwell that question decides its one pair (none decided); xeon-2socket-hostbridges'
    # pairs are decided without it.
    case $name in intel-xeon-broadwell|xeon-2socket-hostbridges)
      undecided=(); [ "$name" = intel-xeon-broadwell ] && undecided=(--none-decided)
      HWLOC_COMPONENTS=-x86 lstopo --input "$root" --of xml 2>/dev/null |
        grep -v -E 'name="(OSRelease|OSVersion|HostName|Architecture)"' > "$w/hwloc-default.xml"
      run "$name hwloc without --whole-io" result "$w/hwloc-default.json" -- "$bin" --dump "$w/hwloc-default.xml" --cpu "$cpu" check --json --assume-kernel "$rel" &&
        check "$name hwloc without --whole-io" pairs-decided "$w/tree.json" "$w/hwloc-default.json" "${undecided[@]}"
      # the host bridge device it leaves unknown is not in the XML, never "needs root"
      py_check "$name hwloc without --whole-io facts" hwloc_facts.py "$bin" "$w/hwloc-default.xml" -- --cpu "$cpu" --assume-kernel "$rel" ;;
    esac
  fi
done

if [ "$fixtures" -eq 0 ]; then
  echo "FAIL no fixture trees in $fx (python3 tools/mkfixture.py --all --out $fx)"; failed=$((failed + 1))
fi

# The real examples: one machine, one moment.
real=tests/e2e/imports/real
run "real capture" 0 "$tmp/real.json" -- "$bin" --dump "$real/capture.tar.zst" topo --json
for input in "lspci-xxxx.txt.xz topo-config" "lspci-vvv.txt topo-text" "bundle topo-config" "sosreport.tar.xz topo-config" "udev.txt.xz topo-identity" "hwloc.xml topo-identity"; do
  read -r file mode <<< "$input"
  out=$tmp/real-$mode-${file%%.*}.json
  run "real $file" 0 "$out" -- "$bin" --dump "$real/$file" topo --json || continue
  [ -s "$out.err" ] && sed 's/^/  /' "$out.err" | head -3 >&2
  check "real $file" "$mode" "$tmp/real.json" "$out"
done

for file in capture.tar.zst lspci-xxxx.txt.xz lspci-vvv.txt bundle sosreport.tar.xz udev.txt.xz hwloc.xml; do
  result_first "real $file text" --dump "$real/$file"
done
py_check "real hwloc.xml facts" hwloc_facts.py "$bin" "$real/hwloc.xml"
py_check "real lspci-vvv.txt facts" lspci_text_facts.py "$bin" "$real/lspci-vvv.txt"
py_check "real udev.txt.xz facts" udev_facts.py "$bin" "$real/udev.txt.xz"
py_check "real sosreport.tar.xz facts" sosreport_facts.py "$bin" "$real/sosreport.tar.xz"
py_check "real lspci-xxxx.txt.xz facts" lspci_dump_facts.py "$bin" "$real/lspci-xxxx.txt.xz" -- --cpu amd-zen
py_check "real bundle facts" lspci_dump_facts.py "$bin" "$real/bundle"

# A sosreport arrives as a tarball or unpacked: both are recognised.
mkdir "$tmp/sos" && tar -C "$tmp/sos" -xJf "$real/sosreport.tar.xz"
run "real sosreport directory" 0 "$tmp/real-sosdir.json" -- "$bin" --dump "$tmp/sos/$(ls "$tmp/sos")" topo --json &&
  check "real sosreport directory" topo-config "$tmp/real.json" "$tmp/real-sosdir.json"

# --cpu is a supplied fact: used only where the input lacks the CPU; where the input has one, it wins
# and check says the supplied value was not used. A value that is no CPU is a usage error.
# (the real examples are of a machine without a GPU: check ends NO PAIRS, exit 4; the fixture FAIL, 1)
expect_unused() {  # name exit-code CPU-shown args...
  local name=$1 want=$2 shown=$3; shift 3
  run "$name" "$want" "$tmp/unused.txt" -- "$bin" "$@" check --color never || return
  if grep -qx -- "note: --cpu intel not used: the input shows its own CPU ($shown, /proc/cpuinfo)" "$tmp/unused.txt"; then
    passed=$((passed + 1))
  else
    echo "FAIL $name: no 'not used' note naming $shown"; failed=$((failed + 1))
  fi
}
expect_unused "--cpu with --root" 1 GenuineIntel --root "$fx/intel-xeon-broadwell/root" --cpu intel
expect_unused "--cpu on a udev database that has the CPU" 4 AuthenticAMD --dump "$real/udev.txt.xz" --cpu intel
expect_unused "--cpu on a capture" 4 AuthenticAMD --dump "$real/capture.tar.zst" --cpu intel
if run "--cpu unknown keyword" 3 "$tmp/sparc.txt" -- "$bin" --dump "$real/lspci-xxxx.txt.xz" --cpu sparc check; then
  if grep -qx -- "p2pcheck: --cpu sparc: expected one of amd-zen|amd-pre-zen|intel|hygon|power|arm64 or a /proc/cpuinfo file" "$tmp/sparc.txt.err"; then
    passed=$((passed + 1))
  else
    echo "FAIL --cpu unknown keyword: the error does not name the keywords: $(cat "$tmp/sparc.txt.err")"; failed=$((failed + 1))
  fi
fi
# On an lspci dump without the CPU it is used, and the CPU finding says it was supplied.
if run "--cpu on an lspci dump" 4 "$tmp/supplied.json" -- "$bin" --dump "$real/lspci-xxxx.txt.xz" --cpu amd-zen check --json; then
  if python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); f=[f for f in j["findings"] if f["id"]=="cpu.p2pdma_rule"][0]; assert f["state"]=="supplied", f; assert j["supplied"][0]["used"]' "$tmp/supplied.json"; then
    passed=$((passed + 1))
  else
    echo "FAIL --cpu on an lspci dump: not used, or not labelled supplied"; failed=$((failed + 1))
  fi
fi

if [ "${P2PCHECK_UPDATE_RESULTS:-}" = 1 ]; then
  sort "$seen_results" > "$results"; echo "wrote $results ($(wc -l < "$results") inputs)"
elif [ "$fixtures" -gt 0 ]; then
  # A line of the table no input ran is a test that silently stopped running.
  declare -A ran=()
  while IFS=$'\t' read -r rname _; do ran[$rname]=1; done < "$seen_results"
  for rname in "${!expected_result[@]}"; do
    [ -n "${ran[$rname]+x}" ] || { echo "FAIL $results: '$rname' was not run"; failed=$((failed + 1)); }
  done
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
