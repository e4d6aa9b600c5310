// The synthesised sysfs of an import, laid out as the kernel lays out the real one.
#include "p2pcheck/import/sysfs_builder.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_text.h"
#include "p2pcheck/source/sysfs_text.h"
#include "p2pcheck/source/version.h"

namespace p2pcheck {
namespace {

// A sysfs ID attribute as the kernel prints it: "0x1002\n".
std::string id_attr(unsigned value, int digits) { return "0x" + hex(value, digits) + "\n"; }

}  // namespace

std::string not_carried_phrase(const std::string& format) {
  if (format == "lspci" || format == "lspci -vvv") return "not in this lspci output";
  if (format == "udev") return "not in this udev database";
  if (format == "hwloc") return "not in this hwloc XML";
  if (format == "sosreport") return "not in this sosreport";
  if (format == "nvidia-bug-report") return "not in this nvidia-bug-report";
  if (format == "plan") return "not in a plan";
  return "not in this " + format + " input";
}

SysfsBuilder::SysfsBuilder(std::string format, std::string source_name)
    : format_(std::move(format)), source_(std::move(source_name)) {}

void SysfsBuilder::add_function(SynthFunction fn) {
  if (functions_.count(fn.bdf)) throw Error(source_, fn.bdf.str() + " appears twice");
  functions_.emplace(fn.bdf, std::move(fn));
}

void SysfsBuilder::add_nvme(SynthNvme nvme) { nvmes_.push_back(std::move(nvme)); }

std::string SysfsBuilder::path_of(const Bdf& bdf, int depth) const {
  const SynthFunction& fn = functions_.at(bdf);
  if (!fn.sysfs_path.empty()) return fn.sysfs_path;
  if (depth > 256)
    throw Error(source_, "PCI bridges form a loop around " + bdf.str() + "; the bus numbers are inconsistent");
  if (!fn.parent) {
    char hb[32];
    std::snprintf(hb, sizeof hb, "/sys/devices/pci%04x:%02x", fn.bdf.domain, fn.bdf.bus);
    return std::string(hb) + "/" + bdf.str();
  }
  if (!functions_.count(*fn.parent))
    throw Error(source_, bdf.str() + ": its upstream bridge " + fn.parent->str() + " is not in the input");
  return path_of(*fn.parent, depth + 1) + "/" + bdf.str();
}

void SysfsBuilder::skipped(std::string what) {
  if (++skipped_ > kMaxInputNotes) return;
  // A record of no kind is a group of its own (the kMaxInputNotes first, as the notes).
  if (groups_.size() < kMaxInputNoteGroups) groups_.push_back({"", 1, {}, what});
  ++grouped_;
  input_notes_.push_back(std::move(what));
}

void SysfsBuilder::skipped(const std::string& kind, std::string subject, std::string what) {
  ++skipped_;
  // Kinds are a handful per format: a linear search stays short.
  auto group = std::find_if(groups_.begin(), groups_.end(), [&](const auto& g) { return g.kind == kind; });
  if (group == groups_.end() && groups_.size() < kMaxInputNoteGroups)
    group = groups_.insert(groups_.end(), {kind, 0, {}, what});
  if (group != groups_.end()) {
    ++group->count;
    ++grouped_;
    if (group->subjects.size() < kMaxGroupSubjects) group->subjects.push_back(std::move(subject));
  }
  if (skipped_ <= kMaxInputNotes) input_notes_.push_back(std::move(what));
}

namespace {

// A function's directory as the kernel fills it: its ID attributes, config, driver link and the
// /sys/bus/pci/devices link to it.
void add_function_files(MemoryTree& tree, const std::string& dir, const Bdf& bdf, const SynthFunction& fn) {
  tree.add_dir(dir);
  tree.add_file(dir + "/vendor", id_attr(fn.vendor, 4));
  tree.add_file(dir + "/device", id_attr(fn.device, 4));
  tree.add_file(dir + "/class", id_attr(fn.class_code, 6));
  if (fn.subsystem_vendor) tree.add_file(dir + "/subsystem_vendor", id_attr(*fn.subsystem_vendor, 4));
  if (fn.subsystem_device) tree.add_file(dir + "/subsystem_device", id_attr(*fn.subsystem_device, 4));
  if (fn.revision) tree.add_file(dir + "/revision", id_attr(*fn.revision, 2));
  if (fn.numa_node) tree.add_file(dir + "/numa_node", std::to_string(*fn.numa_node) + "\n");
  if (fn.config) tree.add_file(dir + "/config", *fn.config);
  if (fn.resource) tree.add_file(dir + "/resource", *fn.resource);
  if (fn.iommu_group)
    tree.add_link(dir + "/iommu_group", "/sys/kernel/iommu_groups/" + std::to_string(*fn.iommu_group));
  if (!fn.driver.empty()) {
    tree.add_dir("/sys/bus/pci/drivers/" + fn.driver);
    tree.add_link(dir + "/driver", "/sys/bus/pci/drivers/" + fn.driver);
  }
  // As the kernel links it: relative, from /sys/bus/pci/devices up to /sys.
  tree.add_link("/sys/bus/pci/devices/" + bdf.str(), "../../.." + dir.substr(4));
}

// An NVMe controller's directory `dir` below its function, its /sys/class/nvme link and its
// namespaces' /sys/block links.
void add_nvme_files(MemoryTree& tree, const std::string& dir, const SynthNvme& n) {
  tree.add_link("/sys/class/nvme/" + n.name, "../.." + dir.substr(4));
  tree.add_link(dir + "/device", "../../../" + n.bdf.str());
  if (!n.model.empty()) tree.add_file(dir + "/model", n.model + "\n");
  if (!n.serial.empty()) tree.add_file(dir + "/serial", n.serial + "\n");
  if (!n.firmware.empty()) tree.add_file(dir + "/firmware_rev", n.firmware + "\n");
  for (const auto& ns : n.namespaces) {
    tree.add_dir(dir + "/" + ns);
    tree.add_link("/sys/block/" + ns, "../devices" + dir.substr(12) + "/" + ns);
  }
}

// The manifest's first members, as a capture's: an import has no capture time and no root.
nlohmann::ordered_json manifest_head(const std::string& format, const std::string& source,
                                     const std::string& hostname) {
  nlohmann::ordered_json m;
  m["schema"] = kCaptureSchema;
  m["schema_version"] = kCaptureSchemaVersion;
  m["tool_version"] = kToolVersion;
  m["format"] = format;
  m["captured_at"] = nullptr;
  m["source"] = source;
  m["hostname"] = hostname.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(hostname);
  m["as_root"] = nullptr;
  return m;
}

}  // namespace

MemoryTree SysfsBuilder::finish() {
  MemoryTree tree;
  tree.add_dir("/sys/bus/pci/devices");
  bool complete = !functions_.empty();
  int without_config = 0;
  for (const auto& [bdf, fn] : functions_) {
    std::string dir = path_of(bdf);
    add_function_files(tree, dir, bdf, fn);
    if (fn.physfn && !functions_.count(*fn.physfn))
      throw Error(source_, bdf.str() + ": its physical function " + fn.physfn->str() + " is not in the input");
    if (fn.physfn) tree.add_link(dir + "/physfn", path_of(*fn.physfn));
    // A format may give config space as a file of its own (a sosreport's proc/bus/pci copies).
    auto file = files_.find(dir + "/config");
    const std::string* config = fn.config ? &*fn.config : file != files_.end() ? &file->second : nullptr;
    if (!config || config->size() < 4096) complete = false;
    if (!config) ++without_config;
  }
  for (const auto& n : nvmes_)
    if (functions_.count(n.bdf)) add_nvme_files(tree, path_of(n.bdf) + "/nvme/" + n.name, n);
  for (const auto& [path, bytes] : files_) tree.add_file(path, bytes);
  // The host name where the analysis reads it (the machine's identity), unless the input had the file.
  if (!hostname_.empty() && !tree.find("/proc/sys/kernel/hostname"))
    tree.add_file("/proc/sys/kernel/hostname", hostname_ + "\n");
  for (const auto& [path, why] : unknown_)
    if (!tree.find(path)) tree.add_failure(path, FileRead{ReadStatus::kFailed, "", why});
  if (without_config)
    notes_.push_back(std::to_string(without_config) + " of " + std::to_string(functions_.size()) +
                     " PCI functions have no config space in this " + format_ +
                     " input: their ACS, port type and links are unknown (not absent)");

  NotCarried not_carried{format_, not_carried_phrase(format_), not_carried_};
  tree.set_not_carried(not_carried);

  nlohmann::ordered_json m = manifest_head(format_, source_, hostname_);
  m["config_space_complete"] = complete;
  m["redacted"] = false;
  m["notes"] = notes_;
  if (skipped_ > grouped_ && groups_.size() < kMaxInputNoteGroups)
    groups_.push_back(
        {"", skipped_ - grouped_, {}, "and " + std::to_string(skipped_ - grouped_) + " more records left out"});
  if (skipped_ > input_notes_.size())
    input_notes_.push_back("and " + std::to_string(skipped_ - input_notes_.size()) + " more records left out");
  if (!input_notes_.empty()) m["input_notes"] = input_notes_;
  if (!groups_.empty()) m["input_note_groups"] = input_note_groups_json(groups_);
  if (!not_carried.empty()) m["not_carried"] = not_carried_json(not_carried);
  for (auto& [key, value] : described_.items()) m[key] = value;
  tree.add_file(kManifestPath, json_text(m) + "\n");
  return tree;
}

}  // namespace p2pcheck
