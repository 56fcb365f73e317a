#include "telemetry/recorder.hpp"

#include <algorithm>

#include "engine/depth_histogram.hpp"
#include "engine/packet_view.hpp"
#include "routing/route.hpp"

namespace podnet::telemetry {

Recorder::Recorder(const topology::Topology& topo, Options options) : topo_(topo), options_(options) {}

engine::NetworkOptions Recorder::instrument(engine::NetworkOptions base) {
  base.observers.observe = [this](const engine::RunObservation& o) { observe(o); };
  base.packet.sample_interval = options_.sample_interval;
  return base;
}

void Recorder::observe(const engine::RunObservation& o) {
  engine_ = o.engine;
  if (o.packet) observe_packet(o);
  if (o.link_steps) observe_flow(o);
  ++runs_;
}

void Recorder::observe_packet(const engine::RunObservation& o) {
  const engine::PacketView& sim = *o.packet;
  packet_ = true;
  const auto& ps = sim.port_stats();
  if (ports_.size() != ps.size()) {
    ports_.assign(ps.size(), {});
    for (size_t d = 0; d < ps.size(); ++d) ports_[d].link = static_cast<int32_t>(d);
  }
  // The run's length: its last transfer's finish (events after it, such as
  // RTO timers that find nothing to do, are not observed time).
  const double T_ps = static_cast<double>(o.report ? o.report->makespan.ps : sim.now().ps);
  observed_s_ += T_ps * 1e-12;
  for (size_t d = 0; d < ps.size(); ++d) {
    const engine::PortStats& s = ps[d];
    PortCounters& c = ports_[d];
    c.tx_packets += s.packets;
    c.rx_packets += s.rx_packets;
    c.data_packets += s.data_packets;
    c.tx_bytes += s.wire_bytes;
    c.rx_bytes += s.rx_bytes;
    c.payload_bytes += s.payload_bytes;
    c.drops_buffer += s.drops;
    c.drops_link += s.lost;
    c.drops_silent += s.silent;
    c.trims += s.trims;
    c.ecn_marks += s.ecn_marks;
    c.cnp_packets += s.cnp_packets;
    c.pause_tx += s.pause_tx;
    c.pause_rx += s.pause_rx;
    c.paused_s += s.paused.seconds();
    c.retransmits += s.retransmits;
    c.out_of_order += s.out_of_order;
    c.queue_max_bytes = std::max<int64_t>(c.queue_max_bytes, s.max_queue);
    c.queue_byte_s += s.queue_byte_ps * 1e-12;
    c.queue_p99_bytes = std::max<int64_t>(c.queue_p99_bytes, engine::depth::quantile(s.queue_hist, T_ps, 0.99));
    c.peak_utilization = std::max(c.peak_utilization, s.peak_utilization);
    if (c.queue_hist_s.size() < s.queue_hist.size()) c.queue_hist_s.resize(s.queue_hist.size(), 0.0);
    for (size_t b = 0; b < s.queue_hist.size(); ++b) c.queue_hist_s[b] += s.queue_hist[b] * 1e-12;
    const auto band = sim.configured_ecn(static_cast<routing::DirLink>(d));
    c.ecn_kmin = band.kmin;
    c.ecn_kmax = sim.marks_ecn() ? band.kmax : 0;
    c.ecn_pmax = band.pmax;
    c.pg_shared_max = std::max<int64_t>(c.pg_shared_max, s.pg_shared_max);
    const topology::NodeId to = routing::dir_to(static_cast<routing::DirLink>(d), topo_);
    c.xoff_limit = topo_.nodes[to].kind == topology::NodeKind::Switch ? sim.configured_xoff_limit(to) : 0;
    c.bps = static_cast<double>(sim.port_bps(static_cast<routing::DirLink>(d)));
  }
  data_wire_ = sim.data_wire_bytes();
  const auto& streams = sim.streams();
  for (size_t i = 0; i < streams.size(); ++i) {
    const auto& r = streams[i];
    QpRecord q;
    q.run = runs_;
    q.qp = static_cast<int32_t>(i);
    q.src = r.src;
    q.dst = r.dst;
    q.bytes = r.bytes;
    q.start_s = r.start.seconds();
    q.first_send_s = r.first_send.seconds();
    q.finish_s = r.finish.seconds();
    q.retransmits = r.retransmits;
    q.timeouts = r.timeouts;
    q.trims = r.trims;
    q.lost = r.lost;
    q.lost_bytes = r.lost_bytes;
    q.out_of_order = r.out_of_order;
    q.cnps = r.cnps;
    q.final_rate_bps = r.final_rate_bps;
    qps_.push_back(q);
  }
  for (const auto& s : sim.samples()) queue_.push_back({runs_, s.time.seconds(), s.port, s.bytes});
  for (const auto& s : sim.stream_samples())
    rates_.push_back({runs_, s.time.seconds(), s.stream, s.rate_bps, s.delivered, s.window});
}

void Recorder::observe_flow(const engine::RunObservation& o) {
  const auto& cap = *o.link_capacity_bps;
  if (link_cap_.size() != cap.size()) {
    link_cap_ = cap;
    link_bytes_.assign(cap.size(), 0.0);
  }
  const double T = o.report ? o.report->makespan.seconds() : 0;
  observed_s_ += T;
  // Bytes from the steps: sum over each link's steps of utilization x capacity x duration.
  std::vector<double> last_t(cap.size(), 0.0), last_u(cap.size(), 0.0);
  for (const auto& s : *o.link_steps) {
    const double t = s.at.seconds();
    link_bytes_[s.link] += last_u[s.link] * cap[s.link] / 8 * (t - last_t[s.link]);
    last_t[s.link] = t;
    last_u[s.link] = s.utilization;
    util_.push_back({runs_, t, s.link, s.utilization});
  }
  for (size_t l = 0; l < cap.size(); ++l)
    if (last_u[l] > 0) link_bytes_[l] += last_u[l] * cap[l] / 8 * std::max(0.0, T - last_t[l]);
}

bool Recorder::any_events() const {
  for (const auto& c : ports_)
    if (c.drops_buffer || c.drops_link || c.ecn_marks || c.cnp_packets || c.pause_tx || c.pause_rx || c.retransmits ||
        c.out_of_order)
      return true;
  return false;
}

}  // namespace podnet::telemetry
