// Algorithms without an end-to-end reaction: every QP sends at its NIC's line
// rate (paced by nothing but its port).
//   none        no ECN marking, no CNPs; the data class is lossless with PFC,
//               or lossy (drops past the buffer's dynamic threshold) with
//               network.pfc = false.
//   infiniband  credit-based link-level flow control (InfiniBand
//               Architecture Specification vol. 1, §7.9): a port sends a data
//               packet only while it holds credits for the downstream
//               switch's buffer, so the fabric is lossless without PFC frames
//               and never drops; no end-to-end congestion control (the
//               optional IB CCA is not modelled).
#pragma once

#include "engine/packet/cc/congestion_control.hpp"

namespace podnet::engine::packet::cc {

class LineRate final : public CongestionControl {
 public:
  explicit LineRate(bool credits) : CongestionControl(traits_for(credits)) {}

 private:
  static Traits traits_for(bool credits) {
    Traits t;
    t.credits = credits;
    return t;
  }
};

}  // namespace podnet::engine::packet::cc
