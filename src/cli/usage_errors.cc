#include "usage_errors.h"

#include <algorithm>
#include <map>

#include "p2pcheck/source/printable.h"

namespace p2pcheck::cli {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

namespace {

// Words longer than any name are never compared: the distance is quadratic in their length.
constexpr std::size_t kLongestName = 32;

// The closest of `names` to `word`: two edits at most ("chek", "--verbos", "--svgg"), or one
// the start of the other ("topology" for "topo", "--verb" for "--verbose"); "" when none is.
std::string closest(const std::string& word, const std::vector<std::string>& names) {
  if (word.size() > kLongestName) return "";
  std::string best;
  std::size_t best_distance = 3;
  for (const std::string& name : names) {
    std::size_t d = edit_distance(word, name);
    if (word.size() >= 3 && (name.rfind(word, 0) == 0 || word.rfind(name, 0) == 0)) d = std::min<std::size_t>(d, 2);
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  return best;
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

// The command the user chose, deepest first ("kmod load"), or the app itself.
const CLI::App* chosen_command(const CLI::App& app) {
  const CLI::App* at = &app;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const CLI::App* sub : at->get_subcommands({}))
      if (sub->parsed()) {
        at = sub;
        deeper = true;
        break;
      }
  }
  return at;
}

// "--json" and "-v" for every visible option of `app`; hidden ones (no group) stay unsuggested.
void add_option_names(const CLI::App& app, std::vector<std::string>& names) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty() || !opt->nonpositional()) continue;
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
  }
}

// The command path that has `option` ("topo" for --svg), or "" when none has it.
std::string command_with_option(const CLI::App& app, const std::string& option, const std::string& prefix) {
  for (const CLI::App* sub : app.get_subcommands({})) {
    std::string path = prefix.empty() ? sub->get_name() : prefix + " " + sub->get_name();
    std::vector<std::string> names;
    add_option_names(*sub, names);
    if (std::find(names.begin(), names.end(), option) != names.end()) return path;
    if (std::string deeper = command_with_option(*sub, option, path); !deeper.empty()) return deeper;
  }
  return "";
}

std::string in_quotes(const std::string& word) { return "'" + printable(word) + "'"; }

// The unknown words in the order they were typed: CLI11 hands them back reversed and per command.
std::vector<std::string> typed_order(const CLI::App& app, const std::vector<std::string>& args) {
  std::map<std::string, int> left;
  for (const std::string& word : app.remaining(true)) ++left[word];
  std::vector<std::string> out;
  for (const std::string& arg : args)
    if (auto it = left.find(arg); it != left.end() && it->second > 0) {
      --it->second;
      out.push_back(arg);
    }
  return out;
}

std::string about_option(const CLI::App& app, const CLI::App& command, const std::string& typed) {
  const std::string name = typed.substr(0, typed.find('='));
  std::vector<std::string> here;
  add_option_names(command, here);
  if (&command != &app) add_option_names(app, here);
  const std::string command_name = &command == &app ? "" : command.get_name();
  if (std::string elsewhere = command_with_option(app, name, ""); !elsewhere.empty())
    return in_quotes(name) + " is an option of `p2pcheck " + elsewhere + "`" +
           (command_name.empty() ? "" : ", not of `" + command_name + "`");
  std::string text = "unknown option " + in_quotes(name);
  if (std::string best = closest(name, here); !best.empty()) text += "; did you mean " + in_quotes(best) + "?";
  return text;
}

}  // namespace

std::string did_you_mean(const CLI::App& app, const std::vector<std::string>& extras) {
  if (extras.empty() || extras.front().empty() || extras.front()[0] == '-') return "";
  const std::string& word = extras.front();
  std::string best = closest(word, command_names(app));
  return best.empty() ? "" : "unknown command " + in_quotes(word) + "; did you mean " + in_quotes(best) + "?";
}

std::string usage_error_text(const CLI::App& app, const CLI::ParseError& error, const std::vector<std::string>& args) {
  const CLI::App& command = *chosen_command(app);
  const std::string help =
      &command == &app ? "see `p2pcheck --help`" : "see `p2pcheck " + command.get_name() + " --help`";
  if (!dynamic_cast<const CLI::ExtrasError*>(&error)) {
    // CLI11 names a hidden option "" in its messages (": --json-schema: ..."): the message names it.
    std::string what = error.what();
    if (what.rfind(": ", 0) == 0) what.erase(0, 2);
    return "p2pcheck: " + printable(what) + "\n" + help + "\n";
  }
  std::vector<std::string> words = typed_order(app, args);
  if (words.empty()) return "p2pcheck: " + printable(error.what()) + "\n" + help + "\n";
  std::string out;
  const std::string& first = words.front();
  if (first.size() > 1 && first[0] == '-')
    out = about_option(app, command, first);
  else if (&command == &app && !(out = did_you_mean(app, words)).empty()) {
  } else if (&command == &app)
    out = "unknown command " + in_quotes(first);
  else
    out = "unexpected argument " + in_quotes(first) + ": `" + command.get_name() + "` takes " +
          (command.get_options([](const CLI::Option* o) { return !o->nonpositional(); }).empty() ? "no arguments"
                                                                                                 : "fewer arguments");
  if (words.size() > 1) {
    std::string rest;
    for (std::size_t i = 1; i < words.size(); ++i) rest += (rest.empty() ? "" : " ") + in_quotes(words[i]);
    out += " (then not understood: " + rest + ")";
  }
  return "p2pcheck: " + out + "\n" + help + "\n";
}

}  // namespace p2pcheck::cli
