// DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
// SIGCOMM 2015; NIC variant as the HPCC repository's "mlx" model,
// alibaba-edu/High-Precision-Congestion-Control, simulation/src/point-to-point/model/rdma-hw.cc).
//
// CP (switch): a data packet leaving an egress queue that still holds q bytes
// of its class is marked with probability
//   p = 0 (q <= Kmin), Pmax (q - Kmin) / (Kmax - Kmin) (Kmin < q <= Kmax), 1 (q > Kmax).
// NP (receiver): a marked data packet makes it send a CNP, at most one per QP
// per `cnp_interval`.
// RP (sender), on a CNP at time t (the first CNP of a QP sets alpha <- alpha0
// = 1 instead: the reaction point starts with the first congestion signal, as
// HPCC's model and the paper's initial alpha):
//   alpha <- alpha (1 - g)^floor((t - t_alpha) / K)   (decay while no CNP came)
//   alpha <- (1 - g) alpha + g;  t_alpha <- t
//   if t - t_decrease >= decrease_interval:
//     RT <- RC (always if clamp_target, else only if an increase happened since),
//     RC <- max(RC (1 - alpha / 2), min_rate); restart the increase timer;
//     timer and byte stages <- 0.
// Increase events: the timer every T while RC < line or RT < line; and
// (paper) every B bytes sent. With a byte counter (paper): stage counts i_T,
// i_B after the event; max(i_T, i_B) <= F: fast recovery; min(i_T, i_B) > F:
// hyper increase RT += R_HAI; otherwise additive RT += R_AI. Timer only
// (NIC): stage s before the event: s < F fast recovery, s = F additive,
// s > F hyper. Then RC <- (RT + RC) / 2; RT, RC <= line rate.
//
// Presets:
//   dcqcn_paper  the paper and its fluid model (dcqcn2.m): Kmin 5 KB, Kmax
//                200 KB, Pmax 1 %, g 1/256, CNP interval N = 50 us, alpha
//                interval K = 55 us, rate-decrease interval 50 us, increase
//                timer T = 55 us, byte counter B = 10 MB, F = 5 fast-recovery
//                stages, R_AI 40 Mb/s. Absolute values (the paper's 40 Gb/s
//                setting), not scaled with the link. R_HAI = 10 R_AI = 400 Mb/s
//                [assumption: the fluid model has no hyper increase; the
//                paper's text gives no figure we checked]. Target clamped to
//                the current rate on every decrease (RT = RC).
//   dcqcn_nic    the HPCC repository's NIC-style ("mlx") DCQCN: alpha interval
//                1 us, rate-decrease interval 4 us, RP timer 300 us, g 1/256,
//                F = 1, no byte counter (timer stages only: stage < F fast
//                recovery, = F additive, > F hyper), R_AI = 5 Mb/s x bw/25G,
//                R_HAI = 50 Mb/s x bw/25G, Kmin/Kmax = 100/400 KB x bw/25G,
//                Pmax 0.2; minimum rate 1 Mb/s (NVIDIA rpg_min_rate); target
//                not clamped on back-to-back decreases (HPCC ClampTargetRate
//                off). CNPs at most every 4 us per QP: HPCC's model echoes ECN
//                on every ACK and lets the 4 us decrease interval pace the
//                reaction; with 50 us here (the paper's N) the 1 us alpha decay
//                leaves alpha too small to drain a queue (measured: 5 MB
//                queues at 100G). [The 4 us figure is a modelling choice, not a
//                NIC default we checked.]
// bw is the rate of the port (ECN thresholds) or of the QP's NIC (R_AI, R_HAI).
#pragma once

#include <string_view>

#include "engine/packet/cc/congestion_control.hpp"

namespace podnet::engine::packet::cc {

struct DcqcnParams {
  double ref_bps = 0;  // > 0: Kmin, Kmax, R_AI, R_HAI scale by bw / ref_bps
  Bytes kmin = 0;      // ECN RED band on the egress queue (bytes)
  Bytes kmax = 0;
  double pmax = 0;
  double g = 1.0 / 256;       // alpha gain
  double alpha0 = 1.0;        // initial alpha
  Time cnp_interval;          // NP: at most one CNP per QP per interval
  Time alpha_interval;        // K: alpha decays by (1 - g) per interval without CNP
  Time decrease_interval;     // at most one rate decrease per interval
  Time increase_timer;        // T: rate-increase timer period
  Bytes byte_counter = 0;     // B: rate-increase byte counter (0 = none: timer stages only)
  int32_t fast_recovery = 5;  // F
  double rai_bps = 0;         // additive increase step
  double rhai_bps = 0;        // hyper increase step
  double min_rate_bps = 0;    // floor of the current rate
  bool clamp_target = true;   // RT = RC on every decrease (false: not on back-to-back decreases)
};

DcqcnParams dcqcn_paper();
DcqcnParams dcqcn_nic();

class Dcqcn final : public CongestionControl {
 public:
  explicit Dcqcn(const DcqcnParams& p);
  const DcqcnParams& params() const { return p_; }

  void init(Flow& f, double line) const override;
  bool on_marked(Flow& f, int64_t now) const override;
  Reaction on_cnp(Flow& f, int64_t now) const override;
  Reaction on_sent(Flow& f, int64_t wire_bytes) const override;
  Reaction on_timer(Flow& f, int64_t now) const override;
  int64_t timer_next(const Flow& f, int64_t now) const override;

 private:
  // stage_for_mlx < 0: the paper's two counters; else the NIC's timer stage before the event.
  double increase(Flow& f, int stage_for_mlx) const;
  double scale(double line_bps) const { return p_.ref_bps > 0 ? line_bps / p_.ref_bps : 1.0; }
  DcqcnParams p_;
};

}  // namespace podnet::engine::packet::cc
