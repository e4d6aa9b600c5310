#!/usr/bin/env bash
# A Debian chroot made by debootstrap from Debian's registry, cached under ~/.cache/p2pcheck-pkg:
#   packaging/release/chroot.sh SUITE   prints the chroot's directory, making it first when missing.
# bullseye's (glibc 2.31, with libc6-dev) is the portable binary's link sysroot and a test system;
# bookworm's and trixie's are test systems. The key is the suite, the package list and this script's
# debootstrap version: a change makes a new directory (the old one stays until removed by hand).
set -euo pipefail
suite=${1:?usage: chroot.sh bullseye|bookworm|trixie}
case $suite in bullseye | bookworm | trixie) ;; *) echo "chroot.sh: unknown suite $suite" >&2; exit 2 ;; esac
cache=${P2PCHECK_PKG_CACHE:-$HOME/.cache/p2pcheck-pkg}
# minbase has dpkg and apt (the .deb install test); libc6-dev is the sysroot's crt files and linker scripts.
include=libc6-dev
mirror=http://deb.debian.org/debian
command -v debootstrap >/dev/null || { echo "chroot.sh: debootstrap is not installed (scripts/setup-deps.sh)" >&2; exit 1; }
key=$(printf '%s\n' "$suite" "$include" "$mirror" "$(dpkg-query -W -f='${Version}' debootstrap)" | sha256sum | cut -c1-12)
dir=$cache/chroot-$suite-$key
if [ ! -f "$dir/.complete" ]; then
  mkdir -p "$cache"
  # One maker at a time (ctest runs tests in parallel); a half-made tree is never used.
  exec 9> "$cache/.lock-$suite"
  flock 9
  if [ ! -f "$dir/.complete" ]; then
    rm -rf "$dir.tmp"
    echo "chroot.sh: debootstrap $suite into $dir (a few minutes, once)" >&2
    nice debootstrap --variant=minbase --include="$include" "$suite" "$dir.tmp" "$mirror" > "$cache/debootstrap-$suite.log" 2>&1 ||
      { tail -20 "$cache/debootstrap-$suite.log" >&2; echo "chroot.sh: debootstrap $suite failed (log: $cache/debootstrap-$suite.log)" >&2; exit 1; }
    rm -rf "$dir.tmp/var/cache/apt/archives/"*.deb
    touch "$dir.tmp/.complete"
    mv "$dir.tmp" "$dir"
  fi
fi
# A sysroot for the linker: links inside usr/lib* that point to absolute paths (e.g.
# /lib64/ld-linux-x86-64.so.2 -> /lib/x86_64-linux-gnu/ld-2.31.so) would lead ld to the host's files,
# so they become relative links to the same file (the same inside the chroot).
if [ ! -f "$dir/.relative-links" ]; then
  exec 9> "$cache/.lock-$suite"
  flock 9
  find "$dir/usr/lib" "$dir/usr/lib64" -type l -lname '/*' 2>/dev/null | while read -r link; do
    target=$(readlink "$link")
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$dir$target")" "$link"
  done
  touch "$dir/.relative-links"
fi
echo "$dir"
