// Collective plans timed by the engines, against closed forms
// (docs/contributing/validation/collectives.md, figures c and e).
// It lives in the workload layer, the first above both collective and engine
// (which meet only at plan::TransferPlan and never include each other).
//
// Hardware defaults and hop latencies are derived in
// src/engine/engine_validation_test.cpp (which also checks the defaults):
//   B (400G NIC payload, rocev2) = 400e9 x 4096 / 4178 = 392.1494e9 b/s
//   NVLink hop GPU -> NVSwitch -> GPU: 2 x 500 ns = 1,000 ns (no NIC, no stack)
//   NIC hop, same leaf:               6,630 ns
//   NIC hop, leaf-spine-leaf:         8,130 ns
//   NIC hop, leaf-spine-super-spine-spine-leaf (rail_clos, across pods):
//     500 + 15 + 600 + 150 + 600 + 500 + 600 + 500 + 600 + 150 + 600 + 15 + 500
//     = 5,330 ns + 5,000 stack = 10,330 ns
//   PXN (the source GPU is on another rail than the destination): + the
//     NVLink detour to the relay GPU, 1,000 ns.
// A ring all-reduce over n GPUs on c channels, S bytes: each channel's ring
// carries ceil(2(n-1)/n x S/c) per hop at its rate r and pays 2(n-1) x its
// mean hop latency alpha:  t = 2(n-1) alpha + ceil(2(n-1)/n x S/c) x 8 / r.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "collective/collective.hpp"
#include "collective/ring_order.hpp"
#include "collective/test_topologies.hpp"
#include "engine/registry.hpp"
#include "topology/builders.hpp"

