#include "cli/cli.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/mpi_world.hpp"
#include "core/process.hpp"
#include "core/version.hpp"
#include "report/report.hpp"
#include "scenario/scenario.hpp"

namespace podnet::cli {

namespace {

// A command-line error as podnet's other errors read: its prefix, and for an option this command lacks, the
// nearest it has, or the scenario key another command's option of that name sets ("(sets KEY)" in its help).
std::string parse_error_text(const CLI::App& app, const CLI::ParseError& e, const std::string& command,
                             const std::vector<std::string>& args) {
  std::string text = e.what();
  const CLI::App* sub = nullptr;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; }))
    if (s->get_name() == command) sub = s;
  if (!sub) {
    if (command.empty() || command[0] == '-')  // no command at all: CLI11 says "A subcommand is required"
      return "a command is required: `podnet list` shows what is built in, `podnet run` runs a first example, "
             "`podnet --help` lists the commands";
    return text;
  }
  // A positional argument left out ("b is required"): say what the command takes, with its usage line.
  if (dynamic_cast<const CLI::RequiredError*>(&e) && text.find(" is required") != std::string::npos &&
      text.rfind("--", 0) != 0) {
    std::vector<std::string> positionals;
    for (const CLI::Option* o : sub->get_options())
      if (o->get_positional()) positionals.push_back(fmt::format("{}: {}", o->get_name(), o->get_description()));
    if (!positionals.empty()) {
      text = fmt::format("`podnet {}` takes {} ({})", command,
                         positionals.size() == 1 ? "one argument" : fmt::format("{} arguments", positionals.size()),
                         fmt::join(positionals, "; "));
      // The help's first example shows them in place.
      const std::string footer = sub->get_footer();
      if (const size_t at = footer.find("podnet " + command + " "); at != std::string::npos) {
        std::string example = footer.substr(at, footer.find('\n', at) - at);
        if (const size_t hash = example.find("  #"); hash != std::string::npos) example.erase(hash);
        while (!example.empty() && example.back() == ' ') example.pop_back();
        text += fmt::format("; for example: {}", example);
      }
    }
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    // The first option among the unexpected words (--name, or -x), else the first word.
    std::string option, first;
    bool found = false;
    for (std::istringstream words(text.substr(text.find(':') + 1)); !found && words >> option;) {
      if (first.empty()) first = option;
      found = option.rfind("--", 0) == 0 || (option.size() == 2 && option[0] == '-');
    }
    // A value after a flag ("--allow-oom true"): a flag takes none.
    if (!found && !first.empty()) {
      for (size_t i = 1; i < args.size(); ++i) {
        if (args[i] != first) continue;
        const std::string& before = args[i - 1];
        if (before.rfind("--", 0) != 0 || before.find('=') != std::string::npos) continue;
        for (const CLI::Option* o : sub->get_options())
          if (o->check_lname(before.substr(2)) && o->get_expected_max() == 0)
            return fmt::format("{} is a flag and takes no value ('{}' after it): give {} alone for yes, {}=false for "
                               "no (`podnet {} --help` lists its options)",
                               before, first, before, before, command);
      }
    }
    if (found) {
      std::vector<std::string> names;
      for (const CLI::Option* o : sub->get_options())
        for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
      text = fmt::format("`podnet {}` has no option {}", command, option);
      std::string elsewhere;
      std::vector<std::string> takers;  // the commands that have it, for an option that sets no key
      for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; }))
        for (const CLI::Option* o : s->get_options()) {
          if (!(option.size() == 2 ? o->check_sname(option.substr(1)) : o->check_lname(option.substr(2)))) continue;
          const std::string d = o->get_description();
          if (const auto k = d.find("(sets "); k == std::string::npos) {
            if (std::find(takers.begin(), takers.end(), s->get_name()) == takers.end()) takers.push_back(s->get_name());
          } else if (elsewhere.empty()) {
            // The key alone: "(sets network.engine; default: ...)" names network.engine.
            const size_t end = d.find_first_of(";), ", k + 6);
            const std::string key = d.substr(k + 6, end == std::string::npos ? std::string::npos : end - k - 6);
            elsewhere =
                fmt::format("; `podnet {}`'s {} sets {}: here, --set {}=VALUE", s->get_name(), option, key, key);
          }
        }
      // An option of other commands is not a misspelling of this one's (design --gpus is not --out).
      if (elsewhere.empty() && !takers.empty()) {
        std::vector<std::string> quoted;
        for (const auto& t : takers) quoted.push_back("`podnet " + t + "`");
        elsewhere = takers.size() > 4
                        ? fmt::format("; {} other commands take it", takers.size())
                        : fmt::format("; {} take{} it", fmt::join(quoted, ", "), takers.size() == 1 ? "s" : "");
      }
      const std::string near = scenario::closest(option, names);
      text += elsewhere.empty() && !near.empty() ? fmt::format("; did you mean {}?", near) : elsewhere;
      if (command == "resolve" && (option == "--out" || option == "-o"))
        text = fmt::format("`podnet resolve` has no option {}: it writes no files, it prints the scenario (redirect "
                           "stdout: podnet resolve SCENARIO > my.yaml)",
                           option);
    }
  }
  // An option given twice ("--min: At Most 1 required but received 2", easy when adding to a copied command):
  // which one would count is not guessed.
  constexpr std::string_view kTwice = ": At Most 1 required but received ";
  if (const size_t at = text.find(kTwice); at != std::string::npos)
    text = fmt::format("{} is given {} times; expected it once (edit the one you have instead of adding another)",
                       text.substr(0, at), text.substr(at + kTwice.size()));
  // A value CLI11 could not convert ("Could not convert: --loss = 5%"): what the option takes, in words.
  if (dynamic_cast<const CLI::ConversionError*>(&e) && text.rfind("Could not convert: ", 0) == 0) {
    const std::string rest = text.substr(19);
    if (const size_t eq = rest.find(" = "); eq != std::string::npos) {
      const std::string name = rest.substr(0, eq), value = rest.substr(eq + 3);
      for (const CLI::Option* o : sub->get_options()) {
        if (!(name.rfind("--", 0) == 0 ? o->check_lname(name.substr(2))
                                       : name.size() == 2 && o->check_sname(name.substr(1))))
          continue;
        const std::string type = o->get_type_name();
        const std::string kind = type == "INT"           ? "a whole number"
                                 : type == "UINT"        ? "a whole number, 0 or more"
                                 : type == "FLOAT"       ? "a plain number, no unit or %"
                                 : type == "PROBABILITY" ? "a probability, such as 0.001 or 0.1%"
                                                         : "a " + type;
        std::string what = o->get_description();
        if (const size_t cut = what.find(" ("); cut != std::string::npos) what.erase(cut);
        if (const std::string d = o->get_default_str(); !d.empty())
          what += fmt::format("{}e.g. {} {}", what.empty() ? "" : "; ", name, d);
        text = fmt::format("{} {}: expected {}{}", name, value, kind, what.empty() ? "" : " (" + what + ")");
        break;
      }
    }
  }
  return fmt::format("{} (`podnet {} --help` lists its options)", text, command);
}

