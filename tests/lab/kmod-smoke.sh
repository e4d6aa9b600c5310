#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# One-off smoke test of kmod/p2pprobe in QEMU (TCG): boots a lab kernel with a
# busybox initramfs, loads the module and runs tests/lab/p2pprobe-cli.
# Not the lab's scenario runner; a quick check that the module works.
#
# Usage: tests/lab/kmod-smoke.sh [6.12|6.1] [QEMU_CPU]      (default 6.12 EPYC)
#        tests/lab/kmod-smoke.sh stock ABI      Debian kernel, P2PDMA off (e.g. 6.1.0-57-amd64)
# Topology (q35):
#   rp1 -> x3130 switch -> dn1: nvme "cmb0" (16 MiB CMB, the p2pmem provider)
#                       -> dn2: nvme "sw1"  (blank disk)
#                       -> dn3: ivshmem-plain 64 MiB (bound to p2pprobe)
#   rp2 -> nvme "rp2" (ext4 image): different root port, THRU_HOST_BRIDGE
# Output: the guest's console; the summary lines start with "SMOKE".
# SMOKE_QEMU_ARGS (e.g. "-device intel-iommu") and SMOKE_APPEND (kernel command
# line, e.g. "intel_iommu=on") add to the defaults.
set -euo pipefail

SERIES="${1:-6.12}"
CPU="${2:-EPYC}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${P2PCHECK_LAB_CACHE:-$HOME/.cache/p2pcheck-lab}"
WORK="$(mktemp -d /tmp/p2pprobe-smoke.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

for p in qemu-system-x86 busybox-static e2fsprogs cpio; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$p" >&2
done

STOCK=0
case "$SERIES" in
stock)
	# Debian's own kernel (CONFIG_PCI_P2PDMA off): the module must load and say so.
	ABI="${2:?usage: kmod-smoke.sh stock ABI (e.g. 6.1.0-57-amd64)}"
	CPU=EPYC
	STOCK=1
	KDIR="/usr/src/linux-headers-$ABI"
	[ -d "$KDIR" ] || DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "linux-headers-$ABI" >&2
	KERNEL="$CACHE/stock-$ABI/boot/vmlinuz-$ABI"
	if [ ! -f "$KERNEL" ]; then
		mkdir -p "$CACHE/stock-$ABI"
		(cd "$WORK" && apt-get download "linux-image-$ABI" >&2)
		dpkg -x "$WORK"/linux-image-"$ABI"_*.deb "$CACHE/stock-$ABI"
	fi
	;;
*)
	CACHE_DIR="$("$HERE/build-kernel.sh" --print-path "$SERIES")" ||
		{ echo "kmod-smoke: build the $SERIES kernel first: tests/lab/build-kernel.sh $SERIES" >&2; exit 2; }
	KDIR="$(ls -d "$CACHE_DIR"/linux-*/ | head -n1)"
	KERNEL="$CACHE_DIR/bzImage"
	;;
esac

# Module and client.
mkdir -p "$WORK/kmod"
cp -r "$ROOT/kmod/p2pprobe.c" "$ROOT/kmod/Kbuild" "$ROOT/kmod/Makefile" "$ROOT/kmod/uapi" "$WORK/kmod/"
make -C "$WORK/kmod" KDIR="$KDIR" >/dev/null
gcc -static -O2 -Wall -I"$ROOT/kmod" -o "$WORK/p2pprobe-cli" "$HERE/p2pprobe-cli.c"

# initramfs.
R="$WORK/root"
mkdir -p "$R"/{bin,sbin,proc,sys,dev,mnt,tmp}
cp /bin/busybox "$R/bin/busybox"
for a in $("$R/bin/busybox" --list); do [ "$a" = busybox ] || ln -sf busybox "$R/bin/$a"; done
cp "$WORK/kmod/p2pprobe.ko" "$WORK/p2pprobe-cli" "$R/"
cat > "$R/init" <<'EOF'
#!/bin/sh
export PATH=/bin:/
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
fails=0
. /expect
check() { # name command...
	n="$1"; shift
	if out="$("$@" 2>&1)"; then echo "SMOKE ok   $n: $out"; else echo "SMOKE FAIL $n: $out"; fails=$((fails+1)); fi
}
thb() { # name command...: a THRU_HOST_BRIDGE pair, allowed only on AMD Zen CPUs
	n="$1"; shift
	if [ "$THB_ALLOWED" = 1 ]; then check "$n" "$@"; return; fi
	out="$("$@" 2>&1)"
	case "$out" in
	*error=-121*|*NOT_SUPPORTED*) echo "SMOKE ok   $n (refused as expected): $out" ;;
	*) echo "SMOKE FAIL $n (expected a refusal): $out"; fails=$((fails+1)) ;;
	esac
}
expect_fail() { # name command...
	n="$1"; shift
	if out="$("$@" 2>&1)"; then echo "SMOKE FAIL $n (expected failure): $out"; fails=$((fails+1)); else echo "SMOKE ok   $n (failed as expected): $out"; fi
}
bdf_of_serial() { for c in /sys/class/nvme/nvme*; do [ "$(cat $c/serial | tr -d ' ')" = "$1" ] && basename "$(readlink -f $c/device)"; done; }
ns_of_serial() { for c in /sys/class/nvme/nvme*; do [ "$(cat $c/serial | tr -d ' ')" = "$1" ] && echo /dev/$(basename $c)n1; done; }

