#!/usr/bin/env bash
# The house style (.clang-format) holds for every C++ file of the library, the CLI and the tests:
# fails naming each file clang-format would change. Fix: clang-format -i FILE (or the whole tree:
# tests/house/format_test.sh --fix). kmod/ and tests/lab/ are C in kernel style, not checked here.
set -u
cd "$(dirname "$0")/../.." || exit 1
command -v clang-format >/dev/null || { echo "format_test: clang-format not installed (scripts/setup-deps.sh)"; exit 1; }
mapfile -t files < <(git ls-files 'src/*.cc' 'src/*.h' 'include/*.h' 'tests/*.cc' 'tests/*.h' 'bench/*.cc' 2>/dev/null)
[ ${#files[@]} -gt 0 ] || mapfile -t files < <(find src include tests -name '*.cc' -o -name '*.h' | grep -v '^tests/lab/')
[ ${#files[@]} -gt 0 ] || { echo "format_test: no C++ files found"; exit 1; }
if [ "${1:-}" = --fix ]; then clang-format -i "${files[@]}"; exit 0; fi
# One clang-format for all files (a process per file took most of a minute); only when it objects
# are the files asked one by one, to name each.
bad=0
if clang-format --dry-run --Werror "${files[@]}" > /dev/null 2>&1; then
  echo "${#files[@]} files, 0 not formatted ($(clang-format --version))"
  exit 0
fi
for f in "${files[@]}"; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "FAIL $f: not in the house style (clang-format -i $f)"
    bad=$((bad + 1))
  fi
done
echo "${#files[@]} files, $bad not formatted ($(clang-format --version))"
[ "$bad" -eq 0 ]