// An example command in --help, wider than a terminal: continued with a backslash before an option (and its value) that
// would pass the width, so that it still pastes into a shell.
void append_example(std::string& out, const std::string& line, size_t indent) {
  std::istringstream words(line);
  std::vector<std::string> units;
  for (std::string word; words >> word;) {
    const bool value = !units.empty() && units.back()[0] == '-' && units.back().find(' ') == std::string::npos &&
                       word[0] != '-' && word != "|" && word != ">";
    if (value) units.back() += " " + word;
    else units.push_back(word);
  }
  std::string current(indent, ' ');
  for (const std::string& unit : units) {
    const bool first = current.size() == indent;
    if (!first && unit[0] == '-' && current.size() + 1 + unit.size() + 2 > report::Table::kTableWidth) {
      out += current + " \\\n";
      current = std::string(indent + 4, ' ') + unit;
    } else {
      current += (first ? "" : " ") + unit;
    }
  }
  out += current + '\n';
}

// --help within a terminal's width: an option's description wraps under its own column, other lines under their
// indent (CLI11 prints each description on one line, up to 500 characters).
std::string wrap_help(const std::string& help) {
  std::string out;
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) {
    // CLI11 prints a negated flag's value in its name ("--deadlock-check,--no-deadlock-check{false}"), which reads
    // as a default of false: the description says what the default is.
    if (const size_t at = line.find("{false}"); at != std::string::npos && line.compare(0, 4, "  --") == 0)
      line.erase(at, 7);
    size_t column = line.find_first_not_of(' ');
    // "  --rate R        description", "  part TEXT:PART   description": the description's column.
    if (column != std::string::npos)
      if (const size_t gap = line.find("  ", column); gap != std::string::npos)
        column = line.find_first_not_of(' ', gap);
    if (column == std::string::npos || column > report::Table::kTableWidth / 2) column = 2;
    const size_t indent = line.find_first_not_of(' ');
    if (indent != std::string::npos && line.size() > report::Table::kTableWidth &&
        (line.compare(indent, 7, "podnet ") == 0 || line.compare(indent, 7, "mpirun ") == 0)) {
      append_example(out, line, indent);
      continue;
    }
    report::append_wrapped(out, line, column, column);
    out += '\n';
  }
  return out;
}

