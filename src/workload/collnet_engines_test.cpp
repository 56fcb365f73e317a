// CollNet (SHARP in-network reduction, collective/collnet.hpp) timed by the
// three engines on a small InfiniBand fat-tree (docs/contributing/validation/nccl-algorithms.md,
// "CollNet / SHARP"). Here, the first layer above collective and engine.
//
// Fabric (collective/test_topologies.hpp ib_fat_tree32): 4 servers x 8 GPUs,
// NVSwitch (450 GB/s per GPU per direction), 8 x 400G NICs per server, one
// server per radix-16 leaf, 8 uplinks a leaf, 2 spines; switches with SHARP;
// transport infiniband (MTU 4096, 26 B per packet); routing spray (every
// flow split evenly over the equal-cost uplinks, so no ECMP collision).
// Payload rates (link_classes.hpp, engine/options.cpp):
//   NVLink     C = 450e9 x 8 x 0.824            = 2,966.4e9 b/s per direction
//   NIC / IB   B = 400e9 x 4096 / 4122          =   397.48e9 b/s
//   PCIe         64e9 x 8 x 0.894               =   457.73e9 b/s (> B)
// The tuner is on (as in every scenario): a plan starts with NCCL's latency
// (nccl/tuner.hpp section 5: direct 44 us, chain 69.2 us on these servers)
// and its data transfers pay no per-hop latency of their own.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <map>
#include <string>

#include <fmt/format.h>

#include "collective/collective.hpp"
#include "collective/test_topologies.hpp"
#include "engine/registry.hpp"
#include "engine/test_util.hpp"

