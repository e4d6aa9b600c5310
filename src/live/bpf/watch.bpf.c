// SPDX-License-Identifier: GPL-2.0
// p2pcheck watch: which block I/O went peer-to-peer, counted where the kernel decides it.
// One CO-RE object for 6.1 to 7.x; p2pcheck enables the programs whose hook the running kernel's
// BTF has (live/watch_hooks.cc) and reads the counters once per interval. Hook points and why:
// shared/docs/watch-design.md §1.
// clang-format off
// The kernel's types first: the helpers' headers use them, and linux/bpf.h brings __u32 and __u64.
#include "watch_types.h"
#include <linux/bpf.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
// clang-format on

#include "watch_shared.h"

char LICENSE[] SEC("license") = "GPL";

// What a task mapped since its last dma_map_sgtable(), until its request is issued (6.1-6.16:
// nvme_prep_rq maps, then issues in the same task without sleeping).
struct pending {
  struct watch_key key;
  u64 segments;
  u64 bytes;
  u64 when;
};

// A request between issue and completion (keyed by its address), or, from 6.17, between the map
// and the issue.
struct inflight {
  struct watch_key key;
  u64 segments;
  u32 mapped;    // set by the 6.17+ map hook: the issue keeps this record
  u32 requeues;  // block_rq_requeue since its first issue (a timeout's abort, a busy device)
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, u32);
  __type(value, struct pending);
} pending SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, u32);
  __type(value, struct watch_key);
} refused_pending SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, u64);
  __type(value, struct inflight);
} inflight SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, WATCH_MAX_ROWS);
  __type(key, struct watch_key);
  __type(value, struct watch_value);
} rows SEC(".maps");

// The tgids of the watched command's process tree: p2pcheck puts the command's pid in before the
// command execs, and watch_fork adds each child of a member. Members are never removed: a tgid is
// not reused while its process lives, and a run rarely outlives pid_max's wrap.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, WATCH_MAX_TREE);
  __type(key, u32);
  __type(value, u8);
} tree SEC(".maps");

// The run's totals, in a one-entry array rather than global data: libbpf creates .bss only where
// its feature probe (a socket filter) loads, which a kernel without CONFIG_NET refuses.
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, u32);
  __type(value, struct watch_totals);
} totals SEC(".maps");

static __always_inline void count_total(int which) {
  u32 zero = 0;
  struct watch_totals* t = bpf_map_lookup_elem(&totals, &zero);
  if (!t) return;
  if (which == 0)
    __sync_fetch_and_add(&t->unpaired, 1);
  else if (which == 1)
    __sync_fetch_and_add(&t->dropped_rows, 1);
  else if (which == 2)
    __sync_fetch_and_add(&t->inflight_full, 1);
  else
    __sync_fetch_and_add(&t->tree_full, 1);
}

// The map type as watch_path; the enum's values come from the running kernel (CO-RE).
static __always_inline int path_of(int map) {
  if (map == bpf_core_enum_value(enum pci_p2pdma_map_type, PCI_P2PDMA_MAP_BUS_ADDR)) return WATCH_PATH_BUS_ADDR;
  if (map == bpf_core_enum_value(enum pci_p2pdma_map_type, PCI_P2PDMA_MAP_THRU_HOST_BRIDGE))
    return WATCH_PATH_THRU_HOST_BRIDGE;
  if (map == bpf_core_enum_value(enum pci_p2pdma_map_type, PCI_P2PDMA_MAP_NOT_SUPPORTED)) return WATCH_PATH_REFUSED;
  return -1;
}

static __always_inline u8 dir_of_op(unsigned int opf) {
  unsigned int op = opf & 0xff;  // REQ_OP_MASK: (1 << REQ_OP_BITS) - 1, 8 bits in 6.1-7.3
  if (op == bpf_core_enum_value(enum req_op, REQ_OP_READ) || op == bpf_core_enum_value(enum req_op, REQ_OP_DRV_IN))
    return WATCH_DIR_TO_DEVICE;
  if (op == bpf_core_enum_value(enum req_op, REQ_OP_WRITE) || op == bpf_core_enum_value(enum req_op, REQ_OP_DRV_OUT))
    return WATCH_DIR_TO_STORAGE;
  return WATCH_DIR_OTHER;
}

static __always_inline void device_name(char* out, struct device* dev) {
  const char* name = BPF_CORE_READ(dev, kobj.name);
  if (name) bpf_probe_read_kernel_str(out, WATCH_NAME_LEN, name);
}

