// SPDX-License-Identifier: GPL-2.0
/*
 * kmod-abuse: malformed and hostile ioctls against /dev/p2pprobe, for the QEMU
 * lab's kmod-abuse scenario (tests/lab/kmod-abuse.sh runs it in the guest).
 * Built statically like p2pprobe-cli.
 *
 *   kmod-abuse ioctls PROVIDER NOP2PMEM BRIDGE RAWDEV LOOPDEV EXT4DIR
 *
 * PROVIDER: a PCI function whose p2pmem the module may use (an NVMe CMB);
 * NOP2PMEM: an NVMe without p2pmem; BRIDGE: a PCI bridge (not NVMe);
 * RAWDEV: an unused NVMe namespace (its first MiB is written);
 * LOOPDEV: a loop device on a tmpfs file (a block device on no PCI device);
 * EXT4DIR: a directory on an ext4 file system (O_DIRECT).
 *
 * One line per case: "case NAME ret=R errno=E want=W PASS|FAIL" (want is an
 * errno, 0 for success; for tests that ran, the direction's error too), then
 * "abuse cases=N fails=F". Exit status 0 when every case gave what it must.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uapi/p2pprobe.h"

static int dev_fd = -1;
static int cases, fails;

static int parse_bdf(const char *s, struct p2pprobe_bdf *bdf)
{
	unsigned int d, b, dev, fn;

	memset(bdf, 0, sizeof(*bdf));
	if (sscanf(s, "%x:%x:%x.%x", &d, &b, &dev, &fn) != 4 || b > 255 || dev > 31 || fn > 7)
		return -1;
	bdf->domain = d;
	bdf->bus = (__u8)b;
	bdf->devfn = (__u8)(dev << 3 | fn);
	return 0;
}

/* One case: the ioctl's return and errno against the errno it must give. */
static void expect(const char *name, int ret, int want)
{
	int got = ret ? errno : 0;
	int ok = got == want && (ret == 0 || ret == -1);

	cases++;
	fails += !ok;
	printf("case %s ret=%d errno=%d want=%d %s\n", name, ret, got, want, ok ? "PASS" : "FAIL");
}

/* A DMA test that must run (ioctl 0) and report `want_write`/`want_read` per direction. */
static void expect_ran(const char *name, int ret, const struct p2pprobe_dma_test *t,
		       int want_write, int want_read)
{
	int got = ret ? errno : 0;
	int ok = ret == 0 && t->write.error == want_write && t->read.error == want_read &&
		 (want_write || want_read || !t->mismatch.count);

	cases++;
	fails += !ok;
	printf("case %s ret=%d errno=%d want=0 write_error=%d want_write=%d read_error=%d want_read=%d "
	       "mismatch=%llu target_flags=0x%x %s\n", name, ret, got, t->write.error, want_write,
	       t->read.error, want_read, (unsigned long long)t->mismatch.count, t->target_flags,
	       ok ? "PASS" : "FAIL");
}

/*
 * A malformed request: a good request with one field set to `value` (stored at the field's width,
 * so -2 in an __s32 is -2), and the errno it must give. FIELD(type, f) names the field.
 */
struct field_case {
	const char *name;
	size_t off, size;
	uint64_t value;
	int want;
};
#define FIELD(type, f) offsetof(type, f), sizeof(((type *)0)->f)
#define INFO(f) FIELD(struct p2pprobe_info, f)
#define VERDICT(f) FIELD(struct p2pprobe_verdict, f)
#define DMA(f) FIELD(struct p2pprobe_dma_test, f)
#define N(a) (sizeof(a) / sizeof((a)[0]))

static void set_field(void *req, const struct field_case *c)
{
	uint8_t v8 = c->value;
	uint16_t v16 = c->value;
	uint32_t v32 = c->value;
	char *p = (char *)req + c->off;

	switch (c->size) {
	case 1: memcpy(p, &v8, 1); break;
	case 2: memcpy(p, &v16, 2); break;
	case 4: memcpy(p, &v32, 4); break;
	case 8: memcpy(p, &c->value, 8); break;
	default: abort();
	}
}

/* Each case on a fresh copy of `good` (`len` bytes), the request of ioctl `cmd`. */
static void field_cases(unsigned long cmd, const void *good, size_t len, const struct field_case *c, size_t n)
{
	union {
		struct p2pprobe_info i;
		struct p2pprobe_verdict v;
		struct p2pprobe_dma_test t;
	} req;

	for (size_t k = 0; k < n; k++) {
		memset(&req, 0, sizeof(req));
		memcpy(&req, good, len);
		set_field(&req, &c[k]);
		expect(c[k].name, ioctl(dev_fd, cmd, &req), c[k].want);
	}
}

