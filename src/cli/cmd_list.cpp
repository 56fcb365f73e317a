#include <iostream>

#include "cli/common.hpp"
#include "collective/collective.hpp"
#include "core/error.hpp"
#include "engine/options.hpp"
#include "engine/packet/packet_options.hpp"
#include "engine/registry.hpp"
#include "reliability/rates.hpp"
#include "report/report.hpp"
#include "report/scenario_schema.hpp"
#include "routing/policies.hpp"
#include "scenario/examples.hpp"
#include "scenario/scenario.hpp"
#include "topology/builders.hpp"

namespace podnet::cli {

namespace {

int cmd_list() {
  std::cout << "Built-in scenarios (use the name wherever a scenario file is accepted):\n";
  report::Table ex({"", ""});
  for (const auto& e : scenario::builtin_examples()) ex.add({e.name, e.description});
  ex.write(std::cout, "  ");
  std::cout << "\nTopology families (scenario `topology.family`), with their parameters:\n";
  for (const auto& b : topology::builders()) {
    std::cout << "\n  " << b.name << " - " << b.description << "\n";
    report::Table t({"parameter", "type", "default", "meaning"});
    for (const auto& p : b.params())
      t.add({p.name, param_type_name(p.type),
             p.default_text.empty() ? (p.optional ? "(auto)" : "(required)") : p.default_text, p.help});
    t.write(std::cout, "    ");
  }
  std::cout << "\nRouting policies (scenario `network.routing`, bench --routing):\n";
  report::Table rp({"", ""});
  for (const auto& p : routing::policies()) rp.add({p.name, std::string(p.description) + " [" + p.families + "]"});
  rp.write(std::cout, "  ");
  std::cout << "\nCollective algorithms (bench --algo) and the ops they implement:\n";
  report::Table ca({"", ""});
  for (const auto& a : collective::algorithms()) {
    std::string ops;
    for (auto op : a.ops) ops += (ops.empty() ? "" : ", ") + std::string(collective::op_name(op));
    ca.add({a.name, std::string(a.description) + " [" + ops + "]"});
  }
  ca.write(std::cout, "  ");
  std::cout << "\nEngines (scenario `network.engine`, --engine):\n";
  report::Table en({"", ""});
  for (const auto& e : engine::engines()) en.add({e.name, e.description});
  en.write(std::cout, "  ");
  std::cout << "\nTransports (scenario `network.transport`):\n";
  report::Table tr({"", ""});
  for (const auto& t : engine::transport_presets()) tr.add({t.name, t.description});
  tr.write(std::cout, "  ");
  std::cout << "\nCongestion control, packet engine (scenario `network.cc`):\n";
  report::Table cc({"", ""});
  for (const auto& p : engine::packet::cc_presets()) cc.add({p.name, p.description});
  cc.write(std::cout, "  ");
  std::cout << "\nScenario sections shared by every family:\n";
  for (const auto& s : scenario::sections()) {
    std::cout << "\n  " << s.name << ": " << s.description << "\n";
    report::Table t({"parameter", "type", "default", "meaning"});
    for (const auto& p : s.params())
      t.add({p.name, param_type_name(p.type), p.default_text.empty() ? "(auto)" : p.default_text, p.help});
    t.write(std::cout, "    ");
  }
  std::cout << R"(
Failures (scenario `failures:`, a list; `podnet bench` and `podnet train` run
with and without them and report the slowdown or the job failure):

  - {at: 5ms, link: "su000-leaf-r0:Ethernet1/65", action: down}   link by SWITCH:PORT or a NIC name;
                                                                   actions down | up | degrade | drain
  - {at: 5ms, link: "gpu-node-0000/nic0", action: degrade, rate: 200Gbps}
  - {at: 1ms, switch: "pod000-spine-r0-000", action: drain}         maintenance: flows moved off first
  - {at: 0ms, gpu: 17, action: slow, factor: 1.5}                   a straggler
  - {random: 3}                                                    3 failures drawn from the job's
                                                                   components at the reliability: rates
  - {random: poisson, scale: 1e5, parts: [optic, switch], from: 0ms, until: 2s}
                                                                   the rates x scale over [from, until);
                                                                   until defaults to the run's length
  parts: )";
  for (size_t i = 0; i < reliability::presets().size(); ++i)
    std::cout << (i ? ", " : "") << reliability::presets()[i].name;
  std::cout << R"(
  Recovery: network.local_repair, network.convergence, network.collective_timeout.
)";
  return kExitOk;
}

}  // namespace

void add_list_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("list", "list built-in scenarios, topology families, routing policies, collective "
                                         "algorithms, engines and every scenario key with its default");
  static bool schema = false;
  cmd->add_flag("--schema", schema,
                "print the scenario file's JSON Schema instead (for editors: save it and add `# "
                "yaml-language-server: $schema=FILE` to a scenario to get completion and checking)");
  cmd->callback([&action] {
    action = [] {
      if (!schema) return cmd_list();
      report::write_json(report::scenario_json_schema(), std::cout);
      return kExitOk;
    };
  });
}

}  // namespace podnet::cli
