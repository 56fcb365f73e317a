#include "collective/collnet.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "collective/test_topologies.hpp"
#include "core/error.hpp"
#include "topology/builders.hpp"

namespace podnet::collective {
namespace {

using testing::iota;
using testing::sharp32;

// sharp32: 4 servers x 8 H100-class GPUs (NVSwitch, 450 GB/s), 8 x 400G NICs
// each, on a 2-tier InfiniBand fat-tree whose switches reduce (SHARP).
// NCCL's view (nccl/tuner.hpp): NVLink 370.8 GB/s, NIC 50 GB/s; ring graph
// 8 x 48 GB/s, kernels on 16 channels.

// The same SHARP fabric with 4 NICs per server: two GPUs share each NIC.
const topology::Topology& sharp_shared_nics() {
  static const topology::Topology t = [] {
    topology::Hardware hw = topology::default_hardware();
    hw.radix = 16;
    hw.sharp = true;
    hw.nics_per_server = 4;
    return topology::build_with("fat_tree", {{"gpus", "32"}, {"tiers", "2"}}, hw);
  }();
  return t;
}

TEST(Collnet, ShapeSeesTheSharpSwitches) {
  EXPECT_TRUE(comm_shape(iota(32), sharp32(), Arch::Hopper).sharp);
  EXPECT_FALSE(comm_shape(iota(32), testing::rail32(), Arch::Hopper).sharp);
}

TEST(Collnet, DirectGraphHasOneHeadPerNic) {
  // h = min(ppn 8, 8, NICs 8) = 8 heads at s = 48 (largest sm90 inter speed <= min(50, 370.8));
  // no duplication (Hopper, 48 < 50, 8 > 4).
  const SearchGraph g = collnet_graph(comm_shape(iota(32), sharp32(), Arch::Hopper));
  EXPECT_EQ(g.channels, 8);
  EXPECT_DOUBLE_EQ(g.bw, 48.0);
  // One server: no CollNet graph.
  EXPECT_EQ(collnet_graph(comm_shape(iota(8), sharp32(), Arch::Hopper)).channels, 0);
}

TEST(Collnet, ModelOnFourServers) {
  const CommShape s = comm_shape(iota(32), sharp32(), Arch::Hopper);
  // Direct: busBw = 8 x 48 = 384; GPUs per NIC r = 8/8 = 1, f = 1 - 0 = 1; x 0.85 (Hopper) = 326.4;
  // algBw = 326.4 / 2 = 163.2. Latency 2 (min(1, 7) x 3.7 + 7 x 0.4) + 31 = 2 x 6.5 + 31 = 44 us.
  const ModelEntry d = model_entry(Op::AllReduce, Algo::CollnetDirect, Proto::Simple, s);
  EXPECT_NEAR(d.bw_gbs, 163.2, 1e-9);
  EXPECT_NEAR(d.latency_us, 44.0, 1e-9);
  // Chain: busBw = 8 x 48 = 384, algBw 192. Latency 2 x 7 x 2.8 + 30 = 69.2 us.
  const ModelEntry c = model_entry(Op::AllReduce, Algo::CollnetChain, Proto::Simple, s);
  EXPECT_NEAR(c.bw_gbs, 192.0, 1e-9);
  EXPECT_NEAR(c.latency_us, 69.2, 1e-9);
  // Simple only.
  EXPECT_EQ(model_entry(Op::AllReduce, Algo::CollnetDirect, Proto::LL, s).bw_gbs, 0);
  EXPECT_EQ(model_entry(Op::AllReduce, Algo::CollnetChain, Proto::LL128, s).bw_gbs, 0);
  // All-gather / reduce-scatter: collnet_direct only (one head per GPU here: 8 GPUs, 8 heads, 8 NICs):
  // busBw = ppn x min(bwIntra, 0.9 bwInter) = 8 x min(48, 43.2) = 345.6 GB/s, which is the algBw for these ops;
  // latency as the all-reduce's, 44 us. No chain, no LL.
  for (Op op : {Op::AllGather, Op::ReduceScatter}) {
    const ModelEntry g = model_entry(op, Algo::CollnetDirect, Proto::Simple, s);
    EXPECT_NEAR(g.bw_gbs, 345.6, 1e-9) << op_name(op);
    EXPECT_NEAR(g.latency_us, 44.0, 1e-9) << op_name(op);
    EXPECT_EQ(model_entry(op, Algo::CollnetChain, Proto::Simple, s).bw_gbs, 0) << op_name(op);
    EXPECT_EQ(model_entry(op, Algo::CollnetDirect, Proto::LL, s).bw_gbs, 0) << op_name(op);
  }
  // Two GPUs per NIC (4 NICs for 8 GPUs): more GPUs than NICs, NCCL prices no CollNet all-gather
  // (busBw 0). The all-reduce stays: h = min(8, 8, 4) = 4 at 48, duplicated (c = 4 is not > 4) to 8 x 24
  // (48 / floor(11/4)); r = 8/8 = 1: busBw 8 x 24 x 0.85 = 163.2, algBw 81.6.
  const CommShape shared = comm_shape(iota(32), sharp_shared_nics(), Arch::Hopper);
  EXPECT_EQ(shared.nics, 4);
  EXPECT_EQ(model_entry(Op::AllGather, Algo::CollnetDirect, Proto::Simple, shared).bw_gbs, 0);
  EXPECT_NEAR(model_entry(Op::AllReduce, Algo::CollnetDirect, Proto::Simple, shared).bw_gbs, 81.6, 1e-9);
  // Ampere: no 0.85 -> direct algBw 384 / 2 = 192.
  EXPECT_NEAR(model_entry(Op::AllReduce, Algo::CollnetDirect, Proto::Simple,
                          comm_shape(iota(32), sharp32(), Arch::Ampere))
                  .bw_gbs,
              // Ampere's inter speeds: 48 is the largest <= 50; 8 x 48 / 2.
              192.0, 1e-9);
}

TEST(Collnet, EnabledOnlyWhereTheSwitchesReduce) {
  const CommShape sharp = comm_shape(iota(32), sharp32(), Arch::Hopper);
  const CommShape plain = comm_shape(iota(32), testing::rail32(), Arch::Hopper);
  for (Algo a : {Algo::CollnetDirect, Algo::CollnetChain}) {
    EXPECT_TRUE(enabled_by_default(Op::AllReduce, a, Proto::Simple, sharp)) << algo_name(a);
    EXPECT_FALSE(enabled_by_default(Op::AllReduce, a, Proto::Simple, plain)) << algo_name(a);
    // One server: no network to reduce in.
    EXPECT_FALSE(enabled_by_default(Op::AllReduce, a, Proto::Simple, comm_shape(iota(8), sharp32(), Arch::Hopper)));
  }
}

TEST(Collnet, TunerPicksCollnetWhereItWins) {
  // Times (us) on sharp32, S in bytes, tree bandwidth x NCCL's correction f[log2(S/64)]:
  //   tree LL     35.2 + S / (10,200 f_LL)       (6.8 + 2 (7 x 0.6 + 2 x 5.0); min(288/3.8, 20.4) / 2)
  //   direct      44   + S / 163,200
  //   chain       69.2 + S / 192,000
  //   ring simple 282.8 x 1.4 = 395.92 + S / 198,193.5   (384 x 32/62)
  //   nvls_tree   108.6 + S / 187,871                    (25 + 2 x 2 x 20.9; 8 x 45.5 x 32/62)
  //   8 KiB:   tree LL 35.2 + 8192/(10,200 x 0.7) = 36.35; direct 44.05: tree.
  //   1 MiB:   direct 44 + 6.43 = 50.43; tree LL 35.2 + 1048576/5,100 = 240.8;
  //            tree LL128 65.5 + 1048576/(116,000 x 0.6) = 80.57; chain 74.66: direct.
  //   256 MiB: chain 69.2 + 1398.1 = 1467.3; nvls_tree 108.6 + 1428.8 = 1537.4;
  //            direct 1688.8; ring 395.92 + 1354.4 = 1750.3: chain.
  //   4 GiB:   ring 395.92 + 21,670.6 = 22,066.5; chain 69.2 + 22,369.6 = 22,438.8: ring.
  Options o;
  o.tuner = true;
  o.channels = kAutoChannels;
  const std::map<Bytes, std::string> want = {{Bytes{8} << 10, "tree"},
                                             {Bytes{1} << 20, "collnet_direct"},
                                             {Bytes{256} << 20, "collnet_chain"},
                                             {Bytes{4} << 30, "ring"}};
  for (const auto& [bytes, algo] : want) {
    const auto plan = make_plan("auto", Op::AllReduce, iota(32), bytes, o, sharp32());
    EXPECT_EQ(plan.algorithm, algo) << bytes;
  }
  const auto p = make_plan("auto", Op::AllReduce, iota(32), Bytes{1} << 20, o, sharp32());
  EXPECT_EQ(p.protocol, "simple");
  ASSERT_EQ(p.transfers[0].kind, plan::TransferKind::Compute);
  EXPECT_EQ(p.transfers[0].duration, Time::from_seconds(44e-6));  // NCCL's latency term
  // The same fabric without SHARP never gets CollNet.
  const auto plain = testing::ib_fat_tree32(false);
  for (const auto& [bytes, algo] : want) {
    const std::string got = make_plan("auto", Op::AllReduce, iota(32), bytes, o, plain).algorithm;
    EXPECT_NE(got, "collnet_direct");
    EXPECT_NE(got, "collnet_chain");
  }
}

TEST(Collnet, NamedOrListedAndErrors) {
  Options o;
  o.tuner = true;
  o.channels = kAutoChannels;
  // Named: fixed algorithm, the tuner picks the protocol (simple).
  EXPECT_EQ(make_plan("collnet_chain", Op::AllReduce, iota(32), Bytes{1} << 20, o, sharp32()).algorithm,
            "collnet_chain");
  // An NCCL_ALGO-style list restricts "auto".
  Options listed = o;
  listed.selection = parse_algorithms("collnetdirect", Selection{}, "collective.algorithms");
  EXPECT_EQ(make_plan("auto", Op::AllReduce, iota(32), Bytes{1} << 30, listed, sharp32()).algorithm, "collnet_direct");
  // A fabric without SHARP: the error says which key to set.
  const auto plain = testing::ib_fat_tree32(false);
  for (const char* name : {"collnet_direct", "collnet_chain"}) {
    try {
      make_plan(name, Op::AllReduce, iota(32), Bytes{1} << 20, o, plain);
      ADD_FAILURE() << name << " accepted on a fabric without SHARP";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("switch.in_network_reduction: sharp"), std::string::npos) << e.what();
    }
    try {
      make_plan(name, Op::AllReduce, iota(32), Bytes{1} << 20, Options{}, plain);  // the plain algorithm, too
      ADD_FAILURE() << name << " accepted on a fabric without SHARP";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("switch.in_network_reduction: sharp"), std::string::npos) << e.what();
    }
  }
  try {
    make_plan("auto", Op::AllReduce, iota(32), Bytes{1} << 20, listed, plain);
    ADD_FAILURE() << "a collnet-only list accepted on a fabric without SHARP";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("switch.in_network_reduction: sharp"), std::string::npos) << e.what();
  }
  // One server, uneven servers, other ops.
  EXPECT_THROW(make_plan("collnet_direct", Op::AllReduce, iota(8), 1 << 20, Options{}, sharp32()), InputError);
  EXPECT_THROW(make_plan("collnet_chain", Op::AllReduce, iota(12), 1 << 20, Options{}, sharp32()), InputError);
  EXPECT_THROW(make_plan("collnet_chain", Op::AllGather, iota(32), 1 << 20, Options{}, sharp32()), InputError);
  // collnet_direct all-gather with two GPUs per NIC: refused, saying why; the plain algorithm names the
  // server, the tuned one the GPUs per server and NICs.
  try {
    make_plan("collnet_direct", Op::AllGather, iota(32), 1 << 20, Options{}, sharp_shared_nics());
    ADD_FAILURE() << "collnet_direct all-gather accepted with two GPUs per NIC";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("one NIC per GPU"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("8 GPUs in the group on 4 NICs"), std::string::npos) << e.what();
  }
  try {
    make_plan("collnet_direct", Op::ReduceScatter, iota(32), 1 << 20, o, sharp_shared_nics());
    ADD_FAILURE() << "tuned collnet_direct reduce-scatter accepted with two GPUs per NIC";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("one NIC per GPU"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("8 GPUs per server share 4 NICs"), std::string::npos) << e.what();
  }
}

