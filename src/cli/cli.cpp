#include "cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <sstream>

#include <chrono>
#include <unistd.h>

#include "collective/collective.hpp"
#include "collective/gpu_list.hpp"
#include "collective/ring_order.hpp"
#include "core/error.hpp"
#include "engine/network.hpp"
#include "report/bench_report.hpp"
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


struct BenchOptions {
  std::string op = "allreduce";
  std::string algo;  // default per op
  std::string min_size = "8B";
  std::string max_size = "1GiB";
  double factor = 2;
  std::string gpus;
  std::string engine, routing, order, transport;
  int channels = 0, qps = 0;
};

// Sizes as nccl-tests takes them: a number with B/KB/MB/GB/KiB/... , or K/M/G meaning powers of 1024.
Bytes parse_size(const std::string& text, const char* option) {
  std::string t = text;
  if (!t.empty() && (t.back() == 'K' || t.back() == 'M' || t.back() == 'G' || t.back() == 'T')) t += "iB";
  Bytes b = 0;
  std::string expected;
  if (!parse_bytes(t, b, expected))
    throw InputError(fmt::format("{} {}: expected {} (or K/M/G/T for powers of 1024, as nccl-tests)", option, text,
                                 expected));
  return b;
}

const char* factor_formula(collective::Op op) {
  switch (op) {
    case collective::Op::AllReduce: return "2(n-1)/n";
    case collective::Op::AllGather:
    case collective::Op::ReduceScatter:
    case collective::Op::AllToAll: return "(n-1)/n";
    default: return "1";
  }
}

