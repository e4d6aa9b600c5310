// SPDX-License-Identifier: GPL-2.0
/*
 * p2pprobe - ask the running kernel about PCIe peer-to-peer DMA (P2PDMA)
 * and move real peer-to-peer data.
 *
 * /dev/p2pprobe (root only) answers three ioctls, see uapi/p2pprobe.h:
 *  - GET_INFO: API/module version, CONFIG_PCI_P2PDMA or not, kernel release;
 *  - VERDICT:  pci_p2pdma_distance_many() for a provider/client pair, the map
 *              type seen by dma_map_sgtable() where the provider has p2pmem
 *              we may allocate from, and whether a block queue takes P2P pages;
 *  - DMA_TEST: write a pattern from p2pmem to a file or block device with
 *              O_DIRECT (or bios), read it back into p2pmem and compare.
 *
 * It is also a PCI driver with an empty ID table: bind a spare device (e.g.
 * QEMU ivshmem-plain) with driver_override and one of its BARs becomes
 * published p2pmem.
 *
 * Safety: p2pmem is only ever allocated from NVMe CMBs (driver "nvme") and
 * from devices bound to this module. A GPU driver's p2pmem belongs to the
 * GPU's memory manager; taking pages from it corrupts GPU memory.
 *
 * The module loads on kernels without CONFIG_PCI_P2PDMA (every pci_p2pdma_*
 * call is then an inline stub) and reports P2PDMA as absent.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/bvec.h>
#include <linux/capability.h>
#include <linux/completion.h>
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kernfs.h>
#include <linux/ktime.h>
#include <linux/memremap.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/utsname.h>
#include <linux/version.h>
#include <linux/workqueue.h>

#include "uapi/p2pprobe.h"

#define P2PPROBE_MODULE_VERSION "0.1.0"

/* ZONE_DEVICE memory must be added in whole sub-sections (2 MiB on x86-64). */
#define P2PPROBE_PROVIDER_ALIGN SZ_2M

/*
 * sg_is_dma_bus_address() became sg_dma_is_bus_address() in 6.5 ("dma-mapping:
 * name SG DMA flag helpers consistently"). Verified: 6.1 old name, 6.12 new.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define p2pprobe_sg_is_bus_address(sg) sg_dma_is_bus_address(sg)
#else
#define p2pprobe_sg_is_bus_address(sg) sg_is_dma_bus_address(sg)
#endif

static int provider_bar = -1;
module_param(provider_bar, int, 0644);
MODULE_PARM_DESC(provider_bar, "BAR registered as p2pmem on bound devices (-1: largest memory BAR)");

static unsigned long provider_offset;
module_param(provider_offset, ulong, 0644);
MODULE_PARM_DESC(provider_offset, "Offset into the BAR (rounded up to 2 MiB alignment)");

static unsigned long provider_size;
module_param(provider_size, ulong, 0644);
MODULE_PARM_DESC(provider_size, "Bytes of the BAR to register (0: all; rounded down to 2 MiB)");

static bool provider_publish = true;
module_param(provider_publish, bool, 0644);
MODULE_PARM_DESC(provider_publish, "Publish the p2pmem for other in-kernel users (default: yes)");

static struct pci_driver p2pprobe_pci_driver;

/**
 * p2pprobe_is_zero() - test that a buffer is all zero bytes
 * @p: buffer
 * @len: its length in bytes
 *
 * Return: true if every byte is zero.
 */
static bool p2pprobe_is_zero(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

/**
 * p2pprobe_bdf_valid() - check a user-supplied PCI address
 * @bdf: address from userspace
 *
 * Return: true if the reserved bytes are zero and the domain fits an int.
 */
static bool p2pprobe_bdf_valid(const struct p2pprobe_bdf *bdf)
{
	return p2pprobe_is_zero(bdf->reserved, sizeof(bdf->reserved)) &&
	       bdf->domain <= INT_MAX;
}

/**
 * p2pprobe_get_pdev() - look up a PCI function
 * @bdf: its address
 *
 * Return: the device with a reference held (pci_dev_put() it), or NULL.
 */
static struct pci_dev *p2pprobe_get_pdev(const struct p2pprobe_bdf *bdf)
{
	return pci_get_domain_bus_and_slot(bdf->domain, bdf->bus, bdf->devfn);
}

/**
 * p2pprobe_set_bdf() - store a PCI function's address
 * @bdf: destination
 * @pdev: device
 */
static void p2pprobe_set_bdf(struct p2pprobe_bdf *bdf, struct pci_dev *pdev)
{
	bdf->domain = pci_domain_nr(pdev->bus);
	bdf->bus = pdev->bus->number;
	bdf->devfn = pdev->devfn;
	memset(bdf->reserved, 0, sizeof(bdf->reserved));
}

/**
 * p2pprobe_has_p2pmem() - whether a device has p2pmem to allocate from
 * @pdev: device
 *
 * Where the header declares pci_has_p2pmem(), that (published p2pmem). Later
 * kernels made it static (7.3.4): there a device has p2pmem when p2pdma.c made
 * its pool, which comes with the sysfs group "p2pmem" (pci_p2pdma_setup_pool()).
 * A device set up by pcim_p2pdma_init() alone (VFIO, mlx5) has no pool, and
 * pci_alloc_p2pmem() on it would dereference a NULL pool.
 */
static bool p2pprobe_has_p2pmem(struct pci_dev *pdev)
{
#ifdef P2PPROBE_HAVE_PCI_HAS_P2PMEM
	return pci_has_p2pmem(pdev);
#else
	struct kernfs_node *kn = kernfs_find_and_get(pdev->dev.kobj.sd, "p2pmem");

	if (!kn)
		return false;
	kernfs_put(kn);
	return true;
#endif
}

/**
 * p2pprobe_provider_flags() - classify a p2pmem provider
 * @pdev: provider; the caller holds device_lock(&pdev->dev) so that the bound
 *	driver cannot change underneath
 *
 * Only NVMe CMBs and devices bound to p2pprobe may have their p2pmem
 * allocated by this module (P2PPROBE_PROV_ALLOC_ALLOWED). Anything else,
 * notably a GPU driver that registered its VRAM BAR, is left alone.
 *
 * Return: P2PPROBE_PROV_* flags.
 */
static u32 p2pprobe_provider_flags(struct pci_dev *pdev)
{
	struct device_driver *drv = pdev->dev.driver;
	u32 flags = 0;

	if (p2pprobe_has_p2pmem(pdev))
		flags |= P2PPROBE_PROV_HAS_P2PMEM;
	if (drv == &p2pprobe_pci_driver.driver)
		flags |= P2PPROBE_PROV_DRIVER_P2PPROBE;
	else if (drv && !strcmp(drv->name, "nvme"))
		flags |= P2PPROBE_PROV_DRIVER_NVME;
	if ((flags & P2PPROBE_PROV_HAS_P2PMEM) &&
	    (flags & (P2PPROBE_PROV_DRIVER_P2PPROBE | P2PPROBE_PROV_DRIVER_NVME)))
		flags |= P2PPROBE_PROV_ALLOC_ALLOWED;
	return flags;
}

/**
 * p2pprobe_driver_name() - copy the name of the driver bound to a device
 * @pdev: device
 * @buf: destination, NUL-terminated; empty when no driver is bound
 * @len: size of @buf
 */
static void p2pprobe_driver_name(struct pci_dev *pdev, char *buf, size_t len)
{
	device_lock(&pdev->dev);
	strscpy(buf, pdev->dev.driver ? pdev->dev.driver->name : "", len);
	device_unlock(&pdev->dev);
}

/**
 * p2pprobe_bdev_excl() - was a block device file opened with O_EXCL?
 * @file: an open block device file
 *
 * open() clears O_EXCL from f_flags. 6.1 keeps FMODE_EXCL in f_mode; from
 * 6.5 blkdev_open() makes the file its own holder (private_data) instead.
 *
 * Return: true for an exclusive open.
 */
static bool p2pprobe_bdev_excl(struct file *file)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	return file->private_data == file;
#else
	return file->f_mode & FMODE_EXCL;
#endif
}

