// REPS: recycled entropy-value path selection (Ultra Ethernet 1.0's load balancing for packet
// spraying; the UEC reference simulator's `reps` algorithm, uet-htsim @40ccb05, buffer_reps.cpp).
//
// The sender picks every data packet's entropy value (EV, 16 bits); switches hash the EV with their
// own seed over their equal-cost next hops (packet_sim.hpp §7), so an EV names one path. The sender
// keeps a ring of the last 8 EVs whose ACKs came back without an ECN mark, each usable once:
//   next packet  the oldest unused EV of the ring, else a new one drawn at random (here: a hash of the
//                QP and a counter, so the run stays a pure function of its inputs)
//   unmarked ACK its EV (echoed by the receiver) enters the ring, replacing the oldest
//   marked ACK, NACK, trimmed packet   nothing: the EV is forgotten
// So a path that queues (marks) or trims stops being reused, and the sender explores new ones.
// Not modelled: the freeze mode after a timeout (reuse of the ring's EVs for 10 ms).
#pragma once

#include <array>
#include <cstdint>

#include "core/rng.hpp"

namespace podnet::engine::packet {

struct Reps {
  static constexpr int kSlots = 8;
  std::array<uint16_t, kSlots> ev{};
  uint8_t unused = 0;  // bit i: ev[i] came back unmarked and was not used since
  uint8_t head = 0;    // the oldest slot (the next to be replaced)
  uint32_t drawn = 0;  // EVs drawn at random so far

  // The EV for the next packet of a QP whose key is `key`.
  uint16_t next(uint64_t key) {
    for (int i = 0; i < kSlots; ++i) {
      const int s = (head + i) % kSlots;
      if (unused >> s & 1) {
        unused = static_cast<uint8_t>(unused & ~(1u << s));
        return ev[s];
      }
    }
    return static_cast<uint16_t>(mix64(key ^ (0x9e3779b97f4a7c15ULL * ++drawn)));
  }
  // An ACK without an ECN mark came back for a packet sent on `e`.
  void recycle(uint16_t e) {
    ev[head] = e;
    unused = static_cast<uint8_t>(unused | (1u << head));
    head = static_cast<uint8_t>((head + 1) % kSlots);
  }
};

}  // namespace podnet::engine::packet
