#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian 12 packages the QEMU lab needs (tests/lab/): QEMU, the guest's
# userland, the kernel build and the headers of Debian's stock kernel (to build
# kmod/p2pprobe for the "no P2PDMA" scenario). Idempotent: installs only what
# is missing; needs root (or sudo) when something is.
#
#   tests/lab/setup-deps.sh            install what is missing
#   tests/lab/setup-deps.sh --check    list what is missing, exit 1 if anything is
#   tests/lab/setup-deps.sh --print-stock-abi   the stock kernel ABI (e.g. 6.1.0-57-amd64)
#
# P2PCHECK_LAB_STOCK_ABI overrides the stock kernel ABI (default: what
# linux-image-amd64 depends on).
set -euo pipefail

PKGS=(
	# guest and QEMU
	qemu-system-x86 busybox-static cpio gzip kmod pci.ids python3
	# static helpers (p2pprobe-cli, p2pmem-io) and the kernel builds (build-kernel.sh)
	build-essential libc6-dev flex bison bc libelf-dev libssl-dev xz-utils dwarves rsync
	# a real browser for the `p2pcheck fleet --html` page (tests/e2e/fleet_browser_test.sh, headless)
	chromium
)

log() { echo "lab-setup-deps: $*" >&2; }

stock_abi() {
	if [ -n "${P2PCHECK_LAB_STOCK_ABI:-}" ]; then echo "$P2PCHECK_LAB_STOCK_ABI"; return; fi
	local abi
	abi="$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: linux-image-//p' | head -n1)"
	if [ -z "$abi" ]; then
		apt-get update >&2 || true
		abi="$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: linux-image-//p' | head -n1)"
	fi
	[ -n "$abi" ] || { log "cannot tell the stock kernel ABI (apt-cache depends linux-image-amd64)"; exit 1; }
	echo "$abi"
}

missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
	done
}

case "${1:-}" in
--print-stock-abi) stock_abi; exit 0 ;;
--check|"") ;;
*) sed -n '5,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac

ABI="$(stock_abi)"
PKGS+=("linux-headers-$ABI")
mapfile -t MISSING < <(missing "${PKGS[@]}")
if [ ${#MISSING[@]} -eq 0 ]; then
	log "all ${#PKGS[@]} packages installed (stock kernel ABI $ABI)"
	exit 0
fi
if [ "${1:-}" = --check ]; then
	log "missing: ${MISSING[*]}"
	exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { log "need root to install: ${MISSING[*]}"; exit 1; }
	SUDO=sudo
fi
log "installing: ${MISSING[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y --no-install-recommends "${MISSING[@]}" >&2 ||
	{ $SUDO apt-get update >&2 && $SUDO apt-get install -y --no-install-recommends "${MISSING[@]}" >&2; }
mapfile -t STILL < <(missing "${PKGS[@]}")
[ ${#STILL[@]} -eq 0 ] || { log "still missing after apt-get: ${STILL[*]}"; exit 1; }
log "done"
