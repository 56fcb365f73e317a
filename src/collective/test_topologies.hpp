// Topologies shared by the collective unit tests (built once per binary).
#pragma once

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "collective/collective.hpp"
#include "topology/builders.hpp"

namespace podnet::collective::testing {

// rail_clos with default hardware (8 GPUs, 8 NICs = 8 rails per server).
inline topology::Topology rail_clos(int32_t gpus) {
  return topology::build_with("rail_clos", {{"gpus", std::to_string(gpus)}}, topology::default_hardware());
}

// 4 servers x 8 GPUs, 8 rails, one aggregation group.
inline const topology::Topology& rail32() {
  static const topology::Topology t = rail_clos(32);
  return t;
}

// A small InfiniBand fat-tree whose switches reduce (switch.in_network_reduction:
// sharp): 4 servers x 8 GPUs (8 x 400G NICs each), radix-16 switches, 2 tiers:
// a leaf has 8 down-ports, so one server per leaf (4 leaves), 8 uplinks each,
// 2 spines of 16 ports. `sharp` false gives the same fabric without SHARP.
inline topology::Topology ib_fat_tree32(bool sharp = true) {
  topology::Hardware hw = topology::default_hardware();
  hw.radix = 16;
  hw.sharp = sharp;
  return topology::build_with("fat_tree", {{"gpus", "32"}, {"tiers", "2"}}, hw);
}
inline const topology::Topology& sharp32() {
  static const topology::Topology t = ib_fat_tree32();
  return t;
}

// A 4 x 4 torus of NIC-less chips (torus.hpp's algorithms need one).
inline const topology::Topology& torus44() {
  static const topology::Topology t = [] {
    topology::Hardware hw = topology::default_hardware();
    hw.nics_per_server = 0;
    return topology::build_with("torus", {{"dims", "[4, 4]"}}, hw);
  }();
  return t;
}

inline Group iota(int32_t n, int32_t first = 0) {
  Group g(n);
  std::iota(g.begin(), g.end(), first);
  return g;
}

inline Options naive(int32_t channels = 1) {
  Options o;
  o.channels = channels;
  o.order = RingOrder::Naive;
  return o;
}

}  // namespace podnet::collective::testing
