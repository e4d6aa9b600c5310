#include "help_format.h"

#include <map>
#include <vector>

namespace p2pcheck::cli {

namespace {

// "--json{compact}" is how CLI11 spells a flag with a default value; users type --json.
std::string without_default_spelling(std::string name) {
  for (std::size_t open; (open = name.find('{')) != std::string::npos;) {
    std::size_t close = name.find('}', open);
    name.erase(open, close == std::string::npos ? std::string::npos : close - open + 1);
  }
  return name;
}

}  // namespace

std::string HelpFormatter::make_option_name(const CLI::Option* opt, bool is_positional) const {
  if (is_positional) return opt->get_option_text().empty() ? opt->get_name(true, false) : opt->get_option_text();
  return without_default_spelling(opt->get_name(false, true));
}

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
  if (!opt->nonpositional()) return "";  // the name is the value's name
  const std::string& text = opt->get_option_text();
  if (!text.empty()) return (text.front() == '[' ? "" : " ") + text;
  return opt->get_items_expected_max() > 0 ? " VALUE" : "";  // a flag takes none
}

std::string HelpFormatter::make_option_usage(const CLI::Option* opt) const {
  std::string name = make_option_name(opt, true);
  return opt->get_required() ? name : "[" + name + "]";
}

std::string help_examples(const std::string& command_path) {
  // Each line is also in the man page (src/cli/p2pcheck.1.in) under the same command.
  static const std::map<std::string, std::vector<std::string>> kExamples = {
      {"check",
       {"p2pcheck check", "p2pcheck --nvme /dev/nvme0n1 check -v", "p2pcheck --nvme /data check",
        "p2pcheck --dump sosreport.tar.xz check", "p2pcheck --what-if-kernel 6.12 check --quiet",
        "p2pcheck check --quiet --prometheus /var/lib/prometheus/node-exporter/p2pcheck.prom"}},
      {"explain", {"p2pcheck --dump customer.tar.gz explain 0000:43:00.0 nvme2"}},
      {"topo", {"p2pcheck topo --ascii", "p2pcheck --plan server.toml topo --svg server.svg"}},
      {"paths", {"p2pcheck paths --gpu 43:00.0 --json"}},
      {"mounts", {"p2pcheck mounts", "p2pcheck --dump sosreport.tar.xz mounts --json"}},
      {"capture", {"p2pcheck capture --redact -o host.tar.zst", "p2pcheck --dump host.tar.zst check"}},
      {"fleet", {"p2pcheck fleet --junit fleet.xml --html fleet.html captures/"}},
      {"diff", {"p2pcheck diff /etc/p2pcheck/baseline.json"}},
      {"slurm", {"p2pcheck slurm features"}},
      {"slurm features", {"p2pcheck slurm features"}},
      {"slurm health", {"p2pcheck slurm health --baseline /etc/p2pcheck/baseline.json"}},
      {"kmod", {"p2pcheck kmod status"}},
      {"kmod status", {"p2pcheck kmod status --json"}},
      {"kmod load", {"p2pcheck kmod load"}},
      {"kmod unload", {"p2pcheck kmod unload"}},
      {"verify",
       {"p2pcheck verify --target /mnt/nvme0",
        "p2pcheck --gpu 43:00.0 --nvme nvme1n1 verify --raw /dev/nvme1n1 --offset 1G --allow-destructive"}},
  };
  auto it = kExamples.find(command_path);
  if (it == kExamples.end()) return "";
  std::string out = "Examples:\n";
  for (const std::string& line : it->second) out += "  " + line + "\n";
  return out + "\n";
}

std::string option_synopsis(const CLI::Option* opt) {
  static const HelpFormatter format;
  return format.make_option_name(opt, !opt->nonpositional()) + format.make_option_opts(opt);
}

}  // namespace p2pcheck::cli
