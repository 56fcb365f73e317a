// The traffic patterns (collective/patterns.hpp) timed by the flow and packet
// engines, against hand-derived flow completion times (docs/contributing/validation/traffic-patterns.md,
// "Traffic patterns"). In the workload layer, the first above both collective
// and engine.
//
// Figures (derived in src/engine/engine_validation_test.cpp from the hardware
// defaults, which that test checks):
//   B, the payload rate of a 400G NIC (rocev2) = 400e9 x 4096 / 4178 = 392.1494e9 b/s
//   one GPU -> GPU hop on rail 0, one GPU per server:
//     same leaf 6,630 ns; leaf -> spine -> leaf 8,130 ns
// Fabric: leafspine1k, the 2-tier rail-optimized fat_tree of 1,024 GPUs: 128
// servers of 8 in 2 aggregation groups of 64 servers; GPU 8s (s = server)
// uses its server's rail-0 NIC, so GPUs 0, 8, ..., 504 share group 0's rail-0
// leaf and 512, ..., 1016 group 1's. Each leaf has 64 down-ports and
// 8 spines x 8 links = 64 up-ports: non-blocking.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "collective/collective.hpp"
#include "collective/patterns.hpp"
#include "collective/test_topologies.hpp"
#include "engine/registry.hpp"
#include "engine/report_util.hpp"
#include "topology/builders.hpp"

