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

static struct p2pprobe_info info0(void)
{
	struct p2pprobe_info i = { .size = sizeof(i), .version = P2PPROBE_API_VERSION };
	return i;
}

static void get_info_cases(char *edge)
{
	struct p2pprobe_info i;

	i = info0();
	expect("info-ok", ioctl(dev_fd, P2PPROBE_IOC_GET_INFO, &i), 0);
	i = info0();
	i.version = 0;
	expect("info-version-0", ioctl(dev_fd, P2PPROBE_IOC_GET_INFO, &i), EINVAL);
	i = info0();
	i.version = 0xffffffffu;	/* any non-zero version learns ours */
	expect("info-version-future", ioctl(dev_fd, P2PPROBE_IOC_GET_INFO, &i), 0);
	i = info0();
	i.size = 0;
	expect("info-size-0", ioctl(dev_fd, P2PPROBE_IOC_GET_INFO, &i), EINVAL);
	i = info0();
	i.size = sizeof(i) + 8;
	expect("info-size-big", ioctl(dev_fd, P2PPROBE_IOC_GET_INFO, &i), EINVAL);
	i = info0();
	i.size = 0xffffffffu;
	expect("info-size-max", ioctl(dev_fd, P2PPROBE_IOC_GET_INFO, &i), EINVAL);
	i = info0();
	i.reserved0 = 1;
	expect("info-reserved0", ioctl(dev_fd, P2PPROBE_IOC_GET_INFO, &i), EINVAL);
	i = info0();
	i.reserved[3] = 1ull << 63;
	expect("info-reserved", ioctl(dev_fd, P2PPROBE_IOC_GET_INFO, &i), EINVAL);
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

static void verdict_cases(int devnull)
{
	struct p2pprobe_verdict v;
	int pipefd[2];

	v = verdict0();
	expect("verdict-ok", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), 0);
	v = verdict0();
	v.version = 0;
	expect("verdict-version-0", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), EINVAL);
	v = verdict0();
	v.version = P2PPROBE_API_VERSION + 1;
	expect("verdict-version-next", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), EINVAL);
	v = verdict0();
	v.size = sizeof(v) - 8;
	expect("verdict-size-small", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), EINVAL);
	v = verdict0();
	v.size = 0x80000000u;
	expect("verdict-size-huge", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), EINVAL);
	v = verdict0();
	v.flags = 1u << 31;
	expect("verdict-unknown-flag", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), EINVAL);
	v = verdict0();
	v.reserved[2] = 1;
	expect("verdict-reserved", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), EINVAL);
	v = verdict0();
	v.provider.reserved[1] = 0xff;
	expect("verdict-bdf-reserved", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), EINVAL);
	v = verdict0();
	v.client.domain = 0x80000000u;
	expect("verdict-domain-negative", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), EINVAL);
	v = verdict0();
	v.provider.domain = 0x7fffffffu;
	expect("verdict-no-domain", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), ENODEV);
	v = verdict0();
	v.provider.bus = 0xff;
	v.provider.devfn = 0xff;
	expect("verdict-no-provider", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), ENODEV);
	v = verdict0();
	v.client.bus = 0xfe;
	expect("verdict-no-client", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), ENODEV);
	v = verdict0();
	v.client_bdev_fd = -2;
	expect("verdict-fd-minus-2", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), EINVAL);
	v = verdict0();
	v.client_bdev_fd = INT_MIN;
	expect("verdict-fd-int-min", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), EINVAL);
	v = verdict0();
	v.client_bdev_fd = 999;
	expect("verdict-fd-closed", ioctl(dev_fd, P2PPROBE_IOC_VERDICT, &v), EBADF);
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

	/* Sizes and versions. */
	t = dma0(raw);
	t.size = sizeof(t) - 1;
	expect("dma-size-small", dma(&t), EINVAL);
	t = dma0(raw);
	t.size = 0;
	expect("dma-size-0", dma(&t), EINVAL);
	t = dma0(raw);
	t.version = 0;
	expect("dma-version-0", dma(&t), EINVAL);
	t = dma0(raw);
	t.version = 0xffffffffu;
	expect("dma-version-max", dma(&t), EINVAL);
	t = dma0(raw);
	t.flags = 1u << 3;
	expect("dma-unknown-flag", dma(&t), EINVAL);
	t = dma0(raw);
	t.flags = P2PPROBE_DMA_F_NO_WRITE | P2PPROBE_DMA_F_NO_READ;
	expect("dma-nothing-to-do", dma(&t), EINVAL);
	t = dma0(raw);
	t.reserved[0] = 1;
	expect("dma-reserved", dma(&t), EINVAL);
	t = dma0(raw);
	t.mismatch.reserved[0] = 1;	/* an output field: ignored on input */
	expect_ran("dma-output-fields-ignored", dma(&t), &t, 0, 0);
	expect("dma-null", ioctl(dev_fd, P2PPROBE_IOC_DMA_TEST, NULL), EFAULT);

	/* Lengths and offsets. */
	t = dma0(raw);
	t.length = 0;
	expect("dma-length-0", dma(&t), EINVAL);
	t = dma0(raw);
	t.length = P2PPROBE_DMA_MAX_LENGTH + 4096ull;
	expect("dma-length-over-max", dma(&t), EINVAL);
	t = dma0(raw);
	t.length = 1ull << 63;
	expect("dma-length-2^63", dma(&t), EINVAL);
	t = dma0(raw);
	t.length = ~0ull & ~4095ull;
	expect("dma-length-huge", dma(&t), EINVAL);
	t = dma0(raw);
	t.length = 4095;
	expect("dma-length-unaligned", dma(&t), EINVAL);
	t = dma0(raw);
	t.offset = 512;
	expect("dma-offset-unaligned", dma(&t), EINVAL);
	t = dma0(raw);
	t.offset = (uint64_t)LLONG_MAX & ~4095ull;	/* offset + length > LLONG_MAX */
	expect("dma-offset-llong-max", dma(&t), EINVAL);
	t = dma0(raw);
	t.offset = 1ull << 63;
	expect("dma-offset-negative", dma(&t), EINVAL);
	t = dma0(raw);
	t.offset = ~0ull & ~4095ull;
	expect("dma-offset-max", dma(&t), EINVAL);
	t = dma0(raw);
	t.offset = ((uint64_t)LLONG_MAX & ~4095ull) - 65536;	/* valid, far past the device */
	expect("dma-bdev-offset-near-llong-max", dma(&t), EINVAL);
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
	t.chunk_size = 4097;
	expect("dma-chunk-unaligned", dma(&t), EINVAL);
	t = dma0(raw);
	t.chunk_size = P2PPROBE_DMA_MAX_CHUNK + 4096;
	expect("dma-chunk-over-max", dma(&t), EINVAL);
	t = dma0(raw);
	t.chunk_size = 0xfffff000u;
	expect("dma-chunk-huge", dma(&t), EINVAL);
	t = dma0(raw);
	t.length = 1 << 20;
	t.chunk_size = 4096;	/* 256 chunks of one page */
	expect_ran("dma-chunk-one-page", dma(&t), &t, 0, 0);

	/* Providers: bad addresses, and PCI functions that are not allowed p2pmem providers. */
	t = dma0(raw);
	t.provider.bus = 0xff;
	t.provider.devfn = 0xff;
	expect("dma-no-provider", dma(&t), ENODEV);
	t = dma0(raw);
	t.provider.domain = 0x80000000u;
	expect("dma-provider-domain-negative", dma(&t), EINVAL);
	t = dma0(raw);
	t.provider.reserved[0] = 1;
	expect("dma-provider-bdf-reserved", dma(&t), EINVAL);
	t = dma0(raw);
	t.provider = nop2pmem;
	expect("dma-provider-nvme-no-cmb", dma(&t), ENODEV);
	t = dma0(raw);
	t.provider = bridge;
	expect("dma-provider-bridge", dma(&t), ENODEV);

	/* Targets that are not an NVMe namespace or a file on one. */
	t = dma0(-1);
	expect("dma-fd-minus-1", dma(&t), EINVAL);
	t = dma0(999);
	expect("dma-fd-closed", dma(&t), EBADF);
	t = dma0(devnull);
	expect("dma-target-chardev", dma(&t), EINVAL);
	t = dma0(dev_fd);
	expect("dma-target-self", dma(&t), EINVAL);
	t = dma0(pipefd[1]);
	expect("dma-target-pipe", dma(&t), EINVAL);
	t = dma0(sock);
	expect("dma-target-socket", dma(&t), EINVAL);
	t = dma0(dirfd);
	expect("dma-target-directory", dma(&t), EINVAL);
	t = dma0(rawshared);
	expect("dma-bdev-not-excl", dma(&t), EINVAL);
	t = dma0(fbuf);
	expect("dma-file-not-odirect", dma(&t), EINVAL);
	t = dma0(f);
	t.flags = P2PPROBE_DMA_F_BIO;
	expect("dma-file-bio", dma(&t), EINVAL);
	t = dma0(fro);
	expect("dma-file-read-only", dma(&t), EBADF);
	t = dma0(fwo);
	expect("dma-file-write-only", dma(&t), EBADF);
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
