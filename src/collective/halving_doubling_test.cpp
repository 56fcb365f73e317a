#include "collective/halving_doubling.hpp"

#include <gtest/gtest.h>

#include <set>

#include "collective/test_topologies.hpp"
#include "core/error.hpp"

namespace podnet::collective {
namespace {

using namespace podnet::literals;
using plan::TransferKind;
using testing::iota;
using testing::naive;
using testing::rail32;

TEST(HalvingDoubling, AllreducePhasesForEightRanks) {
  // n = 8, S = 8 MiB, naive order (positions = ranks). Reduce-scatter by
  // halving: distance 4, 2, 1 with S/2, S/4, S/8 = 4, 2, 1 MiB; all-gather by
  // doubling mirrors it: distance 1, 2, 4 with 1, 2, 4 MiB. 6 phases x 8.
  const auto plan = make_plan("halving_doubling", Op::AllReduce, iota(8), 8_MiB, naive(), rail32());
  ASSERT_EQ(plan.transfers.size(), 48u);
  const int32_t distance[6] = {4, 2, 1, 1, 2, 4};
  const Bytes bytes[6] = {4_MiB, 2_MiB, 1_MiB, 1_MiB, 2_MiB, 4_MiB};
  for (int ph = 0; ph < 6; ++ph) {
    std::set<int32_t> senders;
    for (int i = 0; i < 8; ++i) {
      const auto& t = plan.transfers[ph * 8 + i];
      EXPECT_EQ(t.kind, TransferKind::P2p);
      EXPECT_EQ(t.ranks[1], t.ranks[0] ^ distance[ph]) << "phase " << ph;
      EXPECT_EQ(t.bytes, bytes[ph]) << "phase " << ph;
      senders.insert(t.ranks[0]);
      // Deps: the previous phase's transfers sent or received by either end:
      // none in phase 0; 4 after a phase with a different partner; 2 at the
      // turn (phase 3 pairs the same ranks as phase 2).
      const size_t expected = ph == 0 ? 0 : ph == 3 ? 2 : 4;
      EXPECT_EQ(t.deps.size(), expected) << "phase " << ph;
      for (int32_t d : t.deps) {
        EXPECT_GE(d, (ph - 1) * 8);
        EXPECT_LT(d, ph * 8);
        const auto& dep = plan.transfers[d];
        const std::set<int32_t> ends = {t.ranks[0], t.ranks[1]};
        EXPECT_TRUE(ends.count(dep.ranks[0]) || ends.count(dep.ranks[1]));
      }
    }
    EXPECT_EQ(senders.size(), 8u);  // every rank sends once per phase
  }
  // Per rank: 2 x (S/2 + S/4 + S/8) = 2 x 7S/8 = 2(n-1)/n * S = 14 MiB.
  const auto sent = bytes_sent_by_rank(plan);
  ASSERT_EQ(sent.size(), 8u);
  for (const auto& [rank, b] : sent) EXPECT_EQ(b, 14_MiB) << rank;
}

TEST(HalvingDoubling, ReduceScatterAndAllgatherAreTheHalves) {
  // S = whole array = 8 MiB: (n-1)/n * S = 7 MiB per rank over 3 phases.
  const auto rs = make_plan("halving_doubling", Op::ReduceScatter, iota(8), 8_MiB, naive(), rail32());
  ASSERT_EQ(rs.transfers.size(), 24u);
  EXPECT_EQ(rs.transfers[0].bytes, 4_MiB);
  EXPECT_EQ(rs.transfers[23].bytes, 1_MiB);
  const auto ag = make_plan("halving_doubling", Op::AllGather, iota(8), 8_MiB, naive(), rail32());
  ASSERT_EQ(ag.transfers.size(), 24u);
  EXPECT_EQ(ag.transfers[0].bytes, 1_MiB);
  EXPECT_EQ(ag.transfers[0].ranks[1], 1);
  EXPECT_EQ(ag.transfers[23].bytes, 4_MiB);
  for (const auto* plan : {&rs, &ag})
    for (const auto& [rank, b] : bytes_sent_by_rank(*plan)) EXPECT_EQ(b, 7_MiB) << rank;
}

TEST(HalvingDoubling, ChannelsAreIndependentCopies) {
  const auto plan = make_plan("halving_doubling", Op::AllReduce, iota(4), 8_MiB, naive(2), rail32());
  // n = 4: 2 + 2 phases of 4 transfers, per channel: 32 transfers.
  ASSERT_EQ(plan.transfers.size(), 32u);
  for (size_t i = 16; i < 32; ++i) {
    EXPECT_EQ(plan.transfers[i].channel, 1);
    for (int32_t d : plan.transfers[i].deps) EXPECT_GE(d, 16);
  }
  EXPECT_EQ(plan.transfers[16].bytes, 2_MiB);  // S/2 channels/2 halving
}

TEST(HalvingDoubling, RejectsNonPowerOfTwo) {
  EXPECT_THROW(make_plan("halving_doubling", Op::AllReduce, iota(6), 8_MiB, naive(), rail32()), InputError);
  try {
    make_plan("halving_doubling", Op::AllReduce, iota(12), 8_MiB, naive(), rail32());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("power-of-two"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("12"), std::string::npos) << e.what();
  }
  EXPECT_EQ(make_plan("halving_doubling", Op::AllReduce, iota(2), 8_MiB, naive(), rail32()).transfers.size(), 4u);
}

TEST(HalvingDoubling, RefusesHugePlans) {
  // 4096 GPUs, 64 channels, 2 log2(4096) = 24 phases:
  // 64 x 4096 x 24 = 6,291,456 transfers > 4,000,000: refused.
  const auto big = testing::rail_clos(4096);
  Options o = naive(64);
  try {
    make_plan("halving_doubling", Op::AllReduce, iota(4096), 1_GiB, o, big);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("6291456"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace podnet::collective
