#!/usr/bin/env bash
# The .debs of scripts/release.sh (BUILD/release) on other Debian-family systems: p2pcheck's Depends
# names only libc6 (every Debian 10+ and Ubuntu 20.04+ has it, at most 2.28; the libraries Ubuntu 22.04
# lacks, such as libtomlplusplus3, are inside the binary), and in a throwaway copy of the cached
# Debian bullseye and trixie chroots `dpkg -i` installs it (dpkg checking Depends against that system),
# the installed binary gives every fixture's golden on that system's glibc, and, run inside the chroot
# (chroot(8)), the installed reference machine gives its reviewed check.txt.
# Usage: packaging/tests/release_deb_test.sh BUILD
set -u
build=$(cd "$1" && pwd)
. "$(dirname "$0")/release_lib.sh"
tmp=$(mktemp -d -p "$build"); trap 'rm -rf "$tmp"' EXIT
deb=$build/release/p2pcheck_${ver}_amd64.deb dkmsdeb=$build/release/p2pprobe-dkms_${ver}_all.deb
for f in "$deb" "$dkmsdeb"; do [ -f "$f" ] || { echo "FAIL no $f (ctest release_build runs scripts/release.sh)"; exit 1; }; done

depends=$(dpkg-deb -f "$deb" Depends)
echo "p2pcheck.deb Depends: $depends"
[[ $depends =~ ^libc6\ \(\>=\ 2\.([0-9]+)\)$ ]] && [ "${BASH_REMATCH[1]}" -le 28 ] ||
  fail "p2pcheck.deb Depends '$depends', wanted 'libc6 (>= 2.x)' with x <= 28 (the portable binary links the rest)"
[ "$(dpkg-deb -f "$dkmsdeb" Depends)" = dkms ] || fail "p2pprobe-dkms.deb Depends '$(dpkg-deb -f "$dkmsdeb" Depends)'"
dpkg-deb -x "$deb" "$tmp/x"
# The Depends is typed (packaging/CMakeLists.txt): this host's dpkg-shlibdeps would answer from Debian
# 12's symbol files (libdl.so.2 and libpthread.so.0 are stubs there since 2.34) and shut out bullseye
# and Ubuntu 20.04. The packaged binary's own floor must be at most what it says.
"$src/packaging/release/glibc-floor.sh" "$tmp/x/usr/bin/p2pcheck" "2.${BASH_REMATCH[1]:-28}" ||
  fail "the packaged binary needs a newer glibc than its Depends says"
[[ $("$tmp/x/usr/bin/p2pcheck" --version) == *", portable build)" ]] || fail "p2pcheck.deb's binary is not the portable build"

expected=$src/fixtures/epyc-mi300x-8gpu/expected/check.txt
for suite in bullseye trixie; do
  root=$(chroot_of "$suite") || exit $?
  copy=$tmp/$suite
  cp -a "$root" "$copy"
  cp "$deb" "$copy/tmp/"
  if ! chroot "$copy" dpkg -i "/tmp/${deb##*/}" > "$tmp/$suite-dpkg.log" 2>&1; then
    fail "$suite: dpkg -i ${deb##*/}:"; cat "$tmp/$suite-dpkg.log"; continue
  fi
  echo "$suite: dpkg -i ${deb##*/}: installed ($(chroot "$copy" dpkg-query -W -f='${Package} ${Version} ${Status}' p2pcheck))"
  on_glibc_of "$copy" "$copy/usr/bin/p2pcheck" "$tmp/p2pcheck-$suite" || continue
  goldens "$tmp/p2pcheck-$suite" "$build" "p2pcheck.deb installed on $suite (glibc $(glibc_version "$copy"))"
  # Inside the chroot itself: the packaged reference machine, as package_test runs it on the build host.
  mkdir -p "$copy/tmp/run" && ln -s /usr/share/p2pcheck "$copy/tmp/run/fixtures"
  chroot "$copy" /bin/sh -c 'cd /tmp/run && COLUMNS= p2pcheck --root fixtures/epyc-mi300x-8gpu/root check --color never' > "$tmp/$suite-check.txt"
  diff -u "$expected" "$tmp/$suite-check.txt" > "$tmp/$suite.diff" && echo "$suite: chroot p2pcheck check of the reference machine: as expected" ||
    { fail "$suite: in the chroot, check differs from fixtures/epyc-mi300x-8gpu/expected/check.txt"; head -20 "$tmp/$suite.diff"; }
  rm -rf "$copy"
done

[ "$failed" -eq 0 ] && echo "release_deb: ok"
[ "$failed" -eq 0 ]
