// `podnet train SCENARIO`: one training iteration of the scenario's
// `workload:` on its fabric (placement by `placement.policy`), at the
// `network.engine` fidelity: iteration time, breakdown, MFU, days to train;
// optionally a Chrome trace and a scaling-efficiency sweep.
#include <chrono>
#include <fmt/format.h>
#include <iostream>
#include <sstream>
#include <unistd.h>

#include "cli/common.hpp"
#include "cluster/placement.hpp"
#include "collective/collective.hpp"
#include "core/error.hpp"
#include "engine/network_params.hpp"
#include "engine/registry.hpp"
#include "report/train_report.hpp"
#include "workload/job.hpp"
#include "workload/simai.hpp"
#include "workload/training.hpp"

namespace podnet::cli {

namespace {

struct TrainCliOptions {
  std::string trace;
  std::string engine;
  std::string placement;
  bool sweep = false;
  std::string sweep_dp;
  std::string sweep_bw;
  std::string simai_workload;
  std::string simai_topology;
  bool allow_oom = false;
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    const auto a = item.find_first_not_of(' '), b = item.find_last_not_of(' ');
    if (a != std::string::npos) out.push_back(item.substr(a, b - a + 1));
  }
  return out;
}

int cmd_train(Common c, const TrainCliOptions& o) {
  if (c.scenario.empty()) c.scenario = kDefaultScenario;
  if (!o.engine.empty()) c.sets.push_back("network.engine=" + o.engine);
  if (!o.placement.empty()) c.sets.push_back("placement.policy=" + o.placement);
  const auto wall0 = std::chrono::steady_clock::now();
  scenario::Scenario sc = load_scenario(c);
  const topology::Topology topo =
      o.simai_topology.empty() ? sc.build_topology() : workload::simai::load_topology(o.simai_topology);
  const auto fabric_gpus = static_cast<int64_t>(topo.gpus.size());
  const cluster::Policy policy = cluster::parse_policy(sc.section("placement").get_string("policy"));
  sc.check_failures(topo);  // names checked before any run
  engine::NetworkOptions nopt = engine::network_options_from(sc.section("network"), sc.seed);
  nopt.links = engine::link_classes_from(sc.section("links"));
  std::string progress_label = "iteration";
  nopt.progress = progress_printer("podnet train", progress_label,
                                   flow_quantum_hint(sc.section("network").get_string("engine"), nopt));
  const std::string engine_name = sc.section("network").get_string("engine");
  auto backend = engine::make_backend(engine_name, topo, nopt);
  workload::TrainOptions topt;
  topt.collective = collective::options_from(sc.section("collective"));
  topt.trace = !o.trace.empty();
  nlohmann::json doc = report::new_document(context_of(sc, "train"));
  workload::Job job;
  workload::TrainResult r;
  std::vector<int32_t> job_gpus;  // the placement: GPU rank of each job rank
  if (!o.simai_workload.empty()) {
    // A SimAI/AICB workload file instead of the scenario's `workload:` (simai.hpp).
    const workload::simai::Workload w = workload::simai::load_workload(o.simai_workload);
    job = workload::simai::job_of(w, fabric_gpus, fabric_gpus);
    const std::vector<int32_t> gpus = cluster::place(job, topo, policy, sc.seed);
    job_gpus = gpus;
    const workload::simai::Imported im = workload::simai::import_iteration(w, job, gpus, topo, *backend, topt);
    r = workload::simulate_iteration(job, gpus, topo, *backend, im.times, topt);
    r.placement = cluster::summarize(job, gpus, topo, topt.collective, cluster::policy_name(policy));
    report::add_training(doc, r);
    report::add_imported(doc, o.simai_workload, im.traffic);
  } else {
    try {
      job = workload::job_from(sc.section("workload"), fabric_gpus);
      if (!o.allow_oom) workload::check_memory(job);
    } catch (const ParamError& e) {
      throw InputError(fmt::format("{}: {}", sc.where(e.key()), e.what()));
    }
    r = cluster::simulate_job(job, topo, *backend, topt, policy, sc.seed, &job_gpus);
    report::add_training(doc, r);
    if (!sc.failures.empty()) {
      // The same iteration (same placement and per-op times) with the scenario's
      // failures injected by the engine; the run above is the baseline.
      if (engine_name == "analytical")
        throw InputError(fmt::format("failures are injected by the flow and packet engines (the analytical engine "
                                   "times each transfer in closed form and cannot change the fabric under it); "
                                   "this run uses network.engine = {} (use --engine flow or --engine packet)",
                                   engine_name));
      // Random failures are drawn from the job's components over the failure-free iteration.
      const std::vector<int32_t>& gpus = job_gpus;
      engine::NetworkOptions fopt = nopt;
      fopt.failures.events = sc.failure_events(topo, r.iteration, gpus);
      auto failing = engine::make_backend(engine_name, topo, fopt);
      const workload::TrainResult f = workload::simulate_iteration(job, gpus, topo, *failing, r.times, topt);
      nlohmann::json evs = nlohmann::json::array();
      for (const auto& e : f.failures)
        evs.push_back({{"at_ms", report::round_to(e.at.seconds() * 1e3, 6)}, {"what", e.what},
                       {"flows_rerouted", e.flows_rerouted},
                       {"repaired_at_ms", report::round_to(e.repaired.seconds() * 1e3, 6)}});
      doc["failures"] = {{"baseline_iteration_ms", report::round_to(r.iteration.seconds() * 1e3, 6)},
                         {"iteration_ms", report::round_to(f.iteration.seconds() * 1e3, 6)},
                         // no slowdown for a job that stopped: iteration_ms is then when it stopped
                         {"slowdown", f.job_failed ? nlohmann::json(nullptr)
                                                   : nlohmann::json(report::round_to(
                                                         r.iteration.ps > 0 ? f.iteration.seconds() / r.iteration.seconds()
                                                                            : 1.0,
                                                         6))},
                         {"scheduled", fopt.failures.events.size()},
                         {"job_failed", f.job_failed},
                         {"failure", f.failure},
                         {"events", evs}};
    }
  }

  // Days to train need a token budget and tokens per iteration, which an imported workload does not give.
  if (o.simai_workload.empty()) doc["reliability"] = training_reliability(sc, topo, job_gpus, r.days_to_train);

  const bool tty = isatty(STDERR_FILENO) != 0;
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count(); };
  if (tty || elapsed() > 2.0)
    std::cerr << fmt::format("podnet train: one iteration simulated ({} transfers, {:.1f} s elapsed)\n",
                             r.plan_transfers, elapsed());

