// A kernel before it boots: an image or package given to --what-if-kernel, read for its release, its
// config and its pci_p2pdma_whitelist[]. Accepted: an x86 bzImage/vmlinuz (the payload decompressed
// with libarchive: gzip, xz, lzma, zstd, lz4, bzip2) or a vmlinux ELF, each with the System.map beside
// it; a directory holding them (/boot, /lib/modules/REL, a build's cache directory); a kernel .deb or
// .rpm (libarchive reads ar, tar and cpio). Other architectures' compressed images (arm64 Image.gz)
// are not unpacked: give their vmlinux and System.map. All sizes bounded; the bytes are hostile.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "p2pcheck/model/kernel_table.h"
#include "p2pcheck/model/machine.h"

namespace p2pcheck {

struct KernelImage {
  std::string file;     // what was given, as given
  std::string release;  // "6.12.118", from the package names, the banner or the bzImage header
  KernelConfig config;  // config-REL beside it, in the package, or IKCONFIG inside it; unknown otherwise
  KernelTable table;    // origin kKernelImage, or kNone with why_not
};

// Limits: a decompressed vmlinux (6.12 x86_64 defconfig: ~60 MB), a package (RHEL's kernel-core:
// ~70 MB), a member read from it.
inline constexpr std::size_t kMaxVmlinuxBytes = 512u << 20;
inline constexpr std::size_t kMaxPackageBytes = 1u << 30;

// Whether --what-if-kernel's value names a file or directory rather than a release.
bool names_kernel_image(const std::string& value);
// Reads what `path` names. Throws Error naming the file and what was expected when it is none of the
// accepted forms; a kernel whose table cannot be read is returned with table.why_not set.
KernelImage read_kernel_image(const std::string& path);

// The pieces, for tests: a bzImage's compressed payload decompressed (Error when it is not one);
// the release in a vmlinux's "Linux version ..." banner; the table of a vmlinux and System.map.
std::string bzimage_vmlinux(std::string_view bzimage, const std::string& file);
std::string decompress_bounded(std::string_view bytes, std::size_t cap, const std::string& file);
KernelTable vmlinux_table(const std::string& vmlinux, std::string_view system_map, const std::string& what);

}  // namespace p2pcheck
