// Levels and their order: every layer that sums findings up (checks, report, verify) uses these.
#include "p2pcheck/model/finding.h"

#include <algorithm>

#include "p2pcheck/source/printable.h"

namespace p2pcheck {

const char* to_string(Level level) {
  switch (level) {
    case Level::kPass: return "PASS";
    case Level::kInfo: return "INFO";
    case Level::kWarn: return "WARN";
    case Level::kFail: return "FAIL";
    case Level::kUnknown: return "UNKNOWN";
  }
  return "UNKNOWN";
}

const char* to_string(Provenance p) {
  switch (p) {
    case Provenance::kObserved: return "observed";
    case Provenance::kNotCarried: return "not_carried";
    case Provenance::kUnreadable: return "unreadable";
    case Provenance::kSupplied: return "supplied";
    case Provenance::kWhatIf: return "what_if";
  }
  return "observed";
}

std::string as_root_fix(bool from_dump, std::string_view with) {
  const std::string condition = with.empty() ? "" : " " + std::string(with);
  if (!from_dump) return "run p2pcheck as root" + (with.empty() ? "" : "," + condition);
  return "ask the machine's owner for a capture taken as root" + condition +
         " (`sudo p2pcheck capture -o host.tar.zst`) and replay that";
}

void finish_provenance(Finding& finding) {
  if (!finding.not_carried.empty())
    finding.state = Provenance::kNotCarried;
  else if (finding.level == Level::kUnknown && finding.state == Provenance::kObserved)
    finding.state = Provenance::kUnreadable;
}

int severity(Level l) {
  switch (l) {
    case Level::kPass: return 0;
    case Level::kInfo: return 1;
    case Level::kWarn: return 2;
    case Level::kUnknown: return 3;
    case Level::kFail: return 4;
  }
  return 0;
}

Level worst(const std::vector<Finding>& findings) {
  Level w = Level::kPass;
  for (const auto& f : findings)
    if (severity(f.level) > severity(w)) w = f.level;
  return w;
}

std::vector<Finding> merge_not_carried(std::vector<Finding> findings) {
  std::vector<Finding> out;
  out.reserve(findings.size());
  for (Finding& f : findings) {
    auto same = [&f](const Finding& g) {
      return !f.not_carried.empty() && g.not_carried == f.not_carried && g.id == f.id && g.level == f.level &&
             g.message == f.message && g.fix == f.fix && !g.devices.empty() && !f.devices.empty();
    };
    auto it = std::find_if(out.begin(), out.end(), same);
    if (it == out.end()) {
      out.push_back(std::move(f));
      continue;
    }
    it->subject += ", " + f.subject;
    it->devices.insert(it->devices.end(), f.devices.begin(), f.devices.end());
    for (auto& e : f.evidence)
      if (std::none_of(it->evidence.begin(), it->evidence.end(),
                       [&e](const Evidence& x) { return x.file == e.file && x.value == e.value; }))
        it->evidence.push_back(std::move(e));
  }
  return out;
}

void make_printable(std::vector<Finding>& findings) {
  auto escape = [](std::string& text) {
    if (!is_printable(text)) text = printable(text);
  };
  for (Finding& f : findings) {
    for (std::string* text : {&f.subject, &f.message, &f.fix, &f.not_carried}) escape(*text);
    for (Evidence& e : f.evidence) {
      escape(e.file);
      escape(e.value);
    }
  }
}

}  // namespace p2pcheck
