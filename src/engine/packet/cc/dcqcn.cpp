#include "engine/packet/cc/dcqcn.hpp"

#include <algorithm>
#include <cmath>

namespace podnet::engine::packet::cc {

using namespace podnet::literals;

DcqcnParams dcqcn_paper() {
  DcqcnParams p;
  p.ref_bps = 0;  // absolute values
  p.kmin = 5'000;
  p.kmax = 200'000;
  p.pmax = 0.01;
  p.g = 1.0 / 256;
  p.alpha0 = 1.0;
  p.cnp_interval = 50_us;
  p.alpha_interval = 55_us;
  p.decrease_interval = 50_us;
  p.increase_timer = 55_us;
  p.byte_counter = 10'000'000;
  p.fast_recovery = 5;
  p.rai_bps = 40e6;
  p.rhai_bps = 400e6;
  p.min_rate_bps = 100e6;
  p.clamp_target = true;
  return p;
}

DcqcnParams dcqcn_nic() {
  DcqcnParams p;
  p.ref_bps = 25e9;  // scale by bw / 25G
  p.kmin = 100'000;
  p.kmax = 400'000;
  p.pmax = 0.2;
  p.g = 1.0 / 256;
  p.alpha0 = 1.0;
  p.cnp_interval = 4_us;
  p.alpha_interval = 1_us;
  p.decrease_interval = 4_us;
  p.increase_timer = 300_us;
  p.byte_counter = 0;
  p.fast_recovery = 1;
  p.rai_bps = 5e6;
  p.rhai_bps = 50e6;
  p.min_rate_bps = 1e6;
  p.clamp_target = false;
  return p;
}

namespace {
Traits dcqcn_traits(const DcqcnParams& p) {
  Traits t;
  t.ecn = true;
  t.ecn_ref_bps = p.ref_bps;
  t.kmin = p.kmin;
  t.kmax = p.kmax;
  t.pmax = p.pmax;
  t.cnp = true;
  t.byte_counter = p.byte_counter > 0;
  return t;
}
}  // namespace

Dcqcn::Dcqcn(const DcqcnParams& p) : CongestionControl(dcqcn_traits(p)), p_(p) {}

void Dcqcn::init(Flow& f, double line) const {
  CongestionControl::init(f, line);
  f.alpha = p_.alpha0;
}

bool Dcqcn::on_marked(Flow& f, int64_t now) const {
  if (f.cnp_once && now - f.last_cnp < p_.cnp_interval.ps) return false;
  f.cnp_once = true;
  f.last_cnp = now;
  return true;
}

Reaction Dcqcn::on_cnp(Flow& f, int64_t now) const {
  const double g = p_.g;
  if (!f.cnp_seen) {  // the RP starts at the first CNP: alpha = alpha0 (HPCC's mlx model, the paper's alpha = 1)
    f.cnp_seen = true;
    f.alpha = p_.alpha0;
  } else {
    if (p_.alpha_interval.ps > 0) {
      const int64_t n = (now - f.t_alpha) / p_.alpha_interval.ps;
      if (n > 0) f.alpha *= std::pow(1.0 - g, static_cast<double>(n));
    }
    f.alpha = (1.0 - g) * f.alpha + g;
  }
  f.t_alpha = now;
  if (f.decreased && now - f.t_dec < p_.decrease_interval.ps) return {};
  if (p_.clamp_target || f.t_stage > 0 || f.b_stage > 0) f.target = f.rate;
  Reaction r;
  r.rate = std::max(p_.min_rate_bps, f.rate * (1.0 - f.alpha / 2.0));
  f.t_dec = now;
  f.decreased = true;
  f.t_stage = f.b_stage = 0;
  f.bytes_since = 0;
  ++f.stamp;
  r.timer = now + p_.increase_timer.ps;
  return r;
}

double Dcqcn::increase(Flow& f, int stage_for_mlx) const {
  const double sc = scale(f.line);
  const int F = p_.fast_recovery;
  if (stage_for_mlx < 0) {  // paper: both counters
    const int hi = std::max(f.t_stage, f.b_stage), lo = std::min(f.t_stage, f.b_stage);
    if (hi <= F) {
      // fast recovery
    } else if (lo > F) {
      f.target += p_.rhai_bps * sc;
    } else {
      f.target += p_.rai_bps * sc;
    }
  } else if (stage_for_mlx == F) {
    f.target += p_.rai_bps * sc;
  } else if (stage_for_mlx > F) {
    f.target += p_.rhai_bps * sc;
  }
  f.target = std::min(f.target, f.line);
  return std::min(f.line, (f.rate + f.target) / 2.0);
}

Reaction Dcqcn::on_sent(Flow& f, int64_t wire_bytes) const {
  Reaction r;
  if (f.rate < f.line || f.target < f.line) {
    f.bytes_since += wire_bytes;
    if (f.bytes_since >= p_.byte_counter) {
      f.bytes_since -= p_.byte_counter;
      ++f.b_stage;
      r.rate = increase(f, -1);
    }
  }
  return r;
}

Reaction Dcqcn::on_timer(Flow& f, int64_t /*now*/) const {
  Reaction r;
  if (p_.byte_counter > 0) {
    ++f.t_stage;
    r.rate = increase(f, -1);
  } else {
    r.rate = increase(f, f.t_stage);
    ++f.t_stage;
  }
  return r;
}

int64_t Dcqcn::timer_next(const Flow& f, int64_t now) const {
  return f.rate < f.line || f.target < f.line ? now + p_.increase_timer.ps : -1;
}

}  // namespace podnet::engine::packet::cc
