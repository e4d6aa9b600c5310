#!/usr/bin/env bash
# The two .deb packages, made by cpack from this build tree into a temporary directory:
#   p2pcheck_<ver>_<arch>.deb: control fields; Depends computed by dpkg-shlibdeps (every library the
#     binary links names its package with a minimum version); contents (binary, man page, bash
#     completion, docs, the reference machine); the unpacked binary on the unpacked reference machine
#     gives fixtures/<name>/expected.
#   p2pprobe-dkms_<ver>_all.deb: control fields; /usr/src/p2pprobe-<ver>/ with a dkms.conf of that
#     version; dh_dkms-style postinst/prerm; and `dkms build` of that source against every installed
#     kernel header tree (Debian's linux-headers-amd64), in a private DKMS tree: nothing is installed,
#     loaded or written outside a temporary directory.
# Usage: packaging/tests/package_test.sh BUILD_DIR [CPACK]
set -u
build=$(cd "$1" && pwd) cpack=${2:-cpack}
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
need() { command -v "$1" >/dev/null || { echo "FAIL $1 is not installed (scripts/setup-deps.sh installs $2)"; exit 1; }; }
need dpkg-deb dpkg; need dpkg-shlibdeps dpkg-dev; need readelf binutils; need dkms dkms; need file file

ver=$(sed -nE 's/^project\(p2pcheck VERSION ([0-9.]+) .*/\1/p' "$src/CMakeLists.txt")
arch=$(dpkg --print-architecture)
reference=epyc-mi300x-8gpu

"$cpack" --config "$build/CPackConfig.cmake" -B "$tmp/out" > "$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log"; echo "FAIL cpack"; exit 1; }
tool=$tmp/out/p2pcheck_${ver}_$arch.deb dkmsdeb=$tmp/out/p2pprobe-dkms_${ver}_all.deb
debs=$(cd "$tmp/out" && ls ./*.deb | sort | tr '\n' ' ')
[ "$debs" = "./p2pcheck_${ver}_$arch.deb ./p2pprobe-dkms_${ver}_all.deb " ] ||
  { echo "FAIL cpack made [$debs]"; exit 1; }

field() { dpkg-deb -f "$1" "$2"; }
expect_field() {  # expect_field DEB FIELD VALUE
  local got
  got=$(field "$1" "$2")
  [ "$got" = "$3" ] || fail "${1##*/}: $2 is '$got', wanted '$3'"
}

# ---- p2pcheck --------------------------------------------------------------------------------
expect_field "$tool" Package p2pcheck
expect_field "$tool" Version "$ver"
expect_field "$tool" Architecture "$arch"
expect_field "$tool" Section admin
expect_field "$tool" Suggests "p2pprobe-dkms (= $ver)"
[ -n "$(field "$tool" Maintainer)" ] || fail "p2pcheck: no Maintainer"
field "$tool" Description | head -1 | grep -q "PCIe P2PDMA" || fail "p2pcheck: Description '$(field "$tool" Description | head -1)'"
depends=$(field "$tool" Depends)
dpkg-deb -x "$tool" "$tmp/tool"
bin=$tmp/tool/usr/bin/p2pcheck
[ -x "$bin" ] || { echo "FAIL no executable usr/bin/p2pcheck in the package"; exit 1; }
# dpkg-shlibdeps' work: each NEEDED library's package with the minimum version its symbols need.
needed=$(readelf -d "$bin" | sed -nE 's/.*\(NEEDED\).*\[(.+)\]$/\1/p')
[ "$(wc -w <<<"$needed")" -ge 5 ] || fail "readelf finds only [$needed] in the binary"
for lib in $needed; do
  pkg=$(dpkg -S "*/$lib" 2>/dev/null | grep -E "^[^ ]+: .*/$(sed 's/[.+]/\\&/g' <<<"$lib")$" | grep -v -E '^lib(32|x32)' |
        head -1 | cut -d: -f1)
  [ -n "$pkg" ] || { fail "no Debian package holds $lib"; continue; }
  sed 's/, /\n/g' <<<"$depends" | awk -v want="$pkg (>= " 'index($0, want) == 1 { found = 1 } END { exit !found }' ||
    fail "Depends lacks '$pkg (>= ...)' for $lib (not computed by dpkg-shlibdeps?): $depends"
