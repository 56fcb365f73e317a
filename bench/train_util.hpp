// One training iteration of a scenario's job, as `podnet train` simulates it: the benches that time the
// default run (train_bench, scale_bench) share it.
#pragma once

#include <string>
#include <vector>

#include "cluster/placement.hpp"
#include "collective/collective.hpp"
#include "engine/network_params.hpp"
#include "engine/registry.hpp"
#include "scenario/scenario.hpp"
#include "study/scaling.hpp"
#include "workload/job.hpp"
#include "workload/training.hpp"

namespace podnet::bench {

// Loads `scenario` with `sets` (and network.engine = engine) and simulates one iteration of its job.
inline workload::TrainResult train_iteration(const std::string& scenario, const std::string& engine,
                                             std::vector<std::string> sets) {
  sets.push_back("network.engine=" + engine);
  scenario::Scenario sc = scenario::load(scenario, sets);
  const topology::Topology topo = sc.build_topology();
  const workload::Job job = workload::job_from(sc.section("workload"), static_cast<int64_t>(topo.gpus.size()));
  engine::NetworkOptions nopt = engine::network_options_from(sc.section("network"), sc.seed);
  nopt.link_loads = false;  // as `podnet train` runs it (study/train.cpp): no link loads reported
  auto backend = engine::make_backend(engine, topo, nopt);
  workload::TrainOptions topt;
  topt.collective = collective::options_from(sc.section("collective"));
  return study::simulate_job(job, topo, *backend, topt,
                             cluster::parse_policy(sc.section("placement").get_string("policy")), sc.seed);
}

}  // namespace podnet::bench
