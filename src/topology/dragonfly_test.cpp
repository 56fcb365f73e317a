// dragonfly and dragonfly_plus: counts from the Kim/Dally formulas (arithmetic
// in comments), diameters also checked by BFS over the built switch graph.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <set>

#include "core/error.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::topology {
namespace {

using namespace podnet::topology::testing;

using Overrides = std::vector<std::pair<std::string, std::string>>;

Overrides shape(int p, int a, int h) {
  return {{"p", std::to_string(p)}, {"a", std::to_string(a)}, {"h", std::to_string(h)}};
}

// Longest shortest path in switch-to-switch links between any two tier-1 switches.
int bfs_diameter(const Topology& t) { return testing::bfs_diameter(t, tier(t, 1), NodeKind::Switch); }

// Global links between each ordered pair of groups.
std::map<std::pair<int, int>, int> global_pairs(const Topology& t) {
  std::map<std::pair<int, int>, int> m;
  for (const auto& l : t.links)
    if (t.link_classes[l.cls] == "global") {
      ++m[{t.nodes[l.a].group, t.nodes[l.b].group}];
      ++m[{t.nodes[l.b].group, t.nodes[l.a].group}];
    }
  return m;
}

TEST(Dragonfly, FullSizeCounts) {
  struct Case {
    int p, a, h;
    int64_t n;  // a p (a h + 1)
  };
  // (2,4,2): 4*2*(4*2+1) = 8*9 = 72; (4,8,4): 8*4*(8*4+1) = 32*33 = 1056.
  for (const Case c : {Case{2, 4, 2, 72}, Case{4, 8, 4, 1056}}) {
    const int k = c.p + c.a - 1 + c.h;                                             // 7 and 15
    const int g = c.a * c.h + 1;                                                   // 9 and 33
    Topology t = build_with("dragonfly", shape(c.p, c.a, c.h), hw_with(1, 1, k));  // radix exactly k
    EXPECT_EQ(t.family, "dragonfly");
    EXPECT_EQ(static_cast<int64_t>(t.gpus.size()), c.n);
    EXPECT_EQ(static_cast<int64_t>(t.nics.size()), c.n);
    EXPECT_EQ(t.facts.max_gpus, c.n);
    EXPECT_EQ(t.groups, g);
    const auto routers = tier(t, 1);
    EXPECT_EQ(static_cast<int>(routers.size()), c.a * g);
    EXPECT_EQ(t.tier_names[1], "router");
    // full size: every router uses all k = p + (a-1) + h ports
    for (NodeId r : routers) ASSERT_EQ(t.nodes[r].ports, k) << t.nodes[r].name;
    EXPECT_EQ(count_class(t, "nic-router"), c.n);
    EXPECT_EQ(count_class(t, "local"), static_cast<int64_t>(g) * c.a * (c.a - 1) / 2);  // 54 and 924
    EXPECT_EQ(count_class(t, "global"), static_cast<int64_t>(g) * (g - 1) / 2);         // 36 and 528
    // g = a h + 1: every pair of groups joined by exactly one global link
    auto pairs = global_pairs(t);
    for (int i = 0; i < g; ++i)
      for (int j = 0; j < g; ++j)
        if (i != j) {
          ASSERT_EQ((pairs[{i, j}]), 1) << i << "," << j;
        }
    // minimal routing local-global-local
    EXPECT_EQ(t.facts.diameter_hops, 3);
    EXPECT_EQ(bfs_diameter(t), 3);
    // cut [0, floor(g/2)) vs rest: floor(g/2) * ceil(g/2) global links (4*5 = 20, 16*17 = 272) x 400 Gb/s
    EXPECT_DOUBLE_EQ(t.facts.bisection_bps, static_cast<double>(g / 2) * (g - g / 2) * 400e9);
    ASSERT_EQ(t.facts.oversubscription.size(), 1u);
    EXPECT_DOUBLE_EQ(t.facts.oversubscription[0].second, static_cast<double>(c.p) / c.h);
    std::set<std::string> names;
    for (const auto& n : t.nodes) names.insert(n.name);
    EXPECT_EQ(names.size(), t.nodes.size());
  }
}

TEST(Dragonfly, ConsecutiveArrangement) {
  // g = a h + 1: port j of group i (router j / h) goes to group (i + j + 1) mod g.
  Topology t = build_with("dragonfly", shape(2, 4, 2), hw_with(1, 1, 7));
  const int g = 9, a = 4, h = 2;
  std::map<std::pair<int, int>, int> router_to_group;  // (global router index, target group) -> links
  for (const auto& l : t.links)
    if (t.link_classes[l.cls] == "global") {
      ++router_to_group[{t.nodes[l.a].local, t.nodes[l.b].group}];
      ++router_to_group[{t.nodes[l.b].local, t.nodes[l.a].group}];
    }
  for (int i = 0; i < g; ++i)
    for (int j = 0; j < a * h; ++j) EXPECT_EQ((router_to_group[{i * a + j / h, (i + j + 1) % g}]), 1) << i << " " << j;
  EXPECT_EQ(t.nodes[tier(t, 1)[a * 3 + 2]].name, "g003-r002");
}

TEST(Dragonfly, UnevenGroupsStayWithinRadixSymmetricConnected) {
  // (p, a, h) = (2, 4, 2): P = a h = 8 global ports per group; for g < 9 each pair gets
  // m = floor(8 / (g-1)) or m + 1 links, every port used (P even), routers within radix 7.
  const int a = 4, h = 2, P = a * h;
  for (int g = 2; g <= 9; ++g) {
    Topology t =
        build_with("dragonfly", {{"p", "2"}, {"a", "4"}, {"h", "2"}, {"g", std::to_string(g)}}, hw_with(1, 1, 7));
    EXPECT_EQ(t.groups, g);
    for (NodeId r : tier(t, 1)) ASSERT_LE(t.nodes[r].ports, 7) << g;
    auto pairs = global_pairs(t);
    const int m = P / (g - 1);
    std::vector<int> ends(g, 0);
    for (int i = 0; i < g; ++i)
      for (int j = 0; j < g; ++j) {
        if (i == j) continue;
        const int k = pairs[{i, j}];
        ends[i] += k;
        EXPECT_EQ(k, (pairs[{j, i}]));  // symmetric
        EXPECT_TRUE(k == m || k == m + 1) << "g=" << g << " " << i << "-" << j << ": " << k;
        // the same seen from every group (rotation): offset (j - i) mod g has one multiplicity
        EXPECT_EQ(k, (pairs[{0, ((j - i) % g + g) % g}])) << g;
      }
    for (int i = 0; i < g; ++i) EXPECT_EQ(ends[i], P) << "g=" << g;
    // connected, every pair of groups directly joined (m >= 1): diameter <= 3
    const int d = bfs_diameter(t);
    EXPECT_EQ(d, t.facts.diameter_hops) << g;
    EXPECT_LE(d, 3) << g;
  }
  // g = 2: the 8 links of each group go to the other; router r of group 0 has its h = 2 global links to
  // router r of group 1, so any router reaches any other in 2 hops (global + local).
  Topology two = build_with("dragonfly", {{"p", "2"}, {"a", "4"}, {"h", "2"}, {"g", "2"}}, hw_with(1, 1, 7));
  EXPECT_EQ(bfs_diameter(two), 2);
  // 64 GPUs: cut between the 2 groups crosses all 8 global links
  EXPECT_DOUBLE_EQ(two.facts.bisection_bps, 8 * 400e9);
}

TEST(Dragonfly, OddPortsLeaveOneUnused) {
  // (p, a, h) = (1, 3, 1): P = 3, g = 3: m = floor(3/2) = 1, r = 1, g odd: one port per group unused.
  Topology t = build_with("dragonfly", {{"p", "1"}, {"a", "3"}, {"h", "1"}, {"g", "3"}}, hw_with(1, 1, 4));
  EXPECT_EQ(count_class(t, "global"), 3);  // one per pair, 3 pairs
  bool noted = false;
  for (const auto& n : t.facts.notes) noted |= n.find("unused") != std::string::npos;
  EXPECT_TRUE(noted);
  // g = 4 (even): r = 3 - 1*3 = 0 -> one link per pair, 6 links, no unused port.
  Topology f = build_with("dragonfly", {{"p", "1"}, {"a", "3"}, {"h", "1"}, {"g", "4"}}, hw_with(1, 1, 4));
  EXPECT_EQ(count_class(f, "global"), 6);
}

// The default shape is the smallest balanced one holding the GPUs; the note names the radix's largest when it
// needs fewer routers. 100,352 GPUs (one NIC each), radix 64: the smallest p with 2p^2(2p^2+1) >= 100,352 is 13
// (p = 12: 288 * 289 = 83,232), a = 26, groups of 338 terminals, g = ceil(100,352 / 338) = 297: 7,722 routers.
// p = 16 (4p - 1 = 63 <= 64): groups of 512, g = 196, 6,272 routers, reaching 512 * 513 = 262,656 GPUs.
TEST(Dragonfly, NoteNamesTheRadixLargestShape) {
  Topology t = build_with("dragonfly", {{"gpus", "100352"}}, hw_with(8, 8, 64));
  EXPECT_EQ(tier(t, 1).size(), 7722u);
  bool said = false;
  for (const auto& n : t.facts.notes)
    said = said || n.find("(p = 16, a = 32, h = 16) holds these GPUs on 6,272 routers instead of 7,722 and reaches "
                          "262,656 GPUs") != std::string::npos;
  EXPECT_TRUE(said);
  // Given a shape, no such note.
  Topology given = build_with("dragonfly", {{"gpus", "100352"}, {"p", "16"}}, hw_with(8, 8, 64));
  EXPECT_EQ(tier(given, 1).size(), 6272u);
  for (const auto& n : given.facts.notes) EXPECT_EQ(n.find("largest balanced"), std::string::npos) << n;
}

TEST(Dragonfly, SixteenK) {
  // gpus = 16384 on 8-GPU/8-NIC servers, radix 32: balanced p = 8 is the smallest p with
  // 2p^2(2p^2+1) >= 16384 (p = 7: 98 * 99 = 9702; p = 8: 128 * 129 = 16512), a = 16, h = 8, k = 31.
  // g = 16384 / (a p = 128) = 128 < a h + 1 = 129: P = 128 ports, m = floor(128/127) = 1, r = 1, g even
  // -> one extra link to the opposite group. Globals = 128 * 128 / 2 = 8192, locals 128 * 16*15/2 = 15360.
  Topology t = build_with("dragonfly", {{"gpus", "16384"}}, hw_with(8, 8, 32));
  EXPECT_EQ(t.gpus.size(), 16384u);
  EXPECT_EQ(t.servers, 2048);
  EXPECT_EQ(t.groups, 128);
  EXPECT_EQ(tier(t, 1).size(), 2048u);
  for (NodeId r : tier(t, 1)) ASSERT_EQ(t.nodes[r].ports, 31);
  EXPECT_EQ(count_class(t, "nic-router"), 16384);
  EXPECT_EQ(count_class(t, "local"), 15360);
  EXPECT_EQ(count_class(t, "global"), 8192);
  EXPECT_EQ(t.facts.max_gpus, 16512);  // 16 * 8 * 129
  EXPECT_EQ(t.switch_latency, default_hardware().switch_latency);
  EXPECT_TRUE(t.torus_dims.empty());
  EXPECT_EQ(t.facts.diameter_hops, 3);
  // cut 64 | 64 groups: 64 * 64 pair links + 64 opposite-group links = 4160 x 400 Gb/s
  EXPECT_DOUBLE_EQ(t.facts.bisection_bps, 4160 * 400e9);
  // rank r uses NIC r (8 GPUs, 8 NICs), router r / p = r / 8, group r / (a p) = r / 128
  EXPECT_EQ(t.nodes[t.gpus[17 * 128]].group, 17);
  EXPECT_EQ(t.nodes[t.gpus[17 * 128 - 1]].group, 16);
}

TEST(Dragonfly, PartialLastGroup) {
  // (2, 4, 2), gpus = 50 on 1-GPU/1-NIC servers: g = ceil(50 / 8) = 7; group 6 holds terminals 48, 49 on
  // its router 0; its routers 1..3 have none. The group is still built whole.
  Topology t = build_with("dragonfly", {{"p", "2"}, {"a", "4"}, {"h", "2"}, {"gpus", "50"}}, hw_with(1, 1, 7));
  EXPECT_EQ(t.groups, 7);
  EXPECT_EQ(t.gpus.size(), 50u);
  EXPECT_EQ(tier(t, 1).size(), 28u);
  EXPECT_EQ(count_class(t, "local"), 7 * 6);
  EXPECT_EQ(count_class(t, "global"), 7 * 8 / 2);  // P = 8 ports per group, all used (P even)
  int empty = 0;
  for (NodeId r : tier(t, 1)) {
    int terminals = 0;
    auto [b, e] = t.incident(r);
    for (auto it = b; it != e; ++it) terminals += t.link_classes[t.links[*it].cls] == "nic-router";
    empty += terminals == 0;
  }
  EXPECT_EQ(empty, 3);
  EXPECT_EQ(t.nodes[t.gpus[49]].group, 6);
}

TEST(Dragonfly, Defaults) {
  // No shape, no gpus: 1024 GPUs, balanced p = 4 (2*16*33 = 1056 >= 1024), a = 8, h = 4,
  // g = 1024 / 32 = 32 groups, 128 servers of 8 GPUs.
  Topology t = build_with("dragonfly", {}, default_hardware());
  EXPECT_EQ(t.gpus.size(), 1024u);
  EXPECT_EQ(t.groups, 32);
  EXPECT_EQ(tier(t, 1).size(), 256u);
  EXPECT_EQ(t.facts.max_gpus, 1056);
}

TEST(Dragonfly, ImpossibleValues) {
  // (4, 8, 4) needs k = 15 ports
  EXPECT_EQ(param_error_key([] { build_with("dragonfly", shape(4, 8, 4), hw_with(1, 1, 14)); }), "switch.radix");
  EXPECT_EQ(param_error_key([] {
              build_with("dragonfly", {{"p", "2"}, {"a", "4"}, {"h", "2"}, {"g", "10"}}, hw_with(1, 1, 7));
            }),
            "topology.g");  // g <= a h + 1 = 9
  EXPECT_EQ(param_error_key([] {
              build_with("dragonfly", {{"p", "2"}, {"a", "4"}, {"h", "2"}, {"gpus", "73"}}, hw_with(1, 1, 7));
            }),
            "topology.gpus");  // > 72
  EXPECT_EQ(param_error_key([] {
              build_with("dragonfly", {{"gpus", "100"}}, hw_with(8, 8, 32));
            }),
            "topology.gpus");  // not a multiple of 8
  EXPECT_EQ(param_error_key([] { build_with("dragonfly", shape(2, 4, 2), hw_with(8, 0, 7)); }), "server.nics");
}

TEST(DragonflyPlus, Counts) {
  // leaves = spines = p = h = 4: g = spines h + 1 = 17, N = leaves p g = 4*4*17 = 272.
  // Leaf ports p + spines = 8, spine ports leaves + h = 8. Leaf-spine links 17 * 16 = 272,
  // global 17 * 16 / 2 = 136 (one per pair of groups).
  Topology t =
      build_with("dragonfly_plus", {{"p", "4"}, {"leaves", "4"}, {"spines", "4"}, {"h", "4"}}, hw_with(1, 1, 8));
  EXPECT_EQ(t.family, "dragonfly_plus");
  EXPECT_EQ(t.gpus.size(), 272u);
  EXPECT_EQ(t.facts.max_gpus, 272);
  EXPECT_EQ(t.groups, 17);
  EXPECT_EQ(t.tier_names[1], "leaf");
  EXPECT_EQ(t.tier_names[2], "spine");
  EXPECT_EQ(tier(t, 1).size(), 68u);
  EXPECT_EQ(tier(t, 2).size(), 68u);
  for (NodeId n : tier(t, 1)) ASSERT_EQ(t.nodes[n].ports, 8);
  for (NodeId n : tier(t, 2)) ASSERT_EQ(t.nodes[n].ports, 8);
  EXPECT_EQ(count_class(t, "nic-leaf"), 272);
  EXPECT_EQ(count_class(t, "leaf-spine"), 272);
  EXPECT_EQ(count_class(t, "global"), 136);
  auto pairs = global_pairs(t);
  for (int i = 0; i < 17; ++i)
    for (int j = 0; j < 17; ++j)
      if (i != j) {
        ASSERT_EQ((pairs[{i, j}]), 1);
      }
  // leaf -> spine -> (global) spine -> leaf
  EXPECT_EQ(t.facts.diameter_hops, 3);
  EXPECT_EQ(bfs_diameter(t), 3);
  // cut 8 | 9 groups: 72 global links x 400 Gb/s
  EXPECT_DOUBLE_EQ(t.facts.bisection_bps, 72 * 400e9);
  // one group: leaf-spine-leaf
  Topology one = build_with("dragonfly_plus", {{"p", "4"}, {"leaves", "4"}, {"spines", "4"}, {"h", "4"}, {"g", "1"}},
                            hw_with(1, 1, 8));
  EXPECT_EQ(bfs_diameter(one), 2);
  EXPECT_EQ(one.facts.diameter_hops, 2);
  // one group cut: leaves {0,1} + spines {0,1} vs the rest: 2*2 + 2*2 = 8 leaf-spine links
  EXPECT_DOUBLE_EQ(one.facts.bisection_bps, 8 * 400e9);
}

TEST(DragonflyPlus, UnevenAndRadix) {
  // g = 6 < 17: P = 16, m = floor(16/5) = 3, r = 1, g even -> opposite group gets 4; all 16 ports used.
  Topology t = build_with("dragonfly_plus", {{"p", "4"}, {"leaves", "4"}, {"spines", "4"}, {"h", "4"}, {"g", "6"}},
                          hw_with(1, 1, 8));
  for (NodeId n : tier(t, 2)) ASSERT_LE(t.nodes[n].ports, 8);
  auto pairs = global_pairs(t);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j)
      if (i != j) {
        EXPECT_EQ((pairs[{i, j}]), (j - i + 6) % 6 == 3 ? 4 : 3);
      }
  EXPECT_EQ(count_class(t, "global"), 6 * 16 / 2);
  EXPECT_EQ(bfs_diameter(t), 3);
  EXPECT_EQ(
      param_error_key([] {
        build_with("dragonfly_plus", {{"p", "4"}, {"leaves", "4"}, {"spines", "4"}, {"h", "4"}}, hw_with(1, 1, 7));
      }),
      "switch.radix");
}

}  // namespace
}  // namespace podnet::topology
