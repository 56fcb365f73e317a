// Swift (Kumar et al., "Swift: Delay is Simple and Effective for Congestion Control in the Datacenter",
// SIGCOMM 2020, Algorithm 1): a window from the round-trip delay alone, against a target that grows with
// the path's hops and shrinks as the window grows. Constants: those of htsim's Swift model (Broadcom
// csg-htsim, sim/swift.cpp; its authors mark them as guesses, the paper does not publish its own).
//
// Per ACK of n bytes whose newest packet took `rtt` (cc::Traits::rtt; an ACK without a sample is ignored):
//   target  = base + hops x h + fs(W),  base = 20 us, h = base / 6.55 per network link,
//             fs(W) = clamp(alpha / sqrt(W / MSS) + beta, 0, fs_range), fs_range = 5 base,
//             alpha = fs_range / (1 / sqrt(0.1) - 1 / sqrt(100)), beta = -alpha / sqrt(100)
//   rtt < target:  W <- W + MSS x ai x n / W  (W >= MSS; else W + ai x n),  ai = 1
//   else, once per round trip (now - last cut >= rtt):
//                  W <- W x max(1 - beta_md (rtt - target) / rtt, 1 - max_mdf),  beta_md = 0.8, max_mdf = 0.5
// A NACK (a hole or a trimmed packet), once per round trip: W <- W (1 - max_mdf) (fast recovery).
// W in bytes (MSS = a full packet on the wire), in [0.001 MSS, 1000 MSS]; the QP may have floor(W / MSS)
// packets out, at least one; below one packet it is paced at W / rtt instead (the paper's pacing mode).
// The first window is one BDP of the fabric's round trip at the NIC's line rate [assumption: the paper
// gives none]. Multipath variant (`swift_median`): under spraying each ACK's round trip is one path's; the
// median of the last 8 decides, as MNSCC does for NSCC (Gerstein, Silberstein and Keslassy, arXiv 2509.07907)
// [assumption: the same window of 8 samples; the paper derives it for NSCC]. Not modelled: the retransmission-timeout
// cut, PLB path changes, separate fabric and host targets (the NIC's round trip is all fabric here).
#pragma once

#include "engine/packet/cc/congestion_control.hpp"

namespace podnet::engine::packet::cc {

struct SwiftParams {
  double base_target_ps = 20e6;
  double hop_div = 6.55;  // h = base / hop_div
  double ai = 1;
  double beta = 0.8;
  double max_mdf = 0.5;
  double fs_range_of_base = 5;
  double fs_min_cwnd = 0.1, fs_max_cwnd = 100;  // packets
  double min_cwnd = 0.001, max_cwnd = 1000;     // packets
  // > 0: the multipath variant (swift_median): the median round trip of the last `median_of` ACKs (at most 8)
  // decides instead of the newest ACK's.
  int median_of = 0;
};

class Swift final : public CongestionControl {
 public:
  Swift(const SwiftParams& p, const Context& ctx);
  // The target delay (ps) of a QP with `hops` network links and window `w` bytes.
  double target_ps(int32_t hops, double w) const;

  void init(Flow& f, double line) const override;
  void start(Flow& f, int64_t now) const override;
  Reaction on_feedback(Flow& f, int64_t now, const Feedback& fb) const override;

 private:
  Reaction apply(Flow& f) const;

  SwiftParams p_;
  Context ctx_;
  double mss_ = 0;  // a full packet on the wire
  double fs_alpha_ = 0, fs_beta_ = 0;
};

}  // namespace podnet::engine::packet::cc