/**
 * p2pprobe_file_bdev() - the block device behind a file
 * @file: a block device file, or a regular file on a block-based filesystem
 *
 * The result stays valid while the caller holds its reference on @file.
 *
 * Return: the block device, or NULL (e.g. tmpfs, or not a file).
 */
static struct block_device *p2pprobe_file_bdev(struct file *file)
{
	struct inode *inode = file_inode(file);

	if (S_ISBLK(inode->i_mode))
		return I_BDEV(file->f_mapping->host);
	if (S_ISREG(inode->i_mode))
		return inode->i_sb->s_bdev;
	return NULL;
}

/**
 * p2pprobe_bdev_pci_dev() - the PCI function a block device sits on
 * @bdev: block device
 *
 * Walks the parents of the disk's device (for NVMe: namespace disk ->
 * controller -> PCI function). Stacked devices (dm, md, loop) and NVMe
 * multipath heads have no PCI parent.
 *
 * Return: the PCI device with a reference held, or NULL.
 */
static struct pci_dev *p2pprobe_bdev_pci_dev(struct block_device *bdev)
{
	struct device *dev;

	if (!bdev->bd_disk)
		return NULL;
	for (dev = disk_to_dev(bdev->bd_disk); dev; dev = dev->parent)
		if (dev_is_pci(dev))
			return pci_dev_get(to_pci_dev(dev));
	return NULL;
}

/**
 * p2pprobe_probe_map() - observe the kernel's P2PDMA map type for a pair
 * @provider: device with p2pmem
 * @client: device that would DMA to it
 * @v: verdict; provider_flags, map_type, map_errno and map_reason are set
 * @do_map: false to only classify the provider
 *
 * Maps one page of the provider's p2pmem for @client with dma_map_sgtable():
 * -EREMOTEIO means NOT_SUPPORTED, a segment marked as bus address means
 * BUS_ADDR, any other successful mapping THRU_HOST_BRIDGE.
 */
static void p2pprobe_probe_map(struct pci_dev *provider, struct pci_dev *client,
			       struct p2pprobe_verdict *v, bool do_map)
{
	struct sg_table sgt;
	void *buf = NULL;
	int ret;

	device_lock(&provider->dev);
	v->provider_flags = p2pprobe_provider_flags(provider);
	if (!do_map)
		v->map_reason = P2PPROBE_MAP_REASON_NOT_REQUESTED;
	else if (!IS_ENABLED(CONFIG_PCI_P2PDMA))
		v->map_reason = P2PPROBE_MAP_REASON_NO_P2PDMA;
	else if (!(v->provider_flags & P2PPROBE_PROV_HAS_P2PMEM))
		v->map_reason = P2PPROBE_MAP_REASON_NO_P2PMEM;
	else if (!(v->provider_flags & P2PPROBE_PROV_ALLOC_ALLOWED))
		v->map_reason = P2PPROBE_MAP_REASON_NOT_ALLOWED;
	else
		buf = pci_alloc_p2pmem(provider, PAGE_SIZE);
	device_unlock(&provider->dev);

	if (!buf) {
		if (do_map && (v->provider_flags & P2PPROBE_PROV_ALLOC_ALLOWED))
			v->map_reason = P2PPROBE_MAP_REASON_ALLOC_FAILED;
		return;
	}

	ret = sg_alloc_table(&sgt, 1, GFP_KERNEL);
	if (ret) {
		v->map_reason = P2PPROBE_MAP_REASON_MAP_ERROR;
		v->map_errno = ret;
		goto free_buf;
	}
	sg_set_page(sgt.sgl, virt_to_page(buf), PAGE_SIZE, offset_in_page(buf));

	ret = dma_map_sgtable(&client->dev, &sgt, DMA_BIDIRECTIONAL,
			      DMA_ATTR_SKIP_CPU_SYNC | DMA_ATTR_NO_WARN);
	v->map_errno = ret;
	if (ret == -EREMOTEIO) {
		v->map_type = P2PPROBE_MAP_NOT_SUPPORTED;
		v->map_reason = P2PPROBE_MAP_REASON_PROBED;
	} else if (ret) {
		v->map_reason = P2PPROBE_MAP_REASON_MAP_ERROR;
	} else {
		v->map_type = p2pprobe_sg_is_bus_address(sgt.sgl) ?
			P2PPROBE_MAP_BUS_ADDR : P2PPROBE_MAP_THRU_HOST_BRIDGE;
		v->map_reason = P2PPROBE_MAP_REASON_PROBED;
		dma_unmap_sgtable(&client->dev, &sgt, DMA_BIDIRECTIONAL,
				  DMA_ATTR_SKIP_CPU_SYNC);
	}
	sg_free_table(&sgt);
free_buf:
	pci_free_p2pmem(provider, buf, PAGE_SIZE);
}

