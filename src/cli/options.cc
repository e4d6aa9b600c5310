#include "options.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sys/ioctl.h>

#include "help_format.h"
#include "p2pcheck/import/dump.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/live/kmod_control.h"
#include "p2pcheck/live/p2pprobe_client.h"
#include "p2pcheck/model/supplied.h"
#include "p2pcheck/report/compact_json.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/input_file.h"
#include "p2pcheck/source/json_text.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"
#include "text_locale.h"

namespace p2pcheck::cli {

// How the output looks: JSON or text, colour, detail.
static void add_output_options(CLI::App& app, GlobalOptions& o) {
  app.add_flag("--json{compact}", o.json_style,
               "machine-readable output, one line; --json=pretty indents it (schema in docs/json.md)")
      ->option_text("[=pretty]")
      ->check(CLI::IsMember({"compact", "pretty"}))
      ->each([&o](const std::string& style) {
        o.json = true;
        o.json_pretty = style == "pretty";
      });
  // Kept so a script that asks for a retired version hears why and how to migrate, not "unknown option".
  app.add_option("--json-schema", o.json_schema, "")->group("")->each([](const std::string& value) {
    if (value == "1")
      throw CLI::ValidationError("--json-schema",
                                 "schema_version 1 (every pair in full) is retired: read version 4's decisions "
                                 "table (docs/json.md, \"Migrating from schema_version 1\"), or explain GPU NVME "
                                 "--json for one pair in full");
    if (value == "2")
      throw CLI::ValidationError("--json-schema",
                                 "schema_version 2 (each pair an object with its locality) is retired: read version "
                                 "4's pairs, [gpu, nvme, decision, distance, gpu_ports, nvme_ports] (docs/json.md, "
                                 "\"Migrating from schema_version 2\")");
    if (value == "3")
      throw CLI::ValidationError("--json-schema",
                                 "schema_version 3 (decisions rows naming each pair's ACS redirect ports) is retired: "
                                 "read version 4's pairs, [gpu, nvme, decision, distance, gpu_ports, nvme_ports], "
                                 "their ACS redirect ports in port_lists (docs/json.md, \"Migrating from "
                                 "schema_version 3\")");
    const std::string current = std::to_string(kCheckJsonSchemaVersion);
    if (value != current)
      throw CLI::ValidationError("--json-schema",
                                 value + " is not a schema_version check --json writes (" + current + ")");
  });
  app.add_option("--color", o.color, "colour: auto (on a terminal), always, never")
      ->option_text("auto|always|never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_flag("--ascii", o.ascii, "plain ASCII: tree lines and punctuation");
  app.add_flag("-v,--verbose", o.verbose,
               "check: also list the checks that pass and the notes (INFO); mounts: every bind mount");
  app.add_flag(
      "-q,--quiet", o.quiet,
      "check, paths, mounts, diff, fleet: print only the RESULT line (the exit code says the same); topo: nothing");
}

void add_global_options(CLI::App& app, GlobalOptions& o) {
  app.add_option("--root", o.root,
                 "analyse a captured Linux root directory (DIR/sys, DIR/proc, ...) instead of this machine")
      ->option_text("DIR");
  app.add_option("--dump", o.dump,
                 "analyse a dump: a capture or tar of a root, lspci -xxxx output, udevadm info --export-db, hwloc "
                 "XML, a sosreport, an nvidia-bug-report.log(.gz), or a directory of them (by content)")
      ->option_text("FILE|DIR");
  add_output_options(app, o);
  app.add_option("--gpu", o.selection.gpu, "GPU side of the pairs: a PCI address (any function may stand in)")
      ->option_text("BDF[,BDF...]")
      ->delimiter(',');
  app.add_option(
         "--nvme", o.selection.nvme,
         "NVMe side: PCI address, nvme0, nvme0n1, /dev/nvme0n1, or a mount point or file path (the NVMe below it)")
      ->option_text("NAME|PATH[,...]")
      ->delimiter(',');
  app.add_option("--what-if-kernel", o.what_if_kernel,
                 "what-if: decide as kernel REL (e.g. 7.1) or kernel FILE (vmlinuz, /boot, .deb, .rpm) would; labelled")
      ->option_text("REL|FILE");
  app.add_option("--assume-kernel", o.what_if_kernel, "the same as --what-if-kernel (its former name)")
      ->option_text("REL");
  app.add_option("--kernel-release", o.kernel_release,
                 "the release the machine runs, for an input that does not say (used only then)")
      ->option_text("REL");
  app.add_option("--kernel-config", o.kernel_config,
                 "the machine's kernel config (a file, or p2pdma=y|n), for an input without one (used only then)")
      ->option_text("FILE|p2pdma=y|n");
  app.add_option("--fail-on", o.fail_on,
                 "what else fails the run: unknown, warn (added to refused,stack); -stack or -refused leaves one out")
      ->option_text("LIST");
  app.add_option("--plan", o.plan,
                 "analyse a planned server described in a TOML file (docs/plan.md) instead of a machine")
      ->option_text("FILE");
  app.add_option("--cpu", o.cpu,
                 "the machine's CPU, for an input without one (used only then): amd-zen, amd-pre-zen, intel, hygon, "
                 "power, arm64 (not x86: no CPU rule), or a /proc/cpuinfo file")
      ->option_text("CPU|FILE");
}

void list_global_options_in_subcommand_help(CLI::App& app, const std::vector<CLI::App*>& subcommands) {
  std::string text = "Global options (before or after the command):\n";
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_name(false, true) == "-h,--help" || option->get_group().empty()) continue;  // hidden
    std::string left = "  " + option_synopsis(option);
    // Descriptions start in column 30, as CLI11 writes the command's own options above.
    left = left.size() < 29 ? left + std::string(29 - left.size(), ' ') : left + "\n" + std::string(29, ' ');
    text += left + " " + option->get_description() + "\n";
  }
  for (CLI::App* sub : subcommands) sub->footer(help_examples(sub->get_name()) + text);
}

