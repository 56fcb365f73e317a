#include "engine/network.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "engine/analytical/analytical_backend.hpp"
#include "engine/flow/flow_backend.hpp"
#include "engine/packet/packet_backend.hpp"
#include "engine/packet/packet_options.hpp"

namespace podnet::engine {

const std::vector<TransportPreset>& transport_presets() {
  // Per-packet wire bytes beyond payload:
  //   rocev2: preamble+SFD 8, Ethernet 14, IPv4 20, UDP 8, IB BTH 12, ICRC 4, FCS 4, inter-frame gap 12 = 82
  //   infiniband: LRH 8, BTH 12, ICRC 4, VCRC 2 = 26
  //   tcp: preamble 8, Ethernet 14, IPv4 20, TCP 20 + 12 (timestamps), FCS 4, gap 12 = 90, 9000-byte jumbo MTU
  //        (payload 9000 - 52 = 8948)
  // Stack latency: one-way endpoint latency per message step, as the presets
  // (RoCEv2 ~5 us, InfiniBand ~2 us, TCP ~50 us); override with network.stack_latency.
  static const std::vector<TransportPreset> k = {
      {"rocev2", "RDMA over Converged Ethernet v2: 4096-byte MTU, 82 B/packet overhead, 5 us stack", Time(5000000),
       4096, 82},
      {"infiniband", "InfiniBand RC: 4096-byte MTU, 26 B/packet overhead, 2 us stack", Time(2000000), 4096, 26},
      {"tcp", "TCP/IP over Ethernet, 9000-byte jumbo frames (8948 B payload), 50 us stack", Time(50000000), 8948, 142},
  };
  return k;
}

Transport transport_preset(std::string_view name) {
  std::string names;
  for (const auto& p : transport_presets()) {
    if (name == p.name) return Transport{p.name, p.stack_latency, p.mtu, p.header_bytes};
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  }
  throw InputError(fmt::format("unknown transport '{}'; expected one of: {}", name, names));
}

const std::vector<EngineInfo>& engines() {
  static const std::vector<EngineInfo> k = {
      {"analytical", "closed-form alpha-beta per transfer: no contention between transfers (fast baseline)"},
      {"flow", "flow-level: weighted max-min fair sharing of every link, re-solved at each arrival/departure"},
      {"packet", "packet-level: queues, shared buffers, ECN, PFC, DCQCN (InfiniBand: credits), go-back-N, "
                 "per-packet adaptive/spray routing (slowest, most detailed)"},
  };
  return k;
}

std::unique_ptr<NetworkBackend> make_backend(std::string_view engine, const topology::Topology& topo,
                                             const NetworkOptions& options) {
  if (engine == "analytical") return std::make_unique<analytical::AnalyticalBackend>(topo, options);
  if (engine == "flow") return std::make_unique<flow::FlowBackend>(topo, options);
  if (engine == "packet") return std::make_unique<packet::PacketBackend>(topo, options);
  std::string names;
  for (const auto& e : engines()) names += (names.empty() ? "" : ", ") + std::string(e.name);
  throw InputError(fmt::format("unknown engine '{}'; expected one of: {}", engine, names));
}

std::unique_ptr<NetworkBackend> make_backend(std::string_view engine, const topology::Topology& topo) {
  const NetworkOptions defaults;
  return make_backend(engine, topo, defaults);
}

std::string dir_link_name(const topology::Topology& topo, routing::DirLink d) {
  const auto& l = topo.links[routing::link_of(d)];
  const bool fwd = (d & 1) == 0;
  const topology::NodeId a = fwd ? l.a : l.b, b = fwd ? l.b : l.a;
  const int32_t pa = fwd ? l.port_a : l.port_b, pb = fwd ? l.port_b : l.port_a;
  auto end = [&](topology::NodeId n, int32_t port) {
    const auto& node = topo.nodes[n];
    if (node.kind == topology::NodeKind::Switch) return node.name + ":" + topo.port_name(n, port);
    return node.name;
  };
  return end(a, pa) + " -> " + end(b, pb);
}

}  // namespace podnet::engine

