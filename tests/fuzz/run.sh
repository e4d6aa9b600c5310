#!/usr/bin/env bash
# Runs the libFuzzer targets (tests/fuzz/README.md) for SECONDS each, from their seed corpus, and
# prints per target: seconds, executions, exec/s, coverage (cov, ft: libFuzzer's edge and feature
# counts at the end), corpus size and findings. SECONDS=0 replays each target's seeds once.
#
#   tests/fuzz/run.sh SECONDS [TARGET...]      (every target when none is named)
#
# Environment:
#   FUZZ_BUILD     the fuzz build (default build-fuzz); configured and built with clang when it
#                  has no fuzz targets yet
#   FUZZ_OUT       where each run keeps its corpus, log and findings (default FUZZ_BUILD/fuzz-runs/DATE)
#   FUZZ_SEEDS     the seed corpus (default: tests/fuzz/seeds.py writes one into FUZZ_OUT/seeds)
#   FUZZ_PARALLEL  targets run at once (default 1); each is one process on one core
#   FUZZ_NO_BUILD  set: use FUZZ_BUILD as it is (the ctests: clang_tree built it)
#   FUZZ_TIMEOUT   seconds one input may take (default 10; on a loaded machine at nice 19, wall
#                  time is many times CPU time: raise it there)
# A finding (crash, sanitizer report, uncaught exception, FUZZ_TIMEOUT on one input, more than
# 512 MiB resident) is saved as FUZZ_OUT/<target>/findings/crash-*, timeout-* or oom-*; the
# exit status is 1 when there is any, or when a target did not start.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:?usage: tests/fuzz/run.sh SECONDS [TARGET...]}
shift
build=$(realpath -m "${FUZZ_BUILD:-$repo/build-fuzz}")
out=$(realpath -m "${FUZZ_OUT:-$build/fuzz-runs/$(date -u +%Y%m%dT%H%M%SZ)}")
parallel=${FUZZ_PARALLEL:-1}

if [ -z "${FUZZ_NO_BUILD:-}" ]; then
  if [ ! -f "$build/CMakeCache.txt" ] || ! grep -q '^P2PCHECK_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
    launcher=()
    command -v ccache > /dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    # -O1: about as fast as -O2 under the sanitizers, and it compiles much sooner.
    cmake -S "$repo" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
      -DP2PCHECK_TESTS=OFF -DP2PCHECK_FUZZ=ON "${launcher[@]}" > /dev/null || exit 1
  fi
  cmake --build "$build" --target fuzz_targets -j"$(nproc)" > "$build/fuzz-build.log" 2>&1 ||
    { tail -30 "$build/fuzz-build.log"; echo "FAIL: the fuzz targets do not build ($build/fuzz-build.log)"; exit 1; }
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$repo"/tests/fuzz/fuzz_*.cc; do t=$(basename "$f" .cc); targets+=("${t#fuzz_}"); done
fi
mkdir -p "$out"
seeds=${FUZZ_SEEDS:-$out/seeds}
[ -d "$seeds" ] || python3 "$repo/tests/fuzz/seeds.py" "$seeds" > "$out/seeds.log" || { echo "FAIL: seeds.py"; exit 1; }

# Small quarantine: the resident size then measures the input, not AddressSanitizer's bookkeeping.
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=16:detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_one() {
  local t=$1 dir="$out/$1"
  mkdir -p "$dir/corpus" "$dir/findings"
  [ -d "$seeds/$t" ] || mkdir -p "$seeds/$t"
  local limits=(-rss_limit_mb=512 -malloc_limit_mb=512 -timeout="${FUZZ_TIMEOUT:-10}" -print_final_stats=1 -artifact_prefix="$dir/findings/")
  local start=$SECONDS
  if [ "$seconds" -eq 0 ]; then
    "$build/tests/fuzz/fuzz_$t" "${limits[@]}" -runs=0 "$seeds/$t" > "$dir/log" 2>&1
  else
    "$build/tests/fuzz/fuzz_$t" "${limits[@]}" -max_total_time="$seconds" "$dir/corpus" "$seeds/$t" > "$dir/log" 2>&1
  fi
  echo "$?" > "$dir/rc"
  echo $((SECONDS - start)) > "$dir/seconds"
}

running=0
for t in "${targets[@]}"; do
  [ -x "$build/tests/fuzz/fuzz_$t" ] || { echo "FAIL: no fuzz target $t"; exit 1; }
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$parallel" ]; then wait -n; running=$((running - 1)); fi
done
wait

# libFuzzer's last status line ("#123 DONE cov: 456 ft: 789 corp: 12/3Kb ...") and final stats.
field() { grep -oE "$2: *[0-9]+" <<< "$1" | tail -1 | grep -oE '[0-9]+$'; }
printf '%-12s %7s %11s %8s %6s %7s %7s %s\n' target seconds executions exec/s cov ft corpus findings
failed=0
for t in "${targets[@]}"; do
  dir="$out/$t"
  log=$(cat "$dir/log")
  status=$(grep -E '^#[0-9]+' <<< "$log" | grep 'cov:' | tail -1)
  execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' <<< "$log" | grep -oE '[0-9]+$')
  [ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+' <<< "$status" | tr -d '#')
  rate=$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' <<< "$log" | grep -oE '[0-9]+$')
  # slow-unit-* are inputs libFuzzer found slow (over 10 s wall), kept to look at, not findings.
  findings=$(find "$dir/findings" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)
  corpus=$(find "$dir/corpus" "$seeds/$t" -type f 2> /dev/null | wc -l)
  printf '%-12s %7s %11s %8s %6s %7s %7s %s\n' "$t" "$(cat "$dir/seconds")" "${execs:-?}" "${rate:-?}" \
    "$(field "$status" cov)" "$(field "$status" ft)" "$corpus" "$findings"
  if [ "$findings" -gt 0 ] || [ "$(cat "$dir/rc")" -ne 0 ]; then
    failed=$((failed + 1))
    echo "  FAIL $t: exit $(cat "$dir/rc"), $findings finding(s) in $dir/findings; log: $dir/log"
    grep -E 'ERROR:|runtime error:|terminate called|what\(\):|SUMMARY:' "$dir/log" | head -5 | sed 's/^/    /'
  elif ! grep -q 'INITED' <<< "$log"; then
    failed=$((failed + 1)); echo "  FAIL $t: did not start; log: $dir/log"
  fi
done
echo "runs, corpora and findings: $out"
[ "$failed" -eq 0 ]
