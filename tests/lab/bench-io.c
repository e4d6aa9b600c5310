// SPDX-License-Identifier: GPL-2.0
/*
 * bench-io DEVICE BLOCK TOTAL [SPAN]: read TOTAL bytes of DEVICE in BLOCK-byte
 * O_DIRECT reads from its start, over its first SPAN bytes again and again
 * (default: TOTAL), timed with CLOCK_MONOTONIC, and print
 *   bytes=N requests=N ns=N
 * Read-only: it opens DEVICE O_RDONLY and never writes. The lab's busybox has
 * no clock finer than /proc/uptime's 10 ms and its dd does not time itself, so
 * bench/watch_overhead.py times reads with this (in the guest and on the host).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long long parse_size(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || !v) {
		fprintf(stderr, "bench-io: %s: expected a positive byte count, found '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long long block, total, span, done = 0, requests = 0, start, ns;
	void *buf;
	int fd;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: bench-io DEVICE BLOCK TOTAL [SPAN]\n");
		return 2;
	}
	block = parse_size(argv[2], "BLOCK");
	total = parse_size(argv[3], "TOTAL");
	span = argc == 5 ? parse_size(argv[4], "SPAN") : total;
	if (block % 4096 || total % block || span % block) {
		fprintf(stderr, "bench-io: BLOCK must be a multiple of 4096 and divide TOTAL and SPAN\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "bench-io: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (posix_memalign(&buf, 4096, block)) {
		fprintf(stderr, "bench-io: no memory for a %llu-byte buffer\n", block);
		return 1;
	}
	start = now_ns();
	while (done < total) {
		ssize_t n = pread(fd, buf, block, (off_t)(done % span));

		if (n != (ssize_t)block) {
			fprintf(stderr, "bench-io: %s: read at %llu: %s\n", argv[1], done % span,
				n < 0 ? strerror(errno) : "short read");
			return 1;
		}
		done += block;
		requests++;
	}
	ns = now_ns() - start;
	printf("bytes=%llu requests=%llu ns=%llu\n", done, requests, ns);
	free(buf);
	close(fd);
	return 0;
}
