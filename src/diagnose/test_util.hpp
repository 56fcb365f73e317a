// Fixtures shared by the diagnose tests (statistical and packet-mode probing).
#pragma once

#include "routing/router.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::diagnose::testing {

// k = 4 fat-tree, one GPU and one NIC per server: 16 hosts, 8 edge, 8 aggregation, 4 core switches.
inline topology::Topology fat_tree4() {
  return topology::build_with("fat_tree", {{"k", "4"}},
                              topology::testing::hw_with(1, 1, topology::default_hardware().radix));
}

inline routing::RouteOptions ecmp() {
  routing::RouteOptions o;
  o.policy = "ecmp";
  return o;
}

// The first switch-to-switch link direction leaving a switch of `tier` (link l's directions are 2l: a -> b and
// 2l + 1: b -> a); -1 when there is none.
inline routing::DirLink first_dir_from_tier(const topology::Topology& t, int tier) {
  using topology::NodeKind;
  for (topology::LinkId l = 0; l < static_cast<topology::LinkId>(t.links.size()); ++l) {
    const auto& a = t.nodes[t.links[l].a];
    const auto& b = t.nodes[t.links[l].b];
    if (a.kind == NodeKind::Switch && b.kind == NodeKind::Switch && a.tier == tier) return 2 * l;
    if (a.kind == NodeKind::Switch && b.kind == NodeKind::Switch && b.tier == tier) return 2 * l + 1;
  }
  return -1;
}

}  // namespace podnet::diagnose::testing
