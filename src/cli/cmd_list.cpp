#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>

#include "cli/common.hpp"
#include "collective/collective.hpp"
#include "core/error.hpp"
#include "engine/network_presets.hpp"
#include "engine/options.hpp"
#include "engine/packet/packet_options.hpp"
#include "engine/registry.hpp"
#include "reliability/rates.hpp"
#include "report/report.hpp"
#include "report/scenario_schema.hpp"
#include "report/studies.hpp"
#include "routing/policies.hpp"
#include "scenario/examples.hpp"
#include "scenario/scenario.hpp"
#include "topology/builders.hpp"
#include "workload/job.hpp"
#include "workload/model.hpp"

namespace podnet::cli {

namespace {

void list_scenarios() {
  std::cout << "Built-in scenarios (use the name wherever a scenario file is accepted; sources in examples/):\n";
  report::Table ex({"", ""});
  for (const auto& e : scenario::builtin_examples()) ex.add({e.name, e.description});
  ex.write(std::cout, "  ");
}

void list_models() {
  std::cout << "Model presets (scenario `workload.model`; `--set workload.layers=...` and the other shape keys "
               "override one):\n";
  report::Table t({"model", "parameters", "active", "layers", "hidden", "heads (KV)", "sequence", "source"});
  for (const auto& m : workload::models())
    t.add({m.name, report::fixed(m.params() / 1e9, 1) + " B", report::fixed(m.active_params() / 1e9, 1) + " B",
           std::to_string(m.layers), report::thousands(m.hidden), fmt::format("{} ({})", m.heads, m.kv_heads),
           report::thousands(m.seq), m.description});
  t.write(std::cout, "  ");
  std::cout << "\nTheir training recipes. A recipe fills each group of keys the scenario leaves out (all of a "
               "group or none);\nworkload.recipe=preset takes it over the scenario file's keys too.\n";
  report::Table r({"model", "layout", "memory", "batch", "budget"});
  for (const auto& m : workload::models()) {
    const workload::Recipe* rec = workload::find_recipe(m.name);
    std::vector<std::string> row = {m.name};
    for (const auto& [group, keys] : workload::recipe_groups()) {
      std::string cell;
      if (rec)
        for (const auto& g : rec->groups)
          if (g.name == group)
            for (const auto& [k, v] : g.keys) cell += (cell.empty() ? "" : ", ") + k + " " + v;
      row.push_back(cell.empty() ? "-" : cell);
    }
    r.add(row);
  }
  r.write(std::cout, "  ");
  std::cout << "\nRecipe sources:\n";
  for (const auto& m : workload::models()) {
    const workload::Recipe* rec = workload::find_recipe(m.name);
    std::cout << "  " << m.name << ": " << (rec ? rec->source : "no published recipe; podnet's defaults") << "\n";
  }
}

void list_gpus() {
  std::cout << "GPU presets (scenario `workload.gpu`):\n";
  report::Table t(
      {"gpu", "BF16 dense", "FP8 dense", "HBM", "HBM bandwidth", "NVLink per direction", "GEMM efficiency"});
  for (const auto& g : workload::gpus())
    t.add({g.name, report::fixed(g.peak_flops / 1e12, 0) + " TFLOPS",
           g.fp8_peak_flops > 0 ? report::fixed(g.fp8_peak_flops / 1e12, 0) + " TFLOPS" : "-",
           report::fixed(static_cast<double>(g.hbm_bytes) / 1073741824.0, 0) + " GiB (" +
               report::fixed(static_cast<double>(g.hbm_bytes) / 1e9, 1) + " GB)",
           report::fixed(g.hbm_bandwidth / 1e12, 2) + " TB/s", report::fixed(g.nvlink_bandwidth / 1e9, 0) + " GB/s",
           report::fixed(100 * g.compute_efficiency, 1) + "%"});
  t.write(std::cout, "  ");
  std::cout << "\nSources:\n";
  for (const auto& g : workload::gpus()) std::cout << "  " << g.name << ": " << g.description << "\n";
}

// Every scenario key as Markdown: the reference page of the docs site is generated from it.
void list_keys_markdown() {
  auto cell = [](std::string s) {
    std::string out;
    for (char ch : s) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
    return out;
  };
  auto table = [&](const std::vector<ParamSpec>& specs, const char* auto_text) {
    std::cout << "| key | type | default | meaning |\n|---|---|---|---|\n";
    for (const auto& p : specs)
      std::cout << "| `" << p.name << "` | " << param_type_name(p.type) << " | "
                << (p.default_text.empty() ? (p.optional ? "(auto)" : auto_text) : "`" + cell(p.default_text) + "`")
                << " | " << cell(p.help) << " |\n";
    std::cout << "\n";
  };
  std::cout << "# Scenario keys\n\nEvery key a scenario file takes, with its type, default and meaning. This page is "
               "generated from podnet's own key lists (`podnet list keys --format markdown`).\n\n";
  std::cout << "## Topology families\n\nThe `topology:` section: `family` and that family's keys.\n\n";
  for (const auto& b : topology::builders()) {
    std::cout << "### " << b.name << "\n\n" << b.description << "\n\n";
    table(b.params(), "(required)");
  }
  std::cout << "## Sections shared by every family\n\n";
  for (const auto& sec : scenario::sections()) {
    std::cout << "### " << sec.name << "\n\n" << sec.description << "\n\n";
    table(sec.params(), "(auto)");
  }
}

void list_keys() {
  std::cout << "Topology families (scenario `topology.family`), with their parameters:\n";
  for (const auto& b : topology::builders()) {
    std::cout << "\n  " << b.name << " - " << b.description << "\n";
    report::Table t({"parameter", "type", "default", "meaning"});
    for (const auto& p : b.params())
      t.add({p.name, param_type_name(p.type),
             p.default_text.empty() ? (p.optional ? "(auto)" : "(required)") : p.default_text, p.help});
    t.write(std::cout, "    ");
  }
}

void list_choices() {
  std::cout << "Routing policies (scenario `network.routing`, bench --routing):\n";
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
  std::cout << "\nCongestion control, packet engine (scenario `network.cc`; the ECN band: network.ecn_kmin, ecn_kmax, "
               "ecn_pmax):\n";
  report::Table cc({"", "", "ECN band at a switch port"});
  const auto kb = [](double b) {
    return b >= 1e6 ? format_number(b / 1e6, 2) + " MB" : format_number(b / 1e3, 1) + " KB";
  };
  for (const auto& p : engine::packet::cc_presets()) {
    const std::string at =
        p.ecn_ref_bps > 0 ? fmt::format(" at {} Gbps, scaled with the port's rate", format_number(p.ecn_ref_bps / 1e9))
                          : "";
    std::string band = "no ECN";
    if (p.ecn && p.kmax_rtt > 0)
      band = fmt::format("{} to {} of a fabric round trip's bytes{}, {}% at the top", format_number(p.kmin_rtt, 2),
                         format_number(p.kmax_rtt, 2), at, format_number(p.pmax * 100, 1));
    else if (p.ecn && p.kmin == p.kmax)
      band = fmt::format("every packet above {}{}", kb(static_cast<double>(p.kmin)), at);
    else if (p.ecn)
      band = fmt::format("{} to {}{}, {}% at the top", kb(static_cast<double>(p.kmin)), kb(static_cast<double>(p.kmax)),
                         at, format_number(p.pmax * 100, 1));
    cc.add({p.name, p.description, band});
  }
  cc.write(std::cout, "  ");
  std::cout
      << "\nDeployment presets, packet engine (scenario `network.preset`; the network keys a scenario gives win):\n";
  report::Table np({"preset", "sets", "models", "leaves out"});
  for (const auto& p : engine::network_presets()) {
    std::string sets;
    for (const auto& [k, v] : p.keys) sets += fmt::format("{}{}={}", sets.empty() ? "" : ", ", k, v);
    np.add({p.name, sets, p.description, p.leaves_out});
  }
  np.write(std::cout, "  ");
}

void list_sections() {
  std::cout << "Top-level keys of a scenario:\n";
  report::Table top({"key", "type", "default", "meaning"});
  top.add({"schema_version", "integer", "(required)", "the scenario format's version: 1"});
  top.add({"name", "string", "(the file's)", "the scenario's name in reports"});
  top.add({"description", "string", "", "a line about the scenario"});
  top.add({"seed", "integer", "1",
           "every random draw of a run (ECMP hashes, placement, failures, variability) comes from it: the same "
           "scenario and seed give the same bytes out; repeat a study over seeds with --set seed=N or "
           "`podnet sweep --vary seed=1,2,3`"});
  top.write(std::cout, "    ");
  std::cout << "\nScenario sections shared by every family:\n";
  for (const auto& s : scenario::sections()) {
    std::cout << "\n  " << s.name << ": " << s.description << "\n";
    report::Table t({"parameter", "type", "default", "meaning"});
    for (const auto& p : s.params())
      t.add({p.name, param_type_name(p.type), p.default_text.empty() ? "(auto)" : p.default_text, p.help});
    t.write(std::cout, "    ");
  }
}

void list_failures() {
  std::cout << R"(Failures (scenario `failures:`, a list; `podnet bench` and `podnet train` run
with and without them and report the slowdown or the job failure):