/**
 * p2pprobe_verdict_bdev() - block queue facts for the verdict
 * @fd: file descriptor from userspace
 * @client: the verdict's client
 * @v: verdict; bdev_flags and bdev_pci are set
 *
 * Return: 0, or -EBADF for a bad descriptor.
 */
static int p2pprobe_verdict_bdev(int fd, struct pci_dev *client,
				 struct p2pprobe_verdict *v)
{
	struct block_device *bdev;
	struct pci_dev *pdev;
	struct file *file;

	file = fget(fd);
	if (!file)
		return -EBADF;
	bdev = p2pprobe_file_bdev(file);
	if (!bdev)
		goto out;
	v->bdev_flags |= P2PPROBE_BDEV_VALID;
	if (blk_queue_pci_p2pdma(bdev_get_queue(bdev)))
		v->bdev_flags |= P2PPROBE_BDEV_QUEUE_P2PDMA;
	pdev = p2pprobe_bdev_pci_dev(bdev);
	if (pdev) {
		v->bdev_flags |= P2PPROBE_BDEV_HAS_PCI;
		if (pdev == client)
			v->bdev_flags |= P2PPROBE_BDEV_ON_CLIENT;
		p2pprobe_set_bdf(&v->bdev_pci, pdev);
		pci_dev_put(pdev);
	}
out:
	fput(file);
	return 0;
}

/**
 * p2pprobe_ioctl_verdict() - P2PPROBE_IOC_VERDICT
 * @arg: user pointer to struct p2pprobe_verdict
 *
 * Return: 0, or negative errno (-EINVAL bad input, -ENODEV no such device,
 * -EBADF bad client_bdev_fd, -EFAULT).
 */
static long p2pprobe_ioctl_verdict(void __user *arg)
{
	struct pci_dev *provider, *client;
	struct device *clients[1];
	struct p2pprobe_verdict v;
	long ret;

	if (copy_from_user(&v, arg, sizeof(v)))
		return -EFAULT;
	if (v.size != sizeof(v) || v.version != P2PPROBE_API_VERSION ||
	    (v.flags & ~P2PPROBE_VERDICT_F_ALL) ||
	    !p2pprobe_bdf_valid(&v.provider) || !p2pprobe_bdf_valid(&v.client) ||
	    v.client_bdev_fd < -1 ||
	    !p2pprobe_is_zero(v.reserved, sizeof(v.reserved)))
		return -EINVAL;

	/* Clear every output field. */
	v.distance = -1;
	v.map_type = P2PPROBE_MAP_UNKNOWN;
	v.map_errno = 0;
	v.map_reason = P2PPROBE_MAP_REASON_NOT_REQUESTED;
	v.provider_flags = 0;
	v.bdev_flags = 0;
	memset(&v.bdev_pci, 0, sizeof(v.bdev_pci));
	memset(v.provider_driver, 0, sizeof(v.provider_driver));
	memset(v.client_driver, 0, sizeof(v.client_driver));

	provider = p2pprobe_get_pdev(&v.provider);
	if (!provider)
		return -ENODEV;
	client = p2pprobe_get_pdev(&v.client);
	if (!client) {
		ret = -ENODEV;
		goto put_provider;
	}

	clients[0] = &client->dev;
	v.distance = pci_p2pdma_distance_many(provider, clients, 1,
					      v.flags & P2PPROBE_VERDICT_F_VERBOSE);
	p2pprobe_probe_map(provider, client, &v,
			   !(v.flags & P2PPROBE_VERDICT_F_NO_MAP));
	p2pprobe_driver_name(provider, v.provider_driver, sizeof(v.provider_driver));
	p2pprobe_driver_name(client, v.client_driver, sizeof(v.client_driver));

	if (v.client_bdev_fd >= 0) {
		ret = p2pprobe_verdict_bdev(v.client_bdev_fd, client, &v);
		if (ret)
			goto put_client;
	}

	ret = copy_to_user(arg, &v, sizeof(v)) ? -EFAULT : 0;
put_client:
	pci_dev_put(client);
put_provider:
	pci_dev_put(provider);
	return ret;
}

/*
 * Waiting for the storage. The test waits for each I/O killably, never with
 * submit_bio_wait() or a synchronous kiocb: an I/O the device dropped stays
 * in flight until the driver's timeout (NVMe: io_timeout, then abort and
 * controller reset), and the caller must not be stuck in D state until
 * then. On a fatal signal the caller leaves at once and the test's state
 * (p2pmem buffers the device may still DMA to, bio_vecs, file and provider
 * references) is "orphaned": the I/O's completion queues its release on
 * p2pprobe_wq. An orphan holds a module reference, so rmmod fails with EBUSY
 * until every orphan is released, and p2pprobe_exit() drains p2pprobe_wq.
 */
static struct workqueue_struct *p2pprobe_wq;

/**
 * struct p2pprobe_dma_ctx - state of one DMA test (heap; see above)
 * @provider: p2pmem provider (reference held)
 * @file: target file (reference held)
 * @bdev: block device for the bio path, else NULL
 * @src: p2pmem buffer written to storage
 * @dst: p2pmem buffer read back into
 * @chunk: size of @src and @dst in bytes
 * @bvec: bio_vec array covering one chunk
 * @iter: the iov_iter over @bvec of the vfs I/O in flight
 * @kiocb: the vfs path's (asynchronous) kiocb; IOCB_WRITE for a write
 * @io_done: completed by the I/O in flight, unless orphaned
 * @lock: protects @io_busy, @io_result and @orphaned between the caller and
 *	the completion (which may run in interrupt context)
 * @io_busy: an I/O was submitted and its completion has not run
 * @orphaned: the caller left on a fatal signal; the completion releases
 * @io_result: bytes or negative errno of the last I/O
 * @release_work: the release of an orphan, in process context
 */
struct p2pprobe_dma_ctx {
	struct pci_dev *provider;
	struct file *file;
	struct block_device *bdev;
	void *src;
	void *dst;
	size_t chunk;
	struct bio_vec *bvec;
	struct iov_iter iter;
	struct kiocb kiocb;
	struct completion io_done;
	spinlock_t lock;
	bool io_busy;
	bool orphaned;
	long io_result;
	struct work_struct release_work;
};