static struct p2pprobe_info info0(void)
{
	struct p2pprobe_info i = { .size = sizeof(i), .version = P2PPROBE_API_VERSION };
	return i;
}

static const struct field_case info_fields[] = {
	{ "info-version-0", INFO(version), 0, EINVAL },
	{ "info-version-future", INFO(version), 0xffffffffu, 0 },	/* any non-zero version learns ours */
	{ "info-size-0", INFO(size), 0, EINVAL },
	{ "info-size-big", INFO(size), sizeof(struct p2pprobe_info) + 8, EINVAL },
	{ "info-size-max", INFO(size), 0xffffffffu, EINVAL },
	{ "info-reserved0", INFO(reserved0), 1, EINVAL },
	{ "info-reserved", INFO(reserved[3]), 1ull << 63, EINVAL },
};

static void get_info_cases(char *edge)
{
	struct p2pprobe_info i;

	i = info0();
	expect("info-ok", ioctl(dev_fd, P2PPROBE_IOC_GET_INFO, &i), 0);
	i = info0();
	field_cases(P2PPROBE_IOC_GET_INFO, &i, sizeof(i), info_fields, N(info_fields));
	expect("info-null", ioctl(dev_fd, P2PPROBE_IOC_GET_INFO, NULL), EFAULT);
	expect("info-kernel-pointer", ioctl(dev_fd, P2PPROBE_IOC_GET_INFO, (void *)0xffffffff81000000ul),
	       EFAULT);
	/* The struct's last bytes on an inaccessible page. */
	i = info0();
	memcpy(edge - 64, &i, 64);
	expect("info-straddles-page", ioctl(dev_fd, P2PPROBE_IOC_GET_INFO, edge - 64), EFAULT);

	/* Other ioctl numbers: another size or direction is another command. */
	expect("ioctl-unknown-nr", ioctl(dev_fd, _IO(P2PPROBE_IOC_MAGIC, 0x7f), 0), ENOTTY);
	expect("ioctl-nr-0", ioctl(dev_fd, _IOWR(P2PPROBE_IOC_MAGIC, 0x00, struct p2pprobe_info), &i),
	       ENOTTY);
	expect("ioctl-nr-4", ioctl(dev_fd, _IOWR(P2PPROBE_IOC_MAGIC, 0x04, struct p2pprobe_dma_test), &i),
	       ENOTTY);
	expect("ioctl-other-magic", ioctl(dev_fd, _IOWR(0xB8, 0x01, struct p2pprobe_info), &i), ENOTTY);
	expect("ioctl-info-small", ioctl(dev_fd, _IOWR(P2PPROBE_IOC_MAGIC, 0x01, struct p2pprobe_bdf), &i),
	       ENOTTY);
	expect("ioctl-info-read-only", ioctl(dev_fd, _IOR(P2PPROBE_IOC_MAGIC, 0x01, struct p2pprobe_info), &i),
	       ENOTTY);
	expect("ioctl-verdict-write-only",
	       ioctl(dev_fd, _IOW(P2PPROBE_IOC_MAGIC, 0x02, struct p2pprobe_verdict), &i), ENOTTY);
	expect("ioctl-dma-as-verdict-size",
	       ioctl(dev_fd, _IOWR(P2PPROBE_IOC_MAGIC, 0x03, struct p2pprobe_verdict), &i), ENOTTY);
	/* Generic file ioctls the misc device does not implement. */
	expect("ioctl-fionread", ioctl(dev_fd, FIONREAD, &i), ENOTTY);
}

static struct p2pprobe_bdf provider, nop2pmem, bridge;

static struct p2pprobe_verdict verdict0(void)
{
	struct p2pprobe_verdict v = { .size = sizeof(v), .version = P2PPROBE_API_VERSION,
				      .provider = provider, .client = nop2pmem, .client_bdev_fd = -1 };
	return v;
}

