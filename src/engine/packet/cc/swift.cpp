#include "engine/packet/cc/swift.hpp"

#include <algorithm>
#include <cmath>

namespace podnet::engine::packet::cc {

namespace {
Traits swift_traits() {
  Traits t;
  t.ack_echo = true;  // on_feedback on every ACK and NACK
  t.rtt = true;
  return t;
}
}  // namespace

Swift::Swift(const SwiftParams& p, const Context& ctx)
    : CongestionControl(swift_traits()), p_(p), ctx_(ctx), mss_(ctx.mtu + ctx.header) {
  const double range = p_.fs_range_of_base * p_.base_target_ps;
  fs_alpha_ = range / (1 / std::sqrt(p_.fs_min_cwnd) - 1 / std::sqrt(p_.fs_max_cwnd));
  fs_beta_ = -fs_alpha_ / std::sqrt(p_.fs_max_cwnd);
}

double Swift::target_ps(int32_t hops, double w) const {
  const double fs =
      std::clamp(fs_alpha_ / std::sqrt(w / mss_) + fs_beta_, 0.0, p_.fs_range_of_base * p_.base_target_ps);
  return p_.base_target_ps + hops * (p_.base_target_ps / p_.hop_div) + fs;
}

void Swift::init(Flow& f, double line) const {
  CongestionControl::init(f, line);
  const auto rtt = static_cast<double>(std::max(f.base_rtt, ctx_.network_rtt));
  f.wnd_bytes = line / 8.0 * rtt / 1e12;
  apply(f);
  f.rate = f.line;  // (apply's pacing is the NIC's to set, from a reaction)
}

void Swift::start(Flow& f, int64_t now) const {
  CongestionControl::start(f, now);
  f.t_dec = now - std::max(f.base_rtt, ctx_.network_rtt);                     // a cut may come at once
  f.avg_delay = static_cast<double>(std::max(f.base_rtt, ctx_.network_rtt));  // the last round trip seen
}

Reaction Swift::apply(Flow& f) const {
  f.wnd_bytes = std::clamp(f.wnd_bytes, p_.min_cwnd * mss_, p_.max_cwnd * mss_);
  f.window = static_cast<uint32_t>(std::max(1.0, std::floor(f.wnd_bytes / mss_)));
  Reaction r;
  // Below one packet: one packet out at a time, paced at W per round trip.
  const double rate = f.wnd_bytes >= mss_ ? f.line : std::min(f.line, f.wnd_bytes * 8 / (f.avg_delay / 1e12));
  if (rate != f.rate) r.rate = rate;
  return r;
}

Reaction Swift::on_feedback(Flow& f, int64_t now, const Feedback& fb) const {
  if (fb.nack) {
    if (now - f.t_dec >= static_cast<int64_t>(f.avg_delay)) {
      f.wnd_bytes *= 1 - p_.max_mdf;
      f.t_dec = now;
    }
    return apply(f);
  }
  if (fb.rtt <= 0) return {};
  const double rtt = p_.median_of > 0 ? median_push(f, static_cast<double>(fb.rtt), p_.median_of)
                                      : static_cast<double>(fb.rtt);
  f.avg_delay = rtt;
  const double n = static_cast<double>(fb.acked) * mss_;
  if (rtt < target_ps(f.hops, f.wnd_bytes)) {
    f.wnd_bytes += f.wnd_bytes >= mss_ ? mss_ * p_.ai * n / f.wnd_bytes : p_.ai * n;
  } else if (now - f.t_dec >= fb.rtt) {
    f.wnd_bytes *= std::max(1 - p_.beta * (rtt - target_ps(f.hops, f.wnd_bytes)) / rtt, 1 - p_.max_mdf);
    f.t_dec = now;
  }
  return apply(f);
}

}  // namespace podnet::engine::packet::cc
