// Redaction of captures: identifiers out, everything a verdict reads left as it was.
#include "p2pcheck/capture/redact.h"

extern "C" {
#include <pci/pci.h>
}

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <vector>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

bool hex_at(std::string_view s, size_t i, size_t n) {
  if (i + n > s.size()) return false;
  for (size_t k = i; k < i + n; ++k)
    if (!std::isxdigit(static_cast<unsigned char>(s[k]))) return false;
  return true;
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// 8-4-4-4-12 hex digits, not part of a longer hex word.
bool uuid_at(std::string_view s, size_t i) {
  static const size_t groups[] = {8, 4, 4, 4, 12};
  if (i > 0 && (std::isxdigit(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '-')) return false;
  size_t at = i;
  for (size_t g = 0; g < 5; ++g) {
    if (!hex_at(s, at, groups[g])) return false;
    at += groups[g];
    if (g < 4) {
      if (at >= s.size() || s[at] != '-') return false;
      ++at;
    }
  }
  return at == s.size() || !(std::isxdigit(static_cast<unsigned char>(s[at])) || s[at] == '-');
}

// xx:xx:xx:xx:xx:xx, not part of a longer colon-separated hex run.
bool mac_at(std::string_view s, size_t i) {
  if (i > 0 && (std::isxdigit(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == ':')) return false;
  size_t at = i;
  for (int g = 0; g < 6; ++g) {
    if (!hex_at(s, at, 2)) return false;
    at += 2;
    if (g < 5) {
      if (at >= s.size() || s[at] != ':') return false;
      ++at;
    }
  }
  return at == s.size() || !(std::isxdigit(static_cast<unsigned char>(s[at])) || s[at] == ':');
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_serial_file(const std::string& base) {
  return base == "serial" || (base.size() > 7 && base.compare(base.size() - 7, 7, "_serial") == 0) ||
         base == "board_asset_tag" || base == "chassis_asset_tag";
}
// NVMe namespace identifiers: unique per drive, and the wwid embeds the serial in hex.
bool is_id_file(const std::string& base) { return base == "wwid" || base == "eui" || base == "nguid"; }

// Replaces `from` by `to` wherever it stands as a whole token (host names: "vm" must not hit "kvm").
std::string replace_tokens(const std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t at = text.find(from, i);
    if (at == std::string::npos) break;
    size_t end = at + from.size();
    bool left = at == 0 || !(word_char(text[at - 1]) || text[at - 1] == '-' || text[at - 1] == '.');
    bool right = end == text.size() || !(word_char(text[end]) || text[end] == '-' || text[end] == '.');
    out.append(text, i, at - i);
    out += left && right ? to : from;
    i = end;
  }
  out.append(text, i, std::string::npos);
  return out;
}

std::string replace_all(const std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t at = text.find(from, i);
    if (at == std::string::npos) break;
    out.append(text, i, at - i);
    out += to;
    i = at + from.size();
  }
  out.append(text, i, std::string::npos);
  return out;
}

void libpci_quiet(char*, ...) {}
// [[gnu::noreturn]]: libpci's hook type carries the attribute (clang checks it); Error, as every
// library failure is.
[[gnu::noreturn]] void libpci_fatal(char* msg, ...) { throw Error("libpci", msg); }

// The Device Serial Number extended capability's offset in a config space, found with libpci.
int dsn_offset(const std::string& config) {
  if (config.size() < 4096) return -1;
  pci_access* access = pci_alloc();
  access->method = PCI_ACCESS_DUMP;
  access->error = libpci_fatal;  // not reached: the dump method over /dev/null reads nothing itself
  access->warning = libpci_quiet;
  access->debug = libpci_quiet;
  pci_set_param(access, const_cast<char*>("dump.name"), const_cast<char*>("/dev/null"));
  pci_init(access);
  std::vector<u8> cache(config.begin(), config.end());
  pci_dev* dev = pci_get_dev(access, 0, 0, 0, 0);
  pci_setup_cache(dev, cache.data(), static_cast<int>(cache.size()));
  int offset = -1;
  if (pci_read_word(dev, PCI_STATUS) & PCI_STATUS_CAP_LIST) {
    pci_fill_info(dev, PCI_FILL_CAPS | PCI_FILL_EXT_CAPS);
    if (pci_cap* cap = pci_find_cap(dev, PCI_EXT_CAP_ID_DSN, PCI_CAP_EXTENDED)) offset = cap->addr;
  }
  pci_free_dev(dev);
  pci_cleanup(access);
  return offset + 12 <= static_cast<int>(config.size()) ? offset : -1;
}

}  // namespace

std::string Redactor::placeholder(const std::string& kind, const std::string& value) {
  auto it = map_.find(value);
  if (it != map_.end()) return it->second;
  int n = ++counters_[kind];
  char buf[64];
  if (kind == "uuid")
    std::snprintf(buf, sizeof buf, "00000000-0000-4000-8000-%012d", n);
  else if (kind == "mac")
    std::snprintf(buf, sizeof buf, "02:00:00:00:%02x:%02x", (n >> 8) & 0xff, n & 0xff);
  else if (kind == "host")
    std::snprintf(buf, sizeof buf, "host-%04d", n);
  else if (kind == "id")
    std::snprintf(buf, sizeof buf, "ID-%04d", n);
  else
    std::snprintf(buf, sizeof buf, "SERIAL-%04d", n);
  return map_[value] = buf;
}

void Redactor::add_serial(const std::string& raw) {
  std::string value(trim(raw));
  if (!value.empty()) placeholder("serial", value);
}

void Redactor::add_hostname(const std::string& raw) {
  std::string value(trim(raw));
  if (value.empty() || value == "localhost" || value == "(none)") return;
  hostnames_[value] = placeholder("host", value);
  // The short name of an FQDN appears on its own too ("root@vm" in a kernel banner).
  size_t dot = value.find('.');
  if (dot != std::string::npos && dot > 0) hostnames_[value.substr(0, dot)] = placeholder("host", value.substr(0, dot));
}

void Redactor::learn(const std::string& path, const std::string& bytes) {
  std::string base = basename(path);
  if (bytes.find('\0') != std::string::npos) {
    if (base == "config") {
      int at = dsn_offset(bytes);
      if (at >= 0) placeholder("serial", "dsn:" + bytes.substr(static_cast<size_t>(at) + 4, 8));
    }
    return;
  }
  if (is_serial_file(base)) add_serial(bytes);
  if (is_id_file(base) && !trim(bytes).empty()) placeholder("id", std::string(trim(bytes)));
  if (path == "/proc/sys/kernel/hostname" || path == "/etc/hostname") add_hostname(bytes);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (uuid_at(bytes, i))
      placeholder("uuid", lower(bytes.substr(i, 36)));
    else if (mac_at(bytes, i))
      placeholder("mac", lower(bytes.substr(i, 17)));
  }
}

