#include "engine/packet/cc/timely.hpp"

#include <algorithm>

namespace podnet::engine::packet::cc {

namespace {
Traits timely_traits() {
  Traits t;
  t.ack_echo = true;  // on_feedback on every ACK
  t.rtt = true;
  return t;
}
}  // namespace

Timely::Timely(const TimelyParams& p) : CongestionControl(timely_traits()), p_(p) {}

void Timely::init(Flow& f, double line) const {
  CongestionControl::init(f, line);
  f.prev_rtt = -1;
  f.rtt_diff = 0;
  f.hai = 0;
}

Reaction Timely::on_feedback(Flow& f, int64_t /*now*/, const Feedback& fb) const {
  if (fb.nack || fb.rtt <= 0) return {};
  const auto rtt = static_cast<double>(fb.rtt);
  if (f.prev_rtt < 0) f.prev_rtt = rtt;  // the first sample: no gradient yet
  f.rtt_diff = (1 - p_.alpha) * f.rtt_diff + p_.alpha * (rtt - f.prev_rtt);
  f.prev_rtt = rtt;
  const double gradient = f.rtt_diff / p_.min_rtt_ps;
  double r = f.rate;
  if (rtt < p_.t_low_ps) {
    r += p_.delta_bps;
  } else if (rtt > p_.t_high_ps) {
    r *= 1 - p_.beta * (1 - p_.t_high_ps / rtt);
  } else if (gradient <= 0) {
    ++f.hai;
    r += (f.hai >= static_cast<uint32_t>(p_.hai_after) ? p_.hai_after : 1) * p_.delta_bps;
  } else {
    f.hai = 0;
    r *= 1 - p_.beta * gradient;
  }
  Reaction out;
  out.rate = std::clamp(r, p_.min_rate_of_line * f.line, f.line);
  return out;
}

}  // namespace podnet::engine::packet::cc
