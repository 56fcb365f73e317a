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

}  // namespace podnet::diagnose::testing
