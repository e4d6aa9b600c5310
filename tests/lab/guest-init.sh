#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the QEMU lab's guests (tests/lab/lab.py puts it into the initramfs
# with busybox, p2pcheck and its libraries, p2pprobe.ko, p2pprobe-cli,
# p2pmem-io and a /plan written for the scenario).
#
# It runs the scenario and hands everything back on the second serial port
# (/dev/ttyS1) as one base64-encoded tar.gz between the lines
#   @@P2PLAB-BEGIN   and   @@P2PLAB-END <exit status of tar>
# The host (lab.py) decodes it and makes every assertion; the guest only
# collects. /plan (shell) sets:
#   SCENARIO       name
#   KERNEL_KIND    lab | stock (stock: load nvme from /lib/modules first)
#   NVME_SERIALS   serial numbers of every NVMe to wait for
#   PROVIDERS      names of providers: an NVMe serial, or "ivsh" (ivshmem-plain,
#                  bound to p2pprobe here)
#   CLIENTS        NVMe serials
#   KDMA           p2pprobe DMA_TEST runs: provider:client:offset:length:seed[:bio]
#   UDMA           p2pmem/allocate runs (p2pmem-io): provider:client:offset:length:seed
# and, for scenarios that run `p2pcheck verify`, /verify-setup.sh (mounts; sourced
# before p2pcheck first looks at the machine) and /verify.sh (vrun/vcapture
# lines, sourced after the DMA tests). MODE=kmod-abuse runs /kmod-abuse.sh
# (ABUSE_* variables) instead of everything after the module is loaded.
export PATH=/bin:/sbin:/usr/bin:/
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /out /tmp
up() { cut -d' ' -f1 /proc/uptime; }  # seconds since boot
echo "init_s=$(up)" > /out/timing.txt
. /plan
O=/out
log() { echo "P2PLAB $*"; }
log "scenario $SCENARIO kernel $(cat /proc/sys/kernel/osrelease)"
echo "$SCENARIO" > $O/scenario
cat /proc/cmdline > $O/cmdline

if [ "$KERNEL_KIND" = stock ]; then
	# Debian's kernel: nvme is a module (modules.dep made on the host by depmod).
	modprobe nvme use_cmb_sqes=0 2>&1 | sed 's/^/P2PLAB modprobe: /'
fi

# nvme probes asynchronously: wait until every controller has its namespace.
serial_of() { tr -d ' ' < "$1/serial"; }
ctrl_of_serial() { for c in /sys/class/nvme/nvme*; do [ "$(serial_of "$c")" = "$1" ] && basename "$c"; done; }
i=0
while :; do
	missing=""
	for s in $NVME_SERIALS; do
		c=$(ctrl_of_serial "$s")
		[ -n "$c" ] && [ -b "/dev/${c}n1" ] || missing="$missing $s"
	done
	[ -z "$missing" ] && break
	i=$((i + 1))
	if [ $i -gt 300 ]; then log "timeout waiting for NVMe:$missing"; break; fi
	usleep 100000
done
log "nvme ready after $i waits"
echo "nvme_ready_s=$(up)" >> $O/timing.txt

