#include "collective/nccl/tuner.hpp"

#include <gtest/gtest.h>

#include "collective/collective.hpp"
#include "collective/pairwise.hpp"
#include "collective/pat.hpp"
#include "collective/test_topologies.hpp"
#include "core/error.hpp"

namespace podnet::collective {
namespace {

using testing::iota;
using testing::rail32;

// rail32: 4 servers x 8 H100-class GPUs, NVLink 450 GB/s per GPU per
// direction through an NVSwitch, one 400 Gb/s NIC per GPU.
// NCCL's view (nccl/tuner.hpp): NVLink 450 x 20.6/25 = 370.8 GB/s, NIC 50 GB/s.

TEST(NcclTuner, ProtocolEfficiencies) {
  EXPECT_DOUBLE_EQ(proto_efficiency(Proto::LL), 0.5);        // 4 B data per 8 B line
  EXPECT_DOUBLE_EQ(proto_efficiency(Proto::LL128), 0.9375);  // 120 B per 128 B line
  EXPECT_DOUBLE_EQ(proto_efficiency(Proto::Simple), 1.0);
}

TEST(NcclTuner, ShapeOfFourEightGpuServers) {
  const CommShape s = comm_shape(iota(32), rail32(), Arch::Hopper);
  EXPECT_EQ(s.ranks, 32);
  EXPECT_EQ(s.nodes, 4);
  EXPECT_EQ(s.nics, 8);
  EXPECT_DOUBLE_EQ(s.nic_gbs, 50.0);       // 400e9 / 8 / 1e9
  EXPECT_NEAR(s.nvlink_gbs, 370.8, 1e-9);  // 450 x 20.6 / 25
  EXPECT_TRUE(s.nvswitch);
}

TEST(NcclTuner, OnChipToChipLinksAutoPicksNeitherTreeNorPat) {
  // A ring of 512 chips (a NIC-less torus): before, a 1 GiB all-reduce chose a tree whose edges are multi-hop
  // paths, 8.3x the ring's time on the analytical engine (docs/contributing/validation/nccl-algorithms.md).
  const auto ring = topology::build_with("torus", {{"dims", "[512]"}, {"gpus", "512"}}, topology::default_hardware());
  const CommShape s = comm_shape(iota(512), ring, Arch::Hopper);
  EXPECT_TRUE(s.chip_links);
  EXPECT_FALSE(comm_shape(iota(32), rail32(), Arch::Hopper).chip_links);  // servers with NICs
  const Selection all = parse_algorithms("auto", Selection{}, "collective.algorithms");
  std::array<bool, kNumAlgos> candidates{};
  candidates.fill(true);
  const Choice c = tune(Op::AllReduce, s, Bytes{1} << 30, all, candidates);
  EXPECT_EQ(c.algo, Algo::Ring);
  // Named by the user, a tree still runs there.
  EXPECT_TRUE(why_not(Algo::Tree, s).empty());
  EXPECT_EQ(tune(Op::AllReduce, s, Bytes{1} << 30, parse_algorithms("tree", Selection{}, "collective.algorithms"),
                 candidates)
                .algo,
            Algo::Tree);
}

TEST(NcclTuner, ChannelsForEightBy400GServers) {
  // Multi-node: s = 48 (largest sm90 inter speed <= 50); each NIC carries
  // floor(50/48) = 1 ring: c = min(8 x 1, ceil(370.8/48) = 8) = 8. No
  // duplication (Hopper, 48 < 50, c = 8 > 4). Kernels: 2c = 16 (>= 16, no
  // further doubling).
  const CommShape s = comm_shape(iota(32), rail32(), Arch::Hopper);
  const SearchGraph g = ring_graph(s);
  EXPECT_EQ(g.channels, 8);
  EXPECT_DOUBLE_EQ(g.bw, 48.0);
  EXPECT_EQ(execution_channels(s), 16);
  // The plan with channels = auto runs them.
  Options o;
  o.channels = kAutoChannels;
  EXPECT_EQ(make_plan("ring", Op::AllReduce, iota(32), 1 << 30, o, rail32()).channels, 16);
}

TEST(NcclTuner, ChannelsForOneNvlinkServer) {
  // One node: s = 60 (largest sm90 intra speed <= 370.8): c = floor(370.8/60) = 6
  // (360 GB/s). Lower speeds while s/60 > 0.49: 50 -> 7 x 50 = 350, 40 -> 9 x 40 = 360,
  // 30 -> 12 x 30 = 360: none strictly better. Duplication (60 >= 50): 12 x 30.
  // Kernels: 24.
  const CommShape s = comm_shape(iota(8), rail32(), Arch::Hopper);
  EXPECT_EQ(s.nodes, 1);
  const SearchGraph g = ring_graph(s);
  EXPECT_EQ(g.channels, 12);
  EXPECT_DOUBLE_EQ(g.bw, 30.0);
  EXPECT_EQ(execution_channels(s), 24);
}

TEST(NcclTuner, ChannelsForOneGpuPerNode) {
  // One NIC per node: c = min(1, 8) = 1 at 48; duplicated (c = 1 <= 4) to 2 x 24;
  // kernels 2 x 2 = 4 (24 <= 45: no Hopper doubling).
  const CommShape s = comm_shape({0, 8, 16, 24}, rail32(), Arch::Hopper);
  EXPECT_EQ(s.nodes, 4);
  EXPECT_EQ(s.nics, 1);
  const SearchGraph g = ring_graph(s);
  EXPECT_EQ(g.channels, 2);
  EXPECT_DOUBLE_EQ(g.bw, 24.0);
  EXPECT_EQ(execution_channels(s), 4);
}

TEST(NcclTuner, RingAndTreeModelOnFourServers) {
  const CommShape s = comm_shape(iota(32), rail32(), Arch::Hopper);
  // Ring simple: busBw = 8 x 48 = 384, algBw = 384 x 32/62.
  // Latency 8.4 + (62 - 6) x max(3.4, 3 x 1.0) + 6 x 14 = 8.4 + 190.4 + 84 = 282.8 us.
  const ModelEntry ring = model_entry(Op::AllReduce, Algo::Ring, Proto::Simple, s);
  EXPECT_NEAR(ring.bw_gbs, 384.0 * 32 / 62, 1e-9);
  EXPECT_NEAR(ring.latency_us, 282.8, 1e-9);
  // Tree simple: busBw = min(0.92 x 384, 8 x 36.0) = 288, algBw = 144.
  // Latency 8.4 + 2 x ((8 - 1) x 4.0 + log2(4) x 14) = 120.4 us.
  const ModelEntry tree = model_entry(Op::AllReduce, Algo::Tree, Proto::Simple, s);
  EXPECT_NEAR(tree.bw_gbs, 144.0, 1e-9);
  EXPECT_NEAR(tree.latency_us, 120.4, 1e-9);
  // Ring LL: min(llMaxBw, 384/2) busBw, where multi-node llMaxBw is the CPU's
  // column: Intel, > 2 nodes = 20.4; latency 6.6 + 56 x max(0.6, 1.0) + 6 x 2.7 = 78.8 us.
  const ModelEntry ll = model_entry(Op::AllReduce, Algo::Ring, Proto::LL, s);
  EXPECT_NEAR(ll.bw_gbs, 20.4 * 32 / 62, 1e-9);
  EXPECT_NEAR(ll.latency_us, 78.8, 1e-9);
  // The ring's plateau: simple, multi-node, S / (16 channels x 32 ranks) >= 64 B
  // (S >= 32 KiB) -> latency x 1.4.
  EXPECT_NEAR(model_latency_us(Op::AllReduce, Algo::Ring, Proto::Simple, s, 32767), 282.8, 1e-9);
  EXPECT_NEAR(model_latency_us(Op::AllReduce, Algo::Ring, Proto::Simple, s, 32768), 282.8 * 1.4, 1e-9);
}

TEST(NcclTuner, TreeRingCrossoverOnFourServers) {
  // Simple only, ring vs tree (times in us, tree bandwidth x NCCL's correction
  // for log2(S/64)): ring(S) = 395.92 + S/198193.5; tree(S) = 120.4 + S/(144000 f).
  //   64 MiB: f[20] = 0.8 -> tree 120.4 + 582.5 = 702.9; ring 395.92 + 338.6 = 734.5: tree.
  //  128 MiB: f[21] = 0.9 -> tree 120.4 + 1035.6 = 1156.0; ring 395.92 + 677.2 = 1073.1: ring.
  const CommShape s = comm_shape(iota(32), rail32(), Arch::Hopper);
  Selection sel = parse_protocols("simple", Selection{}, "test");
  std::array<bool, kNumAlgos> cand{};
  cand[static_cast<int>(Algo::Ring)] = cand[static_cast<int>(Algo::Tree)] = true;
  const Choice at64 = tune(Op::AllReduce, s, Bytes{64} << 20, sel, cand);
  EXPECT_EQ(at64.algo, Algo::Tree);
  EXPECT_NEAR(at64.time_us, 120.4 + 67108864.0 / (144000 * 0.8), 1e-6);
  const Choice at128 = tune(Op::AllReduce, s, Bytes{128} << 20, sel, cand);
  EXPECT_EQ(at128.algo, Algo::Ring);
  EXPECT_NEAR(at128.time_us, 282.8 * 1.4 + 134217728.0 / (384000.0 * 32 / 62), 1e-6);
}

TEST(NcclTuner, NvlsOnOneServer) {
  // NVLS graph: c = 8 heads; s = 40 (60 x 8 and 50 x 8 exceed 370.8). Per channel
  // min(40 x 0.85 x 7/8 x 2 = 59.5, bwInter raised 40 -> 50 -> 60 = 60) = 59.5;
  // busBw 8 x 59.5 = 476, algBw 476 x 8/14 = 272; latency hwLat = 25 us.
  const CommShape s = comm_shape(iota(8), rail32(), Arch::Hopper);
  const ModelEntry nv = model_entry(Op::AllReduce, Algo::Nvls, Proto::Simple, s);
  EXPECT_NEAR(nv.bw_gbs, 272.0, 1e-9);
  EXPECT_NEAR(nv.latency_us, 25.0, 1e-9);
  // Small sizes: ring LL, latency 6.6 + 14 x 0.6 = 15 us < nvls' 25.
  // Large: nvls (25 + S/272000) beats ring simple (8.4 + 14 x 3.4 = 56 us + S/205714).
  const std::array<bool, kNumAlgos> all{true, true, true, true, true, true, true};
  const Choice small = tune(Op::AllReduce, s, 8, Selection{}, all);
  EXPECT_EQ(small.algo, Algo::Ring);
  EXPECT_EQ(small.proto, Proto::LL);
  EXPECT_NEAR(small.time_us, 15.0 + 8.0 / (1000 * 141.0 * 8 / 14), 1e-9);
  EXPECT_EQ(tune(Op::AllReduce, s, Bytes{1} << 30, Selection{}, all).algo, Algo::Nvls);
  // Not across servers (NCCL needs CollNet for that), and not without an NVSwitch.
  EXPECT_FALSE(
      enabled_by_default(Op::AllReduce, Algo::Nvls, Proto::Simple, comm_shape(iota(16), rail32(), Arch::Hopper)));
  EXPECT_EQ(model_entry(Op::AllReduce, Algo::Nvls, Proto::Simple, comm_shape(iota(8), rail32(), Arch::Ampere)).bw_gbs,
            0.0);
}

TEST(NcclTuner, NvlsTreeAcrossServers) {
  // NVLS graph beyond one server: inter speeds (sm90), NVLink counted x ppn/(ppn-1) =
  // 370.8 x 8/7 = 423.8; GPU->NIC path min(50, 370.8) = 50 -> s = 48; one head per
  // NIC (floor(50/48) = 1): c = min(ppn 8, 8 NICs x 1) = 8.
  const CommShape four = comm_shape(iota(32), rail32(), Arch::Hopper);
  const SearchGraph g = nvls_graph(four);
  EXPECT_EQ(g.channels, 8);
  EXPECT_DOUBLE_EQ(g.bw, 48.0);
  // Per channel min(intra 48 x 0.85 x 7/8 x 2 = 71.4, inter 48, Hopper cap beyond 2 nodes 45.5)
  // = 45.5: busBw 8 x 45.5 = 364, algBw 364 x 32/62. Latency 0 + 25 (NVLink) + 2 x log2(4) x 20.9 = 108.6 us.
  const ModelEntry t4 = model_entry(Op::AllReduce, Algo::NvlsTree, Proto::Simple, four);
  EXPECT_NEAR(t4.bw_gbs, 364.0 * 32 / 62, 1e-9);
  EXPECT_NEAR(t4.latency_us, 108.6, 1e-9);
  // Two servers: inter x 2 = 96 (each server is the root of one tree and a leaf of the
  // other), cap 57.7: bw min(71.4, 96, 57.7) = 57.7, busBw 461.6, algBw 461.6 x 16/30;
  // latency 25 + 2 x 1 x 20.9 = 66.8 us.
  const CommShape two = comm_shape(iota(16), rail32(), Arch::Hopper);
  const ModelEntry t2 = model_entry(Op::AllReduce, Algo::NvlsTree, Proto::Simple, two);
  EXPECT_NEAR(t2.bw_gbs, 461.6 * 16 / 30, 1e-9);
  EXPECT_NEAR(t2.latency_us, 66.8, 1e-9);
  // Only simple, only all-reduce, never on one server nor with one GPU per server.
  EXPECT_EQ(model_entry(Op::AllReduce, Algo::NvlsTree, Proto::LL, four).bw_gbs, 0.0);
  EXPECT_EQ(model_entry(Op::AllGather, Algo::NvlsTree, Proto::Simple, four).bw_gbs, 0.0);
  EXPECT_FALSE(
      enabled_by_default(Op::AllReduce, Algo::NvlsTree, Proto::Simple, comm_shape(iota(8), rail32(), Arch::Hopper)));
  EXPECT_EQ(model_entry(Op::AllReduce, Algo::NvlsTree, Proto::Simple,
                        comm_shape({0, 8, 16, 24}, rail32(), Arch::Hopper))
                .bw_gbs,
            0.0);
  // The tuner on four servers: ring simple = 282.8 x 1.4 + S/(384000 x 32/62) = 395.92 + S/198193.5;
  // nvls_tree = 108.6 + S/187871.0. Equal where 287.32 = S (1/187871.0 - 1/198193.5), S = 1.036e9:
  // nvls_tree at 512 MiB, ring at 2 GiB.
  const std::array<bool, kNumAlgos> all{true, true, true, true, true, true, true};
  const Choice mid = tune(Op::AllReduce, four, Bytes{512} << 20, Selection{}, all);
  EXPECT_EQ(mid.algo, Algo::NvlsTree);
  EXPECT_NEAR(mid.time_us, 108.6 + 536870912.0 / (364000.0 * 32 / 62), 1e-6);
  EXPECT_EQ(tune(Op::AllReduce, four, Bytes{2} << 30, Selection{}, all).algo, Algo::Ring);
  // Two servers: nvls_tree's 461.6 busBw beats the ring's 384 at every large size.
  EXPECT_EQ(tune(Op::AllReduce, two, Bytes{8} << 30, Selection{}, all).algo, Algo::NvlsTree);
}

TEST(NcclTuner, UnevenServersSkipNvlsTreeAndCollNet) {
  // GPUs 0-11: 8 on server 0, 4 on server 1. NVLS tree and CollNet need the same number on every server:
  // auto leaves them out (it used to pick nvls_tree, whose plan then refused the group and lost the
  // whole table); asked for by name they say why.
  const Group uneven = iota(12);
  const CommShape s = comm_shape(uneven, rail32(), Arch::Hopper);
  EXPECT_FALSE(s.uniform);
  EXPECT_TRUE(comm_shape(iota(16), rail32(), Arch::Hopper).uniform);
  EXPECT_TRUE(comm_shape({0, 8, 16}, rail32(), Arch::Hopper).uniform);
  EXPECT_FALSE(enabled_by_default(Op::AllReduce, Algo::NvlsTree, Proto::Simple, s));
  EXPECT_FALSE(enabled_by_default(Op::AllReduce, Algo::CollnetDirect, Proto::Simple,
                                  comm_shape(uneven, testing::sharp32(), Arch::Hopper)));
  EXPECT_EQ(why_not(Algo::NvlsTree, s), "nvls_tree needs the same number of the group's GPUs on every server");
  Options o;
  for (Bytes b : {Bytes{1} << 10, Bytes{1} << 20, Bytes{1} << 30}) {
    const plan::TransferPlan p = make_plan("auto", Op::AllReduce, uneven, b, o, rail32());
    EXPECT_FALSE(p.transfers.empty()) << b;
    const plan::TransferPlan q = make_plan("auto", Op::AllReduce, uneven, b, o, testing::sharp32());
    EXPECT_FALSE(q.transfers.empty()) << b;
  }
  o.tuner = true;  // NCCL's model (collective.nccl_model, the scenario default)
  try {
    make_plan("nvls_tree", Op::AllReduce, uneven, Bytes{1} << 20, o, rail32());
    ADD_FAILURE() << "nvls_tree accepted 8 + 4 GPUs";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nvls_tree allreduce over 12 GPUs on 2 servers: nvls_tree needs the same"),
              std::string::npos)
        << e.what();
  }
}

TEST(NcclTuner, NvlsTreePlan) {
  Options o;
  o.channels = kAutoChannels;
  o.tuner = true;
  // 2 servers x 8 GPUs, S = 1 MiB: the 66.8 us delay; per server one NVLS transfer; 8 heads x
  // (16 execution channels / 8 heads = 2) x 2 trees = 32 tree transfers. 1 + 2 + 32 = 35.
  const auto plan = make_plan("nvls_tree", Op::AllReduce, iota(16), Bytes{1} << 20, o, rail32());
  EXPECT_EQ(plan.algorithm, "nvls_tree");
  EXPECT_EQ(plan.protocol, "simple");
  ASSERT_EQ(plan.transfers.size(), 35u);
  EXPECT_EQ(plan.transfers[0].duration, Time::from_seconds(66.8e-6));
  // Intra-server: 8 edges GPU i -> i+1 of server 0, each ceil(2^20 x (8+1)/8 / 0.85) =
  // ceil(1,048,576 x 180 / 136) = ceil(1,387,821.18) = 1,387,822 B.
  const auto& intra = plan.transfers[1];
  EXPECT_EQ(intra.kind, plan::TransferKind::Coupled);
  EXPECT_EQ(intra.bytes, 1'387'822);
  ASSERT_EQ(intra.edges.size(), 8u);
  EXPECT_EQ(intra.edges[7], std::make_pair(7, 0));
  // Head 0 of each server is its GPU on NIC 0 (ranks 0 and 8); its shard 2^20/8 = 131,072 B, per
  // channel 65,536, per tree 32,768. Tree 0 over 2 servers: server 1's parent is server 0
  // (btree: parent(1) = 0), so edges 8 -> 0 (reduce) and 0 -> 8 (broadcast); tree 1 is its
  // mirror (root server 1): 0 -> 8 then 8 -> 0.
  const auto& t0 = plan.transfers[3];
  EXPECT_EQ(t0.bytes, 32'768);
  EXPECT_EQ(t0.edges, (std::vector<std::pair<int32_t, int32_t>>{{8, 0}, {0, 8}}));
  EXPECT_EQ(plan.transfers[4].edges, (std::vector<std::pair<int32_t, int32_t>>{{0, 8}, {8, 0}}));
  // Head 3: ranks 3 and 11.
  EXPECT_EQ(plan.transfers[3 + 3 * 4].edges, (std::vector<std::pair<int32_t, int32_t>>{{11, 3}, {3, 11}}));
  // Refused on one server, with uneven servers.
  EXPECT_THROW(make_plan("nvls_tree", Op::AllReduce, iota(8), 1 << 20, o, rail32()), InputError);
  EXPECT_THROW(make_plan("nvls_tree", Op::AllReduce, iota(12), 1 << 20, o, rail32()), InputError);
}

TEST(NcclTuner, PatBlocksAddUpToEveryOtherRank) {
  // n = 8: distances 4, 2, 1 carry 1, 2, 4 blocks (odd m with m 2^p <= 7): 7 = n - 1.
  EXPECT_EQ(pat_blocks(8, 2), 1);
  EXPECT_EQ(pat_blocks(8, 1), 2);
  EXPECT_EQ(pat_blocks(8, 0), 4);
  // n = 6: p = 2: m = 1 (4 <= 5); p = 1: m = 1 (m = 3 gives 6 > 5); p = 0: m = 1, 3, 5. 1 + 1 + 3 = 5.
  EXPECT_EQ(pat_blocks(6, 2), 1);
  EXPECT_EQ(pat_blocks(6, 1), 1);
  EXPECT_EQ(pat_blocks(6, 0), 3);
  for (int64_t n : {2, 3, 5, 7, 100, 129, 1000}) {
    int64_t sum = 0;
    for (int32_t p = 0; (int64_t{1} << p) < n; ++p) sum += pat_blocks(n, p);
    EXPECT_EQ(sum, n - 1) << n;
  }
}

TEST(NcclTuner, PatPlanAndModel) {
  // 8 GPUs, one per server (rail_clos(64) has 8 servers of 8: GPUs 0, 8, ..., 56), naive order,
  // one channel, S = 8 KiB (1 KiB blocks). All-gather: step d = 4 (1 KiB each), d = 2 (2 KiB),
  // d = 1 (4 KiB); 8 transfers a step; a send at step k waits for the receive of step k-1.
  const auto topo = testing::rail_clos(64);
  const Group g = {0, 8, 16, 24, 32, 40, 48, 56};
  const auto ag = make_plan("pat", Op::AllGather, g, 8 << 10, testing::naive(1), topo);
  ASSERT_EQ(ag.transfers.size(), 24u);
  EXPECT_EQ(ag.transfers[0].ranks, (std::vector<int32_t>{0, 32}));  // position 0 -> 4
  EXPECT_EQ(ag.transfers[0].bytes, 1024);
  EXPECT_TRUE(ag.transfers[0].deps.empty());
  EXPECT_EQ(ag.transfers[8].ranks, (std::vector<int32_t>{0, 16}));  // d = 2
  EXPECT_EQ(ag.transfers[8].bytes, 2048);
  EXPECT_EQ(ag.transfers[8].deps, std::vector<int32_t>{4});         // position 0 received from position 4 (transfer 4)
  EXPECT_EQ(ag.transfers[16].ranks, (std::vector<int32_t>{0, 8}));  // d = 1
  EXPECT_EQ(ag.transfers[16].bytes, 4096);
  EXPECT_EQ(ag.transfers[16].deps, std::vector<int32_t>{14});  // from position 6 at d = 2
  // Reduce-scatter: the transpose, nearest first, sending backwards: d = 1 with 4 blocks first.
  const auto rs = make_plan("pat", Op::ReduceScatter, g, 8 << 10, testing::naive(1), topo);
  ASSERT_EQ(rs.transfers.size(), 24u);
  EXPECT_EQ(rs.transfers[0].ranks, (std::vector<int32_t>{0, 56}));
  EXPECT_EQ(rs.transfers[0].bytes, 4096);
  EXPECT_EQ(rs.transfers[23].ranks, (std::vector<int32_t>{56, 24}));  // position 7 -> 3 at d = 4
  EXPECT_EQ(rs.transfers[23].bytes, 1024);
  // NCCL's model for 128 GPUs, one per server: latency 8 + log2(128) x 14/3.5 + 128 x 2.8 = 394.4 us;
  // bandwidth c x s x 0.75 = 2 x 24 x 0.75 = 36 GB/s, used as is for all-gather.
  const auto big = testing::rail_clos(1024);
  Group one_per_node;
  for (int32_t i = 0; i < 1024; i += 8) one_per_node.push_back(i);
  const CommShape s = comm_shape(one_per_node, big, Arch::Hopper);
  const ModelEntry m = model_entry(Op::AllGather, Algo::Pat, Proto::Simple, s);
  EXPECT_NEAR(m.latency_us, 394.4, 1e-9);
  EXPECT_NEAR(m.bw_gbs, 36.0, 1e-9);
  // The tuner takes it for small sizes (ring LL: 6.6 + 127 inter-node steps x 5.0, the tree's LL
  // network latency as NCCL uses with one GPU per node = 641.6 us) and the ring for large ones;
  // never with 2 GPUs per server.
  const std::array<bool, kNumAlgos> all{true, true, true, true, true, true, true};
  EXPECT_EQ(tune(Op::AllGather, s, 1024, Selection{}, all).algo, Algo::Pat);
  EXPECT_NE(tune(Op::AllGather, s, Bytes{1} << 30, Selection{}, all).algo, Algo::Pat);
  EXPECT_FALSE(
      enabled_by_default(Op::AllGather, Algo::Pat, Proto::Simple, comm_shape(iota(16), rail32(), Arch::Hopper)));
}

TEST(NcclTuner, AutoPlanCarriesProtocolAndLatency) {
  Options o;
  o.channels = kAutoChannels;
  o.tuner = true;  // as every scenario sets it
  // 1 GiB over one server: nvls on NCCL's 16 NVLS channels (NVLS_NCHANNELS_SM90; the ring
  // would run 24 here); the first transfer is NVLS's 13 us launch (in place of NCCL's 25 us),
  // the second NVLS's pipeline fill and stage costs (nvls.hpp: 2 x 16 MiB / 272 GB/s + 66 x 2.5 us;
  // nvls_test covers them).
  const auto big = make_plan("auto", Op::AllReduce, iota(8), Bytes{1} << 30, o, rail32());
  EXPECT_EQ(big.algorithm, "nvls");
  EXPECT_EQ(big.protocol, "simple");
  EXPECT_EQ(big.channels, 16);
  ASSERT_EQ(big.transfers.size(), 18u);
  EXPECT_EQ(big.transfers[0].kind, plan::TransferKind::Compute);
  EXPECT_EQ(big.transfers[0].duration, Time::from_seconds(13e-6));
  EXPECT_EQ(big.transfers[1].kind, plan::TransferKind::Compute);
  EXPECT_EQ(big.transfers[1].duration, Time::from_seconds((2.0 * 16777216 / 272000 + 66 * 2.5) * 1e-6));
  // Channel 0 carries 2^30/16 = 67,108,864 B; each edge ceil(67,108,864 x 9/8 / 0.85) =
  // ceil(67,108,864 x 45/34) = ceil(3,019,898,880 / 34) = ceil(88,820,555.3) = 88,820,556 B.
  EXPECT_EQ(big.transfers[2].kind, plan::TransferKind::Coupled);
  EXPECT_EQ(big.transfers[2].bytes, 88'820'556);
  EXPECT_EQ(big.transfers[2].edges.size(), 8u);
  EXPECT_EQ(big.transfers[2].deps, std::vector<int32_t>{1});
  // 8 B with the ring: LL on one channel (NCCL drops channels while S < channels x 512 threads x
  // 8 B x 8 ranks = channels x 32,768 B); the hop carries 8 x 14/8 = 14 B. LL moves at NCCL's
  // modelled LL rate: Simple's ring busBw on one H100 node is 12 x 30 = 360 GB/s, LL's
  // min(0.5 x 360, llMaxBw 141) = 141. On its 24 channels the hop's bytes would be ceil(14 x 360/141) =
  // 36 B at the links' rate; on 1 of them it carries the line format's 2 x 14 = 28 B at most at the
  // model's algBw = 141 x 8/14 GB/s for the collective's 8 B: 28 x 8 bits x (141e9 x 8/14) / 8 B =
  // 2.256e12 bits/s (28 B in 8 B / algBw). Delay 15 us, which holds the hops' latency.
  // Its pipeline keeps the 14 steps: one slice a step (14 B), lag 1, window 8 x 8 passes / 8.
  const auto small = make_plan("ring", Op::AllReduce, iota(8), 8, o, rail32());
  EXPECT_EQ(small.protocol, "ll");
  EXPECT_EQ(small.channels, 1);
  ASSERT_EQ(small.transfers.size(), 2u);
  EXPECT_EQ(small.transfers[0].duration, Time::from_seconds(15e-6));
  EXPECT_TRUE(small.transfers[0].holds_hop_latency);
  EXPECT_EQ(small.transfers[1].bytes, 28);
  EXPECT_NEAR(small.transfers[1].max_rate_bps, 28.0 * 8 * (141e9 * 8 / 14) / 8, 1e-9 * 2.256e12);
  EXPECT_EQ(small.transfers[1].latency_steps, 0);
  EXPECT_EQ(small.transfers[1].pipeline, (plan::Pipeline{14, 8, 1, 14}));
}

TEST(NcclTuner, SmallSizesRunOnFewerChannels) {
  // NCCL (enqueue.cc): a ring or tree drops a channel while S < channels x threads x threshold.
  // Ring LL on 8 ranks: 512 x 8 x 8 = 32,768 B a channel; from 24 channels.
  EXPECT_EQ(size_channels(Algo::Ring, Proto::LL, 8, 8, 24), 1);
  EXPECT_EQ(size_channels(Algo::Ring, Proto::LL, 65'535, 8, 24), 1);   // < 2 x 32,768
  EXPECT_EQ(size_channels(Algo::Ring, Proto::LL, 65'536, 8, 24), 2);   // = 2 x 32,768
  EXPECT_EQ(size_channels(Algo::Ring, Proto::LL, 262'144, 8, 24), 8);  // 256 KiB / 32 KiB
  EXPECT_EQ(size_channels(Algo::Ring, Proto::LL, 786'432, 8, 24), 24);
  // Tree LL: 512 x 8 = 4,096 B a channel (no x ranks); LL128 640 x 8 = 5,120; Simple 512 x 64 = 32,768.
  EXPECT_EQ(size_channels(Algo::Tree, Proto::LL, 32'768, 32, 16), 8);
  EXPECT_EQ(size_channels(Algo::Tree, Proto::LL128, 40'960, 32, 16), 8);
  EXPECT_EQ(size_channels(Algo::Ring, Proto::Simple, 131'072, 32, 16), 4);
  // Other algorithms keep theirs.
  EXPECT_EQ(size_channels(Algo::Nvls, Proto::Simple, 8, 8, 16), 16);
  EXPECT_EQ(size_channels(Algo::Pat, Proto::Simple, 8, 128, 4), 4);
  // In the plan: auto channels follow it; channels the user fixed do not.
  Options o;
  o.tuner = true;
  o.channels = kAutoChannels;
  EXPECT_EQ(make_plan("ring", Op::AllReduce, iota(8), 262'144, o, rail32()).channels, 8);
  o.channels = 4;
  EXPECT_EQ(make_plan("ring", Op::AllReduce, iota(8), 8, o, rail32()).channels, 4);
}

TEST(NcclTuner, AllToAllPaysPerPeerPosts) {
  // 64 GPUs on 8 servers: 2 x (64 - 8) x 1 us + (8 - 1) x 0.6 us = 116.2 us
  // of posts and the 36.5 us launch (pairwise.hpp): 152.7 us before the transfers.
  const auto t = testing::rail_clos(64);
  Options o;
  o.tuner = true;
  const auto plan = make_plan("auto", Op::AllToAll, iota(64), 64 * 8, o, t);
  EXPECT_EQ(plan.algorithm, "pairwise");
  ASSERT_EQ(plan.transfers.size(), 1u + 64 * 63);
  EXPECT_EQ(plan.transfers[0].kind, plan::TransferKind::Compute);
  EXPECT_EQ(plan.transfers[0].duration, Time::from_seconds(152.7e-6));
  // 8 B a peer; inside a server (NVSwitch) the transfer carries ceil(8 / 0.911) = ceil(8.78) = 9 B, across
  // servers 8 B. Transfer 1 + i x 63 + (d - 1) is rank i to rank i + d.
  EXPECT_EQ(plan.transfers[1].ranks, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(plan.transfers[1].bytes, 9);
  EXPECT_EQ(plan.transfers[8].ranks, (std::vector<int32_t>{0, 8}));
  EXPECT_EQ(plan.transfers[8].bytes, 8);
  // Without the tuner (a bare Options) the plan is the plain pairwise one.
  EXPECT_EQ(make_plan("auto", Op::AllToAll, iota(64), 64 * 8, Options{}, t).transfers.size(), 64u * 63);
}

TEST(NcclTuner, SendRecvChannelsFollowNcclsP2pRule) {
  // 8 ranks on one H100 server (24 ring channels -> 32 p2p channels; 18 NVLinks -> 2 x 18 = 36 -> 64, capped at
  // 32 a peer): the minimum halves from 32 while 8 x it > 32 -> 4. 1 MiB: min(4, 1 MiB / 64 KiB) = 4; 32 and 64 MiB:
  // 4 (parts of 8 and 16 MiB); 128 MiB: parts of 32 > 16 MiB -> 8; 256 MiB -> 16; 512 MiB and more -> 32 (a part
  // of 16 MiB at 512 MiB; capped at 32 a peer beyond). 16 KiB: ceil(16 KiB / 64 KiB) = 1.
  EXPECT_EQ(nccl_p2p_channels(16 << 10, 8, 18, 24), 1);
  EXPECT_EQ(nccl_p2p_channels(1 << 20, 8, 18, 24), 4);
  EXPECT_EQ(nccl_p2p_channels(Bytes{32} << 20, 8, 18, 24), 4);
  EXPECT_EQ(nccl_p2p_channels(Bytes{64} << 20, 8, 18, 24), 4);
  EXPECT_EQ(nccl_p2p_channels(Bytes{128} << 20, 8, 18, 24), 8);
  EXPECT_EQ(nccl_p2p_channels(Bytes{256} << 20, 8, 18, 24), 16);
  EXPECT_EQ(nccl_p2p_channels(Bytes{512} << 20, 8, 18, 24), 32);
  EXPECT_EQ(nccl_p2p_channels(Bytes{16} << 30, 8, 18, 24), 32);
  // 2 ranks: 32 x 2 > 32 -> 16 to start with.
  EXPECT_EQ(nccl_p2p_channels(Bytes{32} << 20, 2, 18, 24), 16);
  // The plan: 8 GPUs of one server (rail_clos: 450 GB/s NVLink, 0.824 payload = 370.8 GB/s), 64 MiB: 4 channels x
  // 20 GB/s = 80 GB/s < 370.8, so each transfer keeps its bytes and moves at most 80e9 x 8 = 640e9 bits/s.
  Options o;
  o.tuner = true;
  const auto plan = make_plan("auto", Op::SendRecv, iota(8), Bytes{64} << 20, o, testing::rail_clos(64));
  ASSERT_EQ(plan.transfers.size(), 8u);
  EXPECT_EQ(plan.transfers[0].bytes, Bytes{64} << 20);
  EXPECT_DOUBLE_EQ(plan.transfers[0].max_rate_bps, 640e9);
  // 16 GPUs on 2 servers (the communicator's 16 channels, 400G NICs): every pair runs on
  // nccl_p2p_net_channels(64 MiB, 16, 16, 50) = 4 channels (P2pNetChannelsFollowNccls229Rule). GPU 7 -> 8
  // crosses servers: 4 x 13.13 = 52.52 GB/s is above the NIC's payload 50 x 4096 / 4178 = 49.02 GB/s: no
  // limit. GPU 0 -> 1 inside a server of this communicator: 4 x 20 = 80 GB/s, 640e9 bits/s.
  const auto two = make_plan("auto", Op::SendRecv, iota(16), Bytes{64} << 20, o, testing::rail_clos(64));
  ASSERT_EQ(execution_channels(comm_shape(iota(16), testing::rail_clos(64), Arch::Hopper)), 16);
  EXPECT_EQ(two.transfers[7].ranks, (std::vector<int32_t>{7, 8}));
  EXPECT_EQ(two.transfers[7].bytes, Bytes{64} << 20);
  EXPECT_EQ(two.transfers[7].max_rate_bps, 0.0);
  EXPECT_DOUBLE_EQ(two.transfers[0].max_rate_bps, 640e9);
}

TEST(NcclTuner, P2pNetChannelsFollowNccls229Rule) {
  // NCCL 2.29 (pairwise.hpp): a 400G NIC's peer asks for pow2(ceil(50 / 14)) = 4 channels.
  // 2 ranks, 4 communicator channels (P = 4): 4 x ceil(2 / 8) = 4 <= 4 keeps 4; the operation starts on 4 halved
  // while x 2 ranks > 4 -> 2, and doubles while its part exceeds 128 KiB: 4 GiB -> 4; 256 KiB -> parts of 128 KiB,
  // stays 2; 64 KiB -> ceil(64 KiB / 64 KiB) = 1.
  EXPECT_EQ(nccl_p2p_net_channels(Bytes{4} << 30, 2, 4, 50), 4);
  EXPECT_EQ(nccl_p2p_net_channels(Bytes{256} << 10, 2, 4, 50), 2);
  EXPECT_EQ(nccl_p2p_net_channels(Bytes{64} << 10, 2, 4, 50), 1);
  // 10 ranks, P = 4: 4 x ceil(10 / 8) = 8 > 4 -> 2 a peer; start 2 x 10 > 4 -> 1; doubles once (<= 2 / 2): 2.
  EXPECT_EQ(nccl_p2p_net_channels(Bytes{4} << 30, 10, 4, 50), 2);
  EXPECT_EQ(nccl_p2p_net_channels(Bytes{32} << 20, 16, 4, 50), 2);
  // 80 ranks, P = 16: 4 x 10 = 40 > 16 -> 2, 20 > 16 -> 1 a peer: 1 whatever the size.
  EXPECT_EQ(nccl_p2p_net_channels(Bytes{4} << 30, 80, 16, 50), 1);
  // A 200G NIC: ceil(25 / 14) = 2 a peer; 2 ranks, P = 4: 2 channels. No NIC: NCCL's 2.
  EXPECT_EQ(nccl_p2p_net_channels(Bytes{4} << 30, 2, 4, 25), 2);
  EXPECT_EQ(nccl_p2p_net_channels(Bytes{4} << 30, 2, 4, 0), 2);
  // The plan of 10 GPUs one per server (GPU 0 of each of rail_clos(128)'s first 10 servers): the ring search's 2
  // channels doubled, 4 (nccl/tuner.hpp), so 2 channels per operation: every transfer crosses servers and moves at
  // most 2 x 13.13 GB/s = 26.26e9 x 8 = 210.08e9 bits/s, under the NIC's 49.02 GB/s.
  Group g;
  for (int32_t s = 0; s < 10; ++s) g.push_back(8 * s);
  const auto t = testing::rail_clos(128);
  ASSERT_EQ(execution_channels(comm_shape(g, t, Arch::Hopper)), 4);
  Options o;
  o.tuner = true;
  const auto plan = make_plan("auto", Op::SendRecv, g, Bytes{4} << 30, o, t);
  ASSERT_EQ(plan.transfers.size(), 10u);
  for (const auto& x : plan.transfers) EXPECT_NEAR(x.max_rate_bps, 210.08e9, 1) << x.label;
  // The bare algorithm (no NCCL model) has no limit.
  for (const auto& x : make_plan("auto", Op::SendRecv, g, Bytes{4} << 30, Options{}, t).transfers)
    EXPECT_EQ(x.max_rate_bps, 0.0);
}

TEST(NcclTuner, Lists) {
  Selection s = parse_algorithms("^nvls", Selection{}, "collective.algorithms");
  EXPECT_FALSE(s.algos[static_cast<int>(Algo::Nvls)]);
  EXPECT_TRUE(s.algos[static_cast<int>(Algo::Ring)]);
  s = parse_algorithms("Ring,TREE", Selection{}, "collective.algorithms");
  EXPECT_TRUE(s.algos[static_cast<int>(Algo::Tree)]);
  EXPECT_FALSE(s.algos[static_cast<int>(Algo::Nvls)]);
  s = parse_protocols("LL128", Selection{}, "collective.protocols");
  EXPECT_TRUE(s.protos[static_cast<int>(Proto::LL128)]);
  EXPECT_FALSE(s.protos[static_cast<int>(Proto::Simple)]);
  EXPECT_THROW(parse_algorithms("ring,fast", Selection{}, "collective.algorithms"), InputError);
  // Forcing nvls across servers is refused with a message.
  Options o;
  EXPECT_THROW(make_plan("nvls", Op::AllReduce, iota(16), 1 << 20, o, rail32()), InputError);
  // A tree broadcast under NCCL's model (NCCL broadcasts on rings only): refused, saying so and how to get
  // podnet's own tree plan; without the model that plan is built.
  o.tuner = true;
  try {
    make_plan("tree", Op::Broadcast, iota(16), 1 << 20, o, rail32());
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("NCCL's model has no tree broadcast here"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("collective.nccl_model=false"), std::string::npos) << e.what();
  }
  o.tuner = false;
  EXPECT_EQ(make_plan("tree", Op::Broadcast, iota(16), 1 << 20, o, rail32()).algorithm, "tree");
}

}  // namespace
}  // namespace podnet::collective
