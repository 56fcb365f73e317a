#include "cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/error.hpp"
#include "core/version.hpp"
#include "report/design_report.hpp"
#include "report/export.hpp"
#include "report/report.hpp"
#include "scenario/examples.hpp"
#include "scenario/scenario.hpp"
#include "topology/bom.hpp"
#include "topology/builders.hpp"

namespace podnet::cli {

namespace {

constexpr const char* kDefaultScenario = "aipod-16k";

struct Common {
  std::string scenario;
  std::vector<std::string> sets;
  std::string format = "table";
  std::string out_dir;
};

void add_common(CLI::App* cmd, Common& c, bool scenario_required) {
  auto* opt = cmd->add_option("scenario", c.scenario,
                              "scenario file (YAML) or built-in scenario name (see `podnet list`)");
  if (scenario_required) opt->required();
  cmd->add_option("--set", c.sets, "override a scenario key, e.g. --set topology.gpus=4096 (repeatable)")
      ->type_name("KEY=VALUE");
  cmd->add_option("-f,--format", c.format, "output on stdout: table (default), json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("-o,--out", c.out_dir,
                  "also write every format (json, csv, txt) and the resolved scenario into this directory");
}

report::RunContext context_of(const scenario::Scenario& sc, const std::string& command) {
  return {command, sc.name, sc.source, sc.seed};
}

std::ofstream open_out(const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("cannot write {}", path));
  return f;
}

// Writes the document in the requested format to stdout, and with --out all formats + resolved scenario.
void emit(const Common& c, const scenario::Scenario& sc, const nlohmann::json& doc, const std::string& stem,
          void (*table)(const nlohmann::json&, std::ostream&)) {
  if (c.format == "json") report::write_json(doc, std::cout);
  else if (c.format == "csv") report::write_flat_csv(doc, std::cout);
  else table(doc, std::cout);
  if (!c.out_dir.empty()) {
    std::filesystem::create_directories(c.out_dir);
    const std::filesystem::path dir(c.out_dir);
    {
      auto f = open_out((dir / (stem + ".json")).string());
      report::write_json(doc, f);
    }
    {
      auto f = open_out((dir / (stem + ".csv")).string());
      report::write_flat_csv(doc, f);
    }
    {
      auto f = open_out((dir / (stem + ".txt")).string());
      table(doc, f);
    }
    {
      auto f = open_out((dir / "scenario.resolved.yaml").string());
      f << sc.resolved_yaml();
    }
    std::cerr << fmt::format("podnet: wrote {0}/{1}.json, {0}/{1}.csv, {0}/{1}.txt, {0}/scenario.resolved.yaml\n",
                             c.out_dir, stem);
  }
}

int cmd_list() {
  std::cout << "Built-in scenarios (use the name wherever a scenario file is accepted):\n";
  report::Table ex({""});
  for (const auto& e : scenario::builtin_examples()) ex.add({e.name, e.description});
  ex.write(std::cout, "  ");
  std::cout << "\nTopology families (scenario `topology.family`), with their parameters:\n";
  for (const auto& b : topology::builders()) {
    std::cout << "\n  " << b.name << " - " << b.description << "\n";
    report::Table t({"parameter", "type", "default", "meaning"});
    for (const auto& p : b.params())
      t.add({p.name, param_type_name(p.type), p.default_text.empty() ? (p.optional ? "(auto)" : "(required)") : p.default_text, p.help});
    t.write(std::cout, "    ");
  }
  std::cout << "\nHardware sections (shared by every family):\n";
  for (const auto& s : scenario::sections()) {
    std::cout << "\n  " << s.name << ": " << s.description << "\n";
    report::Table t({"parameter", "type", "default", "meaning"});
    for (const auto& p : s.params())
      t.add({p.name, param_type_name(p.type), p.default_text.empty() ? "(auto)" : p.default_text, p.help});
    t.write(std::cout, "    ");
  }
  return kExitOk;
}

struct DesignOptions {
  std::string cabling_plan;
  std::vector<std::string> exports;
};

nlohmann::json design_document(const scenario::Scenario& sc, const topology::Topology& t, const std::string& cmd) {
  nlohmann::json doc = report::new_document(context_of(sc, cmd));
  report::add_design(doc, t, topology::compute_bom(t, sc.hardware()));
  return doc;
}

int cmd_design(const Common& c, const DesignOptions& d) {
  scenario::Scenario sc = scenario::load(c.scenario, c.sets);
  topology::Topology t = sc.build_topology();
  nlohmann::json doc = design_document(sc, t, "design");
  const bool exports_to_stdout = !d.exports.empty() && c.out_dir.empty();
  if (!exports_to_stdout) emit(c, sc, doc, "design", report::write_design_table);
  if (!d.cabling_plan.empty()) {
    auto f = open_out(d.cabling_plan);
    report::write_cabling_plan_csv(t, f);
    std::cerr << "podnet: wrote cabling plan " << d.cabling_plan << "\n";
  }
  for (const auto& fmt_name : d.exports) {
    std::ostringstream buf;
    if (fmt_name == "dot") report::write_dot(t, buf);
    else if (fmt_name == "graphml") report::write_graphml(t, buf);
    else report::write_topology_json(t, buf);
    if (exports_to_stdout) {
      std::cout << buf.str();
    } else {
      const std::string path = (std::filesystem::path(c.out_dir) / ("topology." + fmt_name)).string();
      auto f = open_out(path);
      f << buf.str();
      std::cerr << "podnet: wrote " << path << "\n";
    }
  }
  return kExitOk;
}

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

int cmd_resolve(const Common& c) {
  scenario::Scenario sc = scenario::load(c.scenario, c.sets);
  std::cout << sc.resolved_yaml();
  return kExitOk;
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"podnet - design, simulate and diagnose the networks of AI training clusters.\n\n"
               "Start with `podnet list` to see the built-in scenarios and topology families, then\n"
               "`podnet design aipod-16k` for a bill of materials. Scenario values carry units\n"
               "(400Gbps, 50GB/s, 2us, 3m, 10.2kW); `--set topology.gpus=4096` overrides any key.",
               "podnet"};
  app.set_version_flag("--version", std::string("podnet ") + version() + " (" + git_sha() + ")");
  app.require_subcommand(1);

