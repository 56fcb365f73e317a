// HopLatencyCredit: how much of a latency-holding delay the packet engine
// skips because packets pay it physically.
//
// Under NCCL's model (collective/collective.hpp) a plan opens with a delay
// that holds NCCL's whole latency term, hops included
// (plan::Transfer::holds_hop_latency), and its data transfers pay no latency
// of their own (latency_steps = 0). On the packet engine the packets still
// cross their hops, so the delay is shortened by the part of those hops that
// shows. A collective then costs NCCL's latency plus its bytes' time, and
// what contention and serialization add, not its hops twice.
//
// Rule, for the delay i:
// - The transfers after it are those that pay no latency of their own
//   (latency_steps = 0), up to the next Compute.
// - Each one's chain: its pipeline's chain of hops weighted by their
//   physical latency (SlicePipeline::chain_length; the in-server prefix
//   before the NIC once, as a stream pays it), or, without a pipeline, its
//   slowest hop's latency. Routes are those launch makes (QP 0's).
// - What of a chain shows: a forwarding pipeline (period 0: chains, trees)
//   or none shows all of it (the first slice crosses the whole chain, the
//   rest follow); a ring pipeline (period > 0) only what its bytes do not
//   cover, max(0, chain - B), B the busiest link's bytes from all the
//   transfers after the delay over its rate: a step's own slices go while
//   the next slice is on its way, and other channels send while one waits.
// - The credit is the longest path of what shows.
// Cost: one pass over the transfers after each delay (memoised), O(plan).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "engine/packet/packet_sim.hpp"
#include "plan/transfer_plan.hpp"

namespace podnet::engine::packet {

class HopLatencyCredit {
 public:
  HopLatencyCredit(const plan::TransferPlan& plan, PacketSim& sim) : plan_(plan), sim_(sim) {}
  // The picoseconds to take off delay i (a Compute with holds_hop_latency).
  int64_t credit(int32_t i);

 private:
  bool eligible(int32_t j) const;
  bool is_ring(int32_t j) const;
  double chain_of(int32_t j);  // transfer j's chain (ps); adds its hops' bytes to link_bytes_
  int64_t shows_from(int32_t j);

  const plan::TransferPlan& plan_;
  PacketSim& sim_;
  std::vector<std::vector<int32_t>> after_;  // dependents, built on first use
  std::vector<int64_t> shows_memo_;          // ps along the longest path from a transfer on; -1 unknown
  std::vector<double> own_chain_;            // per transfer after a delay: its chain (ps)
  std::vector<uint8_t> seen_;
  std::vector<int32_t> reached_;
  std::map<routing::DirLink, double> link_bytes_;
  std::vector<std::pair<int32_t, int32_t>> hops_;
  std::vector<routing::PathPart> route_;
  std::vector<double> weight_;
  double busy_ps_ = 0;  // B of the delay being credited
};

}  // namespace podnet::engine::packet