TEST(Collnet, TunerPicksDirectForAllGatherAndReduceScatter) {
  // Times (us) on sharp32 for all-gather and reduce-scatter (nccl/tuner.hpp sections 2, 3, 5):
  //   collnet_direct  44 + S / 345,600
  //   ring LL      6.6 + 28 x max(0.6, 1) + 3 x 2.7 = 42.7 + S / (20.4 x 32/31 = 21,058)  (llMaxBw, > 2 nodes)
  //   ring LL128   14 + 28 x 1.9 + 3 x 4 = 79.2 + S / (min(0.92 x 384, 8 x 36.7) x 32/31 = 303,071)
  //   ring simple  8.4 + 28 x max(3.4, 3) + 3 x 14 = 145.6 + S / (384 x 32/31 = 396,387)
  //   (no tree, NVLS or NVLS tree for these ops beyond one server; no PAT with 8 GPUs per server)
  //   8 KiB:   ring LL 42.7 + 0.389 = 43.09 < direct 44.02: ring / LL.
  //   1 MiB:   direct 44 + 3.03 = 47.03 < ring LL 42.7 + 49.8 = 92.5: collnet_direct.
  //   256 MiB: direct 44 + 776.68 = 820.68 < ring simple 145.6 + 677.18 = 822.78: collnet_direct.
  //   1 GiB:   ring simple 145.6 + 2,708.7 = 2,854.3 < direct 44 + 3,106.9 = 3,150.9: ring.
  Options o;
  o.tuner = true;
  o.channels = kAutoChannels;
  const std::map<Bytes, std::pair<std::string, std::string>> want = {{Bytes{8} << 10, {"ring", "ll"}},
                                                                     {Bytes{1} << 20, {"collnet_direct", "simple"}},
                                                                     {Bytes{256} << 20, {"collnet_direct", "simple"}},
                                                                     {Bytes{1} << 30, {"ring", "simple"}}};
  for (Op op : {Op::AllGather, Op::ReduceScatter})
    for (const auto& [bytes, choice] : want) {
      const auto plan = make_plan("auto", op, iota(32), bytes, o, sharp32());
      EXPECT_EQ(plan.algorithm, choice.first) << op_name(op) << " " << bytes;
      EXPECT_EQ(plan.protocol, choice.second) << op_name(op) << " " << bytes;
    }
  const auto p = make_plan("auto", Op::AllGather, iota(32), Bytes{1} << 20, o, sharp32());
  ASSERT_EQ(p.transfers[0].kind, plan::TransferKind::Compute);
  EXPECT_EQ(p.transfers[0].duration, Time::from_seconds(44e-6));  // NCCL's latency term
  // Without SHARP, or with NICs shared by two GPUs, never CollNet for these ops.
  static const topology::Topology plain = testing::ib_fat_tree32(false);
  for (const topology::Topology* t : {&plain, &sharp_shared_nics()})
    for (const auto& [bytes, choice] : want)
      EXPECT_NE(make_plan("auto", Op::AllGather, iota(32), bytes, o, *t).algorithm, "collnet_direct") << bytes;
}