namespace podnet::engine {

std::vector<ParamSpec> network_params() {
  std::vector<std::string> engine_names, policy_names, transport_names;
  for (const auto& e : engines()) engine_names.push_back(e.name);
  for (const auto& p : routing::policies()) policy_names.push_back(p.name);
  for (const auto& t : transport_presets()) transport_names.push_back(t.name);
  std::vector<std::string> cc_names = {"auto"};
  for (const auto& c : packet::cc_presets()) cc_names.push_back(c.name);
  return {
      {"engine", ParamType::String, "flow", "simulation fidelity", -1e300, 1e300, engine_names},
      {"routing", ParamType::String, "ecmp", "routing policy (see `podnet list`)", -1e300, 1e300, policy_names},
      {"per_switch_seed", ParamType::Bool, "true",
       "ECMP: every switch hashes with its own seed (false shows hash polarization)"},
      {"pxn", ParamType::Bool, "true", "NCCL PXN: cross rails over NVLink inside the source server"},
      {"transport", ParamType::String, "rocev2", "endpoint transport preset: header overhead and stack latency",
       -1e300, 1e300, transport_names},
      {"stack_latency", ParamType::Time, "", "override the transport's one-way endpoint latency", -1e300, 1e300, {},
       true},
      {"mtu", ParamType::Int, "", "override the transport's payload bytes per packet", 256, 65536, {}, true},
      {"flow_quantum", ParamType::Time, "0s",
       "flow engine: round each completion up to a multiple of this (0 = exact); flows finishing within one "
       "quantum share one re-solve, each late by less than a quantum: speeds up many concurrent flows of "
       "spread-out rates (large ECMP all-to-alls)"},
      {"cc", ParamType::String, "auto",
       "packet engine: congestion control (auto = infiniband with the infiniband transport, else dcqcn_nic; "
       "see `podnet list`)",
       -1e300, 1e300, cc_names},
      {"pfc", ParamType::Bool, "true",
       "packet engine: lossless data class with PFC; false = lossy, drops past the buffer's dynamic threshold "
       "(ignored with cc = infiniband: credits)"},
      {"switch_buffer", ParamType::Bytes, "",
       "packet engine: shared buffer of every switch (default: 40 us at each port's rate, 500 KB per 100G port)",
       1, 1e15, {}, true},
      {"local_repair", ParamType::Time, "1ms",
       "failures: time for a switch to drop a dead uplink from its ECMP/adaptive group (DLB, fast reroute)"},
      {"convergence", ParamType::Time, "2s", "failures: routing convergence for a dead downlink or NIC link"},
      {"collective_timeout", ParamType::Time, "30s",
       "failures: a collective stalled longer than this stops the job (NCCL/IB retry budget)"},
  };
}

NetworkOptions network_options_from(const Params& p, uint64_t seed) {
  NetworkOptions o;
  o.routing.policy = p.get_string("routing");
  o.routing.seed = seed;
  o.routing.per_switch_seed = p.get_bool("per_switch_seed");
  o.routing.pxn = p.get_bool("pxn");
  o.transport = transport_preset(p.get_string("transport"));
  if (p.has("stack_latency")) o.transport.stack_latency = p.get_time("stack_latency");
  if (p.has("mtu")) o.transport.mtu = static_cast<int32_t>(p.get_int("mtu"));
  o.flow_quantum = p.get_time("flow_quantum");
  o.cc = p.get_string("cc");
  o.pfc = p.get_bool("pfc");
  if (p.has("switch_buffer")) o.switch_buffer = static_cast<Bytes>(p.get_real("switch_buffer"));
  o.failures.local_repair = p.get_time("local_repair");
  o.failures.convergence = p.get_time("convergence");
  o.failures.collective_timeout = p.get_time("collective_timeout");
  return o;
}

}  // namespace podnet::engine
