#!/usr/bin/env bash
# The RPMs of scripts/release.sh (BUILD/release), as an RHEL/SLES administrator gets them:
#   rpm -qpi/-qpl/-qpR: names, files (binary, man page, completion, docs, module source), Requires
#   (p2pcheck: glibc's libraries only, at most GLIBC_2.28; p2pprobe-dkms: dkms), scriptlets
#   (dkms add/install and remove), rpmlint without errors;
#   installed into a scratch rpm database and root (rpm --root DIR --nodeps --noscripts -i), the
#   installed binary gives every fixture's golden and the installed reference machine its check.txt.
# Usage: packaging/tests/release_rpm_test.sh BUILD
set -u
build=$(cd "$1" && pwd)
. "$(dirname "$0")/release_lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
command -v rpm >/dev/null || { echo "FAIL rpm is not installed (scripts/setup-deps.sh installs rpm)"; exit 1; }
tool=$build/release/p2pcheck-$ver-1.x86_64.rpm dkms=$build/release/p2pprobe-dkms-$ver-1.noarch.rpm
for f in "$tool" "$dkms"; do [ -f "$f" ] || { echo "FAIL no $f (ctest release_build runs scripts/release.sh)"; exit 1; }; done
q() { rpm -qp --qf "$2" "$1" 2>/dev/null; }

# ---- p2pcheck ----------------------------------------------------------------------------------
[ "$(q "$tool" '%{NAME} %{VERSION} %{RELEASE} %{ARCH}')" = "p2pcheck $ver 1 x86_64" ] || fail "p2pcheck.rpm: $(q "$tool" '%{NAME} %{VERSION} %{RELEASE} %{ARCH}')"
files=$(rpm -qpl "$tool" 2>/dev/null)
for f in /usr/bin/p2pcheck /usr/share/man/man1/p2pcheck.1.gz /usr/share/bash-completion/completions/p2pcheck \
         /usr/share/doc/p2pcheck/README.md /usr/share/p2pcheck/epyc-mi300x-8gpu/root/proc/cpuinfo; do
  grep -qxF "$f" <<<"$files" || fail "p2pcheck.rpm lacks $f"
done
outside=$(grep -vE '^/usr/(bin|share)/' <<<"$files")
[ -z "$outside" ] || fail "p2pcheck.rpm installs outside /usr/bin and /usr/share: $(head -5 <<<"$outside")"
for owned in /usr/share/man/man1 /usr/share/bash-completion/completions /usr/bin /usr/share/doc; do
  grep -qxF "$owned" <<<"$files" && fail "p2pcheck.rpm owns $owned (the system's directory)"
done
requires=$(rpm -qpR "$tool" 2>/dev/null)
echo "p2pcheck.rpm Requires:"; sed 's/^/  /' <<<"$requires"
while read -r req; do
  case $req in
    rpmlib\(*) ;;
    libc.so.6* | libm.so.6* | libpthread.so.0* | libdl.so.2* | librt.so.1* | ld-linux-x86-64.so.2* | rtld\(GNU_HASH\)) ;;
    *) fail "p2pcheck.rpm requires '$req': only glibc, which every RHEL and SLES has" ;;
  esac
  v=$(grep -oE 'GLIBC_[0-9.]+' <<<"$req" | sed 's/GLIBC_//')
  [ -z "$v" ] || [ "$(printf '%s\n' 2.28 "$v" | sort -V | tail -1)" = 2.28 ] || fail "p2pcheck.rpm requires $req, above GLIBC_2.28"
done <<<"$requires"
[ "$(q "$tool" '[%{SUGGESTS}]')" = p2pprobe-dkms ] || echo "note: Suggests: $(q "$tool" '[%{SUGGESTNAME} %{SUGGESTVERSION}]')"

# ---- p2pprobe-dkms -----------------------------------------------------------------------------
[ "$(q "$dkms" '%{NAME} %{VERSION} %{ARCH}')" = "p2pprobe-dkms $ver noarch" ] || fail "p2pprobe-dkms.rpm: $(q "$dkms" '%{NAME} %{VERSION} %{ARCH}')"
d=/usr/src/p2pprobe-$ver
want=$(printf '%s\n' "$d" "$d/Kbuild" "$d/Makefile" "$d/dkms.conf" "$d/p2pprobe.c" "$d/uapi" "$d/uapi/p2pprobe.h" \
  /usr/share/doc/p2pprobe-dkms /usr/share/doc/p2pprobe-dkms/README.md | sort)
