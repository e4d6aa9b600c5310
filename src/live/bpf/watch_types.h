// SPDX-License-Identifier: GPL-2.0
// The kernel types the watch probe reads, written by hand with only the members it uses: CO-RE
// (preserve_access_index) finds each member by name in the running kernel's BTF, so one object
// serves 6.1 to 7.x. A vmlinux.h would pin the build host's kernel, which may lack P2PDMA.
#pragma once

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long s64;

#define PAI __attribute__((preserve_access_index))

struct kobject {
  const char* name;
} PAI;
struct device {
  struct kobject kobj;
} PAI;
struct pci_dev {
  struct device dev;
} PAI;
struct range {
  u64 start;
  u64 end;
} PAI;
struct dev_pagemap {
  struct range range;
} PAI;

// drivers/pci/p2pdma.c, private but in BTF: 6.1-6.18 {provider, bus_offset, pgmap};
// 7.x {pgmap, mem}. Fields are checked with bpf_core_field_exists before use.
struct pci_p2pdma_pagemap___any {
  struct pci_dev* provider;
  struct dev_pagemap pgmap;
} PAI;
// include/linux/pci-p2pdma.h 7.3 :26: the provider's owning device.
struct p2pdma_provider {
  struct device* owner;
} PAI;
// The enums whose values CO-RE resolves at load (6.16 inserted PCI_P2PDMA_MAP_NONE).
enum pci_p2pdma_map_type {
  PCI_P2PDMA_MAP_UNKNOWN,
  PCI_P2PDMA_MAP_NOT_SUPPORTED,
  PCI_P2PDMA_MAP_BUS_ADDR,
  PCI_P2PDMA_MAP_THRU_HOST_BRIDGE,
};
// dma-map-ops.h 6.1 :430 / 6.12 :475 {pgmap, map, bus_off}; 7.3 pci-p2pdma.h :171 {mem, map}. `map`
// is the enum itself: libbpf matches an enum member only with an enum (7.3's is unsigned).
struct pci_p2pdma_map_state___any {
  struct dev_pagemap* pgmap;
  struct p2pdma_provider* mem;
  enum pci_p2pdma_map_type map;
} PAI;

struct scatterlist {
  unsigned int length;
} PAI;
struct sg_table {
  unsigned int nents;
} PAI;

struct gendisk {
  char disk_name[32];
} PAI;
struct request_queue {
  struct gendisk* disk;
} PAI;
struct block_device {
  struct gendisk* bd_disk;
} PAI;
struct request {
  struct request_queue* q;
  unsigned int cmd_flags;
  unsigned int __data_len;
} PAI;
struct bio {
  struct block_device* bi_bdev;
  unsigned int bi_opf;
} PAI;

// The process tree `watch -- COMMAND` counts (tp_btf/sched_process_fork's child).
struct task_struct {
  int tgid;
} PAI;

// blk-mq-dma.h (6.17+): the request's DMA iterator with its P2P state.
struct blk_dma_iter___any {
  struct pci_p2pdma_map_state___any p2pdma;
} PAI;

enum req_op {
  REQ_OP_READ = 0,
  REQ_OP_WRITE = 1,
  REQ_OP_DRV_IN = 34,
  REQ_OP_DRV_OUT = 35,
};
enum dma_data_direction {
  DMA_BIDIRECTIONAL = 0,
  DMA_TO_DEVICE = 1,
  DMA_FROM_DEVICE = 2,
};
