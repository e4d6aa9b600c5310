// A kernel's BTF as the hook selection reads it, through libbpf's parser; and the few hundred
// bytes of it that selection needs, written back as BTF (watch --save-btf, tests/live/btf/).
#include <bpf/btf.h>
#include <cerrno>
#include <cstring>
#include <memory>

#include "p2pcheck/live/watch_probe.h"
#include "p2pcheck/source/error.h"

namespace p2pcheck {

namespace {

struct BtfDeleter {
  void operator()(btf* b) const { btf__free(b); }
};
using BtfPtr = std::unique_ptr<btf, BtfDeleter>;

// What selection asks of a BTF; the subset keeps exactly these names.
constexpr const char* kFunctions[] = {
    "pci_p2pdma_add_resource",   "dma_map_sgtable",           "pci_p2pdma_map_segment",
    "__pci_p2pdma_update_state", "blk_rq_dma_map_iter_start", "bio_iov_iter_get_pages",
};
constexpr const char* kTypedefs[] = {"btf_trace_block_rq_issue", "btf_trace_block_rq_requeue",
                                     "btf_trace_block_rq_complete", "btf_trace_sched_process_fork"};
struct StructRow {
  const char* name;
  const char* members[3];
};
constexpr StructRow kStructs[] = {
    {"pci_p2pdma_map_state", {"pgmap", "mem", "map"}},
    {"pci_p2pdma_pagemap", {"provider", "pgmap", nullptr}},
    {"p2pdma_provider", {"owner", nullptr, nullptr}},
    {"blk_dma_iter", {"p2pdma", nullptr, nullptr}},
};
constexpr const char* kEnums[] = {"pci_p2pdma_map_type", "req_op", "dma_data_direction"};

// libbpf 1.1 checks the type section's counts against its size when it parses, but not the name
// offsets inside it: btf__name_by_offset answers nullptr for one past the string section.
void check_name(const btf* b, __u32 offset, __u32 id, const char* what, const std::string& where) {
  if (!btf__name_by_offset(b, offset))
    throw Error(where, "BTF type " + std::to_string(id) + ": the name offset of its " + what + " (" +
                           std::to_string(offset) + ") is past the string section: not a kernel's BTF");
}

// Every name offset of every type inside the string section, before anything compares a name:
// the type's own, its members' (struct, union), its values' (enum, enum64), its parameters'.
void validate_names(const btf* b, const std::string& where) {
  const __u32 count = btf__type_cnt(b);
  for (__u32 id = 1; id < count; ++id) {
    const btf_type* t = btf__type_by_id(b, id);
    if (!t) throw Error(where, "BTF type " + std::to_string(id) + " is missing: not a kernel's BTF");
    check_name(b, t->name_off, id, "type", where);
    const int n = btf_vlen(t);
    if (btf_is_composite(t)) {
      for (int i = 0; i < n; ++i) check_name(b, btf_members(t)[i].name_off, id, "member", where);
    } else if (btf_is_enum(t)) {
      for (int i = 0; i < n; ++i) check_name(b, btf_enum(t)[i].name_off, id, "value", where);
    } else if (btf_is_enum64(t)) {
      for (int i = 0; i < n; ++i) check_name(b, btf_enum64(t)[i].name_off, id, "value", where);
    } else if (btf_is_func_proto(t)) {
      for (int i = 0; i < n; ++i) check_name(b, btf_params(t)[i].name_off, id, "parameter", where);
    }
  }
}

BtfPtr parse(const std::string& bytes, const std::string& where) {
  if (bytes.size() > (64u << 20)) throw Error(where, "larger than 64 MiB: not a kernel's BTF");
  errno = 0;
  btf* b = btf__new(bytes.data(), static_cast<__u32>(bytes.size()));
  if (!b) {
    const int e = errno ? errno : EINVAL;
    throw Error(where, std::string("not BTF (expected /sys/kernel/btf/vmlinux or a file saved with "
                                   "`p2pcheck watch --save-btf`): ") +
                           std::strerror(e));
  }
  BtfPtr parsed(b);
  validate_names(parsed.get(), where);
  return parsed;
}

const btf_type* find(const btf* b, const char* name, int kind) {
  const int id = btf__find_by_name_kind(b, name, kind);
  return id > 0 ? btf__type_by_id(b, id) : nullptr;
}

const btf_type* find_enum(const btf* b, const char* name) {
  if (const btf_type* t = find(b, name, BTF_KIND_ENUM)) return t;
  return find(b, name, BTF_KIND_ENUM64);
}

class LibbpfBtfFacts : public BtfFacts {
 public:
  explicit LibbpfBtfFacts(BtfPtr b) : btf_(std::move(b)) {}
  bool has_function(const std::string& name) const override {
    return find(btf_.get(), name.c_str(), BTF_KIND_FUNC) != nullptr;
  }
  bool has_typedef(const std::string& name) const override {
    return find(btf_.get(), name.c_str(), BTF_KIND_TYPEDEF) != nullptr;
  }
  bool has_member(const std::string& struct_name, const std::string& member) const override {
    const btf_type* t = find(btf_.get(), struct_name.c_str(), BTF_KIND_STRUCT);
    if (!t) return false;
    const btf_member* m = btf_members(t);
    for (int i = 0; i < btf_vlen(t); ++i)
      if (member == btf__name_by_offset(btf_.get(), m[i].name_off)) return true;
    return false;
  }
  std::optional<long long> enum_value(const std::string& enum_name, const std::string& value) const override {
    const btf_type* t = find_enum(btf_.get(), enum_name.c_str());
    if (!t) return std::nullopt;
    for (int i = 0; i < btf_vlen(t); ++i) {
      if (btf_is_enum(t)) {
        const struct btf_enum& e = btf_enum(t)[i];
        if (value == btf__name_by_offset(btf_.get(), e.name_off)) return e.val;
      } else {
        const struct btf_enum64& e = btf_enum64(t)[i];
        if (value == btf__name_by_offset(btf_.get(), e.name_off)) return static_cast<long long>(btf_enum64_value(&e));
      }
    }
    return std::nullopt;
  }

