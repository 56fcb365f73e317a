// Ports: the egress side of every directed link (routing/route.hpp).
//
// Model (packet_sim.hpp §1, §3, §4):
// - A packet of w wire bytes leaves port d in ser(d, w) = 8 w / C_d (rounded
//   to 1 ps) and reaches the other end after the link's latency, plus the
//   topology's switch latency when that end is a switch. On Copper/Optical
//   links a data packet has w = payload + header bytes of the transport; on
//   NVLink/PCIe only the payload is carried.
// - Three FIFO classes: control (strict priority, never paused, never
//   dropped, not counted in the buffer), the RDMA data class (lossless with
//   PFC or credits), and a lossy data class. The scheduler (pick) serves the
//   control class first, then round-robin over lossless, lossy and the
//   node's own QPs (the NIC's scheduler, passed in); the lossless class and
//   the QPs (when lossless) wait while the port is paused or short of credits.
// - ECN (the CP of DCQCN, or any cc::Traits::ecn algorithm): when a data
//   packet leaves a switch's egress queue that still holds q bytes of its
//   class, it is marked with probability
//     p = 0 (q <= Kmin), Pmax (q - Kmin) / (Kmax - Kmin) (Kmin < q <= Kmax), 1 (q > Kmax)
//   (at dequeue, as HPCC's switch: the mark reflects the queue now). Kmin and
//   Kmax scale with the port rate when the algorithm says so. The draws come
//   from one seeded stream.
// - PFC state of the receiving side: PAUSE holds the data class for 65535
//   quanta x 512 bit / C, XON resumes at once; time paused is counted.
// - Telemetry: packets, bytes, drops, marks, PAUSE frames, the time-integral
//   and peak of data bytes queued, the time spent at each depth
//   (depth_histogram.hpp: quantiles), peak utilization over util_window.
// Ports own this state; the simulation core moves packets between them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/rng.hpp"
#include "engine/depth_histogram.hpp"
#include "engine/packet/cc/congestion_control.hpp"
#include "engine/packet/lane.hpp"
#include "engine/packet/packet.hpp"
#include "engine/packet/packet_sim.hpp"
#include "routing/route.hpp"
#include "topology/topology.hpp"

namespace podnet::engine::packet {

struct PortInfo {
  int64_t bps = 1;
  int64_t latency = 0;       // link latency (ps)
  int64_t arrive_extra = 0;  // latency + switch latency when entering a switch
  int64_t quanta_ps = 0;     // one full PAUSE (65535 quanta)
  int64_t kmin = 0, kmax = 0;
  double pmax = 0;
  topology::NodeId from = 0, to = 0;
  bool net = false;       // Copper/Optical: header bytes on the wire
  bool from_mmu = false;  // leaves a switch-like node (buffer, ECN)
  bool to_mmu = false;    // enters a switch (buffer admission, PFC / credits)
};

// What every packet touches, in the first cache line; the queues next; the rest after.
struct alignas(64) PortState {
  int64_t busy_until = 0;
  int64_t kick_at = -1;
  int64_t qbytes = 0;  // data bytes queued (telemetry)
  int64_t q_last = 0;
  int64_t win_idx = -1;
  double win_bytes = 0;
  double next_bytes = 0;  // payload of a packet serialized across the window's end, owed to the next window
  bool paused = false;
  bool credit_limited = false;
  uint8_t rr = 0;
  Ring q[3];
  int64_t pause_until = 0;
  int64_t paused_since = 0;
  int64_t credits = 0;
};

// The per-packet part of PortInfo, packed two per cache line.
struct PortHot {
  int64_t bps = 1;
  int64_t arrive_extra = 0;
  topology::NodeId from = 0, to = 0;
  bool net = false, from_mmu = false, to_mmu = false;
};

class Ports {
 public:
  // `switch_like(n)`: a node with a buffer and ECN marking (switches; torus chips).
  template <class SwitchLike>
  Ports(const topology::Topology& t, const cc::Traits& cc, Rng rng, SwitchLike switch_like) : rng_(rng) {
    const int32_t D = routing::dir_link_count(t);
    const int64_t swlat = t.switch_latency.ps;
    info.resize(D);
    state.resize(D);
    stats_of.resize(D);
    for (routing::DirLink d = 0; d < D; ++d) {
      const auto& l = t.links[routing::link_of(d)];
      PortInfo& p = info[d];
      p.from = routing::dir_from(d, t);
      p.to = routing::dir_to(d, t);
      p.bps = std::max<int64_t>(1, std::llround(l.capacity.bps));
      p.latency = l.latency.ps;
      p.arrive_extra = p.latency + (t.nodes[p.to].kind == topology::NodeKind::Switch ? swlat : 0);
      p.quanta_ps = std::llround(65535.0 * 512.0 * 1e12 / static_cast<double>(p.bps));
      p.net = l.media == topology::Media::Copper || l.media == topology::Media::Optical;
      p.from_mmu = switch_like(p.from);
      p.to_mmu = t.nodes[p.to].kind == topology::NodeKind::Switch;  // torus chips: unlimited buffer (no PFC cycle)
      const double sc = cc.ecn_ref_bps > 0 ? static_cast<double>(p.bps) / cc.ecn_ref_bps : 1.0;
      p.kmin = std::llround(static_cast<double>(cc.kmin) * sc);
      p.kmax = std::llround(static_cast<double>(cc.kmax) * sc);
      p.pmax = cc.pmax;
      if (cc.receiver_credits && p.from_mmu && !p.to_mmu) {  // into a NIC: the receiver's pacer owns it
        p.kmin = p.kmax = std::numeric_limits<int64_t>::max() / 4;
        p.pmax = 0;
      }
    }
    hot.resize(D);
    for (routing::DirLink d = 0; d < D; ++d) {
      const PortInfo& i = info[d];
      hot[d] = PortHot{i.bps, i.arrive_extra, i.from, i.to, i.net, i.from_mmu, i.to_mmu};
    }
  }