namespace podnet::collective {
namespace {

using namespace podnet::literals;
using testing::iota;

constexpr double kB = 400e9 * 4096.0 / 4178.0;  // NIC payload rate, b/s

// 2-tier rail-optimized leaf-spine: 128 servers of 8 GPUs, 2 aggregation
// groups of 64 servers (8 rail leaves each), 8 spines.
const topology::Topology& leafspine1k() {
  static const topology::Topology t =
      topology::build_with("fat_tree", {{"gpus", "1024"}, {"tiers", "2"}, {"rail_optimized", "true"}},
                           topology::default_hardware());
  return t;
}

// aipod-16k's shape at 4,096 GPUs: rail_clos with a super-spine, 4 groups per
// pod: 512 servers, 8 groups of 64 servers (512 GPUs), 2 pods of 256 servers.
const topology::Topology& railclos4k() {
  static const topology::Topology t = topology::build_with("rail_clos",
                                                           {{"gpus", "4096"}, {"tiers", "3"}, {"groups_per_pod", "4"}},
                                                           topology::default_hardware());
  return t;
}

engine::NetworkOptions net(const std::string& policy = "ecmp") {
  engine::NetworkOptions o;
  o.routing.policy = policy;
  o.routing.seed = 1;
  return o;
}

Options opts(int32_t channels, RingOrder order) {
  Options o;
  o.channels = channels;
  o.order = order;
  return o;
}

double time_of(const std::string& engine, const topology::Topology& t, const plan::TransferPlan& plan,
               const std::string& policy = "ecmp") {
  return engine::make_backend(engine, t, net(policy))->run(plan).makespan.seconds();
}

double ring_time(int64_t n, int32_t channels, Bytes s, double alpha_ns, double rate_bps) {
  const Bytes per_channel = s / channels;  // the sizes used divide evenly
  const auto hop = static_cast<double>((per_channel * 2 * (n - 1) + n - 1) / n);
  return 2.0 * static_cast<double>(n - 1) * alpha_ns * 1e-9 + hop * 8 / rate_bps;
}

void expect_rel(double got, double want, double tol, const std::string& what) {
  EXPECT_NEAR(got, want, tol * std::abs(want))
      << what << ": got " << got << ", want " << want << " (tolerance " << tol * 100 << " %)";
}

// ---------------------------------------------------------------- (c)
// All 8 GPUs of each of 128 servers, 8 channels, topology-aware rings.
// Each channel's ring: per server 7 NVLink hops and one NIC hop on one rail
// (entry and exit rails paired, ring_order.hpp), 126 of them on a leaf, 2
// across the groups:
//   alpha = (896 x 1,000 + 126 x 6,630 + 2 x 8,130) / 1,024 = 1,706.68 ns
// Rates: channel c's servers exit through NICs {h, h'} of its rail pair; over
// the 8 channels every NIC sends (and receives) for exactly one channel, so a
// channel gets r = B. A GPU sends over NVLink in the 7 channels where it is
// not the exit: 7 B = 343 GB/s < 450 GB/s, and PCIe carries one channel
// (49 < 64 GB/s): the NICs bound everything. busbw = 2(n-1)/n x S / t tends
// to 8 x B = 392.15 GB/s = min(NVLink 450 GB/s, 8 NICs x 49.02 GB/s).
//   t(S) = 2,046 x 1,706.68 ns + 2,046/1,024 x S/8 x 8 / B
//   16 MiB: 3,577.3 us, busbw   9.37 GB/s (latency 97.6 % of t)
//    1 GiB: 8,962.7 us, busbw 239.37 GB/s (39.0 %)
//   64 GiB: 353,625.6 us, busbw 388.28 GB/s (0.99 %): within 1 % of 392.15.
// "Large" is where 2(n-1) alpha is a small share: within 5 % needs the
// bandwidth term >= 19 x 3.49 ms, i.e. S >= 13 GB; within 1 %, S >= 68 GB.
TEST(EngineCrosscheck, AllGpusEightChannelsApproachEightNics) {
  const double alpha = (896 * 1000.0 + 126 * 6630.0 + 2 * 8130.0) / 1024;
  ASSERT_NEAR(alpha, 1706.68, 0.01);
  const Group g = iota(1024);
  // The ring each channel builds: hops classified as derived above.
  for (int32_t c = 0; c < 8; ++c) {
    const RingStats rs = ring_stats(ring_order(g, RingOrder::TopologyAware, c, leafspine1k()), leafspine1k());
    EXPECT_EQ(rs.intra_server, 896) << "channel " << c;
    EXPECT_EQ(rs.cross_server, 126) << "channel " << c;
    EXPECT_EQ(rs.cross_group, 2) << "channel " << c;
    EXPECT_EQ(rs.cross_rail_hops, 0) << "channel " << c;
  }
  double last_busbw = 0;
  for (Bytes s : {16_MiB, 1_GiB, 64_GiB}) {
    const auto plan = make_plan("ring", Op::AllReduce, g, s, opts(8, RingOrder::TopologyAware), leafspine1k());
    const double t = time_of("flow", leafspine1k(), plan);
    const double want = ring_time(1024, 8, s, alpha, kB);
    expect_rel(t, want, 0.01, fmt::format("flow, {} B", s));
    // (a) no contention between the channels: the engines agree.
    expect_rel(time_of("analytical", leafspine1k(), plan), t, 0.01, fmt::format("analytical vs flow, {} B", s));
    const double busbw = 2046.0 / 1024 * static_cast<double>(s) / t / 1e9;
    EXPECT_GT(busbw, last_busbw) << "busbw grows with S";
    last_busbw = busbw;
    std::cout << fmt::format("[ figure   ] 1,024 GPUs, 8 channels, {:>12} B: {:>12.1f} us, busbw {:7.2f} GB/s\n", s,
                             t * 1e6, busbw);
  }
  expect_rel(last_busbw, 8 * kB / 8 / 1e9, 0.02, "busbw at 64 GiB vs 8 x B");
  EXPECT_LT(last_busbw, 8 * kB / 8 / 1e9);

  // One channel on the same GPUs: one NIC per server carries the ring,
  // busbw -> B = 49.02 GB/s: t = 2,046 alpha + 2,046/1,024 x S x 8 / B.
  const auto one = make_plan("ring", Op::AllReduce, g, 64_GiB, opts(1, RingOrder::TopologyAware), leafspine1k());
  const double t1 = time_of("flow", leafspine1k(), one);
  expect_rel(t1, ring_time(1024, 1, 64_GiB, alpha, kB), 0.01, "one channel, 64 GiB");
  expect_rel(2046.0 / 1024 * static_cast<double>(64_GiB) / t1 / 1e9, kB / 8 / 1e9, 0.02, "one channel busbw vs B");
}

// ---------------------------------------------------------------- (e)
// Ring order on a rail-optimized fabric: all 4,096 GPUs of railclos4k
// (8 aggregation groups, 2 pods), 1 GiB, 1 channel, flow engine, ECMP.
//
// topology_aware: servers by (pod, group, server), each server's 8 GPUs in a
// row, every inter-server hop on one rail:
//   3,584 NVLink hops, 504 same-leaf, 6 across groups (3 per pod), 2 across
//   pods (255 -> 256 and the closing hop); 0 cross-rail.
//   alpha = (3,584 x 1,000 + 504 x 6,630 + 6 x 8,130 + 2 x 10,330) / 4,096
//         = 1,707.754 ns
// naive, "local index first" (GPU 0 of servers 0..511, then GPU 1 of servers
// 0..511, ...): every hop crosses servers. Per rail block: 504 same-leaf
// hops, 6 across groups, 1 across pods (server 255 -> 256); then the block
// transition (server 511, GPU r) -> (server 0, GPU r+1) crosses pods and
// rails (PXN: + 1,000 ns). x 8 blocks:
//   4,032 same-leaf, 48 across groups, 16 across pods of which 8 cross-rail.
//   alpha = (4,032 x 6,630 + 48 x 8,130 + 8 x 10,330 + 8 x 11,330) / 4,096
//         = 6,663.984 ns
// Both orders use each NIC once per direction (a PXN relay's NIC carries only
// the relayed hop, its own GPU leaves through the next rail's relay), and
// each leaf, spine and super-spine port carries at most one hop, so both run
// at r = B and differ only in latency:
//   hop bytes = 8,190/4,096 x 2^30 = 2,146,959,360 B -> 43,798.8 us at B
//   t(topology_aware) = 8,190 x 1,707.754 ns + 43,798.8 us = 57,785.3 us
//   t(naive)          = 8,190 x 6,663.984 ns + 43,798.8 us = 98,376.8 us
//   difference = 8,190 x 4,956.23 ns = 40,591.5 us.
TEST(EngineCrosscheck, TopologyAwareRingBeatsNaiveLocalIndexFirstOrder) {
  const auto& t = railclos4k();
  ASSERT_EQ(t.gpus.size(), 4096u);
  ASSERT_EQ(t.groups, 8);
  ASSERT_EQ(t.pods, 2);
  const Group all = iota(4096);
  const Group aware = ring_order(all, RingOrder::TopologyAware, 0, t);
  Group local_first = all;
  std::stable_sort(local_first.begin(), local_first.end(),
                   [&](int32_t a, int32_t b) { return t.nodes[t.gpus[a]].local < t.nodes[t.gpus[b]].local; });

  const RingStats ra = ring_stats(aware, t);
  EXPECT_EQ(ra.intra_server, 3584);
  EXPECT_EQ(ra.cross_server, 504);
  EXPECT_EQ(ra.cross_group, 6);
  EXPECT_EQ(ra.cross_pod, 2);
  EXPECT_EQ(ra.cross_rail_hops, 0);
  const RingStats rn = ring_stats(local_first, t);
  EXPECT_EQ(rn.intra_server, 0);
  EXPECT_EQ(rn.cross_server, 4032);
  EXPECT_EQ(rn.cross_group, 48);
  EXPECT_EQ(rn.cross_pod, 16);
  EXPECT_EQ(rn.cross_rail_hops, 8);
  // Fewer cross-switch hops: 512 NIC hops against 4,096.
  EXPECT_LT(ra.cross_server + ra.cross_group + ra.cross_pod, rn.cross_server + rn.cross_group + rn.cross_pod);

  const Bytes s = 1_GiB;
  const auto p_aware = make_plan("ring", Op::AllReduce, all, s, opts(1, RingOrder::TopologyAware), t);
  const auto p_naive = make_plan("ring", Op::AllReduce, local_first, s, opts(1, RingOrder::Naive), t);
  ASSERT_EQ(p_naive.transfers[0].ranks, local_first);
  const double a_alpha = (3584 * 1000.0 + 504 * 6630.0 + 6 * 8130.0 + 2 * 10330.0) / 4096;
  const double n_alpha = (4032 * 6630.0 + 48 * 8130.0 + 8 * 10330.0 + 8 * 11330.0) / 4096;
  const double ta = time_of("flow", t, p_aware), tn = time_of("flow", t, p_naive);
  expect_rel(ta, ring_time(4096, 1, s, a_alpha, kB), 0.01, "topology-aware");
  expect_rel(tn, ring_time(4096, 1, s, n_alpha, kB), 0.01, "naive, local index first");
  EXPECT_LE(ta, tn);
  expect_rel(tn - ta, 8190 * (n_alpha - a_alpha) * 1e-9, 0.01, "the difference is latency only");
  // No contention inside a single ring on a non-blocking fabric: engines agree.
  expect_rel(time_of("analytical", t, p_aware), ta, 0.01, "analytical vs flow, topology-aware");
  expect_rel(time_of("analytical", t, p_naive), tn, 0.01, "analytical vs flow, naive");
  std::cout << fmt::format("[ figure   ] 4,096 GPUs, 1 GiB, 1 channel: topology_aware {:.1f} us, local-index-first "
                           "{:.1f} us\n",
                           ta * 1e6, tn * 1e6);
}

// A shuffled order (Fisher-Yates driven by std::mt19937_64, whose output is
// fixed by the standard; index = draw mod (i + 1)) crosses rails on most hops.
// PXN sends hop a -> b through the NIC of a's server on b's rail, so that
// NIC's send direction carries one ring hop per such a; with M the largest
// number of hops sharing one NIC, the ring moves at most at B / M:
//   t >= hop bytes x 8 x M / B.
// Each GPU receives once, so receive directions are not the bound. M >= 2
// as soon as two GPUs of one server send to the same rail of other servers
// (8 draws over 8 rails: certain in practice).
TEST(EngineCrosscheck, ShuffledOrderIsBoundBySharedNics) {
  const auto& t = railclos4k();
  Group order = iota(4096);
  std::mt19937_64 gen(12345);
  for (size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[gen() % (i + 1)]);
  std::map<std::pair<int32_t, int32_t>, int32_t> nic_tx;
  int32_t m = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& a = t.nodes[t.gpus[order[i]]];
    const auto& b = t.nodes[t.gpus[order[(i + 1) % order.size()]]];
    if (a.server != b.server) m = std::max(m, ++nic_tx[{a.server, b.rail}]);
  }
  ASSERT_GE(m, 2);
  const RingStats rs = ring_stats(order, t);
  EXPECT_GT(rs.cross_rail_hops, 3000);  // 7/8 of 4,095 inter-server hops expected

