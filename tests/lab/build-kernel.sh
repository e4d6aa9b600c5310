#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build x86-64 lab kernels with CONFIG_PCI_P2PDMA=y from Debian's
# linux-source-<series> packages, for QEMU boots and for building kmod/.
#
# Usage:
#   tests/lab/build-kernel.sh 6.12|6.1|7.3|all build (skips finished builds)
#   tests/lab/build-kernel.sh 6.12+allow29c0  build a variant (variants/)
#   tests/lab/build-kernel.sh --print-path 6.12 print the cache dir of a
#                                              finished build (exit 1 if none)
#
# Cache: ${P2PCHECK_LAB_CACHE:-$HOME/.cache/p2pcheck-lab}/
#   debs/                                  downloaded linux-source .debs
#   apt-<suite>/                           apt lists of a suite this machine's
#                                          sources lack (7.3: trixie-backports)
#   kernel-<ver>-<key>/                    one build, <key> = first 12 hex of
#                                          sha256(kernel.config + SCRIPT_VERSION)
#                                          (+ variant .config and .patch for a
#                                          variant: the plain keys stay as they are)
#     System.map, kernelrelease            (variants only) for offline readers
#     linux-<ver>/                         built tree, usable as KDIR for kmod
#     bzImage, config, debian-version      copies / facts
#     complete                             written last; absent = redo
#
# Environment: P2PCHECK_LAB_CACHE (cache root), P2PCHECK_LAB_JOBS (make -j).
set -euo pipefail

# Bump when the build procedure changes in a way that changes the result.
SCRIPT_VERSION=1

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
FRAGMENT="$HERE/kernel.config"
# A variant <series>+<name> adds variants/<name>.config and applies variants/<name>.patch to the
# source of <series>; it has the plain kernel's release string and its own cache key.
VARIANT=""
declare -A VARIANT_SERIES=([allow29c0]="6.12")
CACHE="${P2PCHECK_LAB_CACHE:-$HOME/.cache/p2pcheck-lab}"
JOBS="${P2PCHECK_LAB_JOBS:-$(nproc)}"
SERIES_ALL=(6.12 6.1 7.3)
# Series whose linux-source comes from a suite bookworm's sources.list lacks:
# read from a private apt list so the machine's own apt setup is untouched.
declare -A SERIES_SUITE=([7.3]="trixie-backports")
declare -A SUITE_KEYRING=([trixie-backports]="/usr/share/keyrings/debian-archive-trixie-automatic.gpg")
APT_DEPS=(flex bison bc libelf-dev libssl-dev build-essential xz-utils dwarves rsync kmod cpio)

die() { echo "build-kernel: error: $*" >&2; exit 1; }
log() { echo "build-kernel: $*" >&2; }

usage() {
	sed -n '5,10p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

cache_key() {
	{
		cat "$FRAGMENT"
		echo "SCRIPT_VERSION=$SCRIPT_VERSION"
		if [ -n "$VARIANT" ]; then
			echo "VARIANT=$VARIANT"
			cat "$HERE/variants/$VARIANT.config" "$HERE/variants/$VARIANT.patch"
		fi
	} | sha256sum | cut -c1-12
}

# Sets SERIES (and VARIANT for <series>+<variant>).
check_series() {
	SERIES="${1%%+*}"
	VARIANT=""
	[ "$SERIES" != "$1" ] && VARIANT="${1#*+}"
	case "$SERIES" in
	6.12|6.1|7.3) ;;
	*) die "unknown kernel series '$1' (expected 6.12, 6.1, 7.3, all or 6.12+allow29c0)" ;;
	esac
	if [ -n "$VARIANT" ]; then
		[ "${VARIANT_SERIES[$VARIANT]:-}" = "$SERIES" ] ||
			die "unknown variant '$1' (known: 6.12+allow29c0)"
		[ -f "$HERE/variants/$VARIANT.config" ] && [ -f "$HERE/variants/$VARIANT.patch" ] ||
			die "missing variants/$VARIANT.config or .patch"
	fi
}

