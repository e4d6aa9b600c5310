#!/usr/bin/env bash
# Imports give the same verdicts as the tree they came from, where the format carries the facts.
#
# From every fixture this test makes what a customer would send (with the real tools: lspci reads
# the fixture through pciutils' sysfs backend, lstopo through hwloc's --input; the udev database is
# derived by tests/imports/fixture_udev.py since udevadm cannot read a captured tree) and compares:
#   lspci -k -xxxx + lspci -tv + cpuinfo (a directory)   every pair decided identically
#   lspci -xxxx alone with --cpu                        every pair decided identically
#   udev database, hwloc XML (no config space)          same paths; where the import decides, the
#                                                       same verdict; otherwise it says what is unknown
#   capture of the lspci import                          replays identically (any input -> an archive)
#   nvidia-bug-report.log.gz (its sections from lspci)  every pair decided identically
# Kernel facts are not in these formats: both sides are evaluated with --assume-kernel <fixture's>.
# Then the real examples in tests/imports/real/ (one machine, one moment; make-real-inputs.sh) must
# describe the same PCI tree as the capture taken beside them.
# Usage: tests/imports_test.sh BINARY [TREES]
# TREES: the generated fixture trees (<TREES>/<name>/root), else $P2PCHECK_FIXTURE_TREES, else
# build/fixtures.
set -u
bin=$(realpath "$1")
fx=$(realpath -m "${2:-${P2PCHECK_FIXTURE_TREES:-$(dirname "$0")/../build/fixtures}}")
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
check() {  # name mode reference import
  local name=$1; shift
  if out=$(python3 tests/imports/compare.py "$@"); then passed=$((passed + 1)); else
    echo "FAIL $name"; failed=$((failed + 1)); fi
  echo "$out" | sed "s/^/  $name: /" | head -12 >&2
}
cpu_keyword() {  # /proc/cpuinfo -> --cpu value
  awk -F': *' '/^vendor_id/ {v=$2} /^cpu family/ {f=$2; exit} END {
    if (v == "AuthenticAMD") print (f >= 23 ? "amd-zen" : "amd-pre-zen");
    else if (v == "HygonGenuine") print "hygon"; else print "intel" }' "$1"
}
have_lstopo=0; command -v lstopo > /dev/null && have_lstopo=1
# DST mirrors SRC by links, except along REL (a/b/c), whose directories are real (made if missing):
# lstopo gets the files it needs added without a copy of the fixture (that copy took ~2 s each).
link_tree() {  # SRC DST REL
  local src=$1 dst=$2 rel=$3 e first=${3%%/*}
  mkdir -p "$dst"
  for e in "$src"/* "$src"/.[!.]*; do
    [ -e "$e" ] || [ -L "$e" ] || continue
    [ "${e##*/}" = "$first" ] || ln -s "$e" "$dst/${e##*/}"
  done
  if [ "$rel" != "$first" ]; then link_tree "$src/$first" "$dst/$first" "${rel#*/}"
  elif [ -d "$src/$first" ]; then link_tree "$src/$first" "$dst/$first" ""
  else mkdir -p "$dst/$first"; fi
}
[ $have_lstopo -eq 1 ] || echo "note: lstopo (Debian package hwloc) not installed; hwloc imports of the fixtures skipped"

# check --json in schema_version 1 (2 is the default): compare.py reads each pair's decision in full.
v1=(--json-schema 1)
fixtures=0
for dir in "$fx"/*/; do
  name=$(basename "$dir"); root=$(cd "$dir/root" 2>/dev/null && pwd) || continue
  [ -d "$root/sys" ] || continue
  fixtures=$((fixtures + 1))
  rel=$(cat "$root/proc/sys/kernel/osrelease"); cpu=$(cpu_keyword "$root/proc/cpuinfo")
  w=$tmp/$name; mkdir -p "$w/bundle"
  "$bin" --root "$root" "${v1[@]}" check --json --assume-kernel "$rel" > "$w/tree.json" 2>/dev/null

  lspci -A linux-sysfs -O "sysfs.path=$root/sys/bus/pci" -k -xxxx > "$w/bundle/lspci-xxxx.txt" 2>/dev/null
  lspci -A linux-sysfs -O "sysfs.path=$root/sys/bus/pci" -tv > "$w/bundle/lspci-tv.txt" 2>/dev/null
  cp "$root/proc/cpuinfo" "$w/bundle/cpuinfo"
  "$bin" --dump "$w/bundle" "${v1[@]}" check --json --assume-kernel "$rel" > "$w/lspci-bundle.json" 2>/dev/null
  check "$name lspci bundle" pairs-exact "$w/tree.json" "$w/lspci-bundle.json"
  "$bin" --dump "$w/bundle/lspci-xxxx.txt" --cpu "$cpu" "${v1[@]}" check --json --assume-kernel "$rel" > "$w/lspci.json" 2>/dev/null
  check "$name lspci --cpu $cpu" pairs-exact "$w/tree.json" "$w/lspci.json"

  "$bin" --dump "$w/bundle" capture -o "$w/lspci.tar.zst" > /dev/null
  "$bin" --dump "$w/lspci.tar.zst" "${v1[@]}" check --json --assume-kernel "$rel" > "$w/lspci-replay.json" 2>/dev/null
  check "$name lspci import captured and replayed" pairs-exact "$w/lspci-bundle.json" "$w/lspci-replay.json"

  # nvidia-bug-report.log.gz in the script's layout: config space, tree, CPU and uname are in it,
  # the kernel config is not (given here as the fixture has it): every pair decided identically.
  python3 tests/imports/fixture_nvidia_bug_report.py "$root" | gzip > "$w/nvidia-bug-report.log.gz"
  config=(); [ -f "$root/boot/config-$rel" ] && config=(--kernel-config "$root/boot/config-$rel")
  "$bin" --root "$root" "${v1[@]}" check --json > "$w/tree-own.json" 2>/dev/null
  "$bin" --dump "$w/nvidia-bug-report.log.gz" "${config[@]}" "${v1[@]}" check --json > "$w/nvbug.json" 2>/dev/null
  check "$name nvidia-bug-report" pairs-exact "$w/tree-own.json" "$w/nvbug.json"

  python3 tests/imports/fixture_udev.py "$root" > "$w/udev.txt"
  "$bin" --dump "$w/udev.txt" "${v1[@]}" check --json --assume-kernel "$rel" > "$w/udev.json" 2>/dev/null
  check "$name udev" pairs-decided "$w/tree.json" "$w/udev.json"

  if [ $have_lstopo -eq 1 ]; then
    # hwloc's Linux backend needs CPU topology files the fixtures do not have; lstopo takes the CPU
    # from CPUID and the kernel from uname() of the machine running it even with --input, so those
    # are left out (the CPU comes from --cpu instead).
    link_tree "$root" "$w/hwroot" sys/devices/system/cpu/cpu0
    t=$w/hwroot/sys/devices/system/cpu/cpu0/topology; mkdir -p "$t"
    for f in physical_package_id core_id die_id; do echo 0 > "$t/$f"; done
    for f in thread_siblings core_cpus core_siblings package_cpus; do echo 1 > "$t/$f"; done
    HWLOC_COMPONENTS=-x86 lstopo --whole-io --input "$w/hwroot" --of xml 2>/dev/null |
      grep -v -E 'name="(OSRelease|OSVersion|HostName|Architecture)"' > "$w/hwloc.xml"
    "$bin" --dump "$w/hwloc.xml" --cpu "$cpu" "${v1[@]}" check --json --assume-kernel "$rel" > "$w/hwloc.json" 2>/dev/null
    check "$name hwloc" pairs-decided "$w/tree.json" "$w/hwloc.json"
    # Plain `lstopo --of xml` leaves out "unimportant" functions such as a root bus's 00.0, the
    # kernel's host bridge device: the import must then leave the allowlist question open.
    case $name in intel-xeon-broadwell|xeon-2socket-hostbridges)
      HWLOC_COMPONENTS=-x86 lstopo --input "$w/hwroot" --of xml 2>/dev/null |
        grep -v -E 'name="(OSRelease|OSVersion|HostName|Architecture)"' > "$w/hwloc-default.xml"
      "$bin" --dump "$w/hwloc-default.xml" --cpu "$cpu" "${v1[@]}" check --json --assume-kernel "$rel" > "$w/hwloc-default.json" 2>/dev/null
      check "$name hwloc without --whole-io" pairs-decided "$w/tree.json" "$w/hwloc-default.json" ;;
    esac
  fi
done

if [ "$fixtures" -eq 0 ]; then
  echo "FAIL no fixture trees in $fx (python3 tools/mkfixture.py --all --out $fx)"; failed=$((failed + 1))
fi

# The real examples: one machine, one moment.
real=tests/imports/real
"$bin" --dump "$real/capture.tar.zst" topo --json > "$tmp/real.json" 2>/dev/null
for input in "lspci-xxxx.txt.xz topo-config" "bundle topo-config" "sosreport.tar.xz topo-config" "udev.txt.xz topo-identity" "hwloc.xml topo-identity"; do
  set -- $input
  "$bin" --dump "$real/$1" topo --json > "$tmp/real-$2-${1%%.*}.json" 2>"$tmp/err"
  [ -s "$tmp/err" ] && sed 's/^/  /' "$tmp/err" | head -3 >&2
  check "real $1" "$2" "$tmp/real.json" "$tmp/real-$2-${1%%.*}.json"
done

# A sosreport arrives as a tarball or unpacked: both are recognised.
mkdir "$tmp/sos" && tar -C "$tmp/sos" -xJf "$real/sosreport.tar.xz"
"$bin" --dump "$tmp/sos/$(ls "$tmp/sos")" topo --json > "$tmp/real-sosdir.json" 2>/dev/null
check "real sosreport directory" topo-config "$tmp/real.json" "$tmp/real-sosdir.json"

# --cpu is a supplied fact: used only where the input lacks the CPU; where the input has one, it wins
# and check says the supplied value was not used. A value that is no CPU is a usage error.
expect_unused() {  # name args...
  local name=$1; shift
  if "$bin" "$@" check --color never 2> /dev/null | grep -q -- "^note: --cpu intel not used: the input shows its own CPU"; then
    passed=$((passed + 1))
  else
    echo "FAIL $name: no 'not used' note"; failed=$((failed + 1))
  fi
}
expect_unused "--cpu with --root" --root "$fx/intel-xeon-broadwell/root" --cpu intel
expect_unused "--cpu on a udev database that has the CPU" --dump "$real/udev.txt.xz" --cpu intel
expect_unused "--cpu on a capture" --dump "$real/capture.tar.zst" --cpu intel
if "$bin" --dump "$real/lspci-xxxx.txt.xz" --cpu sparc check > /dev/null 2>&1; [ $? -eq 3 ]; then
  passed=$((passed + 1))
else
  echo "FAIL --cpu unknown keyword: expected exit 3"; failed=$((failed + 1))
fi
# On an lspci dump without the CPU it is used, and the CPU finding says it was supplied.
if "$bin" --dump "$real/lspci-xxxx.txt.xz" --cpu amd-zen check --json 2> /dev/null |
   python3 -c 'import json,sys; j=json.load(sys.stdin); f=[f for f in j["findings"] if f["id"]=="cpu.p2pdma_rule"][0]; assert f["state"]=="supplied", f; assert j["supplied"][0]["used"]'; then
  passed=$((passed + 1))
else
  echo "FAIL --cpu on an lspci dump: not used, or not labelled supplied"; failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