  if ((o.sweep || !o.sweep_dp.empty() || !o.sweep_bw.empty()) && !o.simai_workload.empty())
    throw InputError("--sweep works on the scenario's workload, not on an imported SimAI workload");
  if (o.sweep || !o.sweep_dp.empty() || !o.sweep_bw.empty()) {
    progress_label = "sweep point";
    std::vector<int64_t> dps;
    for (const auto& s : split_list(o.sweep_dp)) {
      int64_t v = 0;
      try {
        size_t used = 0;
        v = std::stoll(s, &used);
        if (used != s.size()) throw std::invalid_argument(s);
      } catch (const std::exception&) {
        throw InputError(fmt::format("--sweep-dp {}: '{}' is not an integer", o.sweep_dp, s));
      }
      dps.push_back(v);
    }
    if (dps.empty())
      for (int64_t d = 1; d <= job.dp; d *= 2)
        if (d % job.ep == 0) dps.push_back(d);
    if (dps.empty() || dps.back() != job.dp) dps.push_back(job.dp);
    std::vector<double> caps;
    for (const auto& s : split_list(o.sweep_bw)) {
      if (s == "0" || s == "none") {
        caps.push_back(0);
        continue;
      }
      Bandwidth bw;
      std::string expected;
      std::string text = s;
      if (text.find_first_not_of("0123456789.") == std::string::npos) text += "GB/s";  // bare numbers are GB/s
      if (!parse_bandwidth(text, bw, expected))
        throw InputError(fmt::format("--sweep-bw {}: '{}' is not a bandwidth; expected {}", o.sweep_bw, s, expected));
      caps.push_back(bw.bytes_per_second());
    }
    if (caps.empty()) caps = {0, 50e9, 20e9, 10e9, 5e9};
    const auto points = cluster::scaling_sweep(
        job, topo,
        [&](const topology::Topology& t) { return engine::make_backend(engine_name, t, nopt); },
        topt, policy, sc.seed, dps, caps);
    report::add_sweep(doc, points);
    if (tty || elapsed() > 2.0)
      std::cerr << fmt::format("podnet train: sweep of {} points done ({:.1f} s elapsed)\n", points.size(), elapsed());
  }
  emit(c, sc, doc, "train", [](const nlohmann::json& d, std::ostream& out) {
    report::write_training_table(d, out);
    if (d.contains("reliability")) write_training_reliability(d["reliability"], out);
    if (!d.contains("failures")) return;
    const auto& f = d["failures"];
    if (f["job_failed"].get<bool>())
      out << fmt::format("\n  with the scenario's failures: JOB FAILED at {} ms (the iteration takes {} ms without "
                         "them): {}\n",
                         report::fixed(f["iteration_ms"].get<double>(), 2),
                         report::fixed(f["baseline_iteration_ms"].get<double>(), 2), f["failure"].get<std::string>());
    else
      out << fmt::format("\n  with the scenario's failures: iteration {} ms vs {} ms without ({}x)\n",
                         report::fixed(f["iteration_ms"].get<double>(), 2),
                         report::fixed(f["baseline_iteration_ms"].get<double>(), 2),
                         report::fixed(f["slowdown"].get<double>(), 3));
    out << fmt::format("    {} event(s) scheduled, {} applied before the run ended\n",
                       f["scheduled"].get<int64_t>(), f["events"].size());
    for (const auto& e : f["events"])
      out << fmt::format("    {} ms  {}{}\n", report::fixed(e["at_ms"].get<double>(), 3), e["what"].get<std::string>(),
                         e["flows_rerouted"].get<int64_t>() > 0
                             ? fmt::format(" -> {} flow(s) rerouted", e["flows_rerouted"].get<int64_t>())
                             : "");
  });
  if (!o.trace.empty()) {
    auto f = open_out(o.trace);
    report::write_training_trace(r, f);
    std::cerr << "podnet: wrote trace " << o.trace << " (open in ui.perfetto.dev or chrome://tracing)\n";
  }
  return kExitOk;
}

}  // namespace

