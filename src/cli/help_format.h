// How --help, the man page and the global-options footer spell an option: its value named as in
// the docs (--root DIR, --json[=pretty], explain GPU NVME), without CLI11's type labels
// ("TEXT:{auto,always,never}", "INT:{1,2}", "pair TEXT x 2 REQUIRED", "--json{compact}").
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace p2pcheck::cli {

// The value's name comes from Option::option_text ("DIR", "[=pretty]", "GPU NVME" for a
// positional); an option that takes a value and names none reads "VALUE".
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override;
  std::string make_option_opts(const CLI::Option* opt) const override;
  std::string make_option_usage(const CLI::Option* opt) const override;
};

// "Examples:" and a few command lines for `p2pcheck PATH --help` ("check", "kmod load"), each one
// of the man page's examples of that command (packaging/tests/manpage_test.sh holds them to it);
// "" for a command without any.
std::string help_examples(const std::string& command_path);

// "--json[=pretty]", "--root DIR", "-v,--verbose": one option as help writes it.
std::string option_synopsis(const CLI::Option* opt);

}  // namespace p2pcheck::cli
