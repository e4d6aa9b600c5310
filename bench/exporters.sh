#!/usr/bin/env bash
# bench/exporters.sh [--fabric HxLxF] [--repeat R] [--tmpdir DIR] [BIN]
#
# What the views fleets read cost on a big tree (issue 51): builds the fabric (default 16x3x5:
# 5,008 PCI functions, 672 GPUs x 1,328 NVMe = 892,416 pairs) with bench/make-large-machine.py and
# tools/mkfixture.py, then times `check --quiet` alone and with --prometheus, --nfd, both, and
# `slurm features` (median wall clock of R rounds, peak RSS with GNU time when installed), and
# counts the series of the .prom file: bounded (p2pcheck_pair_series_limited 1, counts only)
# where an unbounded file would hold 3 series a pair. Reports; exit 1 only when a command errs
# (an exit code other than 0, 1, 2, 4) or the tree cannot be made.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
shape=16x3x5
repeat=3
tmpdir=${TMPDIR:-}
bin="$repo/build/p2pcheck"
while [ $# -gt 0 ]; do
  case "$1" in
    --fabric) shape=${2:?--fabric needs HxLxF}; shift 2 ;;
    --repeat) repeat=${2:?--repeat needs a number}; shift 2 ;;
    --tmpdir) tmpdir=${2:?--tmpdir needs a directory}; shift 2 ;;
    -h | --help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "exporters.sh: unknown option $1" >&2; exit 3 ;;
    *) bin=$1; shift ;;
  esac
done
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
[ -x "$bin" ] || { echo "exporters.sh: $bin is not an executable" >&2; exit 1; }
if [ -z "$tmpdir" ]; then
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then tmpdir=/dev/shm; else tmpdir=/tmp; fi
fi
tmp=$(mktemp -d "$tmpdir/p2pcheck-exporters.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bench"
python3 "$here/make-large-machine.py" --fabric "$shape" -o "$tmp/bench/machine.toml" ||
  { echo "exporters.sh: make-large-machine failed" >&2; exit 1; }
python3 "$repo/tools/mkfixture.py" --out "$tmp/trees" "$tmp/bench/machine.toml" > /dev/null ||
  { echo "exporters.sh: mkfixture failed" >&2; exit 1; }
root=$tmp/trees/bench/root
echo "tree: --fabric $shape, $(ls "$root/sys/bus/pci/devices" | wc -l) PCI functions"
gnu_time=$(command -v /usr/bin/time || true)
errors=0
# run NAME ARGS...: R rounds; prints the median wall clock and the last round's peak RSS.
run() {
  local name=$1 times=() rc rss=""; shift
  for _ in $(seq "$repeat"); do
    local start end
    start=$(date +%s.%N)
    if [ -n "$gnu_time" ]; then
      "$gnu_time" -f %M -o "$tmp/rss" "$bin" --root "$root" "$@" > /dev/null 2> "$tmp/err"; rc=$?
      rss=$(tail -1 "$tmp/rss")
    else
      "$bin" --root "$root" "$@" > /dev/null 2> "$tmp/err"; rc=$?
    fi
    end=$(date +%s.%N)
    case $rc in 0 | 1 | 2 | 4) ;; *) echo "exporters.sh: $name: exit $rc: $(head -3 "$tmp/err")" >&2; errors=$((errors + 1)) ;; esac
    times+=("$(awk -v s="$start" -v e="$end" 'BEGIN {printf "%.3f", e - s}')")
  done
  local median
  median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
  printf '  %-34s %8s s   %s\n' "$name" "$median" "${rss:+peak RSS $((rss / 1024)) MB}"
}
mkdir -p "$tmp/out"
echo "median of $repeat, wall clock:"
run "check --quiet" check --quiet
run "check --quiet --prometheus" check --quiet --prometheus "$tmp/out/p2pcheck.prom"
run "check --quiet --nfd" check --quiet --nfd "$tmp/out/p2pcheck.nfd"
run "check --quiet --prometheus --nfd" check --quiet --prometheus "$tmp/out/p2pcheck.prom" --nfd "$tmp/out/p2pcheck.nfd"
run "slurm features" slurm features
pairs=$(awk -F'[{}]' '/^p2pcheck_pairs\{/ {split($3, v, " "); n += v[1]} END {print n}' "$tmp/out/p2pcheck.prom")
series=$(grep -cv '^#' "$tmp/out/p2pcheck.prom")
echo "series in p2pcheck.prom: $series ($(wc -c < "$tmp/out/p2pcheck.prom") bytes) for $pairs pairs;" \
  "$(grep '^p2pcheck_pair_series_limited' "$tmp/out/p2pcheck.prom"); unbounded it would be $((series + 3 * pairs))"
echo "nfd file: $(wc -c < "$tmp/out/p2pcheck.nfd") bytes, $(grep -cv '^#' "$tmp/out/p2pcheck.nfd") labels"
[ "$errors" -eq 0 ]