namespace podnet::collective {
namespace {

using namespace podnet::literals;

constexpr double kB = 400e9 * 4096.0 / 4178.0;  // NIC payload rate, b/s
constexpr double kSameLeafNs = 6630;
constexpr double kViaSpineNs = 8130;

const topology::Topology& leafspine1k() {
  static const topology::Topology t =
      topology::build_with("fat_tree", {{"gpus", "1024"}, {"tiers", "2"}, {"rail_optimized", "true"}},
                           topology::default_hardware());
  return t;
}

engine::NetworkOptions net(const std::string& policy, const std::string& cc = "auto") {
  engine::NetworkOptions o;
  o.routing.policy = policy;
  o.routing.seed = 1;
  o.packet.cc = cc;
  return o;
}

engine::FlowTimes run(const std::string& engine, const plan::TransferPlan& plan, const engine::NetworkOptions& o) {
  const engine::RunReport r = engine::make_backend(engine, leafspine1k(), o)->run(plan);
  const auto f = engine::flow_times(plan, r);
  EXPECT_TRUE(f.has_value());
  return f.value_or(engine::FlowTimes{});
}

// The receiver GPU 0, senders GPU 8, 16, ..., 8N: all on group 0's rail-0 leaf.
Group incast_group(int32_t senders) {
  Group g;
  for (int32_t i = 0; i <= senders; ++i) g.push_back(8 * i);
  return g;
}

// Incast of N flows of S into one 400G NIC, flow engine. The receiver's leaf -> NIC link is every flow's
// bottleneck (each sender's own NIC carries one flow); max-min gives each B/N, so all N finish together at
//   FCT = 6,630 ns + N x S x 8 / B.
// S = 1 MiB = 8,388,608 bits, S x 8 / B = 21.3914 us: N = 1: 6.63 + 21.3914 = 28.0214 us; N = 2: 49.4127 us;
// N = 7: 6.63 + 149.7395 = 156.3695 us; N = 32: 691.1535 us.
TEST(IncastEngines, FlowEngineSharesTheReceiverLinkFairly) {
  for (int32_t n : {1, 2, 7, 32}) {
    Options o;
    o.incast_senders = n;
    const auto plan = make_plan("incast", Op::Incast, incast_group(n), 1_MiB, o, leafspine1k());
    const engine::FlowTimes f = run("flow", plan, net("ecmp"));
    const double want_us = kSameLeafNs * 1e-3 + n * 8388608.0 / kB * 1e6;
    EXPECT_EQ(f.flows, n);
    EXPECT_NEAR(f.min.us(), want_us, 1e-3) << n << " senders";
    EXPECT_NEAR(f.max.us(), want_us, 1e-3) << n << " senders";
  }
  EXPECT_NEAR(kSameLeafNs * 1e-3 + 7 * 8388608.0 / kB * 1e6, 156.3695, 1e-4);
}

// The same 7-to-1 incast on the packet engine, with congestion control off (PFC alone) and with DCQCN as
// published (Zhu et al. 2015). The receiver link is a hard bound: the last flow cannot finish before
// 7 x S x 8 / B = 149.7395 us plus the propagation of one packet; with PFC holding the senders back nothing is
// lost, so the last flow finishes within 1 % of the fair-share time, 156.3695 us. With fair sharing the first
// flow also finishes near it: within 5 %.
TEST(IncastEngines, PacketEngineMatchesTheFairShareWithPfc) {
  Options o;
  o.incast_senders = 7;
  const auto plan = make_plan("incast", Op::Incast, incast_group(7), 1_MiB, o, leafspine1k());
  const double want_us = kSameLeafNs * 1e-3 + 7 * 8388608.0 / kB * 1e6;
  for (const char* cc : {"none", "dcqcn_paper"}) {
    const engine::FlowTimes f = run("packet", plan, net("ecmp", cc));
    EXPECT_EQ(f.flows, 7);
    EXPECT_GE(f.max.us(), 7 * 8388608.0 / kB * 1e6) << cc;
    EXPECT_NEAR(f.max.us(), want_us, 0.01 * want_us) << cc;
    EXPECT_NEAR(f.min.us(), want_us, 0.05 * want_us) << cc;
  }
}

// A permutation of one GPU per server (GPUs 0, 8, ..., 1016: 128 GPUs, every flow crosses the network) on the
// non-blocking leaf-spine with per-packet spraying: every leaf sends at most 64 flows up over 64 links and
// spraying spreads them evenly, so no fabric link is a bottleneck and each flow runs at its NIC's B:
//   FCT = hop latency + S x 8 / B = 6,630 or 8,130 ns (peer on its own group's leaf or the other group's)
//   + 21.3914 us for S = 1 MiB: 28.0214 us or 29.5214 us, flow by flow.
TEST(PermutationEngines, NonBlockingFabricWithSprayingRunsEveryFlowAtLineRate) {
  const Group g = testing::iota(128);
  Group gpus;
  for (int32_t i : g) gpus.push_back(8 * i);
  Options o;
  o.seed = 5;
  const auto plan = make_plan("permutation", Op::Permutation, gpus, 1_MiB, o, leafspine1k());
  ASSERT_EQ(plan.transfers.size(), 128u);
  const engine::RunReport r = engine::make_backend("flow", leafspine1k(), net("spray"))->run(plan);
  int cross = 0;
  for (size_t i = 0; i < plan.transfers.size(); ++i) {
    const auto& t = plan.transfers[i];
    const bool same_group = (t.ranks[0] < 512) == (t.ranks[1] < 512);
    cross += same_group ? 0 : 1;
    const double want_us = (same_group ? kSameLeafNs : kViaSpineNs) * 1e-3 + 8388608.0 / kB * 1e6;
    EXPECT_NEAR((r.transfers[i].finish - r.transfers[i].start).us(), want_us, 1e-3) << "flow " << i;
  }
  // The draw sends flows both within and across the groups, so both hop latencies are checked.
  EXPECT_GT(cross, 0);
  EXPECT_LT(cross, 128);
  // The packet engine's spraying: every flow within 2 % of its line-rate FCT (packetization, reordering).
  const engine::FlowTimes p = run("packet", plan, net("spray"));
  EXPECT_NEAR(p.min.us(), kSameLeafNs * 1e-3 + 8388608.0 / kB * 1e6, 0.02 * 28.021);
  EXPECT_NEAR(p.max.us(), kViaSpineNs * 1e-3 + 8388608.0 / kB * 1e6, 0.02 * 29.521);
  // ECMP hashing puts two flows on one spine link somewhere (a collision): the slowest flow takes at least
  // twice the data time, 2 x 21.3914 us; the fastest still runs alone at line rate.
  const engine::FlowTimes e = run("flow", plan, net("ecmp"));
  EXPECT_GE(e.max.us(), 2 * 8388608.0 / kB * 1e6);
  EXPECT_NEAR(e.min.us(), kSameLeafNs * 1e-3 + 8388608.0 / kB * 1e6, 1e-3);
}

}  // namespace
}  // namespace podnet::collective