TEST(Collnet, DirectAllGatherPlanGathersEachRailInTheSwitches) {
  // Plain algorithm, 16 channels, S = 1 GiB over 32 ranks: block b = 2^30 / 32 = 2^25 = 33,554,432.
  //   intra, per server: 8 heads x 7 other GPUs = 56 edges head -> GPU, each the rail: 4 x b = 2^27;
  //   SHARP, per rail k: 16/8 = 2 channels, each a ring of the 4 servers' k-th GPUs carrying half of the
  //     other servers' 3 blocks: 3 x 2^25 / 2 = 50,331,648 B per edge.
  // Reduce-scatter: the same with the intra edges reversed (GPU -> head).
  const Options o = testing::naive(16);
  const Bytes s = Bytes{1} << 30;
  for (Op op : {Op::AllGather, Op::ReduceScatter}) {
    const auto plan = make_plan("collnet_direct", op, iota(32), s, o, sharp32());
    ASSERT_EQ(plan.transfers.size(), 4u + 16u) << op_name(op);
    for (int v = 0; v < 4; ++v) {
      const auto& t = plan.transfers[v];
      EXPECT_EQ(t.kind, plan::TransferKind::Coupled);
      ASSERT_EQ(t.edges.size(), 56u);
      EXPECT_EQ(t.bytes, Bytes{1} << 27);
      // The first edges: head 8v to 8v+1 (all-gather), or 8v+1 to head 8v (reduce-scatter).
      const auto first = op == Op::AllGather ? std::make_pair(8 * v, 8 * v + 1) : std::make_pair(8 * v + 1, 8 * v);
      EXPECT_EQ(t.edges[0], first);
    }
    for (size_t i = 4; i < plan.transfers.size(); ++i) {
      const auto& t = plan.transfers[i];
      const int k = static_cast<int>((i - 4) / 2);
      ASSERT_EQ(t.edges.size(), 4u);
      for (int v = 0; v < 4; ++v) EXPECT_EQ(t.edges[v], std::make_pair(8 * v + k, 8 * ((v + 1) % 4) + k));
      EXPECT_EQ(t.bytes, 50331648);
    }
    // What leaves a GPU: all-gather 7 x 2^27 over NVLink + 2 x 50,331,648 into the switches = 1,040,187,392
    // = 31/32 S, which is what an all-gather delivers to each GPU (31 blocks of 2^25).
    for (const auto& [rank, bytes] : plan::bytes_sent_by_rank(plan)) EXPECT_EQ(bytes, 31 * (s / 32)) << rank;
  }
}

