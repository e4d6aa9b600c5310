// What storage.cc takes from the files that judge parts of the block layer on their own.
#pragma once

#include <vector>

#include "p2pcheck/checks/storage.h"
#include "p2pcheck/model/finding.h"

namespace p2pcheck::storage_detail {

// storage.nvme_multipath: one finding for every native multipath head, or the note on the module
// parameter when there is none (storage_multipath.cc).
std::vector<Finding> multipath_findings(const StorageLayout& layout);

}  // namespace p2pcheck::storage_detail