int cmd_bench(Common c, const BenchOptions& b) {
  // CLI sugar for scenario keys, applied after the user's own --set.
  if (!b.engine.empty()) c.sets.push_back("network.engine=" + b.engine);
  if (!b.routing.empty()) c.sets.push_back("network.routing=" + b.routing);
  if (!b.transport.empty()) c.sets.push_back("network.transport=" + b.transport);
  if (!b.order.empty()) c.sets.push_back("collective.ring_order=" + b.order);
  if (b.channels > 0) c.sets.push_back("collective.channels=" + std::to_string(b.channels));
  if (b.qps > 0) c.sets.push_back("collective.qps=" + std::to_string(b.qps));
  scenario::Scenario sc = scenario::load(c.scenario, c.sets);
  topology::Topology topo = sc.build_topology();
  const collective::Op op = collective::parse_op(b.op);
  const std::string algo = b.algo.empty() ? collective::default_algorithm(op) : b.algo;
  const int32_t total = static_cast<int32_t>(topo.gpus.size());
  collective::Group group;
  if (b.gpus.empty()) {
    for (int32_t i = 0; i < total; ++i) group.push_back(i);
  } else {
    group = collective::parse_gpu_list(b.gpus, total);
  }
  const collective::Options copt = collective::options_from(sc.section("collective"));
  const engine::NetworkOptions nopt = engine::network_options_from(sc.section("network"), sc.seed);
  const std::string engine_name = sc.section("network").get_string("engine");
  auto backend = engine::make_backend(engine_name, topo, nopt);

  const Bytes lo = parse_size(b.min_size, "--min"), hi = parse_size(b.max_size, "--max");
  if (lo > hi) throw InputError(fmt::format("--min {} is larger than --max {}", b.min_size, b.max_size));
  if (!(b.factor > 1.0) && lo != hi) throw InputError("--factor must be greater than 1");
  std::vector<Bytes> sizes;
  for (double s = static_cast<double>(lo); s <= static_cast<double>(hi) * (1 + 1e-12); s *= b.factor) {
    sizes.push_back(static_cast<Bytes>(s));
    if (lo == hi) break;
  }

  nlohmann::json doc = report::new_document(context_of(sc, "bench"));
  const double factor = collective::bus_factor(op, static_cast<int64_t>(group.size()));
  doc["bench"] = {{"op", collective::op_name(op)}, {"algorithm", algo}, {"gpus", group.size()},
                  {"engine", engine_name}, {"routing", nopt.routing.policy}, {"transport", nopt.transport.name},
                  {"channels", copt.channels}, {"qps", copt.qps},
                  {"ring_order", collective::ring_order_name(copt.order)}, {"bus_factor", report::round_to(factor, 6)},
                  {"bus_factor_formula", factor_formula(op)},
                  {"units", {{"time_us", "microseconds"}, {"algbw_gbps", "GB/s = 1e9 bytes/s (nccl-tests)"},
                             {"busbw_gbps", "GB/s = 1e9 bytes/s (nccl-tests)"}}}};
  nlohmann::json rows = nlohmann::json::array();
  engine::RunReport last;
  engine::TransferPlan last_plan;
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto wall0 = std::chrono::steady_clock::now();
  for (size_t k = 0; k < sizes.size(); ++k) {
    engine::TransferPlan plan = collective::make_plan(algo, op, group, sizes[k], copt, topo);
    last = backend->run(plan);
    const double seconds = last.makespan.seconds();
    const double algbw = seconds > 0 ? static_cast<double>(sizes[k]) / seconds / 1e9 : 0;
    rows.push_back({{"bytes", sizes[k]}, {"time_us", report::round_to(seconds * 1e6, 3)},
                    {"algbw_gbps", report::round_to(algbw, 4)}, {"busbw_gbps", report::round_to(algbw * factor, 4)}});
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    if (tty || wall > 2.0)
      std::cerr << fmt::format("podnet bench: [{}/{}] {} B done ({:.1f} s elapsed)\n", k + 1, sizes.size(), sizes[k],
                               wall);
    if (k + 1 == sizes.size()) last_plan = std::move(plan);
  }
  doc["rows"] = rows;
  nlohmann::json hot = nlohmann::json::array();
  for (const auto& l : last.hottest)
    hot.push_back({{"link", engine::dir_link_name(topo, l.link)}, {"bytes", static_cast<int64_t>(l.bytes + 0.5)},
                   {"mean_utilization", report::round_to(l.mean_utilization, 4)},
                   {"peak_utilization", report::round_to(l.peak_utilization, 4)}});
  doc["hottest_links"] = hot;
  for (const auto& t : last_plan.transfers) {
    if (t.kind != engine::TransferKind::Ring || t.ranks.size() < 2) continue;
    const collective::RingStats rs = collective::ring_stats(t.ranks, topo, t.open);
    doc["ring"] = {{"hops", rs.hops}, {"intra_server", rs.intra_server}, {"intra_group", rs.cross_server},
                   {"inter_group", rs.cross_group}, {"inter_pod", rs.cross_pod}, {"cross_rail", rs.cross_rail_hops},
                   {"label", t.label}};
    break;
  }
  emit(c, sc, doc, "bench", report::write_bench_table);
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


  Common bench_c;
  BenchOptions bench_o;
  auto* bench = app.add_subcommand("bench", "nccl-tests for a fabric that does not exist yet: time, algbw, busbw per size");
  add_common(bench, bench_c, true);
  bench->add_option("--op", bench_o.op, "allreduce, allgather, reducescatter, alltoall, broadcast, reduce, sendrecv")
      ->capture_default_str();
  bench->add_option("--algo", bench_o.algo, "algorithm (see `podnet list`); default: ring, pairwise for alltoall, p2p for sendrecv");
  bench->add_option("-b,--min", bench_o.min_size, "smallest size (8B, 64KiB, 1G: K/M/G are powers of 1024)")->capture_default_str();
  bench->add_option("-e,--max", bench_o.max_size, "largest size")->capture_default_str();
  bench->add_option("-F,--factor", bench_o.factor, "size multiplication factor between rows")->capture_default_str();
  bench->add_option("-g,--gpus", bench_o.gpus, "GPU ranks: 0-511, 0-4095:8 (stride), 0,8,16, combinations; default all");
  bench->add_option("--engine", bench_o.engine, "analytical | flow (sets network.engine)");
  bench->add_option("--routing", bench_o.routing, "routing policy, e.g. ecmp, adaptive, spray, static (sets network.routing)");
  bench->add_option("--transport", bench_o.transport, "rocev2 | infiniband | tcp (sets network.transport)");
  bench->add_option("--channels", bench_o.channels, "NCCL channels (sets collective.channels)");
  bench->add_option("--qps", bench_o.qps, "QPs per connection (sets collective.qps)");
  bench->add_option("--order", bench_o.order, "ring order: naive | topology_aware (sets collective.ring_order)");
  bench->footer("Examples:\n  podnet bench aipod-16k --op allreduce --min 8B --max 8GB --gpus 0-1023\n"
                "  podnet bench leafspine-8k --gpus 0-8191:8 --routing adaptive --qps 4 --format json");

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
    if (*bench) return cmd_bench(bench_c, bench_o);
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
