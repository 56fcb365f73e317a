#include "routing/network_graph.hpp"

#include <gtest/gtest.h>

#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::routing {
namespace {

using topology::build_with;
using topology::Topology;

// Hops to an edge switch T of a k = 4 fat-tree: itself 0; an aggregation switch of its pod 1; the other edge
// switch of its pod 2 (up and down); a core 2 (down to T's pod, then to T); another pod's aggregation 3; another
// pod's edge 4.
void expect_hops_to_edge_switch(const Topology& t, NetworkGraph& g, int32_t target) {
  const int32_t pod = t.nodes[g.node_of(target)].pod;
  const int16_t* d = g.table(target, false, false);
  for (int32_t u = 0; u < g.size(); ++u) {
    const auto& n = t.nodes[g.node_of(u)];
    const bool same = n.pod == pod;
    const int want = u == target ? 0 : n.tier == 1 ? (same ? 2 : 4) : n.tier == 2 ? (same ? 1 : 3) : 2;
    EXPECT_EQ(d[u], want) << "target " << target << ", " << n.name;
  }
}

TEST(NetworkGraph, FatTreeDistancesAndTheLiveAndWholeViews) {
  // k = 4 fat-tree: 8 edge (tier 1), 8 aggregation (tier 2) and 4 core
  // (tier 3) switches = 20 network nodes; switch-to-switch links: 8 x 2
  // edge-aggregation + 8 x 2 aggregation-core = 32, each an edge in the
  // lists of both ends: 64.
  const Topology t = build_with("fat_tree", {{"k", "4"}}, topology::testing::hw_with(1, 1, 4));
  NetworkGraph g(t);
  ASSERT_EQ(g.size(), 20);
  EXPECT_EQ(g.edge_end(g.size() - 1), 64);
  int32_t target = -1, other = -1;
  for (int32_t i = 0; i < g.size() && other < 0; ++i) {
    const auto& n = t.nodes[g.node_of(i)];
    if (n.tier != 1) continue;
    if (target < 0) target = i;
    else if (n.pod != t.nodes[g.node_of(target)].pod) other = i;
  }
  ASSERT_GE(target, 0);
  ASSERT_GE(other, 0);
  expect_hops_to_edge_switch(t, g, target);
  // Another pod's edge switch E loses both uplink directions: the live view
  // cannot reach T from E, the whole-graph view still counts 4 hops; one
  // direction back and the live view has 4 again.
  std::vector<DirLink> up;
  for (int32_t e = g.edge_begin(other); e < g.edge_end(other); ++e) up.push_back(g.edge(e).dir);
  ASSERT_EQ(up.size(), 2u);  // k / 2 uplinks, no downlink to another switch
  EXPECT_TRUE(g.set_dir_up(up[0], false));
  EXPECT_FALSE(g.set_dir_up(up[0], false));  // already down
  EXPECT_TRUE(g.set_dir_up(up[1], false));
  EXPECT_TRUE(g.any_down());
  EXPECT_EQ(g.down_links(), 2);
  EXPECT_FALSE(g.link_up(link_of(up[0])));
  EXPECT_EQ(g.table(target, false, false)[other], -1);
  EXPECT_EQ(g.table(target, false, true)[other], 4);
  EXPECT_EQ(g.table(target, false, false)[target], 0);
  g.set_dir_up(up[1], true);
  EXPECT_EQ(g.down_links(), 1);
  EXPECT_EQ(g.table(target, false, false)[other], 4);
}

// k = 4 fat-tree: the two edge switches of a pod reach the same aggregation switches, so they are twins; so are
// the two cores of a group, which reach the same aggregation switch of every pod. A pod's aggregation switches
// reach different cores: no twins. Every edge switch's table (a twin's taken from its first twin's, two entries
// swapped) holds the hop counts worked out by hand (expect_hops_to_edge_switch).
TEST(NetworkGraph, TwinsShareTheirTablesAndStillGiveEachItsOwnDistances) {
  const Topology t = build_with("fat_tree", {{"k", "4"}}, topology::testing::hw_with(1, 1, 4));
  NetworkGraph g(t);
  int twins = 0;
  for (int32_t i = 0; i < g.size(); ++i) {
    const auto& n = t.nodes[g.node_of(i)];
    const int32_t f = g.twin(i);
    ASSERT_LE(f, i);
    if (f == i) continue;
    ++twins;
    const auto& m = t.nodes[g.node_of(f)];
    EXPECT_EQ(m.tier, n.tier);
    if (n.tier == 1) EXPECT_EQ(m.pod, n.pod);  // an edge switch's twin is the other one of its pod
  }
  EXPECT_EQ(twins, 4 + 2);  // one edge switch in each of 4 pods, one core in each of 2 groups
  for (int32_t target = 0; target < g.size(); ++target)
    if (t.nodes[g.node_of(target)].tier == 1) expect_hops_to_edge_switch(t, g, target);
}

}  // namespace
}  // namespace podnet::routing