void add_train_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto o = std::make_shared<TrainCliOptions>();
  auto* cmd = app.add_subcommand(
      "train", "simulate one training iteration of the scenario's workload: iteration time, breakdown, MFU, days to "
               "train (default scenario: aipod-16k)");
  add_common(cmd, *c, false);
  cmd->add_option("--trace", o->trace, "write a Chrome/Perfetto trace of the iteration (one process per stage)")
      ->type_name("FILE.json");
  cmd->add_option("--engine", o->engine, "analytical | flow (sets network.engine)");
  cmd->add_option("--placement", o->placement, "topology_aware | packed | random (sets placement.policy)");
  cmd->add_flag("--sweep", o->sweep,
                "scaling-efficiency sweep: DP 1, 2, 4, ... up to the job's, at NIC caps as built, 50, 20, 10, 5 GB/s");
  cmd->add_option("--sweep-dp", o->sweep_dp, "DP sizes of the sweep, e.g. 1,8,64 (the job's own DP is added)");
  cmd->add_option("--sweep-bw", o->sweep_bw, "per-GPU NIC caps of the sweep, e.g. 5,10,20,50 (GB/s) or 0 = as built");
  cmd->add_option("--simai-workload", o->simai_workload,
                  "run a SimAI/AICB workload file instead of the scenario's workload (GPUs: its all_gpus, else the "
                  "fabric's)")
      ->type_name("FILE.txt");
  cmd->add_flag("--allow-oom", o->allow_oom,
                "time the job even when it does not fit in the GPU's memory (the report still shows what it needs)");
  cmd->add_option("--simai-topology", o->simai_topology, "use a SimAI .topo file as the fabric instead of the scenario's")
      ->type_name("FILE.topo");
  cmd->footer("Examples:\n  podnet train aipod-16k\n"
              "  podnet train aipod-16k --set workload.model=llama3-70b --set workload.tp=8 --set workload.pp=4 "
              "--format json\n"
              "  podnet train leafspine-8k --placement random --trace iteration.json\n"
              "  podnet train aipod-16k --set workload.dp=16 --sweep --sweep-dp 1,4,16 --engine analytical\n"
              "  podnet train aipod-16k --simai-workload workload.txt --simai-topology fabric.topo");
  cmd->callback([&action, c, o] { action = [c, o] { return cmd_train(*c, *o); }; });
}

}  // namespace podnet::cli
