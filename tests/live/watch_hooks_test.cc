// The hook selection against the BTF of real kernels (tests/live/btf/, subsets written by
// `p2pcheck watch --save-btf`) and against BTF built here for the kernels no machine here runs
// (6.16, 7.x), from the layouts watch-design.md §1 read in their sources.
#include <bpf/btf.h>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <utility>
#include <vector>

#include "p2pcheck/live/watch_probe.h"
#include "p2pcheck/source/error.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

std::string saved_btf(const std::string& name) {
  std::ifstream in(std::string(P2PCHECK_SOURCE_DIR) + "/tests/live/btf/" + name, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  EXPECT_TRUE(in.good()) << name;
  return bytes.str();
}

WatchHookPlan plan_for(const std::string& bytes) { return select_watch_hooks(*parse_btf(bytes, "test")); }

const WatchHook& hook(const WatchHookPlan& plan, const std::string& program) {
  for (const WatchHook& h : plan.hooks)
    if (h.program == program) return h;
  throw std::runtime_error("no program " + program);
}

// A kernel's BTF as far as selection reads it, built with libbpf's writer.
struct BtfBuilder {
  btf* b = btf__new_empty();
  int int_id = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
  ~BtfBuilder() { btf__free(b); }
  void func(const char* name) { btf__add_func(b, name, BTF_FUNC_GLOBAL, btf__add_func_proto(b, int_id)); }
  void typedef_(const char* name) { btf__add_typedef(b, name, int_id); }
  void strukt(const char* name, std::initializer_list<const char*> members) {
    btf__add_struct(b, name, 64);
    unsigned offset = 0;
    for (const char* m : members) btf__add_field(b, m, int_id, (offset += 64) - 64, 0);
  }
  void map_types(int first) {  // 6.16 inserted NONE = 1 before NOT_SUPPORTED
    btf__add_enum(b, "pci_p2pdma_map_type", 4);
    btf__add_enum_value(b, "PCI_P2PDMA_MAP_UNKNOWN", 0);
    if (first == 2) btf__add_enum_value(b, "PCI_P2PDMA_MAP_NONE", 1);
    btf__add_enum_value(b, "PCI_P2PDMA_MAP_NOT_SUPPORTED", first);
    btf__add_enum_value(b, "PCI_P2PDMA_MAP_BUS_ADDR", first + 1);
    btf__add_enum_value(b, "PCI_P2PDMA_MAP_THRU_HOST_BRIDGE", first + 2);
  }
  std::string bytes() {
    __u32 size = 0;
    const void* raw = btf__raw_data(b, &size);
    return std::string(static_cast<const char*>(raw), size);
  }
};

TEST(WatchHooks, DebianStock61HasNoP2pdmaSoOnlyTheBlockTracepointsLoad) {
  WatchHookPlan plan = plan_for(saved_btf("debian-6.1.0-57-amd64.btf"));
  EXPECT_EQ(plan.decision, DecisionHook::kNone);
  EXPECT_TRUE(plan.block_hooks);
  EXPECT_TRUE(hook(plan, "watch_rq_issue").enabled);
  EXPECT_TRUE(hook(plan, "watch_rq_complete").enabled);
  EXPECT_FALSE(hook(plan, "watch_map_segment").enabled);
  EXPECT_EQ(hook(plan, "watch_map_segment").why, "not in this kernel's BTF (pci_p2pdma_map_segment)");
  EXPECT_EQ(hook(plan, "watch_map_sgtable").why, "no P2PDMA in this kernel");
  EXPECT_EQ(hook(plan, "watch_bio_pin").why, "no P2PDMA in this kernel");
  EXPECT_TRUE(plan.problems.empty());
  // The enum is in the BTF although p2pdma.c is not built: the header declares it either way.
  EXPECT_EQ(plan.bus_addr, 2);
}

TEST(WatchHooks, Lab612MapsSegmentsWithThe61EnumAndThePagemapProvider) {
  WatchHookPlan plan = plan_for(saved_btf("lab-6.12.118.btf"));
  EXPECT_EQ(plan.decision, DecisionHook::kMapSegment);
  EXPECT_EQ(plan.provider, ProviderLayout::kPagemapProvider);
  EXPECT_EQ(plan.not_supported, 1);
  EXPECT_EQ(plan.bus_addr, 2);
  EXPECT_EQ(plan.thru_host_bridge, 3);
  EXPECT_STREQ(plan.refusal_errno, "EREMOTEIO");
  for (const char* on : {"watch_map_sgtable", "watch_map_segment", "watch_bio_pin", "watch_rq_issue",
                         "watch_rq_requeue", "watch_rq_complete"})
    EXPECT_TRUE(hook(plan, on).enabled) << on;
  EXPECT_EQ(hook(plan, "watch_update_state").why, "not in this kernel's BTF (__pci_p2pdma_update_state)");
  EXPECT_TRUE(plan.problems.empty());
}

TEST(WatchHooks, Kernel616UpdatesStateWithTheShiftedEnum) {
  BtfBuilder k;
  for (const char* f :
       {"pci_p2pdma_add_resource", "dma_map_sgtable", "__pci_p2pdma_update_state", "bio_iov_iter_get_pages"})
    k.func(f);
  k.typedef_("btf_trace_block_rq_issue");
  k.typedef_("btf_trace_block_rq_complete");
  k.strukt("pci_p2pdma_map_state", {"pgmap", "map", "bus_off"});
  k.strukt("pci_p2pdma_pagemap", {"provider", "bus_offset", "pgmap"});
  k.map_types(2);
  WatchHookPlan plan = plan_for(k.bytes());
  EXPECT_EQ(plan.decision, DecisionHook::kUpdateState);
  EXPECT_EQ(plan.not_supported, 2);
  EXPECT_EQ(plan.bus_addr, 3);
  EXPECT_TRUE(hook(plan, "watch_map_sgtable").enabled);  // nvme still maps a scatterlist in 6.16
  EXPECT_TRUE(hook(plan, "watch_update_state").enabled);
  EXPECT_FALSE(hook(plan, "watch_map_segment").enabled);
  EXPECT_STREQ(plan.refusal_errno, "EREMOTEIO");
}

// The lab's 7.3.4: __pci_p2pdma_update_state() is still there (the iterator's helper), so the
// iterator must win; a synthetic 7.3 without it once hid that the object would not load.
TEST(WatchHooks, Lab734StartsTheRequestIteratorAndNamesTheProviderByItsOwner) {
  WatchHookPlan plan = plan_for(saved_btf("lab-7.3.4.btf"));
  EXPECT_EQ(plan.decision, DecisionHook::kIterStart);
  EXPECT_EQ(plan.provider, ProviderLayout::kMemOwner);
  EXPECT_EQ(plan.not_supported, 2);
  EXPECT_EQ(plan.bus_addr, 3);
  EXPECT_EQ(plan.thru_host_bridge, 4);
  for (const char* on :
       {"watch_iter_start", "watch_bio_pin", "watch_rq_issue", "watch_rq_requeue", "watch_rq_complete"})
    EXPECT_TRUE(hook(plan, on).enabled) << on;
  EXPECT_EQ(hook(plan, "watch_update_state").why, "another decision hook");
  EXPECT_EQ(hook(plan, "watch_map_sgtable").why, "not needed: the request is at hand");
  EXPECT_EQ(hook(plan, "watch_map_segment").why, "not in this kernel's BTF (pci_p2pdma_map_segment)");
  EXPECT_STREQ(plan.refusal_errno, "EINVAL");  // blk_dma_map_iter_start sets BLK_STS_INVAL
  EXPECT_TRUE(plan.problems.empty());
}

TEST(WatchHooks, Lab61MapsSegments) {
  WatchHookPlan plan = plan_for(saved_btf("lab-6.1.192.btf"));
  EXPECT_EQ(plan.decision, DecisionHook::kMapSegment);
  EXPECT_EQ(plan.provider, ProviderLayout::kPagemapProvider);
  EXPECT_EQ(plan.bus_addr, 2);
  EXPECT_STREQ(plan.refusal_errno, "EREMOTEIO");
  EXPECT_TRUE(plan.problems.empty());
}

TEST(WatchHooks, P2pdmaWithoutAKnownDecisionFunctionIsAProblemNotASilentNone) {
  BtfBuilder k;
  k.func("pci_p2pdma_add_resource");
  k.typedef_("btf_trace_block_rq_issue");
  WatchHookPlan plan = plan_for(k.bytes());
  EXPECT_EQ(plan.decision, DecisionHook::kNone);
  EXPECT_FALSE(plan.block_hooks);
  ASSERT_EQ(plan.problems.size(), 2u);
  EXPECT_NE(plan.problems[1].find("none of the decision functions"), std::string::npos);
}

TEST(WatchHooks, TheSubsetAnswersAsTheWholeBtfDoes) {
  const std::string whole = saved_btf("lab-6.12.118.btf");
  const std::string again = watch_btf_subset(whole, "lab-6.12.118.btf");
  EXPECT_EQ(again, whole);  // a subset of a subset is itself
}

// `watch -- COMMAND` follows the command's process tree through sched_process_fork, a tracepoint
// every BTF kernel has; every saved subset keeps it.
TEST(WatchHooks, TheForkTracepointFollowsACommandsTreeWhereTheBtfHasIt) {
  BtfBuilder k;
  k.typedef_("btf_trace_block_rq_issue");
  k.typedef_("btf_trace_block_rq_complete");
  k.typedef_("btf_trace_sched_process_fork");
  WatchHookPlan plan = plan_for(k.bytes());
  EXPECT_TRUE(hook(plan, "watch_fork").enabled);
  EXPECT_EQ(hook(plan, "watch_fork").attach, "tp_btf sched_process_fork");
  // The subset keeps it, so a saved BTF answers as the kernel's own.
  EXPECT_TRUE(hook(plan_for(watch_btf_subset(k.bytes(), "k.btf")), "watch_fork").enabled);
  for (const char* saved : {"lab-6.1.192.btf", "lab-6.12.118.btf", "lab-7.3.4.btf", "debian-6.1.0-57-amd64.btf"})
    EXPECT_TRUE(hook(plan_for(saved_btf(saved)), "watch_fork").enabled) << saved;
  BtfBuilder without;
  without.typedef_("btf_trace_block_rq_issue");
  EXPECT_EQ(hook(plan_for(without.bytes()), "watch_fork").why,
            "not in this kernel's BTF (btf_trace_sched_process_fork)");
}

TEST(WatchHooks, NotBtfIsAnErrorNamingTheFile) {
  try {
    parse_btf("this is not BTF", "/tmp/x.btf");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/tmp/x.btf"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not BTF"), std::string::npos) << e.what();
  }
}