done
file "$bin" | grep -q ", stripped" || fail "usr/bin/p2pcheck is not stripped: $(file "$bin")"
contents=$(dpkg-deb -c "$tool" | awk '{print $NF == "" ? $0 : $6}')
for f in ./usr/bin/p2pcheck ./usr/share/man/man1/p2pcheck.1.gz ./usr/share/bash-completion/completions/p2pcheck \
         ./usr/share/doc/p2pcheck/README.md ./usr/share/doc/p2pcheck/docs/json.md \
         ./usr/share/doc/p2pcheck/docs/architecture.md ./usr/share/p2pcheck/$reference/root/proc/cpuinfo; do
  grep -qxF -- "$f" <<<"$contents" || fail "p2pcheck.deb lacks $f"
done
outside=$(grep -vE '^\./(usr/(bin|share)/|$|usr/$)' <<<"$contents")
[ -z "$outside" ] || fail "p2pcheck.deb installs outside /usr/bin and /usr/share: $outside"
dpkg-deb -c "$tool" | awk '$2 != "root/root" { print }' | grep -q . && fail "p2pcheck.deb has files not owned by root"
perm=$(dpkg-deb -c "$tool" | awk '$6 == "./usr/bin/p2pcheck" { print $1 }')
[ "$perm" = "-rwxr-xr-x" ] || fail "usr/bin/p2pcheck is $perm"
cmp -s "$tmp/tool/usr/share/man/man1/p2pcheck.1.gz" "$build/packaging/p2pcheck.1.gz" || fail "the packaged man page is not the build's"
cmp -s "$tmp/tool/usr/share/bash-completion/completions/p2pcheck" "$src/packaging/bash-completion/p2pcheck" ||
  fail "the packaged bash completion is not packaging/bash-completion/p2pcheck"
[ "$("$bin" --version)" = "$("$build/p2pcheck" --version)" ] || fail "packaged --version: $("$bin" --version)"
# The reference machine, symlinks and all, gives its reviewed output (run as golden.sh does, from a
# directory where it is fixtures/<name>/root).
links=$(find "$tmp/tool/usr/share/p2pcheck/$reference/root" -type l | wc -l)
[ "$links" -gt 100 ] || fail "the reference machine has $links symlinks; sysfs needs its links"
mkdir "$tmp/run" && ln -s "$tmp/tool/usr/share/p2pcheck" "$tmp/run/fixtures"
(cd "$tmp/run" && "$bin" --root "fixtures/$reference/root" check --color never > "$tmp/check.txt")
rc=$?
want_rc=$(sed -nE 's/^check --color never: ([0-9]+)$/\1/p' "$src/fixtures/$reference/expected/exit_codes.txt")
[ "$rc" = "$want_rc" ] || fail "packaged reference machine: check exit $rc, wanted $want_rc"
diff -u "$src/fixtures/$reference/expected/check.txt" "$tmp/check.txt" > "$tmp/diff" ||
  { fail "packaged reference machine: check differs from fixtures/$reference/expected/check.txt"; head -20 "$tmp/diff"; }

# ---- p2pprobe-dkms ---------------------------------------------------------------------------
expect_field "$dkmsdeb" Package p2pprobe-dkms
expect_field "$dkmsdeb" Version "$ver"
expect_field "$dkmsdeb" Architecture all
expect_field "$dkmsdeb" Section kernel
expect_field "$dkmsdeb" Depends dkms
dsrc=./usr/src/p2pprobe-$ver
want=$(printf '%s\n' ./usr/share/doc/p2pprobe-dkms/README.md "$dsrc/Kbuild" "$dsrc/Makefile" "$dsrc/dkms.conf" \
       "$dsrc/p2pprobe.c" "$dsrc/uapi/p2pprobe.h" | sort)