namespace {

// open_source(), and for replays what replay_info() would answer: a capture's manifest is parsed
// while it is opened (its failures replay), and that parse is handed on instead of repeated.
// --dump FILE and --plan FILE go through the one door (open_input_path); --plan reads FILE as a plan.
std::unique_ptr<Source> open_source_and_manifest(const GlobalOptions& o, std::optional<CaptureInfo>* replay) {
  if (!o.plan.empty() && !replay)
    throw UsageError(
        "--plan describes a server that is not built yet; this command needs a machine (--root, --dump or this one)");
  if (!o.plan.empty() && (!o.root.empty() || !o.dump.empty()))
    throw UsageError("--plan and --root/--dump select different inputs; give one");
  if (!o.root.empty() && !o.dump.empty()) throw UsageError("--root and --dump select different sources; give one");
  const std::string& file = o.plan.empty() ? o.dump : o.plan;
  if (!file.empty() && replay) {
    OpenedDump opened = open_input_path(file, ImportOptions{o.cpu}, !o.plan.empty());
    *replay = std::move(opened.info);
    return std::move(opened.source);
  }
  // An unpacked capture replays like the archive: what could not be read stays unreadable.
  std::unique_ptr<Source> source = !o.root.empty()   ? with_capture_manifest(open_tree_source(o.root))
                                   : !o.dump.empty() ? open_dump_source(o.dump, ImportOptions{o.cpu})
                                                     : open_live_source();
  if (replay) *replay = replay_info(*source);
  if (replay) refuse_plan_manifest(*replay, o.root);
  return source;
}

}  // namespace

std::unique_ptr<Source> open_source(const GlobalOptions& o) { return open_source_and_manifest(o, nullptr); }

Input open_input(const GlobalOptions& o) {
  Input input;
  input.source = open_source_and_manifest(o, &input.replay);
  return input;
}

MachineState load_state(Input& input, Load what) {
  return load_input_state(*input.source, input.replay ? &*input.replay : nullptr, what);
}

std::string input_text(const Input& input, bool verbose) { return replay_text(input.replay, verbose); }

PairSelection selection_for(const Input& input, const GlobalOptions& o) {
  PairSelection selection = o.selection;
  // Either side given on the command line replaces the whole recorded selection.
  if (input.replay && selection.gpu.empty() && selection.nvme.empty()) return input.replay->selection;
  if (input.replay)  // the names the input gives its devices ("gpu0" in a plan)
    for (auto* side : {&selection.gpu, &selection.nvme})
      for (std::string& value : *side) value = device_selector(*input.replay, value);
  // A relative --nvme path starts where the user stands on the live machine; in a tree, dump or
  // plan there is no such place, and the library takes it from the machine's "/".
  if (input.source && input.source->is_live())
    for (std::string& value : selection.nvme)
      if (is_path_selector(value) && value[0] != '/') value = std::filesystem::current_path().string() + "/" + value;
  return selection;
}

