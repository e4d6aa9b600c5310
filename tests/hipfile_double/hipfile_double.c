/*
 * Test double of the HIP runtime (libamdhip64) and hipFile (libhipfile) entry points that
 * p2pcheck verify uses, with the signatures of include/p2pcheck/hip_api.h. "VRAM" is host memory,
 * hipFileRead/Write are pread/pwrite on the registered fd, and amdgpu's per-process AIS counters
 * ("<storage BDF>:PCI_in" / ":PCI_out", in a per-GPU directory under
 * $P2PCHECK_DOUBLE_ROOT/sys/class/kfd/kfd/proc/<pid>/) are kept as files the test reads back through
 * a tree Source.
 *
 * Environment, read at each call:
 *   P2PCHECK_DOUBLE_GPUS   comma-separated PCI addresses HIP "sees"; unset or empty: no GPU
 *   P2PCHECK_DOUBLE_ROOT   where the KFD counter tree lives; unset: no counters
 *   P2PCHECK_DOUBLE_PEER   the storage device's PCI address (names the counter files)
 *   P2PCHECK_DOUBLE_MODE   p2p (default): I/O works and the counters grow
 *                          fallback:   I/O works, counters exist but never grow (a hipFile that
 *                                      bounces through host memory despite compat mode being off)
 *                          nocounters: I/O works, no counter files (amdgpu without AIS counters)
 *                          corrupt:    reads deliver one wrong byte
 *                          refuse:     I/O fails with ENODEV (amdgpu AIS: P2P not accessible)
 *                          noais:      hipGetProcAddress does not know hipAmdFileRead/Write
 * hipFileDriverOpen fails unless HIPFILE_ALLOW_COMPAT_MODE=false, so the tests prove p2pcheck
 * forbids compat mode before hipFile starts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

typedef struct {
  int err;
  int hip_drv_err;
} hipFileError_t;

typedef struct {
  int type;
  union {
    int fd;
    void *hFile;
  } handle;
  const void *fs_ops;
} hipFileDescr_t;

typedef union {
  void *handle;
  int fd;
  uint8_t pad[8];
} hipAmdFileHandle_t;

static int current_device;

static const char *env(const char *name) {
  const char *v = getenv(name);
  return v ? v : "";
}

static int mode_is(const char *m) {
  const char *mode = env("P2PCHECK_DOUBLE_MODE");
  if (!*mode) mode = "p2p";
  return strcmp(mode, m) == 0;
}

/* The i-th address of P2PCHECK_DOUBLE_GPUS into out (13 chars + NUL); returns the GPU count. */
static int gpu_at(int index, char *out) {
  const char *list = env("P2PCHECK_DOUBLE_GPUS");
  int count = 0;
  while (*list) {
    const char *comma = strchr(list, ',');
    size_t len = comma ? (size_t)(comma - list) : strlen(list);
    if (len > 0) {
      if (count == index && out) {
        size_t n = len < 31 ? len : 31;
        memcpy(out, list, n);
        out[n] = 0;
      }
      count++;
    }
    list += len + (comma ? 1 : 0);
  }
  return count;
}

static void mkdirs(char *path) {
  for (char *p = path + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      mkdir(path, 0755);
      *p = '/';
    }
  mkdir(path, 0755);
}

/* Adds `bytes` to one counter file (creating both of the pair, as kfd_ais_create_counter does). */
static void counter_add(const char *suffix, unsigned long long bytes) {
  const char *root = env("P2PCHECK_DOUBLE_ROOT");
  const char *peer = env("P2PCHECK_DOUBLE_PEER");
  if (!*root || !*peer || mode_is("nocounters")) return;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/sys/class/kfd/kfd/proc/%d/ais_%d", root, (int)getpid(), current_device + 1);
  mkdirs(dir);
  const char *names[] = {"PCI_in", "PCI_out"};
  for (int i = 0; i < 2; i++) {
    char file[4352];
    snprintf(file, sizeof file, "%s/%s:%s", dir, peer, names[i]);
    unsigned long long value = 0;
    FILE *f = fopen(file, "r");
    if (f) {
      if (fscanf(f, "%llu", &value) != 1) value = 0;
      fclose(f);
    }
    if (strcmp(names[i], suffix) == 0) value += bytes;
    f = fopen(file, "w");
    if (f) {
      fprintf(f, "%llu\n", value);
      fclose(f);
    }
  }
}

/* ---- HIP runtime ---------------------------------------------------------------------------- */

API int hipGetDeviceCount(int *count) {
  *count = gpu_at(-1, NULL);
  return *count ? 0 : 100; /* hipErrorNoDevice */
}

API int hipDeviceGetPCIBusId(char *id, int len, int device) {
  char bdf[32] = {0};
  if (device < 0 || device >= gpu_at(device, bdf)) return 101; /* hipErrorInvalidDevice */
  snprintf(id, (size_t)len, "%s", bdf);
  return 0;
}

API int hipSetDevice(int device) {
  if (device < 0 || device >= gpu_at(-1, NULL)) return 101;
  current_device = device;
  return 0;
}