got=$(dpkg-deb -c "$dkmsdeb" | awk '$1 !~ /^d/ { print $6 }' | sort)
[ "$got" = "$want" ] || fail "p2pprobe-dkms.deb holds [$(echo $got)], wanted [$(echo $want)]"
dpkg-deb -x "$dkmsdeb" "$tmp/dkms-pkg"
conf=$tmp/dkms-pkg/usr/src/p2pprobe-$ver/dkms.conf
grep -qx 'PACKAGE_NAME="p2pprobe"' "$conf" || fail "dkms.conf: PACKAGE_NAME is not p2pprobe"
grep -qx "PACKAGE_VERSION=\"$ver\"" "$conf" || fail "dkms.conf: PACKAGE_VERSION is not $ver (the /usr/src directory's)"
dpkg-deb -e "$dkmsdeb" "$tmp/control"
for script in postinst prerm; do
  [ -x "$tmp/control/$script" ] || { fail "p2pprobe-dkms.deb has no executable $script"; continue; }
  sh -n "$tmp/control/$script" || fail "$script: sh syntax"
  grep -qx "DKMS_VERSION=$ver" "$tmp/control/$script" || fail "$script: DKMS_VERSION is not $ver"
done
grep -q '/usr/lib/dkms/common.postinst' "$tmp/control/postinst" || fail "postinst does not run dkms's common.postinst"
grep -q 'dkms remove -m $DKMS_NAME -v $DKMS_VERSION --all' "$tmp/control/prerm" || fail "prerm does not dkms remove"

# dkms build of the packaged source, against each kernel header tree installed here.
state_before=$(ls -A /var/lib/dkms 2>/dev/null)
mkdir "$tmp/dkms"
kernels=0
for kbuild in /lib/modules/*/build; do
  [ -f "$kbuild/Makefile" ] || continue
  kver=$(basename "$(dirname "$kbuild")")
  kernels=$((kernels + 1))
  # The signing key goes to the temporary directory too (dkms would make /var/lib/dkms/mok.key).
  if mok_signing_key=$tmp/mok.key mok_certificate=$tmp/mok.pub \
      dkms build -m p2pprobe -v "$ver" -k "$kver" --dkmstree "$tmp/dkms" --sourcetree "$tmp/dkms-pkg/usr/src" \
      > "$tmp/dkms-$kver.log" 2>&1; then
    ko=$tmp/dkms/p2pprobe/$ver/$kver/$(uname -m)/module/p2pprobe.ko
    if [ -f "$ko" ]; then
      [ "$(modinfo -F version "$ko")" = "$ver" ] || fail "dkms build for $kver: module version $(modinfo -F version "$ko")"
      [[ $(modinfo -F vermagic "$ko") == "$kver "* ]] || fail "dkms build for $kver: vermagic $(modinfo -F vermagic "$ko")"
      echo "dkms build for $kver: ok ($(du -k "$ko" | cut -f1) KiB p2pprobe.ko)"
    else
      fail "dkms build for $kver made no $ko"
    fi
  else
    fail "dkms build for $kver:"; tail -20 "$tmp/dkms-$kver.log"
    find "$tmp/dkms" -name make.log -exec tail -20 {} \;
  fi
done
[ "$kernels" -gt 0 ] || fail "no kernel header tree in /lib/modules/*/build (linux-headers-amd64; scripts/setup-deps.sh)"
[ "$(ls -A /var/lib/dkms 2>/dev/null)" = "$state_before" ] || fail "the test changed /var/lib/dkms"

[ "$failed" -eq 0 ] && echo "package: ok ($(du -k "$tool" | cut -f1) KiB p2pcheck, $(du -k "$dkmsdeb" | cut -f1) KiB p2pprobe-dkms; Depends: $depends)"
[ "$failed" -eq 0 ]
