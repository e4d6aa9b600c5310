// The sentences for a decision's structured reasons (rules/verdict.h): the rule that decided, each
// direction's reason, the unknown facts, what a later kernel changes, the host bridges' verdicts.
// Printed text and JSON both use these, so the words live in one place; explanation.h gathers a
// decision's into one PairExplanation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {

// Why a kernel has no P2PDMA, in one clause (a pair decided by DecidedBy::kNoP2pdmaConfig).
std::string no_p2pdma_text(const NoP2pdma& why);
// How a sentence names the ports whose ACS redirect sends a switch-local pair up: by address (the
// text views, explain), or as the pair's listed ports (check --json's decisions rows, which pairs
// crossing other ports share; each pair lists its own in `port_lists`).
enum class PortNames : std::uint8_t { kAddresses, kListed };

// The rule that decided, one line.
std::string rule_text(const PairDecision& d, PortNames names = PortNames::kAddresses);
// Why one direction (d.to_gpu or d.from_gpu) got its verdict.
std::string flow_reason_text(const PairDecision& d, const Flow& flow, PortNames names = PortNames::kAddresses);
// A rule worded with PortNames::kListed (a saved decisions row's) as rule_text() words it for the
// pair whose ACS redirect ports are `ports`: the listed ports' clause, which rule_text() alone
// writes, named. The rule unchanged when it has no such clause or `ports` is empty.
std::string rule_naming_ports(const std::string& listed_rule, const std::vector<Bdf>& ports);
// "passes", "dropped"; nullptr when the hardware does what the kernel says.
const char* hardware_token(Hardware hardware);
std::string unknown_text(const Unknown& unknown);
std::vector<std::string> unknown_texts(const PairDecision& d);
// The same for what is unknown but cannot change the answer (PairDecision::moot).
std::vector<std::string> moot_texts(const PairDecision& d);
// "allowed from kernel 7.1 on (...)", "would be allowed once ... is merged (...)"; empty when none.
std::string later_text(const PairDecision& d);
// The functions' addresses joined by `separator`: "0000:03:09.0, 0000:03:11.0".
std::string join_bdfs(const std::vector<const Function*>& fns, const char* separator);
// "host bridge 0000:00 (8086:6f00 at 0000:00:00.0)", or why it has no host bridge device.
std::string bridge_text(const BridgeCheck& bridge);
// A failing host bridge and why __host_bridge_whitelist() refuses it.
std::string bridge_refusal_text(const HostCheck& host, const BridgeCheck& bridge);
// What to run, or give, for a distribution kernel's own allowlist (UnknownFact::kKernelTable).
std::string kernel_table_fix_text(bool from_dump, bool what_if);
// The refusal is REQ_SAME_HOST_BRIDGE across two host bridges: moving a device fixes it.
bool refused_across_host_bridges(const PairDecision& d);

}  // namespace p2pcheck