static const struct field_case verdict_fields[] = {
	{ "verdict-version-0", VERDICT(version), 0, EINVAL },
	{ "verdict-version-next", VERDICT(version), P2PPROBE_API_VERSION + 1, EINVAL },
	{ "verdict-size-small", VERDICT(size), sizeof(struct p2pprobe_verdict) - 8, EINVAL },
	{ "verdict-size-huge", VERDICT(size), 0x80000000u, EINVAL },
	{ "verdict-unknown-flag", VERDICT(flags), 1u << 31, EINVAL },
	{ "verdict-reserved", VERDICT(reserved[2]), 1, EINVAL },
	{ "verdict-bdf-reserved", VERDICT(provider.reserved[1]), 0xff, EINVAL },
	{ "verdict-domain-negative", VERDICT(client.domain), 0x80000000u, EINVAL },
	{ "verdict-no-domain", VERDICT(provider.domain), 0x7fffffffu, ENODEV },
	{ "verdict-no-client", VERDICT(client.bus), 0xfe, ENODEV },
	{ "verdict-fd-minus-2", VERDICT(client_bdev_fd), -2, EINVAL },
	{ "verdict-fd-int-min", VERDICT(client_bdev_fd), INT_MIN, EINVAL },
	{ "verdict-fd-closed", VERDICT(client_bdev_fd), 999, EBADF },
};

static void verdict_cases(int devnull)
{
	struct p2pprobe_verdict v;
	int pipefd[2];

	v = verdict0();
	expect("verdict-ok", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), 0);
	v = verdict0();
	field_cases(P2PPROBE_IOC_VERDICT, &v, sizeof(v), verdict_fields, N(verdict_fields));
	v = verdict0();
	v.provider.bus = 0xff;
	v.provider.devfn = 0xff;
	expect("verdict-no-provider", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), ENODEV);
	v = verdict0();
	v.client_bdev_fd = devnull;	/* not a block device: no bdev facts, no error */
	expect("verdict-fd-chardev", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v) || v.bdev_flags ? -1 : 0, 0);
	if (pipe(pipefd) == 0) {
		v = verdict0();
		v.client_bdev_fd = pipefd[0];
		expect("verdict-fd-pipe", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v) || v.bdev_flags ? -1 : 0, 0);
		close(pipefd[0]);
		close(pipefd[1]);
	}
	v = verdict0();
	v.client_bdev_fd = dev_fd;	/* /dev/p2pprobe itself */
	expect("verdict-fd-self", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v) || v.bdev_flags ? -1 : 0, 0);
	/* Non-NVMe functions: a bridge as provider (no p2pmem) and as client. */
	v = verdict0();
	v.provider = bridge;
	errno = 0;
	expect("verdict-bridge-provider",
	       ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v) ||
	       v.map_reason != P2PPROBE_MAP_REASON_NO_P2PMEM ? -1 : 0, 0);
	v = verdict0();
	v.client = bridge;
	expect("verdict-bridge-client", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), 0);
	v = verdict0();
	v.client = provider;	/* a provider to itself */
	expect("verdict-self-pair", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v) || v.distance != 0 ? -1 : 0, 0);
	expect("verdict-null", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, NULL), EFAULT);
}

static struct p2pprobe_dma_test dma0(int fd)
{
	struct p2pprobe_dma_test t = { .size = sizeof(t), .version = P2PPROBE_API_VERSION,
				       .provider = provider, .fd = fd, .offset = 0, .length = 65536,
				       .seed = 0x5eed };
	return t;
}

static int dma(struct p2pprobe_dma_test *t)
{
	return ioctl(dev_fd, P2PPROBE_IOC_DMA_TEST, t);
}

