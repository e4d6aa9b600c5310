// SPDX-License-Identifier: GPL-2.0
/*
 * p2pprobe-cli: minimal lab client for /dev/p2pprobe (kmod/uapi/p2pprobe.h).
 * Built statically and put into the QEMU lab's initramfs; prints key=value.
 *
 *   p2pprobe-cli info
 *   p2pprobe-cli verdict PROVIDER CLIENT [BDEV|-] [verbose] [nomap]
 *   p2pprobe-cli dma PROVIDER PATH OFFSET LENGTH SEED [bio] [nowrite] [noread] [chunk=N]
 *   p2pprobe-cli fill PATH OFFSET LENGTH SEED      (pattern via ordinary pwrite)
 *   p2pprobe-cli verify PATH OFFSET LENGTH SEED    (ordinary pread + check)
 *   p2pprobe-cli selftest                          (ioctl input validation)
 *
 * PROVIDER/CLIENT: PCI address [DDDD:]BB:DD.F. PATH: block device (opened
 * O_RDWR|O_DIRECT|O_EXCL) or regular file (O_RDWR|O_CREAT|O_DIRECT); for dma
 * also fd:N, a descriptor the shell opened.
 * Exit status: 0 ok, 1 test failed (I/O error or mismatch), 2 usage/ioctl error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uapi/p2pprobe.h"

static int dev_fd = -1;

static int open_dev(void)
{
	dev_fd = open(P2PPROBE_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (dev_fd < 0) {
		fprintf(stderr, "open %s: %s\n", P2PPROBE_DEVICE_PATH, strerror(errno));
		return -1;
	}
	return 0;
}

static int parse_bdf(const char *s, struct p2pprobe_bdf *bdf)
{
	unsigned int d = 0, b, dev, fn;

	memset(bdf, 0, sizeof(*bdf));
	if (sscanf(s, "%x:%x:%x.%x", &d, &b, &dev, &fn) != 4) {
		d = 0;
		if (sscanf(s, "%x:%x.%x", &b, &dev, &fn) != 3)
			return -1;
	}
	if (b > 255 || dev > 31 || fn > 7)
		return -1;
	bdf->domain = d;
	bdf->bus = (__u8)b;
	bdf->devfn = (__u8)(dev << 3 | fn);
	return 0;
}

static const char *bdf_str(const struct p2pprobe_bdf *bdf)
{
	static char buf[4][32];
	static int n;
	char *p = buf[n++ & 3];

	snprintf(p, 32, "%04x:%02x:%02x.%x", bdf->domain, bdf->bus, bdf->devfn >> 3,
		 bdf->devfn & 7);
	return p;
}

static const char *map_type_str(__u32 t)
{
	switch (t) {
	case P2PPROBE_MAP_NOT_SUPPORTED: return "NOT_SUPPORTED";
	case P2PPROBE_MAP_BUS_ADDR: return "BUS_ADDR";
	case P2PPROBE_MAP_THRU_HOST_BRIDGE: return "THRU_HOST_BRIDGE";
	default: return "UNKNOWN";
	}
}

static const char *map_reason_str(__u32 r)
{
	static const char *const names[] = {
		"probed", "not_requested", "no_p2pdma", "no_p2pmem",
		"not_allowed", "alloc_failed", "map_error",
	};
	return r < sizeof(names) / sizeof(names[0]) ? names[r] : "?";
}

static int cmd_info(void)
{
	struct p2pprobe_info info = { .size = sizeof(info), .version = P2PPROBE_API_VERSION };

	if (ioctl(dev_fd, P2PPROBE_IOC_GET_INFO, &info)) {
		fprintf(stderr, "GET_INFO: %s\n", strerror(errno));
		return 2;
	}
	printf("api_version=%u\nmodule_version=%s\nkernel_release=%s\np2pdma=%d\n"
	       "linux_version_code=0x%x\n", info.api_version, info.module_version,
	       info.kernel_release, !!(info.flags & P2PPROBE_INFO_P2PDMA),
	       info.linux_version_code);
	return 0;
}

static int cmd_verdict(int argc, char **argv)
{
	struct p2pprobe_verdict v = { .size = sizeof(v), .version = P2PPROBE_API_VERSION,
				      .client_bdev_fd = -1 };
	int i, bfd = -1;

	if (argc < 2 || parse_bdf(argv[0], &v.provider) || parse_bdf(argv[1], &v.client))
		return 2;
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "verbose"))
			v.flags |= P2PPROBE_VERDICT_F_VERBOSE;
		else if (!strcmp(argv[i], "nomap"))
			v.flags |= P2PPROBE_VERDICT_F_NO_MAP;
		else if (strcmp(argv[i], "-")) {
			bfd = open(argv[i], O_RDONLY | O_CLOEXEC);
			if (bfd < 0) {
				fprintf(stderr, "open %s: %s\n", argv[i], strerror(errno));
				return 2;
			}
			v.client_bdev_fd = bfd;
		}
	}
	if (ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v)) {
		fprintf(stderr, "VERDICT: %s\n", strerror(errno));
		return 2;
	}
	printf("provider=%s client=%s distance=%d map_type=%s map_reason=%s map_errno=%d "
	       "provider_flags=0x%x provider_driver=%s client_driver=%s",
	       bdf_str(&v.provider), bdf_str(&v.client), v.distance, map_type_str(v.map_type),
	       map_reason_str(v.map_reason), v.map_errno, v.provider_flags,
	       v.provider_driver[0] ? v.provider_driver : "-",
	       v.client_driver[0] ? v.client_driver : "-");
	if (bfd >= 0)
		printf(" bdev_flags=0x%x queue_p2pdma=%d bdev_pci=%s", v.bdev_flags,
		       !!(v.bdev_flags & P2PPROBE_BDEV_QUEUE_P2PDMA),
		       (v.bdev_flags & P2PPROBE_BDEV_HAS_PCI) ? bdf_str(&v.bdev_pci) : "-");
	printf("\n");
	return 0;
}

static int open_target(const char *path, int extra)
{
	struct stat st;
	int flags = O_RDWR | O_DIRECT | O_CLOEXEC | extra;
	int fd;

	if (!stat(path, &st) && S_ISBLK(st.st_mode))
		flags |= O_EXCL;
	else
		flags |= O_CREAT;
	fd = open(path, flags, 0600);
	if (fd < 0)
		fprintf(stderr, "open %s: %s\n", path, strerror(errno));
	return fd;
}

static int cmd_dma(int argc, char **argv)
{
	struct p2pprobe_dma_test t = { .size = sizeof(t), .version = P2PPROBE_API_VERSION };
	int i, fd, bad;

	if (argc < 5 || parse_bdf(argv[0], &t.provider))
		return 2;
	t.offset = strtoull(argv[2], NULL, 0);
	t.length = strtoull(argv[3], NULL, 0);
	t.seed = strtoull(argv[4], NULL, 0);
	for (i = 5; i < argc; i++) {
		if (!strcmp(argv[i], "bio"))
			t.flags |= P2PPROBE_DMA_F_BIO;
		else if (!strcmp(argv[i], "nowrite"))
			t.flags |= P2PPROBE_DMA_F_NO_WRITE;
		else if (!strcmp(argv[i], "noread"))
			t.flags |= P2PPROBE_DMA_F_NO_READ;
		else if (!strncmp(argv[i], "chunk=", 6))
			t.chunk_size = (__u32)strtoul(argv[i] + 6, NULL, 0);
		else
			return 2;
	}
	if (!strncmp(argv[1], "fd:", 3))	/* an already open descriptor */
		fd = dup(atoi(argv[1] + 3));
	else
		fd = open_target(argv[1], 0);
	if (fd < 0)
		return 2;
	t.fd = fd;
	if (ioctl(dev_fd, P2PPROBE_IOC_DMA_TEST, &t)) {
		printf("dma provider=%s path=%s ioctl_errno=%d (%s)\n", bdf_str(&t.provider),
		       argv[1], errno, strerror(errno));
		close(fd);
		return 2;
	}
	close(fd);
	bad = t.write.error || t.read.error || t.mismatch.count;
	printf("dma provider=%s path=%s target_flags=0x%x target_pci=%s target_distance=%d "
	       "chunk=%u write_ran=%u write_error=%d write_bytes=%llu write_ns=%llu "
	       "read_ran=%u read_error=%d read_bytes=%llu read_ns=%llu mismatch_count=%llu",
	       bdf_str(&t.provider), argv[1], t.target_flags,
	       (t.target_flags & P2PPROBE_TARGET_HAS_PCI) ? bdf_str(&t.target_pci) : "-",
	       t.target_distance, t.chunk_used, t.write.ran, t.write.error,
	       (unsigned long long)t.write.bytes, (unsigned long long)t.write.ns,
	       t.read.ran, t.read.error, (unsigned long long)t.read.bytes,
	       (unsigned long long)t.read.ns, (unsigned long long)t.mismatch.count);
	if (t.mismatch.count)
		printf(" mismatch_offset=%llu expected=0x%02x found=0x%02x",
		       (unsigned long long)t.mismatch.offset, t.mismatch.expected,
		       t.mismatch.found);
	printf(" result=%s\n", bad ? "FAIL" : "PASS");
	return bad ? 1 : 0;
}

