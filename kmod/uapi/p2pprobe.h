/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * p2pprobe userspace API: /dev/p2pprobe ioctls and the DMA test pattern.
 *
 * This is the ONE header shared by the kernel module (kmod/p2pprobe.c,
 * compiled as kernel C) and by userspace p2pcheck (C++20). It must stay
 * valid in both: only <linux/types.h> and <linux/ioctl.h>, fixed-size types,
 * explicit padding, no libc and no kernel-only helpers.
 *
 * Versioning: every ioctl struct starts with {size, version}. Userspace sets
 * size = sizeof(struct) and version = P2PPROBE_API_VERSION. The module
 * answers -EINVAL to a wrong size or version (GET_INFO accepts any non-zero
 * version so that userspace can always learn the module's API version) and
 * to non-zero reserved fields or unknown flag bits. The struct size is also
 * encoded in the ioctl number, so a changed layout gets -ENOTTY. Layouts are
 * frozen for a given P2PPROBE_API_VERSION; struct p2pprobe_info and
 * P2PPROBE_IOC_GET_INFO are frozen forever.
 */
#ifndef _UAPI_P2PPROBE_H
#define _UAPI_P2PPROBE_H

#include <linux/types.h>
#include <linux/ioctl.h>

#ifdef __cplusplus
#define P2PPROBE_STATIC_ASSERT(expr, msg) static_assert(expr, msg)
#define P2PPROBE_PTR_CAST(type, ptr) (static_cast<type>(ptr))
#define P2PPROBE_BYTES_OF(type, ptr) (reinterpret_cast<type>(ptr))
extern "C" {
#else
#define P2PPROBE_STATIC_ASSERT(expr, msg) _Static_assert(expr, msg)
#define P2PPROBE_PTR_CAST(type, ptr) ((type)(ptr))
#define P2PPROBE_BYTES_OF(type, ptr) ((type)(ptr))
#endif

#define P2PPROBE_API_VERSION	1
#define P2PPROBE_DEVICE_NAME	"p2pprobe"
#define P2PPROBE_DEVICE_PATH	"/dev/p2pprobe"
#define P2PPROBE_IOC_MAGIC	0xB9

/* DMA_TEST limits: offset and length are multiples of P2PPROBE_DMA_ALIGN. */
#define P2PPROBE_DMA_ALIGN	4096u
#define P2PPROBE_DMA_MAX_LENGTH	(64u << 20)	/* per call */
#define P2PPROBE_DMA_MAX_CHUNK	(4u << 20)	/* p2pmem buffer size cap */

/* Pattern geometry: one 64-bit word per 8 bytes, blocks of 512 bytes. */
#define P2PPROBE_PATTERN_BLOCK	512u
#define P2PPROBE_PATTERN_WORD	8u
#define P2PPROBE_NO_MISMATCH	(~0ULL)

/**
 * struct p2pprobe_bdf - a PCI function
 * @domain: PCI domain (segment)
 * @bus: bus number
 * @devfn: (device << 3) | function
 * @reserved: must be zero
 */
struct p2pprobe_bdf {
	__u32 domain;
	__u8 bus;
	__u8 devfn;
	__u8 reserved[2];
};

/* ---- P2PPROBE_IOC_GET_INFO ---------------------------------------------- */

/* p2pprobe_info.flags */
#define P2PPROBE_INFO_P2PDMA	(1u << 0)	/* module built with CONFIG_PCI_P2PDMA=y */
#define P2PPROBE_INFO_PROVIDER	(1u << 1)	/* "p2pprobe" pci_driver registered */

/**
 * struct p2pprobe_info - module and kernel identity (P2PPROBE_IOC_GET_INFO)
 * @size: in: sizeof(struct p2pprobe_info)
 * @version: in: the caller's P2PPROBE_API_VERSION (any non-zero value)
 * @api_version: out: the module's P2PPROBE_API_VERSION
 * @flags: out: P2PPROBE_INFO_*
 * @linux_version_code: out: LINUX_VERSION_CODE the module was built against
 * @reserved0: must be zero
 * @module_version: out: NUL-terminated module version string
 * @kernel_release: out: NUL-terminated release of the running kernel
 * @reserved: must be zero
 */
struct p2pprobe_info {
	__u32 size;
	__u32 version;
	__u32 api_version;
	__u32 flags;
	__u32 linux_version_code;
	__u32 reserved0;
	char module_version[32];
	char kernel_release[72];
	__u64 reserved[4];
};

/* ---- P2PPROBE_IOC_VERDICT ----------------------------------------------- */

/* p2pprobe_verdict.flags (in) */
#define P2PPROBE_VERDICT_F_VERBOSE	(1u << 0)	/* kernel logs why (dmesg) */
#define P2PPROBE_VERDICT_F_NO_MAP	(1u << 1)	/* skip the dma_map probe */
#define P2PPROBE_VERDICT_F_ALL		(P2PPROBE_VERDICT_F_VERBOSE | P2PPROBE_VERDICT_F_NO_MAP)

/* p2pprobe_verdict.map_type: same order as the kernel's enum pci_p2pdma_map_type */
#define P2PPROBE_MAP_UNKNOWN		0u	/* not observed, see map_reason */
#define P2PPROBE_MAP_NOT_SUPPORTED	1u	/* dma_map_sgtable() said -EREMOTEIO */
#define P2PPROBE_MAP_BUS_ADDR		2u	/* mapped to a PCI bus address (switch path) */
#define P2PPROBE_MAP_THRU_HOST_BRIDGE	3u	/* mapped through the host bridge */

/* p2pprobe_verdict.map_reason: how map_type was (not) obtained */
#define P2PPROBE_MAP_REASON_PROBED		0u	/* map_type observed */
#define P2PPROBE_MAP_REASON_NOT_REQUESTED	1u	/* P2PPROBE_VERDICT_F_NO_MAP */
#define P2PPROBE_MAP_REASON_NO_P2PDMA		2u	/* kernel without CONFIG_PCI_P2PDMA */
#define P2PPROBE_MAP_REASON_NO_P2PMEM		3u	/* provider registered no p2pmem */
#define P2PPROBE_MAP_REASON_NOT_ALLOWED		4u	/* provider not nvme/p2pprobe (a GPU?) */
#define P2PPROBE_MAP_REASON_ALLOC_FAILED	5u	/* provider's p2pmem pool exhausted */
#define P2PPROBE_MAP_REASON_MAP_ERROR		6u	/* other dma_map error, see map_errno */

/* provider_flags */
#define P2PPROBE_PROV_HAS_P2PMEM	(1u << 0)	/* pci_has_p2pmem(), or a p2pmem pool where that is static */
#define P2PPROBE_PROV_DRIVER_NVME	(1u << 1)	/* bound to "nvme" (CMB) */
#define P2PPROBE_PROV_DRIVER_P2PPROBE	(1u << 2)	/* bound to this module */
#define P2PPROBE_PROV_ALLOC_ALLOWED	(1u << 3)	/* module may allocate its p2pmem */

/* bdev_flags (client_bdev_fd given) */
#define P2PPROBE_BDEV_VALID		(1u << 0)	/* fd resolved to a block device */
#define P2PPROBE_BDEV_HAS_PCI		(1u << 1)	/* bdev_pci is valid */
#define P2PPROBE_BDEV_ON_CLIENT		(1u << 2)	/* bdev_pci == client */
#define P2PPROBE_BDEV_QUEUE_P2PDMA	(1u << 3)	/* blk_queue_pci_p2pdma() */

/**
 * struct p2pprobe_verdict - the running kernel's P2PDMA verdict for a pair
 * @size: in: sizeof(struct p2pprobe_verdict)
 * @version: in: P2PPROBE_API_VERSION
 * @provider: in: device whose BAR memory is the DMA target/source
 * @client: in: device that would DMA to/from the provider
 * @flags: in: P2PPROBE_VERDICT_F_*
 * @client_bdev_fd: in: fd of a block device, or of a file on a filesystem,
 *	backed by the client; -1 for none. Used for the queue check only.
 * @distance: out: pci_p2pdma_distance_many(provider, {client}, 1): the
 *	distance, or -1 when the kernel does not support the pair
 * @map_type: out: P2PPROBE_MAP_*
 * @map_errno: out: dma_map_sgtable() result (0 or negative errno) if probed
 * @map_reason: out: P2PPROBE_MAP_REASON_*
 * @provider_flags: out: P2PPROBE_PROV_*
 * @bdev_flags: out: P2PPROBE_BDEV_*
 * @bdev_pci: out: PCI function under the block device (P2PPROBE_BDEV_HAS_PCI)
 * @provider_driver: out: NUL-terminated driver name bound to the provider
 * @client_driver: out: NUL-terminated driver name bound to the client
 * @reserved: must be zero
 */
struct p2pprobe_verdict {
	__u32 size;
	__u32 version;
	struct p2pprobe_bdf provider;
	struct p2pprobe_bdf client;
	__u32 flags;
	__s32 client_bdev_fd;
	__s32 distance;
	__u32 map_type;
	__s32 map_errno;
	__u32 map_reason;
	__u32 provider_flags;
	__u32 bdev_flags;
	struct p2pprobe_bdf bdev_pci;
	char provider_driver[32];
	char client_driver[32];
	__u64 reserved[4];
};

/* ---- P2PPROBE_IOC_DMA_TEST ---------------------------------------------- */

/* p2pprobe_dma_test.flags (in) */
#define P2PPROBE_DMA_F_BIO	(1u << 0)	/* block device: submit_bio_wait() path */
#define P2PPROBE_DMA_F_NO_WRITE	(1u << 1)	/* skip the write: verify data already there */
#define P2PPROBE_DMA_F_NO_READ	(1u << 2)	/* skip read-back (userspace verifies) */
#define P2PPROBE_DMA_F_ALL	(P2PPROBE_DMA_F_BIO | P2PPROBE_DMA_F_NO_WRITE | \
				 P2PPROBE_DMA_F_NO_READ)

/* p2pprobe_dma_test.target_flags (out) */
#define P2PPROBE_TARGET_BDEV		(1u << 0)	/* fd is a block device */
#define P2PPROBE_TARGET_REGULAR		(1u << 1)	/* fd is a regular file */
#define P2PPROBE_TARGET_HAS_BDEV	(1u << 2)	/* a backing block device was found */
#define P2PPROBE_TARGET_QUEUE_P2PDMA	(1u << 3)	/* its queue accepts P2PDMA pages */
#define P2PPROBE_TARGET_HAS_PCI		(1u << 4)	/* target_pci is valid */

/**
 * struct p2pprobe_dir_result - outcome of one direction of a DMA test
 * @error: 0, or negative errno of the first failure; -EREMOTEIO when the
 *	kernel refused the peer-to-peer mapping, -ENODATA on a short read,
 *	-EINTR when a fatal signal stopped the test
 * @ran: 1 if this direction was attempted, 0 if skipped
 * @bytes: bytes transferred before the first failure
 * @ns: nanoseconds spent inside the I/O calls
 */
struct p2pprobe_dir_result {
	__s32 error;
	__u32 ran;
	__u64 bytes;
	__u64 ns;
};

/**
 * struct p2pprobe_mismatch - first difference between data and the pattern
 * @offset: absolute file/device offset of the first bad byte, or
 *	P2PPROBE_NO_MISMATCH
 * @count: number of bad bytes
 * @expected: pattern byte at @offset
 * @found: byte read at @offset
 * @reserved: must be zero
 */
struct p2pprobe_mismatch {
	__u64 offset;
	__u64 count;
	__u8 expected;
	__u8 found;
	__u8 reserved[6];
};

/**
 * struct p2pprobe_dma_test - move real data between p2pmem and storage
 * @size: in: sizeof(struct p2pprobe_dma_test)
 * @version: in: P2PPROBE_API_VERSION
 * @provider: in: p2pmem provider: an NVMe CMB (driver "nvme") or a device
 *	bound to p2pprobe; anything else gets -EPERM
 * @fd: in: regular file opened O_DIRECT, or block device opened O_EXCL
 * @flags: in: P2PPROBE_DMA_F_*
 * @offset: in: file/device offset, multiple of P2PPROBE_DMA_ALIGN
 * @length: in: bytes, multiple of P2PPROBE_DMA_ALIGN, at most
 *	P2PPROBE_DMA_MAX_LENGTH
 * @seed: in: pattern seed
 * @chunk_size: in: p2pmem buffer size, 0 = auto; else a multiple of
 *	P2PPROBE_DMA_ALIGN up to P2PPROBE_DMA_MAX_CHUNK
 * @chunk_used: out: buffer size actually allocated (per buffer; two are used)
 * @target_flags: out: P2PPROBE_TARGET_*
 * @target_distance: out: kernel distance provider <-> target_pci, or -1
 * @target_pci: out: PCI function under the target (P2PPROBE_TARGET_HAS_PCI)
 * @write: out: p2pmem -> storage (the storage device reads the provider's BAR)
 * @read: out: storage -> p2pmem (the storage device writes the provider's BAR)
 * @mismatch: out: read-back compared with the pattern
 * @reserved: must be zero
 */
struct p2pprobe_dma_test {
	__u32 size;
	__u32 version;
	struct p2pprobe_bdf provider;
	__s32 fd;
	__u32 flags;
	__u64 offset;
	__u64 length;
	__u64 seed;
	__u32 chunk_size;
	__u32 chunk_used;
	__u32 target_flags;
	__s32 target_distance;
	struct p2pprobe_bdf target_pci;
	struct p2pprobe_dir_result write;
	struct p2pprobe_dir_result read;
	struct p2pprobe_mismatch mismatch;
	__u64 reserved[4];
};

#define P2PPROBE_IOC_GET_INFO	_IOWR(P2PPROBE_IOC_MAGIC, 0x01, struct p2pprobe_info)
#define P2PPROBE_IOC_VERDICT	_IOWR(P2PPROBE_IOC_MAGIC, 0x02, struct p2pprobe_verdict)
#define P2PPROBE_IOC_DMA_TEST	_IOWR(P2PPROBE_IOC_MAGIC, 0x03, struct p2pprobe_dma_test)

P2PPROBE_STATIC_ASSERT(sizeof(struct p2pprobe_bdf) == 8, "p2pprobe_bdf layout");
P2PPROBE_STATIC_ASSERT(sizeof(struct p2pprobe_info) == 160, "p2pprobe_info layout");
P2PPROBE_STATIC_ASSERT(sizeof(struct p2pprobe_verdict) == 160, "p2pprobe_verdict layout");
P2PPROBE_STATIC_ASSERT(sizeof(struct p2pprobe_dir_result) == 24, "p2pprobe_dir_result layout");
P2PPROBE_STATIC_ASSERT(sizeof(struct p2pprobe_mismatch) == 24, "p2pprobe_mismatch layout");
P2PPROBE_STATIC_ASSERT(sizeof(struct p2pprobe_dma_test) == 176, "p2pprobe_dma_test layout");

/* ---- DMA test pattern ----------------------------------------------------
 *
 * The data at absolute file offset o belongs to 64-bit word w = o / 8
 * (512-byte block w / 64, word w % 64 within it). Its value is
 * p2pprobe_pattern_word(seed, w): a bijection of w for a given seed, so no
 * two words of one test are equal and data written to the wrong place, a
 * stale block or a partly written (torn) block never matches. Words are kept
 * in host byte order: writer and checker must run on the same machine.
 */

/**
 * p2pprobe_mix64() - splitmix64 finalizer, a bijection on 64-bit values
 * @x: value to mix
 *
 * Return: the mixed value.
 */
static inline __u64 p2pprobe_mix64(__u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/**
 * p2pprobe_pattern_word() - pattern value of one 64-bit word
 * @seed: test seed
 * @word: absolute word index (file offset / 8)
 *
 * Return: the value stored at byte offset @word * 8.
 */
static inline __u64 p2pprobe_pattern_word(__u64 seed, __u64 word)
{
	return p2pprobe_mix64(seed ^ p2pprobe_mix64(word + 0x9e3779b97f4a7c15ULL));
}

/**
 * p2pprobe_pattern_byte() - pattern value of one byte
 * @seed: test seed
 * @offset: absolute file offset of the byte
 *
 * Return: the byte expected at @offset (host byte order of its word).
 */
static inline __u8 p2pprobe_pattern_byte(__u64 seed, __u64 offset)
{
	__u64 w = p2pprobe_pattern_word(seed, offset / P2PPROBE_PATTERN_WORD);
	const __u8 *b = P2PPROBE_BYTES_OF(const __u8 *, &w);

	return b[offset % P2PPROBE_PATTERN_WORD];
}

/**
 * p2pprobe_pattern_fill() - fill a buffer with the pattern
 * @buf: destination (any alignment)
 * @len: bytes, a multiple of 8
 * @offset: absolute file offset that @buf[0] stands for, a multiple of 8
 * @seed: test seed
 */
static inline void p2pprobe_pattern_fill(void *buf, __u64 len, __u64 offset, __u64 seed)
{
	__u8 *p = P2PPROBE_PTR_CAST(__u8 *, buf);
	__u64 w0 = offset / P2PPROBE_PATTERN_WORD;
	__u64 i;

	for (i = 0; i < len / P2PPROBE_PATTERN_WORD; i++) {
		__u64 v = p2pprobe_pattern_word(seed, w0 + i);

		__builtin_memcpy(p + i * P2PPROBE_PATTERN_WORD, &v, sizeof(v));
	}
}

/**
 * p2pprobe_pattern_check() - compare a buffer with the pattern
 * @buf: data (any alignment)
 * @len: bytes, a multiple of 8
 * @offset: absolute file offset that @buf[0] stands for, a multiple of 8
 * @seed: test seed
 * @mm: out: first mismatch and count of bad bytes; @mm->offset is
 *	P2PPROBE_NO_MISMATCH when all bytes match
 *
 * Return: the number of bytes that differ from the pattern.
 */
static inline __u64 p2pprobe_pattern_check(const void *buf, __u64 len, __u64 offset,
					   __u64 seed, struct p2pprobe_mismatch *mm)
{
	const __u8 *p = P2PPROBE_PTR_CAST(const __u8 *, buf);
	__u64 w0 = offset / P2PPROBE_PATTERN_WORD;
	__u64 i;
	unsigned int k;

	mm->offset = P2PPROBE_NO_MISMATCH;
	mm->count = 0;
	mm->expected = 0;
	mm->found = 0;
	for (k = 0; k < sizeof(mm->reserved); k++)
		mm->reserved[k] = 0;

	for (i = 0; i < len / P2PPROBE_PATTERN_WORD; i++) {
		__u64 want = p2pprobe_pattern_word(seed, w0 + i);
		__u64 got;
		const __u8 *wb, *gb;

		__builtin_memcpy(&got, p + i * P2PPROBE_PATTERN_WORD, sizeof(got));
		if (got == want)
			continue;
		wb = P2PPROBE_BYTES_OF(const __u8 *, &want);
		gb = P2PPROBE_BYTES_OF(const __u8 *, &got);
		for (k = 0; k < P2PPROBE_PATTERN_WORD; k++) {
			if (wb[k] == gb[k])
				continue;
			if (mm->count++ == 0) {
				mm->offset = offset + i * P2PPROBE_PATTERN_WORD + k;
				mm->expected = wb[k];
				mm->found = gb[k];
			}
		}
	}
	return mm->count;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#undef P2PPROBE_STATIC_ASSERT
#undef P2PPROBE_PTR_CAST
#undef P2PPROBE_BYTES_OF

#endif /* _UAPI_P2PPROBE_H */
