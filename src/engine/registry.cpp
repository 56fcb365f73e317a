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
  static const std::vector<EngineInfo> k = {
      {"analytical",
       "closed-form alpha-beta: the concurrent transfers of one operation (a collective's channels, an all-to-all's "
       "pairs) share the links they use; separate operations do not contend (fast baseline)",
       make<analytical::AnalyticalBackend>},
      {"flow", "flow-level: weighted max-min fair sharing of every link, re-solved at each arrival/departure",
       make<flow::FlowBackend>},
      {"packet",
       "packet-level: queues, shared buffers, ECN, PFC, DCQCN (InfiniBand: credits), go-back-N, "
       "per-packet adaptive/spray routing (slowest, most detailed)",
       make<packet::PacketBackend>},
  };
  return k;
}

std::unique_ptr<NetworkBackend> make_backend(std::string_view engine, const topology::Topology& topo,
                                             const NetworkOptions& options) {
  std::string names;
  if (!options.pause_storms.empty() && engine != "packet")
    throw InputError(fmt::format("faults: {} is a PFC storm, which only the packet engine simulates (PAUSE frames); "
                                 "run with --engine packet (network.engine=packet), not '{}'",
                                 options.pause_storms.front().what, engine));
  if (!options.silent_faults.empty() && engine != "packet")
    throw InputError(fmt::format("faults: {} is a silent fault (lost, corrupted or delayed packets, a flapping link), "
                                 "which only the packet engine simulates (diagnose's probes see it on any engine); run "
                                 "with --engine packet (network.engine=packet), not '{}'",
                                 options.silent_faults.front().what, engine));
  if (!options.threshold_drifts.empty() && engine != "packet")
    throw InputError(fmt::format("faults: {}: drifted ECN/PFC thresholds are simulated by the packet engine only "
                                 "(marking and pausing); run with --engine packet (network.engine=packet), not '{}'",
                                 options.threshold_drifts.front().what, engine));
  for (const auto& e : engines()) {
    if (engine == e.name) return e.make(topo, options);
    names += (names.empty() ? "" : ", ") + std::string(e.name);
  }
  throw InputError(fmt::format("unknown engine '{}'; expected one of: {}", engine, names));
}

std::unique_ptr<NetworkBackend> make_backend(std::string_view engine, const topology::Topology& topo) {
  const NetworkOptions defaults;
  return make_backend(engine, topo, defaults);
}

}  // namespace podnet::engine