 private:
  BtfPtr btf_;
};

void check(int id, const char* what) {
  if (id < 0) throw Error("watch BTF subset", std::string("libbpf could not add ") + what);
}

void copy_struct(const btf* src, btf* out, const StructRow& row, int int_id) {
  const btf_type* t = find(src, row.name, BTF_KIND_STRUCT);
  if (!t) return;
  check(btf__add_struct(out, row.name, t->size), row.name);
  const btf_member* m = btf_members(t);
  for (int i = 0; i < btf_vlen(t); ++i) {
    const char* name = btf__name_by_offset(src, m[i].name_off);
    for (const char* wanted : row.members)
      if (wanted && name && std::strcmp(name, wanted) == 0)
        check(btf__add_field(out, name, int_id, btf_member_bit_offset(t, i), 0), name);
  }
}

void copy_enum(const btf* src, btf* out, const char* name) {
  const btf_type* t = find_enum(src, name);
  if (!t) return;
  check(btf__add_enum(out, name, 4), name);
  for (int i = 0; i < btf_vlen(t); ++i) {
    const char* value = btf_is_enum(t) ? btf__name_by_offset(src, btf_enum(t)[i].name_off)
                                       : btf__name_by_offset(src, btf_enum64(t)[i].name_off);
    const long long v =
        btf_is_enum(t) ? btf_enum(t)[i].val : static_cast<long long>(btf_enum64_value(&btf_enum64(t)[i]));
    check(btf__add_enum_value(out, value, v), value);
  }
}

}  // namespace

std::unique_ptr<BtfFacts> parse_btf(const std::string& bytes, const std::string& where) {
  return std::make_unique<LibbpfBtfFacts>(parse(bytes, where));
}

std::string watch_btf_subset(const std::string& bytes, const std::string& where) {
  BtfPtr src = parse(bytes, where);
  BtfPtr out(btf__new_empty());
  if (!out) throw Error(where, "libbpf could not make an empty BTF");
  const int int_id = btf__add_int(out.get(), "int", 4, BTF_INT_SIGNED);
  check(int_id, "int");
  for (const char* f : kFunctions) {
    if (!find(src.get(), f, BTF_KIND_FUNC)) continue;
    const int proto = btf__add_func_proto(out.get(), int_id);
    check(proto, f);
    check(btf__add_func(out.get(), f, BTF_FUNC_GLOBAL, proto), f);
  }
  for (const char* t : kTypedefs)
    if (find(src.get(), t, BTF_KIND_TYPEDEF)) check(btf__add_typedef(out.get(), t, int_id), t);
  for (const StructRow& row : kStructs) copy_struct(src.get(), out.get(), row, int_id);
  for (const char* e : kEnums) copy_enum(src.get(), out.get(), e);
  __u32 size = 0;
  const void* raw = btf__raw_data(out.get(), &size);
  if (!raw) throw Error(where, "libbpf could not write the BTF subset");
  return std::string(static_cast<const char*>(raw), size);
}

}  // namespace p2pcheck