API int hipMalloc(void **ptr, size_t size) {
  *ptr = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
  return *ptr ? 0 : 2; /* hipErrorOutOfMemory */
}

API int hipFree(void *ptr) {
  free(ptr);
  return 0;
}

API int hipMemcpy(void *dst, const void *src, size_t size, int kind) {
  (void)kind;
  memcpy(dst, src, size);
  return 0;
}

API const char *hipGetErrorString(int error) {
  switch (error) {
    case 0: return "hipSuccess";
    case 2: return "hipErrorOutOfMemory";
    case 100: return "hipErrorNoDevice";
    case 101: return "hipErrorInvalidDevice";
    default: return "hipErrorUnknown";
  }
}

API int hipRuntimeGetVersion(int *version) {
  *version = 70200000; /* "7.2.0": the double pretends to be a runtime with the AIS entry points */
  return 0;
}

API int hipAmdFileRead(hipAmdFileHandle_t h, void *p, uint64_t size, int64_t off, uint64_t *copied, int32_t *status) {
  (void)h, (void)p, (void)size, (void)off;
  *copied = 0;
  *status = 0;
  return 0;
}

API int hipAmdFileWrite(hipAmdFileHandle_t h, void *p, uint64_t size, int64_t off, uint64_t *copied, int32_t *status) {
  return hipAmdFileRead(h, p, size, off, copied, status);
}

API int hipGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags, int *status) {
  (void)version, (void)flags;
  *pfn = NULL;
  if (!mode_is("noais")) {
    if (strcmp(symbol, "hipAmdFileRead") == 0) *pfn = (void *)hipAmdFileRead;
    if (strcmp(symbol, "hipAmdFileWrite") == 0) *pfn = (void *)hipAmdFileWrite;
  }
  if (status) *status = *pfn ? 0 : 1; /* HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
  return *pfn ? 0 : 1;                /* hipErrorInvalidValue */
}

/* ---- hipFile -------------------------------------------------------------------------------- */

API hipFileError_t hipFileDriverOpen(void) {
  hipFileError_t e = {0, 0};
  if (strcmp(env("HIPFILE_ALLOW_COMPAT_MODE"), "false") != 0) {
    e.err = 5010; /* hipFileDriverError: the caller did not forbid compat mode */
    return e;
  }
  /* A hipFile that bounces anyway: the AIS counters exist (an earlier validated I/O) but stay put. */
  if (mode_is("fallback")) counter_add("none", 0);
  return e;
}

API hipFileError_t hipFileDriverClose(void) {
  hipFileError_t e = {0, 0};
  return e;
}

API hipFileError_t hipFileHandleRegister(void **fh, hipFileDescr_t *descr) {
  hipFileError_t e = {0, 0};
  if (descr->type != 1 || descr->handle.fd < 0) {
    e.err = 5022; /* hipFileInvalidValue */
    return e;
  }
  int *fd = malloc(sizeof *fd);
  *fd = descr->handle.fd;
  *fh = fd;
  return e;
}

API void hipFileHandleDeregister(void *fh) { free(fh); }

API hipFileError_t hipFileBufRegister(const void *base, size_t length, int flags) {
  (void)base, (void)length, (void)flags;
  hipFileError_t e = {0, 0};
  return e;
}

API hipFileError_t hipFileBufDeregister(const void *base) {
  (void)base;
  hipFileError_t e = {0, 0};
  return e;
}

API ssize_t hipFileRead(void *fh, void *base, size_t size, off_t file_offset, off_t buffer_offset) {
  if (mode_is("refuse")) {
    errno = ENODEV;
    return -1;
  }
  ssize_t n = pread(*(int *)fh, (char *)base + buffer_offset, size, file_offset);
  if (n < 0) return -1;
  if (mode_is("corrupt") && n > 4100) ((char *)base)[buffer_offset + 4100] ^= 0x5a;
  if (mode_is("p2p") || mode_is("corrupt")) counter_add("PCI_in", (unsigned long long)n);
  return n;
}

API ssize_t hipFileWrite(void *fh, const void *base, size_t size, off_t file_offset, off_t buffer_offset) {
  if (mode_is("refuse")) {
    errno = ENODEV;
    return -1;
  }
  ssize_t n = pwrite(*(int *)fh, (const char *)base + buffer_offset, size, file_offset);
  if (n < 0) return -1;
  if (mode_is("p2p") || mode_is("corrupt")) counter_add("PCI_out", (unsigned long long)n);
  return n;
}

API const char *hipFileGetOpErrorString(int status) {
  switch (status) {
    case 0: return "hipFile success";
    case 5008: return "hipFile IO not supported";
    case 5010: return "GPU IO driver error";
    case 5022: return "invalid value";
    default: return "hipFile error";
  }
}

API hipFileError_t hipFileGetVersion(unsigned *major, unsigned *minor, unsigned *patch) {
  hipFileError_t e = {0, 0};
  if (major) *major = 0;
  if (minor) *minor = 2;
  if (patch) *patch = 0;
  return e;
}
