// CollNet all-gather and reduce-scatter (collnet_direct; collective/collnet.hpp)
// timed by the analytical and flow engines against hand-derived times
// (docs/contributing/validation/nccl-algorithms.md, "CollNet / SHARP"). In the study layer, which sits
// above both collective and engine (they meet only at plan::TransferPlan).
//
// Fabric (collective/test_topologies.hpp sharp32): 4 servers x 8 GPUs,
// NVSwitch (450 GB/s per GPU per direction), 8 x 400G NICs per server (one
// per GPU), one server per radix-16 leaf, 8 uplinks a leaf, 2 spines;
// switches with SHARP; transport infiniband; routing spray (no ECMP
// collision). Payload rates (engine/link_classes.hpp):
//   NVLink  C = 450e9 x 8 x 0.824     = 2,966.4e9 b/s per direction
//   NIC/IB  B = 400e9 x 4096 / 4122   =   397.477e9 b/s
//   PCIe      64e9 x 8 x 0.894        =   457.73e9 b/s (> B)
// The tuner is on: the plan starts with NCCL's latency (44 us for
// collnet_direct on these servers, nccl/tuner.hpp section 5) and its data
// transfers pay no per-hop latency of their own.
//
// collnet_direct all-gather, S = 1 GiB over 32 ranks, 16 channels: block
// b = 2^30 / 32 = 2^25.
//   Inside a server (one coupled rate): every GPU is a head and sends its
//   rail (4 x b = 2^27) to the 7 others: its NVLink up carries 7 edges and
//   its NVLink down 7 (one from each other head): r = C / 7,
//     t_intra = 2^27 x 8 x 7 / 2,966.4e9 = 7,516,192,768 / 2,966.4e9 = 2,533.77 us.
//   Through the switches: per rail, 2 channel rings of the 4 servers' GPUs,
//   each edge 3 x 2^25 / 2 = 50,331,648 B; each NIC carries both channels
//   each way, each leaf's 16 ring edges out are sprayed over its 8 uplinks
//   (2 a link): r = B / 2,
//     t_sharp = 50,331,648 x 8 x 2 / 397.477e9 = 2,026.04 us.
//   Concurrent: t = 44 + max(2,533.77, 2,026.04) = 2,577.77 us (NVLink-bound;
//   busbw = S / t x 31/32 = 403.5 GB/s).
// Reduce-scatter: the same loads with every intra edge reversed (GPU ->
// head), so the same time.
// At 64 MiB (S / 16) both terms are 16 x smaller: 44 + 2,533.77 / 16 =
// 44 + 158.36 = 202.36 us, and `auto` picks collnet_direct there (NCCL's
// model: 44 + 2^26 / 345,600 = 238.2 us against the ring's 145.6 + 2^26 /
// 396,387 = 314.9 us; collective/collnet_test.cpp).
//
// The switches' side bounds the time with 2 GPUs per server (GPUs 0 and 1
// of each, NICs 0 and 1; NVLink is then lightly loaded): ranks n = 8, b =
// S/8, 2 channels (one per head, named so), latency 2 (3.7 + 1 x 0.4) + 31
// = 39.2 us. S = 1 GiB:
//   intra: each GPU sends its rail (4 b = 2^29) to the other: r = C,
//     t_intra = 2^29 x 8 / 2,966.4e9 = 1,447.87 us;
//   switches: per rail one ring of 4 GPUs, each edge the other servers'
//     3 b = 3 x 2^27 B; one flow per NIC each way: r = B,
//     t_sharp = 3 x 2^27 x 8 / 397.477e9 = 8,104.18 us;
//   t = 39.2 + 8,104.18 = 8,143.38 us: each NIC carries (nodes - 1)/n S,
//   the blocks of the other servers' GPUs on its rail, once.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "collective/collective.hpp"
#include "collective/test_topologies.hpp"
#include "engine/registry.hpp"
#include "engine/test_util.hpp"

namespace podnet::study {
namespace {

using collective::Op;
using collective::testing::iota;
using collective::testing::sharp32;

engine::NetworkOptions ib() { return engine::testing::infiniband_spray(); }

collective::Options tuned() {
  collective::Options o;
  o.tuner = true;
  o.channels = collective::kAutoChannels;  // 16 on these servers
  return o;
}

TEST(CollnetGather, DirectAllGatherAndReduceScatterOnBothEngines) {
  constexpr double kC = 450e9 * 8 * 0.824, kB = 400e9 * 4096.0 / 4122.0;
  const double intra = double(Bytes{1} << 27) * 8 * 7 / kC;  // 2,533.77 us
  const double sharp = 50331648.0 * 8 * 2 / kB;              // 2,026.04 us
  ASSERT_NEAR(intra * 1e6, 2533.77, 0.01);
  ASSERT_NEAR(sharp * 1e6, 2026.04, 0.01);
  struct Case {
    const char* algorithm;
    Bytes bytes;
    double hand;  // s
  };
  for (Op op : {Op::AllGather, Op::ReduceScatter})
    for (const Case& c : {Case{"collnet_direct", Bytes{1} << 30, 44e-6 + std::max(intra, sharp)},
                          Case{"auto", Bytes{64} << 20, 44e-6 + std::max(intra, sharp) / 16}}) {
      const auto plan = collective::make_plan(c.algorithm, op, iota(32), c.bytes, tuned(), sharp32());
      ASSERT_EQ(plan.algorithm, "collnet_direct") << c.algorithm;
      ASSERT_EQ(plan.channels, 16);
      for (const char* engine : {"flow", "analytical"}) {
        const double t = engine::make_backend(engine, sharp32(), ib())->run(plan).makespan.seconds();
        EXPECT_NEAR(t, c.hand, 1e-3 * c.hand) << collective::op_name(op) << " " << c.bytes << " on " << engine;
        std::cout << fmt::format("[ figure   ] collnet_direct {:<13} {:>13} B  {:<10} {:>9.2f} us (hand {:.2f})\n",
                                 collective::op_name(op), c.bytes, engine, t * 1e6, c.hand * 1e6);
      }
    }
}

TEST(CollnetGather, SwitchSideBoundsTwoGpusPerServer) {
  constexpr double kB = 400e9 * 4096.0 / 4122.0;
  const double hand = 39.2e-6 + 3.0 * double(Bytes{1} << 27) * 8 / kB;  // 8,143.38 us
  ASSERT_NEAR(hand * 1e6, 8143.38, 0.01);
  collective::Options o = tuned();
  o.channels = 2;
  for (Op op : {Op::AllGather, Op::ReduceScatter}) {
    const auto plan =
        collective::make_plan("collnet_direct", op, {0, 1, 8, 9, 16, 17, 24, 25}, Bytes{1} << 30, o, sharp32());
    for (const char* engine : {"flow", "analytical"}) {
      const double t = engine::make_backend(engine, sharp32(), ib())->run(plan).makespan.seconds();
      EXPECT_NEAR(t, hand, 1e-3 * hand) << collective::op_name(op) << " on " << engine;
      std::cout << fmt::format("[ figure   ] collnet_direct {:<13} 2 GPUs x 4 servers, 1 GiB  {:<10} {:>9.2f} us "
                               "(hand {:.2f})\n",
                               collective::op_name(op), engine, t * 1e6, hand * 1e6);
    }
  }
}

}  // namespace
}  // namespace podnet::study
