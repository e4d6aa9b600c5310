/* The portable binary links against glibc 2.31 (cmake/portable.cmake), but GCC 12's libstdc++.a and
 * libgcc_eh.a, Debian 12's static libraries and p2pcheck itself were compiled against glibc 2.36 and
 * reference a few newer symbols. Each is defined here, so the binary needs no glibc newer than its floor
 * (packaging/README.md, checked by packaging/release/glibc-floor.sh); each behaves as glibc's does,
 * or conservatively. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

/* glibc 2.32: libstdc++ skips atomic reference counting while this is non-zero. Zero means "maybe
 * threaded": always atomic, correct and a little slower. */
char __libc_single_threaded = 0;

/* glibc 2.36: arc4random (libstdc++'s std::random_device) and arc4random_buf (libarchive). The
 * kernel's random bytes through getrandom (glibc 2.25), /dev/urandom where getrandom is refused;
 * never a predictable value (abort rather). */
static void random_bytes(void* buf, size_t len) {
  unsigned char* at = buf;
  while (len > 0) {
    ssize_t got = getrandom(at, len, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
      got = fd >= 0 ? read(fd, at, len) : -1;
      if (fd >= 0) close(fd);
      if (got <= 0) abort();
    }
    at += got;
    len -= (size_t)got;
  }
}

uint32_t arc4random(void) {
  uint32_t value;
  random_bytes(&value, sizeof value);
  return value;
}

void arc4random_buf(void* buf, size_t len) { random_bytes(buf, len); }

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

/* glibc 2.32: strerrorname_np, the errno's macro name ("EIO"; verify names the errors of transfers).
 * The names are Linux's, from <errno.h> itself; NULL for a number without one, as glibc. */
#define E(name) [name] = #name
static const char* const errno_names[] = {
  E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG), E(ENOEXEC), E(EBADF), E(ECHILD),
  E(EAGAIN), E(ENOMEM), E(EACCES), E(EFAULT), E(ENOTBLK), E(EBUSY), E(EEXIST), E(EXDEV), E(ENODEV),
  E(ENOTDIR), E(EISDIR), E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY), E(ETXTBSY), E(EFBIG), E(ENOSPC),
  E(ESPIPE), E(EROFS), E(EMLINK), E(EPIPE), E(EDOM), E(ERANGE), E(ENAMETOOLONG), E(ENOLCK), E(ENOSYS),
  E(ENOTEMPTY), E(ELOOP), E(ENOMSG), E(EIDRM), E(ECHRNG), E(EL2NSYNC), E(EL3HLT), E(EL3RST), E(ELNRNG),
  E(EUNATCH), E(ENOCSI), E(EL2HLT), E(EBADE), E(EBADR), E(EXFULL), E(ENOANO), E(EBADRQC), E(EBADSLT),
  E(EBFONT), E(ENOSTR), E(ENODATA), E(ETIME), E(ENOSR), E(ENONET), E(ENOPKG), E(EREMOTE), E(ENOLINK),
  E(EADV), E(ESRMNT), E(ECOMM), E(EPROTO), E(EMULTIHOP), E(EDOTDOT), E(EBADMSG), E(EOVERFLOW),
  E(ENOTUNIQ), E(EBADFD), E(EREMCHG), E(ELIBACC), E(ELIBBAD), E(ELIBSCN), E(ELIBMAX), E(ELIBEXEC),
  E(EILSEQ), E(ERESTART), E(ESTRPIPE), E(EUSERS), E(ENOTSOCK), E(EDESTADDRREQ), E(EMSGSIZE),
  E(EPROTOTYPE), E(ENOPROTOOPT), E(EPROTONOSUPPORT), E(ESOCKTNOSUPPORT), E(EPFNOSUPPORT),
  E(EAFNOSUPPORT), E(EADDRINUSE), E(EADDRNOTAVAIL), E(ENETDOWN), E(ENETUNREACH), E(ENETRESET),
  E(ECONNABORTED), E(ECONNRESET), E(ENOBUFS), E(EISCONN), E(ENOTCONN), E(ESHUTDOWN), E(ETOOMANYREFS),
  E(ETIMEDOUT), E(ECONNREFUSED), E(EHOSTDOWN), E(EHOSTUNREACH), E(EALREADY), E(EINPROGRESS), E(ESTALE),
  E(EUCLEAN), E(ENOTNAM), E(ENAVAIL), E(EISNAM), E(EREMOTEIO), E(EDQUOT), E(ENOMEDIUM), E(EMEDIUMTYPE),
  E(ECANCELED), E(ENOKEY), E(EKEYEXPIRED), E(EKEYREVOKED), E(EKEYREJECTED), E(EOWNERDEAD),
  E(ENOTRECOVERABLE), E(ERFKILL),
};
#undef E

const char* strerrorname_np(int err) {
  if (err < 0 || (size_t)err >= sizeof errno_names / sizeof errno_names[0]) return NULL;
  return errno_names[err];
}

/* glibc 2.30: getdents64, the directory listing of source/host_files.cc: the system call itself, as
 * glibc's wrapper is. */
ssize_t getdents64(int fd, void* buf, size_t count) { return syscall(SYS_getdents64, fd, buf, count); }
