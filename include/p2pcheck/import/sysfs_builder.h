// Builds the sysfs/proc tree an import describes: one directory per PCI function below its host
// bridge and upstream bridges, the attribute files the format carries (and only those), the
// /sys/bus/pci/devices links, and /manifest.json with the notes of what stayed unknown.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/model/pci.h"
#include "p2pcheck/source/memory_source.h"

namespace p2pcheck {

struct SynthFunction {
  Bdf bdf;
  std::optional<Bdf> parent;  // the bridge whose secondary bus it is on; nullopt on a root bus
  std::string sysfs_path;     // when the format gives it (udev); else derived from the parents
  std::uint16_t vendor = 0, device = 0;
  std::optional<std::uint16_t> subsystem_vendor, subsystem_device;
  std::uint32_t class_code = 0;
  std::optional<std::uint8_t> revision;
  std::optional<std::string> config;  // nullopt: unknown, and no config file is written
  std::string driver;                 // empty: unknown or none
  std::optional<int> numa_node;
  std::optional<int> iommu_group;       // the group's number, linked as the kernel links it
  std::optional<std::string> resource;  // the `resource` file (BAR addresses, sizes, flags) when known
  std::optional<Bdf> physfn;            // an SR-IOV VF's PF, linked as the kernel links it
};

struct SynthNvme {
  std::string name;  // nvme0
  Bdf bdf;
  std::string model, serial, firmware;
  std::vector<std::string> namespaces;  // nvme0n1
};

// One record of an input left out: its kind, shared by the records one note groups ("devices have
// no config space dump"), which record (a PCI address, or "line 12"), and its whole note.
struct SkippedRecord {
  std::string kind, subject, text;
};

// "not in this lspci output", "not in this udev database": how the checks name what `format` lacks.
std::string not_carried_phrase(const std::string& format);

// Each PCI function's config space, as the analysis reads it (by its bus link or its canonical
// path): formats that describe devices without their registers (udev, hwloc) declare these.
inline constexpr const char* kConfigSpaces[] = {"/sys/bus/pci/devices/*/config", "/sys/devices/**/config"};

// What only the running machine holds and no device listing (lspci, udev, hwloc) carries: loaded
// modules, KFD, /proc/kallsyms, mounts and swap, the IOMMU, installed libraries, /boot and /etc.
// Each import declares these, then what else its own format lacks.
inline constexpr const char* kLiveOnlyAreas[] = {"/sys/module",
                                                 "/sys/class/kfd",
                                                 "/sys/class/iommu",
                                                 "/sys/kernel/iommu_groups",
                                                 "/proc/modules",
                                                 "/proc/kallsyms",
                                                 "/proc/mounts",
                                                 "/proc/self",
                                                 "/proc/swaps",
                                                 "/proc/driver",
                                                 "/proc/config.gz",
                                                 "/proc/cmdline",
                                                 "/proc/version",
                                                 "/boot",
                                                 "/lib/modules",
                                                 "/etc",
                                                 "/usr/lib",
                                                 "/usr/lib64",
                                                 "/opt",
                                                 "/run/p2pcheck",
                                                 "/sys/devices/**/mem_info_vram_total",
                                                 "/sys/devices/**/mem_info_vis_vram_total",
                                                 "/sys/devices/**/p2pmem"};
// The kernel's own files (release, version, command line, modules, mounts, IOMMU units) that a
// device listing (lspci, udev) does not carry.
inline constexpr const char* kKernelFiles[] = {"/proc/sys/kernel/osrelease",
                                               "/proc/version",
                                               "/proc/cmdline",
                                               "/proc/modules",
                                               "/proc/mounts",
                                               "/sys/class/iommu"};
// The drivers bound to PCI functions, for formats that do not name them (lspci without -k, hwloc).
inline constexpr const char* kDriverAreas[] = {"/sys/devices/**/driver", "/sys/bus/pci/devices/*/driver",
                                               "/sys/bus/pci/drivers"};

class SysfsBuilder {
 public:
  SysfsBuilder(std::string format, std::string source_name);

  void add_function(SynthFunction fn);
  bool has_function(const Bdf& bdf) const { return functions_.count(bdf) != 0; }
  std::size_t function_count() const { return functions_.size(); }
  // The first record left out ("" when none), for an error when nothing usable is left.
  std::string first_skipped() const { return input_notes_.empty() ? "" : input_notes_.front(); }
  // How many records were left out.
  std::size_t skipped_count() const { return skipped_; }
  void add_nvme(SynthNvme nvme);
  void set_file(const std::string& path, std::string bytes) { files_[path] = std::move(bytes); }
  bool has_file(const std::string& path) const { return files_.count(path) != 0; }
  // A file the format does not carry: its reads fail ("unknown"), they do not find it missing.
  void unknown(const std::string& path, const std::string& why) { unknown_[path] = why; }
  // Whole areas the format cannot carry (patterns as in NotCarried, source.h): a file missing there
  // reads as "not in this <format>", so the checks say so instead of finding it absent.
  void not_carried(std::string pattern) { not_carried_.push_back(std::move(pattern)); }
  void note(std::string text) { notes_.push_back(std::move(text)); }
  // A record of the input that could not be read and was left out, the rest still analysed:
  // "FILE: line N: what was odd". The first kMaxInputNotes are kept, the rest counted.
  void skipped(std::string what);
  // The same for a record of a `kind` many records share ("devices have no config space dump"):
  // the replay prints one note per kind with its `subject`s ("0000:00:01.0"), not one per record.
  void skipped(const std::string& kind, std::string subject, std::string what);
  // A record of no kind ("") is said alone, as skipped(text).
  void skipped(SkippedRecord r) {
    if (r.kind.empty()) return skipped(std::move(r.text));
    skipped(r.kind, std::move(r.subject), std::move(r.text));
  }
  static constexpr std::size_t kMaxInputNotes = 50;
  void set_hostname(std::string name) { hostname_ = std::move(name); }
  // A member of /manifest.json the format adds about itself (a plan's description and names).
  void describe(const std::string& key, nlohmann::ordered_json value) { described_[key] = std::move(value); }

  // Throws Error when a parent is missing or the parents form a loop.
  MemoryTree finish();

 private:
  std::string path_of(const Bdf& bdf, int depth = 0) const;
  std::string format_, source_;
  std::map<Bdf, SynthFunction> functions_;
  std::vector<SynthNvme> nvmes_;
  std::map<std::string, std::string> files_;
  std::map<std::string, std::string> unknown_;
  std::vector<std::string> notes_;
  std::vector<std::string> input_notes_;
  std::vector<InputNoteGroup> groups_;  // in the order of their first record
  std::size_t skipped_ = 0, grouped_ = 0;
  std::vector<std::string> not_carried_;
  std::string hostname_;
  nlohmann::ordered_json described_ = nlohmann::ordered_json::object();
};

}  // namespace p2pcheck