static int cmd_fill_verify(int argc, char **argv, int verify)
{
	unsigned long long off, len;
	struct p2pprobe_mismatch mm;
	void *buf;
	ssize_t n;
	int fd;

	if (argc < 4)
		return 2;
	off = strtoull(argv[1], NULL, 0);
	len = strtoull(argv[2], NULL, 0);
	if (posix_memalign(&buf, 4096, len))
		return 2;
	fd = open_target(argv[0], 0);
	if (fd < 0)
		return 2;
	if (verify) {
		n = pread(fd, buf, len, (off_t)off);
		if (n != (ssize_t)len) {
			printf("verify short read %zd: %s\n", n, strerror(errno));
			return 1;
		}
		p2pprobe_pattern_check(buf, len, off, strtoull(argv[3], NULL, 0), &mm);
		printf("verify path=%s mismatch_count=%llu", argv[0], (unsigned long long)mm.count);
		if (mm.count)
			printf(" mismatch_offset=%llu expected=0x%02x found=0x%02x",
			       (unsigned long long)mm.offset, mm.expected, mm.found);
		printf(" result=%s\n", mm.count ? "FAIL" : "PASS");
		return mm.count ? 1 : 0;
	}
	p2pprobe_pattern_fill(buf, len, off, strtoull(argv[3], NULL, 0));
	n = pwrite(fd, buf, len, (off_t)off);
	printf("fill path=%s written=%zd result=%s\n", argv[0], n,
	       n == (ssize_t)len ? "PASS" : "FAIL");
	return n == (ssize_t)len ? 0 : 1;
}

