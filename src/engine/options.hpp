// NetworkOptions: how an engine runs - routing, endpoint transport, link
// classes, each engine's settings, faults and the caller's observers. Filled from the scenario's `network:`
// section by network_options_from (network_params.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"
#include "engine/failures.hpp"
#include "engine/link_classes.hpp"
#include "routing/policies.hpp"
#include "routing/route.hpp"

namespace podnet::engine {

struct RunObservation;  // backend.hpp

// Endpoint transport: per-packet header overhead and stack latency, and what the layers above ask of it
// (they never compare its name): the class of the links its NICs drive, and the packet engine's
// congestion control when network.cc is auto.
struct Transport {
  std::string name = "rocev2";
  Time stack_latency;         // one-way endpoint (NIC + software) latency per message step
  int32_t mtu = 4096;         // payload bytes per packet
  int32_t header_bytes = 82;  // per-packet bytes on the wire beyond payload
  LinkClass nic_links = LinkClass::Ethernet;
  std::string default_cc = "dcqcn_nic";
  // An RDMA transport (InfiniBand's transport, over IB or RoCE): its largest path MTU is 4,096 payload bytes
  // (InfiniBand Architecture Specification vol. 1: 256, 512, 1,024, 2,048 or 4,096); network.mtu stays within it.
  bool rdma_mtu = true;
  double efficiency() const { return static_cast<double>(mtu) / (mtu + header_bytes); }
};

// The stack latency NCCL's latency model already holds: its network constants (tuning.cc hwLat) were measured
// on RDMA NICs, and RoCEv2's preset is the slower of the two RDMA presets. A tuned collective pays a stack
// latency above it once per network step (collective::Options::stack_latency_excess_us); InfiniBand's 2 us and
// RoCEv2's 5 us add nothing, TCP's 50 us adds 45 us a step.
inline constexpr Time kRdmaStackLatency = Time(5000000);

struct TransportPreset {
  const char* name;
  const char* description;
  Time stack_latency;
  int32_t mtu;
  int32_t header_bytes;
  LinkClass nic_links;
  const char* default_cc;
  bool rdma_mtu;
};
const std::vector<TransportPreset>& transport_presets();
// Throws InputError listing the presets for an unknown name.
Transport transport_preset(std::string_view name);

// Flow engine settings.
struct FlowSettings {
  // > 0: the memory limit (bytes, --max-memory) an observed flow-engine run
  // must stay within: its record of link-load steps (kept only when
  // `observers.observe` is set) may take what the process does not hold
  // when the run starts; past that the run stops with an InputError instead
  // of growing towards the OOM killer (flow_sim.hpp,
  // FlowSimOptions::max_link_steps).
  int64_t memory_limit = 0;
  // Threads one run may use (network.threads; results are the same to the
  // bit for every count). Flow engine: 1 or 2 (0 = 2 when the machine has
  // two cores or more; more counts as 2); the second re-sorts the solver's
  // link lists after large re-solves (maxmin.hpp, "Threads"). Analytical
  // engine: 0 = the machine's cores, at most 8 (analytical_backend.hpp,
  // "Threads"). Commands that run several points at once (sweep, optimize)
  // set 1.
  int32_t threads = 0;
  Time quantum;  // completions rounded up to a multiple (0 = exact; flow_sim.hpp)
  // Links that carry the same flows leave the solver to one of them (flow_backend.hpp,
  // same_flow_representatives); false: only the NICs' series links do (tests compare the two).
  bool same_flow_links = true;
};

// Packet engine settings (packet/packet_options.hpp).
struct PacketSettings {
  // Congestion control preset ("auto": the transport's default_cc), PFC,
  // shared switch buffer in bytes (0 = 40 us at each port's rate).
  std::string cc = "auto";
  bool pfc = true;
  bool link_credits = false;      // credit-based flow control on every link (packet_options.hpp)
  bool link_retry = false;        // link-level retry of packets a faulty link loses (packet_options.hpp)
  bool partitioned = false;       // the partitioned engine on FlowSettings::threads threads (packet/partition.hpp)
  int32_t reorder_nack = 64;      // packets beyond a hole before the receiver NACKs it (packet_options.hpp; 0: never)
  std::string delivery = "auto";  // auto, ordered, unordered, unreliable (packet_options.hpp: Delivery)
  Bytes switch_buffer = 0;
  // The switches' ECN band (packet_options.hpp; each < 0: the congestion control's own) and the
  // retransmission timeout (0: auto).
  Bytes ecn_kmin = -1, ecn_kmax = -1;
  double ecn_pmax = -1;
  Time rto;
  // > 0: every port's queue depth and every QP's rate sampled at this
  // interval (telemetry time series).
  Time sample_interval;
};

// What goes wrong during a run (failures.hpp).
struct Faults {
  FailureOptions failures;  // link and GPU events, on the flow and packet engines
  // PFC storms the packet engine simulates; the other engines refuse them.
  std::vector<PauseStorm> pause_storms;
  // Silent faults the packet engine applies to every packet; set by the
  // diagnose study's packet mode (diagnose/packet_probe.hpp).
  std::vector<SilentFault> silent_faults;
  // Switches with drifted PFC/ECN thresholds the packet engine simulates;
  // the other engines refuse them.
  std::vector<ThresholdDrift> threshold_drifts;
};

// Callbacks into the caller; each unset: nothing is called.
struct Observers {
  // Called by the flow and packet engines every `progress_every` finished
  // transfers (a count, so runs stay deterministic) with (finished, total,
  // simulated time); the caller decides what to print and when.
  std::function<void(int64_t, int64_t, Time)> progress;
  int64_t progress_every = 1024;
  // Called by the packet and flow engines every `heartbeat_every` events (a
  // count, so runs stay deterministic) with the simulated time. A caller that
  // must stop a long run throws from it (the dashboard's cancel and time
  // limit); a terminal shows that a run of a few large transfers still moves.
  std::function<void(Time)> heartbeat;
  int64_t heartbeat_every = 1 << 16;
  // Called by the flow and packet engines at the end of every run() with what
  // the run measured (backend.hpp: RunObservation), for telemetry.
  std::function<void(const RunObservation&)> observe;
  // Called by the flow and packet engines each time a flow (packet engine: a
  // QP stream) of plan transfer `transfer` is routed, with its directed links
  // and their coefficients (routing::PathPart: a coupled ring's link used by
  // two hops counts 2, a sprayed route splits 1 over its paths) and its
  // payload bytes per unit of coefficient: bytes x fraction is the payload
  // the flow puts on that link, retransmissions not counted. On the flow
  // engine a flow moved off a failed link is routed again with the bytes it
  // had left (the packet engine re-routes without calling it). Lets a
  // caller attribute link traffic to the transfers' owners (cluster/jobs.hpp:
  // bytes per job per link).
  std::function<void(int32_t transfer, const std::vector<routing::PathPart>& parts, double bytes)> on_route;
};

// How an engine runs: the fabric's behaviour (routing, transport, links),
// each engine's settings, the faults injected, and the caller's observers.
struct NetworkOptions {
  routing::RouteOptions routing;
  Transport transport = transport_preset("rocev2");
  LinkClassOptions links;     // per link class efficiency and latency (scenario `links:`)
  int32_t hottest_links = 8;  // how many links the report lists
  // Whether the report's link loads (RunReport::hottest, by_class) are wanted; a caller that reads neither
  // (the training study) turns them off and the analytical engine then skips adding every flow's bytes to
  // its links. The transfers' times are the same either way.
  bool link_loads = true;
  FlowSettings flow;
  PacketSettings packet;
  Faults faults;
  Observers observers;
};

}  // namespace podnet::engine