/**
 * p2pprobe_dma_ctx_free() - release everything a DMA test holds
 * @ctx: test state, no I/O in flight
 */
static void p2pprobe_dma_ctx_free(struct p2pprobe_dma_ctx *ctx)
{
	kvfree(ctx->bvec);
	if (ctx->dst)
		pci_free_p2pmem(ctx->provider, ctx->dst, ctx->chunk);
	if (ctx->src)
		pci_free_p2pmem(ctx->provider, ctx->src, ctx->chunk);
	if (ctx->file)
		fput(ctx->file);
	pci_dev_put(ctx->provider);
	kfree(ctx);
}

/**
 * p2pprobe_dma_release_work() - release an orphaned test once its I/O is done
 * @work: &p2pprobe_dma_ctx.release_work
 */
static void p2pprobe_dma_release_work(struct work_struct *work)
{
	struct p2pprobe_dma_ctx *ctx =
		container_of(work, struct p2pprobe_dma_ctx, release_work);

	p2pprobe_dma_ctx_free(ctx);
	pr_info("released the buffers of a DMA test interrupted by a fatal signal\n");
	/* Last: p2pprobe_exit() cannot run before this, and drains p2pprobe_wq. */
	module_put(THIS_MODULE);
}

/**
 * p2pprobe_io_submitted() - mark an I/O as in flight, before submitting it
 * @ctx: test state
 */
static void p2pprobe_io_submitted(struct p2pprobe_dma_ctx *ctx)
{
	reinit_completion(&ctx->io_done);
	spin_lock_irq(&ctx->lock);
	ctx->io_busy = true;
	spin_unlock_irq(&ctx->lock);
}

/**
 * p2pprobe_io_complete() - the I/O in flight finished (any context)
 * @ctx: test state
 * @result: bytes or negative errno
 *
 * Wakes the caller, or, when the caller has left, queues the release.
 */
static void p2pprobe_io_complete(struct p2pprobe_dma_ctx *ctx, long result)
{
	unsigned long flags;
	bool orphaned;

	spin_lock_irqsave(&ctx->lock, flags);
	ctx->io_result = result;
	ctx->io_busy = false;
	orphaned = ctx->orphaned;
	if (!orphaned)
		complete(&ctx->io_done);
	spin_unlock_irqrestore(&ctx->lock, flags);
	if (orphaned)
		queue_work(p2pprobe_wq, &ctx->release_work);
}

/**
 * p2pprobe_io_wait() - wait killably for the I/O in flight
 * @ctx: test state
 * @orphaned: set when a fatal signal came first and the I/O is still in
 *	flight: @ctx then belongs to the I/O and the caller must not touch it
 *	again
 *
 * Return: the I/O's result, or -EINTR when orphaned.
 */
static long p2pprobe_io_wait(struct p2pprobe_dma_ctx *ctx, bool *orphaned)
{
	if (wait_for_completion_killable(&ctx->io_done)) {
		spin_lock_irq(&ctx->lock);
		if (ctx->io_busy) {
			/* Taken before the completion can see orphaned and put it. */
			__module_get(THIS_MODULE);
			ctx->orphaned = true;
			*orphaned = true;
		}
		spin_unlock_irq(&ctx->lock);
		if (*orphaned) {
			pr_info("DMA test interrupted by a fatal signal while an I/O was in flight; its buffers are released when the I/O completes\n");
			return -EINTR;
		}
		/* It completed meanwhile: report it; the next chunk stops. */
		return ctx->io_result;
	}
	/* complete() ran under ctx->lock: let the completion leave it first. */
	spin_lock_irq(&ctx->lock);
	spin_unlock_irq(&ctx->lock);
	return ctx->io_result;
}

/**
 * p2pprobe_fill_bvec() - describe a p2pmem range as page bio_vecs
 * @bv: array of at least DIV_ROUND_UP(@len, PAGE_SIZE) entries
 * @buf: page-aligned p2pmem kernel address
 * @len: bytes
 *
 * Return: number of entries used.
 */
static unsigned int p2pprobe_fill_bvec(struct bio_vec *bv, void *buf, size_t len)
{
	unsigned int nr = 0;
	size_t done;

	for (done = 0; done < len; done += PAGE_SIZE, nr++) {
		bv[nr].bv_page = virt_to_page(buf + done);
		bv[nr].bv_offset = 0;
		bv[nr].bv_len = min_t(size_t, PAGE_SIZE, len - done);
	}
	return nr;
}

/**
 * p2pprobe_end_write() - end the freeze protection of a vfs write
 * @ctx: test state
 *
 * From 6.7 vfs_iocb_iter_write() takes it (kiocb_start_write()) and ends it
 * on a synchronous return: this runs from the kiocb's completion only. Before
 * 6.7 this module takes it for regular files, and this ends it either way.
 * As in aio, lockdep is told the completion inherited it.
 */
static void p2pprobe_end_write(struct p2pprobe_dma_ctx *ctx)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	kiocb_end_write(&ctx->kiocb);
#else
	struct super_block *sb = file_inode(ctx->file)->i_sb;

	if (S_ISREG(file_inode(ctx->file)->i_mode)) {
		__sb_writers_acquired(sb, SB_FREEZE_WRITE);
		sb_end_write(sb);
	}
#endif
}

/**
 * p2pprobe_kiocb_complete() - completion of an asynchronous vfs I/O
 * @iocb: &p2pprobe_dma_ctx.kiocb
 * @ret: bytes or negative errno
 */
static void p2pprobe_kiocb_complete(struct kiocb *iocb, long ret)
{
	struct p2pprobe_dma_ctx *ctx = container_of(iocb, struct p2pprobe_dma_ctx, kiocb);

	if (iocb->ki_flags & IOCB_WRITE)
		p2pprobe_end_write(ctx);
	p2pprobe_io_complete(ctx, ret);
}

/**
 * p2pprobe_vfs_rw() - direct I/O between p2pmem and a file, as amdgpu's
 *	hipFile path does (vfs_iocb_iter_* with IOCB_DIRECT over a bvec)
 * @ctx: test state
 * @buf: p2pmem buffer
 * @len: bytes, at most @ctx->chunk
 * @pos: file offset
 * @write: true to write @buf to the file, false to read into it
 * @orphaned: see p2pprobe_io_wait()
 *
 * The kiocb is asynchronous so that the wait is killable: block devices and
 * iomap file systems (ext4, xfs) return -EIOCBQUEUED and complete it later.
 * A file system may still complete it before returning (ext4 extending or
 * unaligned writes wait inside, uninterruptibly).
 *
 * Return: bytes transferred, or negative errno (-EINTR: orphaned, see
 * p2pprobe_io_wait()).
 */
