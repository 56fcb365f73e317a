#include "engine/packet/cc/nscc.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

namespace podnet::engine::packet::cc {

namespace {
constexpr double kRefBps = 100e9;  // the ECN band is given at 100 Gb/s and scales with the port rate

Traits nscc_traits(const NsccParams& p, const Context& ctx) {
  Traits t;
  t.ecn = true;
  t.ecn_ref_bps = kRefBps;
  const double bdp = kRefBps / 8.0 * static_cast<double>(ctx.network_rtt) / 1e12;
  t.kmin = std::llround(p.ecn_low * bdp);
  t.kmax = std::llround(p.ecn_high * bdp);
  t.pmax = 1.0;  // linear from 0 at kmin to 1 at kmax
  t.ack_echo = true;
  t.rtt = true;
  t.trim = true;
  t.receiver_credits = p.receiver_credits;
  return t;
}
}  // namespace

Nscc::Nscc(const NsccParams& p, const Context& ctx)
    : CongestionControl(nscc_traits(p, ctx)),
      p_(p),
      ctx_(ctx),
      target_(std::llround(p.target_of_rtt * static_cast<double>(ctx.network_rtt))),
      wire_(ctx.mtu + ctx.header) {}

void Nscc::init(Flow& f, double line) const {
  CongestionControl::init(f, line);
  // The base round trip starts at the fabric's (the NIC set the QP's own path's; the larger wins) and
  // falls to the smallest sample.
  f.base_rtt = std::max(f.base_rtt, ctx_.network_rtt);
  f.wnd_bytes = p_.max_wnd_bdp * bdp(f, static_cast<double>(f.base_rtt));
  f.inc = f.avg_delay = f.adjust_bytes = f.qa_bytes = f.fi_bytes = 0;
  f.fast = f.qa_nack = f.qa_armed = false;
  f.qa_psn = 0;
  f.med_marks = f.med_pos = f.med_n = 0;
  clamp(f);
}

void Nscc::start(Flow& f, int64_t now) const {
  CongestionControl::start(f, now);
  f.last_adjust = f.last_eta = now;
  f.t_dec = now - f.base_rtt;  // a decrease may come at once
  f.qa_end = now + f.base_rtt + target_;
}

void Nscc::clamp(Flow& f) const {
  const double wmax = p_.max_wnd_bdp * bdp(f, static_cast<double>(f.base_rtt));
  f.wnd_bytes = std::clamp(f.wnd_bytes, wire_, std::max(wire_, wmax));
  f.window = static_cast<uint32_t>(std::max(1.0, std::floor(f.wnd_bytes / wire_)));
}

void Nscc::fulfil(Flow& f, int64_t now) const {
  const auto R = static_cast<double>(ctx_.network_rtt);
  if (f.adjust_bytes < p_.adjust_mtus * wire_ && static_cast<double>(now - f.last_adjust) < R) return;
  const double a = bdp(f, R) / p_.ref_bdp;
  f.wnd_bytes += f.inc / f.wnd_bytes;
  f.inc = 0;
  f.adjust_bytes = 0;
  f.last_adjust = now;
  if (static_cast<double>(now - f.last_eta) >= R) {
    f.wnd_bytes += p_.eta * ctx_.mtu * a;
    f.last_eta = now;
  }
}

bool Nscc::quick_adapt(Flow& f, int64_t now, double d, bool nack, uint32_t snd_nxt) const {
  if (now < f.qa_end) return false;
  const bool armed = f.qa_armed;  // the first period after the start is not judged
  const bool trigger = f.qa_nack || nack || d > p_.qa_delay * static_cast<double>(target_);
  const double achieved = f.qa_bytes;
  f.qa_armed = true;
  f.qa_nack = false;
  f.qa_bytes = 0;
  f.qa_end = now + f.base_rtt + target_;
  const double wmax = p_.max_wnd_bdp * bdp(f, static_cast<double>(f.base_rtt));
  if (!armed || !trigger || achieved >= wmax / p_.qa_gate) return false;
  f.wnd_bytes = std::max(achieved, wire_);
  f.inc = 0;
  f.fast = false;
  f.fi_bytes = 0;
  f.qa_psn = snd_nxt;  // marks on what was sent before are not answered again
  clamp(f);
  return true;
}

Reaction Nscc::on_feedback(Flow& f, int64_t now, const Feedback& fb) const {
  const auto T = static_cast<double>(target_);
  const auto R = static_cast<double>(ctx_.network_rtt);
  const double a = bdp(f, R) / p_.ref_bdp;
  const double b = T / p_.ref_rtt_ps;
  // Bytes the receiver newly has, in order or not (htsim's recvd_bytes): a hole does not hide progress.
  const double n = static_cast<double>(fb.received) * wire_;
  f.qa_bytes += n;
  f.adjust_bytes += n;

  if (fb.nack) {
    if (!fb.trimmed) return {};  // a hole NACK: the resend is the NIC's; the window waits for a trim or a mark
    f.avg_delay = (1 - p_.avg_weight) * f.avg_delay + p_.avg_weight * R;
    f.qa_nack = true;
    // A packet sent before the last quick adapt: that cut answered it already (htsim's bytes to ignore).
    if (fb.psn < f.qa_psn) return {};
    // With receiver credits a trim at the last hop is the receiver's to answer (its pacer), not the window's.
    if (!quick_adapt(f, now, 0, true, fb.snd_nxt) && !(fb.last_hop && traits().receiver_credits)) {
      f.wnd_bytes -= wire_;
      clamp(f);
    }
    return {};
  }

  // The delay sample, and the base round trip it is measured from.
  double d = f.avg_delay;
  if (fb.rtt > 0) {
    if (fb.rtt < f.base_rtt) f.base_rtt = fb.rtt;
    d = static_cast<double>(fb.rtt - f.base_rtt);
  }
  // Marks on packets sent before the last quick adapt: that cut answered them; the ACK changes nothing.
  const bool answered = fb.marked > 0 && fb.snd_una < f.qa_psn;
  bool marked = fb.marked > 0 && !answered;
  if (p_.median_of > 0 && fb.rtt > 0) {  // the multipath variant: the median of the last samples decides
    f.med_marks = static_cast<uint8_t>((f.med_marks & ~(1u << f.med_pos)) | (marked ? 1u << f.med_pos : 0u));
    d = median_push(f, d, p_.median_of);
    marked = 2 * std::popcount(static_cast<unsigned>(f.med_marks & ((1u << f.med_n) - 1))) > f.med_n;
  }
  if (fb.rtt > 0) {
    const double s = (!marked && d > T) ? 0.25 * static_cast<double>(f.base_rtt) : d;
    f.avg_delay = (1 - p_.avg_weight) * f.avg_delay + p_.avg_weight * s;
  }
  if (answered) return {};
  if (quick_adapt(f, now, d, false, fb.snd_nxt)) return {};

  if (!marked && d < T) {
    if (d < p_.fast_delay_ps) {
      f.fi_bytes += n;
      if (f.fast || f.fi_bytes > f.wnd_bytes) {
        f.fast = true;
        f.wnd_bytes += p_.fi_scale * a * n;
      }
    } else {
      f.fi_bytes = 0;
      f.fast = false;
    }
    if (!f.fast) f.inc += p_.pi * ctx_.mtu * a * b / T * n * (T - d);
  } else if (!marked) {
    f.fast = false;
    f.fi_bytes = 0;
    f.inc += p_.fi * ctx_.mtu * a * n;
  } else if (d >= T) {
    f.fast = false;
    f.fi_bytes = 0;
    if (f.avg_delay > T && now - f.t_dec >= f.base_rtt) {
      f.wnd_bytes *= std::max(1 - p_.gamma * (f.avg_delay - T) / f.avg_delay, p_.max_cut);
      f.t_dec = now;
    }
  }
  fulfil(f, now);
  clamp(f);
  return {};
}

}  // namespace podnet::engine::packet::cc
