#include "collective/ring.hpp"

#include <gtest/gtest.h>

#include "collective/test_topologies.hpp"

namespace podnet::collective {
namespace {

using namespace podnet::literals;
using plan::TransferKind;
using testing::iota;
using testing::naive;
using testing::rail32;

TEST(RingAllreduce, OneChannel) {
  // n = 8, S = 8 MiB: each hop carries 2(n-1)/n * S = 2*7/8 * 8 MiB = 14 MiB,
  // over 2(n-1) = 14 sequential steps.
  const auto plan = make_plan("ring", Op::AllReduce, iota(8), 8_MiB, naive(), rail32());
  ASSERT_EQ(plan.transfers.size(), 1u);
  const auto& t = plan.transfers[0];
  EXPECT_EQ(t.kind, TransferKind::Ring);
  EXPECT_EQ(t.ranks, iota(8));  // naive = group order
  EXPECT_EQ(t.bytes, 14_MiB);
  EXPECT_EQ(t.latency_steps, 14);
  EXPECT_FALSE(t.open);
  EXPECT_TRUE(t.deps.empty());
  EXPECT_EQ(plan.op, "allreduce");
  EXPECT_EQ(plan.algorithm, "ring");
}

TEST(RingAllreduce, FourChannelsSplitTheBuffer) {
  // 4 channels of S/4 = 2 MiB: 2*7/8 * 2 MiB = 3.5 MiB per hop each.
  const auto plan = make_plan("ring", Op::AllReduce, iota(8), 8_MiB, naive(4), rail32());
  ASSERT_EQ(plan.transfers.size(), 4u);
  for (int32_t c = 0; c < 4; ++c) {
    const auto& t = plan.transfers[c];
    EXPECT_EQ(t.kind, TransferKind::Ring);
    EXPECT_EQ(t.channel, c);
    EXPECT_EQ(t.bytes, 3_MiB + 512_KiB);
    EXPECT_EQ(t.latency_steps, 14);
    EXPECT_EQ(t.ranks.size(), 8u);
  }
}

TEST(RingAllreduce, UnevenBytesRoundUp) {
  // S = 1000 B over 3 channels: 334 + 333 + 333; n = 4: 2*3/4 * 334 = 501,
  // 2*3/4 * 333 = 499.5 -> 500.
  const auto plan = make_plan("ring", Op::AllReduce, iota(4), 1000, naive(3), rail32());
  ASSERT_EQ(plan.transfers.size(), 3u);
  EXPECT_EQ(plan.transfers[0].bytes, 501);
  EXPECT_EQ(plan.transfers[1].bytes, 500);
  EXPECT_EQ(plan.transfers[2].bytes, 500);
  // More channels than bytes: empty channels are dropped; zero bytes: no transfers.
  EXPECT_EQ(make_plan("ring", Op::AllReduce, iota(4), 2, naive(8), rail32()).transfers.size(), 2u);
  EXPECT_TRUE(make_plan("ring", Op::AllReduce, iota(4), 0, naive(), rail32()).transfers.empty());
}

TEST(RingAllgatherReducescatter, CarryNMinusOneOverN) {
  // S is the whole array: (n-1)/n * S = 7/8 * 8 MiB = 7 MiB per hop, n-1 = 7 steps.
  for (Op op : {Op::AllGather, Op::ReduceScatter}) {
    const auto plan = make_plan("ring", op, iota(8), 8_MiB, naive(), rail32());
    ASSERT_EQ(plan.transfers.size(), 1u);
    EXPECT_EQ(plan.transfers[0].bytes, 7_MiB) << op_name(op);
    EXPECT_EQ(plan.transfers[0].latency_steps, 7);
    EXPECT_FALSE(plan.transfers[0].open);
  }
  // 2 channels: 7/8 * 4 MiB = 3.5 MiB.
  const auto plan = make_plan("ring", Op::AllGather, iota(8), 8_MiB, naive(2), rail32());
  ASSERT_EQ(plan.transfers.size(), 2u);
  EXPECT_EQ(plan.transfers[1].bytes, 3_MiB + 512_KiB);
}

TEST(RingBroadcastReduce, OpenChainFromAndToTheRoot) {
  // Root = group[0] = 5. Broadcast: a chain 5 -> 6 -> 7 -> 0 -> ... -> 4
  // (the group order rotated to start at the root), S per hop, n-1 steps.
  const Group g = {5, 6, 7, 0, 1, 2, 3, 4};
  const auto bc = make_plan("ring", Op::Broadcast, g, 8_MiB, naive(), rail32());
  ASSERT_EQ(bc.transfers.size(), 1u);
  EXPECT_TRUE(bc.transfers[0].open);
  EXPECT_EQ(bc.transfers[0].ranks, g);
  EXPECT_EQ(bc.transfers[0].bytes, 8_MiB);
  EXPECT_EQ(bc.transfers[0].latency_steps, 7);
  // Reduce: the same chain reversed, ending at the root.
  const auto rd = make_plan("ring", Op::Reduce, g, 8_MiB, naive(), rail32());
  ASSERT_EQ(rd.transfers.size(), 1u);
  EXPECT_TRUE(rd.transfers[0].open);
  EXPECT_EQ(rd.transfers[0].ranks, (Group{4, 3, 2, 1, 0, 7, 6, 5}));
  EXPECT_EQ(rd.transfers[0].bytes, 8_MiB);
  // With topology-aware order the chain still starts at the root.
  Options o;
  o.channels = 4;
  const auto ta = make_plan("ring", Op::Broadcast, {9, 1, 17, 25, 0, 8, 16, 24}, 8_MiB, o, rail32());
  ASSERT_EQ(ta.transfers.size(), 4u);
  for (const auto& t : ta.transfers) {
    EXPECT_EQ(t.ranks.front(), 9);
    EXPECT_EQ(t.bytes, 2_MiB);
  }
}

TEST(RingAllreduce, TopologyAwareChannelsUseDifferentOrders) {
  Options o;
  o.channels = 2;
  const auto plan = make_plan("ring", Op::AllReduce, iota(32), 32_MiB, o, rail32());
  ASSERT_EQ(plan.transfers.size(), 2u);
  EXPECT_NE(plan.transfers[0].ranks, plan.transfers[1].ranks);
  // 2*31/32 * 16 MiB = 31 MiB.
  EXPECT_EQ(plan.transfers[0].bytes, 31_MiB);
  EXPECT_EQ(plan.transfers[0].latency_steps, 62);
}

}  // namespace
}  // namespace podnet::collective
