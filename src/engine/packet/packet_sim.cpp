// PacketSim: the model is stated in packet_sim.hpp; this file follows it:
//   construction (ports, switch buffers, headroom, credits) -> streams (QPs)
//   -> the event loop (one switch over event kinds) -> ports (queues,
//   arbitration, transmission) -> switch buffer (admission, PFC, ECN) ->
//   NIC (QP scheduling, receiver, go-back-N, DCQCN) -> telemetry.
#include "engine/packet/packet_sim.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"
#include "engine/packet/event_wheel.hpp"

namespace podnet::engine::packet {

using routing::DirLink;
using routing::PathPart;
using topology::Media;
using topology::NodeId;
using topology::NodeKind;

namespace {

constexpr uint32_t kNil = 0xFFFFFFFFu;
constexpr int64_t kPsPerS = 1'000'000'000'000;

enum Kind : uint32_t { kArrive, kKick, kPause, kPauseRefresh, kCredit, kQpStart, kRto, kCcTimer, kDone, kTimer, kSample };
enum Cls : uint8_t { kCtrl = 0, kLossless = 1, kLossy = 2 };
enum PktType : uint8_t { kData = 0, kAck = 1, kNack = 2, kCnp = 3 };

// A packet: 20 bytes. On a wire it travels inside its arrival event
// (encode/decode below); in a queue it is stored by value in the port's ring.
struct Packet {
  uint32_t qp = 0;
  uint32_t psn = 0;      // data: sequence number; ACK/NACK: the receiver's next expected PSN
  int32_t in_port = -1;  // the directed link it arrived on / is crossing (-1: made here)
  uint16_t wire = 0;     // bytes on Copper/Optical links
  uint16_t raw = 0;      // bytes on NVLink/PCIe (payload for data)
  uint8_t type = 0;
  uint8_t cls = 0;
  uint8_t ecn = 0;
  uint8_t hop = 0;       // links crossed so far
};
static_assert(sizeof(Packet) == 20, "a packet must fit an event's payload");

// Arrival event payload: a = qp:psn, b = in_port:wire:raw, tag = type:cls:ecn:hop.
inline uint64_t enc_a(const Packet& k) { return (static_cast<uint64_t>(k.qp) << 32) | k.psn; }
inline uint64_t enc_b(const Packet& k) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(k.in_port)) << 32) | (static_cast<uint64_t>(k.wire) << 16) |
         k.raw;
}
inline uint32_t enc_tag(const Packet& k) {
  return static_cast<uint32_t>(k.type) | (static_cast<uint32_t>(k.cls) << 8) | (static_cast<uint32_t>(k.ecn) << 16) |
         (static_cast<uint32_t>(k.hop) << 24);
}
inline Packet decode(const Event& e) {
  Packet k;
  k.qp = static_cast<uint32_t>(e.a >> 32);
  k.psn = static_cast<uint32_t>(e.a);
  k.in_port = static_cast<int32_t>(static_cast<uint32_t>(e.b >> 32));
  k.wire = static_cast<uint16_t>(e.b >> 16);
  k.raw = static_cast<uint16_t>(e.b);
  k.type = static_cast<uint8_t>(e.tag);
  k.cls = static_cast<uint8_t>(e.tag >> 8);
  k.ecn = static_cast<uint8_t>(e.tag >> 16);
  k.hop = static_cast<uint8_t>(e.tag >> 24);
  return k;
}

// A FIFO of packets stored by value (power-of-two ring; grows, never shrinks).
struct Ring {
  std::vector<Packet> buf;
  uint32_t head = 0, count = 0;
  int64_t bytes = 0;
  bool empty() const { return count == 0; }
  const Packet& front() const { return buf[head]; }
  void push(const Packet& k) {
    if (count == buf.size()) grow();
    buf[(head + count) & (buf.size() - 1)] = k;
    ++count;
    bytes += k.wire;
  }
  Packet pop() {
    const Packet k = buf[head];
    head = (head + 1) & static_cast<uint32_t>(buf.size() - 1);
    --count;
    bytes -= k.wire;
    return k;
  }
  void grow() {
    std::vector<Packet> nb(buf.empty() ? 8 : 2 * buf.size());
    for (uint32_t i = 0; i < count; ++i) nb[i] = buf[(head + i) & (buf.size() - 1)];
    buf.swap(nb);
    head = 0;
  }
};

struct PortInfo {
  int64_t bps = 1;
  int64_t latency = 0;       // link latency (ps)
  int64_t arrive_extra = 0;  // latency + switch latency when entering a switch
  int64_t quanta_ps = 0;     // one full PAUSE (65535 quanta)
  int64_t kmin = 0, kmax = 0;
  double pmax = 0;
  NodeId from = 0, to = 0;
  bool net = false;          // Copper/Optical: header bytes on the wire
  bool from_mmu = false;     // leaves a switch-like node (buffer, ECN)
  bool to_mmu = false;       // enters a switch (buffer admission, PFC / credits)
};

// What every packet touches, in the first cache line; the queues next; the rest after.
struct alignas(64) PortState {
  int64_t busy_until = 0;
  int64_t kick_at = -1;
  int64_t qbytes = 0;  // data bytes queued (telemetry)
  int64_t q_last = 0;
  int64_t win_idx = -1;
  double win_bytes = 0;
  uint32_t ready_head = kNil, ready_tail = kNil;
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
  NodeId from = 0, to = 0;
  bool net = false, from_mmu = false, to_mmu = false;
};

struct Ingress {
  int64_t bytes = 0;     // lossless bytes held (reserve + shared)
  int64_t hdrm = 0;      // lossless bytes held in headroom
  int64_t headroom = 0;  // allocated headroom
  uint32_t stamp = 0;
  bool pause_sent = false;
};

struct Mmu {
  int64_t buffer = 0;
  int64_t total_hdrm = 0;
  int64_t total_rsrv = 0;
  int64_t shared = 0;
  int64_t used = 0;
};

struct Qp {
  // route: routes_[route_off, route_off + route_len); network part [path_off, path_off + path_len)
  uint32_t route_off = 0, path_off = 0;
  uint16_t route_len = 0, path_len = 0;
  uint16_t net_first = 0, net_last = 0;
  NodeId src_node = 0, dst_node = 0, target = topology::kNone;
  int32_t inj_port = 0;
  uint64_t key = 0;
  uint64_t entropy = 0;
  // re-routing (§10): the path before the last re-route, which packets sent earlier still follow
  uint32_t prev_off = 0;
  uint16_t prev_len = 0;
  bool rerouted = false;
  int64_t routed_at = 0;
  int64_t suffix_delay = 0;
  uint32_t npkts = 0;
  uint16_t last_payload = 0;
  // sender
  uint32_t snd_nxt = 0, snd_una = 0, max_sent = 0;
  uint32_t next_ready = kNil;
  int64_t next_send = 0;
  int64_t last_progress = 0;
  double line = 0, rate = 0, target_rate = 0;
  double alpha = 1;
  int64_t t_alpha = 0, t_dec = 0;
  int64_t bytes_since = 0;
  int32_t t_stage = 0, b_stage = 0;
  uint32_t cc_stamp = 0;
  bool started = false, in_sched = false, tx_done = false, rto_armed = false, decreased = false, cnp_seen = false;
  bool in_heap = false;     // its valid wait-heap entry is at heap_time
  int64_t heap_time = 0;
  int64_t last_bytes = 0;   // wire bytes of the last packet (rate changes rescale its gap)
  // receiver
  bool rx_done = false, nack_sent = false, cnp_once = false;
  uint32_t rcv_nxt = 0, last_acked = 0;
  int64_t last_ack_time = 0;
  int64_t last_cnp = 0;
  uint32_t bm_off = kNil;  // reorder bitmap (per-packet routing)
  uint32_t ooo = 0;
  int64_t ooo_since = 0;
};

struct WaitEntry {
  int64_t time;
  uint32_t qp;
  bool operator>(const WaitEntry& o) const { return time > o.time || (time == o.time && qp > o.qp); }
};

