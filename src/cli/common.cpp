#include "cli/common.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <iostream>

#include "core/error.hpp"

namespace podnet::cli {



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

void emit(const Common& c, const scenario::Scenario& sc, const nlohmann::json& doc, const std::string& stem,
          const std::function<void(const nlohmann::json&, std::ostream&)>& table) {
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

}  // namespace podnet::cli
