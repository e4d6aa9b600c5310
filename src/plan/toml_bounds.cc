// Bounding a plan's key depth and table count before toml++ parses it (toml_bounds.h).
#include "p2pcheck/plan/toml_bounds.h"

#include "p2pcheck/source/error.h"

namespace p2pcheck {

namespace {

bool bare_key_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '+';
}

}  // namespace

void check_toml_bounds(std::string_view text, const std::string& name) {
  std::size_t line = 1, dots = 0, tables = 0, depth = 0;
  bool line_start = true;  // only blanks so far on this line
  auto fail = [&](const std::string& what) { throw Error(name + ":" + std::to_string(line), what); };
  auto add_table = [&] {
    if (++tables > kMaxTomlTables)
      fail("more than " + std::to_string(kMaxTomlTables) + " tables; a plan has a few dozen");
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"' || c == '\'') {
      // A string, basic or literal, single- or multi-line; a quoted key segment keeps the chain.
      bool multi = text.substr(i, 3) == std::string_view(c == '"' ? "\"\"\"" : "'''");
      std::size_t j = i + (multi ? 3 : 1);
      for (; j < text.size(); ++j) {
        if (text[j] == '\\' && c == '"') {
          if (j + 1 < text.size() && text[j + 1] == '\n') ++line;
          ++j;
        } else if (text[j] == '\n') {
          if (!multi) break;  // unterminated: toml++ says so
          ++line;
        } else if (text[j] == c && (!multi || text.substr(j, 3) == std::string_view(c == '"' ? "\"\"\"" : "'''"))) {
          j += multi ? 2 : 0;
          // A multi-line string may end in up to two quotes of its own before the closing three.
          for (int extra = 0; multi && extra < 2 && j + 1 < text.size() && text[j + 1] == c; ++extra) ++j;
          break;
        }
      }
      i = j < text.size() && text[j] != '\n' ? j : j - 1;
      line_start = false;
      continue;
    }
    if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if (c == '.') {
      if (++dots + 1 > kMaxTomlKeySegments)
        fail("a key of more than " + std::to_string(kMaxTomlKeySegments) +
             " dotted parts; a plan's keys have at most 3");
      add_table();
    } else if (c == ' ' || c == '\t' || bare_key_char(c)) {
      // Still the same key (or number).
    } else {
      dots = 0;
    }
    if (c == '[' || c == '{') {
      if ((c == '[' && line_start && depth == 0) || c == '{') add_table();
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
    if (c == '\n') {
      ++line;
      line_start = true;
    } else if (c != ' ' && c != '\t' && c != '\r') {
      line_start = false;
    }
  }
}

}  // namespace p2pcheck
