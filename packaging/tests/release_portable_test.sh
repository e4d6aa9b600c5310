#!/usr/bin/env bash
# The portable tarball of scripts/release.sh (BUILD/release): its contents; the binary's glibc floor
# (objdump -T: nothing above GLIBC_2.28, packaging/README.md) and that it links nothing else
# dynamically; --version names the portable build; and every fixture golden passes with the binary
# running on the glibc of Debian bullseye (2.31), bookworm (2.36) and trixie (2.41) chroots.
# Usage: packaging/tests/release_portable_test.sh BUILD
set -u
build=$(cd "$1" && pwd)
. "$(dirname "$0")/release_lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
name=p2pcheck-$ver-linux-x86_64
tarball=$build/release/$name.tar.gz
[ -f "$tarball" ] || { echo "FAIL no $tarball (ctest release_build runs scripts/release.sh)"; exit 1; }

want=$(printf '%s\n' "$name/" "$name/INSTALL" "$name/README.md" "$name/bash-completion/" "$name/bash-completion/p2pcheck" \
  "$name/kmod/" "$name/kmod/Kbuild" "$name/kmod/Makefile" "$name/kmod/README.md" "$name/kmod/dkms.conf" \
  "$name/kmod/p2pprobe.c" "$name/kmod/uapi/" "$name/kmod/uapi/p2pprobe.h" "$name/p2pcheck" "$name/p2pcheck.1")
got=$(tar -tzf "$tarball")
[ "$got" = "$want" ] || fail "tarball holds (sorted as listed):
$got
wanted:
$want"
tar -tvzf "$tarball" | awk '$2 != "0/0" { print }' | grep -q . && fail "tarball entries not owned by 0/0"
tar -xzf "$tarball" -C "$tmp"
bin=$tmp/$name/p2pcheck
for f in kmod/dkms.conf kmod/Kbuild kmod/Makefile kmod/p2pprobe.c kmod/uapi/p2pprobe.h README.md; do
  cmp -s "$src/$f" "$tmp/$name/$f" || fail "tarball's $f is not the source's"
done
cmp -s "$src/packaging/bash-completion/p2pcheck" "$tmp/$name/bash-completion/p2pcheck" || fail "tarball's completion differs"
grep -q '^\.TH P2PCHECK 1' "$tmp/$name/p2pcheck.1" || fail "p2pcheck.1 is no man page: $(head -c 200 "$tmp/$name/p2pcheck.1")"
grep -q "p2pprobe-$ver" "$tmp/$name/INSTALL" || fail "INSTALL does not name /usr/src/p2pprobe-$ver"

floor=$("$src/packaging/release/glibc-floor.sh" "$bin" 2.28) || fail "glibc floor:"
echo "$floor"
file "$bin" | grep -q "ELF 64-bit LSB pie executable, x86-64.*dynamically linked.*stripped" || fail "binary: $(file "$bin")"
version=$("$bin" --version)
[[ $version == "p2pcheck $ver (git "*", portable build)" ]] || fail "--version: $version"

for suite in bullseye bookworm trixie; do
  root=$(chroot_of "$suite") || exit $?
  on_glibc_of "$root" "$bin" "$tmp/p2pcheck-$suite" || continue
  echo "$suite: glibc $(glibc_version "$root"), $("$tmp/p2pcheck-$suite" --version)"
  [ "$("$tmp/p2pcheck-$suite" --version)" = "$version" ] || fail "$suite: --version differs"
  goldens "$tmp/p2pcheck-$suite" "$build" "portable binary on $suite's glibc"
done

[ "$failed" -eq 0 ] && echo "release_portable: ok ($(du -k "$tarball" | cut -f1) KiB tarball)"
[ "$failed" -eq 0 ]