inline int64_t ser_ps(int64_t bytes, int64_t bps) { return (bytes * 8 * kPsPerS + bps / 2) / bps; }

}  // namespace

struct PacketSim::Impl {
  Impl(const topology::Topology& topo, const NetworkOptions& net, const PacketOptions& opt);

  // ---- setup
  const topology::Topology& topo;
  PacketOptions opt;
  Transport transport;
  std::unique_ptr<routing::Router> router;
  std::unique_ptr<PlanCompiler> compiler;
  std::unique_ptr<NextHops> next_hops;
  DcqcnParams dcqcn;
  int per_packet = 0;  // 0 none, 1 adaptive, 2 spray
  bool tracks_load = false;
  bool ib = false, pfc = false, torus = false;
  uint8_t data_cls = kLossless;
  int64_t swlat = 0;
  int64_t rto = 0;
  int64_t ctrl_wire = 84, ctrl_raw = 64;
  int32_t mtu = 4096, header = 82;

  std::vector<PortInfo> info;
  std::vector<PortHot> hot;  // copies of the fields every packet reads
  std::vector<PortState> state;
  std::vector<Ingress> ingress;
  std::vector<Mmu> mmu;  // by node (switch-like nodes only)
  std::vector<std::vector<WaitEntry>> waits;
  std::vector<PortStats> port_stats;
  std::vector<double> extra_bytes;  // in-server links modelled as delays

  // ---- dynamic
  EventWheel events;  // (time, seq) order, as core/event_queue.hpp (event_wheel.hpp)
  Rng rng;
  int64_t now = 0;
  int64_t queued = 0;  // packets in port queues (telemetry: peak)
  std::vector<Qp> qps;
  std::vector<DirLink> routes;
  std::vector<uint64_t> bitmap;
  std::vector<StreamRecord> records;
  std::vector<uint64_t> stream_tags;
  std::vector<QueueSample> samples;
  std::vector<StreamSample> stream_samples;
  SimStats stats;
  double reorder_delay_sum = 0;
  int64_t open_streams = 0;
  bool sampling = false;
  int64_t last_tx = 0;        // last data packet put on a wire
  int64_t paused_ports = 0;   // ports whose data class is paused now
  int64_t deadlock_window = 0;
  void check_deadlock();
  std::vector<DirLink> cand, ties;
  static constexpr uint64_t kRrSlots = 1 << 16;
  std::vector<uint32_t> rr_node;  // round-robin counters by hash of (switch, destination): spray, adaptive ties
  std::vector<PathPart> scratch;
  // failures (§10)
  bool links_failed = false;        // a link has died in this run: the loss checks below are on
  bool stopped = false;
  std::vector<char> dead;           // per directed link: the port sends nothing, packets sent to it are lost
  std::vector<int64_t> drop_until;  // per directed link: arrivals until then were on the wire when it died
  std::vector<double> cap;          // payload capacity in force

  // ---- helpers
  bool switch_like(NodeId n) const {
    const NodeKind k = topo.nodes[n].kind;
    return k == NodeKind::Switch || (torus && k == NodeKind::Gpu);
  }
  DirLink rev_port(uint32_t off, uint32_t len, uint32_t i) const { return routes[off + len - 1 - i] ^ 1; }
  DirLink rev_port(const Qp& q, uint32_t i) const { return rev_port(q.path_off, q.path_len, i); }
  int64_t threshold(const Mmu& m) const {
    const int64_t f = m.buffer - m.total_hdrm - m.total_rsrv - m.shared;
    return f > 0 ? (f >> opt.dt_shift) : 0;
  }
  bool has_work(DirLink p) const {
    const PortState& s = state[p];
    return s.q[0].count != 0 || s.q[1].count != 0 || s.q[2].count != 0 || s.ready_head != kNil ||
           !waits[p].empty();
  }
  bool can_send(const Qp& q) const {
    return q.started && !q.tx_done && q.snd_nxt < q.npkts &&
           (opt.window_packets <= 0 || q.snd_nxt - q.snd_una < static_cast<uint32_t>(opt.window_packets));
  }

  // ---- streams
  int32_t add_stream(const StreamSpec& s, const std::vector<PathPart>& route);
  void install_route(uint32_t qi, const std::vector<PathPart>& route, int64_t& phys, int64_t& prefix);
  void run(const std::function<void(const SimEvent&)>& on_event, int64_t limit);
  void finish_run();

  // ---- failures
  void set_link_rate(topology::LinkId l, double bps);
  void set_link_dead(topology::LinkId l, bool dead);
  int64_t reroute(const std::vector<DirLink>& dirs);
  bool which_path(const Qp& q, const Packet& k, DirLink p, uint32_t& off, uint32_t& len) const;
  void lose(DirLink p, const Packet& k) {
    ++port_stats[p].lost;
    ++(k.type == kData ? stats.lost : stats.lost_ctrl);
  }
  void return_credit(DirLink in, const Packet& k) {
    if (ib && k.cls == kLossless && state[in].credit_limited)
      events.push(Time(now + info[in].latency), kCredit, static_cast<uint64_t>(in), k.wire);
  }

  // ---- ports
  void ensure_kick(DirLink p, int64_t t) {
    PortState& s = state[p];
    if (s.kick_at >= now && s.kick_at <= t) return;
    events.push(Time(t), kKick, static_cast<uint64_t>(p));
    s.kick_at = t;
  }
  void touch_queue(DirLink p, int64_t delta) {
    PortState& s = state[p];
    PortStats& st = port_stats[p];
    st.queue_byte_ps += static_cast<double>(s.qbytes) * static_cast<double>(now - s.q_last);
    s.q_last = now;
    s.qbytes += delta;
    if (s.qbytes > st.max_queue) st.max_queue = s.qbytes;
  }
  void enqueue(DirLink p, const Packet& k) {
    state[p].q[k.cls].push(k);
    if (k.cls != kCtrl) touch_queue(p, k.wire);
    if (++queued > static_cast<int64_t>(stats.peak_packets)) stats.peak_packets = static_cast<uint64_t>(queued);
  }
  Packet dequeue(DirLink p, uint8_t cls) {
    const Packet k = state[p].q[cls].pop();
    if (cls != kCtrl) touch_queue(p, -static_cast<int64_t>(k.wire));
    --queued;
    return k;
  }
  void unpause(DirLink p, int64_t at) {
    PortState& s = state[p];
    s.paused = false;
    --paused_ports;
    port_stats[p].paused.ps += at - s.paused_since;
  }
  void ready_push(DirLink p, uint32_t qi) {
    PortState& s = state[p];
    qps[qi].next_ready = kNil;
    if (s.ready_tail == kNil) s.ready_head = qi;
    else qps[s.ready_tail].next_ready = qi;
    s.ready_tail = qi;
  }
  uint32_t ready_pop(DirLink p) {
    PortState& s = state[p];
    const uint32_t qi = s.ready_head;
    s.ready_head = qps[qi].next_ready;
    if (s.ready_head == kNil) s.ready_tail = kNil;
    return qi;
  }
  void wait_push(DirLink p, int64_t t, uint32_t qi) {
    qps[qi].in_heap = true;
    qps[qi].heap_time = t;
    auto& h = waits[p];
    h.push_back({t, qi});
    std::push_heap(h.begin(), h.end(), std::greater<>());
  }
  void try_send(DirLink p);
  void transmit(DirLink p, Packet k);
  bool next_qp_packet(DirLink p, Packet& out);
  Packet make_data_packet(uint32_t qi, DirLink p);

  // ---- switch
  void on_arrive(Packet k);
  DirLink next_data_port(const Qp& q, const Packet& k, NodeId n, uint32_t off);
  bool admit(NodeId n, DirLink in, DirLink out, Packet& k);
  void release_mmu(NodeId n, DirLink in, const Packet& k);
  void mark_ecn(DirLink out, Packet& k);
  void send_pause(DirLink in, bool on);
  void on_pause(DirLink p, bool on);

