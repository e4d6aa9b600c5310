#!/usr/bin/env bash
# bench/run.sh [--fabric HxLxF | --devices N] [--repeat R] [--tmpdir DIR] [--keep] [BIN]
#
# Times p2pcheck against `lspci -tv` on the same generated tree, in one run on one machine:
# builds a machine.toml with bench/make-large-machine.py (default --fabric 4x3x5: 1,252 functions,
# 168 GPUs x 332 NVMe = 55,776 pairs; --devices N: the older server-shaped generator), the
# sysfs/proc tree with tools/mkfixture.py, then runs every command in R rounds (bench/cputime.py:
# CPU time to the microsecond) and prints the median CPU time (user+sys), its ratio to lspci -tv's,
# wall clock, peak RSS and output bytes per pair, and for check --json the bytes of its pair records
# alone. (check --json writes schema_version 4, paths --json its version 2: versions 1, ~6 KB a pair,
# 2, ~146 bytes a pair record, and 3, 101.5 bytes a pair on --fabric 16x3x5 (19.8 its records, the
# rest rows naming each pair's ACS ports), are retired; version 4 is 26.5 there, 22.3 its records.)
# A benchmark reports, it does not gate: exit 0 whatever the ratios; exit 1 only
# when a command errored (exit code other than 0/1/2, a crash or the timeout) or no tree was made.
# The tree goes to --tmpdir, else $TMPDIR, else /dev/shm (sysfs lives in RAM), else /tmp.
set -u -o pipefail

# Targets (issue 14), as ratios to lspci -tv on the same tree, and peak memory.
TARGET_RATIO=1.0    # check --json, check and the replay of a capture: no slower than lspci -tv
TARGET_RSS_MB=100   # peak resident memory of any command
TIMEOUT=600         # seconds before one run counts as hung (an error)

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
shape=(--fabric 4x3x5)
repeat=3
keep=0
tmpdir=${TMPDIR:-}
bin="$repo/build/p2pcheck"