static ssize_t p2pprobe_vfs_rw(struct p2pprobe_dma_ctx *ctx, void *buf,
			       size_t len, loff_t pos, bool write, bool *orphaned)
{
	struct kiocb *kiocb = &ctx->kiocb;
	unsigned int nr;
	ssize_t ret;

	nr = p2pprobe_fill_bvec(ctx->bvec, buf, len);
	init_sync_kiocb(kiocb, ctx->file);
	kiocb->ki_pos = pos;
	kiocb->ki_flags |= IOCB_DIRECT | (write ? IOCB_WRITE : 0);
	kiocb->ki_complete = p2pprobe_kiocb_complete;
	iov_iter_bvec(&ctx->iter, write ? ITER_SOURCE : ITER_DEST, ctx->bvec, nr, len);

	p2pprobe_io_submitted(ctx);
	if (!write) {
		ret = vfs_iocb_iter_read(ctx->file, kiocb, &ctx->iter);
	} else {
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 7, 0)
		/* vfs_iocb_iter_write() takes freeze protection itself from 6.7 on. */
		if (S_ISREG(file_inode(ctx->file)->i_mode)) {
			sb_start_write(file_inode(ctx->file)->i_sb);
			__sb_writers_release(file_inode(ctx->file)->i_sb, SB_FREEZE_WRITE);
		}
#endif
		ret = vfs_iocb_iter_write(ctx->file, kiocb, &ctx->iter);
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 7, 0)
		if (ret != -EIOCBQUEUED)
			p2pprobe_end_write(ctx);
#endif
	}
	if (ret != -EIOCBQUEUED) {
		/* Done (or failed) before returning: no completion will run. */
		spin_lock_irq(&ctx->lock);
		ctx->io_busy = false;
		spin_unlock_irq(&ctx->lock);
		return ret;
	}
	return p2pprobe_io_wait(ctx, orphaned);
}

/**
 * p2pprobe_bio_end_io() - completion of one bio of the bio path
 * @bio: the bio; bi_private is the test state
 */
static void p2pprobe_bio_end_io(struct bio *bio)
{
	struct p2pprobe_dma_ctx *ctx = bio->bi_private;
	int err = blk_status_to_errno(bio->bi_status);

	bio_put(bio);
	p2pprobe_io_complete(ctx, err);
}

/**
 * p2pprobe_bio_rw() - bio I/O between p2pmem and a block device, as nvmet
 *	does (REQ_NOMERGE for P2P pages), one bio at a time, waited for
 *	killably
 * @ctx: test state, @ctx->bdev set
 * @buf: p2pmem buffer
 * @len: bytes
 * @pos: device offset in bytes
 * @write: true to write @buf to the device, false to read into it
 * @orphaned: see p2pprobe_io_wait()
 *
 * Return: @len, or negative errno (-EREMOTEIO when the P2P mapping was
 * refused: nvme-pci completes it with BLK_STS_TARGET; -EINTR: orphaned, see
 * p2pprobe_io_wait()).
 */
static ssize_t p2pprobe_bio_rw(struct p2pprobe_dma_ctx *ctx, void *buf,
			       size_t len, loff_t pos, bool write, bool *orphaned)
{
	blk_opf_t opf = (write ? REQ_OP_WRITE : REQ_OP_READ) | REQ_SYNC;
	size_t done = 0;
	long ret;

	while (done < len) {
		unsigned int nr = min_t(size_t, DIV_ROUND_UP(len - done, PAGE_SIZE),
					BIO_MAX_VECS);
		size_t bio_bytes = 0;
		struct bio *bio;

		bio = bio_alloc(ctx->bdev, nr, opf, GFP_KERNEL);
		if (!bio)
			return -ENOMEM;
		bio->bi_iter.bi_sector = (pos + done) >> SECTOR_SHIFT;
		while (nr--) {
			struct page *page = virt_to_page(buf + done + bio_bytes);
			unsigned int n = min_t(size_t, PAGE_SIZE, len - done - bio_bytes);

			if (is_pci_p2pdma_page(page))
				bio->bi_opf |= REQ_NOMERGE;
			if (bio_add_page(bio, page, n, 0) != n)
				break;
			bio_bytes += n;
		}
		if (!bio_bytes) {
			bio_put(bio);
			return -EIO;
		}
		bio->bi_private = ctx;
		bio->bi_end_io = p2pprobe_bio_end_io;
		p2pprobe_io_submitted(ctx);
		submit_bio(bio);
		ret = p2pprobe_io_wait(ctx, orphaned);
		if (ret)
			return ret;
		done += bio_bytes;
	}
	return done;
}

/**
 * p2pprobe_run_dir() - run one direction of a DMA test over the whole range
 * @ctx: test state
 * @t: test; @t->write or @t->read and, when reading, @t->mismatch are set
 * @write: direction
 *
 * Writing fills the source buffer with the pattern and writes it out chunk
 * by chunk. Reading poisons the destination buffer (pattern of another seed,
 * which differs from the expected pattern in every word), reads and compares.
 * Stops at the first error or on a fatal signal, between chunks or while
 * waiting for an I/O.
 *
 * Return: false when @ctx was orphaned (see p2pprobe_io_wait()).
 */
static bool p2pprobe_run_dir(struct p2pprobe_dma_ctx *ctx,
			     struct p2pprobe_dma_test *t, bool write)
{
	struct p2pprobe_dir_result *res = write ? &t->write : &t->read;
	void *buf = write ? ctx->src : ctx->dst;
	bool orphaned = false;
	u64 done = 0;