  std::vector<PortInfo> info;
  std::vector<PortHot> hot;  // copies of the fields every packet reads
  std::vector<PortState> state;
  std::vector<PortStats> stats_of;

  // Partitioned runs (partition.hpp): ECN draws from a stream per port (`seed` mixed with the port), and
  // queued packets are counted per unit (`unit_from`: the unit of every port), the peak being the sum of
  // the units' own peaks: what one thread sees does not depend on what the others do.
  void partition(const std::vector<int32_t>& unit_from, int32_t units, uint64_t seed) {
    unit_from_ = unit_from.data();
    unit_queued_.assign(static_cast<size_t>(units), 0);
    unit_peak_.assign(static_cast<size_t>(units), 0);
    port_rng_ = port_streams(seed, state.size());
  }
  // A stream per port from one seed (the partitioned engine's draws: no two threads share one).
  static std::vector<Rng> port_streams(uint64_t seed, size_t ports) {
    std::vector<Rng> r;
    r.reserve(ports);
    for (size_t d = 0; d < ports; ++d) r.emplace_back(mix64(seed ^ (0x9E3779B97F4A7C15ULL * (d + 1))));
    return r;
  }
  uint64_t peak_packets_of_units() const {
    uint64_t s = 0;
    for (const int64_t p : unit_peak_) s += static_cast<uint64_t>(p);
    return s;
  }

  // Prefetch hints for a port that will send soon (they change nothing): request_state asks for its state and
  // statistics; request_queues, some events later once they have arrived, for its queues' head packets and
  // its depth histogram's bucket.
  [[gnu::always_inline]] void request_state(routing::DirLink p) const {
    const char* s = reinterpret_cast<const char*>(&state[p]);
    __builtin_prefetch(s);
    __builtin_prefetch(s + 64);
    __builtin_prefetch(s + 128);
    __builtin_prefetch(&stats_of[p].queue_hist);
  }
  [[gnu::always_inline]] void request_queues(routing::DirLink p) const {
    const PortState& s = state[p];
    for (const Ring& r : s.q)
      if (r.count != 0) __builtin_prefetch(&r.front());
    if (s.qbytes <= 0) return;  // an empty queue adds nothing to the histogram
    const std::vector<double>& h = stats_of[p].queue_hist;
    const auto b = static_cast<size_t>(depth::bucket(s.qbytes));
    if (b < h.size()) __builtin_prefetch(&h[b]);
  }

