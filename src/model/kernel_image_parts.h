// Between kernel_image.cc (an image and the files beside it) and kernel_package.cc (a directory,
// a .deb or .rpm): a kernel's parts as bytes, however they were found.
#pragma once

#include <string>

#include "p2pcheck/model/kernel_image.h"

namespace p2pcheck {

struct KernelParts {
  std::string image, image_name;  // a bzImage or a vmlinux, and what it is called
  std::string system_map, config, config_name;
  std::string release;  // from a file name (boot/vmlinuz-REL, lib/modules/REL/vmlinuz), when there is one
};

// The image and what lies beside it in `dir`: System.map[-REL], config[-REL].
KernelParts parts_beside(const std::string& dir, const std::string& name);
// Release, config and table from the parts; Error naming `file` when the image is none.
KernelImage image_from_parts(const std::string& file, KernelParts parts);

}  // namespace p2pcheck