TEST(Collnet, DirectPlanLoadsEachNicWithItsShardOnce) {
  // Plain algorithm (no tuner), 16 channels, S = 1 GiB = 2^30.
  // Heads: the 8 GPUs of each server (one per NIC); shard S/8 = 134,217,728.
  //   intra, per server: 8 heads x 7 other GPUs x 2 (scatter, broadcast) = 112 edges, each
  //     ceil(2^27 x 20/17) = ceil(2,684,354,560 / 17 = 157,903,209.4) = 157,903,210 B (NCCL's 0.85 on Hopper);
  //   SHARP, per head position k: 16/8 = 2 channels, each a ring of the 4 servers' k-th GPUs
  //     carrying S/16 = 67,108,864 B per edge.
  const Options o = testing::naive(16);
  const Bytes s = Bytes{1} << 30;
  const auto plan = make_plan("collnet_direct", Op::AllReduce, iota(32), s, o, sharp32());
  ASSERT_EQ(plan.transfers.size(), 4u + 16u);
  for (int v = 0; v < 4; ++v) {
    const auto& t = plan.transfers[v];
    EXPECT_EQ(t.kind, plan::TransferKind::Coupled);
    EXPECT_EQ(t.edges.size(), 112u);
    EXPECT_EQ(t.bytes, 157903210);
    EXPECT_EQ(t.latency_steps, 2);
  }
  Bytes sharp_bytes = 0;
  for (size_t i = 4; i < plan.transfers.size(); ++i) {
    const auto& t = plan.transfers[i];
    const int k = static_cast<int>((i - 4) / 2);
    ASSERT_EQ(t.edges.size(), 4u);
    for (int v = 0; v < 4; ++v) {  // server v's k-th GPU -> server v+1's
      EXPECT_EQ(t.edges[v].first, 8 * v + k);
      EXPECT_EQ(t.edges[v].second, 8 * ((v + 1) % 4) + k);
    }
    EXPECT_EQ(t.bytes, 67108864);
    EXPECT_EQ(t.latency_steps, 1);
    sharp_bytes += t.bytes;
  }
  // What the SHARP passes carry out of one server: each head its shard once, S in all.
  EXPECT_EQ(sharp_bytes, s);
}

