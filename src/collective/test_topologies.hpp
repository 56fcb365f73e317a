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
