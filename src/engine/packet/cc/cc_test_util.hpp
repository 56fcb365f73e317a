// The fabric the congestion-control unit tests derive their figures on: packets of 4,068 payload +
// 82 header = 4,150 bytes on the wire, and a largest unloaded round trip of 14 us (htsim's k = 4
// fat-tree, tests/data/htsim).
#pragma once

#include <cstdint>

#include "engine/packet/cc/congestion_control.hpp"

namespace podnet::engine::packet::cc::testing {

constexpr int64_t kUs = 1'000'000;  // ps

inline Context fabric_14us() {
  Context c;
  c.mtu = 4068;
  c.header = 82;
  c.network_rtt = 14 * kUs;
  return c;
}

}  // namespace podnet::engine::packet::cc::testing
