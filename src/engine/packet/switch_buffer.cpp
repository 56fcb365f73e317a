#include "engine/packet/switch_buffer.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"

namespace podnet::engine::packet {

using routing::DirLink;
using topology::NodeId;

std::string buffer_text(int64_t bytes) {
  return bytes >= 1'000'000 ? fmt::format("{:.2f} MB", static_cast<double>(bytes) / 1e6)
                            : fmt::format("{:.1f} KB", static_cast<double>(bytes) / 1e3);
}

SwitchBuffer::SwitchBuffer(const topology::Topology& t, const PacketOptions& opt, int64_t mtu_wire, bool pfc,
                           bool credits, Ports& ports)
    : dt_shift_(opt.dt_shift),
      reserve_(opt.reserve_bytes),
      resume_offset_(opt.resume_offset),
      pfc_(pfc),
      credits_(credits) {
  mmu_.resize(t.nodes.size());
  ingress_.resize(ports.info.size());
  const int64_t swlat = t.switch_latency.ps;
  for (NodeId n = 0; n < static_cast<NodeId>(t.nodes.size()); ++n) {
    if (t.nodes[n].kind != topology::NodeKind::Switch) continue;
    auto [b, e] = t.incident(n);
    Mmu& m = mmu_[n];
    m.dt_shift = dt_shift_;
    double rate_sum = 0;
    int deg = 0;
    for (const topology::LinkId* l = b; l != e; ++l) {
      const DirLink out = routing::dir_link(*l, n, t);
      rate_sum += static_cast<double>(ports.info[out].bps);
      ++deg;
    }
    m.buffer = opt.buffer_bytes > 0 ? opt.buffer_bytes
                                    : std::llround(rate_sum * static_cast<double>(opt.buffer_time.ps) / 8e12);
    for (const topology::LinkId* l = b; l != e; ++l) {
      const DirLink in = routing::dir_link(*l, n, t) ^ 1;
      const PortInfo& p = ports.info[in];
      if (pfc) {
        Ingress& g = ingress_[in];
        g.headroom = 2 * mtu_wire + 3840 +
                     std::llround(static_cast<double>(p.bps) * static_cast<double>(2 * p.latency + swlat) / 8e12);
        m.total_hdrm += g.headroom;
        m.total_rsrv += opt.reserve_bytes;
      }
      if (credits) {
        ports.state[in].credit_limited = true;
        ports.state[in].credits = std::max<int64_t>(2 * mtu_wire, m.buffer / std::max(1, deg));
      }
    }
    // A buffer set by hand must hold a packet: the shared pool admits one when a 2^-dt_shift share of its free
    // space does, after the lossless queues' reserves. Below that every packet is dropped and resent forever
    // (lossy), or sits in PFC headroom uncounted (lossless). PFC's headroom may exceed the buffer: a small
    // buffer then pauses early, which is what a storm study builds on purpose.
    const int64_t least = m.total_rsrv + (mtu_wire << dt_shift_);
    if (opt.buffer_bytes > 0 && m.buffer < least)
      throw InputError(fmt::format(
          "network.switch_buffer: {} leaves {} no room for a packet: its shared pool takes a {} B packet once a "
          "1/{} share of the free space holds it{}, so it needs at least {}",
          buffer_text(m.buffer), t.nodes[n].name, thousands(mtu_wire), 1 << dt_shift_,
          pfc ? fmt::format(", after {} of reserves for its {} lossless queues", buffer_text(m.total_rsrv), deg) : "",
          buffer_text(least)));
    if (deg > 0 && rate_sum > 0)
      worst_drain_ps_ = std::max(worst_drain_ps_, static_cast<double>(m.buffer) * 8e12 / (rate_sum / deg));
  }
}

SwitchBuffer::Admit SwitchBuffer::admit(NodeId n, DirLink in, int64_t lossy_queue_bytes, const Packet& k) {
  Mmu& m = mmu_[n];
  const int64_t s = k.wire;
  if (k.cls == kLossless) {
    Ingress& g = ingress_[in];
    if (credits_) {
      g.bytes += s;
      m.used += s;
      return Admit::Ok;
    }
    const int64_t rsrv = reserve_;
    const int64_t T = threshold(m);
    const int64_t sh = g.bytes > rsrv ? g.bytes - rsrv : 0;
    if (s + g.hdrm > g.headroom && s + sh > T) return Admit::Drop;
    const int64_t nb = g.bytes + s;
    if (nb <= rsrv) {
      g.bytes += s;
    } else if (nb - rsrv > T) {
      g.hdrm += s;
    } else {
      g.bytes += s;
      m.shared += std::min(s, nb - rsrv);
    }
    m.used += s;
    if (pfc_ && !g.pause_sent) {
      const int64_t sh2 = g.bytes > rsrv ? g.bytes - rsrv : 0;
      if (g.hdrm > 0 || sh2 >= threshold(m)) return Admit::OkPause;
    }
    return Admit::Ok;
  }
  if (lossy_queue_bytes + s > threshold(m) || m.used + s > m.buffer) return Admit::Drop;
  m.shared += s;
  m.used += s;
  return Admit::Ok;
}

bool SwitchBuffer::release(NodeId n, DirLink in, const Packet& k) {
  Mmu& m = mmu_[n];
  const int64_t s = k.wire;
  m.used -= s;
  if (k.cls != kLossless) {
    m.shared -= s;
    return false;
  }
  Ingress& g = ingress_[in];
  if (credits_) {
    g.bytes -= s;
    return false;
  }
  const int64_t rsrv = reserve_;
  const int64_t from_hdrm = std::min(g.hdrm, s);
  const int64_t from_shared = std::min(s - from_hdrm, g.bytes > rsrv ? g.bytes - rsrv : 0);
  m.shared -= from_shared;
  g.hdrm -= from_hdrm;
  g.bytes -= s - from_hdrm;
  if (g.pause_sent && g.hdrm == 0) {
    const int64_t sh = g.bytes > rsrv ? g.bytes - rsrv : 0;
    if (sh == 0 || sh + resume_offset_ <= threshold(m)) return true;
  }
  return false;
}

}  // namespace podnet::engine::packet
