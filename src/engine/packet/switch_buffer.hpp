// SwitchBuffer: the shared buffer of every switch, its dynamic threshold and
// the PFC decisions (HPCC's switch MMU: alibaba-edu/High-Precision-Congestion-
// Control, simulation/src/point-to-point/model/switch-mmu.cc).
//
// A switch has B bytes of shared buffer (PacketOptions::buffer_bytes, default
// the sum over its ports of rate x buffer_time, 40 us). For the lossless class
// every ingress port i has a reserve r = 4 KB, a headroom h_i and the accounting
//   threshold  T = (B - sum_i h_i - sum_i r - S) >> 3      (alpha = 1/8)
// where S is the shared bytes in use (all ingress ports, plus lossy bytes).
// A packet of s bytes entering on i with u_i bytes already held: drop if
// s + hdrm_i > h_i and s + max(u_i - r, 0) > T (headroom exhausted; does not
// happen when h_i is large enough); bytes beyond r + T count as headroom.
// XOFF (PAUSE) is due when hdrm_i > 0 or u_i - r >= T; XON when hdrm_i = 0
// and (u_i - r = 0 or u_i - r + 3 KB <= T). Bytes are released when the
// packet starts leaving its egress port.
// Lossy class: dynamic threshold on the egress queue: drop if
//   q + s > (B - sum h - sum r - S) >> 3  (or the buffer is full).
// Headroom of ingress port i (link rate C, one-way latency L):
//   h_i = 2 x MTU_wire + 2 C L + 3840 B + C x switch_latency
// = the Mellanox formula (MTU_S + MTU_R + 2 rate cable_delay + 3840 B) plus the bytes inside the forwarding pipeline,
// which this model counts only when they reach the buffer.
// With credits (InfiniBand) the lossless class is neither dropped nor paused:
// every ingress port starts with max(2 MTU_wire, B / ports) bytes of credit
// (Ports hold them; this class only counts the bytes held).
//
// The buffer only decides; the simulation core sends the PAUSE/XON frames
// (packet_sim.hpp §3) and moves the packets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/packet/packet.hpp"
#include "engine/packet/packet_options.hpp"
#include "engine/packet/port.hpp"
#include "routing/route.hpp"
#include "topology/topology.hpp"

namespace podnet::engine::packet {

// A buffer or threshold size as errors print it: "33.4 KB", "7.01 MB".
std::string buffer_text(int64_t bytes);

class SwitchBuffer {
 public:
  struct Ingress {
    int64_t bytes = 0;     // lossless bytes held (reserve + shared)
    int64_t hdrm = 0;      // lossless bytes held in headroom
    int64_t headroom = 0;  // allocated headroom
    uint32_t stamp = 0;    // PAUSE refresh generation
    bool pause_sent = false;
  };
  enum class Admit : uint8_t { Drop, Ok, OkPause };  // OkPause: admitted, and an XOFF is due upstream

  // Sizes every switch's buffer, headroom and reserves; gives credit-limited
  // ingress ports their credits in `ports`. pfc / credits: the data class's
  // flow control (at most one of them).
  SwitchBuffer(const topology::Topology& t, const PacketOptions& opt, int64_t mtu_wire, bool pfc, bool credits,
               Ports& ports);

  Admit admit(topology::NodeId n, routing::DirLink in, int64_t lossy_queue_bytes, const Packet& k);
  // Releases k's bytes; true when an XON is due upstream of `in`.
  bool release(topology::NodeId n, routing::DirLink in, const Packet& k);

  Ingress& ingress(routing::DirLink in) { return ingress_[in]; }
  int64_t buffer_of(topology::NodeId n) const { return mmu_[n].buffer; }
  int64_t headroom_of(routing::DirLink in) const { return ingress_[in].headroom; }
  // Switch n's dynamic threshold becomes alpha = 2^-shift (a drifted switch, packet_sim.hpp §12).
  void set_dt_shift(topology::NodeId n, int32_t shift) { mmu_[n].dt_shift = shift; }
  // The configured XOFF limit of switch n: alpha x (B - headroom - reserves), the largest the dynamic
  // threshold can be (alpha = 2^-dt_shift of the options, whatever a drift set).
  int64_t xoff_limit(topology::NodeId n) const {
    const Mmu& m = mmu_[n];
    const int64_t f = m.buffer - m.total_hdrm - m.total_rsrv;
    return pfc_ && f > 0 ? (f >> dt_shift_) : 0;
  }
  int64_t reserve() const { return reserve_; }
  // max over switches of B / (mean port rate), in ps: the slowest full-buffer drain.
  double worst_drain_ps() const { return worst_drain_ps_; }

 private:
  struct Mmu {
    int64_t buffer = 0;
    int64_t total_hdrm = 0;
    int64_t total_rsrv = 0;
    int64_t shared = 0;
    int64_t used = 0;
    int32_t dt_shift = 3;
  };
  int64_t threshold(const Mmu& m) const {
    const int64_t f = m.buffer - m.total_hdrm - m.total_rsrv - m.shared;
    return f > 0 ? (f >> m.dt_shift) : 0;
  }

  std::vector<Mmu> mmu_;  // by node (switches only)
  std::vector<Ingress> ingress_;
  int32_t dt_shift_ = 3;
  int64_t reserve_ = 0, resume_offset_ = 0;
  bool pfc_ = false, credits_ = false;
  double worst_drain_ps_ = 0;
};

}  // namespace podnet::engine::packet