/* Sizes, versions, flags, lengths, offsets, chunks and provider addresses, each on dma0(raw). */
static const struct field_case dma_fields[] = {
	{ "dma-size-small", DMA(size), sizeof(struct p2pprobe_dma_test) - 1, EINVAL },
	{ "dma-size-0", DMA(size), 0, EINVAL },
	{ "dma-version-0", DMA(version), 0, EINVAL },
	{ "dma-version-max", DMA(version), 0xffffffffu, EINVAL },
	{ "dma-unknown-flag", DMA(flags), 1u << 3, EINVAL },
	{ "dma-nothing-to-do", DMA(flags), P2PPROBE_DMA_F_NO_WRITE | P2PPROBE_DMA_F_NO_READ, EINVAL },
	{ "dma-reserved", DMA(reserved[0]), 1, EINVAL },
	{ "dma-length-0", DMA(length), 0, EINVAL },
	{ "dma-length-over-max", DMA(length), P2PPROBE_DMA_MAX_LENGTH + 4096ull, EINVAL },
	{ "dma-length-2^63", DMA(length), 1ull << 63, EINVAL },
	{ "dma-length-huge", DMA(length), ~0ull & ~4095ull, EINVAL },
	{ "dma-length-unaligned", DMA(length), 4095, EINVAL },
	{ "dma-offset-unaligned", DMA(offset), 512, EINVAL },
	/* offset + length > LLONG_MAX */
	{ "dma-offset-llong-max", DMA(offset), (uint64_t)LLONG_MAX & ~4095ull, EINVAL },
	{ "dma-offset-negative", DMA(offset), 1ull << 63, EINVAL },
	{ "dma-offset-max", DMA(offset), ~0ull & ~4095ull, EINVAL },
	/* valid, far past the device */
	{ "dma-bdev-offset-near-llong-max", DMA(offset), ((uint64_t)LLONG_MAX & ~4095ull) - 65536, EINVAL },
	{ "dma-chunk-unaligned", DMA(chunk_size), 4097, EINVAL },
	{ "dma-chunk-over-max", DMA(chunk_size), P2PPROBE_DMA_MAX_CHUNK + 4096, EINVAL },
	{ "dma-chunk-huge", DMA(chunk_size), 0xfffff000u, EINVAL },
	{ "dma-provider-domain-negative", DMA(provider.domain), 0x80000000u, EINVAL },
	{ "dma-provider-bdf-reserved", DMA(provider.reserved[0]), 1, EINVAL },
};