std::string Redactor::text(std::string_view input) {
  std::string out(input);
  // Literal secrets, longest first so a serial inside another is not half-replaced. Short values
  // (a serial of "1234") would hit unrelated numbers, so only their own files lose them.
  std::vector<std::pair<std::string, std::string>> literals;
  for (const auto& [value, ph] : map_)
    if (value.rfind("dsn:", 0) != 0 && !uuid_at(value, 0) && !mac_at(value, 0) && !hostnames_.count(value) &&
        value.size() >= 6 &&
        std::any_of(value.begin(), value.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      literals.emplace_back(value, ph);
  std::sort(literals.begin(), literals.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [value, ph] : literals) out = replace_all(out, value, ph);
  std::vector<std::pair<std::string, std::string>> hosts(hostnames_.begin(), hostnames_.end());
  std::sort(hosts.begin(), hosts.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [value, ph] : hosts) out = replace_tokens(out, value, ph);
  std::string result;
  result.reserve(out.size());
  for (size_t i = 0; i < out.size();) {
    if (uuid_at(out, i)) {
      result += placeholder("uuid", lower(out.substr(i, 36)));
      i += 36;
    } else if (mac_at(out, i)) {
      result += placeholder("mac", lower(out.substr(i, 17)));
      i += 17;
    } else {
      result += out[i++];
    }
  }
  return result;
}

std::string Redactor::file(const std::string& path, const std::string& bytes) {
  std::string base = basename(path);
  // Kernel symbol addresses give away the KASLR offset; the analysis reads only the names. Zeroed,
  // they look as they do to a non-root reader.
  if (path == "/proc/kallsyms") {
    std::string out = bytes;
    for (size_t line = 0; line < out.size();) {
      for (size_t i = line; i < out.size() && std::isxdigit(static_cast<unsigned char>(out[i])); ++i) out[i] = '0';
      size_t next = out.find('\n', line);
      if (next == std::string::npos) break;
      line = next + 1;
    }
    return text(out);
  }
  if (bytes.find('\0') != std::string::npos) {
    if (base != "config") return bytes;
    int at = dsn_offset(bytes);
    if (at < 0) return bytes;
    std::string out = bytes;
    // The placeholder's number, little-endian, where the serial was: stable and obviously fake.
    std::string ph = placeholder("serial", "dsn:" + bytes.substr(static_cast<size_t>(at) + 4, 8));
    unsigned long n = std::stoul(ph.substr(ph.find('-') + 1));
    for (int i = 0; i < 8; ++i)
      out[static_cast<size_t>(at) + 4 + static_cast<size_t>(i)] = static_cast<char>(i < 4 ? (n >> (8 * i)) & 0xff : 0);
    return out;
  }
  std::string_view value = trim(bytes);
  if ((is_serial_file(base) || is_id_file(base)) && !value.empty()) {
    auto it = map_.find(std::string(value));
    if (it != map_.end()) {
      size_t at = bytes.find(value);
      return bytes.substr(0, at) + it->second + bytes.substr(at + value.size());
    }
  }
  return text(bytes);
}

bool contains_placeholder(std::string_view text) {
  for (const char* marker :
       {"SERIAL-0", "ID-0", "host-0", "00000000-0000-4000-8000-", "02:00:00:00:", "0000000000000000 "})
    if (text.find(marker) != std::string_view::npos) return true;
  return false;
}

}  // namespace p2pcheck