namespace podnet::collective {
namespace {

using testing::iota;
using testing::sharp32;

constexpr double kNvlink = 450e9 * 8 * 0.824;

engine::NetworkOptions ib() { return engine::testing::infiniband_spray(); }

double time_of(const std::string& engine, const plan::TransferPlan& plan) {
  return engine::make_backend(engine, sharp32(), ib())->run(plan).makespan.seconds();
}

Options tuned(const char* algorithms = "auto") {
  Options o;
  o.tuner = true;
  o.channels = kAutoChannels;  // 16 on these servers
  o.selection = parse_algorithms(algorithms, o.selection, "collective.algorithms");
  return o;
}

void expect_rel(double got, double want, double tol, const std::string& what) {
  EXPECT_NEAR(got, want, tol * std::abs(want))
      << what << ": got " << got << ", want " << want << " (tolerance " << tol * 100 << " %)";
}

// collnet_direct, S = 1 GiB, 16 channels.
//   Inside a server (one coupled rate): every GPU is a head (8 NICs); its
//   NVLink to the NVSwitch carries 7 scatter edges + 7 broadcast edges, each
//   ceil(2^27 / 0.85) = 157,903,210 B, and so does the link back: r = C / 14,
//     t_intra = 157,903,210 x 8 x 14 / 2,966.4e9 = 5,961.83 us.
//   Through the switches: per head k, 2 channel rings of the 4 servers' k-th
//   GPUs, S/16 = 67,108,864 B an edge; NIC k of each server carries both
//   channels each way (2 flows), each leaf's 8 uplinks carry the 16 rings'
//   one edge out of it sprayed (16/8 = 2 flows' worth each): r = B / 2,
//     t_sharp = 67,108,864 x 8 / (397.48e9 / 2) = 2,701.4 us.
//   Concurrent: t = 44 us + max(5,961.83, 2,701.4) us = 6,005.83 us (NVLink-bound:
//   algbw 178.8 GB/s; the switch halves what the NICs carry, the NVLink scatter
//   and broadcast remain).
// collnet_chain, S = 1 GiB, 16 channels of S/16: each GPU link carries, over
//   the 16 channels, 14 up-chain edges (not when the GPU is the head) and 14
//   down-chain edges (not when it is the chain's first): 28 equal shares,
//   r = C / 28; the heads' NICs carry 2 channels each way (2r < B).
//     t = 69.2 us + 67,108,864 x 8 x 28 / 2,966.4e9 = 69.2 + 5,067.55 = 5,136.75 us.
TEST(CollnetEngines, FlowAndAnalyticalMatchTheHandDerivation) {
  const Bytes s = Bytes{1} << 30;
  struct Case {
    const char* algorithm;
    double hand;  // s
  };
  const double direct = 44e-6 + std::max(157903210.0 * 8 * 14 / kNvlink, 67108864.0 * 8 / (400e9 * 4096 / 4122 / 2));
  const double chain = 69.2e-6 + 67108864.0 * 8 * 28 / kNvlink;
  for (const Case& c : {Case{"collnet_direct", direct}, Case{"collnet_chain", chain}}) {
    const auto plan = make_plan(c.algorithm, Op::AllReduce, iota(32), s, tuned(), sharp32());
    ASSERT_EQ(plan.algorithm, c.algorithm);
    ASSERT_EQ(plan.channels, 16);
    const double f = time_of("flow", plan), a = time_of("analytical", plan);
    expect_rel(f, c.hand, 1e-4, fmt::format("{} flow vs hand", c.algorithm));
    expect_rel(a, c.hand, 1e-4, fmt::format("{} analytical vs hand", c.algorithm));
    std::cout << fmt::format("[ figure   ] {} 1 GiB on 32 GPUs: flow {:.2f} us, analytical {:.2f} us, hand {:.2f} us\n",
                             c.algorithm, f * 1e6, a * 1e6, c.hand * 1e6);
  }
}

// What the switches save: the same 1 GiB all-reduce as a ring (no SHARP)
// puts 2 (n-1)/n x S/16 per channel on every hop, each NIC carrying 2
// channels' inter-server hop each way: t_ring >= 2 x 62/32 x 2^26 x 8 / B
// = 5,235 us of NIC time, where collnet_direct's NICs are busy 2,701 us.
TEST(CollnetEngines, SharpHalvesWhatTheNicsCarry) {
  const Bytes s = Bytes{1} << 30;
  const auto ring = make_plan("ring", Op::AllReduce, iota(32), s, tuned(), sharp32());
  const double t_ring = time_of("flow", ring);
  EXPECT_GT(t_ring, 2 * 62.0 / 32 * 67108864.0 * 8 / (400e9 * 4096 / 4122));
  // The SHARP passes alone (the direct plan without its NVLink phase) finish in 2,701.4 us.
  auto sharp_only = make_plan("collnet_direct", Op::AllReduce, iota(32), s, tuned(), sharp32());
  plan::TransferPlan net;
  for (const auto& t : sharp_only.transfers)
    if (t.label.find("sharp") != std::string::npos) net.add(t);
  for (auto& t : net.transfers) t.deps.clear();
  expect_rel(time_of("flow", net), 67108864.0 * 8 / (400e9 * 4096 / 4122 / 2), 1e-4, "SHARP passes, flow");
  EXPECT_LT(time_of("flow", net), 0.55 * t_ring);
}

// The byte pattern of the switches' reduction, per tier, on the flow engine:
// each NIC sends its shard S/8 once and receives the sum once (nic-leaf, both
// directions: 4 servers x 8 NICs x 2 x S/8 = 8 S), and each leaf sends one
// copy of the server's S up and receives one down, as an aggregation tree's
// leaf-to-spine edge does (leaf-spine: 4 leaves x 2 x S = 8 S). A ring
// all-reduce moves 2 (n-1)/n S_c per hop instead, 62/32 x as much on the
// NICs that carry it.
TEST(CollnetEngines, SwitchesCarryOneCopyPerTreeEdge) {
  const Bytes s = Bytes{1} << 30;
  const auto plan = make_plan("collnet_direct", Op::AllReduce, iota(32), s, tuned(), sharp32());
  plan::TransferPlan net;
  for (const auto& t : plan.transfers)
    if (t.label.find("sharp") != std::string::npos) net.add(t);
  for (auto& t : net.transfers) t.deps.clear();
  std::map<std::string, double> bytes;
  for (const auto& c : engine::make_backend("flow", sharp32(), ib())->run(net).by_class) bytes[c.link_class] = c.bytes;
  EXPECT_DOUBLE_EQ(bytes["nic-leaf"], 8.0 * static_cast<double>(s));
  EXPECT_DOUBLE_EQ(bytes["leaf-spine"], 8.0 * static_cast<double>(s));
  EXPECT_DOUBLE_EQ(bytes["nvlink"], 0.0);  // the heads reach their NICs over PCIe
}

// The tuner's choice at every size, timed by flow and analytical: within 5 %.
TEST(CollnetEngines, AnalyticalAgreesWithFlowAcrossSizes) {
  for (Bytes s : {Bytes{64} << 10, Bytes{1} << 20, Bytes{16} << 20, Bytes{256} << 20}) {
    const auto plan = make_plan("auto", Op::AllReduce, iota(32), s, tuned(), sharp32());
    const double f = time_of("flow", plan), a = time_of("analytical", plan);
    expect_rel(a, f, 0.05, fmt::format("{} at {} B", plan.algorithm, s));
    std::cout << fmt::format("[ figure   ] auto {:>10} B: {:<15} flow {:>9.2f} us, analytical {:>9.2f} us\n", s,
                             plan.algorithm, f * 1e6, a * 1e6);
  }
}

// The packet engine moves the same bytes packet by packet (the plans carry
// no slice pipeline: the coupled edges run as concurrent flows; the switch
// forwards, it does not reduce, so per-packet reduction and SHARP's own
// credit flow are not modelled): at 64 MiB within 10 % of the flow engine.
TEST(CollnetEngines, PacketFollowsFlow) {
  for (const char* algorithm : {"collnet_direct", "collnet_chain"}) {
    const auto plan = make_plan(algorithm, Op::AllReduce, iota(32), Bytes{64} << 20, tuned(), sharp32());
    const double f = time_of("flow", plan), p = time_of("packet", plan);
    expect_rel(p, f, 0.10, fmt::format("{} packet vs flow", algorithm));
    std::cout << fmt::format("[ figure   ] {} 64 MiB: packet {:.2f} us, flow {:.2f} us, ratio {:.3f}\n", algorithm,
                             p * 1e6, f * 1e6, p / f);
  }
}

}  // namespace
}  // namespace podnet::collective
