#include "topology/planes.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::topology {
namespace {

// A k = 4 fat-tree of single-NIC hosts: 16 hosts, 8 edge, 8 aggregation and 4 core switches, 16 host
// links, 16 edge-aggregation and 16 aggregation-core links.
Hardware hosts(double nic_gbps, int planes) {
  Hardware hw = testing::hw_with(1, 1, 4);
  hw.nic_speed = Bandwidth(nic_gbps * 1e9);
  hw.port_speed = Bandwidth(100e9);
  hw.nic_planes = planes;
  return hw;
}

TEST(Planes, EveryPlaneIsACopyOfTheFabricAndEachNicHasOnePortInEach) {
  const Topology one = build_with("fat_tree", {{"k", "4"}}, hosts(100, 1));
  const Topology t = build_with("fat_tree", {{"k", "4"}}, hosts(400, 4));
  EXPECT_EQ(t.nic_planes, 4);
  int64_t switches = 0;
  std::vector<int64_t> per_plane(4, 0);
  for (const Node& n : t.nodes)
    if (n.kind == NodeKind::Switch) {
      ++switches;
      ASSERT_GE(n.plane, 0);
      ASSERT_LT(n.plane, 4);
      ++per_plane[static_cast<size_t>(n.plane)];
      EXPECT_EQ(n.name.rfind("p" + std::to_string(n.plane) + "-", 0), 0u) << n.name;
    }
  EXPECT_EQ(switches, 4 * 20);
  for (int64_t c : per_plane) EXPECT_EQ(c, 20);
  // 16 PCIe links, then 48 network links per plane.
  EXPECT_EQ(t.links.size(), 16u + 4u * 48u);
  EXPECT_EQ(one.links.size(), 16u + 48u);
  for (NodeId nic : t.nics) {
    int plane = 0;
    for (auto [l, e] = t.incident(nic); l != e; ++l) {
      const Node& peer = t.nodes[t.other_end(*l, nic)];
      if (peer.kind != NodeKind::Switch) continue;
      EXPECT_EQ(peer.plane, plane++) << "the p-th switch link goes into plane p";
      EXPECT_DOUBLE_EQ(t.links[*l].capacity.bps, 100e9) << "a port of 400G / 4";
    }
    EXPECT_EQ(plane, 4);
  }
  // No link joins two planes.
  for (const Link& l : t.links)
    if (t.nodes[l.a].kind == NodeKind::Switch && t.nodes[l.b].kind == NodeKind::Switch)
      EXPECT_EQ(t.nodes[l.a].plane, t.nodes[l.b].plane);
  EXPECT_DOUBLE_EQ(t.facts.bisection_bps, 4 * one.facts.bisection_bps);
  EXPECT_EQ(t.facts.diameter_hops, one.facts.diameter_hops);
  EXPECT_EQ(t.facts.max_gpus, one.facts.max_gpus);
}

TEST(Planes, ANicSlowerThanItsPortIsNotedWithTheSwitchThatMatchesIt) {
  // One plane of 50G NICs on 100G ports (radix 4: a 0.4 Tb/s switch): the note names the 8-port 50G switch of
  // the same capacity; NICs at the port's speed get no note.
  const auto slower = [](const Topology& t) {
    for (const std::string& n : t.facts.notes)
      if (n.find("takes the whole port") != std::string::npos) return n;
    return std::string();
  };
  const std::string n = slower(build_with("fat_tree", {{"k", "4"}}, hosts(50, 1)));
  EXPECT_NE(n.find("each NIC runs at 50Gbps on a 100Gbps switch port"), std::string::npos) << n;
  EXPECT_NE(n.find("the same 0.4 Tbps switch as 8 ports of 50Gbps is switch.port_speed=50Gbps with "
                   "switch.radix=8"),
            std::string::npos)
      << n;
  EXPECT_EQ(slower(build_with("fat_tree", {{"k", "4"}}, hosts(100, 1))), "");
}

TEST(Planes, RefusedWhereTheyCannotBeBuilt) {
  // 400G in 2 planes is 200G a port, more than the 100G switch port: at least 4 planes.
  try {
    build_with("fat_tree", {{"k", "4"}}, hosts(400, 2));
    FAIL() << "expected a ParamError";
  } catch (const ParamError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("server.nic_planes"), std::string::npos) << m;
    EXPECT_NE(m.find("server.nic_planes >= 4"), std::string::npos) << m;
  }
  // A torus has no NICs; a dragonfly's groups are not a Clos to copy.
  Hardware chips = testing::hw_with(1, 0, 4);
  chips.nic_planes = 2;
  EXPECT_THROW(build_with("torus", {{"dims", "4x4"}}, chips), ParamError);
}

}  // namespace
}  // namespace podnet::topology