	res->ran = 1;
	while (done < t->length) {
		size_t n = min_t(u64, ctx->chunk, t->length - done);
		loff_t pos = t->offset + done;
		ssize_t ret;
		u64 start;

		if (fatal_signal_pending(current)) {
			res->error = -EINTR;
			return true;
		}
		p2pprobe_pattern_fill(buf, n, pos, write ? t->seed : ~t->seed);

		start = ktime_get_ns();
		if (ctx->bdev)
			ret = p2pprobe_bio_rw(ctx, buf, n, pos, write, &orphaned);
		else
			ret = p2pprobe_vfs_rw(ctx, buf, n, pos, write, &orphaned);
		res->ns += ktime_get_ns() - start;

		if (orphaned) {
			res->error = -EINTR;
			return false;
		}
		if (ret > 0)
			res->bytes += ret;
		if (ret != n) {
			res->error = ret < 0 ? ret : (write ? -EIO : -ENODATA);
			return true;
		}
		if (!write) {
			struct p2pprobe_mismatch mm;

			if (p2pprobe_pattern_check(buf, n, pos, t->seed, &mm)) {
				if (!t->mismatch.count) {
					t->mismatch.offset = mm.offset;
					t->mismatch.expected = mm.expected;
					t->mismatch.found = mm.found;
				}
				t->mismatch.count += mm.count;
			}
		}
		done += n;
		cond_resched();
	}
	return true;
}

/**
 * p2pprobe_dma_alloc() - allocate the two p2pmem buffers
 * @ctx: test state; @ctx->src, @ctx->dst and @ctx->chunk are set on success
 * @length: bytes to move in total
 * @chunk_size: user's chunk size, 0 for automatic
 *
 * Runs under the provider's device lock and only for allowed providers.
 * Automatic sizing starts at min(@length, P2PPROBE_DMA_MAX_CHUNK) and halves
 * down to one page while the pool cannot supply two buffers.
 *
 * Return: 0, or -ENOMEM.
 */
static int p2pprobe_dma_alloc(struct p2pprobe_dma_ctx *ctx, u64 length,
			      u32 chunk_size)
{
	size_t chunk = chunk_size ? chunk_size :
		min_t(u64, length, P2PPROBE_DMA_MAX_CHUNK);

	chunk = min_t(u64, chunk, length);
	for (;;) {
		ctx->src = pci_alloc_p2pmem(ctx->provider, chunk);
		ctx->dst = ctx->src ? pci_alloc_p2pmem(ctx->provider, chunk) : NULL;
		if (ctx->dst) {
			ctx->chunk = chunk;
			return 0;
		}
		if (ctx->src)
			pci_free_p2pmem(ctx->provider, ctx->src, chunk);
		ctx->src = NULL;
		if (chunk_size || chunk <= P2PPROBE_DMA_ALIGN)
			return -ENOMEM;
		chunk = max_t(size_t, P2PPROBE_DMA_ALIGN,
			      round_down(chunk / 2, P2PPROBE_DMA_ALIGN));
	}
}

/**
 * p2pprobe_dma_check_target() - validate the target file and describe it
 * @ctx: test state; @ctx->bdev is set for the bio path
 * @t: test; target_flags, target_pci and target_distance are set
 *
 * Return: 0, or negative errno: -EINVAL for a file that is not O_DIRECT, a
 * block device not opened O_EXCL, a range past the device's end or a bio
 * test on a regular file; -EBADF when the file's mode lacks a needed
 * direction; -EOPNOTSUPP for a bio test on a queue without P2PDMA support.
 */
static int p2pprobe_dma_check_target(struct p2pprobe_dma_ctx *ctx,
				     struct p2pprobe_dma_test *t)
{
	struct file *file = ctx->file;
	struct inode *inode = file_inode(file);
	struct block_device *bdev;
	struct pci_dev *pdev;
	bool queue_p2p = false;

