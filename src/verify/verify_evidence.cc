#include "p2pcheck/verify/verify_evidence.h"

#include <array>

#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

AerSnapshot read_aer(Source& source, const std::vector<Bdf>& devices) {
  AerSnapshot snap;
  for (const Bdf& bdf : devices) {
    bool any = false;
    for (const char* file : kAerFiles) {
      const std::string path = "/sys/bus/pci/devices/" + bdf.str() + "/" + file;
      FileRead r = source.read(path);
      if (r.status == ReadStatus::kMissing) continue;
      any = true;
      if (!r.ok()) {
        snap.unreadable.push_back(bdf.str() + " " + file + ": " + (r.error.empty() ? "unreadable" : r.error));
        continue;
      }
      for (std::string_view rest = r.bytes; !rest.empty();) {
        std::array<std::string_view, 3> words;  // "name count"; a third word makes it no counter
        if (first_words(next_line(rest), words) != 2) continue;
        if (auto n = parse_dec(words[1]); n && *n >= 0)
          snap.counts[bdf][std::string(file) + ":" + std::string(words[0])] = static_cast<std::uint64_t>(*n);
      }
    }
    if (!any) snap.not_reported.push_back(bdf);
  }
  return snap;
}

std::vector<AerChange> aer_changes(const AerSnapshot& before, const AerSnapshot& after) {
  std::vector<AerChange> out;
  for (const auto& [bdf, counters] : after.counts) {
    auto b = before.counts.find(bdf);
    for (const auto& [name, value] : counters) {
      std::uint64_t old = 0;
      if (b != before.counts.end())
        if (auto it = b->second.find(name); it != b->second.end()) old = it->second;
      if (value != old) out.push_back({bdf, name, old, value});
    }
  }
  return out;
}

std::optional<int> nvme_io_timeout(Source& source) {
  FileRead r = source.read("/sys/module/nvme_core/parameters/io_timeout");
  if (!r.ok()) return std::nullopt;
  auto v = parse_dec(trim(r.bytes));
  if (!v || *v <= 0) return std::nullopt;
  return static_cast<int>(*v);
}

}  // namespace p2pcheck
