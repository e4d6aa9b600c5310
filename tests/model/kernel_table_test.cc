#include "p2pcheck/model/kernel_table.h"

#include <cstddef>
#include <cstdio>
#include <gtest/gtest.h>

#include "kernel_elf.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/memory_source.h"

namespace p2pcheck {
namespace {

using test::make_elf;
using test::table_bytes;

const std::vector<KernelTableRow> kRows612 = {{0x8086, 0x3c00, 1}, {0x8086, 0x2030, 0}, {0x8086, 0x09a2, 0}};
constexpr std::uint64_t kBase = 0xffffffff82000000ull;
constexpr std::uint64_t kTable = kBase + 0x40;

std::string kallsyms(std::uint64_t address) {
  char line[64];
  std::snprintf(line, sizeof line, "%016llx r pci_p2pdma_whitelist\n", static_cast<unsigned long long>(address));
  return "ffffffff81000000 T _stext\nffffffffc0000000 t helper\t[nvme]\n" + std::string(line) +
         "ffffffff82000100 R other\n";
}

// A kcore whose second PT_LOAD holds the table 0x40 bytes in.
std::string kcore(const std::string& table) {
  return make_elf({{0xffff888000000000ull, std::string(256, 'x')}, {kBase, std::string(0x40, '\0') + table}});
}

std::unique_ptr<Source> machine(const std::string& symbols, const std::string& core) {
  auto tree = std::make_shared<MemoryTree>();
  if (!symbols.empty()) tree->add_file("/proc/kallsyms", symbols);
  if (!core.empty()) tree->add_file("/proc/kcore", core);
  tree->add_file("/sys/kernel/notes", test::build_id_notes("\x12\x34\xab"));
  return open_memory_source(tree, "kcore test");
}

KernelTable read(Source& source, const std::string& config = "") {
  return read_kernel_table(source, config.empty() ? KernelConfig{} : parse_kernel_config(config, "/boot/config-x"));
}

TEST(KernelTableRead, RowsUpToTheZeroRow) {
  std::string error;
  auto rows = parse_table_rows(table_bytes(kRows612) + "trailing bytes", error);
  ASSERT_TRUE(rows) << error;
  EXPECT_EQ(*rows, kRows612);
  EXPECT_EQ(row_text((*rows)[0]), "8086:3c00 REQ_SAME_HOST_BRIDGE");
}

TEST(KernelTableRead, RefusesWhatIsNotTheTable) {
  std::string error;
  EXPECT_FALSE(parse_table_rows(table_bytes(kRows612, false), error));
  EXPECT_NE(error.find("end after 3 rows, before the zero row"), std::string::npos) << error;
  std::vector<KernelTableRow> many(kMaxTableRows + 1, {0x8086, 0x1234, 0});
  EXPECT_FALSE(parse_table_rows(table_bytes(many), error));
  EXPECT_NE(error.find("no zero row within 256 rows"), std::string::npos) << error;
  EXPECT_FALSE(parse_table_rows(table_bytes({{0x8086, 1, 0}, {0, 5, 0}}), error));
  EXPECT_NE(error.find("row 1 (0000:0005"), std::string::npos) << error;
  EXPECT_FALSE(parse_table_rows(table_bytes({{0x8086, 1, 6}}), error));
  EXPECT_NE(error.find("flags 0x6"), std::string::npos) << error;
  EXPECT_FALSE(parse_table_rows(table_bytes({{0xffff, 1, 0}}), error));
  EXPECT_FALSE(parse_table_rows(table_bytes({}), error));  // zeros where the table should be: a wrong address
  EXPECT_NE(error.find("the zero row comes first"), std::string::npos) << error;
}

TEST(KernelTableRead, SymbolFromKallsymsAndSystemMap) {
  EXPECT_EQ(find_symbol(kallsyms(kTable), kTableSymbol), kTable);
  EXPECT_EQ(find_symbol(kallsyms(kTable), "helper"), 0xffffffffc0000000ull);  // a module's: "\t[nvme]"
  EXPECT_EQ(find_symbol(kallsyms(0), kTableSymbol), 0u);                      // hidden: kptr_restrict
  EXPECT_FALSE(find_symbol("ffffffff81000000 T pci_p2pdma_whitelist_x\n", kTableSymbol));
  EXPECT_FALSE(find_symbol("zzzz r pci_p2pdma_whitelist\n", kTableSymbol));
}

TEST(KernelTableRead, RunningKernelThroughKallsymsAndKcore) {
  auto src = machine(kallsyms(kTable), kcore(table_bytes(kRows612)));
  KernelTable t = read(*src);
  ASSERT_EQ(t.origin, KernelTableOrigin::kRunningKernel) << t.why_not;
  EXPECT_EQ(t.rows, kRows612);
  EXPECT_EQ(t.build_id, "1234ab");
  EXPECT_EQ(t.how, "/proc/kallsyms pci_p2pdma_whitelist at 0xffffffff82000040, rows read from /proc/kcore");
  // kcore is read in parts and never recorded: a capture stores the rows, not kernel memory.
  EXPECT_EQ(src->access_log().file_reads.count("/proc/kcore"), 0u);
}

TEST(KernelTableRead, SaysWhyTheRunningKernelsTableWasNotRead) {
  std::string core = kcore(table_bytes(kRows612));
  auto no_kcore = machine(kallsyms(kTable), "");
  EXPECT_EQ(read(*no_kcore).why_not, "no /proc/kcore: kernel built without CONFIG_PROC_KCORE");
  auto hidden = machine(kallsyms(0), core);
  EXPECT_NE(read(*hidden).why_not.find("hides addresses"), std::string::npos);
  auto no_symbol = machine("ffffffff81000000 T _stext\n", core);
  EXPECT_EQ(read(*no_symbol, "# CONFIG_KALLSYMS_ALL is not set\nCONFIG_PCI_P2PDMA=y\n").why_not,
            "pci_p2pdma_whitelist is not in /proc/kallsyms: a static symbol, listed only with CONFIG_KALLSYMS_ALL "
            "(not set in /boot/config-x)");
  EXPECT_EQ(read(*no_symbol, "# CONFIG_PCI_P2PDMA is not set\n").why_not,
            "kernel built without CONFIG_PCI_P2PDMA (/boot/config-x): it has no table");
  // An input without kallsyms (an import, an older capture) says so: the version table is not its own.
  auto dump = machine("", "");
  EXPECT_EQ(read(*dump).why_not, "neither the table nor /proc/kallsyms is in this input");
  EXPECT_FALSE(read(*dump).read());
}

TEST(KernelTableRead, KcoreRefusedByPermissionOrLockdown) {
  for (bool lockdown : {false, true}) {
    auto tree = std::make_shared<MemoryTree>();
    tree->add_file("/proc/kallsyms", kallsyms(kTable));
    tree->add_failure("/proc/kcore", {ReadStatus::kDenied, "", "Operation not permitted"});
    if (lockdown) tree->add_file("/sys/kernel/security/lockdown", "none integrity [confidentiality]\n");
    auto src = open_memory_source(tree, "kcore test");
    EXPECT_EQ(read(*src).why_not, lockdown ? "/proc/kcore is refused: kernel lockdown is in confidentiality mode "
                                             "(Operation not permitted)"
                                           : "/proc/kcore needs root (Operation not permitted)");
  }
}

TEST(KernelTableRead, HostileKcores) {
  std::string good = table_bytes(kRows612);
  struct Case {
    std::string symbols, core, expect;
  };
  std::string core = kcore(good);
  std::vector<Case> cases = {
      // the symbol's address in no segment (a wrong System.map, a stale kallsyms)
      {kallsyms(0xffffffff90000000ull), core, "no PT_LOAD segment maps address 0xffffffff90000000 (2 segments)"},
      // the table runs off the end of its segment
      {kallsyms(kTable), kcore(good.substr(0, 20)), "end after 2 rows, before the zero row"},
      {kallsyms(kTable), kcore(table_bytes({{0x8086, 0x1234, 0x80}})), "flags 0x80"},
      {kallsyms(kTable), core.substr(0, 100), "the ELF program headers end early: truncated"},
      {kallsyms(kTable), "not an elf at all, but long enough to hold a header of sixty-four bytes.....",
       "not an ELF file"},
      {kallsyms(kTable), make_elf({{kBase, good, PT_NOTE}}), "no PT_LOAD segment maps"},
  };
  std::string elf32 = core;
  elf32[EI_CLASS] = ELFCLASS32;
  cases.push_back({kallsyms(kTable), elf32, "not a 64-bit little-endian ELF"});
  std::string many = core;
  many[offsetof(Elf64_Ehdr, e_phnum)] = '\xff', many[offsetof(Elf64_Ehdr, e_phnum) + 1] = '\x7f';
  cases.push_back({kallsyms(kTable), many, "program headers out of bounds"});
  for (const Case& c : cases) {
    auto src = machine(c.symbols, c.core);
    KernelTable t = read(*src);
    EXPECT_FALSE(t.read());
    EXPECT_NE(t.why_not.find(c.expect), std::string::npos) << t.why_not;
  }
}

TEST(KernelTableRead, CaptureStoresAndReplaysTheRows) {
  KernelTable t;
  t.origin = KernelTableOrigin::kRunningKernel;
  t.rows = kRows612;
  t.how = "/proc/kallsyms ...";
  t.build_id = "abcd";
  t.release = "6.12.118";
  auto tree = std::make_shared<MemoryTree>();
  tree->add_file(kKernelTableFile, kernel_table_json(t));
  auto src = open_memory_source(tree, "replay");
  KernelTable back = read(*src);
  EXPECT_EQ(back.origin, KernelTableOrigin::kCapture);
  EXPECT_EQ(back.rows, kRows612);
  EXPECT_EQ(back.how, "stored by capture (running kernel: /proc/kallsyms ...)");
  EXPECT_EQ(back.build_id, "abcd");
  EXPECT_EQ(back.release, "6.12.118");
  // Why it was not read travels too.
  KernelTable none;
  none.why_not = "/proc/kcore needs root";
  KernelTable none_back = parse_kernel_table_json(kernel_table_json(none), "k.json");
  EXPECT_FALSE(none_back.read());
  EXPECT_EQ(none_back.why_not, "/proc/kcore needs root");
}

TEST(KernelTableRead, HostileCapturedTables) {
  std::string ok = kernel_table_json({KernelTableOrigin::kRunningKernel, kRows612, "", "", "", ""});
  auto bad = [&](const std::string& from, const std::string& to) {
    std::string text = ok;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  EXPECT_THROW(parse_kernel_table_json(bad("\"flags\": 1", "\"flags\": 2"), "k.json"), Error);
  EXPECT_THROW(parse_kernel_table_json(bad("\"vendor\": 32902", "\"vendor\": 0"), "k.json"), Error);
  EXPECT_THROW(parse_kernel_table_json(bad("\"version\": 1", "\"version\": 2"), "k.json"), Error);
  EXPECT_THROW(parse_kernel_table_json(bad("\"running kernel\"", "\"capture\""), "k.json"), Error);
  EXPECT_THROW(parse_kernel_table_json("[1,2]", "k.json"), Error);
  try {
    parse_kernel_table_json(bad("\"flags\": 1", "\"flags\": \"x\""), "k.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("k.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace p2pcheck
