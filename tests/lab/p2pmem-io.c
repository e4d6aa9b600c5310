// SPDX-License-Identifier: GPL-2.0
/*
 * p2pmem-io: userspace P2PDMA test for the QEMU lab (kernel 6.2+).
 *
 *   p2pmem-io PROVIDER DEV OFFSET LENGTH SEED
 *
 * Maps 2 * LENGTH bytes of the provider's p2pmem through
 * /sys/bus/pci/devices/PROVIDER/p2pmem/allocate (MAP_SHARED, offset 0),
 * fills the first half with the p2pprobe pattern (kmod/uapi/p2pprobe.h) for
 * SEED and the absolute offset OFFSET, pwrite()s it to DEV (opened
 * O_RDWR|O_DIRECT, O_EXCL for a block device), poisons the second half with
 * the pattern of ~SEED, pread()s the range back into it and compares. When
 * the write fails the read is still attempted, so that a refused pair shows
 * the refusal in both directions (pread into p2pmem = the storage device
 * writes the provider's BAR; pwrite from p2pmem = it reads the BAR).
 *
 * Prints one line of key=value; exit 0 when both directions moved all bytes
 * and the data matched, 1 when a direction failed or the data differed, 2 on
 * a usage or setup error (alloc_errno / open_errno say which).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uapi/p2pprobe.h"

int main(int argc, char **argv)
{
	char path[256];
	unsigned long long off, len, seed;
	struct p2pprobe_mismatch mm = { .offset = P2PPROBE_NO_MISMATCH };
	int afd, fd, werr = 0, rerr = 0, flags;
	ssize_t wn, rn;
	struct stat st;
	unsigned char *map;

	if (argc != 6) {
		fprintf(stderr, "usage: p2pmem-io PROVIDER DEV OFFSET LENGTH SEED\n");
		return 2;
	}
	off = strtoull(argv[3], NULL, 0);
	len = strtoull(argv[4], NULL, 0);
	seed = strtoull(argv[5], NULL, 0);
	if (!len || len % 4096 || off % 4096) {
		fprintf(stderr, "p2pmem-io: OFFSET and LENGTH must be multiples of 4096\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/p2pmem/allocate", argv[1]);
	afd = open(path, O_RDWR | O_CLOEXEC);
	if (afd < 0) {
		printf("p2pmem provider=%s dev=%s alloc_errno=%d (%s: %s) result=SETUP\n",
		       argv[1], argv[2], errno, path, strerror(errno));
		return 2;
	}
	map = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0);
	if (map == MAP_FAILED) {
		printf("p2pmem provider=%s dev=%s alloc_errno=%d (mmap: %s) result=SETUP\n",
		       argv[1], argv[2], errno, strerror(errno));
		return 2;
	}
	flags = O_RDWR | O_DIRECT | O_CLOEXEC;
	if (!stat(argv[2], &st) && S_ISBLK(st.st_mode))
		flags |= O_EXCL;
	fd = open(argv[2], flags);
	if (fd < 0) {
		printf("p2pmem provider=%s dev=%s open_errno=%d (%s) result=SETUP\n",
		       argv[1], argv[2], errno, strerror(errno));
		return 2;
	}

	p2pprobe_pattern_fill(map, len, off, seed);
	wn = pwrite(fd, map, len, (off_t)off);
	if (wn < 0)
		werr = errno;
	p2pprobe_pattern_fill(map + len, len, off, ~seed);
	rn = pread(fd, map + len, len, (off_t)off);
	if (rn < 0)
		rerr = errno;
	if (rn == (ssize_t)len)
		p2pprobe_pattern_check(map + len, len, off, seed, &mm);

	printf("p2pmem provider=%s dev=%s offset=%llu length=%llu seed=0x%llx "
	       "write_errno=%d write_bytes=%zd read_errno=%d read_bytes=%zd mismatch_count=%llu",
	       argv[1], argv[2], off, len, seed, werr, wn, rerr, rn,
	       (unsigned long long)mm.count);
	if (mm.count)
		printf(" mismatch_offset=%llu expected=0x%02x found=0x%02x",
		       (unsigned long long)mm.offset, mm.expected, mm.found);
	if (wn == (ssize_t)len && rn == (ssize_t)len && !mm.count) {
		printf(" result=PASS\n");
		return 0;
	}
	printf(" result=FAIL\n");
	return 1;
}
