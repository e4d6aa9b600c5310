// `p2pcheck fleet --junit FILE` (fleet_junit.h).
#include "p2pcheck/fleet/fleet_junit.h"

#include "p2pcheck/fleet/markup.h"

namespace p2pcheck {

namespace {

std::string attr(const char* name, const std::string& value) {
  return std::string(" ") + name + "=\"" + xml_escape(value) + "\"";
}

struct Case {
  std::string classname, name;
  enum { kPassed, kFailed, kSkipped } outcome = kPassed;
  std::string message, body;
};

std::string case_xml(const Case& c) {
  std::string out = "    <testcase" + attr("classname", c.classname) + attr("name", c.name) + attr("time", "0");
  switch (c.outcome) {
    case Case::kPassed: return out + "/>\n";
    case Case::kFailed:
      return out + ">\n      <failure" + attr("message", c.message) + attr("type", "p2pcheck") + ">" +
             xml_escape(c.body) + "</failure>\n    </testcase>\n";
    case Case::kSkipped: return out + ">\n      <skipped" + attr("message", c.message) + "/>\n    </testcase>\n";
  }
  return out + "/>\n";
}

std::string suite_xml(const std::string& name, const std::vector<Case>& cases, const std::string& properties,
                      std::size_t errors, const std::string& error_cases) {
  std::size_t failures = 0, skipped = 0;
  for (const auto& c : cases) {
    failures += c.outcome == Case::kFailed;
    skipped += c.outcome == Case::kSkipped;
  }
  std::string out = "  <testsuite" + attr("name", name) + attr("tests", std::to_string(cases.size() + errors)) +
                    attr("failures", std::to_string(failures)) + attr("errors", std::to_string(errors)) +
                    attr("skipped", std::to_string(skipped)) + attr("time", "0") + ">\n" + properties;
  for (const auto& c : cases) out += case_xml(c);
  return out + error_cases + "  </testsuite>\n";
}

std::vector<Case> host_cases(const HostSummary& host) {
  std::vector<Case> cases;
  for (const auto& f : host.findings) {
    Case c;
    c.classname = host.host + ".check";
    c.name = f.id + (f.subject.empty() ? "" : " (" + f.subject + ")");
    if (f.concerns && f.level == Level::kFail) {
      c.outcome = Case::kFailed;
      c.message = f.message;
      c.body = f.message + (f.fix.empty() ? "" : "\nfix: " + f.fix);
    } else if (f.concerns && f.level == Level::kUnknown) {
      c.outcome = Case::kSkipped;
      c.message = "unknown: " + f.message;
    }
    cases.push_back(std::move(c));
  }
  for (const auto& p : host.pairs) {
    Case c;
    c.classname = host.host + ".pair";
    c.name = "GPU " + p.gpu + " <-> " + (p.nvme_name.empty() ? "" : p.nvme_name + " ") + p.nvme;
    std::string what = std::string(to_string(p.verdict)) + " (" + p.map_type + ")" +
                       (p.cause == Cause::kNone ? "" : std::string(": ") + token(p.cause)) +
                       (p.rule.empty() ? "" : " — " + p.rule);
    if (p.verdict == Verdict::kNotSupported) {
      c.outcome = Case::kFailed;
      c.message = what;
      c.body = what + (p.acs_ports.empty() ? "" : "\nfix: boot with " + disable_acs_redir_param(p.acs_ports)) +
               "\nsee: p2pcheck --dump " + host.input + " explain " + p.gpu + " " + p.nvme;
    } else if (p.verdict == Verdict::kUnknown) {
      c.outcome = Case::kSkipped;
      c.message = what;
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace

std::string fleet_junit(const FleetReport& r) {
  std::string suites;
  std::size_t tests = 0, failures = 0, errors = r.unreadable.size(), skipped = 0;
  for (const auto& host : r.hosts) {
    std::vector<Case> cases = host_cases(host);
    for (const auto& c : cases) {
      failures += c.outcome == Case::kFailed;
      skipped += c.outcome == Case::kSkipped;
    }
    tests += cases.size();
    std::string properties = "    <properties>\n" + std::string("      <property") + attr("name", "input") +
                             attr("value", host.input) + "/>\n      <property" + attr("name", "result") +
                             attr("value", to_string(host.result)) + "/>\n      <property" + attr("name", "format") +
                             attr("value", host.format) + "/>\n      <property" + attr("name", "fingerprint") +
                             attr("value", host.topology) + "/>\n    </properties>\n";
    suites += suite_xml(host.host, cases, properties, 0, "");
  }
  if (!r.unreadable.empty()) {
    std::string error_cases;
    for (const auto& u : r.unreadable)
      error_cases += "    <testcase" + attr("classname", "unreadable") + attr("name", u.input) + attr("time", "0") +
                     ">\n      <error" + attr("message", u.reason) + attr("type", "unreadable input") + "/>\n" +
                     "    </testcase>\n";
    suites += suite_xml("unreadable inputs", {}, "", r.unreadable.size(), error_cases);
    tests += r.unreadable.size();
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites" + attr("name", "p2pcheck fleet") +
         attr("tests", std::to_string(tests)) + attr("failures", std::to_string(failures)) +
         attr("errors", std::to_string(errors)) + attr("skipped", std::to_string(skipped)) + attr("time", "0") + ">\n" +
         suites + "</testsuites>\n";
}

}  // namespace p2pcheck