std::string selection_args(const PairSelection& selection) {
  auto joined = [](const std::vector<std::string>& side) {
    std::string out;
    for (const auto& v : side) out += (out.empty() ? "" : ",") + v;
    return out;
  };
  std::string out;
  if (!selection.gpu.empty()) out = "--gpu " + joined(selection.gpu);
  if (!selection.nvme.empty()) out += (out.empty() ? "" : " ") + std::string("--nvme ") + joined(selection.nvme);
  return out.empty() ? "every pair" : out;
}

std::optional<CaptureInfo> replay_info(Source& source) {
  return source.is_live() ? std::nullopt : read_capture_info(source);
}

namespace {

// Records of one kind in one line: the first few subjects and a count; -v lists them all.
std::string input_note_group_text(const InputNoteGroup& g, bool verbose) {
  constexpr std::size_t kShown = 3;
  if (g.kind.empty() || g.count == 1) return printable(g.first);
  std::string out = std::to_string(g.count) + " " + printable(g.kind) + ":";
  const std::size_t shown = verbose ? g.subjects.size() : std::min(kShown, g.subjects.size());
  for (std::size_t i = 0; i < shown; ++i) out += " " + printable(g.subjects[i]);
  if (shown < g.count) out += verbose ? " and " + std::to_string(g.count - shown) + " more" : " ... (-v lists them)";
  return out;
}

}  // namespace

std::string replay_text(const std::optional<CaptureInfo>& info, bool verbose) {
  if (!info) return "";
  const auto& m = info->manifest;
  // The manifest's words come from the input: escaped as every name from input (printable.h).
  auto str = [&](const char* key) {
    return m.contains(key) && m[key].is_string() ? printable(m[key].get<std::string>()) : std::string();
  };
  std::string out;
  if (info->format == "capture") {
    std::string root =
        m.contains("as_root") && m["as_root"].is_boolean() ? (m["as_root"].get<bool>() ? "yes" : "no") : "unknown";
    out = "replaying a capture by p2pcheck " + str("tool_version") +
          (str("captured_at").empty() ? "" : " taken " + str("captured_at")) +
          (str("source").empty() ? "" : " from " + str("source")) + "; as root: " + root + "\n";
  } else {
    // A plan says what it is in its own words ("planned server from FILE: ..."); the dump door
    // refuses a manifest that calls itself a plan, so no dump takes a title.
    out = (info->format != "plan" || str("title").empty()
               ? "imported from " + printable(info->format) + " input: " + str("source")
               : str("title")) +
          "\n";
  }
  if (!info->selection.gpu.empty() || !info->selection.nvme.empty())
    out += "  pairs recorded in the capture: " + printable(selection_args(info->selection)) +
           " (--gpu/--nvme choose others)\n";
  for (const auto& n : info->notes) out += "  note: " + printable(n) + "\n";
  if (info->input_note_groups.empty())  // a manifest from before the groups
    for (const auto& n : info->input_notes) out += "  left out: " + printable(n) + "\n";
  for (const auto& g : info->input_note_groups) out += "  left out: " + input_note_group_text(g, verbose) + "\n";
  return out + "\n";
}

std::string json_output(const GlobalOptions& o, const nlohmann::ordered_json& j) {
  return json_text(j, json_indent(o));
}

int json_indent(const GlobalOptions& o) { return o.json_pretty ? 2 : -1; }

namespace {

// $COLUMNS first (what the user set), then the terminal's own width; nullopt for a pipe or a file.
std::optional<std::size_t> known_width() {
  if (const char* columns = getenv("COLUMNS"))
    if (auto n = parse_dec(columns); n && *n >= 20 && *n <= 1000) return static_cast<std::size_t>(*n);
  struct winsize ws {};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
  return std::nullopt;
}

}  // namespace

std::size_t output_width() { return known_width().value_or(TextStyle::kDefaultTextWidth); }

bool plain_ascii(const GlobalOptions& o) { return o.ascii || locale_wants_ascii(); }

TextStyle text_style(const GlobalOptions& o) {
  TextStyle style;
  style.color = o.color == "always" || (o.color == "auto" && isatty(STDOUT_FILENO) && !getenv("NO_COLOR"));
  style.unicode = !plain_ascii(o);
  const std::optional<std::size_t> known = known_width();
  style.width = known.value_or(TextStyle::kDefaultTextWidth);
  style.wrap = known.value_or(0);  // a file or pipe keeps each finding on one line
  return style;
}