static void dma_cases(const char *rawdev, const char *loopdev, const char *dir, int devnull)
{
	struct p2pprobe_dma_test t;
	char path[512];
	int raw, loop, rawshared, f, fro, fwo, fbuf, pipefd[2], sock, dirfd;

	raw = open(rawdev, O_RDWR | O_DIRECT | O_EXCL | O_CLOEXEC);
	rawshared = open(rawdev, O_RDWR | O_DIRECT | O_CLOEXEC);
	loop = open(loopdev, O_RDWR | O_DIRECT | O_EXCL | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/abuse-file", dir);
	f = open(path, O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0600);
	if (f >= 0 && posix_fallocate(f, 0, 1 << 20))
		printf("note fallocate %s failed\n", path);
	fro = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	fwo = open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
	fbuf = open(path, O_RDWR | O_CLOEXEC);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	if (pipe(pipefd))
		pipefd[0] = pipefd[1] = -1;
	if (raw < 0 || rawshared < 0 || loop < 0 || f < 0 || fro < 0 || fwo < 0 || fbuf < 0 || dirfd < 0) {
		printf("setup failed: raw=%d rawshared=%d loop=%d file=%d ro=%d wo=%d buffered=%d dir=%d: %s\n",
		       raw, rawshared, loop, f, fro, fwo, fbuf, dirfd, strerror(errno));
		fails++;
		return;
	}

	t = dma0(raw);
	expect_ran("dma-ok-vfs", dma(&t), &t, 0, 0);
	t = dma0(raw);
	t.flags = P2PPROBE_DMA_F_BIO;
	expect_ran("dma-ok-bio", dma(&t), &t, 0, 0);

	t = dma0(raw);
	field_cases(P2PPROBE_IOC_DMA_TEST, &t, sizeof(t), dma_fields, N(dma_fields));
	t = dma0(raw);
	t.mismatch.reserved[0] = 1;	/* an output field: ignored on input */
	expect_ran("dma-output-fields-ignored", dma(&t), &t, 0, 0);
	expect("dma-null", ioctl(dev_fd, P2PPROBE_IOC_DMA_TEST, NULL), EFAULT);

	/* Ranges no single field shows to be wrong, and the chunk size at its smallest. */
	t = dma0(raw);
	t.offset = 15ull << 20;	/* the namespace is 16 MiB: the range crosses its end */
	t.length = 2ull << 20;
	expect("dma-bdev-crosses-end", dma(&t), EINVAL);
	t = dma0(f);
	t.offset = ((uint64_t)LLONG_MAX & ~4095ull) - 65536;	/* a file: ext4 refuses the size */
	expect_ran("dma-file-offset-near-llong-max", dma(&t), &t, -EFBIG, 0);
	t = dma0(f);
	t.offset = ((uint64_t)LLONG_MAX & ~4095ull) - 65536;
	t.flags = P2PPROBE_DMA_F_NO_WRITE;	/* reading past EOF: no data */
	expect_ran("dma-file-read-past-eof", dma(&t), &t, 0, -ENODATA);
	t = dma0(raw);
	t.length = 1 << 20;
	t.chunk_size = 4096;	/* 256 chunks of one page */
	expect_ran("dma-chunk-one-page", dma(&t), &t, 0, 0);

	/* Providers: no function there, and PCI functions that are not allowed p2pmem providers. */
	t = dma0(raw);
	t.provider.bus = 0xff;
	t.provider.devfn = 0xff;
	expect("dma-no-provider", dma(&t), ENODEV);
	t = dma0(raw);
	t.provider = nop2pmem;
	expect("dma-provider-nvme-no-cmb", dma(&t), ENODEV);
	t = dma0(raw);
	t.provider = bridge;
	expect("dma-provider-bridge", dma(&t), ENODEV);

	/* Targets that are not an NVMe namespace or a file on one. */
	const struct field_case targets[] = {
		{ "dma-fd-minus-1", DMA(fd), -1, EINVAL },
		{ "dma-fd-closed", DMA(fd), 999, EBADF },
		{ "dma-target-chardev", DMA(fd), devnull, EINVAL },
		{ "dma-target-self", DMA(fd), dev_fd, EINVAL },
		{ "dma-target-pipe", DMA(fd), pipefd[1], EINVAL },
		{ "dma-target-socket", DMA(fd), sock, EINVAL },
		{ "dma-target-directory", DMA(fd), dirfd, EINVAL },
		{ "dma-bdev-not-excl", DMA(fd), rawshared, EINVAL },
		{ "dma-file-not-odirect", DMA(fd), fbuf, EINVAL },
		{ "dma-file-read-only", DMA(fd), fro, EBADF },
		{ "dma-file-write-only", DMA(fd), fwo, EBADF },
	};
	t = dma0(raw);
	field_cases(P2PPROBE_IOC_DMA_TEST, &t, sizeof(t), targets, N(targets));
	t = dma0(f);
	t.flags = P2PPROBE_DMA_F_BIO;
	expect("dma-file-bio", dma(&t), EINVAL);
	t = dma0(f);
	expect_ran("dma-ok-file", dma(&t), &t, 0, 0);
	t = dma0(fro);
	t.flags = P2PPROBE_DMA_F_NO_WRITE;	/* read-only is enough to read back what is there */
	expect_ran("dma-file-read-only-nowrite", dma(&t), &t, 0, 0);
	t = dma0(loop);
	t.flags = P2PPROBE_DMA_F_BIO;	/* like nvmet: never P2P pages to a queue without support */
	expect("dma-loop-bio", dma(&t), EOPNOTSUPP);
	/*
	 * The loop driver (buffered, on tmpfs) copies the bio's pages with the
	 * CPU: the test passes, and target_flags say why it proves nothing
	 * about P2P (a block device on no PCI function, queue without P2PDMA).
	 */
	t = dma0(loop);
	expect_ran("dma-loop-vfs", dma(&t) ||
		   t.target_flags != (P2PPROBE_TARGET_BDEV | P2PPROBE_TARGET_HAS_BDEV) ? -1 : 0, &t, 0, 0);

	close(raw);
	close(rawshared);
	close(loop);
	close(f);
	close(fro);
	close(fwo);
	close(fbuf);
	close(dirfd);
	close(sock);
	close(pipefd[0]);
	close(pipefd[1]);
	unlink(path);
}

int main(int argc, char **argv)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *map;
	int devnull;

	if (argc != 8 || strcmp(argv[1], "ioctls") || parse_bdf(argv[2], &provider) ||
	    parse_bdf(argv[3], &nop2pmem) || parse_bdf(argv[4], &bridge)) {
		fprintf(stderr, "usage: kmod-abuse ioctls PROVIDER NOP2PMEM BRIDGE RAWDEV LOOPDEV EXT4DIR\n");
		return 2;
	}
	/* A write past the file system's size limit raises SIGXFSZ as well as EFBIG. */
	signal(SIGXFSZ, SIG_IGN);
	dev_fd = open(P2PPROBE_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	/* Two pages, the second inaccessible: for a struct that runs off the first. */
	map = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (dev_fd < 0 || devnull < 0 || map == MAP_FAILED || mprotect(map + pg, pg, PROT_NONE)) {
		perror("kmod-abuse setup");
		return 2;
	}
	get_info_cases(map + pg);
	verdict_cases(devnull);
	dma_cases(argv[5], argv[6], argv[7], devnull);
	printf("abuse cases=%d fails=%d\n", cases, fails);
	return fails ? 1 : 0;
}
