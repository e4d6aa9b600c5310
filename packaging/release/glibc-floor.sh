#!/usr/bin/env bash
# The portable binary's glibc floor: the newest GLIBC_x.y symbol version it references (objdump -T),
# and that it needs no shared library but glibc's. Fails above the floor packaging/README.md states.
# Usage: packaging/release/glibc-floor.sh BINARY [FLOOR]
set -euo pipefail
bin=$1 floor=${2:-2.28}
syms=$(objdump -T "$bin" | grep -oE '\(?GLIBC_[0-9]+(\.[0-9]+)+\)? +[^ ]+$' | sed -E 's/^\(?GLIBC_//; s/\)//')
newest=$(awk '{ print $1 }' <<<"$syms" | sort -uV | tail -1)
above=""
for v in $(awk '{ print $1 }' <<<"$syms" | sort -uV); do
  [ "$(printf '%s\n' "$floor" "$v" | sort -V | tail -1)" = "$floor" ] && continue
  above+="GLIBC_$v: $(awk -v v="$v" '$1 "" == v { printf "%s ", $2 }' <<<"$syms")"$'\n'
done
needed=$(readelf -d "$bin" | sed -nE 's/.*\(NEEDED\).*\[(.+)\]$/\1/p' | sort | tr '\n' ' ')
echo "glibc floor: GLIBC_$newest (wanted <= GLIBC_$floor); NEEDED: $needed"
status=0
[ -z "$above" ] || { echo "FAIL symbols above GLIBC_$floor:"; printf "%s" "$above"; status=1; }
for lib in $needed; do
  case $lib in libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | librt.so.1 | ld-linux-x86-64.so.2) ;;
    *) echo "FAIL $bin needs $lib: only glibc may be linked dynamically"; status=1 ;; esac
done
exit $status