  - {at: 5ms, link: "su000-leaf-r0:Ethernet1/65", action: down}   link by SWITCH:PORT or a NIC name;
                                                                   actions down | up | degrade | drain
  - {at: 5ms, link: "gpu-node-0000/nic0", action: degrade, rate: 200Gbps}   a NIC's link; server numbers
                                                                   have the digits the fabric needs
                                                                   (gpu-node-000 under 1,000 servers)
  - {at: 1ms, switch: "pod000-spine-r0-000", action: drain}         maintenance: flows moved off first
  - {at: 0ms, gpu: 17, action: slow, factor: 1.5}                   a straggler
  - {random: 3}                                                    3 failures drawn from the job's
                                                                   components at the reliability: rates
  - {links: leaf-spine, fraction: 1%}                               1 % of one class of links down from
                                                                   t = 0, drawn from the seed (also
                                                                   --fail-links leaf-spine=1%); fabric =
                                                                   every switch-to-switch link; NIC links
                                                                   only if nic-leaf is named; count: N
  - {switches: spine, count: 2, at: 5ms}                           2 spine switches down at 5 ms
                                                                   (--fail-switches spine=2@5ms)
  - {random: poisson, scale: 1e5, parts: [optic, switch], from: 0ms, until: 2s}
                                                                   the rates x scale over [from, until);
                                                                   until defaults to the run's length
  parts: )";
  for (size_t i = 0; i < reliability::presets().size(); ++i)
    std::cout << (i ? ", " : "") << reliability::presets()[i].name;
  std::cout << R"(
  Recovery: network.local_repair, network.convergence, network.collective_timeout.
)";
}

