#include "collective/pairwise.hpp"

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

TEST(Pairwise, AlltoallEveryOrderedPairOnce) {
  // n = 8, S = 8 MiB per rank: n(n-1) = 56 transfers of S/n = 1 MiB, all
  // concurrent; each rank sends (n-1)/n * S = 7 MiB.
  const auto plan = make_plan("pairwise", Op::AllToAll, iota(8, 8), 8_MiB, {}, rail32());
  ASSERT_EQ(plan.transfers.size(), 56u);
  std::set<std::pair<int32_t, int32_t>> pairs;
  for (const auto& t : plan.transfers) {
    EXPECT_EQ(t.kind, TransferKind::P2p);
    EXPECT_EQ(t.bytes, 1_MiB);
    EXPECT_TRUE(t.deps.empty());
    EXPECT_NE(t.ranks[0], t.ranks[1]);
    pairs.insert({t.ranks[0], t.ranks[1]});
  }
  EXPECT_EQ(pairs.size(), 56u);
  for (const auto& [rank, b] : bytes_sent_by_rank(plan)) EXPECT_EQ(b, 7_MiB) << rank;
  // Channels do not multiply transfers.
  Options o;
  o.channels = 4;
  EXPECT_EQ(make_plan("pairwise", Op::AllToAll, iota(8), 8_MiB, o, rail32()).transfers.size(), 56u);
}

TEST(Pairwise, RefusesHugeAlltoall) {
  // 2001 GPUs: 2001 * 2000 = 4,002,000 transfers > 4,000,000.
  const auto big = testing::rail_clos(2048);
  try {
    make_plan("pairwise", Op::AllToAll, iota(2001), 8_MiB, {}, big);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("analytical engine"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("4002000"), std::string::npos) << e.what();
  }
}

TEST(P2p, SendrecvToTheNextRank) {
  // Each of n = 4 ranks sends S to (i+1) mod n in group order.
  const Group g = {3, 9, 17, 30};
  const auto plan = make_plan("p2p", Op::SendRecv, g, 4_MiB, {}, rail32());
  ASSERT_EQ(plan.transfers.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(plan.transfers[i].ranks, (std::vector<int32_t>{g[i], g[(i + 1) % 4]}));
    EXPECT_EQ(plan.transfers[i].bytes, 4_MiB);
    EXPECT_TRUE(plan.transfers[i].deps.empty());
  }
}

}  // namespace
}  // namespace podnet::collective