# Newest finished build dir for a series with the current cache key.
find_built() {
	local series="$1" key d best=""
	key="$(cache_key)"
	# sort -V so 6.1.192 beats 6.1.99; series 6.1 must not match 6.12.x.
	while IFS= read -r d; do
		[ -f "$d/complete" ] && best="$d"
	done < <(find "$CACHE" -maxdepth 1 -type d -name "kernel-$series.*-$key" 2>/dev/null | sort -V)
	[ -n "$best" ] || return 1
	echo "$best"
}

install_deps() {
	local missing=() p
	for p in "${APT_DEPS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing missing packages: ${missing[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		die "need root to apt-get install ${missing[*]}"
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
		{ apt-get update >&2 && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y --no-install-recommends "${missing[@]}" >&2; } ||
		die "apt-get install ${missing[*]} failed"
}

# Verify every CONFIG_X=y of the fragment is =y in .config.
verify_config() {
	local config="$1" opt bad=() frags=("$FRAGMENT")
	[ -n "$VARIANT" ] && frags+=("$HERE/variants/$VARIANT.config")
	while IFS= read -r opt; do
		grep -qx "${opt}=y" "$config" || bad+=("$opt")
	done < <(sed -n 's/^\(CONFIG_[A-Za-z0-9_]*\)=y[[:space:]]*$/\1/p' "${frags[@]}")
	if [ ${#bad[@]} -ne 0 ]; then
		for opt in "${bad[@]}"; do
			echo "build-kernel: NOT =y after olddefconfig: $opt ($(grep -E "^(# )?${opt}[= ]" "$config" || echo 'absent'))" >&2
		done
		die "${#bad[@]} fragment option(s) not enabled: ${bad[*]}"
	fi
}

# apt options that read only a private list of one suite (see SERIES_SUITE).
APT_OPTS=()
use_suite() {
	local suite="$1" dir="$CACHE/apt-$1" keyring="${SUITE_KEYRING[$1]}"
	[ -f "$keyring" ] || die "no keyring $keyring for $suite (package debian-archive-keyring)"
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	echo "deb [signed-by=$keyring] http://deb.debian.org/debian $suite main" > "$dir/sources.list"
	APT_OPTS=(-o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache")
	if ! ls "$dir"/lists/*_Packages* >/dev/null 2>&1; then
		log "reading the package list of $suite"
		apt-get "${APT_OPTS[@]}" update >&2 || die "apt-get update of $suite failed"
	fi
}

build_series() {
	local series="$1" pkg="linux-source-$1" debver upver key dir lock deb tree start
	key="$(cache_key)"
	APT_OPTS=()
	[ -n "${SERIES_SUITE[$series]:-}" ] && use_suite "${SERIES_SUITE[$series]}"
	debver="$(apt-cache "${APT_OPTS[@]}" policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p')"
	if [ -z "$debver" ] || [ "$debver" = "(none)" ]; then
		log "no apt candidate for $pkg; running apt-get update"
		apt-get "${APT_OPTS[@]}" update >&2 || true
		debver="$(apt-cache "${APT_OPTS[@]}" policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p')"
	fi
	[ -n "$debver" ] && [ "$debver" != "(none)" ] || die "package $pkg not available from apt"
	upver="${debver%%-*}"            # 6.12.117-1~deb12u1 -> 6.12.117
	upver="${upver#*:}"              # drop an epoch, if any
	dir="$CACHE/kernel-$upver-$key"

	mkdir -p "$CACHE/debs"
	lock="$CACHE/.lock-kernel-$upver-$key"
	exec {lockfd}>"$lock"
	if ! flock -n "$lockfd"; then
		log "another build of $upver holds $lock; waiting"
		flock "$lockfd"
	fi

	if [ -f "$dir/complete" ]; then
		log "$series: already built in $dir"
		print_paths "$dir"
		exec {lockfd}>&-
		return 0
	fi
	[ -e "$dir" ] && { log "$series: removing incomplete build $dir"; rm -rf "$dir"; }

	install_deps

	deb="$(ls "$CACHE"/debs/"${pkg}_${debver#*:}"_*.deb 2>/dev/null | head -n1 || true)"
	if [ -z "$deb" ]; then
		log "$series: downloading $pkg=$debver"
		(cd "$CACHE/debs" && apt-get "${APT_OPTS[@]}" download "$pkg=$debver" >&2) || die "apt-get download $pkg failed"
		deb="$(ls "$CACHE"/debs/"${pkg}"_*.deb | sort -V | tail -n1)"
	fi
	log "$series: using $deb"

	mkdir -p "$dir/pkg"
	dpkg -x "$deb" "$dir/pkg"
	local tarball
	tarball="$(ls "$dir"/pkg/usr/src/linux-source-*.tar.* | head -n1)" ||
		die "no source tarball in $deb"
	tar -C "$dir" -xf "$tarball"
	rm -rf "$dir/pkg"
	tree="$dir/linux-$upver"
	mv "$dir/linux-source-$series" "$tree"
	echo "$debver" > "$dir/debian-version"
	local frags=("$FRAGMENT")
	if [ -n "$VARIANT" ]; then
		log "$series: variant $VARIANT: applying variants/$VARIANT.patch"
		patch -d "$tree" -p1 --no-backup-if-mismatch < "$HERE/variants/$VARIANT.patch" >&2 ||
			die "variants/$VARIANT.patch does not apply to $upver"
		frags+=("$HERE/variants/$VARIANT.config")
	fi

	log "$series: configuring (tinyconfig + ${frags[*]})"
	make -C "$tree" ARCH=x86_64 tinyconfig >&2
	(cd "$tree" && scripts/kconfig/merge_config.sh -m .config "${frags[@]}" >&2)
	make -C "$tree" ARCH=x86_64 olddefconfig >&2
	verify_config "$tree/.config"

	start=$(date +%s)
	log "$series: make -j$JOBS bzImage modules_prepare (takes ~8 min on 2 cores)"
	make -C "$tree" ARCH=x86_64 -j"$JOBS" bzImage modules_prepare >&2
	log "$series: make modules"
	make -C "$tree" ARCH=x86_64 -j"$JOBS" modules >&2
	[ -f "$tree/Module.symvers" ] || die "no Module.symvers after make modules"
	cp "$tree/arch/x86/boot/bzImage" "$dir/bzImage"
	cp "$tree/.config" "$dir/config"
	if [ -n "$VARIANT" ]; then
		cp "$tree/System.map" "$dir/System.map"
		make -s -C "$tree" ARCH=x86_64 kernelrelease > "$dir/kernelrelease"
	fi
	log "$series: built in $(( $(date +%s) - start )) s"
	date -u +%FT%TZ > "$dir/complete"
	print_paths "$dir"
	exec {lockfd}>&-
}

print_paths() {
	local dir="$1"
	echo "CACHE_DIR=$dir"
	echo "KDIR=$(ls -d "$dir"/linux-*/ | head -n1 | sed 's,/$,,')"
	echo "BZIMAGE=$dir/bzImage"
}

[ $# -ge 1 ] || usage
[ -f "$FRAGMENT" ] || die "missing fragment $FRAGMENT"

case "$1" in
--print-path)
	[ $# -eq 2 ] || usage
	check_series "$2"
	find_built "$SERIES" || exit 1
	;;
-h|--help) usage ;;
all)
	for s in "${SERIES_ALL[@]}"; do build_series "$s"; done
	;;
*)
	[ $# -eq 1 ] || usage
	check_series "$1"
	build_series "$SERIES"
	;;
esac
