/* The portable binary links against glibc 2.31 (cmake/portable.cmake), but GCC 12's libstdc++.a and
 * libgcc_eh.a and Debian 12's static libraries were compiled against glibc 2.36 and reference three
 * newer symbols. Each is defined here, so the binary needs no glibc newer than its floor
 * (packaging/README.md, checked by packaging/release/glibc-floor.sh); each behaves as glibc's does,
 * or conservatively. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

/* glibc 2.32: libstdc++ skips atomic reference counting while this is non-zero. Zero means "maybe
 * threaded": always atomic, correct and a little slower. */
char __libc_single_threaded = 0;

/* glibc 2.36: arc4random (libstdc++'s std::random_device). The kernel's random bytes through
 * getrandom (glibc 2.25), /dev/urandom where getrandom is refused; never a predictable value. */
uint32_t arc4random(void) {
  uint32_t value;
  for (;;) {
    ssize_t got = getrandom(&value, sizeof value, 0);
    if (got == (ssize_t)sizeof value) return value;
    if (got < 0 && errno == EINTR) continue;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      got = read(fd, &value, sizeof value);
      close(fd);
      if (got == (ssize_t)sizeof value) return value;
    }
    abort();
  }
}

/* glibc 2.35: _dl_find_object, with which GCC 12's unwinder finds the .eh_frame_hdr of the object
 * holding a return address (every C++ exception). Here the same answer comes from dl_iterate_phdr
 * (glibc 2.2.5), as the unwinder found it before. The structure is glibc's (bits/dl_find_object.h),
 * spelled out because glibc 2.31's headers lack it. */
struct found_object {
  unsigned long long flags;
  void* map_start;
  void* map_end;
  struct link_map* link_map;
  void* eh_frame;
  unsigned long long reserved[7];
};
int portable_dl_find_object(void* pc, struct found_object* result) __asm__("_dl_find_object");

struct find_object {
  uintptr_t pc;
  struct found_object* result;
  int found;
};

static int find_object_in(struct dl_phdr_info* info, size_t size, void* data) {
  struct find_object* want = data;
  uintptr_t low = UINTPTR_MAX, high = 0;
  void* eh_frame = NULL;
  int inside = 0;
  (void)size;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr)* phdr = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + phdr->p_vaddr;
    if (phdr->p_type == PT_LOAD) {
      uintptr_t end = start + phdr->p_memsz;
      if (start < low) low = start;
      if (end > high) high = end;
      if (want->pc >= start && want->pc < end) inside = 1;
    } else if (phdr->p_type == PT_GNU_EH_FRAME) {
      eh_frame = (void*)start;
    }
  }
  if (!inside) return 0;
  want->result->flags = 0;
  want->result->map_start = (void*)low;
  want->result->map_end = (void*)high;
  want->result->link_map = NULL;
  want->result->eh_frame = eh_frame;
  want->found = 1;
  return 1;
}

int portable_dl_find_object(void* pc, struct found_object* result) {
  struct find_object want = {(uintptr_t)pc, result, 0};
  dl_iterate_phdr(find_object_in, &want);
  return want.found ? 0 : -1;
}

/* glibc 2.29 gave exp, log and pow new symbol versions (faster code, same results within their
 * documented error); glibc 2.31 binds them there. The link wraps them (-Wl,--wrap=exp, ...:
 * cmake/portable.cmake) to glibc 2.2.5's, which every glibc has. */
double glibc_exp(double x);
double glibc_log(double x);
double glibc_pow(double x, double y);
__asm__(".symver glibc_exp, exp@GLIBC_2.2.5");
__asm__(".symver glibc_log, log@GLIBC_2.2.5");
__asm__(".symver glibc_pow, pow@GLIBC_2.2.5");
double __wrap_exp(double x) { return glibc_exp(x); }
double __wrap_log(double x) { return glibc_log(x); }
double __wrap_pow(double x, double y) { return glibc_pow(x, y); }