	if (S_ISBLK(inode->i_mode)) {
		t->target_flags |= P2PPROBE_TARGET_BDEV;
		if (!p2pprobe_bdev_excl(file))
			return -EINVAL;
	} else if (S_ISREG(inode->i_mode)) {
		t->target_flags |= P2PPROBE_TARGET_REGULAR;
		if (!(file->f_flags & O_DIRECT) || (t->flags & P2PPROBE_DMA_F_BIO))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (!(t->flags & P2PPROBE_DMA_F_NO_WRITE) && !(file->f_mode & FMODE_WRITE))
		return -EBADF;
	if (!(t->flags & P2PPROBE_DMA_F_NO_READ) && !(file->f_mode & FMODE_READ))
		return -EBADF;

	bdev = p2pprobe_file_bdev(file);
	if (bdev) {
		t->target_flags |= P2PPROBE_TARGET_HAS_BDEV;
		queue_p2p = blk_queue_pci_p2pdma(bdev_get_queue(bdev));
		if (queue_p2p)
			t->target_flags |= P2PPROBE_TARGET_QUEUE_P2PDMA;
		pdev = p2pprobe_bdev_pci_dev(bdev);
		if (pdev) {
			struct device *clients[1] = { &pdev->dev };

			t->target_flags |= P2PPROBE_TARGET_HAS_PCI;
			p2pprobe_set_bdf(&t->target_pci, pdev);
			t->target_distance =
				pci_p2pdma_distance_many(ctx->provider, clients, 1, false);
			pci_dev_put(pdev);
		}
	}

	if (S_ISBLK(inode->i_mode)) {
		if (t->offset + t->length > bdev_nr_bytes(bdev) ||
		    (t->offset | t->length) & (bdev_logical_block_size(bdev) - 1))
			return -EINVAL;
		if (t->flags & P2PPROBE_DMA_F_BIO) {
			/* Like nvmet: never hand P2P pages to a queue without support. */
			if (!queue_p2p)
				return -EOPNOTSUPP;
			ctx->bdev = bdev;
		}
	}
	return 0;
}

/**
 * p2pprobe_ioctl_dma_test() - P2PPROBE_IOC_DMA_TEST
 * @arg: user pointer to struct p2pprobe_dma_test
 *
 * Return: 0 when the test ran (I/O errors and mismatches are reported in the
 * struct), or negative errno: -EINVAL bad input, -EOPNOTSUPP no P2PDMA in
 * this kernel (or bio test on a queue without it), -ENODEV provider missing
 * or without p2pmem, -EPERM provider not an NVMe CMB nor bound to p2pprobe,
 * -EBADF bad fd, -ENOMEM no p2pmem available, -EFAULT, -EINTR killed while
 * an I/O was in flight (the process is dying; see p2pprobe_io_wait()).
 *
 * Long: one acquire-in-order, release-in-reverse sequence (fd, provider,
 * p2pmem, I/O) with its goto unwinding; split, each part would need the
 * whole unwind state and the release order could no longer be read at once.
 */
static long p2pprobe_ioctl_dma_test(void __user *arg)
{
	struct p2pprobe_dma_ctx *ctx;
	struct p2pprobe_dma_test t;
	u32 pflags;
	long ret;

	if (copy_from_user(&t, arg, sizeof(t)))
		return -EFAULT;
	if (t.size != sizeof(t) || t.version != P2PPROBE_API_VERSION ||
	    (t.flags & ~P2PPROBE_DMA_F_ALL) ||
	    ((t.flags & P2PPROBE_DMA_F_NO_WRITE) && (t.flags & P2PPROBE_DMA_F_NO_READ)) ||
	    !p2pprobe_bdf_valid(&t.provider) ||
	    !p2pprobe_is_zero(t.reserved, sizeof(t.reserved)) ||
	    t.fd < 0 || !t.length || t.length > P2PPROBE_DMA_MAX_LENGTH ||
	    (t.offset | t.length) % P2PPROBE_DMA_ALIGN ||
	    t.offset > (u64)LLONG_MAX - t.length ||
	    t.chunk_size % P2PPROBE_DMA_ALIGN ||
	    t.chunk_size > P2PPROBE_DMA_MAX_CHUNK)
		return -EINVAL;

	/* Clear every output field. */
	t.chunk_used = 0;
	t.target_flags = 0;
	t.target_distance = -1;
	memset(&t.target_pci, 0, sizeof(t.target_pci));
	memset(&t.write, 0, sizeof(t.write));
	memset(&t.read, 0, sizeof(t.read));
	memset(&t.mismatch, 0, sizeof(t.mismatch));
	t.mismatch.offset = P2PPROBE_NO_MISMATCH;

	if (!IS_ENABLED(CONFIG_PCI_P2PDMA))
		return -EOPNOTSUPP;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	init_completion(&ctx->io_done);
	spin_lock_init(&ctx->lock);
	INIT_WORK(&ctx->release_work, p2pprobe_dma_release_work);

	ctx->provider = p2pprobe_get_pdev(&t.provider);
	if (!ctx->provider) {
		kfree(ctx);
		return -ENODEV;
	}
	ctx->file = fget(t.fd);
	if (!ctx->file) {
		ret = -EBADF;
		goto free_ctx;
	}
	ret = p2pprobe_dma_check_target(ctx, &t);
	if (ret)
		goto free_ctx;

	device_lock(&ctx->provider->dev);
	pflags = p2pprobe_provider_flags(ctx->provider);
	if (!(pflags & P2PPROBE_PROV_HAS_P2PMEM)) {
		ret = -ENODEV;
	} else if (!(pflags & P2PPROBE_PROV_ALLOC_ALLOWED)) {
		pr_warn("refusing DMA test with p2pmem of %s (driver %s): only NVMe CMBs and devices bound to %s may be used\n",
			pci_name(ctx->provider),
			ctx->provider->dev.driver ? ctx->provider->dev.driver->name : "none",
			KBUILD_MODNAME);
		ret = -EPERM;
	} else {
		ret = p2pprobe_dma_alloc(ctx, t.length, t.chunk_size);
	}
	device_unlock(&ctx->provider->dev);
	if (ret)
		goto free_ctx;
	t.chunk_used = ctx->chunk;

	ctx->bvec = kvmalloc_array(DIV_ROUND_UP(ctx->chunk, PAGE_SIZE),
				   sizeof(*ctx->bvec), GFP_KERNEL);
	if (!ctx->bvec) {
		ret = -ENOMEM;
		goto free_ctx;
	}

	if (!(t.flags & P2PPROBE_DMA_F_NO_WRITE) && !p2pprobe_run_dir(ctx, &t, true))
		return -EINTR;	/* orphaned: the I/O's completion frees ctx */
	if (!(t.flags & P2PPROBE_DMA_F_NO_READ) && !t.write.error &&
	    !p2pprobe_run_dir(ctx, &t, false))
		return -EINTR;

	ret = copy_to_user(arg, &t, sizeof(t)) ? -EFAULT : 0;
free_ctx:
	p2pprobe_dma_ctx_free(ctx);
	return ret;
}

/**
 * p2pprobe_ioctl_get_info() - P2PPROBE_IOC_GET_INFO
 * @arg: user pointer to struct p2pprobe_info
 *
 * Return: 0, -EINVAL or -EFAULT.
 */
static long p2pprobe_ioctl_get_info(void __user *arg)
{
	struct p2pprobe_info info;

	if (copy_from_user(&info, arg, sizeof(info)))
		return -EFAULT;
	/* Any non-zero caller version: this is how userspace learns ours. */
	if (info.size != sizeof(info) || !info.version || info.reserved0 ||
	    !p2pprobe_is_zero(info.reserved, sizeof(info.reserved)))
		return -EINVAL;

	info.api_version = P2PPROBE_API_VERSION;
	info.flags = P2PPROBE_INFO_PROVIDER;
	if (IS_ENABLED(CONFIG_PCI_P2PDMA))
		info.flags |= P2PPROBE_INFO_P2PDMA;
	info.linux_version_code = LINUX_VERSION_CODE;
	memset(info.module_version, 0, sizeof(info.module_version));
	strscpy(info.module_version, P2PPROBE_MODULE_VERSION, sizeof(info.module_version));
	memset(info.kernel_release, 0, sizeof(info.kernel_release));
	strscpy(info.kernel_release, init_utsname()->release, sizeof(info.kernel_release));

	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

/**
 * p2pprobe_ioctl() - dispatch /dev/p2pprobe ioctls
 * @file: open device file
 * @cmd: P2PPROBE_IOC_*
 * @arg: user pointer to the command's struct
 *
 * Return: the command's result, -EPERM without CAP_SYS_ADMIN, -ENOTTY for
 * unknown commands.
 */
static long p2pprobe_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;

	switch (cmd) {
	case P2PPROBE_IOC_GET_INFO:
		return p2pprobe_ioctl_get_info(uarg);
	case P2PPROBE_IOC_VERDICT:
		return p2pprobe_ioctl_verdict(uarg);
	case P2PPROBE_IOC_DMA_TEST:
		return p2pprobe_ioctl_dma_test(uarg);
	default:
		return -ENOTTY;
	}
}

/**
 * p2pprobe_open() - open /dev/p2pprobe
 * @inode: device inode
 * @file: file being opened
 *
 * Return: 0, or -EPERM without CAP_SYS_ADMIN.
 */
static int p2pprobe_open(struct inode *inode, struct file *file)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	return nonseekable_open(inode, file);
}

