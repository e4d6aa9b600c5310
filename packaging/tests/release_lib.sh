# shellcheck shell=bash
# Shared by the release tests (ctest label `release`): the artifacts of scripts/release.sh and a way to
# run a binary on a Debian chroot's own glibc.
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ver=$(sed -nE 's/^project\(p2pcheck VERSION ([0-9.]+) .*/\1/p' "$src/CMakeLists.txt")
failed=0
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
# ctest treats exit 77 as skipped (SKIP_RETURN_CODE): said with its reason, never a silent pass.
skip() { echo "SKIPPED: $*"; exit 77; }

# chroot_of SUITE: the cached debootstrap chroot (packaging/release/chroot.sh makes it when missing).
chroot_of() {
  local dir
  dir=$("$src/packaging/release/chroot.sh" "$1") || skip "no $1 chroot: debootstrap from deb.debian.org failed (see above)"
  echo "$dir"
}

# on_glibc_of ROOT BINARY WRAPPER: writes WRAPPER, a script running BINARY with ROOT's dynamic loader and
# ROOT's libraries only (no ld.so.cache, no host library directory): the binary meets that system's glibc.
on_glibc_of() {
  local root=$1 bin=$2 wrapper=$3 libdir loader
  libdir=$root/usr/lib/x86_64-linux-gnu
  [ -d "$root/lib/x86_64-linux-gnu" ] && [ ! -L "$root/lib" ] && libdir=$root/lib/x86_64-linux-gnu:$libdir
  # The loader's real file inside ROOT (its links may be absolute, i.e. relative to ROOT).
  loader=$(cd "$root" && for f in lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    while [ -L "$f" ]; do t=$(readlink "$f"); case $t in /*) f=${t#/} ;; *) f=$(dirname "$f")/$t ;; esac; done
    [ -f "$f" ] && { echo "$root/$f"; break; }
  done)
  [ -n "$loader" ] || { fail "no ld-linux-x86-64.so.2 in $root"; return 1; }
  printf '#!/bin/sh\nexec "%s" --inhibit-cache --library-path "%s" "%s" "$@"\n' "$loader" "$libdir" "$bin" > "$wrapper"
  chmod +x "$wrapper"
}

# glibc_version ROOT: the version of ROOT's glibc (its libc.so.6 run as a program says it).
glibc_version() {
  local root=$1 w=$tmp/glibc-of-$RANDOM
  on_glibc_of "$root" "$root/usr/lib/x86_64-linux-gnu/libc.so.6" "$w" 2>/dev/null || return
  [ -f "$root/usr/lib/x86_64-linux-gnu/libc.so.6" ] || on_glibc_of "$root" "$root/lib/x86_64-linux-gnu/libc.so.6" "$w"
  "$w" | sed -nE '1s/.*version ([0-9]+\.[0-9]+).*/\1/p'
}

# goldens BINARY BUILD LABEL: every fixture's reviewed output (tests/e2e/golden.sh) from BINARY.
goldens() {
  local out
  if out=$(bash "$src/tests/e2e/golden.sh" "$1" check "$2/fixtures" 2>&1); then
    echo "$3: goldens $(tail -1 <<<"$out")"
  else
    fail "$3: goldens differ"; tail -40 <<<"$out"
  fi
}
