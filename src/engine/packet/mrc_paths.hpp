// MRC path selection: the entropy values of one queue pair (routing policy `mrc`).
//
// Model (MRC 1.0, an OCP contribution of May 2026, as its public descriptions give it: each QP holds
// 128-256 entropy values split across the planes, sprays every transfer over them, swaps a path that
// shows congestion, stops using a path that lost a packet and probes it):
//   - a QP holds kPaths entropy values (EVs, 16 bits); value i lies in plane i mod P (ev mod P = plane,
//     packet_sim.hpp §7), so the set is spread evenly over the planes; switches hash an EV with their own
//     seed, so one EV names one path (as a static source route would);
//   - each data packet takes the next value in round-robin order that is not resting; a resent packet
//     takes the next one whose last packet is known to have arrived (an ACK echoed it since its last
//     loss), so a resend is not the probe of a path just back from its rest;
//   - an ACK that echoes an ECN mark swaps its value for a fresh one of the same plane (congestion);
//   - a loss seen on a value (a NACK for a hole, or the timeout, for a packet sent on it) rests it for
//     kRest: it carries nothing until then, and its next packet is the probe; a trimmed packet is not a
//     loss of the path (trimming marks congestion at the destination);
//   - if every value rests, the one whose rest ends first is used.
// Fresh values are a hash of the QP's key and a counter: a run stays a pure function of its inputs.
// Not modelled: probe packets apart from data, path-health state beyond one rest time, SRv6 itself.
#pragma once

#include <array>
#include <cstdint>
#include <limits>

#include "core/rng.hpp"

namespace podnet::engine::packet {

struct MrcPaths {
  static constexpr int kPaths = 64;
  static constexpr int64_t kRest = 100'000'000;  // ps: 100 us

  std::array<uint16_t, kPaths> ev{};
  std::array<int64_t, kPaths> rest_until{};
  std::array<bool, kPaths> proven{};  // an ACK echoed the value since its last loss
  uint64_t key = 0;
  uint32_t drawn = 0;
  uint16_t planes = 1;
  uint16_t cursor = 0;

  void init(uint64_t k, int p) {
    key = k;
    planes = static_cast<uint16_t>(p < 1 ? 1 : p);
    for (int i = 0; i < kPaths; ++i) ev[static_cast<size_t>(i)] = fresh(i % planes);
  }
  // A new value in plane `plane`: ev mod planes = plane.
  uint16_t fresh(int plane) {
    const auto h = static_cast<uint32_t>(mix64(key ^ (0x9e3779b97f4a7c15ULL * ++drawn)) & 0xFFFF);
    const uint32_t base = h - h % planes;
    return static_cast<uint16_t>(base + static_cast<uint32_t>(plane) <= 0xFFFF ? base + plane : base - planes + plane);
  }
  // The value for the next packet at time `now` (`resend`: a lost packet's).
  uint16_t next(int64_t now, bool resend = false) {
    if (resend)
      for (int i = 0; i < kPaths; ++i) {
        const int s = (cursor + i) % kPaths;
        if (proven[static_cast<size_t>(s)] && rest_until[static_cast<size_t>(s)] <= now) {
          cursor = static_cast<uint16_t>((s + 1) % kPaths);
          return ev[static_cast<size_t>(s)];
        }
      }
    int64_t soonest = std::numeric_limits<int64_t>::max();
    int pick = -1;
    for (int i = 0; i < kPaths; ++i) {
      const int s = (cursor + i) % kPaths;
      const int64_t r = rest_until[static_cast<size_t>(s)];
      if (r <= now) {
        pick = s;
        break;
      }
      if (r < soonest) soonest = r, pick = s;
    }
    cursor = static_cast<uint16_t>((pick + 1) % kPaths);
    return ev[static_cast<size_t>(pick)];
  }
  int slot(uint16_t e) const {
    for (int i = 0; i < kPaths; ++i)
      if (ev[static_cast<size_t>(i)] == e) return i;
    return -1;
  }
  // An ACK echoed value e: a packet arrived on it; with a mark, a fresh value of its plane takes its place.
  void echoed(uint16_t e, bool mark) {
    const int s = slot(e);
    if (s < 0) return;
    proven[static_cast<size_t>(s)] = !mark;
    if (mark) ev[static_cast<size_t>(s)] = fresh(e % planes);
  }
  // A packet sent on value e was lost: the path rests.
  void lost(uint16_t e, int64_t now) {
    if (const int s = slot(e); s >= 0) {
      rest_until[static_cast<size_t>(s)] = now + kRest;
      proven[static_cast<size_t>(s)] = false;
    }
  }
};

}  // namespace podnet::engine::packet
