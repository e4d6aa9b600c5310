// What every libFuzzer target in tests/fuzz shares: the rule for what counts as a finding, the
// analysis the CLI runs on a source, and the base machine whose files the file targets replace.
//
// A target calls the library the way the CLI does. p2pcheck::Error and UsageError are the
// library's answer to bad input (a rejection, exit 5 or 3 in the CLI); any other exception escapes
// to std::terminate, and that abort, like a crash, a sanitizer report, a timeout or a run past
// -rss_limit_mb, is a finding libFuzzer saves (tests/fuzz/README.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "p2pcheck/model/inventory.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/memory_source.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck::fuzz {

// Runs `body`; a rejection (Error, UsageError) returns normally, anything else escapes.
template <typename Body>
void rejecting_bad_input(Body&& body) {
  try {
    body();
  } catch (const Error&) {
  } catch (const UsageError&) {}
}

// `p2pcheck check` and `topo` on `source`, text and JSON, as the CLI renders them; the output is
// built and dropped (the CLI only prints it).
void analyse(Source& source, const PairSelection& selection = {});

// A real machine: the QEMU lab capture fixtures/lab/vfy-epyc (two GPUs, three NVMe drives, a
// P2PDMA kernel, live/*.json), loaded once, with the pairs its args file selects. Its manifest's
// unreadable files are applied, as a --dump replay would.
struct BaseMachine {
  MemoryTree tree;
  PairSelection selection;
};
const BaseMachine& base_machine();

// The base machine with `files` (absolute path -> bytes) added or replaced, analysed.
void analyse_base_with(const std::map<std::string, std::string>& files);

// The fuzz input cut at NUL bytes into at most `parts` pieces (the last takes the rest), so one
// input can feed a target several files.
std::vector<std::string> split_input(std::string_view data, std::size_t parts);

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace p2pcheck::fuzz
