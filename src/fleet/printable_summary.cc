// Names from input escaped in a fleet's summaries (printable_summary.h).
#include "p2pcheck/fleet/printable_summary.h"

#include "p2pcheck/source/printable.h"

namespace p2pcheck {

namespace {

void escape(std::string& text) {
  if (!is_printable(text)) text = printable(text);
}

}  // namespace

void make_printable(HostSummary& host) {
  for (std::string* s : {&host.host, &host.input, &host.format, &host.kernel, &host.cpu, &host.topology}) escape(*s);
  for (auto& f : host.findings)
    for (std::string* s : {&f.id, &f.subject, &f.message, &f.fix}) escape(*s);
  for (auto& p : host.pairs)
    for (std::string* s : {&p.gpu, &p.nvme, &p.nvme_name, &p.map_type, &p.rule}) escape(*s);
  if (host.fix) {
    for (auto& step : host.fix->steps)
      for (std::string* s : {&step.kind, &step.subject, &step.text, &step.cost}) escape(*s);
  }
}

void make_printable(UnreadableInput& input) {
  escape(input.input);
  escape(input.reason);
}

}  // namespace p2pcheck
