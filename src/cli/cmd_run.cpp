#include <iostream>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "report/design_report.hpp"
#include "topology/bom.hpp"

namespace podnet::cli {

namespace {

int cmd_run(Common c) {
  if (c.scenario.empty()) c.scenario = kDefaultScenario;
  scenario::Scenario sc = scenario::load(c.scenario, c.sets);
  topology::Topology t = sc.build_topology();
  nlohmann::json doc = design_document(sc, t, "run");
  doc["training"] = {{"status", "not implemented yet"},
                     {"detail", "iteration time and days to train need the training-job model, not built yet"}};
  emit(c, sc, doc, "run", [](const nlohmann::json& d, std::ostream& out) {
    report::write_design_table(d, out);
    out << "\n  training: " << d["training"]["status"].get<std::string>() << " - "
        << d["training"]["detail"].get<std::string>() << "\n";
  });
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto* runc = app.add_subcommand("run", "run a scenario end to end (default: the built-in aipod-16k)");
  add_common(runc, *c, false);
  runc->callback([&action, c] { action = [c] { return cmd_run(*c); }; });
}

}  // namespace podnet::cli
