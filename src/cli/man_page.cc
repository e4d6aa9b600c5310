#include "man_page.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

#include "help_format.h"
#include "p2pcheck/source/error.h"

namespace p2pcheck::cli {
namespace {

// Text for roff: a backslash is \e and a minus \- (so options copy and search as typed), and no
// line may start with a control character.
std::string roff_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// One option as a .TP entry, in --help's own words (CLI11's formatter makes both).
std::string option_entry(const CLI::Option* opt) {
  static const HelpFormatter fmt;
  std::string tag;
  std::stringstream names(fmt.make_option_name(opt, opt->nonpositional() ? false : true));
  for (std::string name; std::getline(names, name, ',');)
    tag += (tag.empty() ? "" : ", ") + std::string("\\fB") + roff_text(name) + "\\fR";
  std::string opts = trimmed(fmt.make_option_opts(opt));
  if (!opts.empty()) tag += (opts.front() == '[' ? "\\fI" : " \\fI") + roff_text(opts) + "\\fR";  // --json[=pretty]
  return ".TP\n" + tag + "\n" + roff_text(trimmed(fmt.make_option_desc(opt))) + "\n";
}

// Positionals first, as --help lists them; hidden options (no group) stay out, as in --help, and
// so does each command's -h,--help (the global options list it once).
std::string option_list(const CLI::App& app, bool with_help) {
  std::string out;
  for (bool positional : {true, false})
    for (const CLI::Option* opt : app.get_options())
      if (!opt->get_group().empty() && opt->nonpositional() != positional && (with_help || opt != app.get_help_ptr()))
        out += option_entry(opt);
  return out;
}

void collect_commands(const CLI::App& app, const std::string& prefix, std::vector<std::string>& paths,
                      std::map<std::string, const CLI::App*>& apps) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    std::string path = prefix.empty() ? sub->get_name() : prefix + " " + sub->get_name();
    paths.push_back(path);
    apps[path] = sub;
    collect_commands(*sub, path, paths, apps);
  }
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// Every top-level command is in SYNOPSIS as \fBname\fR (a command the page documents further down
// but the synopsis leaves out is one a reader of the first screen never learns of).
void check_synopsis(const std::string& source, const std::string& source_name, const std::vector<std::string>& paths) {
  if (std::none_of(paths.begin(), paths.end(), [](const std::string& p) { return p.find(' ') == std::string::npos; }))
    return;
  const std::string head = ".SH SYNOPSIS\n";
  std::size_t start = source.starts_with(head) ? 0 : source.find("\n" + head);
  if (start == std::string::npos) throw Error(source_name, "no .SH SYNOPSIS section");
  const std::size_t end = source.find("\n.SH ", start + 1);
  const std::string synopsis = source.substr(start, end == std::string::npos ? std::string::npos : end - start);
  for (const std::string& path : paths)
    if (path.find(' ') == std::string::npos && synopsis.find("\\fB" + path + "\\fR") == std::string::npos)
      throw Error(source_name, "SYNOPSIS: no line for `p2pcheck " + path + "` (\\fB" + path + "\\fR)");
}

}  // namespace

std::string man_page(const CLI::App& app, const std::string& source, const std::string& source_name,
                     const std::string& version) {
  std::vector<std::string> paths;
  std::map<std::string, const CLI::App*> apps;
  collect_commands(app, "", paths, apps);
  check_synopsis(source, source_name, paths);
  std::map<std::string, bool> documented;

  std::string out, block;  // block: the command whose section the lines belong to
  bool block_has_example = false, block_has_options = false, in_example = false;
  int line_no = 0;
  auto fail = [&](const std::string& what) {
    throw Error(source_name, "line " + std::to_string(line_no) + ": " + what);
  };
  auto end_block = [&] {
    if (!block.empty() && !block_has_example)
      fail("the section of `p2pcheck " + block + "` has no example (.EX ... .EE) that runs it");
    // Without an @OPTIONS@ line the options end the section (none is lost).
    if (!block.empty() && !block_has_options) out += option_list(*apps.at(block), false);
    block.clear();
  };

  std::istringstream in(source);
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.starts_with(".SH")) end_block();
    if (line == ".EX") in_example = true;
    if (line == ".EE") in_example = false;
    // "p2pcheck ... kmod load" with the command's words in a row, options allowed before them.
    if (in_example && !block.empty() && line.find("p2pcheck") != std::string::npos &&
        (line + " ").find(" " + block + " ") != std::string::npos)
      block_has_example = true;
    if (line == "@OPTIONS@") {
      if (block.empty()) {
        out += option_list(app, true);
      } else {
        out += option_list(*apps.at(block), false) + ".PP\n";
        block_has_options = true;
      }
      continue;
    }
    if (line.starts_with("@COMMAND ") && line.ends_with("@")) {
      end_block();
      std::string path = line.substr(9, line.size() - 10);
      auto it = apps.find(path);
      if (it == apps.end()) fail("@COMMAND " + path + "@: p2pcheck has no such command");
      if (documented[path]) fail("@COMMAND " + path + "@: documented twice");
      documented[path] = true;
      block = path;
      block_has_example = block_has_options = false;
      out += ".SS \"p2pcheck " + roff_text(path) + "\"\n" + roff_text(it->second->get_description()) + "\n.PP\n";
      continue;
    }
    if (line.starts_with("@")) fail("unknown directive " + line);
    out += replace_all(line, "@VERSION@", roff_text(version)) + "\n";
  }
  end_block();
  for (const std::string& path : paths)
    if (!documented[path]) fail("no @COMMAND " + path + "@ line: every command needs its section");
  return out;
}

}  // namespace p2pcheck::cli
