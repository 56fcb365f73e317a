// HPCC: high-precision congestion control from in-band network telemetry (Li et al., "HPCC: High
// Precision Congestion Control", SIGCOMM 2019, Algorithm 1), as the authors' ns-3 simulator runs it
// (alibaba-edu/High-Precision-Congestion-Control: rdma-hw.cc, UpdateRateHp / FastReactHp; switch-node.cc,
// SwitchNotifyDequeue) with the settings of the paper's simulations (run.py --cc hp --hpai 50 --utgt 95:
// eta 0.95, R_AI 50 Mb/s, maxStage 0, a 1 Gb/s floor).
//
// Telemetry (cc::Traits::int_telemetry; stamped by the packet engine, packet_sim.cpp): every switch
// egress port writes, as a data packet starts to leave, the time, its bytes sent so far, the bytes left in
// its queues and its rate. The receiver acknowledges every data packet and echoes the packet's stack.
//
// Per ACK (T = the fabric's largest unloaded round trip, cc::Context::network_rtt, for every QP; B_j the
// rate of hop j; the previous sample of each hop is the previous ACK's):
//   u_j   = txRate_j / B_j + min(qlen_j, qlen_j') / (B_j T),  txRate_j = (bytes_j - bytes_j') / (ts_j - ts_j')
//   U    <- U (T - tau) / T + max_j u_j  tau / T, tau = the max hop's ts_j - ts_j', at most T (U starts at 1)
//   R     = Rc / (U / eta) + R_AI  if U >= eta or stage >= maxStage, else Rc + R_AI; R in [1 Gb/s, line]
// The QP is paced at R with a window of R x T (in packets: rounded up); both follow every ACK ("fast
// reaction"). Rc (and the stage) take R only once per round trip: on the first ACK of a packet sent after
// the last such update. The first ACK only stores its hops. A flow starts at line rate, window one BDP.
// Under per-packet routing (spray, adaptive, reps) two packets of a QP may cross different ports at hop j:
// only the hops where two consecutive ACKs' packets met the same port count (at least the last, into the
// receiver) [assumption: HPCC assumes one path per flow; this reads what the paths share].
// Not modelled: INT's field widths (times, bytes and queues are exact, not 24/20/17-bit units), its 42 bytes
// per packet (the transport's header size stands), ACKs behind data in the switches (the control class is
// served first here), PINT.
#pragma once

#include "engine/packet/cc/congestion_control.hpp"

namespace podnet::engine::packet::cc {

struct HpccParams {
  double eta = 0.95;      // target utilization
  double rate_ai = 50e6;  // R_AI, bit/s (W_AI / T)
  int max_stage = 0;      // additive-increase stages before a multiplicative step
  double min_rate = 1e9;  // bit/s
};

class Hpcc final : public CongestionControl {
 public:
  Hpcc(const HpccParams& p, const Context& ctx);
  const HpccParams& params() const { return p_; }

  void init(Flow& f, double line) const override;
  Reaction on_feedback(Flow& f, int64_t now, const Feedback& fb) const override;

 private:
  void set_window(Flow& f, double rate) const;

  HpccParams p_;
  Context ctx_;
  double t_ps_ = 0;  // T
};

}  // namespace podnet::engine::packet::cc
