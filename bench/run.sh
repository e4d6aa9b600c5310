#!/usr/bin/env bash
# bench/run.sh [--devices N] [--repeat R] [--tmpdir DIR] [--keep] [BIN]
#
# Times p2pcheck on a generated large machine (default 1,000 PCI functions): builds the
# machine.toml with bench/make-large-machine.py, the sysfs/proc tree with tools/mkfixture.py, then
# runs each command R times (wall clock) and prints the median against its target.
# A benchmark reports, it does not gate: exit 0 even when something is SLOW; exit 1 only when a
# command errored (exit code other than 0/1/2: input error 5, usage 3, no pair 4, a crash, or the
# timeout), or the machine could not be generated.
# The tree goes to --tmpdir, else $TMPDIR, else /dev/shm (sysfs lives in RAM, so tmpfs models it
# best and keeps disk noise out of the numbers), else /tmp. About 180 MB per 1,000 devices on disk.
set -u -o pipefail

# Targets in seconds, for 1,000 devices on a 2-core machine (they are not scaled with --devices).
TARGET_CHECK=2      # full `check --json`: an interactive command, answer within a couple of seconds
TARGET_TOPO=1       # `topo --json`: reads the same tree but evaluates no pairs, so well under check
TARGET_PAIR=1       # `check --gpu X --nvme Y`: one pair should not pay for all 4,000+ pairs
TARGET_CAPTURE=3    # `capture -o`: full analysis plus recording and tar+zstd of every file read
TARGET_REPLAY=2     # `--dump FILE check --json`: replay from memory should be no slower than check
TIMEOUT=300         # seconds before one run counts as hung (an error)

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
devices=1000
repeat=5
keep=0
tmpdir=${TMPDIR:-}
bin="$repo/build/p2pcheck"

usage() { sed -n '2,11s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --devices) devices=${2:?--devices needs a number}; shift 2 ;;
    --devices=*) devices=${1#*=}; shift ;;
    --repeat) repeat=${2:?--repeat needs a number}; shift 2 ;;
    --repeat=*) repeat=${1#*=}; shift ;;
    --tmpdir) tmpdir=${2:?--tmpdir needs a directory}; shift 2 ;;
    --tmpdir=*) tmpdir=${1#*=}; shift ;;
    --keep) keep=1; shift ;;
    -h|--help) usage 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; usage 3 >&2 ;;
    *) bin=$1; shift ;;
  esac
done
case "$devices$repeat" in *[!0-9]*|'') echo "run.sh: --devices and --repeat take positive integers" >&2; exit 3 ;; esac
[ "$repeat" -ge 1 ] || { echo "run.sh: --repeat must be at least 1" >&2; exit 3; }
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
[ -x "$bin" ] || { echo "run.sh: $bin is not an executable (build it: cmake --build build -j2)" >&2; exit 1; }