  bool queues_empty(routing::DirLink p) const {
    const PortState& s = state[p];
    return s.q[0].count == 0 && s.q[1].count == 0 && s.q[2].count == 0;
  }

  void enqueue(routing::DirLink p, const Packet& k, int64_t now) {
    state[p].q[k.cls].push(k);
    if (k.cls != kCtrl) touch_queue(p, k.wire, now);
    if (unit_from_ != nullptr) {
      const auto u = static_cast<size_t>(unit_from_[p]);
      if (++unit_queued_[u] > unit_peak_[u]) unit_peak_[u] = unit_queued_[u];
    } else if (++queued_ > static_cast<int64_t>(lane().stats.peak_packets)) {
      lane().stats.peak_packets = static_cast<uint64_t>(queued_);
    }
  }
  Packet dequeue(routing::DirLink p, uint8_t cls, int64_t now) {
    const Packet k = state[p].q[cls].pop();
    if (cls != kCtrl) touch_queue(p, -static_cast<int64_t>(k.wire), now);
    if (unit_from_ != nullptr) --unit_queued_[static_cast<size_t>(unit_from_[p])];
    else --queued_;
    return k;
  }

  // The scheduler: the next packet port p sends, if any. `data_cls` is the
  // run's data class; `qp_next(out)` asks the NIC for its next paced packet
  // on p (false: none due), `qp_waiting()` whether it has QPs on p at all.
  template <class QpWaiting, class QpNext>
  bool pick(routing::DirLink p, uint8_t data_cls, int64_t qp_wire, int64_t now, QpWaiting&& qp_waiting,
            QpNext&& qp_next, Packet& out) {
    PortState& s = state[p];
    if (!s.q[kCtrl].empty()) {
      out = dequeue(p, kCtrl, now);
      return true;
    }
    for (int i = 0; i < 3; ++i) {
      const int src = (s.rr + i) % 3;
      bool got = false;
      if (src == 0) {
        const Ring& r = s.q[kLossless];
        if (!r.empty() && !s.paused && (!s.credit_limited || s.credits >= r.front().wire)) {
          out = dequeue(p, kLossless, now);
          got = true;
        }
      } else if (src == 1) {
        if (!s.q[kLossy].empty()) {
          out = dequeue(p, kLossy, now);
          got = true;
        }
      } else if (qp_waiting()) {
        const bool blocked = data_cls == kLossless && (s.paused || (s.credit_limited && s.credits < qp_wire));
        if (!blocked) got = qp_next(out);
      }
      if (got) {
        s.rr = static_cast<uint8_t>((src + 1) % 3);
        return true;
      }
    }
    return false;
  }

  // ECN at dequeue (above): marks k on the queue it leaves behind at `out`.
  void mark_ecn(routing::DirLink out, Packet& k) {
    const PortInfo& I = info[out];
    const int64_t qb = state[out].q[k.cls].bytes;
    if (qb <= I.kmin) return;
    bool mark = true;
    if (qb <= I.kmax) {
      const double p =
          I.pmax * static_cast<double>(qb - I.kmin) / static_cast<double>(std::max<int64_t>(1, I.kmax - I.kmin));
      mark = (port_rng_.empty() ? rng_ : port_rng_[static_cast<size_t>(out)]).uniform() < p;
    }
    if (mark) {
      k.ecn |= 1;
      ++stats_of[out].ecn_marks;
      ++lane().stats.ecn_marks;
    }
  }

  // PFC at the sending side of port p: a PAUSE (on) or XON arrived.
  void on_pause(routing::DirLink p, bool on, int64_t now) {
    PortState& s = state[p];
    if (on) {
      ++stats_of[p].pause_rx;
      if (s.paused && s.pause_until < now) unpause(p, s.pause_until);
      if (!s.paused) {
        s.paused = true;
        s.paused_since = now;
        ++lane().paused_ports;
      }
      s.pause_until = now + info[p].quanta_ps;
    } else if (s.paused) {
      unpause(p, std::min(now, s.pause_until));
    }
  }
  void unpause(routing::DirLink p, int64_t at) {
    PortState& s = state[p];
    s.paused = false;
    --lane().paused_ports;
    stats_of[p].paused.ps += at - s.paused_since;
  }

