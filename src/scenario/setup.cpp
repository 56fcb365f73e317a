#include "scenario/setup.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "engine/link_classes.hpp"
#include "engine/network_params.hpp"

namespace podnet::scenario {

namespace {

// Runs `f`, turning a ParamError (which names a key) into an InputError at that key's line.
template <class F>
auto located(const Scenario& sc, F&& f) {
  try {
    return f();
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {}", sc.where(e.key()), e.what()));
  }
}

}  // namespace

Setup resolve(Scenario sc, std::optional<topology::Topology> fabric) {
  Setup s;
  s.fabric = fabric ? std::move(*fabric) : sc.build_topology();
  located(sc, [&] {
    const Params& net = sc.section("network");
    s.engine = net.get_string("engine");
    s.network = engine::network_options_from(net, sc.seed);
    s.network.links = engine::link_classes_from(sc.section("links"));
    s.collective = collective::options_from(sc.section("collective"));
    s.collective.seed = sc.seed;  // draws the permutation pattern (collective/patterns.hpp)
    s.placement = cluster::parse_policy(sc.section("placement").get_string("policy"));
    s.reliability = reliability::config_from(sc.section("reliability"));
    // The recovery times come from network: once (engine::FailureOptions); the risk model copies them.
    s.reliability.collective_timeout_s = s.network.failures.collective_timeout.seconds();
    s.reliability.link_recovery_s = s.network.failures.local_repair.seconds();
    s.reliability.switch_recovery_s = s.network.failures.convergence.seconds();
    return 0;
  });
  s.faults = sc.fault_list(s.fabric);
  s.network.pause_storms = sc.pause_storms(s.fabric);
  s.network.threshold_drifts = sc.threshold_drifts(s.fabric);
  s.scenario = std::move(sc);
  return s;
}

workload::Job Setup::job(bool memory) const {
  return located(scenario, [&] {
    workload::Job j = workload::job_from(scenario.section("workload"), static_cast<int64_t>(fabric.gpus.size()));
    if (memory) workload::check_memory(j);
    return j;
  });
}

}  // namespace podnet::scenario