// The P2P memory's provider from the map state: 7.x names it (state->mem->owner); before, the
// state holds the pagemap, which sits inside p2pdma.c's pci_p2pdma_pagemap beside the provider.
static __always_inline void provider_name(char* out, struct pci_p2pdma_map_state___any* state) {
  if (bpf_core_field_exists(state->mem)) {
    struct p2pdma_provider* mem = BPF_CORE_READ(state, mem);
    if (mem) device_name(out, BPF_CORE_READ(mem, owner));
    return;
  }
  if (!bpf_core_field_exists(struct pci_p2pdma_pagemap___any, provider)) return;
  struct dev_pagemap* pgmap = BPF_CORE_READ(state, pgmap);
  if (!pgmap) return;
  struct pci_p2pdma_pagemap___any* p2p_pgmap =
      (void*)pgmap - bpf_core_field_offset(struct pci_p2pdma_pagemap___any, pgmap);
  struct pci_dev* provider = BPF_CORE_READ(p2p_pgmap, provider);
  if (provider) device_name(out, (struct device*)((void*)provider + bpf_core_field_offset(struct pci_dev, dev)));
}

static __always_inline void fill_task(struct watch_key* key) {
  u32 tgid = bpf_get_current_pid_tgid() >> 32;
  key->tgid = tgid;
  key->tree = bpf_map_lookup_elem(&tree, &tgid) ? 1 : 0;
  bpf_get_current_comm(key->comm, sizeof(key->comm));
}

// A requeued request is issued again by a kernel worker (kblockd): it stays the submitter's.
static __always_inline void keep_submitter(struct watch_key* key, const struct watch_key* first) {
  key->tgid = first->tgid;
  key->tree = first->tree;
  __builtin_memcpy(key->comm, first->comm, sizeof(key->comm));
}

// Every process and thread a member of the watched tree starts is a member too.
SEC("tp_btf/sched_process_fork")
int BPF_PROG(watch_fork, struct task_struct* parent, struct task_struct* child) {
  u32 parent_tgid = BPF_CORE_READ(parent, tgid);
  if (!bpf_map_lookup_elem(&tree, &parent_tgid)) return 0;
  u32 child_tgid = BPF_CORE_READ(child, tgid);
  u8 one = 1;
  if (bpf_map_update_elem(&tree, &child_tgid, &one, BPF_ANY)) count_total(3);
  return 0;
}

static __always_inline struct watch_value* row(struct watch_key* key) {
  struct watch_value* v = bpf_map_lookup_elem(&rows, key);
  if (v) return v;
  struct watch_value zero = {};
  if (bpf_map_update_elem(&rows, key, &zero, BPF_NOEXIST) && !bpf_map_lookup_elem(&rows, key)) {
    count_total(1);
    return 0;
  }
  return bpf_map_lookup_elem(&rows, key);
}

static __always_inline void count_refusal(struct watch_key* key, u64 segments) {
  struct watch_value* v = row(key);
  if (!v) return;
  __sync_fetch_and_add(&v->requests, 1);
  __sync_fetch_and_add(&v->segments, segments);
  u32 tid = (u32)bpf_get_current_pid_tgid();
  bpf_map_update_elem(&refused_pending, &tid, key, BPF_ANY);
}

// 6.1-6.16: a scatterlist mapping starts. Its direction is kept for a refusal (which never reaches
// the issue); what the task mapped before and no issue claimed is counted as unpaired.
SEC("fentry/dma_map_sgtable")
int BPF_PROG(watch_map_sgtable, struct device* dev, struct sg_table* sgt, int dir) {
  u32 tid = (u32)bpf_get_current_pid_tgid();
  struct pending* old = bpf_map_lookup_elem(&pending, &tid);
  if (old && old->segments) count_total(0);
  struct pending fresh = {};
  fresh.key.dir = dir == bpf_core_enum_value(enum dma_data_direction, DMA_FROM_DEVICE) ? WATCH_DIR_TO_DEVICE
                  : dir == bpf_core_enum_value(enum dma_data_direction, DMA_TO_DEVICE) ? WATCH_DIR_TO_STORAGE
                                                                                       : WATCH_DIR_OTHER;
  fresh.when = bpf_ktime_get_ns();
  bpf_map_update_elem(&pending, &tid, &fresh, BPF_ANY);
  return 0;
}

