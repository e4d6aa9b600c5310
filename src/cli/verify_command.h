// The `verify` subcommand of the p2pcheck CLI, kept apart from main.cc: main adds it with
// add_verify_command() before parsing and runs it when selected(). It reads the shared options
// (--gpu, --nvme, --json, --color, --ascii, --root, --dump) from the parent app by name.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace p2pcheck::cli {

class VerifyCommand {
 public:
  explicit VerifyCommand(CLI::App& parent);
  bool selected() const { return sub_->parsed(); }
  // Prints the plan, runs it, prints the results, leaves the JSON at --results, and returns the exit
  // code (0 pass, 1 a direction failed / was refused / mismatched, 2 could not decide, 4 no pair).
  // Throws UsageError and Error like the other commands; main turns them into 3 and 5.
  int run();

 private:
  std::vector<std::string> parent_strings(const std::string& name) const;
  bool parent_flag(const std::string& name) const;

  CLI::App& parent_;
  CLI::App* sub_;
  std::vector<std::string> targets_, raw_;
  std::string size_, engine_ = "auto", direction_ = "both", results_;
  std::string offset_;
  std::optional<std::uint64_t> seed_;
  double timeout_ = 60;
  bool allow_destructive_ = false, force_ = false, try_anyway_ = false, no_results_ = false;
};

// Registers `verify` on `app`; keep the returned object alive until run().
std::shared_ptr<VerifyCommand> add_verify_command(CLI::App& app);

}  // namespace p2pcheck::cli
