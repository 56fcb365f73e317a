// Helpers shared by the engine tests (header-only, tests only).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/failures.hpp"
#include "engine/options.hpp"
#include "plan/transfer_plan.hpp"
#include "topology/builders.hpp"
#include "topology/topology.hpp"

namespace podnet::engine::testing {

// 32 GPUs, one per server (one NIC each), on a 2-tier fat tree of 8-port switches (8 leaves of 4 hosts and 4
// uplinks, 4 spines): transfers across leaves cross a spine, which ECMP picks among 4.
inline topology::Topology fat_tree_32() {
  topology::Hardware hw = topology::default_hardware();
  hw.gpus_per_server = 1;
  hw.nics_per_server = 1;
  hw.nvlink_domain = 1;
  hw.radix = 8;
  return topology::build_with("fat_tree", {{"gpus", "32"}, {"tiers", "2"}}, hw);
}

// InfiniBand transport with packet spraying (seed 1): the SHARP fabrics' tests, where every flow spreads over
// every shortest path so that no ECMP collision blurs a hand-derived figure.
inline NetworkOptions infiniband_spray() {
  NetworkOptions o;
  o.routing.policy = "spray";
  o.routing.seed = 1;
  o.transport = transport_preset("infiniband");
  return o;
}

// Independent point-to-point transfers of `bytes` each.
inline plan::TransferPlan p2p_plan(const std::vector<std::pair<int32_t, int32_t>>& pairs, Bytes bytes) {
  plan::TransferPlan plan;
  for (auto [s, d] : pairs) {
    plan::Transfer t;
    t.ranks = {s, d};
    t.bytes = bytes;
    plan.add(t);
  }
  return plan;
}

// A compute of `duration` on rank `src`, then a transfer src -> dst of `bytes`
// that waits for it (transfer 0 is the compute, 1 the transfer).
inline plan::TransferPlan compute_then_p2p(int32_t src, int32_t dst, Time duration, Bytes bytes) {
  plan::TransferPlan plan;
  plan::Transfer c;
  c.kind = plan::TransferKind::Compute;
  c.ranks = {src};
  c.duration = duration;
  const int32_t wait = plan.add(c);
  plan::Transfer x;
  x.ranks = {src, dst};
  x.bytes = bytes;
  x.deps = {wait};
  plan.add(x);
  return plan;
}

// The network link of GPU `rank`'s NIC (-1 if it has none).
inline topology::LinkId nic_link(const topology::Topology& t, int32_t rank) {
  for (topology::LinkId l = 0; l < static_cast<topology::LinkId>(t.links.size()); ++l)
    if (t.links[l].a == t.gpu_nic[rank] && t.nodes[t.links[l].b].kind == topology::NodeKind::Switch) return l;
  return -1;
}

// A failure event on links (Down/Up/Degrade/Drain) or nothing (Stop/Slow: set gpu after).
inline FailureEvent event(Time at, FailureAction action, std::vector<topology::LinkId> links, std::string what) {
  FailureEvent e;
  e.at = at;
  e.action = action;
  e.links = std::move(links);
  e.what = std::move(what);
  return e;
}

}  // namespace podnet::engine::testing