TEST(Collnet, ChainPlanRunsThroughTheChannelsHead) {
  // 16 channels of S/16; channel c's head on every server is the GPU of NIC c mod 8.
  // Edges per channel: 4 servers x 7 up + 4 (heads' ring) + 4 x 7 down = 60, each S/16.
  const Options o = testing::naive(16);
  const Bytes s = Bytes{1} << 30;
  const auto plan = make_plan("collnet_chain", Op::AllReduce, iota(32), s, o, sharp32());
  ASSERT_EQ(plan.transfers.size(), 16u);
  for (int c = 0; c < 16; ++c) {
    const auto& t = plan.transfers[c];
    ASSERT_EQ(t.edges.size(), 60u);
    EXPECT_EQ(t.bytes, s / 16);
    EXPECT_EQ(t.latency_steps, 2 * 7 + 1);
    const int head = c % 8;
    // Server 0's chain: GPUs head+1, ..., head-1 (mod 8), then the head.
    EXPECT_EQ(t.edges[0], std::make_pair((head + 1) % 8, (head + 2) % 8));
    EXPECT_EQ(t.edges[6], std::make_pair((head + 7) % 8, head));
    // The heads' ring through the switches.
    for (int v = 0; v < 4; ++v) EXPECT_EQ(t.edges[28 + v], std::make_pair(8 * v + head, 8 * ((v + 1) % 4) + head));
    // Down server 0's chain from the head.
    EXPECT_EQ(t.edges[32], std::make_pair(head, (head + 7) % 8));
  }
  // Every GPU sends S/16 on each of its chain edges: 14 of 16 channels up (not when it is the
  // head), 14 down (not when it is the chain's first), 2 into the switches (its NIC's channels):
  // (14 + 14 + 2) x S/16 = 30/16 S.
  for (const auto& [rank, bytes] : plan::bytes_sent_by_rank(plan)) EXPECT_EQ(bytes, 30 * (s / 16)) << rank;
}

}  // namespace
}  // namespace podnet::collective