// 6.1-6.15: called for each P2P segment only (after is_pci_p2pdma_page()), with the map type.
SEC("fexit/pci_p2pdma_map_segment")
int BPF_PROG(watch_map_segment, struct pci_p2pdma_map_state___any* state, struct device* dev, struct scatterlist* sg,
             int ret) {
  int path = path_of(ret);
  if (path < 0) return 0;
  u32 tid = (u32)bpf_get_current_pid_tgid();
  struct pending* p = bpf_map_lookup_elem(&pending, &tid);
  if (!p) {
    // A driver that maps a scatterlist without dma_map_sgtable(): direction unknown.
    struct pending fresh = {.key.dir = WATCH_DIR_OTHER, .when = bpf_ktime_get_ns()};
    bpf_map_update_elem(&pending, &tid, &fresh, BPF_ANY);
    p = bpf_map_lookup_elem(&pending, &tid);
    if (!p) return 0;
  }
  if (!p->segments) {
    provider_name(p->key.provider, state);
    device_name(p->key.client, dev);
    p->key.path = path;
  }
  if (path == WATCH_PATH_REFUSED) p->key.path = WATCH_PATH_REFUSED;
  p->segments += 1;
  p->bytes += BPF_CORE_READ(sg, length);
  if (path == WATCH_PATH_REFUSED) {
    // The mapping fails here: no issue follows. Count it now; its completion adds the status.
    struct watch_key key = p->key;
    fill_task(&key);
    count_refusal(&key, p->segments);
    bpf_map_delete_elem(&pending, &tid);
  }
  return 0;
}

// 6.16: called once per provider change with the page; the request gives the bytes.
SEC("fexit/__pci_p2pdma_update_state")
int BPF_PROG(watch_update_state, struct pci_p2pdma_map_state___any* state, struct device* dev, void* page) {
  int path = path_of(BPF_CORE_READ(state, map));
  if (path < 0) return 0;
  u32 tid = (u32)bpf_get_current_pid_tgid();
  struct pending fresh = {.key.dir = WATCH_DIR_OTHER, .when = bpf_ktime_get_ns()};
  struct pending* p = bpf_map_lookup_elem(&pending, &tid);
  if (p) {
    if (p->key.path == WATCH_PATH_REFUSED) return 0;
    fresh.key.dir = p->key.dir;
  }
  provider_name(fresh.key.provider, state);
  device_name(fresh.key.client, dev);
  fresh.key.path = path;
  fresh.segments = 1;  // a P2P record; 6.16 does not show segments, so this counts providers
  if (path == WATCH_PATH_REFUSED) {
    struct watch_key key = fresh.key;
    fill_task(&key);
    count_refusal(&key, 0);
    bpf_map_delete_elem(&pending, &tid);
    return 0;
  }
  bpf_map_update_elem(&pending, &tid, &fresh, BPF_ANY);
  return 0;
}

// 6.17+: once per request, with the request itself; a P2P request's record waits for its issue.
SEC("fexit/blk_rq_dma_map_iter_start")
int BPF_PROG(watch_iter_start, struct request* req, struct device* dma_dev, void* state,
             struct blk_dma_iter___any* iter) {
  int path = path_of(BPF_CORE_READ(iter, p2pdma.map));
  if (path < 0) return 0;
  struct watch_key key = {};
  provider_name(key.provider, &iter->p2pdma);
  device_name(key.client, dma_dev);
  key.path = path;
  key.dir = dir_of_op(BPF_CORE_READ(req, cmd_flags));
  if (path == WATCH_PATH_REFUSED) {
    fill_task(&key);
    count_refusal(&key, 0);
    return 0;
  }
  u64 rq = (u64)req;
  struct inflight rec = {.key = key, .mapped = 1};
  struct inflight* old = bpf_map_lookup_elem(&inflight, &rq);
  if (old) {  // requeued: mapped again, by a kernel worker, for the same submitter
    rec.requeues = old->requeues;
    keep_submitter(&rec.key, &old->key);
  }
  if (bpf_map_update_elem(&inflight, &rq, &rec, BPF_ANY)) count_total(2);
  return 0;
}

