#include "routing/router.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/error.hpp"
#include "routing/policies.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::routing {
namespace {

using topology::build_with;
using topology::Hardware;
using topology::LinkId;
using topology::NodeId;
using topology::NodeKind;
using topology::Topology;

// One GPU and one NIC per server, no NVSwitch: hosts as in the textbook fabrics.
Hardware host_hw() { return topology::testing::hw_with(1, 1, topology::default_hardware().radix); }

// 2 GPUs, 2 NICs (rails), one NVSwitch per server; radix-8 switches.
Hardware rail_hw() { return topology::testing::hw_with(2, 2, 8); }

RouteOptions opts(const std::string& policy, bool pxn = true, bool per_switch_seed = true, uint64_t seed = 1) {
  RouteOptions o;
  o.policy = policy;
  o.pxn = pxn;
  o.per_switch_seed = per_switch_seed;
  o.seed = seed;
  return o;
}

std::vector<PathPart> route_of(Router& r, int32_t src, int32_t dst, uint64_t entropy = 0, double weight = 1) {
  std::vector<PathPart> out;
  r.route(src, dst, entropy, weight, out);
  return out;
}

// A single-path route is a chain of directed links from gpus[src] to gpus[dst].
void expect_chain(const Topology& t, const std::vector<PathPart>& p, int32_t src, int32_t dst) {
  ASSERT_FALSE(p.empty());
  NodeId at = t.gpus[src];
  std::set<DirLink> seen;
  for (const PathPart& part : p) {
    EXPECT_EQ(dir_from(part.link, t), at);
    EXPECT_DOUBLE_EQ(part.fraction, 1.0);
    EXPECT_TRUE(seen.insert(part.link).second) << "directed link twice";
    at = dir_to(part.link, t);
  }
  EXPECT_EQ(at, t.gpus[dst]);
}

// Nodes entered along a single-path route.
std::vector<NodeId> entered(const Topology& t, const std::vector<PathPart>& p) {
  std::vector<NodeId> v;
  for (const PathPart& part : p) v.push_back(dir_to(part.link, t));
  return v;
}

NodeId node_at_tier(const Topology& t, const std::vector<PathPart>& p, int tier) {
  for (NodeId n : entered(t, p))
    if (t.nodes[n].kind == NodeKind::Switch && t.nodes[n].tier == tier) return n;
  return topology::kNone;
}

int count_class(const Topology& t, const std::vector<PathPart>& p, const std::string& cls) {
  int n = 0;
  for (const PathPart& part : p) n += t.link_classes[t.links[link_of(part.link)].cls] == cls;
  return n;
}

// ------------------------------------------------------------ helpers, registry

TEST(DirLink, DirectionAndEnds) {
  const Topology t = build_with("fat_tree", {{"k", "4"}}, host_hw());
  const topology::Link& l = t.links[5];
  EXPECT_EQ(dir_link(5, l.a, t), 10);  // 2 * 5 + 0: a -> b
  EXPECT_EQ(dir_link(5, l.b, t), 11);  // b -> a
  EXPECT_EQ(link_of(11), 5);
  EXPECT_EQ(dir_to(10, t), l.b);
  EXPECT_EQ(dir_to(11, t), l.a);
  EXPECT_EQ(dir_from(11, t), l.b);
}

TEST(Policies, RegistryAndApplicability) {
  for (const char* name : {"ecmp", "adaptive", "spray", "static", "dimension_order", "minimal", "valiant", "ugal"})
    EXPECT_NE(find_policy(name), nullptr) << name;
  EXPECT_EQ(find_policy("bogus"), nullptr);
  for (const auto& p : policies()) {
    EXPECT_FALSE(std::string(p.description).empty());
    EXPECT_FALSE(p.params().empty());
  }
  EXPECT_TRUE(policy_applies(*find_policy("ecmp"), "torus"));
  EXPECT_TRUE(policy_applies(*find_policy("valiant"), "dragonfly_plus"));
  EXPECT_FALSE(policy_applies(*find_policy("valiant"), "fat_tree"));

  const Topology t = build_with("fat_tree", {{"k", "4"}}, host_hw());
  EXPECT_THROW(Router(t, opts("bogus")), Error);
  EXPECT_THROW(Router(t, opts("dimension_order")), Error);
  // A policy for another family is the user's choice (network.routing): an InputError, exit status 2.
  EXPECT_THROW(Router(t, opts("valiant")), InputError);
  EXPECT_THROW(Router(t, opts("ugal")), InputError);
  try {
    Router r(t, opts("bogus"));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ecmp"), std::string::npos) << e.what();  // lists the known ones
  }

  Params p;
  p.set("seed", int64_t{7}, "7");
  p.set("pxn", false, "false");
  const RouteOptions o = route_options("adaptive", p);
  EXPECT_EQ(o.policy, "adaptive");
  EXPECT_EQ(o.seed, 7u);
  EXPECT_FALSE(o.pxn);
  EXPECT_TRUE(o.per_switch_seed);  // absent: default
}

TEST(Ecmp, UdpSourcePortInRoceRange) {
  std::set<uint16_t> ports;
  for (uint64_t qp = 0; qp < 64; ++qp) {
    const uint16_t p = Router::udp_source_port(qp);
    EXPECT_GE(p, 0xC000);
    ports.insert(p);
  }
  EXPECT_GT(ports.size(), 60u);  // 64 QPs over 16,384 ports: collisions are rare
}

// ------------------------------------------------------------ k = 4 fat-tree
// 16 hosts (rank = server = NIC index), 2 per edge switch (rank / 2), 4 per
// pod (rank / 4); each edge has 2 uplinks (one per aggregation switch of its
// pod), each aggregation switch 2 uplinks to the 2 cores of its plane.

TEST(FatTree, EqualCostPathsAndHops) {
  const Topology t = build_with("fat_tree", {{"k", "4"}}, host_hw());
  Router r(t, opts("ecmp"));
  // other pod: 2 aggregation choices x 2 cores each = (k/2)^2 = 4; edge-agg-core-agg-edge = 5 switches
  EXPECT_EQ(r.equal_cost_paths(0, 4), 4);
  EXPECT_EQ(r.switch_hops(0, 4), 5);
  // same pod, other edge: 2 aggregation switches; edge-agg-edge = 3
  EXPECT_EQ(r.equal_cost_paths(0, 2), 2);
  EXPECT_EQ(r.switch_hops(0, 2), 3);
  // same edge: 1 path through 1 switch
  EXPECT_EQ(r.equal_cost_paths(0, 1), 1);
  EXPECT_EQ(r.switch_hops(0, 1), 1);
  EXPECT_EQ(r.equal_cost_paths(3, 3), 1);
  EXPECT_EQ(r.switch_hops(3, 3), 0);
  EXPECT_TRUE(route_of(r, 3, 3).empty());
}

TEST(FatTree, RouteLengths) {
  const Topology t = build_with("fat_tree", {{"k", "4"}}, host_hw());
  Router r(t, opts("ecmp"));
  // gpu->nic, nic->edge, edge->agg, agg->core, core->agg, agg->edge, edge->nic, nic->gpu
  auto p = route_of(r, 0, 4);
  EXPECT_EQ(p.size(), 8u);
  expect_chain(t, p, 0, 4);
  EXPECT_NE(node_at_tier(t, p, 3), topology::kNone);
  // gpu->nic, nic->edge, edge->agg, agg->edge, edge->nic, nic->gpu
  p = route_of(r, 0, 2);
  EXPECT_EQ(p.size(), 6u);
  expect_chain(t, p, 0, 2);
  EXPECT_EQ(node_at_tier(t, p, 3), topology::kNone);
  // gpu->nic, nic->edge, edge->nic, nic->gpu
  p = route_of(r, 0, 1);
  EXPECT_EQ(p.size(), 4u);
  expect_chain(t, p, 0, 1);
  EXPECT_EQ(r.load(p[2].link), 0.0);  // ecmp keeps no loads
}

TEST(FatTree, EcmpSpreadsOverAllCoresAndIsDeterministic) {
  const Topology t = build_with("fat_tree", {{"k", "4"}}, host_hw());
  Router a(t, opts("ecmp")), b(t, opts("ecmp"));
  std::map<NodeId, int> cores;
  for (uint64_t qp = 0; qp < 64; ++qp) {
    const auto pa = route_of(a, 0, 4, qp);
    const auto pb = route_of(b, 0, 4, qp);
    ASSERT_EQ(pa.size(), pb.size());
    for (size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(pa[i].link, pb[i].link);
    expect_chain(t, pa, 0, 4);
    ++cores[node_at_tier(t, pa, 3)];
    // same QP -> same path
    const auto again = route_of(a, 0, 4, qp);
    for (size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(pa[i].link, again[i].link);
  }
  // 64 keys over 4 paths: all used (a miss has probability 4 (3/4)^64 ~ 1e-8)
  EXPECT_EQ(cores.size(), 4u);
  // a different seed gives a different (but equally valid) assignment
  Router c(t, opts("ecmp", true, true, 99));
  int differ = 0;
  for (uint64_t qp = 0; qp < 64; ++qp)
    differ += node_at_tier(t, route_of(c, 0, 4, qp), 3) != node_at_tier(t, route_of(a, 0, 4, qp), 3);
  EXPECT_GT(differ, 0);
}

TEST(FatTree, OneSeedEverywherePolarizes) {
  // Same seed at every switch: the edge picks aggregation switch i = h mod 2
  // and that switch picks core i = h mod 2 of its plane (same h), so only the
  // cores (plane 0, core 0) and (plane 1, core 1) carry traffic: 2 of 4.
  const Topology t = build_with("fat_tree", {{"k", "4"}}, host_hw());
  Router same(t, opts("ecmp", true, false)), own(t, opts("ecmp", true, true));
  std::set<NodeId> polarized, spread;
  for (uint64_t qp = 0; qp < 64; ++qp) {
    polarized.insert(node_at_tier(t, route_of(same, 0, 4, qp), 3));
    spread.insert(node_at_tier(t, route_of(own, 0, 4, qp), 3));
  }
  EXPECT_EQ(polarized.size(), 2u);
  EXPECT_EQ(spread.size(), 4u);
  for (NodeId core : polarized) {
    const int local = t.nodes[core].local;  // tier index: plane * 2 + core in plane
    EXPECT_EQ(local / 2, local % 2) << t.nodes[core].name;
  }
}

TEST(FatTree, SprayFractions) {
  const Topology t = build_with("fat_tree", {{"k", "4"}}, host_hw());
  Router r(t, opts("spray"));
  const auto p = route_of(r, 0, 4);
  // 1 + 1 (gpu->nic->edge), 2 uplinks at 1/2, 4 agg->core at 1/4, 4 core->agg at 1/4,
  // 2 agg->edge at 1/2, 1 + 1 (edge->nic->gpu) = 16 parts
  EXPECT_EQ(p.size(), 16u);
  std::set<DirLink> seen;
  std::map<NodeId, double> in, out;
  int into_core = 0, edge_up = 0;
  for (const PathPart& part : p) {
    EXPECT_TRUE(seen.insert(part.link).second);
    const NodeId from = dir_from(part.link, t), to = dir_to(part.link, t);
    out[from] += part.fraction;
    in[to] += part.fraction;
    if (t.nodes[to].kind == NodeKind::Switch && t.nodes[to].tier == 3) {
      ++into_core;
      EXPECT_DOUBLE_EQ(part.fraction, 0.25);
    }
    if (t.nodes[from].kind == NodeKind::Switch && t.nodes[from].tier == 1 && t.nodes[to].kind == NodeKind::Switch) {
      if (t.nodes[from].pod == 0) {
        ++edge_up;
        EXPECT_DOUBLE_EQ(part.fraction, 0.5);
      }
    }
  }
  EXPECT_EQ(into_core, 4);
  EXPECT_EQ(edge_up, 2);
  // conservation: every node but the two GPUs passes on what it receives
  for (const auto& [node, f] : in) {
    if (node == t.gpus[4]) {
      EXPECT_NEAR(f, 1.0, 1e-12);
      continue;
    }
    EXPECT_NEAR(f, out[node], 1e-12) << t.nodes[node].name;
  }
  EXPECT_NEAR(out[t.gpus[0]], 1.0, 1e-12);
}

TEST(FatTree, AdaptiveUsesDistinctCoresAndReleases) {
  // Flow 1 ties everywhere; flow 2 takes the idle aggregation switch; flows 3
  // and 4 tie at the edge (1 flow each) and take the idle core of the chosen
  // aggregation switch: 4 flows, 4 cores.
  const Topology t = build_with("fat_tree", {{"k", "4"}}, host_hw());
  Router r(t, opts("adaptive"));
  std::vector<std::vector<PathPart>> flows;
  std::set<NodeId> cores;
  for (int i = 0; i < 4; ++i) {
    flows.push_back(route_of(r, 0, 4, 0, 1.0));
    expect_chain(t, flows.back(), 0, 4);
    cores.insert(node_at_tier(t, flows.back(), 3));
  }
  EXPECT_EQ(cores.size(), 4u);
  EXPECT_DOUBLE_EQ(r.load(flows[0][0].link), 4.0);  // gpu->nic carries all four
  for (const auto& f : flows) r.release(f, 1.0);
  for (int32_t d = 0; d < dir_link_count(t); ++d) EXPECT_EQ(r.load(d), 0.0);
  // after release the first choice repeats
  const auto again = route_of(r, 0, 4, 0, 1.0);
  for (size_t i = 0; i < again.size(); ++i) EXPECT_EQ(again[i].link, flows[0][i].link);
}

TEST(FatTree, StaticIsLowestIdAndFixed) {
  const Topology t = build_with("fat_tree", {{"k", "4"}}, host_hw());
  Router r(t, opts("static"));
  const auto p = route_of(r, 0, 4, 0);
  for (uint64_t qp = 1; qp < 8; ++qp) {
    const auto q = route_of(r, 0, 4, qp);
    for (size_t i = 0; i < p.size(); ++i) EXPECT_EQ(p[i].link, q[i].link);
  }
  // lowest ids: aggregation switch 0 of pod 0, core 0 of plane 0
  EXPECT_EQ(t.nodes[node_at_tier(t, p, 3)].name, "core-000-000");
}

TEST(FatTree, LinkDownIsAvoided) {
  const Topology t = build_with("fat_tree", {{"k", "4"}}, host_hw());
  Router r(t, opts("static"));
  const auto p = route_of(r, 0, 4);
  // the static path's aggregation -> core link
  LinkId agg_core = topology::kNone;
  for (const PathPart& part : p)
    if (t.nodes[dir_to(part.link, t)].kind == NodeKind::Switch && t.nodes[dir_to(part.link, t)].tier == 3)
      agg_core = link_of(part.link);
  ASSERT_NE(agg_core, topology::kNone);
  r.set_link_up(agg_core, false);
  EXPECT_FALSE(r.link_up(agg_core));
  // its core is reachable from pod 0 only over that link: 4 - 1 = 3 paths remain
  EXPECT_EQ(r.equal_cost_paths(0, 4), 3);
  for (const char* policy : {"static", "ecmp", "spray", "adaptive"}) {
    Router q(t, opts(policy));
    q.set_link_up(agg_core, false);
    for (uint64_t qp = 0; qp < 32; ++qp)
      for (const PathPart& part : route_of(q, 0, 4, qp)) EXPECT_NE(link_of(part.link), agg_core) << policy;
  }
  const auto around = route_of(r, 0, 4);
  EXPECT_EQ(around.size(), 8u);  // still a shortest path
  expect_chain(t, around, 0, 4);
  r.set_link_up(agg_core, true);
  EXPECT_EQ(r.equal_cost_paths(0, 4), 4);
  EXPECT_EQ(route_of(r, 0, 4)[3].link, p[3].link);
}

TEST(FatTree, OneDirectionDownIsAvoidedOnlyThatWay) {
  // k = 4: host 0 -> host 4 statically crosses agg -> core (direction u). With
  // only u down, 0 -> 4 avoids it (3 of 4 paths left) while 4 -> 0 may still
  // use the reverse direction core -> agg (all 4 paths), and the link as a
  // whole counts as down.
  const Topology t = build_with("fat_tree", {{"k", "4"}}, host_hw());
  Router r(t, opts("static"));
  DirLink u = -1;
  for (const PathPart& part : route_of(r, 0, 4))
    if (t.nodes[dir_to(part.link, t)].kind == NodeKind::Switch && t.nodes[dir_to(part.link, t)].tier == 3)
      u = part.link;
  ASSERT_GE(u, 0);
  r.set_dir_up(u, false);
  EXPECT_FALSE(r.link_up(link_of(u)));
  EXPECT_EQ(r.equal_cost_paths(0, 4), 3);
  EXPECT_EQ(r.equal_cost_paths(4, 0), 4);
  for (uint64_t qp = 0; qp < 32; ++qp)
    for (const PathPart& part : route_of(r, 0, 4, qp)) EXPECT_NE(part.link, u);
  bool reverse_used = false;
  Router spray(t, opts("spray"));
  spray.set_dir_up(u, false);
  for (const PathPart& part : route_of(spray, 4, 0)) reverse_used = reverse_used || part.link == (u ^ 1);
  EXPECT_TRUE(reverse_used);
  r.set_dir_up(u, true);
  EXPECT_TRUE(r.link_up(link_of(u)));
  EXPECT_EQ(r.equal_cost_paths(0, 4), 4);
}

TEST(FatTree, AllPathsDownThrowsNamingEndpoints) {
  const Topology t = build_with("fat_tree", {{"k", "4"}}, host_hw());
  Router r(t, opts("ecmp"));
  // both uplinks of edge switch 0 (hosts 0 and 1) down
  const NodeId edge = dir_to(route_of(r, 0, 1)[1].link, t);  // gpu -> nic -> edge
  auto [b, e] = t.incident(edge);
  for (const LinkId* l = b; l != e; ++l)
    if (t.nodes[t.other_end(*l, edge)].kind == NodeKind::Switch) r.set_link_up(*l, false);
  try {
    route_of(r, 0, 4);
    FAIL() << "expected Error";
  } catch (const Error& err) {
    const std::string msg = err.what();
    EXPECT_NE(msg.find(t.nodes[t.gpus[0]].name), std::string::npos) << msg;
    EXPECT_NE(msg.find(t.nodes[t.gpus[4]].name), std::string::npos) << msg;
    EXPECT_NE(msg.find("down"), std::string::npos) << msg;
  }
  EXPECT_THROW(r.switch_hops(0, 4), Error);
  EXPECT_EQ(route_of(r, 0, 1).size(), 4u);  // same edge still fine
}

// ------------------------------------------------------------ NVLink, rails, PXN

TEST(Server, GpusSharingANicWithoutNvLink) {
  // 2 GPUs per server share NIC 0, no NVLink: gpu -> nic -> gpu over PCIe.
  Hardware hw = topology::default_hardware();
  hw.gpus_per_server = 2;
  hw.nics_per_server = 1;
  hw.nvlink_domain = 2;
  hw.nvlink_bw = Bandwidth(0);
  const Topology t = build_with("fat_tree", {{"gpus", "8"}}, hw);
  Router r(t, opts("ecmp"));
  const auto p = route_of(r, 0, 1);
  ASSERT_EQ(p.size(), 2u);
  expect_chain(t, p, 0, 1);
  EXPECT_EQ(dir_to(p[0].link, t), t.gpu_nic[0]);
  // other server: gpu -> nic -> leaf -> nic -> gpu
  EXPECT_EQ(route_of(r, 0, 3).size(), 4u);
}

TEST(Server, SameServerUsesNvSwitchOnly) {
  const Topology t = build_with("fat_tree", {{"gpus", "16"}}, topology::default_hardware());
  Router r(t, opts("ecmp"));
  const auto p = route_of(r, 0, 3);
  ASSERT_EQ(p.size(), 2u);  // gpu0 -> nvswitch -> gpu3
  expect_chain(t, p, 0, 3);
  EXPECT_EQ(t.nodes[dir_to(p[0].link, t)].kind, NodeKind::NvSwitch);
  EXPECT_EQ(r.switch_hops(0, 3), 0);
  EXPECT_EQ(r.equal_cost_paths(0, 3), 1);
}

TEST(RailClos, TwoTierShape) {
  // radix 8: leaves 4 down / 4 up; one spine per rail with 4 parallel links
  // from each of the 2 leaves of its rail: 4 up x 4 down = 16 paths between
  // the two groups on one rail.
  const Topology t = build_with("rail_clos", {{"gpus", "16"}, {"tiers", "2"}}, rail_hw());
  Router r(t, opts("ecmp"));
  // GPU 0 (server 0, rail 0) -> GPU 10 (server 5, group 1, rail 0)
  EXPECT_EQ(r.equal_cost_paths(0, 10), 16);
  EXPECT_EQ(r.switch_hops(0, 10), 3);
  std::set<DirLink> up;
  for (uint64_t qp = 0; qp < 64; ++qp) up.insert(route_of(r, 0, 10, qp)[2].link);
  EXPECT_EQ(up.size(), 4u);  // the parallel links are distinct next hops
}

TEST(RailClos, CrossRailWithPxnStaysOnDestinationRail) {
  const Topology t = build_with("rail_clos", {{"gpus", "16"}, {"tiers", "2"}}, rail_hw());
  Router r(t, opts("ecmp"));
  // GPU 0 (server 0, rail 0) -> GPU 11 (server 5, rail 1). Relay: GPU 1 of server 0.
  // gpu0 -> nvswitch -> gpu1 -> nic1 -> leaf(r1) -> spine(r1) -> leaf(r1) -> nic -> gpu11 = 8
  const auto p = route_of(r, 0, 11);
  ASSERT_EQ(p.size(), 8u);
  expect_chain(t, p, 0, 11);
  const auto nodes = entered(t, p);
  EXPECT_EQ(t.nodes[nodes[0]].kind, NodeKind::NvSwitch);
  EXPECT_EQ(nodes[1], t.gpus[1]);
  EXPECT_EQ(nodes[2], t.gpu_nic[1]);
  for (NodeId n : nodes) {
    if (t.nodes[n].kind == NodeKind::Switch || t.nodes[n].kind == NodeKind::Nic) {
      EXPECT_EQ(t.nodes[n].rail, 1) << t.nodes[n].name;
    }
  }
  EXPECT_EQ(r.switch_hops(0, 11), 3);
  // same rail needs no relay: gpu -> nic -> leaf -> spine -> leaf -> nic -> gpu
  EXPECT_EQ(route_of(r, 0, 10).size(), 6u);
}

TEST(RailClos, CrossRailWithoutPxnOnTwoTiersThrows) {
  const Topology t = build_with("rail_clos", {{"gpus", "16"}, {"tiers", "2"}}, rail_hw());
  Router r(t, opts("ecmp", false));
  try {
    route_of(r, 0, 11);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("no network path"), std::string::npos) << msg;
    EXPECT_NE(msg.find("PXN"), std::string::npos) << msg;
    EXPECT_NE(msg.find("super-spine"), std::string::npos) << msg;
  }
  EXPECT_EQ(route_of(r, 0, 10).size(), 6u);  // same rail is fine
}

TEST(RailClos, CrossRailWithoutPxnUsesSuperSpineOnThreeTiers) {
  // radix 8, 3 tiers: per rail 2 spines, each leaf has 2 parallel links to
  // each; each spine has 4 parallel links to the one super-spine of its plane.
  // rail-0 leaf -> spine r0 (2 spines x 2 links = 4) -> super (4) -> spine r1
  // of the same plane (4) -> rail-1 leaf (2): 4 x 4 x 4 x 2 = 128 paths, 5 switches.
  const Topology t = build_with("rail_clos", {{"gpus", "16"}, {"tiers", "3"}}, rail_hw());
  Router r(t, opts("ecmp", false));
  const auto p = route_of(r, 0, 11);
  // gpu0 -> nic0 -> leaf r0 -> spine r0 -> super -> spine r1 -> leaf r1 -> nic1 -> gpu11
  EXPECT_EQ(p.size(), 8u);
  expect_chain(t, p, 0, 11);
  EXPECT_NE(node_at_tier(t, p, 3), topology::kNone);
  EXPECT_EQ(r.switch_hops(0, 11), 5);
  EXPECT_EQ(r.equal_cost_paths(0, 11), 128);
  // with PXN the flow stays on rail 1 and below the super-spines
  Router pxn(t, opts("ecmp", true));
  EXPECT_EQ(node_at_tier(t, route_of(pxn, 0, 11), 3), topology::kNone);
}

TEST(RailClos, FourTiersCrossZonesThroughACore) {
  // 2 GPUs and 2 rails a server, radix 8, 256 GPUs: 4 zones of 2 pods of 32 GPUs (clos_test). GPU 0 (rail 0,
  // zone 0) to GPU 64 (rail 0, pod 2, zone 1): leaf -> spine (4 spines, 1 link each) -> super-spine of the
  // spine's plane (4, 1 link each) -> core of the super-spine's plane (2 cores x 2 parallel links = 4) -> the
  // other zone's super-spine of that plane (2 parallel links) -> its spine (1) -> leaf (1): 4 x 4 x 4 x 2 =
  // 128 equal-cost paths through 7 switches. GPU 0 to GPU 32 (pod 1, zone 0) turns at a super-spine: 4 x 4
  // = 16 paths through 5 switches.
  const Topology t = build_with("rail_clos", {{"gpus", "256"}}, rail_hw());
  ASSERT_EQ(t.switch_tiers(), 4);
  Router r(t, opts("ecmp"));
  EXPECT_EQ(r.switch_hops(0, 64), 7);
  EXPECT_EQ(r.equal_cost_paths(0, 64), 128);
  EXPECT_EQ(r.switch_hops(0, 32), 5);
  EXPECT_EQ(r.equal_cost_paths(0, 32), 16);
  std::set<NodeId> cores;
  for (uint64_t qp = 0; qp < 512; ++qp) {
    const auto p = route_of(r, 0, 64, qp);
    expect_chain(t, p, 0, 64);
    EXPECT_EQ(count_class(t, p, "super_spine-core"), 2);
    cores.insert(node_at_tier(t, p, 4));
    EXPECT_EQ(node_at_tier(t, route_of(r, 0, 32, qp), 4), topology::kNone);
  }
  // 4 planes x 4 super-spines x 2 cores = 32 cores, all used by 512 keys (a miss: 32 (31/32)^512 ~ 3e-6)
  EXPECT_EQ(cores.size(), 32u);
}

TEST(RailClos, LearntNextHopsAreTheOnesAScanFinds) {
  // With every link up a router learns each node's next hops once per target and keeps them; with a link down
  // it scans the node's edges at every hop. A NIC link taken down leaves every switch's distances as they were,
  // so every route between the other servers' GPUs (PXN relays through the cut NIC's server) must come out the
  // same both ways, and again from what was learnt.
  const Topology t = build_with("rail_clos", {{"gpus", "64"}, {"tiers", "3"}}, rail_hw());
  const auto n = static_cast<int32_t>(t.gpus.size());
  const int32_t cut_gpu = n - 1;
  LinkId cut = topology::kNone;
  auto [b, e] = t.incident(t.gpu_nic[cut_gpu]);
  for (const LinkId* l = b; l != e; ++l)
    if (t.nodes[t.other_end(*l, t.gpu_nic[cut_gpu])].kind == NodeKind::Switch) cut = *l;
  ASSERT_NE(cut, topology::kNone);
  for (const char* policy : {"ecmp", "spray"})
    for (const bool pxn : {true, false}) {
      Router learnt(t, opts(policy, pxn));
      Router scanned(t, opts(policy, pxn));
      scanned.set_link_up(cut, false);
      int compared = 0;
      const int32_t others = cut_gpu - 1;  // the last server's two GPUs left out
      for (int32_t s = 0; s < others; ++s)
        for (int32_t d = 0; d < others; ++d)
          for (uint64_t q = 0; q < 3; ++q) {
            const auto first = route_of(learnt, s, d, q);
            const auto again = route_of(learnt, s, d, q);
            const auto scan = route_of(scanned, s, d, q);
            ASSERT_EQ(first.size(), scan.size()) << policy << " " << s << " -> " << d;
            for (size_t i = 0; i < first.size(); ++i) {
              EXPECT_EQ(first[i].link, scan[i].link);
              EXPECT_EQ(first[i].fraction, scan[i].fraction);
              EXPECT_EQ(first[i].link, again[i].link);
            }
            ++compared;
          }
      EXPECT_EQ(compared, 62 * 62 * 3);
    }
}

// ------------------------------------------------------------ torus

int torus_distance(int32_t a, int32_t b) {  // 4x4x4, x fastest
  int s = 0;
  for (int i = 0, stride = 1; i < 3; ++i, stride *= 4) {
    const int d = std::abs((a / stride) % 4 - (b / stride) % 4);
    s += std::min(d, 4 - d);
  }
  return s;
}

Topology torus444() {
  Topology t = build_with("torus", {{"dims", "[4, 4, 4]"}}, topology::default_hardware());
  if (t.torus_dims.empty()) t.torus_dims = {4, 4, 4};
  return t;
}

int dim_of(const Topology& t, DirLink d) {
  const std::string& c = t.link_classes[t.links[link_of(d)].cls];
  return c == "torus-x" ? 0 : c == "torus-y" ? 1 : 2;
}

TEST(Torus, DimensionOrderLengthIsTorusDistance) {
  const Topology t = torus444();
  Router dor(t, opts("dimension_order")), ecmp(t, opts("ecmp"));
  // (x, y, z) -> rank x + 4y + 16z
  const std::vector<std::pair<int32_t, int32_t>> pairs = {
      {0, 1},    // dx 1: 1 hop
      {0, 3},    // dx 3 = -1 around the ring: 1 hop
      {0, 2},    // dx 2 = k/2: 2 hops (tie)
      {0, 21},   // (1,1,1): 3 hops
      {0, 63},   // (3,3,3): 1+1+1 = 3 hops
      {5, 42},   // (1,1,0) -> (2,2,2): 1+1+2 = 4
      {0, 42},   // (2,2,2): 6 hops, the diameter
      {17, 46},  // (1,0,1) -> (2,3,2): 1+1+1 = 3
  };
  for (auto [a, b] : pairs) {
    const int want = torus_distance(a, b);
    const auto p = route_of(dor, a, b);
    EXPECT_EQ(static_cast<int>(p.size()), want) << a << "->" << b;
    expect_chain(t, p, a, b);
    for (size_t i = 1; i < p.size(); ++i) EXPECT_LE(dim_of(t, p[i - 1].link), dim_of(t, p[i].link));
    for (uint64_t qp = 0; qp < 8; ++qp) {
      const auto q = route_of(ecmp, a, b, qp);
      EXPECT_EQ(static_cast<int>(q.size()), want);
      expect_chain(t, q, a, b);
    }
    EXPECT_EQ(dor.switch_hops(a, b), want);
  }
  EXPECT_EQ(t.facts.diameter_hops, 6);
}

TEST(Torus, DirectionRules) {
  const Topology t = torus444();
  Router dor(t, opts("dimension_order"));
  // 0 -> 2: distance k/2 both ways, the tie goes +: through chip 1
  auto p = route_of(dor, 0, 2);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(dir_to(p[0].link, t), t.gpus[1]);
  // 0 -> 3: - direction over the wrap link
  p = route_of(dor, 0, 3);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(dir_to(p[0].link, t), t.gpus[3]);
}

TEST(Torus, EqualCostPaths) {
  const Topology t = torus444();
  Router r(t, opts("ecmp"));
  EXPECT_EQ(r.equal_cost_paths(0, 1), 1);
  EXPECT_EQ(r.equal_cost_paths(0, 2), 2);   // + or - around the ring, 2 hops each
  EXPECT_EQ(r.equal_cost_paths(0, 21), 6);  // (1,1,1): 3! orders
  // (2,2,0): direction per dimension (2 x 2) x interleavings C(4,2) = 6 -> 24
  EXPECT_EQ(r.equal_cost_paths(0, 10), 24);
}

TEST(Torus, DimensionOrderDetoursAroundDownLink) {
  const Topology t = torus444();
  Router dor(t, opts("dimension_order"));
  const auto p = route_of(dor, 0, 2);  // via chip 1
  dor.set_link_up(link_of(p[0].link), false);
  // the other minimal path goes - through chip 3
  const auto q = route_of(dor, 0, 2);
  ASSERT_EQ(q.size(), 2u);
  expect_chain(t, q, 0, 2);
  EXPECT_EQ(dir_to(q[0].link, t), t.gpus[3]);
  EXPECT_EQ(dor.equal_cost_paths(0, 2), 1);
}

TEST(Torus, FailuresSwitchToTablesAndSprayAcrossMinimalPaths) {
  const Topology t = torus444();
  Router ecmp(t, opts("ecmp")), spray(t, opts("spray"));
  // (0,0,0) -> (1,1,1): 3 first hops (+x, +y, +z) at 1/3 each; 3 x 2 x 1 = 6 paths
  const auto s = route_of(spray, 0, 21);
  int first = 0;
  for (const PathPart& part : s)
    if (dir_from(part.link, t) == t.gpus[0]) {
      ++first;
      EXPECT_NEAR(part.fraction, 1.0 / 3, 1e-12);
    }
  EXPECT_EQ(first, 3);
  // 3 levels of hop: 3 + 6 + 3 links (level sizes of the 1x1x1 cube's edges)
  EXPECT_EQ(s.size(), 12u);
  // +x link of chip 0 down: paths starting with y or z, 2 orders each = 4
  Router dor(t, opts("dimension_order"));
  const LinkId x0 = link_of(route_of(dor, 0, 1)[0].link);
  ecmp.set_link_up(x0, false);
  EXPECT_EQ(ecmp.equal_cost_paths(0, 21), 4);
  for (uint64_t qp = 0; qp < 16; ++qp) {
    const auto p = route_of(ecmp, 0, 21, qp);
    EXPECT_EQ(p.size(), 3u);
    expect_chain(t, p, 0, 21);
    for (const PathPart& part : p) EXPECT_NE(link_of(part.link), x0);
  }
  // 0 -> 1 now takes 3 hops: -x, -x, -x round the ring, or out and back in y or z
  EXPECT_EQ(ecmp.switch_hops(0, 1), 3);
}

// ------------------------------------------------------------ dragonfly
// p = 2, a = 4, h = 2: g = a h + 1 = 9 groups, one global link per pair of
// groups, 8 terminals per group (1 GPU/NIC per server: rank / 8 = group).

Topology dragonfly242() { return build_with("dragonfly", {{"p", "2"}, {"a", "4"}, {"h", "2"}}, host_hw()); }

int32_t group_of_rank(const Topology& t, int32_t rank) { return t.nodes[t.gpus[rank]].group; }

std::set<int32_t> groups_visited(const Topology& t, const std::vector<PathPart>& p) {
  std::set<int32_t> g;
  for (NodeId n : entered(t, p))
    if (t.nodes[n].kind == NodeKind::Switch) g.insert(t.nodes[n].group);
  return g;
}

TEST(Dragonfly, MinimalCrossesAtMostOneGlobalLink) {
  const Topology t = dragonfly242();
  ASSERT_EQ(t.groups, 9);
  Router r(t, opts("minimal"));
  const auto n = static_cast<int32_t>(t.gpus.size());
  for (int32_t a = 0; a < n; ++a)
    for (int32_t b = 0; b < n; ++b) {
      if (a == b) continue;
      const auto p = route_of(r, a, b, static_cast<uint64_t>(a * n + b));
      expect_chain(t, p, a, b);
      // different groups: exactly the one global link between them; same group: none
      EXPECT_EQ(count_class(t, p, "global"), group_of_rank(t, a) != group_of_rank(t, b) ? 1 : 0) << a << "->" << b;
      EXPECT_LE(r.switch_hops(a, b), 4);  // local-global-local: at most 4 routers
    }
}

TEST(Dragonfly, ValiantGoesThroughAnIntermediateGroup) {
  const Topology t = dragonfly242();
  Router r(t, opts("valiant"));
  const auto n = static_cast<int32_t>(t.gpus.size());
  std::set<int32_t> intermediates;
  LinkId busiest = topology::kNone;
  std::map<LinkId, int> global_use;
  for (int32_t a = 0; a < n; a += 3)
    for (int32_t b = 0; b < n; ++b) {
      const int32_t ga = group_of_rank(t, a), gb = group_of_rank(t, b);
      if (ga == gb) continue;
      const auto p = route_of(r, a, b, static_cast<uint64_t>(b));
      expect_chain(t, p, a, b);
      // into the intermediate group and out of it: 2 global links
      EXPECT_EQ(count_class(t, p, "global"), 2) << a << "->" << b;
      auto gs = groups_visited(t, p);
      gs.erase(ga);
      gs.erase(gb);
      EXPECT_EQ(gs.size(), 1u);
      intermediates.insert(gs.begin(), gs.end());
      for (const PathPart& part : p)
        if (t.link_classes[t.links[link_of(part.link)].cls] == "global") ++global_use[link_of(part.link)];
    }
  EXPECT_EQ(intermediates.size(), 9u);  // the hash reaches every group
  int most = 0;
  for (auto [l, c] : global_use)
    if (c > most) most = c, busiest = l;
  // take the busiest global link down: no Valiant route uses it, all still route
  r.set_link_up(busiest, false);
  for (int32_t a = 0; a < n; ++a)
    for (int32_t b = 0; b < n; ++b) {
      if (a == b) continue;
      const auto p = route_of(r, a, b, static_cast<uint64_t>(b));
      expect_chain(t, p, a, b);
      EXPECT_LE(count_class(t, p, "global"), 2);
      for (const PathPart& part : p) EXPECT_NE(link_of(part.link), busiest);
    }
}

TEST(Dragonfly, UgalTakesValiantWhenTheMinimalGlobalLinkIsLoaded) {
  const Topology t = dragonfly242();
  // the global link between groups 0 and 1, its routers, and a host on each
  LinkId g01 = topology::kNone;
  for (LinkId l = 0; l < static_cast<LinkId>(t.links.size()); ++l) {
    const auto& k = t.links[l];
    if (t.link_classes[k.cls] != "global") continue;
    const int32_t ga = t.nodes[k.a].group, gb = t.nodes[k.b].group;
    if ((ga == 0 && gb == 1) || (ga == 1 && gb == 0)) g01 = l;
  }
  ASSERT_NE(g01, topology::kNone);
  const NodeId rx = t.nodes[t.links[g01].a].group == 0 ? t.links[g01].a : t.links[g01].b;
  const NodeId ry = t.other_end(g01, rx);
  int32_t hx = -1, hy = -1;
  for (int32_t rank = 0; rank < static_cast<int32_t>(t.gpus.size()); ++rank) {
    const NodeId nic = t.gpu_nic[rank];
    auto [b, e] = t.incident(nic);
    for (const LinkId* l = b; l != e; ++l) {
      if (t.other_end(*l, nic) == rx && hx < 0) hx = rank;
      if (t.other_end(*l, nic) == ry && hy < 0) hy = rank;
    }
  }
  ASSERT_GE(hx, 0);
  ASSERT_GE(hy, 0);
  Router r(t, opts("ugal"));
  // Idle: C_min = 1 x (0 + 100) < C_val = H_val x (0 + 100), H_val >= 2: minimal.
  const auto heavy = route_of(r, hx, hy, 0, 100.0);
  EXPECT_EQ(count_class(t, heavy, "global"), 1);
  EXPECT_DOUBLE_EQ(r.load(dir_link(g01, rx, t)), 100.0);
  // Now C_min = 1 x (100 + 1) = 101; the Valiant candidate avoids the loaded
  // link and every other switch link is idle: C_val = H_val x 1 <= 5: Valiant.
  const auto light = route_of(r, hx, hy, 1, 1.0);
  expect_chain(t, light, hx, hy);
  EXPECT_EQ(count_class(t, light, "global"), 2);
  r.release(heavy, 100.0);
  r.release(light, 1.0);
  EXPECT_EQ(count_class(t, route_of(r, hx, hy, 1, 1.0), "global"), 1);  // idle again: minimal
}

TEST(Dragonfly, PlusMinimalAndValiant) {
  const Topology t = build_with("dragonfly_plus", {{"p", "2"}, {"leaves", "2"}, {"spines", "2"}, {"h", "2"}},
                                host_hw());  // g = spines h + 1 = 5
  Router m(t, opts("minimal")), v(t, opts("valiant"));
  const auto n = static_cast<int32_t>(t.gpus.size());
  for (int32_t a = 0; a < n; ++a)
    for (int32_t b = 0; b < n; ++b) {
      if (a == b) continue;
      const bool inter = group_of_rank(t, a) != group_of_rank(t, b);
      const auto p = route_of(m, a, b, 7);
      expect_chain(t, p, a, b);
      EXPECT_EQ(count_class(t, p, "global"), inter ? 1 : 0);
      const auto q = route_of(v, a, b, 7);
      expect_chain(t, q, a, b);
      EXPECT_EQ(count_class(t, q, "global"), inter ? 2 : 0);
    }
}

// route_batch gives each request's route as route() does, in order: where the walks advance together (ECMP
// and static on a rail Clos and a fat tree, PXN relays and same-server routes among them) and where it calls
// route() (spray, adaptive, a link down, a torus). Requests come in a scrambled order, with QPs, more than
// kBatchWalks at a time.
TEST(Router, ABatchOfRoutesIsTheRoutesOneByOne) {
  struct Case {
    const char* name;
    Topology t;
    const char* policy;
    bool cut = false;
  };
  std::vector<Case> cases;
  for (const char* policy : {"ecmp", "static", "spray", "adaptive"})
    cases.push_back({"rail_clos", build_with("rail_clos", {{"gpus", "64"}, {"tiers", "3"}}, rail_hw()), policy});
  cases.push_back(
      {"rail_clos, a link down", build_with("rail_clos", {{"gpus", "64"}, {"tiers", "3"}}, rail_hw()), "ecmp", true});
  cases.push_back({"fat_tree", build_with("fat_tree", {{"gpus", "16"}}, host_hw()), "ecmp"});
  cases.push_back({"torus", torus444(), "dimension_order"});
  for (Case& c : cases) {
    Router one(c.t, opts(c.policy)), batch(c.t, opts(c.policy));
    if (c.cut) {
      LinkId l = 0;  // the first link between two switches: every route still has a path
      while (c.t.nodes[c.t.links[l].a].kind != NodeKind::Switch || c.t.nodes[c.t.links[l].b].kind != NodeKind::Switch)
        ++l;
      one.set_link_up(l, false);
      batch.set_link_up(l, false);
    }
    const auto n = static_cast<int32_t>(c.t.gpus.size());
    std::vector<Router::Request> reqs;
    for (int32_t k = 0; k < 3 * n; ++k)
      reqs.push_back({(k * 7) % n, (k * 13 + (k / 3) % 2) % n, static_cast<uint64_t>(k % 3)});
    std::vector<PathPart> expected, got;
    std::vector<size_t> at;
    batch.route_batch(reqs, got, at);
    ASSERT_EQ(at.size(), reqs.size() + 1) << c.name;
    for (size_t k = 0; k < reqs.size(); ++k) {
      expected.clear();
      one.route(reqs[k].src, reqs[k].dst, reqs[k].entropy, 1.0, expected);
      ASSERT_EQ(at[k + 1] - at[k], expected.size()) << c.name << " " << c.policy << " request " << k;
      for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(got[at[k] + i].link, expected[i].link) << c.name << " " << c.policy << " request " << k;
        EXPECT_EQ(got[at[k] + i].fraction, expected[i].fraction);
      }
    }
  }
}

}  // namespace
}  // namespace podnet::routing
