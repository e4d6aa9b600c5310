// Reading archives into memory, with the checks that keep a hostile dump from writing anywhere or
// exhausting memory: member names must stay inside the archive's root, only files, directories
// and symlinks are accepted, each file and the expanded total are capped, and an archive that
// expands far beyond what real captures compress to is refused as a compression bomb.
#pragma once

#include <string>
#include <string_view>

#include "p2pcheck/source/memory_source.h"

namespace p2pcheck {

struct LoadedArchive {
  MemoryTree tree;
  // A compressed single file that is not a tar (customer's lspci.txt.gz): its bytes are in
  // tree's "/data" file and the caller recognises the content.
  bool raw = false;
};

// Throws Error naming the archive member (FILE:member) and what was expected.
LoadedArchive load_archive(const std::string& file);
// The same for archive bytes already in memory (a member of another archive, fuzzing); `name`
// stands for the file in messages.
LoadedArchive load_archive_bytes(std::string_view bytes, const std::string& name);

// An archive whose expanded bytes exceed this many times its compressed size, once past
// kBombCheckBytes, is refused: sysfs captures compress about 10:1, never 1000:1.
inline constexpr std::uint64_t kMaxExpansionRatio = 1000;
inline constexpr std::uint64_t kBombCheckBytes = 32ull << 20;
// What each entry (file, directory, link) is counted as beyond its data: about what a node of the
// in-memory tree costs, and what its tar header takes in the stream.
inline constexpr std::uint64_t kEntryBytes = 512;

}  // namespace p2pcheck