// md, dm and loop refuse to pin P2P pages for a queue without BLK_FEAT_PCI_P2PDMA (bio.c, 6.2+).
SEC("fexit/bio_iov_iter_get_pages")
int watch_bio_pin(u64* ctx) {
  u64 ret = 0;
  bpf_get_func_ret(ctx, &ret);
  if ((int)ret != -121)  // -EREMOTEIO
    return 0;
  struct bio* bio = (struct bio*)ctx[0];
  struct watch_key key = {};
  struct gendisk* disk = BPF_CORE_READ(bio, bi_bdev, bd_disk);
  if (disk) bpf_probe_read_kernel_str(key.disk, sizeof(key.disk), disk->disk_name);
  key.path = WATCH_PATH_STACK_REFUSED;
  key.dir = dir_of_op(BPF_CORE_READ(bio, bi_opf));
  fill_task(&key);
  struct watch_value* v = row(&key);
  if (v) __sync_fetch_and_add(&v->requests, 1);
  return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(watch_rq_issue, struct request* rq) {
  u64 key_rq = (u64)rq;
  struct inflight* earlier = bpf_map_lookup_elem(&inflight, &key_rq);
  if (earlier && earlier->mapped) {
    earlier->mapped = 0;
    if (!earlier->requeues) fill_task(&earlier->key);
    struct gendisk* disk = BPF_CORE_READ(rq, q, disk);
    if (disk) bpf_probe_read_kernel_str(earlier->key.disk, sizeof(earlier->key.disk), disk->disk_name);
    return 0;
  }
  struct inflight rec = {.requeues = earlier ? earlier->requeues : 0};  // a requeued request keeps its count
  struct watch_key first = {};
  if (earlier) first = earlier->key;
  u32 tid = (u32)bpf_get_current_pid_tgid();
  struct pending* p = bpf_map_lookup_elem(&pending, &tid);
  if (p && p->segments) {
    rec.key = p->key;
    rec.segments = p->segments;
  } else {
    rec.key.path = WATCH_PATH_HOST;
  }
  if (p) bpf_map_delete_elem(&pending, &tid);
  rec.key.dir = dir_of_op(BPF_CORE_READ(rq, cmd_flags));
  fill_task(&rec.key);
  if (earlier) keep_submitter(&rec.key, &first);
  struct gendisk* disk = BPF_CORE_READ(rq, q, disk);
  if (disk) bpf_probe_read_kernel_str(rec.key.disk, sizeof(rec.key.disk), disk->disk_name);
  if (bpf_map_update_elem(&inflight, &key_rq, &rec, BPF_ANY)) count_total(2);
  return 0;
}

// Issued, then put back on the queue (nvme's abort after a timeout, a busy device): it is issued
// again later, and completes once; the count goes to its row then.
SEC("tp_btf/block_rq_requeue")
int BPF_PROG(watch_rq_requeue, struct request* rq) {
  u64 key_rq = (u64)rq;
  struct inflight* rec = bpf_map_lookup_elem(&inflight, &key_rq);
  if (rec) __sync_fetch_and_add(&rec->requeues, 1);
  return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(watch_rq_complete, struct request* rq, int error, unsigned int nr_bytes) {
  u64 key_rq = (u64)rq;
  struct inflight* rec = bpf_map_lookup_elem(&inflight, &key_rq);
  if (!rec || rec->mapped) {
    // Never issued: a request whose mapping failed. If this task's last map was a refusal,
    // record how the request ended (6.1-6.16: BLK_STS_TARGET; 6.17+: BLK_STS_INVAL).
    u32 tid = (u32)bpf_get_current_pid_tgid();
    struct watch_key* refused = bpf_map_lookup_elem(&refused_pending, &tid);
    if (refused) {
      struct watch_value* v = bpf_map_lookup_elem(&rows, refused);
      if (v && error) v->last_status = error;
      bpf_map_delete_elem(&refused_pending, &tid);
    }
    if (rec) bpf_map_delete_elem(&inflight, &key_rq);
    return 0;
  }
  struct watch_value* v = row(&rec->key);
  if (v) {
    __sync_fetch_and_add(&v->requests, 1);
    __sync_fetch_and_add(&v->segments, rec->segments);
    if (rec->requeues) __sync_fetch_and_add(&v->requeues, rec->requeues);
    if (error) {
      __sync_fetch_and_add(&v->errors, 1);
      __sync_fetch_and_add(&v->error_bytes, nr_bytes);
      v->last_status = error;
    } else {
      __sync_fetch_and_add(&v->bytes, nr_bytes);
    }
  }
  bpf_map_delete_elem(&inflight, &key_rq);
  return 0;
}