if [ -z "$tmpdir" ]; then
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then tmpdir=/dev/shm; else tmpdir=/tmp; fi
fi
tmp=$(mktemp -d "$tmpdir/p2pcheck-bench.XXXXXX") || exit 1
cleanup() { if [ "$keep" = 1 ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM

elapsed() { awk -v s="$1" -v e="$2" 'BEGIN {printf "%.3f", e - s}'; }

# ---- the machine
t0=$EPOCHREALTIME
python3 "$here/make-large-machine.py" --devices "$devices" --summary -o "$tmp/large/machine.toml" \
  2>"$tmp/gen.txt" || { cat "$tmp/gen.txt" >&2; echo "run.sh: make-large-machine.py failed" >&2; exit 1; }
python3 "$repo/tools/mkfixture.py" "$tmp/large/machine.toml" >"$tmp/mkfixture.txt" 2>&1 \
  || { cat "$tmp/mkfixture.txt" >&2; echo "run.sh: mkfixture.py failed" >&2; exit 1; }
t1=$EPOCHREALTIME
root="$tmp/large/root"
nfunc=$(ls "$root/sys/bus/pci/devices" | wc -l)
nfiles=$(find "$root" -type f | wc -l)

# one pair: the first GPU (AMD display/accelerator function) and the highest-numbered NVMe
# controller (the boot drive on another host bridge, so the pair crosses the root complex)
gpu=
for d in "$root"/sys/bus/pci/devices/*; do
  if [ "$(cat "$d/vendor")" = 0x1002 ]; then
    case "$(cat "$d/class")" in 0x03*|0x1200*) gpu=${d##*/}; break ;; esac
  fi
done
nvme=$(ls "$root/sys/class/nvme" | sort -V | tail -n 1)
[ -n "$gpu" ] && [ -n "$nvme" ] || { echo "run.sh: no GPU or NVMe in the generated tree" >&2; exit 1; }

echo "p2pcheck benchmark: $(cat "$tmp/gen.txt")"
printf 'tree: %d PCI functions, %d files in %s, generated in %s s\n' "$nfunc" "$nfiles" "$tmpdir" "$(elapsed "$t0" "$t1")"
printf 'binary: %s (%s); %s CPU(s); median of %d run(s)\n' "$bin" "$("$bin" --version 2>&1 | head -n 1)" "$(nproc)" "$repeat"
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
echo

errors=0
rows=()
all_pairs=

# run NAME TARGET PAIRS -- CMD...
# Times CMD $repeat times; stdout goes to a file in $tmp (as `> file` would), stderr to another.
# PAIRS: "json" counts pairs[] in the command's JSON output, "all" repeats the count of the full
# check (capture runs the whole analysis), anything else is printed as is.
run() {
  local name=$1 target=$2 pairs=$3; shift 4
  local key=${name//[^A-Za-z0-9]/_}
  local out="$tmp/out.$key" err="$tmp/err.$key"
  local times=() rc i s e status=OK
  for ((i = 0; i < repeat; i++)); do
    s=$EPOCHREALTIME
    timeout "$TIMEOUT" "$@" >"$out" 2>"$err"
    rc=$?
    e=$EPOCHREALTIME
    case $rc in
      0|1|2) ;;
      *) local why=
         case $rc in
           3) why=" (usage error)" ;; 4) why=" (no GPU-NVMe pair found)" ;; 5) why=" (input error)" ;;
           124) why=" (timeout after ${TIMEOUT}s)" ;;
           *) [ "$rc" -gt 128 ] && why=" (killed by signal $((rc - 128)))" ;;
         esac
         echo "ERROR: '$*' exited with $rc$why:" >&2
         sed 's/^/  /' "$err" | head -n 20 >&2
         errors=$((errors + 1))
         rows+=("$(printf '%-34s %8s %7s %9s %8s  %s' "$name" "$nfunc" "-" "-" "$target" "ERROR($rc)")")
         return ;;
    esac
    times+=("$(elapsed "$s" "$e")")
  done
  local med
  med=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f", m}')
  if [ "$pairs" = json ]; then
    pairs=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("pairs", [])))' "$out" 2>/dev/null || echo "?")
    [ -n "$all_pairs" ] || all_pairs=$pairs
  elif [ "$pairs" = all ]; then
    pairs=${all_pairs:-?}
  fi
  awk -v m="$med" -v t="$target" 'BEGIN {exit !(m <= t)}' || status=$(awk -v m="$med" -v t="$target" 'BEGIN {printf "SLOW x%.1f", m / t}')
  rows+=("$(printf '%-34s %8s %7s %9s %8s  %s' "$name" "$nfunc" "$pairs" "$med" "$target" "$status")")
}

cd "$tmp" || exit 1
run "check --json"                  "$TARGET_CHECK"   json -- "$bin" --root "$root" check --json
run "topo --json"                   "$TARGET_TOPO"    -    -- "$bin" --root "$root" topo --json
run "check --gpu X --nvme Y --json" "$TARGET_PAIR"    json -- "$bin" --root "$root" --gpu "$gpu" --nvme "$nvme" check --json
run "capture -o tmp.tar.zst"        "$TARGET_CAPTURE" all  -- "$bin" --root "$root" capture --force -o "$tmp/tmp.tar.zst"
if [ -f "$tmp/tmp.tar.zst" ]; then
  run "--dump tmp.tar.zst check --json" "$TARGET_REPLAY" json -- "$bin" --dump "$tmp/tmp.tar.zst" check --json
else
  echo "ERROR: capture wrote no archive, replay not timed" >&2
  errors=$((errors + 1))
fi

printf '%-34s %8s %7s %9s %8s  %s\n' "command" "devices" "pairs" "median_s" "target_s" "status"
printf '%s\n' "${rows[@]}"
echo
echo "pair: --gpu $gpu --nvme $nvme; capture size: $( [ -f "$tmp/tmp.tar.zst" ] && stat -c %s "$tmp/tmp.tar.zst" || echo -) bytes"
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?") (other work on the machine inflates wall clock)"
echo "targets are for 1000 devices on a 2-core machine; SLOW is a report, not a failure"
[ "$errors" -eq 0 ] || { echo "run.sh: $errors command(s) errored" >&2; exit 1; }
exit 0