got=$(rpm -qpl "$dkms" 2>/dev/null | sort)
[ "$got" = "$want" ] || fail "p2pprobe-dkms.rpm holds [$(echo $got)], wanted [$(echo $want)]"
dreq=$(rpm -qpR "$dkms" 2>/dev/null | grep -v '^rpmlib(' | sort -u | tr '\n' ' ')
[ "$dreq" = "/bin/sh dkms gcc make " ] || fail "p2pprobe-dkms.rpm Requires [$dreq], wanted [/bin/sh dkms gcc make ]"
scripts=$(rpm -qp --scripts "$dkms" 2>/dev/null)
grep -q "dkms add -m p2pprobe -v $ver" <<<"$scripts" || fail "%post does not dkms add"
grep -q "dkms install -m p2pprobe -v $ver" <<<"$scripts" || fail "%post does not dkms install"
grep -q "dkms remove -m p2pprobe -v $ver --all" <<<"$scripts" || fail "%preun does not dkms remove"
rpm -qp --scripts "$dkms" 2>/dev/null | awk '/^(postinstall|preuninstall) scriptlet/ { f = $1 ".sh"; next } f { print > ("'"$tmp"'/" f) }'
for s in postinstall.sh preuninstall.sh; do
  [ -s "$tmp/$s" ] && sh -n "$tmp/$s" || fail "$s: missing or no sh"
done

# ---- rpmlint (Debian's): errors fail, warnings are listed -----------------------------------------
if command -v rpmlint >/dev/null; then
  lint=$(rpmlint "$tool" "$dkms" 2>&1); echo "$lint" | tail -1
  # rpm/rpmlint-accepted.txt: one error name a line, '#' and the reason after it.
  accepted=$(sed -E 's/#.*//; s/[[:space:]]+$//' "$src/packaging/rpm/rpmlint-accepted.txt" | grep . | sed 's/.*/ E: &( |$)/' | tr '\n' '|' | sed 's/|$//')
  grep -E '^[^ ]+: E: ' <<<"$lint" | { [ -n "$accepted" ] && grep -vE "$accepted" || cat; } > "$tmp/lint-errors"
  [ -s "$tmp/lint-errors" ] && { fail "rpmlint errors:"; cat "$tmp/lint-errors"; }
else
  echo "note: rpmlint is not installed (scripts/setup-deps.sh installs it)"
fi

# ---- installed into a scratch root --------------------------------------------------------------
root=$tmp/root
mkdir -p "$root"
rpm --root "$root" --initdb
rpm --root "$root" --nodeps --noscripts -i "$tool" "$dkms" 2> "$tmp/install.log" || { fail "rpm -i:"; cat "$tmp/install.log"; }
[ "$(rpm --root "$root" -q p2pcheck p2pprobe-dkms 2>&1 | tr '\n' ' ')" = "p2pcheck-$ver-1.x86_64 p2pprobe-dkms-$ver-1.noarch " ] ||
  fail "rpm -q in the scratch root: $(rpm --root "$root" -q p2pcheck p2pprobe-dkms 2>&1)"
# --nodeps: the scratch root has no glibc to satisfy Requires; the files are what is verified.
rpm --root "$root" -V --nodeps p2pcheck p2pprobe-dkms > "$tmp/verify" 2>&1 || { fail "rpm -V:"; head "$tmp/verify"; }
for f in dkms.conf Kbuild Makefile p2pprobe.c uapi/p2pprobe.h; do
  cmp -s "$src/kmod/$f" "$root$d/$f" || fail "installed $d/$f is not kmod/$f"
done
bin=$root/usr/bin/p2pcheck
[[ $("$bin" --version) == "p2pcheck $ver (git "*", portable build)" ]] || fail "installed --version: $("$bin" --version)"
goldens "$bin" "$build" "p2pcheck.rpm installed"
mkdir "$tmp/run" && ln -s "$root/usr/share/p2pcheck" "$tmp/run/fixtures"
(cd "$tmp/run" && "$bin" --root fixtures/epyc-mi300x-8gpu/root check --color never > "$tmp/check.txt")
diff -u "$src/fixtures/epyc-mi300x-8gpu/expected/check.txt" "$tmp/check.txt" > "$tmp/diff" ||
  { fail "the installed reference machine's check differs"; head -20 "$tmp/diff"; }

[ "$failed" -eq 0 ] && echo "release_rpm: ok ($(du -k "$tool" | cut -f1) KiB p2pcheck.rpm, $(du -k "$dkms" | cut -f1) KiB p2pprobe-dkms.rpm)"
[ "$failed" -eq 0 ]
