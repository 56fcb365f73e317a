#include "collective/tree.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "collective/test_topologies.hpp"

namespace podnet::collective {
namespace {

using namespace podnet::literals;
using plan::TransferKind;
using testing::iota;
using testing::naive;
using testing::rail32;

TEST(Btree, MatchesNcclIllustration) {
  // ncclGetBtree for 14 ranks (comment in NCCL src/graph/trees.cc):
  //   0 -> 8; 8 -> 4, 12; 4 -> 2, 6; 12 -> 10, 13; 2 -> 1, 3; 6 -> 5, 7; 10 -> 9, 11
  const auto p = btree_parents(14);
  const std::vector<int32_t> expected = {-1, 2, 4, 2, 8, 6, 4, 6, 0, 10, 12, 10, 8, 12};
  EXPECT_EQ(p, expected);
}

TEST(Dtree, MirrorForEvenShiftForOdd) {
  // Even n = 12: tree 1 is the mirror (i -> 11 - i); NCCL's picture has
  // root 11 with child 3, 3 -> 1, 7; 7 -> 5, 9.
  auto t = dtree_parents(12);
  for (int32_t i = 0; i < 12; ++i) {
    const int32_t p0 = t[0][11 - i];
    EXPECT_EQ(t[1][i], p0 < 0 ? -1 : 11 - p0) << i;
  }
  EXPECT_EQ(t[1][11], -1);
  EXPECT_EQ(t[1][3], 11);
  EXPECT_EQ(t[1][7], 3);
  EXPECT_EQ(t[1][1], 3);
  // Odd n = 13: tree 1 is tree 0 shifted by one (NCCL's picture: root 1;
  // 1 -> 9; 9 -> 5, 0; 0 -> 11; 11 -> 10, 12).
  t = dtree_parents(13);
  EXPECT_EQ(t[1][1], -1);
  EXPECT_EQ(t[1][9], 1);
  EXPECT_EQ(t[1][0], 9);
  EXPECT_EQ(t[1][11], 0);
  EXPECT_EQ(t[1][12], 11);  // parent0(11) = 10, shifted: 11
}

TEST(Dtree, EvenTreesAreComplementary) {
  // For even n no position is an interior node (has a child) in both trees:
  // tree 0's interior nodes are even, the mirror's are odd.
  for (int32_t n : {2, 4, 6, 8, 12, 16, 30, 64}) {
    const auto t = dtree_parents(n);
    std::set<int32_t> interior0, interior1;
    for (int32_t i = 0; i < n; ++i) {
      if (t[0][i] >= 0) interior0.insert(t[0][i]);
      if (t[1][i] >= 0) interior1.insert(t[1][i]);
    }
    for (int32_t x : interior0) EXPECT_EQ(interior1.count(x), 0u) << "n=" << n << " pos " << x;
  }
}

TEST(Dtree, BothTreesSpanAndDepthIsCeilLog2) {
  for (int32_t n = 2; n <= 70; ++n) {
    const auto t = dtree_parents(n);
    const int32_t expected = static_cast<int32_t>(std::ceil(std::log2(n)));
    for (int k = 0; k < 2; ++k) {
      int roots = 0;
      for (int32_t i = 0; i < n; ++i) roots += t[k][i] < 0;
      EXPECT_EQ(roots, 1) << "n=" << n;
      EXPECT_EQ(tree_depth(t[k]), expected) << "n=" << n << " tree " << k;  // finite: no cycles
    }
  }
}

TEST(TreeAllreduce, TwoCoupledTreesOfHalfTheBuffer) {
  // n = 8, S = 8 MiB: per tree one Coupled transfer with n-1 = 7 up edges and
  // 7 down edges of S/2 = 4 MiB each; latency 2*ceil(log2 8) = 6.
  const auto plan = make_plan("tree", Op::AllReduce, iota(8), 8_MiB, naive(), rail32());
  ASSERT_EQ(plan.transfers.size(), 2u);
  std::vector<std::set<std::pair<int32_t, int32_t>>> up(2);
  for (int k = 0; k < 2; ++k) {
    const auto& t = plan.transfers[k];
    EXPECT_EQ(t.kind, TransferKind::Coupled);
    EXPECT_EQ(t.bytes, 4_MiB);
    EXPECT_EQ(t.latency_steps, 6);
    ASSERT_EQ(t.edges.size(), 14u);
    EXPECT_EQ(t.ranks, iota(8));
    std::set<std::pair<int32_t, int32_t>> edges(t.edges.begin(), t.edges.end());
    EXPECT_EQ(edges.size(), 14u);
    for (size_t i = 0; i < 7; ++i) {
      const auto [c, p] = t.edges[i];
      up[k].insert({c, p});
      EXPECT_EQ(edges.count({p, c}), 1u);  // every reduce edge has its broadcast edge
    }
  }
  // Mirror property (naive order, so ranks = positions): edge c->p in tree 0
  // <=> 7-c -> 7-p in tree 1.
  for (const auto& [c, p] : up[0]) EXPECT_EQ(up[1].count({7 - c, 7 - p}), 1u) << c << "->" << p;
  // Per rank over both trees: interior in one tree (<= 3 edges out of S/2)
  // and leaf in the other (1 edge): at most 2S = 16 MiB.
  for (const auto& [rank, b] : bytes_sent_by_rank(plan)) EXPECT_LE(b, 16_MiB) << rank;
}

TEST(TreeAllreduce, ChannelsSplitFurther) {
  // 2 channels x 2 trees, each S/2/2 = 2 MiB.
  const auto plan = make_plan("tree", Op::AllReduce, iota(16), 8_MiB, naive(2), rail32());
  ASSERT_EQ(plan.transfers.size(), 4u);
  for (const auto& t : plan.transfers) {
    EXPECT_EQ(t.bytes, 2_MiB);
    EXPECT_EQ(t.edges.size(), 30u);  // 2(n-1)
    EXPECT_EQ(t.latency_steps, 8);   // 2*ceil(log2 16)
  }
}

TEST(TreeBroadcastReduce, RootFeedsBothTrees) {
  // n = 8, root = group[0] = 3: per tree n-1 = 7 edges of S/2, each non-root
  // rank receiving exactly once per tree, the root sending once per tree.
  const Group g = {3, 0, 1, 2, 4, 5, 6, 7};
  const auto bc = make_plan("tree", Op::Broadcast, g, 8_MiB, naive(), rail32());
  ASSERT_EQ(bc.transfers.size(), 2u);
  for (const auto& t : bc.transfers) {
    EXPECT_EQ(t.kind, TransferKind::Coupled);
    EXPECT_EQ(t.bytes, 4_MiB);
    ASSERT_EQ(t.edges.size(), 7u);
    std::map<int32_t, int> in, out;
    for (const auto& [s, d] : t.edges) ++out[s], ++in[d];
    EXPECT_EQ(in.count(3), 0u);
    EXPECT_EQ(out[3], 1);
    for (int32_t r : g) {
      if (r == 3) continue;
      EXPECT_EQ(in[r], 1) << r;
    }
    // tree over the 7 others has depth ceil(log2 7) = 3, plus the root edge.
    EXPECT_EQ(t.latency_steps, 4);
  }
  const auto rd = make_plan("tree", Op::Reduce, g, 8_MiB, naive(), rail32());
  ASSERT_EQ(rd.transfers.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    ASSERT_EQ(rd.transfers[k].edges.size(), 7u);
    for (size_t i = 0; i < 7; ++i) {
      EXPECT_EQ(rd.transfers[k].edges[i].first, bc.transfers[k].edges[i].second);
      EXPECT_EQ(rd.transfers[k].edges[i].second, bc.transfers[k].edges[i].first);
    }
  }
}

}  // namespace
}  // namespace podnet::collective
