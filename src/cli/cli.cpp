#include "cli/cli.hpp"

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/process.hpp"
#include "core/version.hpp"
#include "scenario/scenario.hpp"

namespace podnet::cli {

int run(int argc, char** argv) {
  CLI::App app{"podnet - design, simulate and diagnose the networks of AI training clusters.\n\n"
               "Start with `podnet list` to see the built-in scenarios, topology families, routing policies\n"
               "and collective algorithms, then `podnet design aipod-16k` for a bill of materials and\n"
               "`podnet bench aipod-16k` for nccl-tests-style collective timings. Scenario values carry units\n"
               "(400Gbps, 50GB/s, 2us, 3m, 10.2kW); `--set topology.gpus=4096` overrides any key.",
               "podnet"};
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
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
