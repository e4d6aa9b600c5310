#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Compile p2pprobe.ko with W=1 against every kernel tree available here and
# fail on any warning or error:
#   - Debian headers packages: /usr/src/linux-headers-*/ with a .config
#     (linux-headers-amd64 etc.; CONFIG_PCI_P2PDMA is off there -> stubs)
#   - lab kernels (CONFIG_PCI_P2PDMA=y): tests/lab/build-kernel.sh --print-path
#   - extra trees given as arguments or in $P2PPROBE_KDIRS (space separated)
# Also compiles uapi/p2pprobe.h alone as userspace C11 and C++20.
#
# Usage: kmod/build-test.sh [KDIR...]
# Exit: 0 all clean, 1 a build failed or warned, 2 no kernel tree found.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
WORK="$(mktemp -d /tmp/p2pprobe-build-test.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

fail=0
pass=0

kdirs=("$@")
# shellcheck disable=SC2206
[ -n "${P2PPROBE_KDIRS:-}" ] && kdirs+=($P2PPROBE_KDIRS)
for d in /usr/src/linux-headers-*/; do
	[ -f "$d/.config" ] && [ -f "$d/Makefile" ] && kdirs+=("${d%/}")
done
for series in 6.12 6.1 7.3; do
	cache="$("$ROOT/tests/lab/build-kernel.sh" --print-path "$series" 2>/dev/null)" || continue
	for d in "$cache"/linux-*/; do
		[ -f "$d/Module.symvers" ] && kdirs+=("${d%/}")
	done
done

result() { # name status detail
	printf '%-4s %s%s\n' "$2" "$1" "${3:+ ($3)}"
	if [ "$2" = ok ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}

# --- uapi header as userspace C and C++ ---------------------------------------
printf '#include "uapi/p2pprobe.h"\nint main(void) { return 0; }\n' > "$WORK/uapi_c.c"
if out="$(gcc -std=c11 -Wall -Wextra -Wpedantic -Wconversion -Werror -I"$HERE" \
	-c "$WORK/uapi_c.c" -o "$WORK/uapi_c.o" 2>&1)"; then
	result "uapi/p2pprobe.h as C11" ok
else
	echo "$out"; result "uapi/p2pprobe.h as C11" FAIL
fi
if command -v g++ >/dev/null; then
	printf '#include "uapi/p2pprobe.h"\nint main() { return 0; }\n' > "$WORK/uapi_cxx.cc"
	if out="$(g++ -std=c++20 -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion \
		-Wold-style-cast -Wuseless-cast -Werror -I"$HERE" \
		-c "$WORK/uapi_cxx.cc" -o "$WORK/uapi_cxx.o" 2>&1)"; then
		result "uapi/p2pprobe.h as C++20" ok
	else
		echo "$out"; result "uapi/p2pprobe.h as C++20" FAIL
	fi
fi

# --- the module ----------------------------------------------------------------
if [ ${#kdirs[@]} -eq 0 ]; then
	echo "build-test: no kernel tree found: apt-get install linux-headers-amd64," \
		"or build one with tests/lab/build-kernel.sh" >&2
	exit 2
fi

declare -A seen=()
for kdir in "${kdirs[@]}"; do
	kdir="$(cd "$kdir" 2>/dev/null && pwd -P)" || { result "$kdir" FAIL "no such dir"; continue; }
	[ -n "${seen[$kdir]:-}" ] && continue
	seen[$kdir]=1
	src="$WORK/src-${#seen[@]}"
	mkdir -p "$src"
	cp -r "$HERE/p2pprobe.c" "$HERE/Kbuild" "$HERE/Makefile" "$HERE/uapi" "$src/"
	p2p="$(grep -E '^CONFIG_PCI_P2PDMA=' "$kdir/.config" 2>/dev/null || echo 'P2PDMA off')"
	log="$src/build.log"
	if make -C "$src" KDIR="$kdir" W=1 >"$log" 2>&1 && [ -f "$src/p2pprobe.ko" ] &&
		! grep -qiE 'warning:|error:' "$log"; then
		result "$kdir" ok "$p2p"
	else
		grep -iE 'warning|error' "$log" || tail -20 "$log"
		result "$kdir" FAIL "$p2p"
	fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
