// NSCC: Ultra Ethernet's network-signal-based sender congestion control
// (Ultra Ethernet Specification 1.0, June 2025: NSCC), with the
// constants and defaults of the UEC reference simulator (htsim, uet-htsim
// @40ccb05: htsim/sim/uec.cpp, datacenter/main_uec.cpp). A window in bytes
// (headers included), no pacing: the NIC's line rate clocks the packets.
//
// Fabric figures. R = the fabric's largest unloaded NIC-to-NIC round trip
// (cc::Context::network_rtt: each link's latency both ways, one data packet
// out and one ACK back per link); BDP = R x the NIC's line rate;
// a = BDP / 150 kB (the reference 100 Gb/s x 12 us); target queueing delay
// T = 0.75 R (with trimming, as here); b = T / 12 us; MSS = the MTU's payload.
// Window: W starts at Wmax = 1.5 BDP (no slow start), stays in
// [one packet, Wmax]. The base round trip falls to the smallest sample seen
// (Wmax follows it); it starts at R in this class, but the packet engine's
// NIC gives every QP its own path's unloaded round trip after init (nic.cpp:
// add_stream), so there the first window is 1.5 BDP at R and Wmax is 1.5 x
// the QP's own BDP (htsim's -enable_accurate_base_rtt).
// Per ACK: n = newly acknowledged bytes (wire), E = the ACK echoes an ECN
// mark, d = (round trip of the newest packet it covers) - base round trip
// (the averaged delay when the ACK has no sample).
//   average  D <- (1 - 1/80) D + d / 80, where an unmarked d > T counts as 0.25 base
//   quadrant  !E, d < T   proportional: inc += (4 MSS a b / T) n (T - d); but
//                         fast increase once d < 1 us for a whole window of
//                         ACKs: W += 0.25 a n at once, until a d >= 1 us
//             !E, d >= T  fair: inc += 5 MSS a n
//              E, d >= T  multiplicative decrease, at most once per base
//                         round trip and only if D > T:
//                         W <- W max(1 - 0.8 (D - T) / D, 0.5)
//              E, d < T   nothing (a path's mark, not the flow's)
//   fulfilment, when 8 packets (wire bytes) were acknowledged or R passed since the last:
//             W <- W + inc / W (so a window's ACKs add 5 MSS a, or
//             4 MSS a b (1 - d / T), per round trip), inc <- 0;
//             and once per R: W <- W + 0.15 MSS a.
//   quick adapt, checked once per (base + T): if a NACK came, or this
//             ACK's d > 4 T, and the bytes acknowledged in that period are
//             under Wmax / 8: W <- max(those bytes, one packet); pending
//             increases dropped; ECN marks ignored until the PSNs sent
//             before it are acknowledged.
// Per NACK of a trimmed packet: D is fed one congested sample of R; quick
// adapt is checked; if it does not act, W <- W - one packet.
// Multipath variant (`nscc_median`): under spraying one flow's ACKs report
// different paths, and the newest ACK's delay and mark answer for one path
// only. Gerstein, Silberstein and Keslassy ("Congestion Control for Spraying
// with Congested Paths", arXiv 2509.07907, 2026) take the median of recent
// feedback instead (MNSCC). Here: the median delay and the majority mark of
// the last 8 ACKs with a round-trip sample replace the newest ACK's in the
// quadrant rule and the delay average [assumption: a window of 8 samples;
// the rest is NSCC as above].
// Not modelled: the per-timeout window cut (the NIC's RTO resends without
// telling the algorithm), the receiver's window penalty, ACKs sent at once
// on an ECN mark (the NIC's ACK cadence holds), SLEEK loss recovery.
#pragma once

#include "engine/packet/cc/congestion_control.hpp"

namespace podnet::engine::packet::cc {

struct NsccParams {
  double target_of_rtt = 0.75;           // T / R (trimming on)
  double ref_bdp = 150'000;              // bytes: 100 Gb/s x 12 us
  double ref_rtt_ps = 12e6;              // 12 us
  double fi = 5;                         // fair increase: MSS x a per round trip
  double pi = 4;                         // proportional increase: MSS x a x b per round trip at d = 0
  double eta = 0.15;                     // MSS x a once per R
  double fi_scale = 0.25;                // fast increase: a x acknowledged bytes
  double fast_delay_ps = 1e6;            // d below 1 us counts toward fast increase
  double gamma = 0.8;                    // multiplicative decrease strength
  double max_cut = 0.5;                  // at most halves the window
  double avg_weight = 0.0125;            // EWMA weight of the delay average
  double qa_delay = 4;                   // quick adapt on d > 4 T
  double qa_gate = 8;                    // ... when the bytes acknowledged in the period are under Wmax / 8
  double max_wnd_bdp = 1.5;              // Wmax = 1.5 BDP
  double adjust_mtus = 8;                // fulfilment every 8 MTU acknowledged (or R)
  double ecn_low = 0.2, ecn_high = 0.8;  // RED band on every switch queue: 20 % to 80 % of the reference BDP
  // > 0: the multipath variant (nscc_median): the quadrant rule and the delay average read the median
  // delay and the majority mark of the last `median_of` ACKs instead of the newest ACK's (at most 8).
  int median_of = 0;
  // The receiver's credits too (nscc_rccc, rccc.hpp): a packet needs credit and room in the window.
  bool receiver_credits = false;
};

class Nscc final : public CongestionControl {
 public:
  Nscc(const NsccParams& p, const Context& ctx);
  const NsccParams& params() const { return p_; }
  int64_t target_ps() const { return target_; }

  void init(Flow& f, double line) const override;
  void start(Flow& f, int64_t now) const override;
  Reaction on_feedback(Flow& f, int64_t now, const Feedback& fb) const override;

 private:
  void fulfil(Flow& f, int64_t now) const;
  bool quick_adapt(Flow& f, int64_t now, double d, bool nack, uint32_t snd_nxt) const;
  void clamp(Flow& f) const;
  double bdp(const Flow& f, double rtt_ps) const { return f.line / 8.0 * rtt_ps / 1e12; }

  NsccParams p_;
  Context ctx_;
  int64_t target_ = 0;  // T, ps
  double wire_ = 0;     // a full packet's wire bytes
};

}  // namespace podnet::engine::packet::cc
