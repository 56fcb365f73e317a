#include "engine/registry.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "engine/analytical/analytical_backend.hpp"
#include "engine/flow/flow_backend.hpp"
#include "engine/packet/packet_backend.hpp"

namespace podnet::engine {

namespace {

template <class Backend>
std::unique_ptr<NetworkBackend> make(const topology::Topology& topo, const NetworkOptions& options) {
  return std::make_unique<Backend>(topo, options);
}

}  // namespace

const std::vector<EngineInfo>& engines() {
  // Memory per flow, per ring hop and per GPU: measured peaks (scenario/estimate.hpp says how).
  static const std::vector<EngineInfo> k = {
      {"analytical",
       "closed-form alpha-beta: the concurrent transfers of one operation (a collective's channels, an all-to-all's "
       "pairs) share the links they use; separate operations do not contend (fast baseline)",
       {.slow_gpus = true,
        .many_runs = true,
        .bytes_per_flow = 600,
        .bytes_per_ring_hop = 64,
        .bytes_per_gpu = 0,
        .bytes_per_gpu_per_thread = analytical::kBytesPerGpuPerThread,
        .threads = analytical::analytical_threads},
       make<analytical::AnalyticalBackend>},
      {"flow",
       "flow-level: weighted max-min fair sharing of every link, re-solved at each arrival/departure",
       {.contention = true,
        .failures = true,
        .slow_gpus = true,
        .link_series = true,
        .rate_quantum = true,
        .many_runs = true,
        .bytes_per_flow = 768,
        .bytes_per_ring_hop = 64,
        .bytes_per_gpu = 1280},
       make<flow::FlowBackend>},
      {"packet",
       "packet-level: queues, shared buffers, ECN, PFC or link credits, congestion control (DCQCN, DCTCP, "
       "Ultra Ethernet's NSCC and RCCC with trimming, HPCC, Swift, TIMELY), go-back-N or selective resends, "
       "per-packet adaptive/spray/REPS routing (slowest, most detailed)",
       {.contention = true,
        .failures = true,
        .slow_gpus = true,
        .packet_faults = true,
        .port_counters = true,
        .bytes_per_flow = 896,
        .bytes_per_ring_hop = 800,
        .bytes_per_gpu = 5120},
       make<packet::PacketBackend>},
  };
  return k;
}

const EngineInfo& engine_info(std::string_view name) {
  std::string names;
  for (const auto& e : engines()) {
    if (name == e.name) return e;
    names += (names.empty() ? "" : ", ") + std::string(e.name);
  }
  throw InputError(fmt::format("unknown engine '{}'; expected one of: {}", name, names));
}

std::string engine_names_with(bool EngineTraits::*trait, const char* last) {
  std::vector<std::string> names;
  for (const auto& e : engines())
    if (e.traits.*trait) names.emplace_back(e.name);
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? last : ", ") + names[i];
  return out;
}

std::unique_ptr<NetworkBackend> make_backend(std::string_view engine, const topology::Topology& topo,
                                             const NetworkOptions& options) {
  const EngineInfo& e = engine_info(engine);
  if (!e.traits.packet_faults) {
    const std::string which = engine_names_with(&EngineTraits::packet_faults);
    if (!options.faults.pause_storms.empty())
      throw InputError(fmt::format("faults: {} is a PFC storm, which only the {} engine simulates (PAUSE frames); "
                                   "run with --engine {} (network.engine={}), not '{}'",
                                   options.faults.pause_storms.front().what, which, which, which, engine));
    if (!options.faults.silent_faults.empty())
      throw InputError(fmt::format(
          "faults: {} is a silent fault (lost, corrupted or delayed packets, a flapping link), which only the {} "
          "engine simulates (diagnose's probes see it on any engine); run with --engine {} (network.engine={}), not "
          "'{}'",
          options.faults.silent_faults.front().what, which, which, which, engine));
    if (!options.faults.threshold_drifts.empty())
      throw InputError(fmt::format("faults: {}: drifted ECN/PFC thresholds are simulated by the {} engine only "
                                   "(marking and pausing); run with --engine {} (network.engine={}), not '{}'",
                                   options.faults.threshold_drifts.front().what, which, which, which, engine));
  }
  return e.make(topo, options);
}

std::unique_ptr<NetworkBackend> make_backend(std::string_view engine, const topology::Topology& topo) {
  const NetworkOptions defaults;
  return make_backend(engine, topo, defaults);
}

}  // namespace podnet::engine
