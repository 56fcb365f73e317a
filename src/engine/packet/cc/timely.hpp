// TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM 2015):
// a rate from the round trip's gradient. Constants: those of the authors' code as eRPC carries it
// (erpc-io/eRPC, src/cc/timely.h: EWMA 0.02, minRTT 2 us, T_low 50 us, T_high 1,000 us, beta 0.8,
// hyperactive increase after 5 completions, delta 40 Mb/s).
//
// Per ACK whose newest packet took `rtt` (cc::Traits::rtt; an ACK without a sample is ignored):
//   diff <- (1 - a) diff + a (rtt - previous rtt),  gradient = diff / minRTT
//   rtt < T_low            R <- R + delta
//   rtt > T_high           R <- R (1 - beta (1 - T_high / rtt))
//   gradient <= 0          R <- R + N delta, N = 5 from the 5th such ACK in a row, else 1
//   otherwise              R <- R (1 - beta gradient)
// R in [line / 1,000, line]; it starts at line rate. The NIC paces the QP at R (no window).
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
  double delta_bps = 40e6;
  double min_rate_of_line = 1e-3;
};

class Timely final : public CongestionControl {
 public:
  explicit Timely(const TimelyParams& p);
  void init(Flow& f, double line) const override;
  Reaction on_feedback(Flow& f, int64_t now, const Feedback& fb) const override;

 private:
  TimelyParams p_;
};

}  // namespace podnet::engine::packet::cc
