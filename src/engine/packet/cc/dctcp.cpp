#include "engine/packet/cc/dctcp.hpp"

#include <algorithm>
#include <cmath>

namespace podnet::engine::packet::cc {

namespace {
Traits dctcp_traits(const DctcpParams& p) {
  Traits t;
  t.ecn = true;
  t.ecn_ref_bps = p.ref_bps;
  t.kmin = t.kmax = p.k;  // step marking: q > K marks, never a random draw
  t.pmax = 1.0;
  t.ack_echo = true;
  return t;
}
constexpr double kMaxWindow = 1 << 20;
void set_window(Flow& f) {
  f.cwnd = std::min(f.cwnd, kMaxWindow);
  f.window = static_cast<uint32_t>(std::max(1.0, std::floor(f.cwnd)));
}
}  // namespace

Dctcp::Dctcp(const DctcpParams& p) : CongestionControl(dctcp_traits(p)), p_(p) {}

void Dctcp::init(Flow& f, double line) const {
  CongestionControl::init(f, line);
  f.alpha = p_.alpha0;
  f.cwnd = p_.initial_window;
  f.slow_start = true;
  f.win_end = 0;
  f.win_acked = f.win_marked = 0;
  set_window(f);
}

Reaction Dctcp::on_feedback(Flow& f, int64_t /*now*/, const Feedback& fb) const {
  const uint32_t acked = fb.acked, marked = fb.marked, snd_una = fb.snd_una, snd_nxt = fb.snd_nxt;
  f.win_acked += acked;
  f.win_marked += marked;
  if (acked > 0) f.cwnd += f.slow_start ? static_cast<double>(acked) : static_cast<double>(acked) / f.cwnd;
  if (snd_una >= f.win_end && f.win_acked > 0) {  // the observation window ends
    const double F = std::min(1.0, static_cast<double>(f.win_marked) / static_cast<double>(f.win_acked));
    f.alpha = (1.0 - p_.g) * f.alpha + p_.g * F;
    if (f.win_marked > 0) {
      f.cwnd = std::max(2.0, f.cwnd * (1.0 - f.alpha / 2.0));
      f.slow_start = false;
    }
    f.win_end = snd_nxt;
    f.win_acked = f.win_marked = 0;
  }
  set_window(f);
  return {};
}

}  // namespace podnet::engine::packet::cc