// Raw BTF: an int, struct pci_p2pdma_pagemap { int provider; } and enum req_op { REQ_OP_READ },
// with the member's or the value's name offset set to `member_name` / `value_name`.
std::string raw_btf(__u32 member_name, __u32 value_name) {
  const std::string strings = std::string("\0int\0pci_p2pdma_pagemap\0provider\0req_op\0REQ_OP_READ\0", 52);
  std::vector<__u32> types = {1,  1u << 24,       4, 32,                 // int: kind 1, size 4, 32 bits
                              5,  (4u << 24) | 1, 8, member_name, 1, 0,  // struct, one member of type 1
                              33, (6u << 24) | 1, 4, value_name,  0};    // enum, one value
  btf_header h{};
  h.magic = BTF_MAGIC;
  h.version = BTF_VERSION;
  h.hdr_len = sizeof h;
  h.type_len = static_cast<__u32>(types.size() * 4);
  h.str_off = h.type_len;
  h.str_len = static_cast<__u32>(strings.size());
  std::string out(reinterpret_cast<const char*>(&h), sizeof h);
  out.append(reinterpret_cast<const char*>(types.data()), types.size() * 4);
  return out + strings;
}

// Issue 48: libbpf 1.1 does not check member and enum-value name offsets; comparing the null name
// of one past the string table crashed `watch --hooks --btf FILE`.
TEST(WatchHooks, NameOffsetsPastTheStringsAreAnErrorNotACrash) {
  ASSERT_NO_THROW(plan_for(raw_btf(24, 40)));  // the layout itself is valid BTF
  EXPECT_TRUE(parse_btf(raw_btf(24, 40), "ok")->has_member("pci_p2pdma_pagemap", "provider"));
  for (auto [member, value] : {std::pair<__u32, __u32>{4000, 40}, {24, 0xffffff00u}}) {
    try {
      plan_for(raw_btf(member, value));
      FAIL() << "no error for " << member << ", " << value;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("past the string section"), std::string::npos) << e.what();
    }
    EXPECT_THROW(watch_btf_subset(raw_btf(member, value), "bad.btf"), Error);
  }
}

