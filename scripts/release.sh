#!/usr/bin/env bash
# Builds every release artifact into build/release/ (or OUT), with SHA256SUMS:
#   p2pcheck-<ver>-linux-x86_64.tar.gz  the portable binary, p2pcheck.1, bash completion, kmod/ for DKMS
#   p2pcheck_<ver>_amd64.deb, p2pprobe-dkms_<ver>_all.deb       Debian 11+, Ubuntu 20.04+
#   p2pcheck-<ver>-1.x86_64.rpm, p2pprobe-dkms-<ver>-1.noarch.rpm   RHEL/Rocky/Oracle 8+, SLES 15+
# All wrap one portable binary (cmake/portable.cmake): built in build-portable (or BUILD) against a
# Debian bullseye sysroot that debootstrap makes once into ~/.cache/p2pcheck-pkg. Reproducible: the
# same source gives the same bytes (SOURCE_DATE_EPOCH is the last commit's time; archives sorted, owners
# and times fixed); ctest release_reproducible builds twice and compares.
# Usage: scripts/release.sh [OUT [BUILD]]
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
out=$(realpath -m "${1:-build/release}") bdir=$(realpath -m "${2:-build-portable}")
scripts/setup-deps.sh --package
. scripts/ccache-env.sh
ver=$(sed -nE 's/^project\(p2pcheck VERSION ([0-9.]+) .*/\1/p' CMakeLists.txt)
# The last commit's time (a tarball without git: its CMakeLists.txt's); nothing of the build's moment.
SOURCE_DATE_EPOCH=$(git -c safe.directory='*' log -1 --format=%ct 2>/dev/null || stat -c %Y CMakeLists.txt)
export SOURCE_DATE_EPOCH TZ=UTC LC_ALL=C.UTF-8

sysroot=$(packaging/release/chroot.sh bullseye)
static=$(packaging/release/static-libs.sh)
cmake -S . -B "$bdir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DP2PCHECK_TESTS=OFF -DP2PCHECK_PORTABLE=ON \
  -DP2PCHECK_PORTABLE_SYSROOT="$sysroot" -DP2PCHECK_PORTABLE_STATIC="$static" "${ccache_launcher[@]}" > /dev/null
nice cmake --build "$bdir" -j"$(nproc)" --target p2pcheck p2pcheck_manpage p2pcheck_reference
packaging/release/glibc-floor.sh "$bdir/p2pcheck"

rm -rf "$out"; mkdir -p "$out"
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
# The reference machine's files are generated at build time: their mtimes are the build's moment, which
# rpmbuild keeps (it only clamps times after SOURCE_DATE_EPOCH). Every packaged file gets the commit's.
find "$bdir/packaging/share" "$bdir/packaging/p2pcheck.1.gz" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
# The packages: CPack from the portable build tree (packaging/CMakeLists.txt).
for gen in DEB RPM; do
  cpack --config "$bdir/CPackConfig.cmake" -G "$gen" -B "$stage/cpack-$gen" > "$stage/cpack-$gen.log" 2>&1 ||
    { cat "$stage/cpack-$gen.log"; echo "release.sh: cpack -G $gen failed" >&2; exit 1; }
  find "$stage/cpack-$gen" -maxdepth 1 -name '*.deb' -o -maxdepth 1 -name '*.rpm' | xargs -r mv -t "$out"
done

# The tarball: what a field engineer copies to one machine.
name=p2pcheck-$ver-linux-x86_64
t=$stage/$name
mkdir -p "$t/bash-completion" "$t/kmod/uapi"
strip -o "$t/p2pcheck" "$bdir/p2pcheck"
cp "$bdir/packaging/p2pcheck.1" "$t/p2pcheck.1"
cp packaging/bash-completion/p2pcheck "$t/bash-completion/p2pcheck"
cp kmod/dkms.conf kmod/Kbuild kmod/Makefile kmod/p2pprobe.c kmod/README.md "$t/kmod/"
cp kmod/uapi/p2pprobe.h "$t/kmod/uapi/"
cp README.md "$t/README.md"
sed "s/@VERSION@/$ver/g" packaging/portable/INSTALL.in > "$t/INSTALL"
chmod -R u=rwX,go=rX "$t"
tar -C "$stage" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
  --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -cf - "$name" | gzip -9n > "$out/$name.tar.gz"

(cd "$out" && sha256sum -- * > SHA256SUMS)
echo "release.sh: $out (source $src, SOURCE_DATE_EPOCH $SOURCE_DATE_EPOCH)"
cat "$out/SHA256SUMS"
