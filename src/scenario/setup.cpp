#include "scenario/setup.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "diagnose/packet_probe.hpp"
#include "engine/link_classes.hpp"
#include "engine/network_params.hpp"
#include "scenario/estimate.hpp"

namespace podnet::scenario {

namespace {

// Runs `f`, turning a ParamError (which names a key) into an InputError at that key's line.
template <class F>
auto located(const Scenario& sc, F&& f) {
  try {
    return f();
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {}", sc.where(sc.blame(e)), e.what()));
  }
}

}  // namespace

Setup resolve(Scenario sc, std::optional<topology::Topology> fabric) {
  Setup s;
  s.fabric = fabric ? std::move(*fabric) : sc.build_topology();
  // The failures' names (link classes, tiers, devices) are checked for every command, not only the ones that
  // inject them: a scenario checked with `podnet reliability` must not fail later in `podnet train`.
  sc.check_failures(s.fabric);
  located(sc, [&] {
    const Params& net = sc.section("network");
    s.engine = net.get_string("engine");
    s.network = engine::network_options_from(net, sc.seed);
    s.network.links = engine::link_classes_from(sc.section("links"));
    s.network.flow.memory_limit = estimate::limit();  // what an observed run's records may grow to
    s.collective = collective::options_from(sc.section("collective"));
    s.collective.seed = sc.seed;  // draws the permutation pattern (collective/patterns.hpp)
    s.collective.nvlink_efficiency = s.network.links[engine::LinkClass::NvLink].efficiency;
    s.collective.network_efficiency =
        s.network.links[s.network.transport.nic_links].efficiency * s.network.transport.efficiency();
    s.collective.stack_latency_excess_us =
        std::max(0.0, (s.network.transport.stack_latency - engine::kRdmaStackLatency).seconds() * 1e6);
    s.placement = cluster::parse_policy(sc.section("placement").get_string("policy"));
    s.scheduler = cluster::parse_scheduler(sc.section("scheduler").get_string("policy"));
    s.reliability = reliability::config_from(sc.section("reliability"));
    s.storage = reliability::storage_from(sc.section("storage"));
    // The recovery times come from network: once (engine::FailureOptions); the risk model copies them.
    s.reliability.collective_timeout_s = s.network.faults.failures.collective_timeout.seconds();
    s.reliability.link_recovery_s = s.network.faults.failures.local_repair.seconds();
    s.reliability.switch_recovery_s = s.network.faults.failures.convergence.seconds();
    // SHARP aggregates in InfiniBand switches (NVIDIA Quantum); an Ethernet transport has no such switch.
    if (s.fabric.sharp && s.network.transport.nic_links != engine::LinkClass::InfiniBand)
      throw ParamError("switch.in_network_reduction",
                       fmt::format("switch.in_network_reduction = sharp: SHARP reduces in InfiniBand switches, but "
                                   "network.transport is {} (expected network.transport: infiniband, or "
                                   "in_network_reduction: none)",
                                   s.network.transport.name));
    return 0;
  });
  s.frontend = sc.frontend();
  s.faults = sc.fault_list(s.fabric);
  // The same faults as the packet engine's silent faults, so that bench and train simulate them (diagnose's
  // probes take s.faults; the other engines refuse them, engine/registry.cpp).
  s.network.faults.silent_faults = diagnose::silent_faults(s.faults);
  s.network.faults.pause_storms = sc.pause_storms(s.fabric);
  s.network.faults.threshold_drifts = sc.threshold_drifts(s.fabric);
  s.scenario = std::move(sc);
  return s;
}

int64_t Setup::training_gpus() const {
  const int64_t all = static_cast<int64_t>(fabric.gpus.size());
  const int32_t first = frontend.first_storage_slot(fabric.servers);
  return first < 0 ? all : all - int64_t{fabric.servers - first} * fabric.gpus_per_server;
}

workload::Job Setup::job(bool memory) const {
  try {
    return located(scenario, [&] {
      workload::Job j = workload::job_from(scenario.section("workload"), training_gpus());
      j.seed = scenario.seed;
      if (memory) workload::check_memory(j);
      return j;
    });
  } catch (const InputError& e) {
    // The model set on the command line over a file's layout written for another model (aipod-16k's PP16 x v8
    // for llama3-70b's 80 layers): say which keys came from the file, and the recipe that would replace them.
    const std::string model = scenario.section("workload").get_string("model");
    const std::vector<std::string> from_file = scenario.recipe_keys_from_file();
    if (from_file.empty() || !workload::find_recipe(model)) throw;
    std::string keys;
    for (const auto& k : from_file) keys += (keys.empty() ? "" : ", ") + k;
    throw InputError(fmt::format("{}\n  (the model is set on the command line, but {} come from the scenario file, "
                                 "written for its own model; --set workload.recipe=preset takes {}'s recipe)",
                                 e.what(), keys, model));
  }
}

}  // namespace podnet::scenario

namespace podnet::scenario {

workload::Job Setup::jobs_entry(size_t i, bool memory) const {
  const JobSpec& spec = scenario.jobs.at(i);
  const std::string prefix = fmt::format("jobs[{}].", i);
  try {
    Params p = spec.workload;
    workload::Job j = workload::job_from(p, spec.gpus, "the job");
    if (!p.has("dp")) {
      // dp from the GPU count: job_from picked the largest d that fits; the job must fill its GPUs.
      const int64_t mp = j.tp * j.cp * j.pp;
      if (spec.gpus % mp != 0)
        throw ParamError("gpus", fmt::format("{} GPUs are not a multiple of tp x cp x pp = {} x {} x {} = {}",
                                             spec.gpus, j.tp, j.cp, j.pp, mp));
      p.set("dp", int64_t{spec.gpus / mp}, std::to_string(spec.gpus / mp));
      j = workload::job_from(p, spec.gpus, "the job");
    }
    j.seed = scenario.seed;
    if (j.speed_cv > 0 || j.jitter_cv > 0 || j.slow_host_share > 0)
      throw ParamError("workload.variability", "several jobs on one fabric do not model variability between GPUs yet; "
                                               "expected workload.variability=none (a single job models it)");
    if (j.gpus() != spec.gpus)
      throw ParamError("gpus",
                       fmt::format("the job has {} GPUs but its workload uses tp x cp x pp x dp = {} x {} x {} x "
                                   "{} = {}; expected equal counts",
                                   spec.gpus, j.tp, j.cp, j.pp, j.dp, j.gpus()));
    if (memory) workload::check_memory(j);
    return j;
  } catch (const ParamError& e) {
    std::string key = e.key();
    if (key.rfind("workload.", 0) == 0) key = prefix + key;
    else if (key == "gpus") key = prefix + "gpus";
    std::string at = scenario.where(key);
    if (scenario.from_set.count("jobs")) at = "--set " + key;  // the whole list came from --set jobs=[...]
    else if (key == prefix + "gpus") at = fmt::format("{}:{}: {}", scenario.source, spec.line, key);
    throw InputError(fmt::format("{}: {} ({})", at, e.what(), spec.name));
  }
}

cluster::Scheduler Setup::job_scheduler(size_t i) const {
  const JobSpec& spec = scenario.jobs.at(i);
  return spec.placement.empty() ? scheduler : cluster::parse_scheduler(spec.placement);
}

}  // namespace podnet::scenario
