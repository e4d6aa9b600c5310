// SPDX-License-Identifier: GPL-2.0
// The layout the watch probe's maps share with p2pcheck (live/bpf_watch.cc): one counter row per
// pair, path, direction and process. Plain C with fixed-width fields, no padding left implicit.
#pragma once

#define WATCH_NAME_LEN 24     // a PCI device name, "0000:03:00.0", with room for a VMD domain
#define WATCH_DISK_LEN 32     // DISK_NAME_LEN
#define WATCH_COMM_LEN 16     // TASK_COMM_LEN
#define WATCH_MAX_ROWS 8192   // counter rows; more are counted in dropped_rows, never lost silently
#define WATCH_MAX_TREE 65536  // processes of the watched command's tree; more are counted in tree_full

// How a request's data moved. The kernel's map types, normalised (their values moved in 6.16).
enum watch_path {
  WATCH_PATH_HOST = 0,              // no P2P page in the request: host memory
  WATCH_PATH_BUS_ADDR = 1,          // P2P, the NVMe given the PCI bus address
  WATCH_PATH_THRU_HOST_BRIDGE = 2,  // P2P through the root complex (CPU physical address or IOVA)
  WATCH_PATH_REFUSED = 3,           // the kernel's map said NOT_SUPPORTED: the request failed
  WATCH_PATH_STACK_REFUSED = 4,     // md, dm or loop refused to pin P2P pages (-EREMOTEIO)
};

enum watch_dir {
  WATCH_DIR_TO_DEVICE = 0,   // storage -> memory (a read)
  WATCH_DIR_TO_STORAGE = 1,  // memory -> storage (a write)
  WATCH_DIR_OTHER = 2,
};

struct watch_key {
  char provider[WATCH_NAME_LEN];  // the P2P memory's PCI device; empty for host memory
  char client[WATCH_NAME_LEN];    // the DMA device (the NVMe function); empty when not known
  char disk[WATCH_DISK_LEN];      // the request's disk; empty for a refusal not yet completed
  char comm[WATCH_COMM_LEN];
  unsigned int tgid;
  unsigned char path;  // enum watch_path
  unsigned char dir;   // enum watch_dir
  unsigned char tree;  // 1: the submitter is in the watched command's process tree (map `tree`)
  unsigned char pad;
};

struct watch_value {
  unsigned long long requests;  // completed (or, for refusals, refused) requests
  unsigned long long bytes;     // bytes completed without error
  unsigned long long segments;  // P2P segments mapped (0 where the hook does not see segments)
  unsigned long long errors;    // requests that completed with an error
  unsigned long long error_bytes;
  unsigned int last_status;  // the last error's blk_status_t (0 = none seen)
  unsigned int requeues;     // times these requests were requeued before they completed
};

// Counters of what the probe could not attribute; read from the object's .bss.
struct watch_totals {
  unsigned long long unpaired;      // a P2P mapping no request issue claimed
  unsigned long long dropped_rows;  // a row that did not fit WATCH_MAX_ROWS
  unsigned long long inflight_full;
  unsigned long long tree_full;  // a process of the watched tree that did not fit WATCH_MAX_TREE
};