TEST(BlkStatusErrno, StableStatusesAndTheRenumberedOnes) {
  EXPECT_STREQ(blk_status_errno(5, 6, 1)->name, "EREMOTEIO");  // BLK_STS_TARGET: a refused P2P map
  EXPECT_STREQ(blk_status_errno(5, 6, 12)->name, "EREMOTEIO");
  EXPECT_STREQ(blk_status_errno(10, 6, 12)->name, "EIO");
  EXPECT_STREQ(blk_status_errno(17, 6, 1)->name, "ENODEV");   // 6.1's BLK_STS_OFFLINE
  EXPECT_FALSE(blk_status_errno(17, 6, 12));                  // 6.12's DURATION_LIMIT: not in the table
  EXPECT_STREQ(blk_status_errno(19, 6, 12)->name, "EINVAL");  // BLK_STS_INVAL
  EXPECT_FALSE(blk_status_errno(19, 6, 1));
  EXPECT_STREQ(blk_status_errno(19, 7, 3)->name, "EINVAL");  // 7.3.4: a refused P2P request (6.17+)
  EXPECT_FALSE(blk_status_errno(19, 7, 4));                  // not read: not named
  EXPECT_FALSE(blk_status_errno(0, 6, 12));
}

}  // namespace
}  // namespace p2pcheck
