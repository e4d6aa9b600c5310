#!/usr/bin/env bash
# The static libraries Debian 12 does not ship as .a, built from Debian's own source packages of the
# very versions installed here (so the headers the tree compiles against match), into a cache:
#   packaging/release/static-libs.sh   prints the prefix (PREFIX/lib/libpci.a, PREFIX/lib/pkgconfig)
# libpci: pciutils' libpci-dev has only the shared library. Built without udev's hwdb (p2pcheck looks
# names up with PCI_LOOKUP_NO_HWDB), DNS and zlib (pci.ids is read plain, as Debian and RHEL ship it).
# Sources come through a private apt configuration (deb-src of Debian's registry) under the cache, so
# the machine's apt setup is untouched.
set -euo pipefail
cache=${P2PCHECK_PKG_CACHE:-$HOME/.cache/p2pcheck-pkg}
pciutils=$(dpkg-query -W -f='${source:Version}' libpci-dev)
key=$(printf '%s\n' "pciutils=$pciutils" "$(gcc -dumpfullversion)" "$(sha256sum "$0" | cut -d' ' -f1)" | sha256sum | cut -c1-12)
prefix=$cache/static-$key
if [ -f "$prefix/.complete" ]; then echo "$prefix"; exit 0; fi
mkdir -p "$cache"
exec 9> "$cache/.lock-static"
flock 9
if [ -f "$prefix/.complete" ]; then echo "$prefix"; exit 0; fi
work=$(mktemp -d "$cache/static-build.XXXXXX"); trap 'rm -rf "$work"' EXIT
apt=$cache/apt-src
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
echo "deb-src http://deb.debian.org/debian $codename main" > "$apt/sources.list"
aptopts=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
         -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o APT::Sandbox::User=root)
echo "static-libs.sh: pciutils $pciutils from Debian's source package into $prefix" >&2
apt-get "${aptopts[@]}" -qq update >&2
(cd "$work" && apt-get "${aptopts[@]}" -qq source "pciutils=$pciutils" >&2)
src=$(find "$work" -maxdepth 1 -type d -name 'pciutils-*' | head -1)
# lib/ only: libpci.a and its pkg-config file, as Debian's build configures it but static.
nice make -C "$src" -j"$(nproc)" lib/libpci.a ZLIB=no DNS=no HWDB=no LIBKMOD=no SHARED=no \
  PREFIX=/usr IDSDIR=/usr/share/misc OPT="-O2 -g0 -fPIC" >&2
mkdir -p "$prefix.tmp/lib/pkgconfig" "$prefix.tmp/include/pci"
cp "$src/lib/libpci.a" "$prefix.tmp/lib/"
# Debian's headers (/usr/include/x86_64-linux-gnu/pci) are of this very source; its config.h must agree
# with the one built here on what changes the API (checked by the portable build's test).
cp "$src/lib/config.h" "$prefix.tmp/include/pci/config.h"
printf '%s\n' "prefix=$prefix" "libdir=$prefix/lib" "" "Name: libpci" "Description: libpci, static (p2pcheck portable build)" \
  "Version: ${pciutils#*:}" "Libs: -L$prefix/lib -lpci" "Cflags:" > "$prefix.tmp/lib/pkgconfig/libpci.pc"
touch "$prefix.tmp/.complete"
rm -rf "$prefix"; mv "$prefix.tmp" "$prefix"
echo "$prefix"
