// The packet engine behind NetworkBackend: every transfer of the plan
// becomes QP streams on PacketSim (packet_sim.hpp states the model), and a
// transfer starts the moment its last dependency completes (as the flow
// engine).
//
// Transfers -> streams:
// - P2p with q QPs: q streams of bytes/q (the first bytes % q get one more),
//   QP j on entropy channel x 1024 + j (the same ECMP paths as the flow
//   engine), each paying latency_steps x its path's hop latency.
// - Ring / Coupled: every hop (edge) is q streams carrying `bytes` / q each,
//   all started together; the transfer completes when every hop has
//   delivered. Each stream pays latency_steps x the mean hop latency (as
//   plan_compiler.hpp). Difference from the flow engine's coupled model:
//   there a ring moves at one common rate (the slowest hop's), because a
//   rank forwards only what it has received; here each hop streams on its own,
//   so a hop on an uncongested path finishes early while the transfer still
//   ends with its slowest hop. The completion time is the same when the
//   slowest hop keeps its rate; the hops' load on shared links differs
//   (faster hops release bandwidth early instead of being held back).
// - Compute: a delay of `duration`.
// Latency: the part of a stream's latency its packets do not experience
// physically (the transport's stack latency, and the extra latency steps) is
// waited before its first packet (packet_sim.hpp, StreamSpec::latency).
//
// Failures (NetworkOptions::failures, failures.hpp): applied in time order
// between simulation steps exactly as the flow engine schedules them (the
// same `local` repair rule, timeout and no-route checks, records and job
// failure texts); what they do to ports, packets and QPs is packet_sim.hpp
// §10. A straggler (Slow) multiplies the duration of the computes its rank
// starts from then on (the slowest rank of a Compute sets the pace; events
// at time 0 apply to the first compute). Stop ends the run at once.
//
// Options: the scenario's `network:` section selects routing, transport,
// `cc` (auto: the congestion control follows the transport, infiniband ->
// credit-based `infiniband`, else `dcqcn_nic`), `pfc` and `switch_buffer`.
// Tests and tools pass PacketOptions directly.
#pragma once

#include <memory>

#include "engine/backend.hpp"
#include "engine/options.hpp"
#include "engine/packet/packet_options.hpp"
#include "engine/packet/packet_sim.hpp"

namespace podnet::engine::packet {

// The packet options of a network configuration (cc, pfc, switch_buffer; cc auto by transport).
PacketOptions default_packet_options(const NetworkOptions& options);

class PacketBackend final : public NetworkBackend {
 public:
  PacketBackend(const topology::Topology& topo, NetworkOptions options);
  PacketBackend(const topology::Topology& topo, NetworkOptions options, PacketOptions packet);
  const char* name() const override { return "packet"; }
  RunReport run(const plan::TransferPlan& plan) override;
  // The simulation of the last run() (telemetry: ports, streams, totals); null before.
  const PacketSim* last_run() const { return sim_.get(); }

 private:
  const topology::Topology& topo_;
  NetworkOptions options_;
  PacketOptions packet_;
  std::unique_ptr<PacketSim> sim_;
};

}  // namespace podnet::engine::packet