static const struct file_operations p2pprobe_fops = {
	.owner = THIS_MODULE,
	.open = p2pprobe_open,
	.unlocked_ioctl = p2pprobe_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice p2pprobe_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = P2PPROBE_DEVICE_NAME,
	.fops = &p2pprobe_fops,
	.mode = 0600,
};

/**
 * p2pprobe_pick_bar() - choose the BAR to register as p2pmem
 * @pdev: device being bound
 *
 * Return: provider_bar if set, else the largest memory BAR; -ENODEV if the
 * chosen BAR is not memory or there is none.
 */
static int p2pprobe_pick_bar(struct pci_dev *pdev)
{
	resource_size_t best_len = 0;
	int bar, best = -ENODEV;

	if (provider_bar >= 0) {
		if (provider_bar >= PCI_STD_NUM_BARS ||
		    !(pci_resource_flags(pdev, provider_bar) & IORESOURCE_MEM) ||
		    !pci_resource_len(pdev, provider_bar))
			return -ENODEV;
		return provider_bar;
	}
	for (bar = 0; bar < PCI_STD_NUM_BARS; bar++) {
		if (!(pci_resource_flags(pdev, bar) & IORESOURCE_MEM))
			continue;
		if (pci_resource_len(pdev, bar) > best_len) {
			best_len = pci_resource_len(pdev, bar);
			best = bar;
		}
	}
	return best;
}

/**
 * p2pprobe_pci_probe() - register a BAR of a bound device as p2pmem
 * @pdev: device bound through driver_override
 * @id: matched ID (the dummy "any" ID for driver_override binds)
 *
 * Everything is device-managed: unbinding releases the p2pmem (after all
 * allocations from it were freed) and disables the device.
 *
 * Return: 0, or negative errno.
 */
static int p2pprobe_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	resource_size_t start, len, offset, size;
	int bar, ret;

	if (!IS_ENABLED(CONFIG_PCI_P2PDMA)) {
		pci_warn(pdev, "kernel built without CONFIG_PCI_P2PDMA: cannot provide p2pmem\n");
		return -EOPNOTSUPP;
	}

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;

	bar = p2pprobe_pick_bar(pdev);
	if (bar < 0) {
		pci_err(pdev, "no usable memory BAR (provider_bar=%d)\n", provider_bar);
		return bar;
	}
	start = pci_resource_start(pdev, bar);
	len = pci_resource_len(pdev, bar);

	/* Start and size of the range must be 2 MiB aligned (sub-sections). */
	offset = ALIGN(start + provider_offset, P2PPROBE_PROVIDER_ALIGN) - start;
	if (offset >= len) {
		pci_err(pdev, "BAR %d (%pa bytes) too small for a 2 MiB aligned range at offset %lu\n",
			bar, &len, provider_offset);
		return -EINVAL;
	}
	size = len - offset;
	if (provider_size && provider_size < size)
		size = provider_size;
	size = round_down(size, P2PPROBE_PROVIDER_ALIGN);
	if (!size) {
		pci_err(pdev, "BAR %d: less than 2 MiB left after alignment\n", bar);
		return -EINVAL;
	}

	ret = pci_p2pdma_add_resource(pdev, bar, size, offset);
	if (ret) {
		pci_err(pdev, "pci_p2pdma_add_resource(BAR %d, %pa bytes at %pa) failed: %d\n",
			bar, &size, &offset, ret);
		return ret;
	}
	pci_p2pmem_publish(pdev, provider_publish);
	pci_info(pdev, "p2pmem provider: BAR %d, %pa bytes at offset %pa%s\n",
		 bar, &size, &offset, provider_publish ? ", published" : "");
	return 0;
}

/**
 * p2pprobe_pci_remove() - unbind; p2pmem and the device are devm-released
 * @pdev: device
 */
static void p2pprobe_pci_remove(struct pci_dev *pdev)
{
	pci_p2pmem_publish(pdev, false);
	pci_info(pdev, "p2pmem provider removed\n");
}

/* Empty: devices are bound only on request, through driver_override. */
static const struct pci_device_id p2pprobe_pci_ids[] = {
	{ }
};

static struct pci_driver p2pprobe_pci_driver = {
	.name = KBUILD_MODNAME,
	.id_table = p2pprobe_pci_ids,
	.probe = p2pprobe_pci_probe,
	.remove = p2pprobe_pci_remove,
};

/**
 * p2pprobe_init() - register /dev/p2pprobe and the PCI driver
 *
 * Return: 0, or negative errno.
 */
static int __init p2pprobe_init(void)
{
	int ret;

	p2pprobe_wq = alloc_workqueue(KBUILD_MODNAME, 0, 0);
	if (!p2pprobe_wq)
		return -ENOMEM;
	ret = misc_register(&p2pprobe_misc);
	if (ret)
		goto destroy_wq;
	ret = pci_register_driver(&p2pprobe_pci_driver);
	if (ret)
		goto deregister_misc;
	pr_info("version %s loaded, API %d, P2PDMA %s\n", P2PPROBE_MODULE_VERSION,
		P2PPROBE_API_VERSION,
		IS_ENABLED(CONFIG_PCI_P2PDMA) ? "compiled in" : "absent (CONFIG_PCI_P2PDMA off)");
	return 0;

deregister_misc:
	misc_deregister(&p2pprobe_misc);
destroy_wq:
	destroy_workqueue(p2pprobe_wq);
	return ret;
}

/**
 * p2pprobe_exit() - unregister the PCI driver and /dev/p2pprobe
 */
static void __exit p2pprobe_exit(void)
{
	pci_unregister_driver(&p2pprobe_pci_driver);
	misc_deregister(&p2pprobe_misc);
	/* Orphans hold module references: none is left, but the last release
	 * may still be returning from its work function.
	 */
	destroy_workqueue(p2pprobe_wq);
}

module_init(p2pprobe_init);
module_exit(p2pprobe_exit);

MODULE_DESCRIPTION("Ask the running kernel about PCIe P2PDMA and move real P2P data");
MODULE_AUTHOR("p2pcheck");
MODULE_LICENSE("GPL");
MODULE_VERSION(P2PPROBE_MODULE_VERSION);
