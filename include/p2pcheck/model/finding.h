// One check's outcome: a level, a one-line reason, the evidence it rests on, and the fix.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "p2pcheck/model/pci.h"

namespace p2pcheck {

enum class Level { kPass, kInfo, kWarn, kFail, kUnknown };
const char* to_string(Level level);  // "PASS", "INFO", "WARN", "FAIL", "UNKNOWN"

// Where a finding's level came from (JSON `state`). Only kObserved, with evidence, may PASS.
enum class Provenance {
  kObserved,    // what the input showed (its evidence says which file and value)
  kNotCarried,  // the input's format cannot carry the fact (`not_carried` names the format)
  kUnreadable,  // the input should hold it but it could not be read (permission, missing file)
  kSupplied,    // a value the user gave for what the input lacks (--kernel-release, --kernel-config, --cpu)
  kWhatIf,      // about a what-if kernel (--what-if-kernel), not the one the input runs
};
const char* to_string(Provenance p);  // "observed", "not_carried", "unreadable", "supplied", "what_if"

struct Evidence {
  std::string file;   // the file read, as a path inside the source ("/proc/cmdline")
  std::string value;  // what it said that matters ("intel_iommu=on")
};

struct Finding {
  std::string id;  // stable, for scripts: "kernel.config_p2pdma", "storage.stack"
  Level level = Level::kInfo;
  std::string subject;  // what it is about: "", "nvme1n1", "0000:41:00.0"
  std::string message;  // one line: what is true and why it matters
  std::vector<Evidence> evidence;
  std::string fix;  // what to do, and what it costs; empty when nothing is to be done
  // Which of the id's problems this is, where one id has several ("md", "dm-crypt" for storage.stack):
  // fleet groups hosts by id and cause, each group with its own fix. Empty: the id says it all.
  std::string cause;
  // The PCI functions it is about (a GPU, the NVMe under a storage stack); empty: the whole machine.
  std::vector<Bdf> devices;
  // Where the level came from: empty when from what the source showed; else the phrase of what its
  // format cannot carry ("not in this lspci output"). Such a finding is UNKNOWN (or INFO where the
  // check could at most warn), never FAIL or WARN (JSON `state`: observed / not_carried).
  std::string not_carried;
  // kObserved unless the producer says otherwise; finish_provenance() settles not_carried and unreadable.
  Provenance state = Provenance::kObserved;
};

// A finding's state made consistent: kNotCarried when `not_carried` is set, kUnreadable for an
// UNKNOWN that claims to be observed (nothing observed makes a fact unknown), else as given.
void finish_provenance(Finding& finding);

// What to do about a fact a dump or plan cannot carry: look at the machine itself.
inline constexpr const char* kNotCarriedFix =
    "run p2pcheck on the machine itself, or have `p2pcheck capture -o host.tar.zst` run there and replay that";

// What to do about a fact only root can read. Here: run as root. On a capture or dump there is no
// root to become: ask the machine's owner for a capture taken as root. `with` adds a condition
// ("with amdgpu loaded").
std::string as_root_fix(bool from_dump, std::string_view with = "");

// Findings of one check that differ only in the device they are about, and that say the same thing
// for the same not-carried reason (8 GPUs whose driver an lspci dump does not show), become one
// finding naming every device. Findings seen in the source are left as they are.
std::vector<Finding> merge_not_carried(std::vector<Finding> findings);

// Every text of the findings (subject, message, evidence, fix) escaped as any name from input
// (source/printable.h): a driver name, mount point or model string in a message cannot add a line
// to the output. What the checks write themselves is printable already and stays as it is.
void make_printable(std::vector<Finding>& findings);

// Orders levels: PASS 0 < INFO 1 < WARN 2 < UNKNOWN 3 < FAIL 4.
int severity(Level level);
// The worst level among findings, in the order FAIL > UNKNOWN > WARN > INFO > PASS.
Level worst(const std::vector<Finding>& findings);

}  // namespace p2pcheck
