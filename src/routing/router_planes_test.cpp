// Routing on a multi-plane fabric (server.nic_planes, topology/planes.hpp).
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "routing/router.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::routing {
namespace {

using topology::NodeId;
using topology::NodeKind;
using topology::Topology;

// A k = 4 fat-tree of single-NIC hosts (hosts 0-3 in pod 0, 4-7 in pod 1), 400G NICs as `planes` ports.
Topology kary4(int planes) {
  topology::Hardware hw = topology::testing::hw_with(1, 1, 4);
  hw.nic_speed = Bandwidth(100e9 * planes);
  hw.port_speed = Bandwidth(100e9);
  hw.nic_planes = planes;
  return topology::build_with("fat_tree", {{"k", "4"}}, hw);
}

RouteOptions opts(const std::string& policy) {
  RouteOptions o;
  o.policy = policy;
  o.seed = 1;
  return o;
}

TEST(PlaneRouting, EcmpKeepsAFlowInOnePlaneAndSpreadsFlowsOverAll) {
  const Topology t = kary4(4);
  Router r(t, opts("ecmp"));
  std::set<int32_t> planes;
  for (uint64_t qp = 0; qp < 64; ++qp) {
    std::vector<PathPart> p;
    r.route(0, 4, qp, 1, p);
    // GPU -> NIC (PCIe), NIC -> edge -> aggregation -> core -> aggregation -> edge -> NIC, NIC -> GPU.
    ASSERT_EQ(p.size(), 8u);
    NodeId at = t.gpus[0];
    std::set<int32_t> seen;
    for (const PathPart& part : p) {
      EXPECT_EQ(dir_from(part.link, t), at);
      EXPECT_DOUBLE_EQ(part.fraction, 1.0);
      at = dir_to(part.link, t);
      if (t.nodes[at].kind == NodeKind::Switch) seen.insert(t.nodes[at].plane);
    }
    EXPECT_EQ(at, t.gpus[4]);
    ASSERT_EQ(seen.size(), 1u) << "one flow, one plane";
    planes.insert(*seen.begin());
  }
  EXPECT_EQ(planes.size(), 4u);
}

TEST(PlaneRouting, SprayPutsAQuarterOfTheBytesOnEachPlane) {
  const Topology t = kary4(4);
  Router r(t, opts("spray"));
  std::vector<PathPart> p;
  r.route(0, 4, 0, 1, p);
  const NodeId src = t.gpu_nic[0], dst = t.gpu_nic[4];
  std::vector<double> out(4, 0), in(4, 0);
  for (const PathPart& part : p) {
    const NodeId a = dir_from(part.link, t), b = dir_to(part.link, t);
    if (a == src && t.nodes[b].kind == NodeKind::Switch) out[static_cast<size_t>(t.nodes[b].plane)] += part.fraction;
    if (b == dst && t.nodes[a].kind == NodeKind::Switch) in[static_cast<size_t>(t.nodes[a].plane)] += part.fraction;
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(out[static_cast<size_t>(i)], 0.25) << "plane " << i;
    EXPECT_DOUBLE_EQ(in[static_cast<size_t>(i)], 0.25) << "plane " << i;
  }
}

TEST(PlaneRouting, HopsAreAPlanesAndPathsMultiplyByThePlanes) {
  const Topology one = kary4(1), four = kary4(4);
  Router r1(one, opts("ecmp")), r4(four, opts("ecmp"));
  // Across pods: edge, aggregation, core, aggregation, edge; (k/2)^2 = 4 paths in a plane.
  EXPECT_EQ(r1.switch_hops(0, 4), 5);
  EXPECT_EQ(r4.switch_hops(0, 4), 5);
  EXPECT_EQ(r1.equal_cost_paths(0, 4), 4);
  EXPECT_EQ(r4.equal_cost_paths(0, 4), 16);
  // Under one edge switch: 1 switch, 1 path a plane.
  EXPECT_EQ(r4.switch_hops(0, 1), 1);
  EXPECT_EQ(r4.equal_cost_paths(0, 1), 4);
}

TEST(PlaneRouting, APlaneCutOffAtTheSourceCarriesNothingAndNoPathCrossesPlanes) {
  // With the uplinks of host 0's edge switch in plane 0 down, that plane reaches only the hosts under that
  // edge: host 0 sprays to host 4 over planes 1-3.
  const Topology t = kary4(4);
  Router r(t, opts("spray"));
  const NodeId nic0 = t.gpu_nic[0];
  NodeId edge = topology::kNone;
  for (auto [l, e] = t.incident(nic0); l != e && edge == topology::kNone; ++l)
    if (t.nodes[t.other_end(*l, nic0)].plane == 0) edge = t.other_end(*l, nic0);
  ASSERT_NE(edge, topology::kNone);
  for (auto [l, e] = t.incident(edge); l != e; ++l)
    if (t.nodes[t.other_end(*l, edge)].kind == NodeKind::Switch) r.set_link_up(*l, false);
  std::vector<PathPart> p;
  r.route(0, 4, 0, 1, p);
  double plane0 = 0;
  for (const PathPart& part : p) {
    const NodeId a = dir_from(part.link, t), b = dir_to(part.link, t);
    EXPECT_FALSE(t.nodes[b].kind == NodeKind::Nic && b != t.gpu_nic[4] && b != nic0 &&
                 t.nodes[a].kind == NodeKind::Switch)
        << "a path through " << t.nodes[b].name;
    if (a == nic0 && t.nodes[b].plane == 0) plane0 += part.fraction;
  }
  EXPECT_DOUBLE_EQ(plane0, 0.0);
  // A packet already at that edge switch has no way on to host 4's edge of plane 0: NICs are not network
  // nodes, so none joins two planes.
  NetworkGraph& g = r.graph();
  NodeId far_edge = topology::kNone;
  for (auto [l, e] = t.incident(t.gpu_nic[4]); l != e && far_edge == topology::kNone; ++l)
    if (t.nodes[t.other_end(*l, t.gpu_nic[4])].plane == 0) far_edge = t.other_end(*l, t.gpu_nic[4]);
  ASSERT_NE(far_edge, topology::kNone);
  EXPECT_EQ(g.table(g.net_of(far_edge), false, false)[g.net_of(edge)], -1);
  EXPECT_EQ(g.net_of(t.gpu_nic[1]), -1);
}

}  // namespace
}  // namespace podnet::routing
