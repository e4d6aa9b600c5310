// Bounded splitting of procfs tables (table_text.h).
#include "p2pcheck/source/table_text.h"

#include <algorithm>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

std::vector<std::string_view> split_table_lines(std::string_view text, const std::string& file) {
  // Counted before anything is stored: the cost is in the rows, not in the text.
  auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  if (lines > kMaxTableLines)
    throw Error(file, std::to_string(lines) + " lines; no machine's has more than " + std::to_string(kMaxTableLines));
  std::vector<std::string_view> rows;
  rows.reserve(lines + 1);
  while (!text.empty()) rows.push_back(next_line(text));
  return rows;
}

}  // namespace p2pcheck
