// `capture --redact`: serial numbers, host names, UUIDs and MAC addresses in a capture are replaced
// by stable placeholders (the same value always gets the same placeholder, numbered in the order
// the sorted capture first shows it), so a customer can send a capture that still analyses the
// same: nothing a verdict depends on (IDs, classes, config space apart from the Device Serial
// Number, bus numbers, drivers, kernel, CPU) is touched.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace p2pcheck {

class Redactor {
 public:
  // First pass: learn the secrets a file holds, by its path (".../serial", "product_uuid",
  // "/proc/sys/kernel/hostname") and by its content (UUIDs, MAC addresses).
  void learn(const std::string& path, const std::string& bytes);
  void add_serial(const std::string& value);
  void add_hostname(const std::string& value);

  // Second pass. A file's bytes: identifier files wholly replaced, known secrets and UUID/MAC
  // patterns replaced in text, the Device Serial Number capability zeroed to a placeholder in
  // config space, /proc/kallsyms addresses zeroed (KASLR). Other binary files are unchanged.
  std::string file(const std::string& path, const std::string& bytes);
  std::string text(std::string_view text);  // any text: paths, link targets, JSON strings

  // Original value -> placeholder, for the report of what was redacted (never written out).
  const std::map<std::string, std::string>& replacements() const { return map_; }

 private:
  std::string placeholder(const std::string& kind, const std::string& value);
  std::map<std::string, std::string> map_;
  std::map<std::string, int> counters_;
  std::map<std::string, std::string> hostnames_;  // value -> placeholder, token-bounded replacement
};

// True when `text` contains a placeholder Redactor makes (tests compare outputs modulo these).
bool contains_placeholder(std::string_view text);

}  // namespace p2pcheck