const std::vector<std::string> kTopics = {"scenarios", "models",   "gpus",    "keys",
                                          "network",   "failures", "results", "all"};

// `podnet list` alone: the built-in scenarios, then one line per other part with what it holds (`all` printed
// about 1,200 lines, where a newcomer starts).
void list_index() {
  list_scenarios();
  std::vector<std::string> models, gpus, families;
  for (const auto& m : workload::models()) models.push_back(m.name);
  for (const auto& g : workload::gpus()) gpus.push_back(g.name);
  for (const auto& b : topology::builders()) families.push_back(b.name);
  std::cout << "\nMore to list (`podnet list PART`):\n";
  report::Table t({"part", "holds"});
  t.add({"models", fmt::format("model presets and their training recipes: {}", fmt::join(models, ", "))});
  t.add({"gpus", fmt::format("GPU presets: {}", fmt::join(gpus, ", "))});
  t.add({"keys", fmt::format("every scenario key with its default, by section; topology families: {}",
                             fmt::join(families, ", "))});
  t.add({"network", "routing policies, collective algorithms, engines, transports, congestion controls, deployment "
                    "presets"});
  t.add({"failures", "the forms a `failures:` entry takes"});
  t.add({"results", "each study's result fields, as JSON documents and sweeps name them"});
  t.add({"all", "every part above, in full"});
  t.write(std::cout, "  ");
}

// Each study's declared result fields: where a script finds a number in the JSON document, and what it is.
void list_results(bool markdown) {
  const auto unit_of = [](const report::ResultField& f) {
    return f.unit == "%" && f.scale != 1 ? std::string("fraction (shown as %)") : f.unit;
  };
  const auto where = [](const report::ResultField& f) {
    return f.key.back() == '@' ? "rows[]." + f.key.substr(0, f.key.size() - 1) : f.key;
  };
  const auto meaning = [](const report::ResultField& f) {
    std::string m = f.label + (f.optional ? " (sometimes)" : "");
    return f.null_when.empty() ? m : m + "; null when " + f.null_when;
  };
  if (markdown) {
    std::cout << "# Result fields\n\nThe numbers each study's JSON document (`--format json`) holds, "
                 "with their meaning and unit. The same fields are sweep's columns, diff's fields and the "
                 "dashboard's labels. This page is generated from podnet's study registry (`podnet list results "
                 "--format markdown`); `podnet list results --schema` prints them as a JSON Schema.\n\n"
                 "A key with dots is a path: `bom.switches.total` is `doc[\"bom\"][\"switches\"][\"total\"]`. "
                 "`rows[].time_us` is in each row, one per message size. A field marked *sometimes* is absent "
                 "from some runs.\n\n";
    for (const auto& s : report::studies()) {
      std::cout << "## " << s.name << "\n\n" << s.description << ".\n\n| key | meaning | unit |\n|---|---|---|\n";
      for (const auto& f : s.fields)
        std::cout << "| `" << where(f) << "` | " << meaning(f) << " | " << unit_of(f) << " |\n";
      std::cout << "\n";
    }
    return;
  }
  std::cout << "Result fields of each study (the JSON document's keys; `podnet list results --schema`):\n";
  for (const auto& s : report::studies()) {
    std::cout << "\n  " << s.name << " - " << s.description << "\n";
    report::Table t({"key", "meaning", "unit"});
    for (const auto& f : s.fields) t.add({where(f), meaning(f), unit_of(f)});
    t.write(std::cout, "    ");
  }
  std::cout << "\n(sometimes): absent from some runs of the study (another mode, no target, no failures).\n";
}

