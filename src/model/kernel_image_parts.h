// Between kernel_image.cc (an image and the files beside it) and kernel_package.cc (a directory,
// a .deb or .rpm): a kernel's parts as bytes, however they were found.
#pragma once

#include <archive.h>

#include <cstddef>
#include <memory>
#include <string>

#include "p2pcheck/model/kernel_image.h"

namespace p2pcheck {

struct KernelParts {
  std::string image, image_name;  // a bzImage or a vmlinux, and what it is called
  std::string system_map, config, config_name;
  std::string release;  // from a file name (boot/vmlinuz-REL, lib/modules/REL/vmlinuz), when there is one
};

struct ArchiveFree {
  void operator()(archive* a) const { archive_read_free(a); }
};
using ArchivePtr = std::unique_ptr<archive, ArchiveFree>;

// libarchive's reason for the last error, never null.
std::string archive_text(archive* a);
// The data of the archive's current member, at most `cap` bytes: Error naming `what` past that (a
// decompression bomb) or when it cannot be decompressed.
std::string read_archive_member(archive* a, std::size_t cap, const std::string& what);

// The image and what lies beside it in `dir`: System.map[-REL], config[-REL].
KernelParts parts_beside(const std::string& dir, const std::string& name);
// Release, config and table from the parts; Error naming `file` when the image is none.
KernelImage image_from_parts(const std::string& file, KernelParts parts);

}  // namespace p2pcheck
