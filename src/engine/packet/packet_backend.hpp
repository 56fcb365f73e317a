// The packet engine behind NetworkBackend: every transfer of the plan
// becomes QP streams on PacketSim (packet_sim.hpp states the model), and a
// transfer starts the moment its last dependency completes (as the flow
// engine).
//
// Transfers -> streams:
// - P2p with q QPs: q streams of bytes/q (the first bytes % q get one more),
//   QP j on entropy channel x 1024 + j (the same ECMP paths as the flow
//   engine), each paying latency_steps x its path's hop latency.
// - Ring / Coupled: every hop (edge) is q streams (QPs) carrying `bytes` / q
//   each; the transfer completes when every hop has delivered. Each stream
//   pays latency_steps x the mean hop latency (as plan_compiler.hpp).
//   With a pipeline (plan::Pipeline, slices U > 0; NCCL's, set by the
//   collective for ring and tree plans, collective/nccl/pipeline.hpp) the
//   hops move as NCCL's do: every stream is cut into U slices, each its own
//   message of whole packets (a QP carries its share of every slice), and a
//   hop's QPs may send only the slices the pipeline has released
//   (slice_pipeline.hpp: a slice forwards what the previous rank delivered,
//   and at most `window` slices wait at the receiver unconsumed). A slice
//   counts as delivered when every QP of the hop has delivered its share, at
//   the time the last packet reaches the destination GPU. So a rank forwards
//   only what it has received, a small collective pays every ring step's
//   store-and-forward (the small-message regime), slices leave in bursts at
//   step boundaries and a slow hop holds back the hops that feed it (head
//   of line) as in NCCL. Without a pipeline (plans made without NCCL's
//   model, hand-made plans) every hop streams all its bytes at once, all
//   hops started together, so a hop on an uncongested path finishes early
//   while the transfer still ends with its slowest hop.
//   Why an attribute and not a DAG of slices: a plan of one transfer per
//   (hop, slice) would hold 2(n-1) x n x slices transfers per channel (a
//   128-rank all-reduce of 1 GiB on 16 channels: 16 x 128 x 254 x 4 = 2.1
//   million), and the flow engine would re-solve its max-min rates at every
//   slice of every hop; the flow engine's coupled rate is already the steady
//   state of the pipeline (one rate for all hops of a ring). The pipeline is
//   four numbers on the transfer and O(hops) counters in the packet engine
//   whatever the size; the other engines ignore it (pipeline_tracker.hpp
//   keeps the packet engine's side).
// - Compute: a delay of `duration`.
// Latency: the part of a stream's latency its packets do not experience
// physically (the transport's stack latency, and the extra latency steps) is
// waited before its first packet (packet_sim.hpp, StreamSpec::latency).
// Under NCCL's model the transfers pay none (latency_steps = 0) and the
// plan's leading delay holds NCCL's whole latency term, hops included
// (plan::Transfer::holds_hop_latency); the packets still take their hops,
// so that delay is shortened by the part of them that shows: a forwarding
// pipeline's (tree, chain) or an unpipelined transfer's whole chain of hops,
// a ring's only what its bytes do not cover (max(0, chain - B), B the
// busiest link's bytes / rate), along the longest path of transfers after
// it (hop_latency_credit.hpp states the rule). A collective then costs NCCL's
// latency plus its bytes' time, and what contention and serialization add,
// not its hops twice.
//
// Failures (NetworkOptions::faults.failures, failures.hpp): applied in time order
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
