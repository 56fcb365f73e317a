// torus: counts, diameter and bisection derived from first principles
// (arithmetic in comments), diameter also checked by BFS over the built graph.
#include <gtest/gtest.h>

#include <deque>
#include <set>

#include "core/error.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::topology {
namespace {

using namespace podnet::topology::testing;

using namespace podnet::literals;

Hardware chip_hw(int gpus_per_server = 1) {
  Hardware hw = default_hardware();
  hw.gpus_per_server = gpus_per_server;
  hw.nics_per_server = 0;
  hw.nvlink_domain = gpus_per_server;
  return hw;
}

Topology torus(const std::string& dims, std::vector<std::pair<std::string, std::string>> more = {},
               const Hardware& hw = chip_hw()) {
  more.emplace_back("dims", dims);
  return build_with("torus", more, hw);
}

// Longest shortest path in chip-to-chip links, by BFS from every chip.
int bfs_diameter(const Topology& t) { return testing::bfs_diameter(t, t.gpus, NodeKind::Gpu); }

int degree(const Topology& t, NodeId n) {
  auto [b, e] = t.incident(n);
  return static_cast<int>(e - b);
}

TEST(Torus, DegreeLinksDiameterBisection) {
  struct Case {
    std::string dims;
    int64_t n;          // product of dims
    int deg;            // 2 per dimension (>= 3)
    int64_t links;      // N per dimension (>= 3)
    int diameter;       // sum floor(k/2)
    int64_t cut_links;  // 2N / k_max
  };
  const Case cases[] = {
      {"[8]", 8, 2, 8, 4, 2 * 8 / 8},                       // a ring: 2 cut links
      {"[4, 4]", 16, 4, 16 * 2, 2 + 2, 2 * 16 / 4},         // 8 cut links
      {"4x4x4", 64, 6, 64 * 3, 2 + 2 + 2, 2 * 64 / 4},      // 32 cut links
      {"[3, 5]", 15, 4, 15 * 2, 1 + 2, 2 * 15 / 5},         // 6: k_max = 5, odd, halves of 2 and 3
      {"[3, 4, 5]", 60, 6, 60 * 3, 1 + 2 + 2, 2 * 60 / 5},  // 24
  };
  for (const auto& c : cases) {
    Topology t = torus(c.dims);
    EXPECT_EQ(t.family, "torus");
    ASSERT_EQ(static_cast<int64_t>(t.gpus.size()), c.n) << c.dims;
    EXPECT_EQ(static_cast<int64_t>(t.links.size()), c.links) << c.dims;
    for (NodeId g : t.gpus) ASSERT_EQ(degree(t, g), c.deg) << c.dims;
    EXPECT_TRUE(t.nics.empty());
    EXPECT_EQ(t.switch_tiers(), 0);
    EXPECT_EQ(t.facts.diameter_hops, c.diameter) << c.dims;
    EXPECT_EQ(bfs_diameter(t), c.diameter) << c.dims;
    // default link_speed 400 Gb/s per direction
    EXPECT_DOUBLE_EQ(t.facts.bisection_bps, static_cast<double>(c.cut_links) * 400e9) << c.dims;
    EXPECT_EQ(t.facts.max_gpus, c.n);
  }
}

// A 1-D torus is a ring: chip r links to (r + 1) mod k, port 0 toward +1 and
// port 1 toward -1; the farthest chip of a ring of 8 is 4 links away.
TEST(Torus, OneDimensionIsARing) {
  Topology t = torus("[8]");
  ASSERT_EQ(t.gpus.size(), 8u);
  ASSERT_EQ(t.links.size(), 8u);
  EXPECT_EQ(t.torus_dims, std::vector<int32_t>({8}));
  for (int32_t r = 0; r < 8; ++r) {
    const Link& l = t.links[static_cast<size_t>(r)];
    EXPECT_EQ(l.a, t.gpus[static_cast<size_t>(r)]);
    EXPECT_EQ(l.b, t.gpus[static_cast<size_t>((r + 1) % 8)]);
    EXPECT_EQ(l.port_a, 0);
    EXPECT_EQ(l.port_b, 1);
  }
  EXPECT_EQ(bfs_diameter(t), 4);
  // A ring of 2 is one link.
  EXPECT_EQ(torus("[2]").links.size(), 1u);
}

TEST(Torus, SizeTwoDimensionHasOneLink) {
  // [2, 4]: dimension 0 has one neighbour, so N/2 = 4 links there (not 8), N = 8 in dimension 1;
  // degree 1 + 2 = 3; diameter 1 + 2 = 3; bisection cuts dimension 1 (k = 4): 2 * 8 / 4 = 4 links.
  Topology t = torus("[2, 4]");
  EXPECT_EQ(count_class(t, "torus-x"), 4);
  EXPECT_EQ(count_class(t, "torus-y"), 8);
  for (NodeId g : t.gpus) EXPECT_EQ(degree(t, g), 3);
  EXPECT_EQ(t.facts.diameter_hops, 3);
  EXPECT_EQ(bfs_diameter(t), 3);
  EXPECT_DOUBLE_EQ(t.facts.bisection_bps, 4 * 400e9);
  // [2, 2]: a 4-cycle; cut the (first) largest dimension, k = 2: one link per ring, N/2 = 2.
  Topology sq = torus("[2, 2]");
  EXPECT_EQ(sq.links.size(), 4u);
  EXPECT_DOUBLE_EQ(sq.facts.bisection_bps, 2 * 400e9);
  EXPECT_EQ(bfs_diameter(sq), 2);
}

TEST(Torus, PortsDirectionsAndNeighbours) {
  // Rank r = x + 4 y + 16 z in a 4x4x4 torus; a -> b is the + direction, port 2d on a, 2d+1 on b.
  Topology t = torus("4x4x4");
  const char* cls[] = {"torus-x", "torus-y", "torus-z"};
  std::vector<int32_t> rank(t.nodes.size(), -1);
  for (size_t r = 0; r < t.gpus.size(); ++r) rank[t.gpus[r]] = static_cast<int32_t>(r);
  const int stride[] = {1, 4, 16};
  for (const auto& l : t.links) {
    int d = 0;
    while (t.link_classes[l.cls] != cls[d]) ++d;
    EXPECT_EQ(l.port_a, 2 * d);
    EXPECT_EQ(l.port_b, 2 * d + 1);
    const int ra = rank[l.a], rb = rank[l.b];
    const int xa = ra / stride[d] % 4;
    EXPECT_EQ(rb, ra + (((xa + 1) % 4) - xa) * stride[d]);
  }
  for (NodeId g : t.gpus) EXPECT_EQ(t.nodes[g].ports, 6);
  EXPECT_EQ(t.torus_dims, (std::vector<int32_t>{4, 4, 4}));
  EXPECT_EQ(t.switch_latency, Time(0));  // no switches; router time is in the links
}

TEST(Torus, CubesMediaAndLatency) {
  // 8x8 in 4x4 cubes: per ring of 8, links x -> x+1 stay in a cube for x in {0,1,2,4,5,6} (6 of 8);
  // 3 -> 4 and the wrap 7 -> 0 leave it. So 2 * 64 = 128 links: 96 copper (1 m), 32 optical (30 m).
  Topology t = torus("[8, 8]", {{"cube", "[4, 4]"}});
  int64_t copper = 0, optical = 0;
  for (const auto& l : t.links) {
    if (l.media == Media::Copper) {
      ++copper;
      EXPECT_FLOAT_EQ(l.length_m, 1.0f);
      EXPECT_EQ(l.latency, 105_ns);  // 1 m x 5 ns/m + 100 ns hop
    } else {
      ++optical;
      EXPECT_EQ(l.media, Media::Optical);
      EXPECT_FLOAT_EQ(l.length_m, 30.0f);
      EXPECT_EQ(l.latency, 250_ns);  // 30 m x 5 ns/m + 100 ns hop
    }
  }
  EXPECT_EQ(copper, 96);
  EXPECT_EQ(optical, 32);
  // groups = cubes, block coordinates (x/4, y/4) with x fastest: (5, 2) -> cube (1, 0) = 1; (1, 6) -> (0, 1) = 2.
  EXPECT_EQ(t.groups, 4);
  EXPECT_EQ(t.nodes[t.gpus[5 + 8 * 2]].group, 1);
  EXPECT_EQ(t.nodes[t.gpus[1 + 8 * 6]].group, 2);
  // A dimension equal to its cube keeps its wrap link inside the cube: 4x4 in 4x4x4 cubes is all copper.
  Topology one = torus("[4, 4]");
  for (const auto& l : one.links) EXPECT_EQ(l.media, Media::Copper);
  EXPECT_EQ(one.groups, 1);
}

TEST(Torus, TpuV4Pod) {
  // 16x16x16 = 4096 chips, 4 per server (a TPU v4 tray) -> 1024 servers.
  // Links 3N = 12288; per ring of 16 in 4-cubes 12 short + 4 long -> 9216 copper, 3072 optical
  // (the paper's 6,144 optical links count each cube-to-cube link twice, chip -> OCS -> chip).
  // Diameter 3 * 8 = 24; bisection 2N/16 = 512 links x 400 Gb/s = 204.8 Tb/s = 25.6 TB/s per direction.
  Topology t = torus("[16, 16, 16]", {}, chip_hw(4));
  EXPECT_EQ(t.gpus.size(), 4096u);
  EXPECT_EQ(t.servers, 1024);
  EXPECT_EQ(t.links.size(), 12288u);
  int64_t optical = 0;
  for (const auto& l : t.links) optical += l.media == Media::Optical;
  EXPECT_EQ(optical, 3072);
  EXPECT_EQ(t.groups, 64);
  EXPECT_EQ(t.facts.diameter_hops, 24);
  EXPECT_DOUBLE_EQ(t.facts.bisection_bps, 512 * 400e9);
  std::set<std::string> names;
  for (const auto& n : t.nodes) names.insert(n.name);
  EXPECT_EQ(names.size(), t.nodes.size());
}

TEST(Torus, DimsFromGpus) {
  // Most cube-like factorization: 4096 = 16^3; 1024 = 8 * 8 * 16; 6 = 2 * 3 (no 3-factor form with factors >= 2).
  Topology a = build_with("torus", {{"gpus", "4096"}}, chip_hw());
  EXPECT_EQ(a.facts.diameter_hops, 24);
  EXPECT_EQ(count_class(a, "torus-z"), 4096);
  Topology b = build_with("torus", {{"gpus", "1024"}}, chip_hw());
  EXPECT_EQ(b.facts.diameter_hops, 4 + 4 + 8);
  Topology c = build_with("torus", {{"gpus", "6"}}, chip_hw());
  EXPECT_EQ(c.links.size(), 3u + 6u);  // size-2 dimension: 3 links; size 3: 6
  EXPECT_EQ(count_class(c, "torus-z"), 0);
  // Defaults: 4x4x4.
  Topology d = build_with("torus", {}, chip_hw());
  EXPECT_EQ(d.gpus.size(), 64u);
}

TEST(Torus, ImpossibleValues) {
  EXPECT_EQ(param_error_key([] { torus("[2, 2, 2, 2]"); }), "topology.dims");
  EXPECT_EQ(param_error_key([] { torus("[4, 4, 4]", {{"gpus", "100"}}); }), "topology.gpus");
  EXPECT_EQ(param_error_key([] { build_with("torus", {{"gpus", "7"}}, chip_hw()); }), "topology.gpus");
  EXPECT_EQ(param_error_key([] { torus("[4, 4, 4]", {{"cube", "[4, 4]"}}); }), "topology.cube");
  EXPECT_EQ(param_error_key([] { torus("[4, 4]", {}, chip_hw(3)); }), "server.gpus");  // 16 % 3 != 0
  // server.nics is ignored (with a note), not an error
  Hardware hw = default_hardware();  // 8 GPUs, 8 NICs per server
  Topology t = torus("[4, 4, 4]", {}, hw);
  EXPECT_TRUE(t.nics.empty());
  EXPECT_EQ(t.servers, 8);
}

}  // namespace
}  // namespace podnet::topology