  // ---- NIC
  void activate(uint32_t qi);
  void maybe_activate(uint32_t qi) {
    Qp& q = qps[qi];
    if (!q.in_sched && can_send(q)) activate(qi);
  }
  void send_ctrl(uint32_t qi, uint8_t type, uint32_t psn);
  void receive_data(uint32_t qi, Packet k);
  void receive_ctrl(uint32_t qi, Packet k);
  void maybe_ack(uint32_t qi, bool force);
  void on_rto(uint32_t qi);
  void on_cnp(uint32_t qi);
  void cc_timer(uint32_t qi);
  void apply_increase(Qp& q, int stage_for_mlx);
  void set_rate(uint32_t qi, double rate);
  double scale(double line_bps) const { return dcqcn.ref_bps > 0 ? line_bps / dcqcn.ref_bps : 1.0; }
  void finish_stream(uint32_t qi);
  void flush_telemetry();
};

// ---------------------------------------------------------------- construction

PacketSim::Impl::Impl(const topology::Topology& t, const NetworkOptions& net, const PacketOptions& o)
    : topo(t), opt(o), transport(net.transport), rng(Rng(net.routing.seed).stream("packet.ecn")) {
  routing::RouteOptions ro = net.routing;
  if (ro.policy == "adaptive") per_packet = 1;
  if (ro.policy == "spray") per_packet = 2;
  if (per_packet) ro.policy = "ecmp";
  tracks_load = ro.policy == "ugal";
  router = std::make_unique<routing::Router>(t, ro);
  compiler = std::make_unique<PlanCompiler>(t, *router, transport);
  if (per_packet) {
    next_hops = std::make_unique<NextHops>(t);
    rr_node.assign(kRrSlots, 0);
  }
  dcqcn = dcqcn_preset(opt.cc);
  ib = opt.cc == "infiniband";
  pfc = !ib && opt.pfc;
  data_cls = (ib || pfc) ? kLossless : kLossy;
  torus = !t.torus_dims.empty();
  swlat = t.switch_latency.ps;
  mtu = transport.mtu;
  header = transport.header_bytes;
  if (mtu <= 0 || mtu + header > 65535) throw InputError(fmt::format("packet engine: MTU {} + header {} must be 1..65535 bytes", mtu, header));
  if (opt.ack_every < 1) opt.ack_every = 1;
  ctrl_wire = std::max<int64_t>(84, header + 4);
  ctrl_raw = 64;

  const int32_t D = routing::dir_link_count(t);
  info.resize(D);
  state.resize(D);
  ingress.resize(D);
  waits.resize(D);
  port_stats.resize(D);
  extra_bytes.assign(D, 0.0);
  mmu.resize(t.nodes.size());
  dead.assign(D, 0);
  drop_until.assign(D, -1);
  cap.resize(D);
  for (DirLink d = 0; d < D; ++d) cap[d] = compiler->payload_capacity_bps(d);

  const int64_t mtu_wire = mtu + header;
  for (DirLink d = 0; d < D; ++d) {
    const auto& l = t.links[routing::link_of(d)];
    PortInfo& p = info[d];
    p.from = routing::dir_from(d, t);
    p.to = routing::dir_to(d, t);
    p.bps = std::max<int64_t>(1, std::llround(l.capacity.bps));
    p.latency = l.latency.ps;
    p.arrive_extra = p.latency + (t.nodes[p.to].kind == NodeKind::Switch ? swlat : 0);
    p.quanta_ps = std::llround(65535.0 * 512.0 * 1e12 / static_cast<double>(p.bps));
    p.net = l.media == Media::Copper || l.media == Media::Optical;
    p.from_mmu = switch_like(p.from);
    p.to_mmu = t.nodes[p.to].kind == NodeKind::Switch;  // torus chips: unlimited buffer (no PFC cycle)
    const double sc = scale(static_cast<double>(p.bps));
    p.kmin = std::llround(static_cast<double>(dcqcn.kmin) * sc);
    p.kmax = std::llround(static_cast<double>(dcqcn.kmax) * sc);
    p.pmax = dcqcn.pmax;
  }
  hot.resize(D);
  for (DirLink d = 0; d < D; ++d) {
    const PortInfo& i = info[d];
    hot[d] = PortHot{i.bps, i.arrive_extra, i.from, i.to, i.net, i.from_mmu, i.to_mmu};
  }
  // Switch buffers: B, headroom and reserve per ingress, credits.
  double worst_drain_ps = 0;
  for (NodeId n = 0; n < static_cast<NodeId>(t.nodes.size()); ++n) {
    if (t.nodes[n].kind != NodeKind::Switch) continue;
    auto [b, e] = t.incident(n);
    Mmu& m = mmu[n];
    double rate_sum = 0;
    int deg = 0;
    for (const topology::LinkId* l = b; l != e; ++l) {
      const DirLink out = routing::dir_link(*l, n, t);
      rate_sum += static_cast<double>(info[out].bps);
      ++deg;
    }
    m.buffer = opt.buffer_bytes > 0 ? opt.buffer_bytes
                                    : std::llround(rate_sum * static_cast<double>(opt.buffer_time.ps) / 8e12);
    for (const topology::LinkId* l = b; l != e; ++l) {
      const DirLink in = routing::dir_link(*l, n, t) ^ 1;
      const PortInfo& p = info[in];
      if (pfc) {
        Ingress& g = ingress[in];
        g.headroom = 2 * mtu_wire + 3840 +
                     std::llround(static_cast<double>(p.bps) * static_cast<double>(2 * p.latency + swlat) / 8e12);
        m.total_hdrm += g.headroom;
        m.total_rsrv += opt.reserve_bytes;
      }
      if (ib) {
        state[in].credit_limited = true;
        state[in].credits = std::max<int64_t>(2 * mtu_wire, m.buffer / std::max(1, deg));
      }
    }
    if (deg > 0 && rate_sum > 0)
      worst_drain_ps = std::max(worst_drain_ps, static_cast<double>(m.buffer) * 8e12 / (rate_sum / deg));
  }
  rto = opt.rto.ps > 0 ? opt.rto.ps : 1'000'000'000 + std::llround(2 * worst_drain_ps);
  deadlock_window = std::max<int64_t>(10'000'000'000, 4 * rto);
  if (opt.sample_interval.ps > 0 && (!opt.sample_ports.empty() || opt.sample_streams)) {
    for (int32_t p : opt.sample_ports)
      if (p < 0 || p >= D) throw InputError(fmt::format("packet engine: sample port {} out of range", p));
    sampling = true;
    events.push(Time(0), kSample);
  }
}

// ---------------------------------------------------------------- streams

int32_t PacketSim::Impl::add_stream(const StreamSpec& s, const std::vector<PathPart>& route) {
  const auto qi = static_cast<uint32_t>(qps.size());
  qps.emplace_back();
  StreamRecord rec;
  rec.tag = s.tag;
  rec.src = s.src;
  rec.dst = s.dst;
  rec.bytes = s.bytes;
  rec.start = s.start;
  ++open_streams;

  {
    Qp& q = qps.back();
    q.entropy = s.entropy;
    q.npkts = static_cast<uint32_t>((s.bytes + mtu - 1) / mtu);
    q.last_payload = static_cast<uint16_t>(s.bytes - static_cast<Bytes>(q.npkts > 0 ? q.npkts - 1 : 0) * mtu);
  }
  int64_t phys = 0, prefix = 0;
  install_route(qi, route, phys, prefix);
  Qp& q = qps.back();
  rec.packets = q.npkts;

  const int64_t start = s.start.ps;
  if (route.empty() || s.bytes <= 0) {
    q.tx_done = q.rx_done = true;
    rec.first_send = s.start;
    rec.finish = Time(start + std::max(s.latency.ps, phys));
    records.push_back(rec);
    stream_tags.push_back(s.tag);
    events.push(rec.finish, kDone, qi);
    return static_cast<int32_t>(qi);
  }
  q.line = static_cast<double>(hot[q.inj_port].bps);
  q.rate = q.target_rate = q.line;
  q.alpha = dcqcn.alpha0;
  const int64_t inject = start + std::max<int64_t>(0, s.latency.ps - phys) + prefix;
  rec.first_send = Time(inject);
  records.push_back(rec);
  stream_tags.push_back(s.tag);
  events.push(Time(inject), kQpStart, qi);
  return static_cast<int32_t>(qi);
}

// Sets QP qi's route (and what follows from it: its network path, ends,
// injection port, per-packet target); `phys` and `prefix` get the route's
// physical latency and the in-server delay before its first network link.
void PacketSim::Impl::install_route(uint32_t qi, const std::vector<PathPart>& route, int64_t& phys, int64_t& prefix) {
  Qp& q = qps[qi];
  const auto n = static_cast<int32_t>(route.size());
  if (n > 250) throw Error("packet engine: a route longer than 250 links");
  for (int32_t i = 0; i < n; ++i) {
    if (route[i].fraction != 1.0) throw Error("packet engine: internal: a multi-path route for one QP");
    if (i > 0 && info[route[i].link].from != info[route[i - 1].link].to)
      throw Error("packet engine: internal: route links are not a chain");
  }
  int32_t first = -1, last = -1;
  phys = prefix = 0;
  for (int32_t i = 0; i < n; ++i) {
    const PortInfo& p = info[route[i].link];
    phys += p.arrive_extra;
    if (p.net) {
      if (first < 0) first = i;
      last = i;
    }
  }
  if (first < 0) {
    first = 0;
    last = n - 1;
  }
  for (int32_t i = 0; i < first; ++i) prefix += info[route[i].link].latency;
  q.route_off = static_cast<uint32_t>(routes.size());
  q.route_len = static_cast<uint16_t>(n);
  for (const auto& pp : route) routes.push_back(pp.link);
  q.net_first = static_cast<uint16_t>(first);
  q.net_last = static_cast<uint16_t>(last);
  q.path_off = q.route_off + static_cast<uint32_t>(first);
  q.path_len = static_cast<uint16_t>(n > 0 ? last - first + 1 : 0);
  q.suffix_delay = 0;
  if (n == 0) return;
  for (int32_t i = last + 1; i < n; ++i) {
    const PortInfo& p = info[route[i].link];
    q.suffix_delay += p.arrive_extra + ser_ps(p.net ? q.last_payload + header : q.last_payload, p.bps);
  }
  q.inj_port = routes[q.path_off];
  q.src_node = hot[q.inj_port].from;
  q.dst_node = info[routes[q.path_off + q.path_len - 1]].to;
  q.key = routing::Router::flow_key(q.src_node, q.dst_node, q.entropy);
  if (per_packet) {
    const DirLink lastl = routes[q.path_off + q.path_len - 1];
    q.target = topology::kNone;
    if (next_hops->is_net(q.dst_node)) q.target = q.dst_node;
    else if (next_hops->is_net(hot[lastl].from)) q.target = hot[lastl].from;
    if (q.target != topology::kNone && q.bm_off == kNil) {
      q.bm_off = static_cast<uint32_t>(bitmap.size());
      bitmap.resize(bitmap.size() + (q.npkts + 63) / 64, 0);
    }
  }
}

// ---------------------------------------------------------------- event loop

void PacketSim::Impl::run(const std::function<void(const SimEvent&)>& on_event, int64_t limit) {
  while (!stopped && !events.empty() && events.next_time().ps <= limit) {
    const Event e = events.pop();
    now = e.time.ps;
    ++stats.events;
    switch (e.kind) {
      case kArrive: on_arrive(decode(e)); break;
      case kKick: {
        const auto p = static_cast<DirLink>(e.a);
        if (state[p].kick_at == now) state[p].kick_at = -1;
        try_send(p);
        break;
      }
      case kPause:
        if (!links_failed || !dead[e.a]) on_pause(static_cast<DirLink>(e.a), e.b != 0);  // else lost with its link
        break;
      case kPauseRefresh: {
        check_deadlock();
        const auto i = static_cast<DirLink>(e.a);
        if (ingress[i].pause_sent && ingress[i].stamp == e.tag) send_pause(i, true);
        break;
      }
      case kCredit: {
        const auto p = static_cast<DirLink>(e.a);
        state[p].credits += static_cast<int64_t>(e.b);
        if (has_work(p)) try_send(p);
        break;
      }
      case kQpStart: {
        Qp& q = qps[e.a];
        q.started = true;
        q.last_progress = now;
        q.t_alpha = now;
        maybe_activate(static_cast<uint32_t>(e.a));
        break;
      }
      case kRto:
        check_deadlock();
        on_rto(static_cast<uint32_t>(e.a));
        break;
      case kCcTimer:
        if (qps[e.a].cc_stamp == e.tag) cc_timer(static_cast<uint32_t>(e.a));
        break;
      case kDone: {
        const auto qi = static_cast<uint32_t>(e.a);
        --open_streams;
        if (tracks_load) {
          const Qp& q = qps[qi];
          scratch.clear();
          for (uint32_t i = 0; i < q.route_len; ++i) scratch.push_back({routes[q.route_off + i], 1.0});
          router->release(scratch, 1.0);
        }
        SimEvent se;
        se.tag = stream_tags[qi];
        se.at = Time(now);
        se.stream = static_cast<int32_t>(qi);
        on_event(se);
        break;
      }
      case kTimer: {
        SimEvent se;
        se.tag = e.a;
        se.at = Time(now);
        se.timer = true;
        on_event(se);
        break;
      }
      case kSample:
        for (int32_t p : opt.sample_ports) samples.push_back({Time(now), p, state[p].qbytes});
        if (opt.sample_streams)
          for (size_t i = 0; i < qps.size(); ++i) {
            const Qp& q = qps[i];
            const Bytes got = std::min<Bytes>(records[i].bytes, static_cast<Bytes>(q.rcv_nxt) * mtu);
            stream_samples.push_back({Time(now), static_cast<int32_t>(i), got, q.rate});
          }
        if (!events.empty() && open_streams > 0) events.push(Time(now + opt.sample_interval.ps), kSample);
        break;
      default: throw Error("packet engine: internal: unknown event");
    }
  }
  if (limit > now && limit != std::numeric_limits<int64_t>::max()) now = limit;
}

void PacketSim::Impl::finish_run() {
  flush_telemetry();
  stats.mean_reorder_delay_ps = stats.reorder_events ? reorder_delay_sum / static_cast<double>(stats.reorder_events) : 0;
}

void PacketSim::Impl::check_deadlock() {
  // Pause refreshes and RTOs are all that keep a deadlocked run going: a
  // cyclic buffer dependency under PFC stops every packet for good.
  if (open_streams == 0 || paused_ports == 0 || now - last_tx <= deadlock_window) return;
  throw Error(fmt::format(
      "packet engine: PFC deadlock at {}: no data packet has moved for {} while {} stream(s) wait and {} port(s) "
      "are paused (a cyclic buffer dependency); use routing without cycles, a lossy data class (pfc off), or "
      "another topology",
      format_time(Time(now)), format_time(Time(now - last_tx)), open_streams, paused_ports));
}

void PacketSim::Impl::flush_telemetry() {
  const double win_s = static_cast<double>(opt.util_window.ps) * 1e-12;
  for (size_t p = 0; p < state.size(); ++p) {
    PortState& s = state[p];
    PortStats& st = port_stats[p];
    st.queue_byte_ps += static_cast<double>(s.qbytes) * static_cast<double>(now - s.q_last);
    s.q_last = now;
    if (s.paused) {
      const int64_t end = std::min(now, s.pause_until);
      st.paused.ps += std::max<int64_t>(0, end - s.paused_since);
      s.paused_since = end;
    }
    if (s.win_idx >= 0 && win_s > 0) {
      st.peak_utilization = std::max(st.peak_utilization, s.win_bytes * 8.0 / (cap[p] * win_s));
      s.win_idx = -1;
      s.win_bytes = 0;
    }
  }
}

// ---------------------------------------------------------------- ports

void PacketSim::Impl::try_send(DirLink p) {
  if (links_failed && dead[p]) return;
  PortState& s = state[p];
  if (s.busy_until > now) {
    if (has_work(p)) ensure_kick(p, s.busy_until);
    return;
  }
  if (s.paused && now >= s.pause_until) unpause(p, s.pause_until);
  Packet pk;
  bool got = false;
  if (!s.q[kCtrl].empty()) {
    pk = dequeue(p, kCtrl);
    got = true;
  } else {
    const int64_t qp_wire = hot[p].net ? mtu + header : mtu;
    for (int i = 0; i < 3 && !got; ++i) {
      const int src = (s.rr + i) % 3;
      if (src == 0) {
        const Ring& r = s.q[kLossless];
        if (!r.empty() && !s.paused && (!s.credit_limited || s.credits >= r.front().wire)) {
          pk = dequeue(p, kLossless);
          got = true;
        }
      } else if (src == 1) {
        if (!s.q[kLossy].empty()) {
          pk = dequeue(p, kLossy);
          got = true;
        }
      } else if (s.ready_head != kNil || !waits[p].empty()) {
        const bool blocked =
            data_cls == kLossless && (s.paused || (s.credit_limited && s.credits < qp_wire));
        if (!blocked) got = next_qp_packet(p, pk);
      }
      if (got) s.rr = static_cast<uint8_t>((src + 1) % 3);
    }
  }
  if (!got) {
    const bool lossless_waiting = !s.q[kLossless].empty() ||
                                  (data_cls == kLossless && (s.ready_head != kNil || !waits[p].empty()));
    if (s.paused && lossless_waiting) ensure_kick(p, s.pause_until);
    if (!s.paused && s.ready_head == kNil && !waits[p].empty()) ensure_kick(p, waits[p].front().time);
    return;
  }
  transmit(p, pk);
}

bool PacketSim::Impl::next_qp_packet(DirLink p, Packet& out) {
  auto& h = waits[p];
  while (!h.empty() && h.front().time <= now) {
    std::pop_heap(h.begin(), h.end(), std::greater<>());
    const WaitEntry w = h.back();
    h.pop_back();
    Qp& q = qps[w.qp];
    if (!q.in_heap || q.heap_time != w.time || q.inj_port != p) continue;  // superseded (or the QP moved)
    q.in_heap = false;
    ready_push(p, w.qp);
  }
  while (state[p].ready_head != kNil) {
    const uint32_t qi = ready_pop(p);
    Qp& q = qps[qi];
    if (!can_send(q)) {
      q.in_sched = false;
      continue;
    }
    if (q.next_send > now) {
      wait_push(p, q.next_send, qi);
      continue;
    }
    out = make_data_packet(qi, p);
    return true;
  }
  return false;
}

Packet PacketSim::Impl::make_data_packet(uint32_t qi, DirLink p) {
  Qp& q = qps[qi];
  const uint32_t psn = q.snd_nxt++;
  const uint16_t payload = psn + 1 == q.npkts ? q.last_payload : static_cast<uint16_t>(mtu);
  Packet k;
  k.qp = qi;
  k.psn = psn;
  k.in_port = -1;
  k.raw = payload;
  k.wire = static_cast<uint16_t>(payload + header);
  k.type = kData;
  k.cls = data_cls;
  k.ecn = 0;
  k.hop = 0;
  ++stats.data_sent;
  if (q.snd_una == q.max_sent) q.last_progress = now;  // nothing was outstanding: the RTO clock starts now
  if (psn < q.max_sent) {
    ++stats.retransmits;
    ++records[qi].retransmits;
  } else {
    q.max_sent = psn + 1;
  }
  if (!q.rto_armed) {
    q.rto_armed = true;
    events.push(Time(now + rto), kRto, qi);
  }
  const PortHot& I = hot[p];
  const int64_t bytes = I.net ? k.wire : k.raw;
  const int64_t ser = ser_ps(bytes, I.bps);
  const int64_t gap = q.rate >= q.line ? ser : std::llround(static_cast<double>(bytes) * 8e12 / q.rate);
  q.next_send = now + gap;
  q.last_bytes = bytes;
  if (dcqcn.enabled && dcqcn.byte_counter > 0 && (q.rate < q.line || q.target_rate < q.line)) {
    q.bytes_since += bytes;
    if (q.bytes_since >= dcqcn.byte_counter) {
      q.bytes_since -= dcqcn.byte_counter;
      ++q.b_stage;
      apply_increase(q, -1);
    }
  }
  if (can_send(q)) {
    if (q.next_send <= now + ser) ready_push(p, qi);
    else wait_push(p, q.next_send, qi);
  } else {
    q.in_sched = false;
  }
  return k;
}

void PacketSim::Impl::transmit(DirLink p, Packet k) {
  const PortHot& I = hot[p];
  PortState& s = state[p];
  PortStats& st = port_stats[p];
  const int64_t bytes = I.net ? k.wire : (k.type == kData ? k.raw : ctrl_raw);
  const int64_t ser = ser_ps(bytes, I.bps);
  s.busy_until = now + ser;
  ++st.packets;
  st.wire_bytes += static_cast<double>(bytes);
  if (k.type == kData) {
    ++st.data_packets;
    st.payload_bytes += k.raw;
    const int64_t w = now / opt.util_window.ps;
    if (w != s.win_idx) {
      if (s.win_idx >= 0) {
        st.peak_utilization = std::max(st.peak_utilization,
                                       s.win_bytes * 8.0 / (cap[p] * static_cast<double>(opt.util_window.ps) * 1e-12));
      }
      s.win_idx = w;
      s.win_bytes = 0;
    }
    s.win_bytes += k.raw;
    last_tx = now;
    if (k.in_port >= 0 && dcqcn.enabled && I.from_mmu) mark_ecn(p, k);  // on the queue left behind (HPCC: at dequeue)
    if (k.in_port >= 0 && hot[k.in_port].to_mmu) {
      release_mmu(I.from, k.in_port, k);
      if (ib && k.cls == kLossless && state[k.in_port].credit_limited)
        events.push(Time(now + info[k.in_port].latency), kCredit, static_cast<uint64_t>(k.in_port), k.wire);
    }
    if (s.credit_limited && k.cls == kLossless) s.credits -= k.wire;
  }
  k.in_port = p;  // the link it crosses
  events.push(Time(now + ser + I.arrive_extra), kArrive, enc_a(k), enc_b(k), enc_tag(k));
  if (has_work(p)) ensure_kick(p, s.busy_until);
}

// ---------------------------------------------------------------- switches

void PacketSim::Impl::on_arrive(Packet k) {
  const DirLink p = k.in_port;
  if (links_failed && now <= drop_until[p]) {  // it was on the wire when the link died
    if (k.type == kData && k.cls == kLossless && state[p].credit_limited) state[p].credits += k.wire;
    return lose(p, k);
  }
  const NodeId n = hot[p].to;
  const uint32_t qi = k.qp;
  const Qp& q = qps[qi];
  uint32_t off = q.path_off, len = q.path_len;  // the path the packet follows
  DirLink out = -1;
  if (k.type == kData) {
    if (n == q.dst_node) {
      receive_data(qi, k);
      return;
    }
    if (!q.rerouted || (q.target != topology::kNone && next_hops->is_net(n)) || which_path(q, k, p, off, len))
      out = next_data_port(q, k, n, off);
  } else {
    if (n == q.src_node) {
      receive_ctrl(qi, k);
      return;
    }
    if (!q.rerouted || which_path(q, k, p, off, len)) out = rev_port(off, len, k.hop + 1u);
  }
  if (out < 0 || (links_failed && dead[out])) {  // stale, cut off, or toward a dead link: lost here
    if (k.type == kData && hot[p].to_mmu) return_credit(p, k);
    return lose(out < 0 ? p : out, k);
  }
  ++k.hop;
  k.in_port = p;
  if (k.type == kData && hot[p].to_mmu) {
    if (!admit(n, p, out, k)) {
      ++port_stats[out].drops;
      ++stats.drops;
      return;
    }
  }
  enqueue(out, k);
  try_send(out);
}

// A packet of a re-routed QP follows the path it was sent on: the current or
// the previous one, whichever has the link it arrived on at its position
// (hop); (off, len) is set to it. False if neither (sent before an earlier
// re-route) or if that path ends here (its old end): the packet is lost.
bool PacketSim::Impl::which_path(const Qp& q, const Packet& k, DirLink p, uint32_t& off, uint32_t& len) const {
  auto on = [&](uint32_t o, uint32_t l) {
    if (k.hop + 1u >= l) return false;
    return k.type == kData ? routes[o + k.hop] == p : rev_port(o, l, k.hop) == p;
  };
  if (on(q.path_off, q.path_len)) return true;
  if (q.prev_len == 0 || !on(q.prev_off, q.prev_len)) return false;
  off = q.prev_off;
  len = q.prev_len;
  return true;
}

DirLink PacketSim::Impl::next_data_port(const Qp& q, const Packet& k, NodeId n, uint32_t off) {
  if (q.target == topology::kNone) return routes[off + k.hop + 1];
  if (n == q.target) return routes[q.path_off + q.path_len - 1];
  if (!next_hops->is_net(n)) return routes[off + k.hop + 1];
  next_hops->gather(n, q.target, cand);
  // cut off from the target by links routing has forgotten: the packet was
  // already on its way (over a drained link, which still forwards it)
  if (cand.empty()) next_hops->gather(n, q.target, cand, true);
  if (cand.empty()) return -1;
  if (cand.size() == 1) return cand[0];
  // round-robin counter of (this switch, this destination): every destination's packets split evenly
  const uint64_t slot = mix64((static_cast<uint64_t>(static_cast<uint32_t>(n)) << 32) |
                              static_cast<uint32_t>(q.target)) & (kRrSlots - 1);
  const uint32_t turn = rr_node[slot]++;
  if (per_packet == 2) return cand[turn % cand.size()];
  // adaptive: the fewest data bytes waiting, counting the rest of the frame being sent
  int64_t best = std::numeric_limits<int64_t>::max();
  ties.clear();
  for (DirLink d : cand) {
    const PortState& ps = state[d];
    int64_t load = ps.qbytes;
    if (ps.busy_until > now) load += (ps.busy_until - now) * hot[d].bps / (8 * kPsPerS);
    if (load < best) {
      best = load;
      ties.clear();
    }
    if (load == best) ties.push_back(d);
  }
  return ties.size() == 1 ? ties[0] : ties[turn % ties.size()];
}

bool PacketSim::Impl::admit(NodeId n, DirLink in, DirLink out, Packet& k) {
  Mmu& m = mmu[n];
  const int64_t s = k.wire;
  if (k.cls == kLossless) {
    Ingress& g = ingress[in];
    if (ib) {
      g.bytes += s;
      m.used += s;
      return true;
    }
    const int64_t rsrv = opt.reserve_bytes;
    const int64_t T = threshold(m);
    const int64_t sh = g.bytes > rsrv ? g.bytes - rsrv : 0;
    if (s + g.hdrm > g.headroom && s + sh > T) return false;
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
    if (pfc && !g.pause_sent) {
      const int64_t sh2 = g.bytes > rsrv ? g.bytes - rsrv : 0;
      if (g.hdrm > 0 || sh2 >= threshold(m)) send_pause(in, true);
    }
    return true;
  }
  const int64_t q = state[out].q[kLossy].bytes;
  if (q + s > threshold(m) || m.used + s > m.buffer) return false;
  m.shared += s;
  m.used += s;
  return true;
}

void PacketSim::Impl::release_mmu(NodeId n, DirLink in, const Packet& k) {
  Mmu& m = mmu[n];
  const int64_t s = k.wire;
  m.used -= s;
  if (k.cls != kLossless) {
    m.shared -= s;
    return;
  }
  Ingress& g = ingress[in];
  if (ib) {
    g.bytes -= s;
    return;
  }
  const int64_t rsrv = opt.reserve_bytes;
  const int64_t from_hdrm = std::min(g.hdrm, s);
  const int64_t from_shared = std::min(s - from_hdrm, g.bytes > rsrv ? g.bytes - rsrv : 0);
  m.shared -= from_shared;
  g.hdrm -= from_hdrm;
  g.bytes -= s - from_hdrm;
  if (g.pause_sent && g.hdrm == 0) {
    const int64_t sh = g.bytes > rsrv ? g.bytes - rsrv : 0;
    if (sh == 0 || sh + opt.resume_offset <= threshold(m)) send_pause(in, false);
  }
}

void PacketSim::Impl::mark_ecn(DirLink out, Packet& k) {
  const PortInfo& I = info[out];
  const int64_t qb = state[out].q[k.cls].bytes;
  if (qb <= I.kmin) return;
  bool mark = true;
  if (qb <= I.kmax) {
    const double p = I.pmax * static_cast<double>(qb - I.kmin) / static_cast<double>(std::max<int64_t>(1, I.kmax - I.kmin));
    mark = rng.uniform() < p;
  }
  if (mark) {
    k.ecn = 1;
    ++port_stats[out].ecn_marks;
    ++stats.ecn_marks;
  }
}

void PacketSim::Impl::send_pause(DirLink in, bool on) {
  Ingress& g = ingress[in];
  const PortInfo& I = info[in];
  const DirLink rev = in ^ 1;
  const int64_t wait = std::max<int64_t>(0, state[rev].busy_until - now);
  const int64_t at = now + wait + ser_ps(84, hot[rev].bps) + I.latency;
  events.push(Time(at), kPause, static_cast<uint64_t>(in), on ? 1 : 0);
  g.pause_sent = on;
  ++g.stamp;
  if (on) {
    ++port_stats[in].pause_tx;
    ++stats.pause_frames;
    events.push(Time(now + I.quanta_ps / 2), kPauseRefresh, static_cast<uint64_t>(in), 0, g.stamp);
  }
}

void PacketSim::Impl::on_pause(DirLink p, bool on) {
  PortState& s = state[p];
  if (on) {
    ++port_stats[p].pause_rx;
    if (s.paused && s.pause_until < now) unpause(p, s.pause_until);
    if (!s.paused) {
      s.paused = true;
      s.paused_since = now;
      ++paused_ports;
    }
    s.pause_until = now + info[p].quanta_ps;
  } else {
    if (s.paused) unpause(p, std::min(now, s.pause_until));
    if (has_work(p)) try_send(p);
  }
}

// ---------------------------------------------------------------- NIC

void PacketSim::Impl::activate(uint32_t qi) {
  Qp& q = qps[qi];
  q.in_sched = true;
  const DirLink p = q.inj_port;
  if (q.next_send <= now) ready_push(p, qi);
  else wait_push(p, q.next_send, qi);
  try_send(p);
}

void PacketSim::Impl::send_ctrl(uint32_t qi, uint8_t type, uint32_t psn) {
  Packet k;
  k.qp = qi;
  k.psn = psn;
  k.in_port = -1;
  k.wire = static_cast<uint16_t>(ctrl_wire);
  k.raw = static_cast<uint16_t>(ctrl_raw);
  k.type = type;
  k.cls = kCtrl;
  k.ecn = 0;
  k.hop = 0;
  const DirLink p = rev_port(qps[qi], 0);
  if (links_failed && dead[p]) return lose(p, k);
  enqueue(p, k);
  try_send(p);
}

void PacketSim::Impl::maybe_ack(uint32_t qi, bool force) {
  Qp& q = qps[qi];
  if (force || q.rcv_nxt - q.last_acked >= static_cast<uint32_t>(opt.ack_every) ||
      (q.rcv_nxt > q.last_acked && now - q.last_ack_time >= opt.ack_delay.ps)) {
    q.last_acked = q.rcv_nxt;
    q.last_ack_time = now;
    send_ctrl(qi, kAck, q.rcv_nxt);
  }
}

void PacketSim::Impl::receive_data(uint32_t qi, Packet k) {
  Qp& q = qps[qi];
  if (k.ecn && dcqcn.enabled && (!q.cnp_once || now - q.last_cnp >= dcqcn.cnp_interval.ps)) {
    q.cnp_once = true;
    q.last_cnp = now;
    ++stats.cnps;
    send_ctrl(qi, kCnp, 0);
  }
  const uint32_t psn = k.psn;
  auto dup = [&] {
    // A duplicate (go-back-N resent what had arrived): re-ACK on the usual cadence.
    if (psn + 1 == q.npkts || (psn + 1) % static_cast<uint32_t>(opt.ack_every) == 0) {
      q.last_acked = q.rcv_nxt;
      q.last_ack_time = now;
      send_ctrl(qi, kAck, q.rcv_nxt);
    }
  };
  if (q.rx_done || psn < q.rcv_nxt) return dup();
  uint32_t advanced = 0;
  if (q.bm_off != kNil) {
    uint64_t* bm = bitmap.data() + q.bm_off;
    if (psn > q.rcv_nxt) {
      uint64_t& w = bm[psn >> 6];
      const uint64_t bit = 1ULL << (psn & 63);
      if (w & bit) return dup();
      w |= bit;
      if (++q.ooo == 1) q.ooo_since = now;
      stats.max_reorder_packets = std::max(stats.max_reorder_packets, q.ooo);
      if (data_cls == kLossy && !q.nack_sent &&
          psn - q.rcv_nxt >= static_cast<uint32_t>(std::max(1, opt.reorder_nack_packets))) {
        q.nack_sent = true;
        send_ctrl(qi, kNack, q.rcv_nxt);
      }
      return;
    }
    ++q.rcv_nxt;
    advanced = 1;
    const bool had = q.ooo > 0;
    while (q.ooo > 0 && q.rcv_nxt < q.npkts) {
      uint64_t& w = bm[q.rcv_nxt >> 6];
      const uint64_t bit = 1ULL << (q.rcv_nxt & 63);
      if (!(w & bit)) break;
      w &= ~bit;
      ++q.rcv_nxt;
      --q.ooo;
      ++advanced;
    }
    if (had && q.ooo == 0) {
      const int64_t d = now - q.ooo_since;
      ++stats.reorder_events;
      reorder_delay_sum += static_cast<double>(d);
      stats.max_reorder_delay.ps = std::max(stats.max_reorder_delay.ps, d);
    }
  } else {
    if (psn != q.rcv_nxt) {  // a hole: go-back-N discards what follows it
      if (!q.nack_sent) {
        q.nack_sent = true;
        send_ctrl(qi, kNack, q.rcv_nxt);
      }
      return;
    }
    ++q.rcv_nxt;
    advanced = 1;
  }
  q.nack_sent = false;
  stats.data_delivered += advanced;
  if (q.rcv_nxt == q.npkts) {
    q.rx_done = true;
    maybe_ack(qi, true);
    const int64_t fin = now + q.suffix_delay;
    records[qi].finish = Time(fin);
    for (uint32_t j = 0; j < q.route_len; ++j)
      if (j < q.net_first || j > q.net_last) extra_bytes[routes[q.route_off + j]] += static_cast<double>(records[qi].bytes);
    events.push(Time(fin), kDone, qi);
    return;
  }
  maybe_ack(qi, false);
}

void PacketSim::Impl::receive_ctrl(uint32_t qi, Packet k) {
  Qp& q = qps[qi];
  switch (k.type) {
    case kAck:
      ++stats.acks;
      if (k.psn > q.snd_una) {
        q.snd_una = k.psn;
        q.last_progress = now;
        if (q.snd_nxt < q.snd_una) q.snd_nxt = q.snd_una;
      }
      if (q.snd_una >= q.npkts) {
        q.tx_done = true;
        records[qi].final_rate_bps = q.rate;
        ++q.cc_stamp;
      } else {
        maybe_activate(qi);
      }
      break;
    case kNack:
      ++stats.nacks;
      ++records[qi].nacks;
      if (k.psn > q.snd_una) {
        q.snd_una = k.psn;
        q.last_progress = now;
      }
      if (!q.tx_done && q.snd_nxt > k.psn && k.psn >= q.snd_una) q.snd_nxt = k.psn;
      maybe_activate(qi);
      break;
    case kCnp: on_cnp(qi); break;
    default: break;
  }
}

void PacketSim::Impl::on_rto(uint32_t qi) {
  Qp& q = qps[qi];
  if (q.tx_done) {
    q.rto_armed = false;
    return;
  }
  const int64_t deadline = q.last_progress + rto;
  if (now < deadline) {
    events.push(Time(deadline), kRto, qi);
    return;
  }
  if (q.snd_una < q.max_sent) {
    ++stats.timeouts;
    ++records[qi].timeouts;
    q.snd_nxt = q.snd_una;
    q.last_progress = now;
    maybe_activate(qi);
  }
  events.push(Time(now + rto), kRto, qi);
}

void PacketSim::Impl::on_cnp(uint32_t qi) {
  Qp& q = qps[qi];
  ++records[qi].cnps;
  if (!dcqcn.enabled || q.tx_done) return;
  const double g = dcqcn.g;
  if (!q.cnp_seen) {  // the RP starts at the first CNP: alpha = alpha0 (HPCC's mlx model, the paper's alpha = 1)
    q.cnp_seen = true;
    q.alpha = dcqcn.alpha0;
  } else {
    if (dcqcn.alpha_interval.ps > 0) {
      const int64_t n = (now - q.t_alpha) / dcqcn.alpha_interval.ps;
      if (n > 0) q.alpha *= std::pow(1.0 - g, static_cast<double>(n));
    }
    q.alpha = (1.0 - g) * q.alpha + g;
  }
  q.t_alpha = now;
  if (q.decreased && now - q.t_dec < dcqcn.decrease_interval.ps) return;
  if (dcqcn.clamp_target || q.t_stage > 0 || q.b_stage > 0) q.target_rate = q.rate;
  set_rate(qi, std::max(dcqcn.min_rate_bps, q.rate * (1.0 - q.alpha / 2.0)));
  q.t_dec = now;
  q.decreased = true;
  q.t_stage = q.b_stage = 0;
  q.bytes_since = 0;
  ++q.cc_stamp;
  events.push(Time(now + dcqcn.increase_timer.ps), kCcTimer, qi, 0, q.cc_stamp);
}

void PacketSim::Impl::apply_increase(Qp& q, int stage_for_mlx) {
  const double sc = scale(q.line);
  const int F = dcqcn.fast_recovery;
  if (stage_for_mlx < 0) {  // paper: both counters
    const int hi = std::max(q.t_stage, q.b_stage), lo = std::min(q.t_stage, q.b_stage);
    if (hi <= F) {
      // fast recovery
    } else if (lo > F) {
      q.target_rate += dcqcn.rhai_bps * sc;
    } else {
      q.target_rate += dcqcn.rai_bps * sc;
    }
  } else if (stage_for_mlx == F) {
    q.target_rate += dcqcn.rai_bps * sc;
  } else if (stage_for_mlx > F) {
    q.target_rate += dcqcn.rhai_bps * sc;
  }
  q.target_rate = std::min(q.target_rate, q.line);
  set_rate(static_cast<uint32_t>(&q - qps.data()), std::min(q.line, (q.rate + q.target_rate) / 2.0));
}

void PacketSim::Impl::set_rate(uint32_t qi, double rate) {
  // As HPCC's ChangeRate: the pending gap after the last packet is rescaled
  // to the new rate, so a QP slowed to a crawl does not sleep through its recovery.
  Qp& q = qps[qi];
  const double old = q.rate;
  q.rate = rate;
  if (q.last_bytes <= 0 || old == rate) return;
  const double gap_old = static_cast<double>(q.last_bytes) * 8e12 / old;
  const double gap_new = static_cast<double>(q.last_bytes) * 8e12 / rate;
  const int64_t next = std::max<int64_t>(now, q.next_send + std::llround(gap_new - gap_old));
  q.next_send = next;
  if (q.in_heap && next < q.heap_time) {  // wake earlier: a new entry supersedes the old one
    const DirLink p = q.inj_port;
    wait_push(p, next, qi);
    try_send(p);
  }
}

void PacketSim::Impl::cc_timer(uint32_t qi) {
  Qp& q = qps[qi];
  if (q.tx_done) return;
  if (dcqcn.byte_counter > 0) {
    ++q.t_stage;
    apply_increase(q, -1);
  } else {
    apply_increase(q, q.t_stage);
    ++q.t_stage;
  }
  if (q.rate < q.line || q.target_rate < q.line)
    events.push(Time(now + dcqcn.increase_timer.ps), kCcTimer, qi, 0, q.cc_stamp);
}

// ---------------------------------------------------------------- failures

void PacketSim::Impl::set_link_rate(topology::LinkId l, double bps) {
  for (const DirLink d : {2 * l, 2 * l + 1}) {
    info[d].bps = hot[d].bps = std::max<int64_t>(1, std::llround(bps));
    cap[d] = bps * (info[d].net ? transport.efficiency() : 1.0);
  }
}

void PacketSim::Impl::set_link_dead(topology::LinkId l, bool is_dead) {
  for (const DirLink d : {2 * l, 2 * l + 1}) {
    if ((dead[d] != 0) == is_dead) continue;
    dead[d] = is_dead ? 1 : 0;
    PortState& s = state[d];
    if (!is_dead) {
      if (has_work(d)) try_send(d);
      continue;
    }
    links_failed = true;
    // The frame being sent and those on the wire arrive by then: all lost.
    drop_until[d] = std::max(now, s.busy_until) + info[d].arrive_extra;
    for (uint8_t c = kCtrl; c <= kLossy; ++c)
      while (!s.q[c].empty()) {
        const Packet k = dequeue(d, c);
        if (k.type == kData && k.in_port >= 0 && hot[k.in_port].to_mmu) {  // its buffer (and credits) come back
          release_mmu(hot[d].from, k.in_port, k);
          return_credit(k.in_port, k);
        }
        lose(d, k);
      }
    if (s.paused) unpause(d, std::min(now, s.pause_until));  // the link's PFC state goes with it
  }
}

int64_t PacketSim::Impl::reroute(const std::vector<DirLink>& dirs) {
  // A QP uses a direction if its data path crosses it (per-flow policies, as
  // the flow engine); with per-packet policies the data follows the next-hop
  // tables and the QP's path carries its control packets back, so either
  // direction of a link counts.
  int64_t moved = 0;
  std::vector<PathPart> route;
  for (uint32_t qi = 0; qi < qps.size(); ++qi) {
    Qp& q = qps[qi];
    if (q.tx_done && q.rx_done) continue;
    bool hit = false;
    for (uint32_t j = 0; j < q.route_len && !hit; ++j) {
      const DirLink d = routes[q.route_off + j];
      for (const DirLink x : dirs) hit = hit || x == d || (per_packet && (x ^ 1) == d);
    }
    if (!hit) continue;
    if (tracks_load) {
      scratch.clear();
      for (uint32_t i = 0; i < q.route_len; ++i) scratch.push_back({routes[q.route_off + i], 1.0});
      router->release(scratch, 1.0);
    }
    route.clear();
    router->route(records[qi].src, records[qi].dst, q.entropy, 1.0, route);  // throws when no path is left
    if (!q.rerouted || q.routed_at != now) {  // packets sent so far follow the path they left on
      q.prev_off = q.path_off;
      q.prev_len = q.path_len;
    }
    q.rerouted = true;
    q.routed_at = now;
    const DirLink old_inj = q.inj_port;
    int64_t phys = 0, prefix = 0;
    install_route(qi, route, phys, prefix);
    ++moved;
    ++stats.rerouted;
    if (q.inj_port == old_inj || q.route_len == 0) continue;
    // A new first network link: the QP leaves the old port's schedule for the new one.
    if (q.in_sched) {
      PortState& s = state[old_inj];
      for (uint32_t i = s.ready_head, before = kNil; i != kNil; before = i, i = qps[i].next_ready) {
        if (i != qi) continue;
        (before == kNil ? s.ready_head : qps[before].next_ready) = q.next_ready;
        if (s.ready_tail == qi) s.ready_tail = before;
        break;
      }
      q.in_heap = false;  // its wait-heap entry there goes stale
      q.in_sched = false;
    }
    q.line = static_cast<double>(hot[q.inj_port].bps);
    q.rate = std::min(q.rate, q.line);
    q.target_rate = std::min(q.target_rate, q.line);
    maybe_activate(qi);
  }
  return moved;
}

// ---------------------------------------------------------------- PacketSim

PacketSim::PacketSim(const topology::Topology& topo, const NetworkOptions& net, const PacketOptions& opt)
    : m_(std::make_unique<Impl>(topo, net, opt)) {}
PacketSim::~PacketSim() = default;

void PacketSim::route(int32_t src, int32_t dst, uint64_t entropy, std::vector<PathPart>& out) {
  m_->router->route(src, dst, entropy, 1.0, out);
}
Time PacketSim::hop_latency(const std::vector<PathPart>& r) const { return m_->compiler->hop_latency(r); }
int32_t PacketSim::add_stream(const StreamSpec& s, const std::vector<PathPart>& r) { return m_->add_stream(s, r); }
void PacketSim::add_timer(Time at, uint64_t tag) { m_->events.push(at, kTimer, tag); }
void PacketSim::run(const std::function<void(const SimEvent&)>& on_event) {
  m_->run(on_event, std::numeric_limits<int64_t>::max());
  m_->finish_run();
}
void PacketSim::run_until(Time limit, const std::function<void(const SimEvent&)>& on_event) {
  m_->run(on_event, limit.ps);
}
void PacketSim::stop() { m_->stopped = true; }
void PacketSim::set_link_rate(topology::LinkId l, Bandwidth rate) { m_->set_link_rate(l, rate.bps); }
void PacketSim::set_link_dead(topology::LinkId l, bool dead) { m_->set_link_dead(l, dead); }
void PacketSim::set_route_dir_up(routing::DirLink d, bool up) {
  m_->router->set_dir_up(d, up);
  if (m_->next_hops) m_->next_hops->set_dir_up(d, up);
}
int64_t PacketSim::reroute(const std::vector<DirLink>& dirs) { return m_->reroute(dirs); }
bool PacketSim::stream_open(int32_t s) const { return !m_->qps[s].rx_done; }
void PacketSim::stream_route(int32_t s, std::vector<DirLink>& out) const {
  const Qp& q = m_->qps[s];
  out.assign(m_->routes.begin() + q.route_off, m_->routes.begin() + q.route_off + q.route_len);
}
Time PacketSim::now() const { return Time(m_->now); }
const SimStats& PacketSim::stats() const { return m_->stats; }
const std::vector<PortStats>& PacketSim::port_stats() const { return m_->port_stats; }
const std::vector<StreamRecord>& PacketSim::streams() const { return m_->records; }
const std::vector<QueueSample>& PacketSim::samples() const { return m_->samples; }
const std::vector<StreamSample>& PacketSim::stream_samples() const { return m_->stream_samples; }
std::vector<double> PacketSim::link_payload_bytes() const {
  std::vector<double> b(m_->port_stats.size());
  for (size_t d = 0; d < b.size(); ++d) b[d] = m_->port_stats[d].payload_bytes + m_->extra_bytes[d];
  return b;
}
double PacketSim::payload_capacity_bps(DirLink d) const { return m_->cap[d]; }
Time PacketSim::rto() const { return Time(m_->rto); }
Bytes PacketSim::buffer_of(NodeId n) const { return m_->mmu[n].buffer; }
Bytes PacketSim::headroom_of(DirLink in) const { return m_->ingress[in].headroom; }
const DcqcnParams& PacketSim::dcqcn() const { return m_->dcqcn; }
int64_t PacketSim::open_streams() const { return m_->open_streams; }

}  // namespace podnet::engine::packet
