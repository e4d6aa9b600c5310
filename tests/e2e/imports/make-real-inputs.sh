#!/usr/bin/env bash
# Makes the real-machine import examples in tests/e2e/imports/real/ from the machine it runs on (as
# root), all at the same moment, so the test can check that every import describes the same
# machine the capture does:
#
#   capture.tar.zst     p2pcheck capture (the reference)
#   lspci-xxxx.txt.xz   lspci -k -xxxx        (xz-compressed: --dump reads compressed single files)
#   bundle/             lspci -k -xxxx, lspci -tv and /proc/cpuinfo as loose files in one directory
#   lspci-vvv.txt       lspci -k -nnDvvv      (text, no hex dump). The committed one was made from
#                       bundle/lspci-xxxx.txt with `lspci -F bundle/lspci-xxxx.txt -nnDvvv` (the
#                       machine was gone): read from a dump, lspci prints no BAR sizes, NUMA nodes,
#                       IOMMU groups or drivers, so those stay "not in this lspci output"
#   udev.txt.xz         udevadm info --export-db
#   hwloc.xml           lstopo --whole-io --of xml   (Debian package hwloc)
#   sosreport.tar.xz    sos report -o pci,devices,kernel,processor,release,host (package sosreport),
#                       trimmed to stay small: proc/kallsyms (megabytes), per-process proc/<pid>,
#                       sos_logs/, sos_reports/ and sys/kernel/debug are removed, nothing else changes
#
# Usage: tests/e2e/imports/make-real-inputs.sh BINARY   (then review and commit tests/e2e/imports/real/)
set -euo pipefail
bin=$(realpath "$1")
out=$(cd "$(dirname "$0")" && pwd)/real
[ "$(id -u)" -eq 0 ] || { echo "run as root: lspci -xxxx and sos need it" >&2; exit 1; }
rm -rf "$out"; mkdir -p "$out/bundle"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

"$bin" capture -o "$out/capture.tar.zst" > /dev/null
lspci -k -xxxx 2>/dev/null > "$out/bundle/lspci-xxxx.txt"
lspci -tv > "$out/bundle/lspci-tv.txt"
lspci -k -nnDvvv 2>/dev/null > "$out/lspci-vvv.txt"
cp /proc/cpuinfo "$out/bundle/cpuinfo"
xz -9 -c "$out/bundle/lspci-xxxx.txt" > "$out/lspci-xxxx.txt.xz"
udevadm info --export-db | xz -9 > "$out/udev.txt.xz"
lstopo --whole-io --of xml > "$out/hwloc.xml"
sos report --batch -o pci,devices,kernel,processor,release,host --tmp-dir "$tmp" --label p2pcheck > /dev/null 2>&1
mkdir "$tmp/x" && tar -C "$tmp/x" -xJf "$tmp"/sosreport-*.tar.xz
report=$(ls "$tmp/x")
(cd "$tmp/x/$report" && rm -rf proc/kallsyms sos_logs sos_reports sys/kernel/debug &&
  find proc -maxdepth 1 -regex 'proc/[0-9]+' -exec rm -rf {} +)
tar -C "$tmp/x" --sort=name --owner=0 --group=0 --mtime=@0 -cJf "$out/sosreport.tar.xz" "$report"
ls -la "$out" "$out/bundle"
