#!/usr/bin/env bash
# bench/fleet.sh [--hosts N] [--repeat R] [--tmpdir DIR] [--keep] [BIN]
#
# Times `p2pcheck fleet` over N captures (default 1,000) with -j1 and -j2. The captures are made
# from the fixture trees (generated with tools/mkfixture.py; the 8-GPU EPYC twice, plain and
# redacted, so a quarter of the fleet is the big server), then copied under distinct host names
# host-0001 ... host-N, cycling through them. Prints the median wall-clock time of each against
# the target (10,000 dumps in 30 s on 2 cores, issue 51) and the peak memory (GNU time, when installed).
# A benchmark reports, it does not gate: exit 0 even when SLOW; exit 1 only when fleet errs (an
# exit code other than 0, 1, 2, 4: usage 3, input 5, a crash) or the corpus cannot be made.
set -u -o pipefail

TARGET_1000=3  # seconds per 1,000 captures on 2 cores (issue 51: 10,000 in 30 s; was 10, issue 13); scaled with --hosts
TIMEOUT=600

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
hosts=1000
repeat=3
keep=0
tmpdir=${TMPDIR:-}
bin="$repo/build/p2pcheck"
usage() { sed -n '2,11s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) hosts=${2:?--hosts needs a number}; shift 2 ;;
    --repeat) repeat=${2:?--repeat needs a number}; shift 2 ;;
    --tmpdir) tmpdir=${2:?--tmpdir needs a directory}; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) usage 0 ;;
    -*) echo "fleet.sh: unknown option $1" >&2; usage 3 >&2 ;;
    *) bin=$1; shift ;;
  esac
done
case "$hosts$repeat" in *[!0-9]*|'') echo "fleet.sh: --hosts and --repeat take positive integers" >&2; exit 3 ;; esac
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
[ -x "$bin" ] || { echo "fleet.sh: $bin is not an executable (build it: cmake --build build -j2)" >&2; exit 1; }
if [ -z "$tmpdir" ]; then
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then tmpdir=/dev/shm; else tmpdir=/tmp; fi
fi
tmp=$(mktemp -d "$tmpdir/p2pcheck-fleet-bench.XXXXXX") || exit 1
cleanup() { if [ "$keep" = 1 ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM
elapsed() { awk -v s="$1" -v e="$2" 'BEGIN {printf "%.3f", e - s}'; }

# ---- the corpus
python3 "$repo/tools/mkfixture.py" --all --out "$tmp/fixtures" > /dev/null || { echo "fleet.sh: mkfixture failed" >&2; exit 1; }
mkdir -p "$tmp/base" "$tmp/captures"
for dir in "$tmp/fixtures"/*/; do
  name=$(basename "$dir")
  "$bin" --root "$dir/root" capture -o "$tmp/base/$name.tar.zst" > /dev/null || { echo "fleet.sh: capture of $name failed" >&2; exit 1; }
done
"$bin" --root "$tmp/fixtures/epyc-mi300x-8gpu/root" capture --redact -o "$tmp/base/epyc-redacted.tar.zst" > /dev/null || exit 1
"$bin" --root "$tmp/fixtures/epyc-mi300x-8gpu/root" capture -o "$tmp/base/epyc-again.tar.zst" > /dev/null || exit 1
mapfile -t base < <(ls "$tmp/base"/*.tar.zst)
for i in $(seq 1 "$hosts"); do
  cp "${base[$(((i - 1) % ${#base[@]}))]}" "$tmp/captures/$(printf 'host-%04d' "$i").tar.zst"
done
bytes=$(du -sb "$tmp/captures" | cut -f1)
echo "corpus: $hosts captures cycling through ${#base[@]} machines ($(basename -a "${base[@]}" | sed 's/.tar.zst//' | tr '\n' ' ')), $((bytes / 1024)) KiB"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- the runs
target=$(awk -v n="$hosts" -v t="$TARGET_1000" 'BEGIN {printf "%.1f", t * n / 1000}')
have_time=0; [ -x /usr/bin/time ] && have_time=1
errors=0
printf '\n| command | hosts | median s | per host ms | CPU s (user+sys) | peak RSS MiB | target s | status |\n|---|---|---|---|---|---|---|---|\n'
for jobs in 1 2; do
  times=()
  rss="-" cpu="-"
  for _ in $(seq 1 "$repeat"); do
    start=$(date +%s.%N)
    if [ "$have_time" = 1 ]; then
      /usr/bin/time -f '%M %U %S' -o "$tmp/rss" timeout "$TIMEOUT" "$bin" fleet -q -j "$jobs" --json "$tmp/captures" > "$tmp/out.json" 2> "$tmp/err"
    else
      timeout "$TIMEOUT" "$bin" fleet -q -j "$jobs" --json "$tmp/captures" > "$tmp/out.json" 2> "$tmp/err"
    fi
    rc=$?
    end=$(date +%s.%N)
    case $rc in 0|1|2|4) ;; *) echo "fleet -j $jobs exited $rc:" >&2; head -5 "$tmp/err" >&2; errors=1 ;; esac
    times+=("$(elapsed "$start" "$end")")
    if [ "$have_time" = 1 ]; then
      rss=$(awk 'END {printf "%.0f", $1 / 1024}' "$tmp/rss" 2> /dev/null)
      cpu=$(awk 'END {printf "%.1f", $2 + $3}' "$tmp/rss" 2> /dev/null)
    fi
  done
  median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
  per=$(awk -v m="$median" -v n="$hosts" 'BEGIN {printf "%.2f", m * 1000 / n}')
  status=$(awk -v m="$median" -v t="$target" 'BEGIN {if (m <= t) print "OK"; else printf "SLOW x%.1f", m / t}')
  printf '| fleet -j %s --json | %s | %s | %s | %s | %s | %s | %s |\n' "$jobs" "$hosts" "$median" "$per" "$cpu" "$rss" "$target" "$status"
done
python3 - "$tmp/out.json" <<'PY' || errors=1
import json, sys
j = json.load(open(sys.argv[1]))
s = j["summary"]
largest = j["topologies"][0]["host_count"] if j["topologies"] else 0
print(f"\nlast report: {s['hosts']} hosts, {s['pass']} pass, {s['fail']} fail, {s['unknown']} unknown, "
      f"{s['no_pairs']} no pairs, {s['unreadable']} unreadable; {len(j['failures'])} failure causes, "
      f"{len(j['topologies'])} topologies (largest {largest} hosts)")
PY
exit "$errors"
