// `podnet run [SCENARIO]`: the whole story of one scenario on one page - the
// fabric's design summary (bill of materials, limits) and one simulated
// training iteration of its workload (breakdown, MFU, days to train the token
// budget). With no argument it runs the built-in default, aipod-16k: Llama 3
// 405B as Meta trained it on 16,384 H100s (TP8 x PP16 x DP128, Llama 3 paper
// Table 4).
#include <chrono>
#include <fmt/format.h>
#include <iostream>
#include <unistd.h>

#include "cli/common.hpp"
#include "cluster/placement.hpp"
#include "collective/collective.hpp"
#include "core/error.hpp"
#include "engine/network_params.hpp"
#include "engine/registry.hpp"
#include "report/design_report.hpp"
#include "report/train_report.hpp"
#include "workload/job.hpp"
#include "workload/training.hpp"

namespace podnet::cli {

namespace {

int cmd_run(Common c, bool allow_oom) {
  if (c.scenario.empty()) c.scenario = kDefaultScenario;
  const auto wall0 = std::chrono::steady_clock::now();
  scenario::Scenario sc = load_scenario(c);
  topology::Topology topo = sc.build_topology();
  nlohmann::json doc = design_document(sc, topo, "run");

  workload::Job job;
  try {
    job = workload::job_from(sc.section("workload"), static_cast<int64_t>(topo.gpus.size()));
    if (!allow_oom) workload::check_memory(job);
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {}", sc.where(e.key()), e.what()));
  }
  const cluster::Policy policy = cluster::parse_policy(sc.section("placement").get_string("policy"));
  engine::NetworkOptions nopt = engine::network_options_from(sc.section("network"), sc.seed);
  nopt.links = engine::link_classes_from(sc.section("links"));
  auto backend = engine::make_backend(sc.section("network").get_string("engine"), topo, nopt);
  workload::TrainOptions topt;
  topt.collective = collective::options_from(sc.section("collective"));
  std::vector<int32_t> gpus;
  const workload::TrainResult r = cluster::simulate_job(job, topo, *backend, topt, policy, sc.seed, &gpus);
  nlohmann::json training;
  report::add_training(training, r);
  doc["training"] = training;
  doc["reliability"] = training_reliability(sc, topo, gpus, r.days_to_train);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  if (isatty(STDERR_FILENO) || wall > 2.0)
    std::cerr << fmt::format("podnet run: design and one training iteration done ({:.1f} s)\n", wall);

  emit(c, sc, doc, "run", [](const nlohmann::json& d, std::ostream& out) {
    report::write_design_table(d, out);
    out << "\n";
    report::write_training_table(d["training"], out);
    write_training_reliability(d["reliability"], out);
  });
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto* runc = app.add_subcommand("run", "run a scenario end to end: design summary and one training iteration with "
                                         "days to train (default: the built-in aipod-16k)");
  auto allow_oom = std::make_shared<bool>(false);
  add_common(runc, *c, false);
  runc->add_flag("--allow-oom", *allow_oom,
                 "time the job even when it does not fit in the GPU's memory (the report still shows what it needs)");
  runc->callback([&action, c, allow_oom] { action = [c, allow_oom] { return cmd_run(*c, *allow_oom); }; });
}

}  // namespace podnet::cli
