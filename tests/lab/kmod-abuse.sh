# SPDX-License-Identifier: GPL-2.0
#
# The kmod-abuse scenario's guest part, sourced by guest-init.sh (functions
# bdf_of, dev_of, up, fail_next_io, log and $O come from there). It only
# collects; lab.py (check_abuse) makes every assertion. Files in $O:
#   abuse-ioctls.txt   kmod-abuse: malformed ioctls, one "case" line each
#   abuse-conc.txt     concurrent callers: one p2pprobe-cli dma line each, plus
#                      "verdicts n=N fails=F" from a verdict loop beside them
#   abuse-kill.txt     one "kill" line per killed caller (see killcase)
#   abuse-unload.txt   rmmod/insmod at the end
#   kmemleak.txt       kmemleak's report after the last scan (must be empty)
# /plan adds ABUSE_CONC: provider:client-or-file:offset:length:seed[:bio] runs started
# together, and ABUSE_KILL: name:provider:client-or-file:args, killed callers.
KML=/sys/kernel/debug/kmemleak
mount -t debugfs none /sys/kernel/debug 2>/dev/null
mount -t tmpfs tmpfs /tmp 2>/dev/null
# Leak reports from before the module did anything are not ours: forget them.
if [ -w $KML ]; then echo scan > $KML; echo clear > $KML; echo "kmemleak=on" > $O/abuse-kmemleak-state.txt
else echo "kmemleak=off" > $O/abuse-kmemleak-state.txt; fi

mkdir -p /mnt/f1 && mount -t ext4 "$(dev_of f1)" /mnt/f1 || log "mount f1 failed"
dd if=/dev/zero of=/tmp/loop.img bs=1M count=4 2>/dev/null
losetup /dev/loop0 /tmp/loop.img || log "losetup failed"

# 1. Malformed ioctls.
kmod-abuse ioctls "$(bdf_of cmb0)" "$(bdf_of n1)" 0000:00:10.0 "$(dev_of n1)" /dev/loop0 /mnt/f1 \
	> $O/abuse-ioctls.txt 2>&1
echo "exit=$?" >> $O/abuse-ioctls.txt
losetup -d /dev/loop0

# 2. Concurrent callers, on two providers, both paths, each on its own target
# (a block device is opened O_EXCL: one caller at a time), beside a loop of
# verdicts and GET_INFO (p2pprobe-cli verdict, info).
: > $O/abuse-conc.txt
pids=""
i=0
for t in $ABUSE_CONC; do
	IFS=: read -r p c off len seed mode <<EOF
$t
EOF
	i=$((i + 1))
	case "$c" in /*) target=$c ;; *) target=$(dev_of "$c") ;; esac
	( echo "conc $p $c $off $len $seed ${mode:-vfs} $(p2pprobe-cli dma "$(bdf_of "$p")" "$target" \
		"$off" "$len" "$seed" ${mode:+$mode} chunk=262144 2>&1)" > /tmp/conc.$i ) &
	pids="$pids $!"
done
n=0; bad=0
while [ $n -lt 40 ]; do
	p2pprobe-cli verdict "$(bdf_of cmb0)" "$(bdf_of n1)" > /dev/null 2>&1 || bad=$((bad + 1))
	p2pprobe-cli info > /dev/null 2>&1 || bad=$((bad + 1))
	n=$((n + 1))
done
for p in $pids; do wait "$p"; done
cat /tmp/conc.* >> $O/abuse-conc.txt 2>/dev/null
echo "verdicts n=$n fails=$bad" >> $O/abuse-conc.txt

# 3. Killed callers. The target's next request is dropped (fail_next_io), so
# the caller waits for an I/O that nvme only completes after io_timeout, an
# abort and a controller reset. Then: rmmod while it waits, SIGKILL, how long
# until it is gone, rmmod while the module still owns the orphaned buffers,
# and how long until the module released them.
released() { dmesg | grep -c 'released the buffers of a DMA test interrupted'; }
: > $O/abuse-kill.txt
for k in $ABUSE_KILL; do
	IFS=: read -r name p c args <<EOF
$k
EOF
	args=$(echo "$args" | tr , ' ')
	case "$c" in
	/*) target=$c; disk=f1; p2pprobe-cli fill "$c" 0 1048576 1 > /dev/null ;;
	*) target=$(dev_of "$c"); disk=$c ;;
	esac
	sync
	before=$(released)
	fail_next_io "$disk"
	# shellcheck disable=SC2086
	p2pprobe-cli dma "$(bdf_of "$p")" "$target" $args > /tmp/kill.out 2>&1 &
	pid=$!
	sleep 2
	state=$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)
	rmmod p2pprobe 2> /dev/null; rmmod_busy=$?
	t0=$(up)
	kill -9 "$pid"
	wait "$pid"; rc=$?
	t1=$(up)
	refcnt=$(cat /sys/module/p2pprobe/refcnt)
	rmmod p2pprobe 2> /dev/null; rmmod_orphan=$?
	i=0
	while [ "$(released)" -le "$before" ] && [ $i -lt 240 ]; do usleep 250000; i=$((i + 1)); done
	t2=$(up)
	echo 0 > "/sys/block/$(basename "$(dev_of "$disk")")/io-timeout-fail"
	echo "kill name=$name state=$state rmmod_busy=$rmmod_busy exit=$rc kill_s=$(echo "$t1 - $t0" | bc)" \
		"refcnt_after_kill=$refcnt rmmod_orphan=$rmmod_orphan released=$(($(released) - before))" \
		"released_s=$(echo "$t2 - $t0" | bc) refcnt_after_release=$(cat /sys/module/p2pprobe/refcnt)" \
		"out=$(tr '\n' ' ' < /tmp/kill.out)" >> $O/abuse-kill.txt
done
rm -f /mnt/f1/kill-* /mnt/f1/conc-*

# 4. Unload and reload once nothing is left.
{
	rmmod p2pprobe; echo "rmmod=$?"
	[ -e /dev/p2pprobe ] && echo "devnode_after_rmmod=1" || echo "devnode_after_rmmod=0"
	insmod /lib/p2pprobe.ko; echo "insmod=$?"
	p2pprobe-cli info > /dev/null; echo "info=$?"
	rmmod p2pprobe; echo "rmmod2=$?"
} > $O/abuse-unload.txt 2>&1

# 5. kmemleak: objects younger than 5 s are never reported; scan twice.
if [ -w $KML ]; then
	sleep 5
	echo scan > $KML
	echo scan > $KML
	cat $KML > $O/kmemleak.txt
fi
umount /mnt/f1