void print_text(const GlobalOptions& o, const std::string& text) {
  std::cout << (plain_ascii(o) ? ascii_text(text) : text);
}

int exit_for(Result result) {
  switch (result) {
    case Result::kPass: return kExitOk;
    case Result::kFail: return kExitFail;
    case Result::kUnknown: return kExitUnknown;
    case Result::kNoPairs: return kExitNoPair;
  }
  return kExitUnknown;
}

namespace {

void check_release(const char* option, const std::string& release) {
  if (!parse_kernel_version(release))
    throw UsageError(std::string(option) + " " + release + ": expected a release such as 6.8 or 5.14.0-570.el9_6");
  if (release.size() > kMaxReleaseBytes) throw UsageError(std::string(option) + ": longer than a kernel release");
}

}  // namespace

CheckOptions check_options(const GlobalOptions& o) {
  CheckOptions options;
  options.selection = o.selection;
  if (!o.what_if_kernel.empty() && names_kernel_image(o.what_if_kernel)) {
    // A kernel image or package: its own release, config and allowlist (model/kernel_image.h).
    auto image = std::make_shared<KernelImage>(read_kernel_image(o.what_if_kernel));
    options.what_if_kernel = image->release;
    options.what_if_image = std::move(image);
  } else if (!o.what_if_kernel.empty()) {
    check_release("--what-if-kernel", o.what_if_kernel);
    options.what_if_kernel = o.what_if_kernel;
  }
  if (!o.kernel_release.empty()) {
    check_release("--kernel-release", o.kernel_release);
    options.supplied.kernel_release = o.kernel_release;
  }
  if (!o.kernel_config.empty()) {
    std::string label = "--kernel-config " + o.kernel_config;
    const bool keyword = o.kernel_config.rfind("p2pdma=", 0) == 0;
    std::optional<std::string> bytes;
    // An allyesconfig is ~300 KB; 16 MiB is no kernel's config.
    if (!keyword) bytes = read_input_file(o.kernel_config, 16u << 20, "--kernel-config", "expected a kernel config");
    options.supplied.kernel_config = supplied_kernel_config(label, bytes);
    options.supplied.kernel_config_given = o.kernel_config;
  }
  if (!o.cpu.empty()) {
    CpuInfo cpu = parse_cpuinfo(cpuinfo_for_option(o.cpu));
    cpu.evidence_file = "--cpu " + o.cpu;
    options.supplied.cpu = cpu;
    options.supplied.cpu_given = o.cpu;
  }
  if (o.fail_on) options.fail_on = parse_fail_policy(*o.fail_on);
  return options;
}

std::unique_ptr<CheckReport> checked(Input& input, const GlobalOptions& o, Load load, Targets targets) {
  CheckOptions options = check_options(o);
  options.selection = selection_for(input, o);
  options.load = load;
  if (targets == Targets::kMounted) {
    options.mounted_targets = true;
    if (input.replay && o.selection.nvme.empty()) options.selection.nvme.clear();  // a capture's recorded NVMe
  }
  // What the input cannot carry (a plan's drivers, IOMMU, storage), as its manifest says.
  if (input.replay) options.not_carried = uncarried_areas(*input.replay);
  // Static: the module stays open while the command prints (it is asked during run_check).
  static std::unique_ptr<P2pprobeClient> kernel_module;
  if (input.source->is_live()) {
    kernel_module = open_kernel_module(options.kernel_module_problem);
    options.ask_kernel_module = [module = kernel_module.get(), problem = options.kernel_module_problem](
                                    const PairList& pairs) { return ask_kernel_module(module, problem, pairs); };
  }
  return run_check(load_state(input, load), *input.source, options);
}

void free_at_exit(std::shared_ptr<const void> object) {
  static auto* kept = new std::vector<std::shared_ptr<const void>>;  // never freed, on purpose
  kept->push_back(std::move(object));
}

void free_at_exit(Input& input) { free_at_exit(std::shared_ptr<const void>(std::move(input.source))); }

void print_no_pair(const std::string& source, std::size_t gpus, std::size_t nvmes) {
  std::cerr << "p2pcheck: no GPU–NVMe pair found in " << source << " (" << gpus << " GPU(s), " << nvmes
            << " NVMe); name any two functions with --gpu and --nvme\n";
}

}  // namespace p2pcheck::cli
