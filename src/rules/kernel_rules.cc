// The kernel a verdict is for: its release, its allowlist table, whether it has P2PDMA at all, and
// whether it is known to corrupt memory. Judged alike for the input's, a supplied and a what-if release.
#include "p2pcheck/rules/kernel_rules.h"

#include <memory>

namespace p2pcheck {

const char* to_string(KernelOrigin origin) {
  switch (origin) {
    case KernelOrigin::kInput: return "input";
    case KernelOrigin::kSupplied: return "supplied";
    case KernelOrigin::kWhatIf: return "what_if";
    case KernelOrigin::kUnknown: return "unknown";
  }
  return "unknown";
}

const char* to_string(P2pdmaBasis basis) {
  switch (basis) {
    case P2pdmaBasis::kConfig: return "config";
    case P2pdmaBasis::kBeforeP2pdma: return "before_p2pdma";
    case P2pdmaBasis::kDistroTable: return "distro_table";
    case P2pdmaBasis::kWhatIfAssumed: return "what_if_assumed";
    case P2pdmaBasis::kUnknown: return "unknown";
  }
  return "unknown";
}

namespace {

TableBasis table_basis_for(const std::optional<KernelVersion>& version) {
  if (!version) return TableBasis::kReleaseUnknown;
  if (*version < kOldestVerifiedTable) return TableBasis::kOlderThanVerified;
  if (verified_allowlist_for(*version)) return TableBasis::kVerified;
  return TableBasis::kNewerRowsReported;
}

// CONFIG_PCI_P2PDMA of the kernel judged: a config says it; else a release before P2PDMA existed
// has none; else a distribution-table row the release names says what that default kernel has;
// else a what-if release is taken as built with it (the question is "what would its rules decide").
void judge_p2pdma(const KernelConfig* config, KernelRules& rules) {
  if (config && config->known()) {
    rules.p2pdma_basis = P2pdmaBasis::kConfig;
    rules.config_file = config->file;
    rules.config_supplied = config->supplied;
    if (auto value = config->get("CONFIG_PCI_P2PDMA")) rules.p2pdma_enabled = tri(*value == "y");
    return;
  }
  if (rules.version && *rules.version < kFirstP2pdmaRelease) {
    rules.p2pdma_basis = P2pdmaBasis::kBeforeP2pdma;
    rules.p2pdma_enabled = Tri::kNo;
  } else if (rules.distro) {
    rules.p2pdma_basis = P2pdmaBasis::kDistroTable;
    rules.p2pdma_enabled = tri(rules.distro->p2pdma);
  } else if (rules.what_if()) {
    rules.p2pdma_basis = P2pdmaBasis::kWhatIfAssumed;
    rules.p2pdma_enabled = Tri::kYes;
  }
}

bool same_ids(const KernelTableRow& own, const AllowlistEntry& row) {
  std::optional<std::uint16_t> device;
  if (own.device != 0xffff) device = own.device;  // PCI_ANY_ID as an unsigned short
  return own.vendor == row.vendor && device == row.device;
}

// The kernel's own rows as entries, and how they differ from upstream's table of the release.
void use_own_table(const KernelTable& table, KernelRules& rules) {
  auto own = std::make_shared<OwnAllowlist>();
  own->source = to_string(table.origin) + std::string(": ") + table.how;
  for (const KernelTableRow& r : table.rows) {
    const AllowlistEntry* upstream = nullptr;
    for (const AllowlistEntry& row : host_bridge_allowlist())
      if (same_ids(r, row) && !upstream) upstream = &row;
    std::optional<std::uint16_t> device;
    if (r.device != 0xffff) device = r.device;
    own->rows.push_back({r.vendor, device, (r.flags & kReqSameHostBridge) != 0, rules.version.value_or(KernelVersion{}),
                         RowStatus::kVerified, upstream ? upstream->name : "a row of this kernel's own table",
                         own->source.c_str()});
    bool in_upstream = upstream && allowlist_row_in_kernel(*upstream, rules.version) &&
                       upstream->req_same_host_bridge == ((r.flags & kReqSameHostBridge) != 0);
    if (!in_upstream) rules.rows_added.push_back(r);
  }
  for (const AllowlistEntry& row : host_bridge_allowlist()) {
    if (!allowlist_row_in_kernel(row, rules.version)) continue;
    bool found = false;
    for (const KernelTableRow& r : table.rows)
      found = found || (same_ids(r, row) && row.req_same_host_bridge == ((r.flags & kReqSameHostBridge) != 0));
    if (!found)
      rules.rows_missing.push_back(
          {row.vendor, row.device.value_or(0xffff), row.req_same_host_bridge ? kReqSameHostBridge : 0});
  }
  rules.allowlist.own = std::move(own);
  rules.allowlist.source = table.origin == KernelTableOrigin::kRunningKernel ? AllowlistSource::kRunningKernel
                           : table.origin == KernelTableOrigin::kCapture     ? AllowlistSource::kCapture
                                                                             : AllowlistSource::kKernelImage;
}

// The table the host check reads: the kernel's own where read; else upstream's, which for a
// distribution kernel cannot refuse a host bridge (a backport may have added its row).
void choose_allowlist(const KernelTable* table, KernelRules& rules) {
  rules.allowlist.version = rules.version;
  if (table) rules.own_table = *table;
  if (table && table->read())
    use_own_table(*table, rules);
  else
    rules.allowlist.distro_unread = rules.vendor_kernel;
}

}  // namespace

KernelRules kernel_rules_for(const Machine& machine, const std::optional<std::string>& what_if_release,
                             const KernelImage* image) {
  KernelRules rules;
  rules.input_release = machine.kernel_release_supplied ? std::string() : machine.kernel_release;
  rules.release = image ? image->release : what_if_release ? *what_if_release : machine.kernel_release;
  rules.origin = what_if_release || image          ? KernelOrigin::kWhatIf
                 : machine.kernel_release.empty()  ? KernelOrigin::kUnknown
                 : machine.kernel_release_supplied ? KernelOrigin::kSupplied
                                                   : KernelOrigin::kInput;
  rules.version = parse_kernel_version(rules.release);
  rules.vendor_kernel = is_vendor_kernel(rules.release);
  rules.table_basis = table_basis_for(rules.version);
  rules.distro = find_distro_kernel_by_release(rules.release);
  // A what-if is another kernel: the input's own config says nothing about it (a supplied
  // --kernel-config may, and is then the what-if kernel's).
  const KernelConfig* config = &machine.config;
  if (rules.what_if() && !machine.config.supplied) config = nullptr;
  if (image && image->config.known() && !machine.config.supplied) config = &image->config;
  judge_p2pdma(config, rules);
  choose_allowlist(image ? &image->table : rules.what_if() ? nullptr : &machine.kernel_table, rules);
  if (!rules.what_if()) rules.config_not_carried = machine.not_carried({"/proc/config.gz", "/boot"});
  rules.known_bad = find_known_bad_kernel(rules.release);
  if (KnownBadIdentity id = identify_known_bad_kernel(rules.release); id.match == KnownBadMatch::kSameBase)
    rules.known_bad_base = id;
  rules.input_known_bad = find_known_bad_kernel(rules.input_release);
  return rules;
}

}  // namespace p2pcheck