// An option that sets a scenario key names it in its help ("(inference.rate)", "(sets network.engine)"): the key's
// default is added there ("(inference.rate; default 1/s)"), so --help shows what a run without the option uses.
void add_key_defaults(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    for (CLI::Option* o : sub->get_options()) {
      std::string d = o->get_description();
      if (d.find("default") != std::string::npos) continue;
      // The last key named in a parenthesis.
      size_t best = std::string::npos, best_end = 0;
      std::string best_key;
      for (size_t i = 0; i < d.size(); ++i) {
        if (i > 0 && (std::isalnum(static_cast<unsigned char>(d[i - 1])) || d[i - 1] == '_' || d[i - 1] == '.'))
          continue;
        size_t j = i;
        while (j < d.size() && (std::isalnum(static_cast<unsigned char>(d[j])) || d[j] == '_' || d[j] == '.')) ++j;
        const std::string word = d.substr(i, j - i);
        // (an optional key, with no default: absent means none, adds nothing)
        if (j < d.size() && (d[j] == ')' || d[j] == ';') && !scenario::key_default(word).empty()) {
          best = i;
          best_end = j;
          best_key = word;
        }
        i = j;
      }
      if (best == std::string::npos) continue;
      d.insert(best_end, "; default " + scenario::key_default(best_key));
      o->description(d);
    }
}

// --help, asked of podnet or a command: each option's key default added, within a terminal's width. Done here, not
// on every run: only help shows the descriptions.
int print_help(CLI::App& app, const CLI::Error& e) {
  add_key_defaults(app);
  std::ostringstream help;
  const int status = app.exit(e, help, std::cerr);
  std::cout << wrap_help(help.str());
  return status;
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"podnet - design, simulate and diagnose the networks of AI training clusters.\n\n"
               "Start with `podnet list` to see the built-in scenarios, topology families, routing policies\n"
               "and collective algorithms, then `podnet design aipod-16k` for a bill of materials and\n"
               "`podnet bench aipod-16k` for nccl-tests-style collective timings. Scenario values carry units\n"
               "(400Gbps, 50GB/s, 2us, 3m, 10.2kW); `--set topology.oversubscription=2:1` overrides any key.",
               "podnet"};
  app.footer("Run `podnet COMMAND --help` for a command's options and examples. Options many commands take:\n"
             "  --set KEY=VALUE       change any scenario key (`podnet list keys` lists them with their defaults)\n"
             "  --engine NAME         analytical (closed form), flow (max-min fair flows) or packet (packets and\n"
             "                        congestion control): bench, train and plan-upgrade\n"
             "  --format FORMAT       table (default), json or csv on stdout\n"
             "  --out DIR             also write every format and the resolved scenario into DIR\n"
             "The words the outputs use (TP, PP, DP, MFU, busbw, ECMP, rails): docs/concepts.md.");
  // One line on stdout, for scripts; how memory is set up (huge pages) on stderr, for people.
  app.set_version_flag("--version", [] {
    std::cerr << "huge pages: " << huge_pages_state() << "\n";
    return std::string("podnet ") + version() + " (" + git_sha() + ")";
  });
  app.require_subcommand(1);

  Action action;
  // One line per subcommand (cmd_<name>.cpp).
  add_list_command(app, action);
  add_design_command(app, action);
  add_bench_command(app, action);
  add_train_command(app, action);
  add_reliability_command(app, action);
  add_inference_command(app, action);
  add_plan_upgrade_command(app, action);
  add_diagnose_command(app, action);
  add_calibrate_command(app, action);
  add_sweep_command(app, action);
  add_diff_command(app, action);
  add_optimize_command(app, action);
  add_run_command(app, action);
  add_resolve_command(app, action);
  add_serve_command(app, action);

  // A misspelt command: CLI11 says only that a subcommand is required.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      const std::string near = scenario::closest(argv[1], names);
      std::cerr << "podnet: error: unknown command '" << argv[1] << "'"
                << (near.empty() ? std::string() : "; did you mean '" + near + "'?")
                << " (`podnet --help` lists the commands)\n";
      return kExitBadInput;
    }
  }
  // Under mpirun, bench and train share one run among the ranks (core/mpi_world.hpp); sweep and optimize
  // hand out points their own way. Every other command runs whole on each rank. All but sweep and optimize
  // join the job before anything is written, so that rank 0 alone speaks.
  const std::string command = argc > 1 ? argv[1] : "";
  if (command != "sweep" && command != "optimize") {
    try {
      const mpi::World& w = mpi::join();
      if (w.size > 1 && command != "bench" && command != "train")
        std::cerr << fmt::format("podnet: note: mpirun: each of the {} ranks runs all of `podnet {}`, and rank 0 "
                                 "prints; bench and train share a partitioned packet-engine run among ranks, sweep "
                                 "and optimize hand out their points\n",
                                 w.size, command);
    } catch (const std::exception& e) {
      std::cerr << "podnet: failed: " << e.what() << "\n";
      return kExitFailure;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return print_help(app, e);
  } catch (const CLI::CallForAllHelp& e) {
    return print_help(app, e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "podnet: error: "
              << parse_error_text(app, e, argc > 1 ? argv[1] : "", std::vector<std::string>(argv, argv + argc)) << "\n";
    return kExitBadInput;
  } catch (const InputError& e) {  // an option's own check, run while parsing (--fail-links 1 aborted)
    std::cerr << "podnet: error: " << e.what() << "\n";
    return kExitBadInput;
  }

  try {
    return action ? action() : kExitOk;
  } catch (const InputError& e) {
    std::cerr << "podnet: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "podnet: failed: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace podnet::cli
