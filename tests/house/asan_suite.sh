#!/usr/bin/env bash
# The quick suite under AddressSanitizer, UBSan and _GLIBCXX_ASSERTIONS (ctest asan_suite, label
# asan), in the build tests/house/clang_build.sh made: every unit test, then the script tests that feed
# p2pcheck the fixtures, the hostile inputs, the imports and capture/replay. Any sanitizer report
# stops the binary with an error, which fails the test that ran it.
#   tests/house/asan_suite.sh BUILD
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "$1")
bin=$build/p2pcheck
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export P2PCHECK_FIXTURE_TREES=$build/fixtures
rm -rf "$P2PCHECK_FIXTURE_TREES"
python3 "$repo/tools/mkfixture.py" --all --out "$P2PCHECK_FIXTURE_TREES" > /dev/null || { echo "FAIL: mkfixture"; exit 1; }
failed=()
run() {  # name command...
  local name=$1 start=$SECONDS; shift
  if "$@" > "$build/asan-$name.log" 2>&1; then
    echo "PASS $name ($((SECONDS - start)) s): $(tail -1 "$build/asan-$name.log")"
  else
    echo "FAIL $name ($((SECONDS - start)) s): $build/asan-$name.log"
    grep -E 'ERROR: (Address|Leak)Sanitizer|runtime error:|FAILED|FAIL ' "$build/asan-$name.log" | head -10 | sed 's/^/    /'
    failed+=("$name")
  fi
}
run unit_tests "$build/tests/unit_tests" --gtest_brief=1
run cli bash "$repo/tests/e2e/cli_test.sh" "$bin"
run golden bash "$repo/tests/e2e/golden.sh" "$bin" check "$P2PCHECK_FIXTURE_TREES"
run hostile bash "$repo/tests/e2e/hostile_test.sh" "$bin"
run imports bash "$repo/tests/e2e/imports_test.sh" "$bin"
run capture bash "$repo/tests/e2e/capture_test.sh" "$bin" "$P2PCHECK_FIXTURE_TREES"
run result bash "$repo/tests/e2e/result_test.sh" "$bin"
run lab_replay bash "$repo/tests/lab/replay_test.sh" "$bin"
[ ${#failed[@]} -eq 0 ] || { echo "asan_suite: ${#failed[@]} failed: ${failed[*]}"; exit 1; }
echo "asan_suite: all passed under ASan+UBSan+_GLIBCXX_ASSERTIONS"