usage() { sed -n '2,15s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --fabric) shape=(--fabric "${2:?--fabric needs HxLxF}"); shift 2 ;;
    --fabric=*) shape=(--fabric "${1#*=}"); shift ;;
    --devices) shape=(--devices "${2:?--devices needs a number}"); shift 2 ;;
    --devices=*) shape=(--devices "${1#*=}"); shift ;;
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
case "$repeat" in *[!0-9]*|'') echo "run.sh: --repeat takes a positive integer" >&2; exit 3 ;; esac
[ "$repeat" -ge 1 ] || { echo "run.sh: --repeat must be at least 1" >&2; exit 3; }
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
[ -x "$bin" ] || { echo "run.sh: $bin is not an executable (build it: cmake --build build -j2)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "run.sh: needs GNU time for peak RSS (/usr/bin/time; Debian package time)" >&2; exit 1; }
command -v lspci >/dev/null || { echo "run.sh: needs lspci (Debian package pciutils)" >&2; exit 1; }

if [ -z "$tmpdir" ]; then
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then tmpdir=/dev/shm; else tmpdir=/tmp; fi
fi
tmp=$(mktemp -d "$tmpdir/p2pcheck-bench.XXXXXX") || exit 1
cleanup() { if [ "$keep" = 1 ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM

elapsed() { awk -v s="$1" -v e="$2" 'BEGIN {printf "%.2f", e - s}'; }
median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.4f", m}'; }

# ---- the machine
t0=$EPOCHREALTIME
python3 "$here/make-large-machine.py" "${shape[@]}" --summary -o "$tmp/large/machine.toml" \
  2>"$tmp/gen.txt" || { cat "$tmp/gen.txt" >&2; echo "run.sh: make-large-machine.py failed" >&2; exit 1; }
python3 "$repo/tools/mkfixture.py" "$tmp/large/machine.toml" >"$tmp/mkfixture.txt" 2>&1 \
  || { cat "$tmp/mkfixture.txt" >&2; echo "run.sh: mkfixture.py failed" >&2; exit 1; }
t1=$EPOCHREALTIME
root="$tmp/large/root"
nfunc=$(ls "$root/sys/bus/pci/devices" | wc -l)
pairs=$(sed -n 's/.*pairs=\([0-9]*\).*/\1/p' "$tmp/gen.txt")

echo "p2pcheck benchmark (${shape[*]}): $(cat "$tmp/gen.txt")"
printf 'tree: %d PCI functions in %s, generated in %s s\n' "$nfunc" "$tmpdir" "$(elapsed "$t0" "$t1")"
printf 'binary: %s (%s); %s CPU(s); median of %d round(s), each command once a round\n' "$bin" "$("$bin" --version 2>&1 | head -n 1)" "$(nproc)" "$repeat"
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
echo

errors=0
base_cpu=
max_rss=0 max_rss_name=-

# The commands, in the table's order: add NAME PAIRS -- CMD... (stdout to a file, as `> file` would),
# or skip NAME PAIRS WHY for a row left out. The first (lspci -tv) is the baseline of every ratio.
names=() npairs=() commands=() skipped=()
add() {
  names+=("$1"); npairs+=("$2"); shift 3
  commands+=("$(printf '%q ' "$@")"); skipped+=("")
}
skip() { names+=("$1"); npairs+=("$2"); commands+=(""); skipped+=("$3"); }

cd "$tmp" || exit 1
add "lspci -tv"                     - -- lspci -A linux-sysfs -O "sysfs.path=$root/sys/bus/pci" -tv
add "check --json"           "$pairs" -- "$bin" --root "$root" check --json
add "check"                  "$pairs" -- "$bin" --root "$root" check
add "paths --json"           "$pairs" -- "$bin" --root "$root" paths --json
add "topo"                          - -- "$bin" --root "$root" topo
add "capture"                "$pairs" -- "$bin" --root "$root" capture --force -o "$tmp/cap.tar.zst"
add "replay check --json"    "$pairs" -- "$bin" --dump "$tmp/cap.tar.zst" check --json
add "replay check"            "$pairs" -- "$bin" --dump "$tmp/cap.tar.zst" check

# Round by round, every command once per round: a machine whose speed drifts (other guests, a
# build starting) moves every command's median alike, not just the ones timed while it lasted.
cpus=() walls=() rsss=() failed=()
for ((round = 0; round < repeat; round++)); do
  for ((c = 0; c < ${#names[@]}; c++)); do
    [ -z "${skipped[c]}" ] && [ -z "${failed[c]:-}" ] || continue
    key=${names[c]//[^A-Za-z0-9]/_}
    out="$tmp/out.$key" err="$tmp/err.$key" tim="$tmp/time.$key"
    if [ "${names[c]#replay}" != "${names[c]}" ] && [ ! -f "$tmp/cap.tar.zst" ]; then
      echo "ERROR: capture wrote no archive, ${names[c]} not timed" >&2
      errors=$((errors + 1)); failed[c]="no capture"; continue
    fi
    eval "python3 \"\$here/cputime.py\" \"\$out\" \"\$err\" \"\$TIMEOUT\" ${commands[c]}" >"$tim" \
      || { cat "$tim" >&2; exit 1; }
    read -r w u s m rc < <(tail -n 1 "$tim")
    case $rc in
      0|1|2) ;;
      *) echo "ERROR: '${commands[c]}' exited with $rc:" >&2
         sed 's/^/  /' "$err" | head -n 20 >&2
         errors=$((errors + 1)); failed[c]="ERROR($rc)"; continue ;;
    esac
    walls[c]+=" $w"; cpus[c]+=" $(awk -v u="$u" -v s="$s" 'BEGIN {printf "%.4f", u + s}')"; rsss[c]+=" $m"
  done
done

# The median CPU seconds (user+sys) and wall seconds of each command, its largest peak RSS.
rows=()
for ((c = 0; c < ${#names[@]}; c++)); do
  name=${names[c]} np=${npairs[c]} key=${names[c]//[^A-Za-z0-9]/_}
  if [ -n "${skipped[c]}" ]; then rows+=("$(printf '%-32s %8s  skipped: %s' "$name" "$np" "${skipped[c]}")"); continue; fi
  if [ -n "${failed[c]:-}" ]; then rows+=("$(printf '%-32s %8s  %s' "$name" "$np" "${failed[c]}")"); continue; fi
  cpu=$(printf '%s\n' ${cpus[c]} | median)
  wall=$(printf '%s\n' ${walls[c]} | median)
  rss=$(printf '%s\n' ${rsss[c]} | sort -g | tail -n 1)
  bytes=$(stat -c %s "$tmp/out.$key")
  [ -n "$base_cpu" ] || base_cpu=$cpu
  ratio=$(awk -v c="$cpu" -v b="$base_cpu" 'BEGIN {if (b > 0) printf "%.2f", c / b; else print "-"}')
  per_pair=-
  [ "$np" != - ] && [ "$np" -gt 0 ] && per_pair=$(awk -v o="$bytes" -v p="$np" 'BEGIN {printf "%.1f", o / p}')
  rows+=("$(printf '%-32s %8s %8s %6sx %8s %8d %11d %9s' "$name" "$np" "$cpu" "$ratio" "$wall" \
    $((rss / 1024)) "$bytes" "$per_pair")")
  eval "ratio_$key=\$ratio rss_$key=\$rss"
  [ "$name" = "lspci -tv" ] || [ "$rss" -le "$max_rss" ] || { max_rss=$rss; max_rss_name=$name; }
done

printf '%-32s %8s %8s %7s %8s %8s %11s %9s\n' command pairs cpu_s x_lspci wall_s rss_MB out_bytes B/pair
printf '%s\n' "${rows[@]}"
echo
verdict() {  # NAME KEY: the ratio and memory targets for one row
  local r m
  eval "r=\${ratio_$2:-} m=\${rss_$2:-}"
  [ -n "$r" ] || { echo "$1: not measured"; return; }
  awk -v n="$1" -v r="$r" -v t="$TARGET_RATIO" -v m="$m" -v tm="$TARGET_RSS_MB" 'BEGIN {
    printf "%-32s %5.2fx lspci (target <= %.1fx: %s), peak %d MB (target < %d MB: %s)\n", n, r, t,
      (r <= t ? "met" : "missed"), m / 1024, tm, (m / 1024 < tm ? "met" : "missed") }'
}
# check --json's pair records alone: from its "pairs" member to the document's end (pairs is its
# last member on a --root check), the decisions and other tables left out.
[ -f "$tmp/out.check___json" ] && [ "${pairs:-0}" -gt 0 ] && python3 - "$tmp/out.check___json" "$pairs" <<'EOF'
import mmap, sys
with open(sys.argv[1], "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as text:
    at = text.rfind(b'"pairs":[')
    if at >= 0:
        size = len(text) - at - len(b'"pairs":[') - len(b"]}\n")
        print(f"check --json pair records: {size:,} bytes, {size / int(sys.argv[2]):.1f} bytes a pair")
EOF
verdict "check --json" check___json
verdict "check" check
verdict "replay check --json" replay_check___json
verdict "replay check" replay_check
echo "largest peak RSS of a p2pcheck command: $((max_rss / 1024)) MB ($max_rss_name; target < $TARGET_RSS_MB MB)"
echo "capture size: $( [ -f "$tmp/cap.tar.zst" ] && stat -c %s "$tmp/cap.tar.zst" || echo -) bytes"
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?") (CPU time is the fair figure on a busy machine; wall clock grows with load)"
[ "$errors" -eq 0 ] || { echo "run.sh: $errors command(s) errored" >&2; exit 1; }
exit 0
