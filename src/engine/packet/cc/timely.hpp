// TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM 2015):
// a rate from the round trip's gradient. Constants: those of the authors' code as eRPC carries it
// (erpc-io/eRPC, src/cc/timely.h: EWMA 0.02, minRTT 2 us, T_low 50 us, T_high 1,000 us, beta 0.8,
// hyperactive increase after 5 completions). The additive step delta is 1/1,000 of the line rate:
// the paper's 10 Mb/s on 10 Gb/s NICs, eRPC's 5 MB/s (40 Mb/s) under its 40 Gb/s maximum. A fixed
// 40 Mb/s step at 400 Gb/s took ten times longer to win back a rate.
//
// Per ACK whose newest packet took `rtt` (cc::Traits::rtt; an ACK without a sample is ignored), with
// f = min(time since the last update / minRTT, 1) (eRPC's delta_factor: the rate moves as fast per unit
// of time however often ACKs come; at 400 Gb/s a 4 KiB packet leaves every 84 ns, 1/24 of minRTT):
//   diff <- (1 - a) diff + a (rtt - previous rtt),  gradient = diff / minRTT
//   rtt < T_low            R <- R + f delta
//   rtt > T_high           R <- R (1 - f beta (1 - T_high / rtt))
//   gradient <= 0          R <- R + f N delta, N = 5 from the 5th such ACK in a row, else 1
//   otherwise              R <- R (1 - f beta gradient)
// and an update at most halves R (eRPC's floor). R in [line / 1,000, line]; it starts at line rate. The
// NIC paces the QP at R (no window). The first update counts its time from the QP's start.
// Not modelled: the per-completion (64 KB segment) cadence of the paper; here every ACK with a sample
// is a completion.
#pragma once

#include "engine/packet/cc/congestion_control.hpp"

namespace podnet::engine::packet::cc {

struct TimelyParams {
  double alpha = 0.02;
  double min_rtt_ps = 2e6;
  double t_low_ps = 50e6, t_high_ps = 1000e6;
  double beta = 0.8;
  int hai_after = 5;
  double delta_of_line = 1e-3;
  double min_rate_of_line = 1e-3;
};

class Timely final : public CongestionControl {
 public:
  explicit Timely(const TimelyParams& p);
  void init(Flow& f, double line) const override;
  void start(Flow& f, int64_t now) const override;
  Reaction on_feedback(Flow& f, int64_t now, const Feedback& fb) const override;

 private:
  TimelyParams p_;
};

}  // namespace podnet::engine::packet::cc