static int expect(const char *what, int ret, int want_errno)
{
	int got = ret ? errno : 0;

	printf("selftest %s: errno=%d want=%d %s\n", what, got, want_errno,
	       got == want_errno ? "PASS" : "FAIL");
	return got == want_errno ? 0 : 1;
}

static int cmd_selftest(void)
{
	struct p2pprobe_info info = { .size = sizeof(info), .version = P2PPROBE_API_VERSION };
	struct p2pprobe_verdict v = { .size = sizeof(v), .version = P2PPROBE_API_VERSION,
				      .client_bdev_fd = -1 };
	struct p2pprobe_dma_test t = { .size = sizeof(t), .version = P2PPROBE_API_VERSION };
	int fails = 0;

	fails += expect("get_info ok", ioctl(dev_fd, P2PPROBE_IOC_GET_INFO, &info), 0);
	info.size = 8;
	fails += expect("get_info bad size", ioctl(dev_fd, P2PPROBE_IOC_GET_INFO, &info), EINVAL);
	info.size = sizeof(info);
	info.reserved[1] = 1;
	fails += expect("get_info reserved", ioctl(dev_fd, P2PPROBE_IOC_GET_INFO, &info), EINVAL);
	fails += expect("unknown ioctl", ioctl(dev_fd, _IO(P2PPROBE_IOC_MAGIC, 0x7f), 0), ENOTTY);
	/* A struct of another size gives another ioctl number: -ENOTTY. */
	fails += expect("wrong-size ioctl",
			ioctl(dev_fd, _IOWR(P2PPROBE_IOC_MAGIC, 0x03, struct p2pprobe_bdf), &info),
			ENOTTY);
	v.version = 99;
	fails += expect("verdict bad version", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), EINVAL);
	v.version = P2PPROBE_API_VERSION;
	v.flags = 0x80;
	fails += expect("verdict unknown flag", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), EINVAL);
	v.flags = 0;
	v.provider.bus = 0xff;
	v.provider.devfn = 0xff;
	fails += expect("verdict no device", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), ENODEV);
	t.fd = 0;
	t.length = 4096;
	t.offset = 100;
	fails += expect("dma unaligned", ioctl(dev_fd, P2PPROBE_IOC_DMA_TEST, &t), EINVAL);
	t.offset = 0;
	t.length = (64u << 20) + 4096;
	fails += expect("dma too long", ioctl(dev_fd, P2PPROBE_IOC_DMA_TEST, &t), EINVAL);
	t.length = 4096;
	t.flags = P2PPROBE_DMA_F_NO_READ | P2PPROBE_DMA_F_NO_WRITE;
	fails += expect("dma nothing to do", ioctl(dev_fd, P2PPROBE_IOC_DMA_TEST, &t), EINVAL);
	printf("selftest result=%s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: see the comment at the top of p2pprobe-cli.c\n");
		return 2;
	}
	if (!strcmp(argv[1], "fill"))
		return cmd_fill_verify(argc - 2, argv + 2, 0);
	if (!strcmp(argv[1], "verify"))
		return cmd_fill_verify(argc - 2, argv + 2, 1);
	if (open_dev())
		return 2;
	if (!strcmp(argv[1], "info"))
		return cmd_info();
	if (!strcmp(argv[1], "verdict"))
		return cmd_verdict(argc - 2, argv + 2);
	if (!strcmp(argv[1], "dma"))
		return cmd_dma(argc - 2, argv + 2);
	if (!strcmp(argv[1], "selftest"))
		return cmd_selftest();
	fprintf(stderr, "unknown command %s\n", argv[1]);
	return 2;
}
