#!/usr/bin/env bash
# bench/container_host.sh [--mounts N] [--tmpdir DIR] [BIN]
#
# Issue 48: a GPU Kubernetes node's mount table. Copies the storage-stacks fixture tree (nvme1n1p3
# holds an xfs file system) and adds N bind mounts of it (default 99,985: with the tree's 15 lines,
# 100,000, the kernel's default fs.mount-max and p2pcheck's cap on /proc/mounts), N
# mounts of /dev devices sysfs lacks, and N tmpfs mounts named in mountinfo beside 30,000 more block
# devices (tests/e2e/reliability_inputs.py); then times `mounts`, `check` and `check --json` on each
# (bench/cputime.py: wall, CPU, peak RSS) and prints the output size. It reports, it does not gate:
# exit 1 only when a command errored (a crash, a timeout, an exit code past 2).
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
n=99985
tmpdir=${TMPDIR:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --mounts) n=${2:?--mounts needs a number}; shift 2 ;;
    --tmpdir) tmpdir=${2:?--tmpdir needs a directory}; shift 2 ;;
    -h|--help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
bin=$(realpath "${1:-$repo/build/p2pcheck}")
[ -n "$tmpdir" ] || { [ -d /dev/shm ] && tmpdir=/dev/shm || tmpdir=/tmp; }
work=$(mktemp -d "$tmpdir/p2pcheck-container-XXXXXX"); trap 'rm -rf "$work"' EXIT
root=$work/fixtures/storage-stacks/root
python3 "$repo/tools/mkfixture.py" "$repo/fixtures/storage-stacks/machine.toml" --out "$work/fixtures" > /dev/null ||
  { echo "container_host: the fixture tree was not made"; exit 1; }
inputs="python3 $repo/tests/e2e/reliability_inputs.py"
$inputs bind "$root" "$work/bind" "$n"
$inputs absent "$root" "$work/absent" "$n"
$inputs tmpfs "$root" "$work/tmpfs" "$n" 30000
errors=0
printf '%-8s %-12s %8s %8s %9s %10s %5s\n' input command wall_s cpu_s rss_MB out_MB exit
for input in bind absent tmpfs; do
  for cmd in mounts check "check --json"; do
    # shellcheck disable=SC2086
    line=$(python3 "$here/cputime.py" "$work/out" "$work/err" 600 "$bin" --root "$work/$input" $cmd)
    read -r wall user sys rss rc <<< "$line"
    printf '%-8s %-12s %8.2f %8.2f %9.1f %10.1f %5s\n' "$input" "$cmd" "$wall" "$(echo "$user + $sys" | bc)" \
      "$(echo "$rss / 1024" | bc -l)" "$(echo "$(stat -c %s "$work/out") / 1048576" | bc -l)" "$rc"
    [ "$rc" -le 2 ] || { errors=$((errors + 1)); head -c 300 "$work/err"; }
  done
done
[ "$errors" -eq 0 ]
