#include "engine/packet/cc/hpcc.hpp"

#include <algorithm>
#include <cmath>

namespace podnet::engine::packet::cc {

namespace {
Traits hpcc_traits() {
  Traits t;
  t.ack_echo = true;  // on_feedback on every ACK and NACK
  t.int_telemetry = true;
  return t;
}
}  // namespace

Hpcc::Hpcc(const HpccParams& p, const Context& ctx)
    : CongestionControl(hpcc_traits()), p_(p), ctx_(ctx), t_ps_(static_cast<double>(ctx.network_rtt)) {}

void Hpcc::set_window(Flow& f, double rate) const {
  const double w = rate / 8.0 * t_ps_ / 1e12;  // bytes of payload
  f.window = static_cast<uint32_t>(std::max(1.0, std::ceil(w / ctx_.mtu)));
}

void Hpcc::init(Flow& f, double line) const {
  CongestionControl::init(f, line);
  f.hp_u = 1;
  f.hp_rc = line;
  f.hp_stage = 0;
  f.hp_last = 0;
  f.hp_started = false;
  f.int_n = 0;
  set_window(f, line);
}

Reaction Hpcc::on_feedback(Flow& f, int64_t /*now*/, const Feedback& fb) const {
  if (fb.nhops <= 0 || fb.hops == nullptr) return {};
  const auto n = static_cast<uint8_t>(std::min(fb.nhops, kMaxIntHops));
  Reaction r;
  if (f.hp_started && f.int_n == n) {
    // The busiest hop against the previous ACK's samples.
    double umax = -1, tau = 0;
    for (int j = 0; j < n; ++j) {
      const IntHop& a = fb.hops[j];
      const IntHop& b = f.int_prev[j];
      const double dt = static_cast<double>(a.ts - b.ts);
      const double bps = static_cast<double>(a.mbps) * 1e6;
      // The same sample twice gives no rate; another port (per-packet routing sent the two packets different
      // ways) is not this hop's history.
      if (dt <= 0 || bps <= 0 || a.port != b.port) continue;
      const double tx_rate = static_cast<double>(a.tx_bytes - b.tx_bytes) * 8e12 / dt;
      const double u = tx_rate / bps + static_cast<double>(std::min(a.qlen, b.qlen)) * 8e12 / (bps * t_ps_);
      if (u > umax) {
        umax = u;
        tau = dt;
      }
    }
    if (umax >= 0) {
      tau = std::min(tau, t_ps_);
      f.hp_u = (f.hp_u * (t_ps_ - tau) + umax * tau) / t_ps_;
      const double c = f.hp_u / p_.eta;
      double rate;
      int32_t stage;
      if (c >= 1 || f.hp_stage >= p_.max_stage) {
        rate = f.hp_rc / c + p_.rate_ai;
        stage = 0;
      } else {
        rate = f.hp_rc + p_.rate_ai;
        stage = f.hp_stage + 1;
      }
      rate = std::clamp(rate, std::min(p_.min_rate, f.line), f.line);
      if (fb.snd_una > f.hp_last) {  // a round trip's first ACK: the reference takes the rate
        f.hp_rc = rate;
        f.hp_stage = stage;
        f.hp_last = fb.snd_nxt;
      }
      r.rate = rate;  // the NIC paces at it
      set_window(f, rate);
    }
  } else if (!f.hp_started) {
    f.hp_started = true;
    f.hp_last = fb.snd_nxt;
  }
  std::copy(fb.hops, fb.hops + n, f.int_prev.begin());
  f.int_n = n;
  return r;
}

}  // namespace podnet::engine::packet::cc