  auto* list = app.add_subcommand("list", "list built-in scenarios and topology families with their parameters");

  Common design_c;
  DesignOptions design_o;
  auto* design = app.add_subcommand("design", "design a fabric: bill of materials, limits, bisection, diameter");
  add_common(design, design_c, true);
  design->add_option("--cabling-plan", design_o.cabling_plan,
                     "write every cable as CSV in NetBox's cable-import columns plus podnet's (tier, rail, group, speed)")
      ->type_name("FILE.csv");
  design->add_option("--export", design_o.exports,
                     "export the topology: dot (\"device\":\"port\" links), graphml (NetworkX/Gephi) or json; "
                     "to stdout, or into --out DIR as topology.<format>")
      ->check(CLI::IsMember({"dot", "graphml", "json"}));
  design->footer("Examples:\n  podnet design aipod-16k\n  podnet design aipod-16k --set topology.gpus=131072 --format json\n"
                 "  podnet design my-fabric.yaml --out results/ --cabling-plan results/cables.csv");

  Common run_c;
  auto* runc = app.add_subcommand("run", "run a scenario end to end (default: the built-in aipod-16k)");
  add_common(runc, run_c, false);

  Common resolve_c;
  auto* resolve = app.add_subcommand("resolve", "print a scenario with every default filled in");
  add_common(resolve, resolve_c, true);

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
    if (*list) return cmd_list();
    if (*design) return cmd_design(design_c, design_o);
    if (*runc) return cmd_run(run_c);
    if (*resolve) return cmd_resolve(resolve_c);
  } catch (const InputError& e) {
    std::cerr << "podnet: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "podnet: failed: " << e.what() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace podnet::cli