  const Bytes s = 1_GiB;
  const auto plan = make_plan("ring", Op::AllReduce, order, s, opts(1, RingOrder::Naive), t);
  const auto aware = make_plan("ring", Op::AllReduce, iota(4096), s, opts(1, RingOrder::TopologyAware), t);
  const double ts = time_of("flow", t, plan), ta = time_of("flow", t, aware);
  const double hop_bytes = 8190.0 / 4096 * static_cast<double>(s);
  EXPECT_GE(ts, hop_bytes * 8 * m / kB);
  EXPECT_GT(ts, 1.5 * ta);
  // One transfer: the analytical engine's min over links of capacity /
  // (hops on the link) is the flow engine's answer too.
  expect_rel(time_of("analytical", t, plan), ts, 0.01, "analytical vs flow, shuffled");
  std::cout << fmt::format("[ figure   ] 4,096 GPUs, 1 GiB, shuffled order: {:.1f} us ({} cross-rail hops, up to {} "
                           "hops on one NIC) vs topology_aware {:.1f} us\n",
                           ts * 1e6, rs.cross_rail_hops, m, ta * 1e6);
}

// 8 channels on the same fabric, 8 GiB. topology_aware: each channel as in
// the 1-channel case (same hop classes, its own rail pair), r = B:
//   t = 8,190 x 1,707.754 ns + 43,798.8 us = 57,785.3 us, busbw 297.2 GB/s.
// naive (the group's order 0..4095, the same ring on every channel): per
// server GPU 0 -> 1 -> ... -> 7 over NVLink, then GPU 7 -> GPU 0 of the next
// server, which crosses rails: PXN through GPU 0's NIC 0. Every channel uses
// the same NIC 0, so 8 rings share it: r = B / 8.
//   alpha = (3,584 x 1,000 + 504 x 7,630 + 6 x 9,130 + 2 x 11,330) / 4,096
//         = 1,832.754 ns
//   t = 8,190 x 1,832.754 ns + 8 x 43,798.8 us = 365,400.7 us, busbw 47.0 GB/s.
// The analytical engine shares the NIC among the channels of the one
// collective as well, so it agrees with the flow engine on both orders.
TEST(EngineCrosscheck, ChannelsOnlyHelpWhenTheyUseDifferentNics) {
  const auto& t = railclos4k();
  const Group all = iota(4096);
  const Bytes s = 8_GiB;
  const auto aware = make_plan("ring", Op::AllReduce, all, s, opts(8, RingOrder::TopologyAware), t);
  const auto naive = make_plan("ring", Op::AllReduce, all, s, opts(8, RingOrder::Naive), t);
  const double a_alpha = (3584 * 1000.0 + 504 * 6630.0 + 6 * 8130.0 + 2 * 10330.0) / 4096;
  const double n_alpha = (3584 * 1000.0 + 504 * 7630.0 + 6 * 9130.0 + 2 * 11330.0) / 4096;
  const double ta = time_of("flow", t, aware), tn = time_of("flow", t, naive);
  expect_rel(ta, ring_time(4096, 8, s, a_alpha, kB), 0.01, "topology-aware, 8 channels");
  expect_rel(tn, ring_time(4096, 8, s, n_alpha, kB / 8), 0.01, "naive, 8 channels on one NIC");
  // The 8 channels of one collective share the one NIC on the analytical
  // engine too (analytical_backend.hpp).
  const double an = time_of("analytical", t, naive);
  expect_rel(an, tn, 0.05, "analytical vs flow, naive (channels share a NIC)");
  expect_rel(time_of("analytical", t, aware), ta, 0.01, "analytical vs flow, topology-aware (no contention)");
  std::cout << fmt::format("[ figure   ] 4,096 GPUs, 8 GiB, 8 channels: topology_aware {:.1f} us (busbw {:.1f} GB/s), "
                           "naive {:.1f} us (busbw {:.1f} GB/s; analytical {:.1f} us)\n",
                           ta * 1e6, 8190.0 / 4096 * static_cast<double>(s) / ta / 1e9, tn * 1e6,
                           8190.0 / 4096 * static_cast<double>(s) / tn / 1e9, an * 1e6);
}

// ---------------------------------------------------------------- (h)
// One collective alone: the analytical engine shares each link among the
// concurrent transfers of the collective (analytical_backend.hpp), so it
// agrees with the flow engine within 5 % on multi-channel rings and trees,
// all-to-alls and hierarchical / halving-doubling plans, inside a server
// (NVLink), across leaves (NICs) and on a torus (chip-to-chip links).
// Two cases checked by hand:
// - 8 GPUs of one server, ring, 8 channels, 1 GiB: every GPU's NVLink up to
//   the NVSwitch carries one hop of each of the 8 rings (c = 8 in total), so
//   each ring runs at C / 8, C = 450 GB/s x 0.824 = 370.8 GB/s (link_classes.hpp):
//   t = 14 x 1,000 ns + 14/8 x 1 GiB / 8 x 8 / (C / 8 x 8) -> busbw
//   = 14/8 x S / t ~ 370.8 GB/s (before sharing: 8 x 370.8 = 2,966 GB/s).
// - 8 GPUs of one server, all-to-all, S = 64 MiB: each GPU sends 7 chunks of
//   S/8 over its one NVLink up, t = 7 x S/8 x 8 / C + 1,000 ns.
TEST(EngineCrosscheck, AnalyticalAgreesWithFlowOnOneCollective) {
  static const topology::Topology rail64 = testing::rail_clos(64);
  static const topology::Topology torus =
      topology::build_with("torus", {{"dims", "[4, 4, 4]"}}, topology::default_hardware());
  const double nvlink = 450e9 * 8 * 0.824;  // b/s per GPU per direction
  struct Case {
    const char* what;
    const topology::Topology* topo;
    const char* algorithm;
    Op op;
    Group group;
    Bytes bytes;
    Options options;
    double hand;  // hand-derived time (s), 0 = none
  };
  const std::vector<Case> cases = {
      {"8 GPUs (NVLink), ring all-reduce, 8 channels", &testing::rail32(), "ring", Op::AllReduce, iota(8), 1_GiB,
       opts(8, RingOrder::TopologyAware),
       14 * 1000e-9 + static_cast<double>((1_GiB / 8 * 14 + 7) / 8) * 8 / (nvlink / 8)},
      {"8 GPUs (NVLink), all-to-all", &testing::rail32(), "pairwise", Op::AllToAll, iota(8), 64_MiB,
       opts(1, RingOrder::TopologyAware), 1000e-9 + 7.0 * static_cast<double>(64_MiB / 8) * 8 / nvlink},
      {"32 GPUs, ring all-reduce, 4 channels, naive order", &testing::rail32(), "ring", Op::AllReduce, iota(32),
       256_MiB, opts(4, RingOrder::Naive), 0},
      {"32 GPUs, tree all-reduce, 2 channels", &testing::rail32(), "tree", Op::AllReduce, iota(32), 256_MiB,
       opts(2, RingOrder::TopologyAware), 0},
      {"32 GPUs, hierarchical all-reduce", &testing::rail32(), "hierarchical", Op::AllReduce, iota(32), 256_MiB,
       opts(1, RingOrder::TopologyAware), 0},
      {"32 GPUs, halving-doubling all-reduce", &testing::rail32(), "halving_doubling", Op::AllReduce, iota(32), 256_MiB,
       opts(1, RingOrder::TopologyAware), 0},
      {"64 GPUs, all-to-all", &rail64, "pairwise", Op::AllToAll, iota(64), 64_MiB, opts(1, RingOrder::TopologyAware),
       0},
      // The snake order (ring_order.hpp): every hop one 1 m link (5 ns + the 100 ns hop latency); channel 0
      // walks it forwards, channel 1 backwards, so each direction of a link carries one channel's S/2:
      // 2 (n - 1) = 126 steps, 126/64 x S/2 = 126/128 S per link direction at 400 Gb/s (chip-to-chip: no
      // header). Before the snake, hops shared links: 5,308.8 us; with both channels one way, 2,655.6 us.
      {"64-chip torus 4x4x4, ring all-reduce, 2 channels", &torus, "ring", Op::AllReduce, iota(64), 64_MiB,
       opts(2, RingOrder::TopologyAware), 126 * 105e-9 + 126.0 / 128 * static_cast<double>(64_MiB) * 8 / 400e9},
      {"64-chip torus 4x4x4, all-to-all", &torus, "pairwise", Op::AllToAll, iota(64), 16_MiB,
       opts(1, RingOrder::TopologyAware), 0},
  };
  for (const Case& c : cases) {
    const auto plan = make_plan(c.algorithm, c.op, c.group, c.bytes, c.options, *c.topo);
    const double f = time_of("flow", *c.topo, plan);
    const double a = time_of("analytical", *c.topo, plan);
    if (c.hand > 0) expect_rel(f, c.hand, 0.01, fmt::format("{}: flow vs hand", c.what));
    expect_rel(a, f, 0.05, fmt::format("{}: analytical vs flow", c.what));
    std::cout << fmt::format("[ figure   ] {:<52} flow {:>10.1f} us, analytical {:>10.1f} us, ratio {:.3f}\n", c.what,
                             f * 1e6, a * 1e6, a / f);
  }
}

// ---------------------------------------------------------------- NVLS pipeline fill
// One server, auto (nvls / simple): NVLS's pipeline fill (collective/nvls.hpp) is transfer 1 of the
// plan, a Compute delay after NVLS's 13 us launch on which the data transfers wait. By hand, with
// the cost of 2.5 us per stage time (L loops: L + 2 of them):
//   2 MiB:   16 KiB chunks, loop 16 x 8 x 16 KiB = 2 MiB, 1 loop:
//            fill 2 x 2,097,152 B / 272 GB/s + 3 x 2.5 = 15.42 + 7.5 = 22.92 us;
//   128 MiB: 64 KiB chunks, loop 8 MiB, 16 loops:
//            fill 2 x 8,388,608 B / 272 GB/s + 18 x 2.5 = 61.68 + 45 = 106.68 us.
// The same plan with a zero fill is exactly that much faster on every engine.
TEST(EngineCrosscheck, NvlsFillIsPaidOnEveryEngine) {
  Options o;
  o.channels = kAutoChannels;
  o.tuner = true;
  struct Case {
    Bytes bytes;
    Bytes loop;
    int loops;
    std::vector<std::string> engines;
  };
  for (const Case& c :
       {Case{2_MiB, 2_MiB, 1, {"analytical", "flow", "packet"}}, Case{128_MiB, 8_MiB, 16, {"analytical", "flow"}}}) {
    const auto plan = make_plan("auto", Op::AllReduce, iota(8), c.bytes, o, testing::rail32());
    ASSERT_EQ(plan.algorithm, "nvls");
    ASSERT_EQ(plan.transfers[1].kind, plan::TransferKind::Compute);
    auto nofill = plan;
    nofill.transfers[1].duration = Time();
    const double fill = 2.0 * static_cast<double>(c.loop) / 272e9 + (c.loops + 2) * 2.5e-6;  // s
    for (const std::string& e : c.engines) {
      const double with = time_of(e, testing::rail32(), plan);
      const double without = time_of(e, testing::rail32(), nofill);
      EXPECT_NEAR(with - without, fill, 1e-9) << e << " at " << c.bytes << " B";
      std::cout << fmt::format("[ figure   ] nvls {:>9} B on {:<10} {:>9.2f} us, without the fill {:>9.2f} us\n",
                               c.bytes, e, with * 1e6, without * 1e6);
    }
  }
}

// ---------------------------------------------------------------- NCCL's pipeline
// With NCCL's model (tuner on) a ring carries its slice pipeline
// (nccl/pipeline.hpp), which the packet engine runs step by step and the flow
// engine ignores (one coupled rate). 16 GPUs = 2 servers, 16 channels,
// simple ring: at 64 MiB a channel carries 4 MiB, one loop of 30 steps with
// chunks of 4 MiB / 16 = 256 KiB in 2 slices (60 slices a hop, 128 KiB
// each): the pipeline fills in one slice time per hop and the ring runs at
// its slowest hop's rate, as the flow engine's coupled ring: within 10 %.
// Small sizes: at 64 KiB (2 channels: NCCL keeps 64 KiB / 32 KiB of them
// for Simple) every one of the 30 steps waits for the previous rank's
// slice, a physical hop the packet engine takes back from NCCL's latency
// (which holds it), so it stays within 5 % of the flow engine; its busbw
// rises with the size.
TEST(EngineCrosscheck, PacketPipelineFollowsFlowAtLargeSizes) {
  Options o;
  o.channels = kAutoChannels;
  o.tuner = true;
  o.selection = parse_algorithms("ring", o.selection, "collective.algorithms");
  o.selection = parse_protocols("simple", o.selection, "collective.protocols");
  for (const topology::Topology* topo : {&leafspine1k(), &railclos4k()}) {
    const auto plan = make_plan("auto", Op::AllReduce, iota(16), 64_MiB, o, *topo);
    ASSERT_EQ(plan.channels, 16);
    ASSERT_EQ(plan.transfers[1].pipeline, (plan::Pipeline{60, 4, 2, 60}));
    const double flow = time_of("flow", *topo, plan), packet = time_of("packet", *topo, plan);
    expect_rel(packet, flow, 0.10, fmt::format("packet vs flow, 64 MiB, {} GPUs", topo->gpus.size()));
  }
  double previous = 0;
  for (Bytes s : {64_KiB, 1_MiB, 16_MiB}) {
    const auto plan = make_plan("auto", Op::AllReduce, iota(16), s, o, leafspine1k());
    const double packet = time_of("packet", leafspine1k(), plan);
    const double busbw = static_cast<double>(s) * 2 * 15 / 16 / packet;
    EXPECT_GT(busbw, previous) << s << " B";
    previous = busbw;
    if (s == 64_KiB) expect_rel(packet, time_of("flow", leafspine1k(), plan), 0.05, "packet vs flow, 64 KiB");
  }
}

// Small messages on the packet engine: NCCL's latency term (the plan's
// leading delay) already holds every step's hop, and the packets take their
// hops physically, so the engine shortens the delay by the hops' latency
// that shows (plan::Transfer::holds_hop_latency, packet_backend.cpp) and a
// small collective costs NCCL's latency once, as on the flow engine. One
// server, ring LL: 15 us (NCCL: 6.8 base + 14 steps x 0.6); before, the 14
// steps' NVLink hops (1 us each) were paid on top at 8 KiB (29.1 us), and
// at 8 B none were, as 8 B over 24 channels left no chain of steps (16.0
// us). At 256 KiB and 1 MiB (8 and 24 channels) the ring's bytes cover its
// hops, so less is taken back: crediting the whole chain made 1 MiB 16.0 us
// against the flow engine's 27.6. Four servers, tree LL: NCCL's 35.2 us,
// the tree's depth up and down taken back.
TEST(EngineCrosscheck, PacketSmallMessagesPayNcclsLatencyOnce) {
  Options o;
  o.channels = kAutoChannels;
  o.tuner = true;
  struct Case {
    const char* algo;
    int32_t gpus;
    Bytes bytes;
  };
  for (const Case& c : {Case{"ring", 8, 8}, Case{"ring", 8, 8_KiB}, Case{"ring", 8, 64_KiB}, Case{"ring", 8, 256_KiB},
                        Case{"ring", 8, 1_MiB}, Case{"tree", 32, 8}, Case{"tree", 32, 4_KiB}}) {
    const auto plan = make_plan(c.algo, Op::AllReduce, iota(c.gpus), c.bytes, o, testing::rail32());
    ASSERT_EQ(plan.protocol, "ll") << c.algo << " " << c.bytes;
    const double flow = time_of("flow", testing::rail32(), plan), packet = time_of("packet", testing::rail32(), plan);
    const std::string what = fmt::format("{} {} GPUs {} B", c.algo, c.gpus, c.bytes);
    expect_rel(packet, flow, 0.05, "packet vs flow, " + what);
    std::cout << fmt::format("[ figure   ] {:<22} flow {:>7.2f} us, packet {:>7.2f} us\n", what, flow * 1e6,
                             packet * 1e6);
  }
  // Several QPs a connection: each QP's stream carries bytes / qps, and the pipeline keeps a byte a
  // slice on it, so the chain of steps holds (with slices fitted to the whole hop, a QP sent several
  // slices at once and 8 QPs ran 16 % below NCCL's latency). 32 GPUs (4 servers), ring LL, 512 B.
  Options q = o;
  q.qps = 8;
  const auto plan = make_plan("ring", Op::AllReduce, iota(32), 512, q, testing::rail32());
  ASSERT_EQ(plan.protocol, "ll");
  expect_rel(time_of("packet", testing::rail32(), plan), time_of("flow", testing::rail32(), plan), 0.05,
             "packet vs flow, ring 32 GPUs 512 B, 8 QPs");
}

// PAT with its steps coupled (Options::coupled_steps, the training planner's form): 128 GPUs, one per
// server of leafspine1k (GPU 0 of every server, all on rail 0: the rail leaf of each 64-server group,
// and the spines between the groups), all-gather of S = 256 MiB on 4 channels, plain (no NCCL latency).
// Per channel S/4; step p moves b_p = S/4 x pat_blocks(128, p)/128 per position, and every NIC sends and
// receives one edge of each of the 4 channels at once, so an edge runs at B/4 where nothing collides:
//   t = sum_p b_p x 8 / (B/4) + 7 hop latencies = S x 127/128 x 8 / B + 7 alpha
//     = 268,435,456 x 127/128 x 8 / 392.1494e9 = 5,433.4 us (+ 7 x 6.63-8.13 us = 46-57 us)
// The coupled plan is 7 transfers of 4 lanes of 128 edges where the per-position plan has 3,584.
TEST(EngineCrosscheck, PatCoupledStepsTimeAsOneTransferPerPosition) {
  Group g;
  for (int32_t i = 0; i < 1024; i += 8) g.push_back(i);
  const Bytes s = Bytes{256} << 20;
  Options o = opts(4, RingOrder::Naive);
  const auto per_position = make_plan("pat", Op::AllGather, g, s, o, leafspine1k());
  o.coupled_steps = true;
  const auto coupled = make_plan("pat", Op::AllGather, g, s, o, leafspine1k());
  ASSERT_EQ(per_position.transfers.size(), 3584u);
  ASSERT_EQ(coupled.transfers.size(), 7u);
  EXPECT_EQ(coupled.channels, 4);
  // The same (channel, src, dst, bytes) sends, all-gather and reduce-scatter, and a step waits for the one before.
  using Send = std::tuple<int32_t, int32_t, int32_t, Bytes>;
  for (const Op op : {Op::AllGather, Op::ReduceScatter}) {
    Options po = opts(4, RingOrder::Naive);
    const auto pp = make_plan("pat", op, g, s, po, leafspine1k());
    po.coupled_steps = true;
    const auto c = make_plan("pat", op, g, s, po, leafspine1k());
    std::multiset<Send> want, got;
    for (const auto& t : pp.transfers) want.insert({t.channel, t.ranks[0], t.ranks[1], t.bytes});
    for (size_t k = 0; k < c.transfers.size(); ++k) {
      const auto& t = c.transfers[k];
      EXPECT_EQ(t.kind, plan::TransferKind::Coupled);
      EXPECT_EQ(t.edges.size(), 4u * 128);
      EXPECT_EQ(t.lanes, 4);
      EXPECT_EQ(t.ranks, g);  // every GPU sends at every step
      // Lane c (edges 128 c to 128 c + 127) is channel c's.
      for (size_t e = 0; e < t.edges.size(); ++e)
        got.insert({t.hop_channel(e), t.edges[e].first, t.edges[e].second, t.bytes});
      // 7 steps in order: the first depends on nothing, the others on the step before.
      EXPECT_EQ(t.deps, k == 0 ? std::vector<int32_t>{} : std::vector<int32_t>{static_cast<int32_t>(k - 1)});
    }
    EXPECT_EQ(got, want) << op_name(op);
  }
  const double hand = 268435456.0 * 127 / 128 * 8 / kB;
  // Without collisions (adaptive routing) the engines give the hand figure both ways.
  for (const char* engine : {"flow", "analytical"}) {
    const double a = time_of(engine, leafspine1k(), per_position, "adaptive");
    const double b = time_of(engine, leafspine1k(), coupled, "adaptive");
    expect_rel(a, hand + 50e-6, 0.005, fmt::format("{} per position, adaptive", engine));
    expect_rel(b, a, 0.002, fmt::format("{} coupled vs per position, adaptive", engine));
    std::cout << fmt::format("[ figure ] pat all-gather 256 MiB, 128 x 1, 4 channels, adaptive: {} per position {:.1f} "
                             "us, coupled {:.1f} us; hand {:.1f} us + 7 hop latencies\n",
                             engine, a * 1e6, b * 1e6, hand * 1e6);
  }
  // Under ECMP the distance-64 step and the wrapping edges of the others collide on the spines. Per
  // position, a position starts its next step when its own input arrived, where coupled it waits for the
  // whole previous step: on the analytical engine (sharing per level) that wait is all the difference, so
  // coupled is slower, by the spread of one step's edges. On the flow engine the early starts also send
  // beside the late edges of the step before, on the same spines, and that contention costs more than the
  // barrier saves: coupled is faster there, and nearer the analytical engine
  // (docs/contributing/validation/nccl-algorithms.md, "PAT in training plans").
  for (const Bytes size : {Bytes{32} << 20, s}) {
    Options p = opts(4, RingOrder::Naive);
    const auto pp = make_plan("pat", Op::AllGather, g, size, p, leafspine1k());
    p.coupled_steps = true;
    const auto c = make_plan("pat", Op::AllGather, g, size, p, leafspine1k());
    const double an_pp = time_of("analytical", leafspine1k(), pp);
    const double an_c = time_of("analytical", leafspine1k(), c);
    const double fl_pp = time_of("flow", leafspine1k(), pp);
    const double fl_c = time_of("flow", leafspine1k(), c);
    std::cout << fmt::format("[ figure ] pat all-gather {} MiB, 128 x 1, 4 channels, ecmp: flow per position {:.1f} "
                             "us, coupled {:.1f} us ({:.4f}); analytical {:.1f}, {:.1f} us ({:.4f}); coupled "
                             "analytical / flow {:.4f}\n",
                             size >> 20, fl_pp * 1e6, fl_c * 1e6, fl_c / fl_pp, an_pp * 1e6, an_c * 1e6, an_c / an_pp,
                             an_c / fl_c);
    EXPECT_GE(an_c, an_pp * 0.999);
    EXPECT_LE(an_c, an_pp * 1.05);
    EXPECT_LE(fl_c, fl_pp * 1.001);
    EXPECT_GE(fl_c, fl_pp * 0.9);
    expect_rel(an_c, fl_c, 0.05, "coupled: analytical vs flow");
  }
}

}  // namespace
}  // namespace podnet::collective
