// Errors the library reports; only the CLI turns them into messages and exit codes.
#pragma once

#include <stdexcept>
#include <string>

namespace p2pcheck {

// A failure to read or make sense of machine state. `where` names the file (or archive member)
// and the message says what was expected, so a user can find the broken input.
class Error : public std::runtime_error {
 public:
  Error(std::string where, const std::string& message)
      : std::runtime_error(where.empty() ? message : where + ": " + message), where_(std::move(where)) {}
  const std::string& where() const { return where_; }

 private:
  std::string where_;
};

// The user asked for something that does not exist or cannot be done (bad selector, bad option value).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace p2pcheck