int cmd_list(const std::string& what, const std::string& format) {
  if (format == "markdown" && what != "keys" && what != "results")
    throw InputError("--format markdown: only `podnet list keys` and `podnet list results` write Markdown (the docs' "
                     "references)");
  if (what == "results") {
    list_results(format == "markdown");
    return kExitOk;
  }
  if (what == "keys" && format == "markdown") {
    list_keys_markdown();
    return kExitOk;
  }
  if (what == "scenarios") list_scenarios();
  if (what == "models") list_models();
  if (what == "gpus") list_gpus();
  if (what == "keys") {
    list_keys();
    std::cout << "\n";
    list_sections();
  }
  if (what == "network") list_choices();
  if (what == "failures") list_failures();
  if (what == "all") {
    list_scenarios();
    std::cout << "\n";
    list_models();
    std::cout << "\n";
    list_gpus();
    std::cout << "\n";
    list_keys();
    std::cout << "\n";
    list_choices();
    std::cout << "\n";
    list_sections();
    std::cout << "\n";
    list_failures();
  }
  if (what == "index") list_index();
  if (what == "all" || what == "scenarios")
    std::cout << "\n`podnet list models|gpus|keys|network|failures|results` shows one part; `podnet list keys "
                 "--format markdown` writes the scenario reference.\n";
  return kExitOk;
}

}  // namespace

void add_list_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("list", "list built-in scenarios, topology families, routing policies, collective "
                                         "algorithms, engines and every scenario key with its default");
  static bool schema = false;
  static std::string what = "index", format = "table";
  cmd->add_option(
         "part", what,
         "the part to list: scenarios, models (presets and their training recipes), gpus, keys (every "
         "scenario key with its default), network (routing policies, collective algorithms, engines, "
         "transports, congestion controls, deployment presets), failures (the forms of `failures:`), "
         "results (each study's result fields), all (every part in full); default: the scenarios and what each "
         "other part holds")
      ->check(CLI::Validator(
          [](std::string& v) {
            if (std::find(kTopics.begin(), kTopics.end(), v) != kTopics.end()) return std::string();
            // What a user asks for by name is one part of `network`.
            static const std::vector<std::string> in_network = {"cc",         "presets",    "routing", "engines",
                                                                "transports", "algorithms", "algos"};
            std::string near = std::find(in_network.begin(), in_network.end(), v) != in_network.end()
                                   ? "; it is under `podnet list network`"
                                   : "";
            if (near.empty())
              if (const std::string c = scenario::closest(v, kTopics); !c.empty()) near = "; did you mean '" + c + "'?";
            return fmt::format("'{}' is not a part podnet lists{} (it lists: {})", v, near, fmt::join(kTopics, ", "));
          },
          "PART"));
  cmd->add_option("-f,--format", format, "table (default), or markdown for `list keys` and `list results`")
      ->check(CLI::IsMember({"table", "markdown"}));
  cmd->add_flag("--schema", schema,
                "print the scenario file's JSON Schema instead (for editors: save it and add `# "
                "yaml-language-server: $schema=FILE` to a scenario to get completion and checking); with `results`, "
                "the result documents' JSON Schema, one per study under $defs");
  cmd->callback([&action] {
    action = [] {
      if (!schema) return cmd_list(what, format);
      if (what != "all" && what != "index" && what != "results")
        throw InputError(fmt::format("--schema with `list {}`: the schemas are the scenario file's (`podnet list "
                                     "--schema`) and the result documents' (`podnet list results --schema`)",
                                     what));
      if (format != "table")
        throw InputError("--schema prints JSON; expected no --format with it (--format markdown: `podnet list results "
                         "--format markdown`)");
      report::write_json(what == "results" ? report::result_schemas() : report::scenario_json_schema(), std::cout);
      return kExitOk;
    };
  });
}

}  // namespace podnet::cli