  // Telemetry of a data packet of `payload` bytes leaving p at `now`.
  // A data packet whose serialization takes [now, now + ser_ps): its payload counts in the utilization windows
  // in proportion to the time it spends in each (all in one window, the one it started in, made a saturated
  // port read 100.3 %).
  void count_data(routing::DirLink p, int64_t payload, int64_t now, int64_t ser_ps, int64_t window_ps, double cap_bps) {
    PortState& s = state[p];
    PortStats& st = stats_of[p];
    ++st.data_packets;
    st.payload_bytes += static_cast<double>(payload);
    const int64_t w = now / window_ps;
    if (w != s.win_idx) roll_window(s, st, w, window_ps, cap_bps);
    const int64_t edge = (w + 1) * window_ps;
    double here = static_cast<double>(payload);
    if (ser_ps > 0 && now + ser_ps > edge) {
      here = static_cast<double>(payload) * static_cast<double>(edge - now) / static_cast<double>(ser_ps);
      s.next_bytes += static_cast<double>(payload) - here;
    }
    s.win_bytes += here;
  }

  // Closes the time integrals at `now` (end of a run).
  // Closes the run's queue integrals, pauses and utilization windows (only the ports of the units marked in
  // `units_mine`, when given: another rank's copy of the others is stale).
  void flush(int64_t now, int64_t window_ps, const std::vector<double>& cap,
             const std::vector<uint8_t>* units_mine = nullptr) {
    const double win_s = static_cast<double>(window_ps) * 1e-12;
    for (size_t p = 0; p < state.size(); ++p) {
      if (units_mine && !(*units_mine)[static_cast<size_t>(unit_from_[p])]) continue;
      PortState& s = state[p];
      PortStats& st = stats_of[p];
      const double dt = static_cast<double>(now - s.q_last);
      st.queue_byte_ps += static_cast<double>(s.qbytes) * dt;
      depth::add(st.queue_hist, s.qbytes, dt);
      s.q_last = now;
      if (s.paused) {
        const int64_t end = std::min(now, s.pause_until);
        st.paused.ps += std::max<int64_t>(0, end - s.paused_since);
        s.paused_since = end;
      }
      if (s.win_idx >= 0 && win_s > 0) {
        st.peak_utilization =
            std::max(st.peak_utilization, std::max(s.win_bytes, s.next_bytes) * 8.0 / (cap[p] * win_s));
        s.win_idx = -1;
        s.win_bytes = 0;
        s.next_bytes = 0;
      }
    }
  }

 private:
  // Closes window s.win_idx (and the one after it, when only a carried packet's tail fell in it) and opens w.
  static void roll_window(PortState& s, PortStats& st, int64_t w, int64_t window_ps, double cap_bps) {
    const double full = cap_bps * static_cast<double>(window_ps) * 1e-12;  // bits a window holds
    if (s.win_idx >= 0) {
      st.peak_utilization = std::max(st.peak_utilization, s.win_bytes * 8.0 / full);
      if (w > s.win_idx + 1) st.peak_utilization = std::max(st.peak_utilization, s.next_bytes * 8.0 / full);
    }
    s.win_bytes = s.win_idx >= 0 && w == s.win_idx + 1 ? s.next_bytes : 0.0;
    s.next_bytes = 0;
    s.win_idx = w;
  }

  void touch_queue(routing::DirLink p, int64_t delta, int64_t now) {
    PortState& s = state[p];
    PortStats& st = stats_of[p];
    const double dt = static_cast<double>(now - s.q_last);
    st.queue_byte_ps += static_cast<double>(s.qbytes) * dt;
    depth::add(st.queue_hist, s.qbytes, dt);
    s.q_last = now;
    s.qbytes += delta;
    if (s.qbytes > st.max_queue) st.max_queue = s.qbytes;
  }

  Rng rng_;
  int64_t queued_ = 0;  // packets in port queues (telemetry: peak)
  const int32_t* unit_from_ = nullptr;
  std::vector<int64_t> unit_queued_, unit_peak_;
  std::vector<Rng> port_rng_;
};

}  // namespace podnet::engine::packet