check insmod insmod /p2pprobe.ko
check info p2pprobe-cli info
check selftest p2pprobe-cli selftest
CMB=$(bdf_of_serial cmb0); SW=$(bdf_of_serial sw1); RP=$(bdf_of_serial rp2)
SWDEV=$(ns_of_serial sw1); RPDEV=$(ns_of_serial rp2)
IVSH=$(for d in /sys/bus/pci/devices/*; do [ "$(cat $d/vendor):$(cat $d/device)" = "0x1af4:0x1110" ] && basename $d; done)
echo "SMOKE devices cmb=$CMB sw=$SW($SWDEV) rp=$RP($RPDEV) ivshmem=$IVSH"
echo "SMOKE cmb p2pmem size=$(cat /sys/bus/pci/devices/$CMB/p2pmem/size) available=$(cat /sys/bus/pci/devices/$CMB/p2pmem/available) published=$(cat /sys/bus/pci/devices/$CMB/p2pmem/published)"

echo p2pprobe > /sys/bus/pci/devices/$IVSH/driver_override
echo $IVSH > /sys/bus/pci/drivers_probe
check ivshmem-bound test "$(basename "$(readlink /sys/bus/pci/devices/$IVSH/driver)")" = p2pprobe
echo "SMOKE ivshmem p2pmem size=$(cat /sys/bus/pci/devices/$IVSH/p2pmem/size 2>&1) published=$(cat /sys/bus/pci/devices/$IVSH/p2pmem/published 2>&1)"

check verdict-cmb-sw     p2pprobe-cli verdict $CMB $SW $SWDEV
thb   verdict-cmb-rp     p2pprobe-cli verdict $CMB $RP $RPDEV verbose
check verdict-ivsh-sw    p2pprobe-cli verdict $IVSH $SW
check verdict-sw-cmb     p2pprobe-cli verdict $SW $CMB
check verdict-nomap      p2pprobe-cli verdict $CMB $SW nomap

check dma-cmb-sw-vfs     p2pprobe-cli dma $CMB $SWDEV 0 1048576 11
check dma-cmb-sw-bio     p2pprobe-cli dma $CMB $SWDEV 1048576 1048576 12 bio
check dma-ivsh-sw-vfs    p2pprobe-cli dma $IVSH $SWDEV 4194304 8388608 13
check dma-ivsh-sw-bio    p2pprobe-cli dma $IVSH $SWDEV 0 4194304 14 bio chunk=65536
check dma-noread         p2pprobe-cli dma $CMB $SWDEV 0 65536 15 noread
check verify-after-p2p   p2pprobe-cli verify $SWDEV 0 65536 15
check fill-ordinary      p2pprobe-cli fill $SWDEV 65536 65536 16
check dma-nowrite        p2pprobe-cli dma $CMB $SWDEV 65536 65536 16 nowrite
expect_fail dma-wrong-seed p2pprobe-cli dma $CMB $SWDEV 65536 65536 17 nowrite
expect_fail dma-no-p2pmem p2pprobe-cli dma $SW $SWDEV 0 65536 1

mount -t ext4 $RPDEV /mnt && echo "SMOKE mounted $RPDEV"
thb   dma-cmb-rp-file    p2pprobe-cli dma $CMB /mnt/f 0 1048576 21
[ "$THB_ALLOWED" = 1 ] && check verify-rp-file p2pprobe-cli verify /mnt/f 0 1048576 21
expect_fail dma-bio-on-file p2pprobe-cli dma $CMB /mnt/f 0 65536 22 bio
umount /mnt
thb   dma-cmb-rp-bdev    p2pprobe-cli dma $CMB $RPDEV 33554432 1048576 23

echo $IVSH > /sys/bus/pci/drivers/p2pprobe/unbind
check rmmod rmmod p2pprobe
echo "SMOKE dmesg:"; dmesg | grep -iE 'p2p|peer|nvme.*cmb' | sed 's/^/SMOKE   /'
echo "SMOKE done fails=$fails"
poweroff -f
EOF
if [ "$STOCK" = 1 ]; then
	cat > "$R/init" <<'EOF'
#!/bin/sh
export PATH=/bin:/
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
fails=0
check() { n="$1"; shift; if out="$("$@" 2>&1)"; then echo "SMOKE ok   $n: $out"; else echo "SMOKE FAIL $n: $out"; fails=$((fails+1)); fi; }
check insmod insmod /p2pprobe.ko
out="$(p2pprobe-cli info)"; echo "$out" | sed 's/^/SMOKE   /'
case "$out" in *p2pdma=0*) echo "SMOKE ok   info says P2PDMA absent" ;; *) echo "SMOKE FAIL info"; fails=$((fails+1)) ;; esac
check selftest p2pprobe-cli selftest
check verdict p2pprobe-cli verdict 00:01.0 00:02.0
IVSH=$(for d in /sys/bus/pci/devices/*; do [ "$(cat $d/vendor):$(cat $d/device)" = "0x1af4:0x1110" ] && basename $d; done)
echo p2pprobe > /sys/bus/pci/devices/$IVSH/driver_override
echo $IVSH > /sys/bus/pci/drivers_probe 2>/dev/null
if [ -e /sys/bus/pci/devices/$IVSH/driver ]; then echo "SMOKE FAIL bind should fail"; fails=$((fails+1)); else echo "SMOKE ok   bind refused"; fi
out="$(p2pprobe-cli dma $IVSH fd:0 0 4096 1 </dev/null 2>&1)"
case "$out" in *ioctl_errno=95*) echo "SMOKE ok   dma: $out" ;; *) echo "SMOKE FAIL dma: $out"; fails=$((fails+1)) ;; esac
check rmmod rmmod p2pprobe
dmesg | grep -i p2pprobe | sed 's/^/SMOKE   /'
echo "SMOKE done fails=$fails"
poweroff -f
EOF
fi
chmod +x "$R/init"
case "$CPU" in EPYC*) echo THB_ALLOWED=1 ;; *) echo THB_ALLOWED=0 ;; esac > "$R/expect"
(cd "$R" && find . | cpio -o -H newc 2>/dev/null | gzip -1) > "$WORK/initrd.gz"

# Disks.
truncate -s 64M "$WORK/cmb0.img" "$WORK/sw1.img"
truncate -s 64M "$WORK/rp2.img"
mkfs.ext4 -q -F "$WORK/rp2.img"

CPUARG="$CPU"
[ "$CPU" = Opteron_G5 ] && CPUARG="Opteron_G5,-xsave"
# shellcheck disable=SC2086
timeout 600 qemu-system-x86_64 -machine q35 -accel tcg -m 1G -smp 1 -cpu "$CPUARG" \
	${SMOKE_QEMU_ARGS:-} \
	-nographic -no-reboot -nic none -kernel "$KERNEL" -initrd "$WORK/initrd.gz" \
	-append "console=ttyS0 panic=-1 nvme.use_cmb_sqes=0 quiet ${SMOKE_APPEND:-}" \
	-drive if=none,id=d0,file="$WORK/cmb0.img",format=raw \
	-drive if=none,id=d1,file="$WORK/sw1.img",format=raw \
	-drive if=none,id=d2,file="$WORK/rp2.img",format=raw \
	-object memory-backend-ram,id=shm,size=64M \
	-device pcie-root-port,id=rp1,chassis=1,slot=1 \
	-device x3130-upstream,id=up1,bus=rp1 \
	-device xio3130-downstream,id=dn1,bus=up1,chassis=2,slot=0 \
	-device xio3130-downstream,id=dn2,bus=up1,chassis=3,slot=0 \
	-device xio3130-downstream,id=dn3,bus=up1,chassis=4,slot=0 \
	-device nvme,serial=cmb0,drive=d0,cmb_size_mb=16,bus=dn1 \
	-device nvme,serial=sw1,drive=d1,bus=dn2 \
	-device ivshmem-plain,memdev=shm,bus=dn3 \
	-device pcie-root-port,id=rp2,chassis=5,slot=2 \
	-device nvme,serial=rp2,drive=d2,bus=rp2 </dev/null | tee "$WORK/console.log"
grep -q 'SMOKE done fails=0' "$WORK/console.log"
