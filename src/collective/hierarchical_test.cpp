#include "collective/hierarchical.hpp"

#include <gtest/gtest.h>

#include <set>

#include "collective/test_topologies.hpp"
#include "core/error.hpp"

namespace podnet::collective {
namespace {

using namespace podnet::literals;
using plan::TransferKind;
using testing::iota;
using testing::rail32;

int32_t server_of(int32_t rank, const topology::Topology& t) { return t.nodes[t.gpus[rank]].server; }
int32_t local_of(int32_t rank, const topology::Topology& t) { return t.nodes[t.gpus[rank]].local; }

TEST(Hierarchical, FourServersOfEight) {
  // L = 8 GPUs per server, N = 4 servers, S = 8 MiB:
  //   phase 1: 4 NVLink rings, (L-1)/L * S = 7 MiB per hop, 7 steps, no deps
  //   phase 2: 8 rings (one per local index) over 4 GPUs,
  //            2(N-1)/N * S/L = 2*3/4 * 1 MiB = 1.5 MiB, 6 steps, deps = phase 1
  //   phase 3: 4 NVLink rings, 7 MiB, 7 steps, deps = phase 2
  const auto& t = rail32();
  const auto plan = make_plan("hierarchical", Op::AllReduce, iota(32), 8_MiB, {}, t);
  ASSERT_EQ(plan.transfers.size(), 16u);
  const std::vector<int32_t> phase1 = {0, 1, 2, 3}, phase2 = {4, 5, 6, 7, 8, 9, 10, 11};
  for (int i = 0; i < 16; ++i) {
    const auto& tr = plan.transfers[i];
    EXPECT_EQ(tr.kind, TransferKind::Ring);
    EXPECT_FALSE(tr.open);
    if (i < 4 || i >= 12) {  // NVLink phases
      ASSERT_EQ(tr.ranks.size(), 8u);
      std::set<int32_t> servers;
      for (int32_t r : tr.ranks) servers.insert(server_of(r, t));
      EXPECT_EQ(servers.size(), 1u);
      EXPECT_EQ(*servers.begin(), i < 4 ? i : i - 12);
      EXPECT_EQ(tr.bytes, 7_MiB);
      EXPECT_EQ(tr.latency_steps, 7);
      EXPECT_EQ(tr.deps, i < 4 ? std::vector<int32_t>{} : phase2);
    } else {  // inter-server rings
      ASSERT_EQ(tr.ranks.size(), 4u);
      std::set<int32_t> servers;
      for (int32_t r : tr.ranks) {
        servers.insert(server_of(r, t));
        EXPECT_EQ(local_of(r, t), i - 4);  // same local index = same rail
      }
      EXPECT_EQ(servers.size(), 4u);
      EXPECT_EQ(tr.bytes, 1_MiB + 512_KiB);
      EXPECT_EQ(tr.latency_steps, 6);
      EXPECT_EQ(tr.deps, phase1);
    }
  }
  // Per GPU: 7 + 1.5 + 7 MiB.
  for (const auto& [rank, b] : bytes_sent_by_rank(plan)) EXPECT_EQ(b, 15_MiB + 512_KiB) << rank;
}

TEST(Hierarchical, TwoGpusPerServer) {
  // "0-31:4" = locals 0 and 4 of each of the 4 servers: L = 2, N = 4.
  // phase 1/3: 1/2 * S = 4 MiB; phase 2: 2 rings of 2*3/4 * 4 MiB = 6 MiB.
  Group g;
  for (int32_t r = 0; r < 32; r += 4) g.push_back(r);
  const auto plan = make_plan("hierarchical", Op::AllReduce, g, 8_MiB, {}, rail32());
  ASSERT_EQ(plan.transfers.size(), 10u);
  EXPECT_EQ(plan.transfers[0].bytes, 4_MiB);
  EXPECT_EQ(plan.transfers[4].bytes, 6_MiB);
  EXPECT_EQ(plan.transfers[5].bytes, 6_MiB);
  EXPECT_EQ(plan.transfers[9].bytes, 4_MiB);
  EXPECT_EQ(plan.transfers[9].deps, (std::vector<int32_t>{4, 5}));
}

TEST(Hierarchical, DegenerateShapes) {
  // One GPU per server: only phase 2, a flat ring.
  const auto flat = make_plan("hierarchical", Op::AllReduce, {0, 8, 16, 24}, 8_MiB, {}, rail32());
  ASSERT_EQ(flat.transfers.size(), 1u);
  EXPECT_EQ(flat.transfers[0].bytes, 12_MiB);  // 2*3/4 * 8 MiB
  EXPECT_TRUE(flat.transfers[0].deps.empty());
  // One server: reduce-scatter then all-gather rings.
  const auto one = make_plan("hierarchical", Op::AllReduce, iota(8), 8_MiB, {}, rail32());
  ASSERT_EQ(one.transfers.size(), 2u);
  EXPECT_EQ(one.transfers[1].deps, (std::vector<int32_t>{0}));
}

TEST(Hierarchical, ChannelsSplitBytes) {
  Options o;
  o.channels = 2;
  const auto plan = make_plan("hierarchical", Op::AllReduce, iota(32), 8_MiB, o, rail32());
  ASSERT_EQ(plan.transfers.size(), 32u);
  EXPECT_EQ(plan.transfers[16].channel, 1);
  EXPECT_EQ(plan.transfers[16].bytes, 3_MiB + 512_KiB);  // 7/8 * 4 MiB
  EXPECT_EQ(plan.transfers[20].deps, (std::vector<int32_t>{16, 17, 18, 19}));
}

TEST(Hierarchical, RejectsUnevenServers) {
  // 8 GPUs of server 0 and 4 of server 1.
  Group g = iota(12);
  try {
    make_plan("hierarchical", Op::AllReduce, g, 8_MiB, {}, rail32());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("same number"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace podnet::collective
