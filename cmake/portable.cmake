# The portable build (issue 49; packaging/README.md "Portable binary"): one x86_64 executable for any
# glibc Linux from RHEL 8 / SLES 15 / Ubuntu 20.04 on. Compiled exactly as the Debian build (same
# flags, so ccache shares it), but linked differently:
#   - every library statically (libpci built from Debian's source by packaging/release/static-libs.sh,
#     the rest from Debian 12's -dev packages), libstdc++ and libgcc too;
#   - glibc dynamically, against Debian bullseye's glibc 2.31 (P2PCHECK_PORTABLE_SYSROOT, a debootstrap
#     chroot from packaging/release/chroot.sh), so the linker binds each symbol to the oldest version
#     that glibc offers; packaging/portable/glibc_compat.c covers what Debian 12's static libraries
#     compiled against glibc 2.36 reference beyond that.
# Included from CMakeLists.txt before the find_package calls, so they find the .a files.
set(P2PCHECK_PORTABLE_SYSROOT "" CACHE PATH "glibc sysroot the portable binary links against (bullseye chroot)")
set(P2PCHECK_PORTABLE_STATIC "" CACHE PATH "prefix of the static libraries Debian lacks (static-libs.sh)")
if(NOT EXISTS "${P2PCHECK_PORTABLE_SYSROOT}/usr/lib/x86_64-linux-gnu/libc_nonshared.a")
  message(FATAL_ERROR "P2PCHECK_PORTABLE needs P2PCHECK_PORTABLE_SYSROOT: a Debian bullseye root with libc6-dev "
                      "(packaging/release/chroot.sh bullseye)")
endif()
if(NOT EXISTS "${P2PCHECK_PORTABLE_STATIC}/lib/libpci.a")
  message(FATAL_ERROR "P2PCHECK_PORTABLE needs P2PCHECK_PORTABLE_STATIC with lib/libpci.a (packaging/release/static-libs.sh)")
endif()
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
set(ENV{PKG_CONFIG_PATH} "${P2PCHECK_PORTABLE_STATIC}/lib/pkgconfig")

# The static libraries' own dependencies (pkg-config --static), at the end of every link line in
# one group (static archives are searched in order).
pkg_check_modules(P2PCHECK_STATIC_DEPS REQUIRED libarchive libxml-2.0 libelf)
set(P2PCHECK_STATIC_DEP_FILES "")
foreach(lib ${P2PCHECK_STATIC_DEPS_STATIC_LIBRARIES})
  if(NOT lib MATCHES "^(m|dl|pthread|rt|c)$")  # glibc's own: from the sysroot, dynamically
    find_library(P2PCHECK_STATIC_${lib} NAMES lib${lib}.a REQUIRED)
    list(APPEND P2PCHECK_STATIC_DEP_FILES ${P2PCHECK_STATIC_${lib}})
  endif()
endforeach()
list(REMOVE_DUPLICATES P2PCHECK_STATIC_DEP_FILES)
list(JOIN P2PCHECK_STATIC_DEP_FILES " " static)
set(CMAKE_CXX_STANDARD_LIBRARIES "-Wl,--start-group ${static} -Wl,--end-group -ldl -lpthread -lrt -lm")

# After the p2pcheck target exists: the static runtime, the sysroot, and the glibc shims.
function(p2pcheck_portable_link target)
  target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/packaging/portable/glibc_compat.c)
  # The sysroot's crt files (-B) and libraries (-L) come before GCC's own search directories, which
  # lead to the host's (Debian 12's) glibc. exp, log and pow: glibc_compat.c says why. No debug
  # information: every package strips it anyway, and writing ~150 MB of it made the link minutes long.
  set(lib ${P2PCHECK_PORTABLE_SYSROOT}/usr/lib/x86_64-linux-gnu)
  target_link_options(${target} PRIVATE --sysroot=${P2PCHECK_PORTABLE_SYSROOT} -B${lib}/ -L${lib}
                      -static-libstdc++ -static-libgcc -Wl,--wrap=exp,--wrap=log,--wrap=pow -Wl,--hash-style=both
                      -Wl,--strip-debug)
endfunction()
