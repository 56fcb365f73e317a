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

void Timely::start(Flow& f, int64_t now) const {
  CongestionControl::start(f, now);
  f.tl_update = now;
}

Reaction Timely::on_feedback(Flow& f, int64_t now, const Feedback& fb) const {
  if (fb.nack || fb.rtt <= 0) return {};
  const auto rtt = static_cast<double>(fb.rtt);
  if (f.prev_rtt < 0) f.prev_rtt = rtt;  // the first sample: no gradient yet
  f.rtt_diff = (1 - p_.alpha) * f.rtt_diff + p_.alpha * (rtt - f.prev_rtt);
  f.prev_rtt = rtt;
  const double gradient = f.rtt_diff / p_.min_rtt_ps;
  const double step = std::min(static_cast<double>(now - f.tl_update) / p_.min_rtt_ps, 1.0);
  f.tl_update = now;
  const double delta = step * p_.delta_of_line * f.line;
  double r = f.rate;
  if (rtt < p_.t_low_ps) {
    r += delta;
  } else if (rtt > p_.t_high_ps) {
    r *= 1 - step * p_.beta * (1 - p_.t_high_ps / rtt);
  } else if (gradient <= 0) {
    ++f.hai;
    r += (f.hai >= static_cast<uint32_t>(p_.hai_after) ? p_.hai_after : 1) * delta;
  } else {
    f.hai = 0;
    r *= 1 - step * p_.beta * gradient;
  }
  Reaction out;
  out.rate = std::clamp(std::max(r, 0.5 * f.rate), p_.min_rate_of_line * f.line, f.line);
  return out;
}

}  // namespace podnet::engine::packet::cc
