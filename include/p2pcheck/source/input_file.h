// Opening what the command line names (--dump, --plan, --cpu, fleet's inputs and what their
// directories hold): only a regular file or a directory is an input. A FIFO, device or socket is
// refused by name before anything reads it, since a blocking open or read of one never returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/types.h>

#include "p2pcheck/source/host_files.h"

namespace p2pcheck {

enum class InputType { kFile, kDirectory };

// "a FIFO (named pipe)", "a character device", "a block device", "a socket", "a symbolic link",
// "a regular file", "a directory": what an error says `path` is.
const char* file_type_name(mode_t mode);

// What `path` is, links followed as the user's shell would. Throws Error naming `path`: "cannot
// open `what`: <errno text>", or "<type>, not a regular file or directory: only those are read as
// input".
InputType input_type(const std::string& path, const std::string& what);

// `path` opened O_RDONLY | O_NONBLOCK (a FIFO swapped in after input_type() cannot block the
// open), then fstat'ed: a regular file, or Error as input_type() ("<type>, not a regular file: ..."). The descriptor is
// left non-blocking, which changes nothing for a regular file.
Fd open_input_file(const std::string& path, const std::string& what);

// All of the regular file `path`, at most `cap` bytes: Error naming `path` past that ("larger
// than N MiB; `why`") or when it cannot be read.
std::string read_input_file(const std::string& path, std::uint64_t cap, const std::string& what,
                            const std::string& why);

// Its first `bytes` bytes for telling formats apart; "" when `path` is not a readable regular
// file (sniffing never blocks: the error comes from the read that follows).
std::string read_input_head(const std::string& path, std::size_t bytes);

}  // namespace p2pcheck