IVSH=$(for d in /sys/bus/pci/devices/*; do [ "$(cat "$d/vendor"):$(cat "$d/device")" = "0x1af4:0x1110" ] && basename "$d"; done | head -n1)
bdf_of() { # name -> PCI address
	if [ "$1" = ivsh ]; then echo "$IVSH"; return; fi
	c=$(ctrl_of_serial "$1"); [ -n "$c" ] && basename "$(readlink -f "/sys/class/nvme/$c/device")"
}
dev_of() { c=$(ctrl_of_serial "$1"); [ -n "$c" ] && echo "/dev/${c}n1"; }
# fail_next_io SERIAL: the NVMe's next request is dropped (CONFIG_FAIL_IO_TIMEOUT), so
# nvme completes it only after io_timeout, an abort and a controller reset. Its
# io-timeout-fail stays set: echo 0 to it to end that.
fail_next_io() {
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
	echo 1 > "/sys/block/$(basename "$(dev_of "$1")")/io-timeout-fail" &&
		echo 1 > /sys/kernel/debug/fail_io_timeout/verbose &&
		echo 100 > /sys/kernel/debug/fail_io_timeout/probability &&
		echo 1 > /sys/kernel/debug/fail_io_timeout/times
}

insmod /lib/p2pprobe.ko > $O/insmod.txt 2>&1; echo "rc=$?" >> $O/insmod.txt
if [ -n "$IVSH" ]; then
	echo p2pprobe > "/sys/bus/pci/devices/$IVSH/driver_override"
	echo "$IVSH" > /sys/bus/pci/drivers_probe 2>/dev/null
	drv=$(basename "$(readlink "/sys/bus/pci/devices/$IVSH/driver" 2>/dev/null)" 2>/dev/null)
	echo "ivsh=$IVSH driver=${drv:--}" > $O/ivsh.txt
fi

: > $O/devices.txt
for n in $PROVIDERS $CLIENTS; do
	grep -q "^$n " $O/devices.txt || echo "$n $(bdf_of "$n") $(dev_of "$n")" >> $O/devices.txt
done
for n in $PROVIDERS $CLIENTS; do
	b=$(bdf_of "$n")
	[ -n "$b" ] && [ -d "/sys/bus/pci/devices/$b/p2pmem" ] &&
		echo "$n $b size=$(cat /sys/bus/pci/devices/$b/p2pmem/size) available=$(cat /sys/bus/pci/devices/$b/p2pmem/available) published=$(cat /sys/bus/pci/devices/$b/p2pmem/published) allocate=$([ -e /sys/bus/pci/devices/$b/p2pmem/allocate ] && echo 1 || echo 0)"
done > $O/p2pmem.txt

p2pprobe-cli info > $O/info.txt 2>&1

# Everything the guest collected, to the host (ttyS1), then power off.
finish() {
	dmesg > $O/dmesg.txt
	cat /proc/modules > $O/modules.txt
	echo "uptime=$(up)" >> $O/timing.txt
	tar -czf /tmp/out.tar.gz -C $O .; rc=$?
	stty -F /dev/ttyS1 raw -echo 2>/dev/null
	{
		echo "@@P2PLAB-BEGIN"
		base64 /tmp/out.tar.gz
		echo "@@P2PLAB-END $rc"
	} > /dev/ttyS1
	log "done"
	poweroff -f
}
# The module abuse scenario (kmod-abuse.sh) instead of verdicts, p2pcheck and DMA.
if [ "$MODE" = kmod-abuse ]; then
	. /kmod-abuse.sh
	finish
fi
[ -f /verify-setup.sh ] && . /verify-setup.sh

# The kernel's verdict for every provider x client.
: > $O/verdicts.txt
GPUS=""; NVMES=""
for p in $PROVIDERS; do GPUS="${GPUS:+$GPUS,}$(bdf_of "$p")"; done
for c in $CLIENTS; do NVMES="${NVMES:+$NVMES,}$(bdf_of "$c")"; done
for p in $PROVIDERS; do
	for c in $CLIENTS; do
		echo "pair $p $c $(p2pprobe-cli verdict "$(bdf_of "$p")" "$(bdf_of "$c")" "$(dev_of "$c")" verbose 2>&1)" >> $O/verdicts.txt
	done
done

# p2pcheck, live, before any DMA: exactly what a user would run.
t0=$(up)
p2pcheck check --json > $O/check-all.json 2> $O/check-all.err; echo $? > $O/check-all.rc
# check.json: lab.py compares each pair's own decision (its decisions row joined, tests/e2e/check_json_pairs.py).
p2pcheck check --json --gpu "$GPUS" --nvme "$NVMES" > $O/check.json 2> $O/check.err; echo $? > $O/check.rc
p2pcheck check --color never --gpu "$GPUS" --nvme "$NVMES" > $O/check.txt 2>&1
p2pcheck topo --json > $O/topo.json 2> $O/topo.err; echo $? > $O/topo.rc
p2pcheck topo --color never --ascii > $O/topo.txt 2>&1
t1=$(up)
p2pcheck capture -o $O/capture.tar.gz > $O/capture.out 2>&1; echo $? > $O/capture.rc
t2=$(up)
echo "p2pcheck_s=$(echo "$t1 - $t0" | bc) capture_s=$(echo "$t2 - $t1" | bc)" >> $O/timing.txt

# DMA through the module: each run writes the pattern, reads it back, compares.
# A run whose write is refused is repeated read-only (nowrite), so that both
# directions of a refused pair are seen to fail.
: > $O/dma.txt
for t in $KDMA; do
	IFS=: read -r p c off len seed mode <<EOF
$t
EOF
	out=$(p2pprobe-cli dma "$(bdf_of "$p")" "$(dev_of "$c")" "$off" "$len" "$seed" ${mode:+$mode} chunk="$len" 2>&1)
	echo "kdma $p $c $off $len $seed ${mode:-vfs} $out" >> $O/dma.txt
	case "$out" in
	*write_error=0\ *) ;;
	*)
		out=$(p2pprobe-cli dma "$(bdf_of "$p")" "$(dev_of "$c")" "$off" "$len" "$seed" ${mode:+$mode} nowrite chunk="$len" 2>&1)
		echo "kdma-nowrite $p $c $off $len $seed ${mode:-vfs} $out" >> $O/dma.txt
		;;
	esac
done
for t in $UDMA; do
	IFS=: read -r p c off len seed <<EOF
$t
EOF
	echo "udma $p $c $off $len $seed $(p2pmem-io "$(bdf_of "$p")" "$(dev_of "$c")" "$off" "$len" "$seed" 2>&1)" >> $O/dma.txt
done
sync

# p2pcheck verify NAME ARGS...: output, exit status, times, the results file it
# leaves for capture, and what is left in every mounted scratch directory.
vrun() {
	n=$1; shift
	vrun_start "$n"
	p2pcheck verify --color never "$@" > $O/verify-$n.out 2> $O/verify-$n.err
	vrun_end "$n" $?
}
vrun_start() {
	rm -f /run/p2pcheck/verify.json
	echo "start=$(up)" > $O/verify-$1.time
}
# vrun_end NAME RC: everything vrun keeps once p2pcheck has exited with RC.
vrun_end() {
	echo "$2" > $O/verify-$1.rc
	echo "end=$(up)" >> $O/verify-$1.time
	[ -f /run/p2pcheck/verify.json ] && cp /run/p2pcheck/verify.json $O/verify-$1.results.json
	# every mounted scratch directory (busybox here has no mountpoint applet)
	for m in $(cut -d" " -f2 /proc/mounts | grep "^/mnt/"); do echo "$m:"; ls -A "$m"; done > $O/verify-$1.ls 2>&1
}
# vrun_unplug NAME QEMU-ID ARGS...: vrun, but once the transfer has begun (verify
# says "... ->" or "... <-" on stderr), ask the host to device_del QEMU-ID (lab.py
# watches the console for the mark) and note whether and when the device
# vanished (verify-NAME.unplug).
vrun_unplug() {
	n=$1; id=$2; shift 2
	vrun_start "$n"
	p2pcheck verify --color never "$@" > $O/verify-$n.out 2> $O/verify-$n.err &
	vpid=$!
	i=0
	while ! grep -q ' \.\.\.$' $O/verify-$n.err 2>/dev/null && [ $i -lt 600 ]; do usleep 100000; i=$((i + 1)); done
	b=$(up)
	bdf=$(bdf_of "${id#dev}")
	echo "@@P2PLAB-UNPLUG $id"
	i=0
	while [ -e "/sys/bus/pci/devices/$bdf" ] && kill -0 $vpid 2>/dev/null && [ $i -lt 600 ]; do usleep 100000; i=$((i + 1)); done
	g=$(up)
	wait $vpid; rc=$?
	gone=0; [ -e "/sys/bus/pci/devices/$bdf" ] || gone=1
	echo "bdf=$bdf gone=$gone after_s=$(echo "$g - $b" | bc)" > $O/verify-$n.unplug
	vrun_end "$n" $rc
}
# vwatch NAME ARGS...: vrun inside `p2pcheck watch` (the eBPF probe): watch's JSON,
# exit status and recording beside verify's own files (watch-NAME.json, .rc, .rec).
vwatch() {
	n=$1; shift
	vrun_start "$n"
	p2pcheck watch --json=pretty --record $O/watch-$n.rec -- sh -c \
		'o=$1; shift; p2pcheck verify --color never "$@" > $o.out 2> $o.err; echo $? > $o.vrc' \
		sh "$O/verify-$n" "$@" > $O/watch-$n.json 2> $O/watch-$n.err
	echo $? > $O/watch-$n.rc
	vrun_end "$n" "$(cat $O/verify-$n.vrc 2>/dev/null)"
}
# wrun NAME COMMAND...: any command inside `p2pcheck watch` (host-memory I/O, say).
wrun() {
	n=$1; shift
	p2pcheck watch --json=pretty --record $O/watch-$n.rec -- "$@" > $O/watch-$n.json 2> $O/watch-$n.err
	echo $? > $O/watch-$n.rc
}
# wbeside NAME BESIDE COMMAND...: wrun while BESIDE (shell text), started before watch and outside
# it, does its own I/O; it stops when /tmp/beside.stop appears. Each of its rounds adds a line to
# /tmp/beside.n, which COMMAND may wait on (so the other I/O happens while watch counts).
wbeside() {
	n=$1; b=$2; shift 2
	rm -f /tmp/beside.stop; : > /tmp/beside.n
	( eval "$b" ) > $O/watch-$n.beside 2>&1 &
	bp=$!
	wrun "$n" "$@"
	touch /tmp/beside.stop
	wait $bp
}
vcapture() { p2pcheck capture -o $O/capture-$1.tar.gz > $O/capture-$1.out 2>&1; }
# wbench NAME ROUNDS COMMAND...: COMMAND (which times itself) alone and inside `p2pcheck watch`,
# ROUNDS times, which goes first alternating, for bench/watch_overhead.py: bench-NAME.txt has one
# line a run ("plain OUTPUT" or "watch rc=N OUTPUT"), bench-NAME-watch.json the last watch's JSON.
wbench() {
	n=$1; r=$2; shift 2
	i=0
	while [ $i -lt $r ]; do
		for m in $([ $((i % 2)) -eq 0 ] && echo "plain watch" || echo "watch plain"); do
			# the same sh -c around the command either way: only watch differs
			if [ $m = plain ]; then
				sh -c '"$@" > /tmp/wbench.out 2>&1' sh "$@"
				echo "plain $(tr '\n' ' ' < /tmp/wbench.out)" >> $O/bench-$n.txt
			else
				p2pcheck watch --json -- sh -c '"$@" > /tmp/wbench.out 2>&1' sh "$@" > $O/bench-$n-watch.json 2> $O/bench-$n-watch.err
				echo "watch rc=$? $(tr '\n' ' ' < /tmp/wbench.out)" >> $O/bench-$n.txt
			fi
		done
		i=$((i + 1))
	done
}
if [ -f /verify.sh ]; then
	. /verify.sh
	echo "verify_done_s=$(up)" >> $O/timing.txt
fi

finish
