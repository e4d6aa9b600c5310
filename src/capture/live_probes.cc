#include "live_probes.h"

#include <set>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_read.h"
#include "p2pcheck/source/json_text.h"
#include "p2pcheck/source/version.h"

namespace p2pcheck {
namespace {

using nlohmann::ordered_json;

ordered_json nvme_json(const NvmeIdentity& id) {
  ordered_json c;
  c["controller"] = id.controller;
  c["bdf"] = id.bdf.str();
  ordered_json ident;
  ident["available"] = id.identify_ok;
  if (id.identify_ok) {
    char hex[16];
    ident["model"] = id.model;
    ident["serial"] = id.serial;
    ident["firmware"] = id.firmware;
    std::snprintf(hex, sizeof hex, "%04x", id.vid);
    ident["vid"] = hex;
    std::snprintf(hex, sizeof hex, "%04x", id.ssvid);
    ident["ssvid"] = hex;
    ident["cmic"] = id.cmic;
    ident["oacs"] = id.oacs;
    ident["version"] = id.version;
    ident["ctratt"] = id.ctratt;
  } else {
    ident["reason"] = id.identify_error;
  }
  c["identify"] = ident;
  ordered_json regs;
  regs["available"] = id.registers_ok;
  if (id.registers_ok) {
    regs["cap"] = id.cap;
    regs["vs"] = id.vs;
    regs["cmbloc"] = id.cmb.cmbloc;
    regs["cmbsz"] = id.cmb.cmbsz;
    ordered_json cmb;
    cmb["size"] = id.cmb.size;
    if (id.cmb.size) {
      cmb["bar"] = id.cmb.bar;
      cmb["offset"] = id.cmb.offset;
      cmb["sqs"] = id.cmb.sqs;
      cmb["cqs"] = id.cmb.cqs;
      cmb["lists"] = id.cmb.lists;
      cmb["rds"] = id.cmb.rds;
      cmb["wds"] = id.cmb.wds;
      // nvme_map_cmb(): registered when size and BAR offset are 2 MiB aligned; published with WDS and RDS.
      bool aligned = id.cmb.size % (2u << 20) == 0 && id.cmb.offset % (2u << 20) == 0;
      cmb["p2pmem_expected"] = aligned;
      cmb["published_expected"] = aligned && id.cmb.wds && id.cmb.rds;
    }
    regs["cmb"] = cmb;
  } else {
    regs["reason"] = id.registers_error;
  }
  c["registers"] = regs;
  return c;
}

ordered_json library_json(const LibraryProbe& p) {
  ordered_json j;
  j["library"] = p.library;
  j["loaded"] = p.loaded;
  j["path"] = p.path.empty() ? ordered_json() : ordered_json(p.path);
  j["error"] = p.error.empty() ? ordered_json() : ordered_json(p.error);
  ordered_json symbols = ordered_json::object();
  for (const auto& [name, found] : p.symbols) symbols[name] = p.loaded ? ordered_json(found) : ordered_json();
  j["symbols"] = symbols;
  j["runtime_version"] = p.runtime_version ? ordered_json(*p.runtime_version) : ordered_json();
  return j;
}

ordered_json probe_doc(const char* schema) {
  ordered_json j;
  j["schema"] = schema;
  j["schema_version"] = 1;
  j["tool_version"] = kToolVersion;
  return j;
}

// The p2pprobe module's answers as the capture keeps them (/live/kmod.json).
ordered_json kmod_json(const KernelModuleAnswers& kmod) {
  ordered_json k = probe_doc("p2pcheck.kmod");
  k["module"] = {{"api_version", kmod.info.api_version},
                 {"module_version", kmod.info.module_version},
                 {"kernel_release", kmod.info.kernel_release},
                 {"p2pdma", kmod.info.p2pdma},
                 {"provider_driver", kmod.info.provider_driver}};
  k["verdicts"] = ordered_json::array();
  for (const auto& [pair, v] : kmod.verdicts)
    k["verdicts"].push_back({{"provider", pair.gpu.str()},
                             {"client", pair.nvme.str()},
                             {"distance", v.distance},
                             {"map_type", to_string(v.map_type)},
                             {"map_note", v.map_note},
                             {"provider_has_p2pmem", v.provider_has_p2pmem},
                             {"provider_driver", v.provider_driver},
                             {"client_driver", v.client_driver}});
  k["failures"] = ordered_json::array();
  for (const auto& [pair, why] : kmod.failures)
    k["failures"].push_back({{"provider", pair.gpu.str()}, {"client", pair.nvme.str()}, {"error", why}});
  return k;
}

// A saved results file is kept only when it is the document it claims to be.
bool is_saved_document(const std::string& bytes, const SavedResults& saved) {
  try {
    auto j = parse_outside_json(bytes, saved.path);
    return j && j->is_object() && JsonFields(*j, saved.path).text("schema") == saved.schema;
  } catch (const Error&) {
    return false;  // too deep, or "schema" not a string: not ours either
  }
}

}  // namespace

void live_probes(DeviceActions& actions, const CheckInputs& analysed, std::map<std::string, std::string>& files,
                 std::vector<std::string>& notes, std::vector<std::string>& serials) {
  bool root = actions.is_root();
  const Inventory& inv = analysed.state.inv;
  if (!inv.nvmes.empty()) {
    ordered_json doc = probe_doc("p2pcheck.live.nvme");
    doc["as_root"] = root;
    doc["controllers"] = ordered_json::array();
    for (const auto& c : inv.nvmes) {
      if (c.name.empty()) continue;  // no controller registered: nothing to open
      NvmeIdentity id = actions.nvme_identity(c.name, c.bdf);
      if (!id.identify_ok) notes.push_back(c.name + ": NVMe Identify unavailable (" + id.identify_error + ")");
      if (!id.registers_ok)
        notes.push_back(c.name + ": controller registers (CMB) unavailable (" + id.registers_error + ")");
      if (!id.serial.empty()) serials.push_back(id.serial);
      doc["controllers"].push_back(nvme_json(id));
    }
    files["/live/nvme.json"] = json_text(doc) + "\n";
  }
  HipProbe hip = actions.hip_probe();
  ordered_json h = probe_doc("p2pcheck.live.hip");
  h["hip_runtime"] = library_json(hip.hip_runtime);
  h["hipfile"] = library_json(hip.hipfile);
  files["/live/hip.json"] = json_text(h) + "\n";
  // The running kernel's own verdicts, when the p2pprobe module answers; nothing when it does not.
  // Every pair checked, and every p2pmem provider (CMB, p2pprobe-bound device) with every NVMe, so
  // a replay naming those with --gpu/--nvme has the kernel's answer too.
  std::vector<DevicePair> pairs;
  std::set<std::pair<Bdf, Bdf>> asked;
  auto ask = [&](const Bdf& provider, const Bdf& client) {
    if (provider != client && asked.insert({provider, client}).second) pairs.push_back({provider, client});
  };
  for (const DevicePair& p : analysed.pairs) ask(p.gpu, p.nvme);
  for (const auto& [bdf, f] : analysed.state.topo.functions)
    if (f.p2pmem)
      for (const auto& n : inv.nvmes) ask(bdf, n.bdf);
  KernelModuleAnswers kmod = actions.kernel_module(pairs);
  if (kmod.available) {
    files["/live/kmod.json"] = json_text(kmod_json(kmod)) + "\n";
  } else {
    notes.push_back("the running kernel's own verdicts are not in this capture: " + kmod.problem);
  }
  for (const SavedResults& saved : kSavedResults) {
    auto bytes = actions.saved_results(saved);
    if (!bytes) continue;
    if (!is_saved_document(*bytes, saved))
      notes.push_back(std::string(saved.path) + " is not a " + saved.schema + " document; left out");
    else
      files[std::string("/live/") + saved.name] = *bytes;
  }
}

}  // namespace p2pcheck
