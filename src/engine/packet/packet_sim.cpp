// PacketSim: the simulation core. The model is stated in packet_sim.hpp and
// the component headers; this file owns the event loop and moves packets
// between the components, which never call each other back:
//   ports (port.hpp: queues, scheduler, ECN marking, PFC state, telemetry)
//   switch buffer (switch_buffer.hpp: shared buffer, dynamic threshold, PFC decisions)
//   NIC (nic.hpp: QPs, pacing, go-back-N, ACK/NACK, receiver)
//   congestion control (cc/: an interface and a registry)
// Here: construction -> the event loop (one switch over event kinds) -> a
// port sending (arbitration, transmission) -> a packet arriving (forwarding,
// admission, PFC frames) -> failures -> the public interface.
#include "engine/packet/packet_sim.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/mpi_world.hpp"
#include "engine/backend.hpp"
#include "engine/packet/cc/congestion_control.hpp"
#include "engine/packet/event_wheel.hpp"
#include "engine/packet/nic.hpp"
#include "engine/packet/packet.hpp"
#include "engine/packet/partition.hpp"
#include "engine/packet/port.hpp"
#include "engine/packet/ranks.hpp"
#include "engine/packet/switch_buffer.hpp"

namespace podnet::engine::packet {

using routing::DirLink;
using routing::PathPart;
using topology::NodeId;
using topology::NodeKind;

namespace {
// The fabric's largest unloaded round trip between two NICs (cc::Context::network_rtt): a shortest-path
// search from the first NIC over the network links, each costing its latency both ways (and the
// switch latency of each switch entered), one data packet out and one control packet back at its rate;
// the cost of the farthest NIC. Paths go through switches only. On a symmetric fabric (Clos,
// fat-tree) every NIC sees the same. Without NICs (a torus) the endpoints are the chips, which route:
// the search starts at the first GPU and crosses every link.
int64_t fabric_rtt(const topology::Topology& t, const PlanCompiler& c, int64_t data_wire, int64_t ctrl_wire) {
  NodeId src = topology::kNone;
  for (NodeId n = 0; n < static_cast<NodeId>(t.nodes.size()) && src == topology::kNone; ++n)
    if (t.nodes[n].kind == NodeKind::Nic) src = n;
  const bool chips = src == topology::kNone;
  if (chips && !t.gpus.empty()) src = t.gpus.front();
  if (src == topology::kNone) return 0;
  const NodeKind endpoint = chips ? NodeKind::Gpu : NodeKind::Nic;
  const auto is_switch = [&](NodeId n) { return t.nodes[n].kind == NodeKind::Switch; };
  std::vector<int64_t> dist(t.nodes.size(), std::numeric_limits<int64_t>::max());
  using Item = std::pair<int64_t, NodeId>;
  std::vector<Item> heap{{0, src}};
  dist[src] = 0;
  int64_t worst = 0;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const auto [du, u] = heap.back();
    heap.pop_back();
    if (du != dist[u]) continue;
    if (t.nodes[u].kind == endpoint) worst = std::max(worst, du);
    if (u != src && !is_switch(u) && !chips) continue;
    const auto [lb, le] = t.incident(u);
    for (const topology::LinkId* it = lb; it != le; ++it) {
      const topology::Link& l = t.links[*it];
      if (!chips && !c.carries_transport(*it)) continue;
      const NodeId v = l.a == u ? l.b : l.a;
      const auto bps = std::max<int64_t>(1, std::llround(l.capacity.bps * c.class_efficiency(*it)));
      const int64_t cost = 2 * l.latency.ps + (is_switch(u) + is_switch(v)) * t.switch_latency.ps +
                           ser_ps(data_wire, bps) + ser_ps(ctrl_wire, bps);
      if (du + cost < dist[v]) {
        dist[v] = du + cost;
        heap.emplace_back(dist[v], v);
        std::push_heap(heap.begin(), heap.end(), std::greater<>());
      }
    }
  }
  return worst;
}
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
  std::unique_ptr<cc::CongestionControl> cc;
  bool ecn = false;      // switches mark (cc traits)
  int per_packet = 0;    // 0 none, 1 adaptive, 2 spray, 3 the packet's entropy (reps)
  uint64_t ev_seed = 0;  // reps: the switches' hash seed
  bool tracks_load = false;
  bool credits = false, pfc = false, torus = false;
  bool trim = false;           // a data packet that would be dropped is cut to its header (cc::Traits::trim)
  bool int_telemetry = false;  // switches stamp data packets at dequeue (cc::Traits::int_telemetry, HPCC)
  int64_t ctrl_wire = 84;      // control packets' (and trimmed headers') bytes on the wire
  uint8_t data_cls = kLossless;
  int64_t rto = 0;
  int32_t mtu = 4096, header = 82;
  int64_t ctrl_raw = 64;  // control packet bytes on NVLink/PCIe

  // ---- components and the core's own state
  // The sequential engine's one lane (its events in (time, push order), as core/event_queue.hpp); in a
  // partitioned run the coordinator's (partition.hpp), the threads' lanes in `lanes`.
  Lane lane0;
  std::optional<Partition> part;
  std::vector<std::unique_ptr<Lane>> lanes;
  SimStats totals;  // every lane's counters, after a run
  // Ranks (partition.hpp): the earliest event of every rank's lanes and their latest clock, at the last
  // exchange; the pipelined streams this rank receives, and the progress last sent of each.
  int64_t ranks_next = std::numeric_limits<int64_t>::max(), ranks_now = 0;
  std::vector<std::pair<uint32_t, uint64_t>> rx_shared;
  std::optional<Ports> ports;
  std::optional<SwitchBuffer> buffer;
  std::optional<Nic> nic;
  std::vector<QueueSample> samples;
  std::vector<StreamSample> stream_samples;
  std::vector<char> sampled_busy;  // sample_all_ports: the port's last sample was non-empty
  bool sampling = false;
  int64_t deadlock_window = 0;
  static constexpr uint64_t kRrSlots = 1 << 16;
  std::vector<uint32_t> rr_node;  // round-robin counters by hash of (switch, destination): spray, adaptive ties
  std::vector<uint64_t> rr_base, rr_mask;  // partitioned: each unit's counters
  // failures (§10)
  bool links_failed = false;  // a link has died in this run: the loss checks below are on
  bool stopped = false;
  std::function<void(Time)> heartbeat;     // NetworkOptions::observers.heartbeat, every heartbeat_mask + 1 events
  uint64_t heartbeat_mask = ~uint64_t{0};  // none: the event count never matches it
  std::vector<char> dead;                  // per directed link: the port sends nothing, packets sent to it are lost
  std::vector<int64_t> drop_until;         // per directed link: arrivals until then were on the wire when it died
  // Link-level retry (PacketOptions::link_retry), per directed link: arrivals before replay_until are
  // discarded and resent, arriving replay_shift later.
  std::vector<int64_t> replay_until, replay_shift;
  std::vector<double> cap;  // payload capacity in force
  // PFC storms (NetworkOptions::faults.pause_storms)
  std::vector<PauseStorm> storms;
  int64_t storm_until = -1;  // the last storm's end: no deadlock is declared before it
  void storm_frame(DirLink d, bool on);
  // silent faults and probes (§11)
  std::vector<SilentFault> faults;
  std::vector<std::vector<int32_t>> dir_faults, node_faults;  // faults on each directed link / node
  bool has_faults = false;
  Rng fault_rng;
  // Whether a silent fault loses packet k arriving on p: not, by the link's own fault with a probability (a
  // loss link-level retry recovers), or otherwise (a switch's fault, a flap while down).
  enum class Loss : uint8_t { None, Link, Other };
  Loss silently_lost(DirLink p, const Packet& k);
  int64_t fault_latency(DirLink p) const;
  struct ProbePath {
    uint32_t off = 0;
    uint16_t fwd = 0, back = 0, wire = 0;
  };
  std::vector<ProbePath> probe_paths;
  std::vector<DirLink> probe_links;
  std::vector<ProbeRecord> probe_log;
  std::vector<EcnBand> ecn_cfg;  // per port, before drifts (§12)
  void probe_out(DirLink p, const Packet& k);
  void on_probe(DirLink p, Packet k);

  bool switch_like(NodeId n) const {
    const NodeKind k = topo.nodes[n].kind;
    return k == NodeKind::Switch || (torus && k == NodeKind::Gpu);
  }
  bool has_work(DirLink p) const { return !ports->queues_empty(p) || nic->has_qps(nic->sched_port(p)); }

  static Lane& L() { return lane(); }
  void run(const std::function<void(const SimEvent&)>& on_event, int64_t limit);
  void dispatch(const Event& e, const std::function<void(const SimEvent&)>& on_event);
  // Requests what the events a few places ahead will read: a kick's port state, then its queues' heads; a
  // data packet's arrival, its link's counters and its QP, then the state of the port it leaves by. Each
  // otherwise waits on cache misses in turn (Ports::dequeue was 14 % of an NSCC + REPS permutation's CPU,
  // nearly all of it the queue head's miss). Prefetches only: nothing changes. The sequential engine only:
  // in the partitioned engine's lanes (without the QP reads: another thread may re-route a QP) they gained
  // nothing.
  [[gnu::always_inline]] void request_ahead(const Lane& l) const {
    constexpr size_t kState = 8, kQueues = 4;
    // The QP of a data packet's or its answer's arrival (a probe's `qp` names its path instead).
    auto qp_of = [&](const Event& e) -> const Qp* {
      if (kind_of(e) != kArrive || static_cast<uint8_t>(e.tag) >= kProbe) return nullptr;
      const auto qi = static_cast<size_t>(e.a >> 32);
      return qi < nic->qps.size() ? &nic->qps[qi] : nullptr;
    };
    if (const Event* e = l.events.ahead(kState)) {
      if (kind_of(*e) == kKick) {
        ports->request_state(static_cast<DirLink>(e->a));
      } else if (const Qp* q = qp_of(*e)) {
        const auto in = static_cast<size_t>(e->b >> 32);
        if (in < ports->hot.size()) {
          __builtin_prefetch(&ports->stats_of[in]);
          __builtin_prefetch(&ports->hot[in]);
        }
        __builtin_prefetch(q);
      }
    }
    if (const Event* e = l.events.ahead(kQueues)) {
      if (kind_of(*e) == kKick) {
        ports->request_queues(static_cast<DirLink>(e->a));
      } else if (const Qp* q = qp_of(*e); q && on_data_path(static_cast<uint8_t>(e->tag))) {
        // The port a data packet leaves by next, when its QP's path names it.
        const auto hop = static_cast<uint32_t>(e->tag >> 24);
        if (q->target == topology::kNone && hop + 1 < q->path_len)
          ports->request_state(nic->routes[q->path_off + hop + 1]);
      }
    }
  }
  // ---- partitioned runs (partition.hpp)
  void partition(const NetworkOptions& net, int32_t threads);
  void run_partitioned(const std::function<void(const SimEvent&)>& on_event, int64_t limit);
  void run_window(Lane& l, int64_t end);
  int64_t lanes_next();  // the earliest event any lane holds or has been mailed (INT64_MAX: none)
  // The same over every rank's lanes: theirs at the last exchange, or one the callbacks pushed since.
  int64_t all_lanes_next() { return part->ranks > 1 ? std::min(ranks_next, part->pushed_min) : lanes_next(); }
  bool idle() { return lane0.events.empty() && (!part || all_lanes_next() == std::numeric_limits<int64_t>::max()); }
  void merge_totals();
  void finish_run();
  // Ranks: a window's end (partition.hpp); every rank's port counters and stream records, once at the end.
  void exchange_ranks(const std::exception_ptr& failed, int64_t& last_tx, int64_t& paused, uint64_t& lane_events);
  void merge_ranks();
  // Ranks and telemetry: a stream sample's two halves, each taken where that end of the QP runs (the
  // receiver: what was delivered, window = 1 when done; the sender: its rate and window), and the join.
  void sample_stream_ends(uint32_t i);
  void merge_samples();
  std::vector<StreamSample> rx_half, tx_half;
  // Throws when no data packet has moved for deadlock_window while ports are paused (§9); `now`, the last
  // data packet sent and the paused ports are the lane's (sequential) or every lane's (partitioned).
  void check_deadlock(int64_t now, int64_t last_tx, int64_t paused);

  // ---- ports
  void ensure_kick(DirLink p, int64_t t) {
    PortState& s = ports->state[p];
    if (s.kick_at >= L().now && s.kick_at <= t) return;
    L().push(Time(t), kKick, static_cast<uint64_t>(p));
    s.kick_at = t;
  }
  void kick(DirLink p) {
    if (p >= 0) try_send(p);
  }
  // A port tries to send; a shared schedule's first port (§7) tries each port of the schedule.
  void try_send(DirLink p) {
    const std::vector<DirLink>* shared = nic->shared_ports(p);
    if (!shared) return try_send_one(p);
    for (DirLink d : *shared) try_send_one(d);
  }
  void try_send_one(DirLink p);
  std::vector<DirLink> plane_down;                       // [NIC node * planes + p]: its switch in plane p -> it (§7)
  DirLink down_into(NodeId nic_node, NodeId sw) const {  // that link in switch sw's plane
    return plane_down[static_cast<size_t>(nic_node) * topo.nic_planes + topo.nodes[sw].plane];
  }
  void transmit(DirLink p, Packet k);
  void send_outbox();

  // ---- switches
  // replayed: an arrival link-level retry moved already (its event kind's top bit; PacketOptions::link_retry).
  void on_arrive(Packet k, bool replayed = false);
  DirLink next_data_port(const Qp& q, const Packet& k, NodeId n, uint32_t off);
  // A multi-plane NIC's control packet at switch n (§7): on toward the source NIC inside n's plane.
  DirLink ctrl_port(const Qp& q, const Packet& k, NodeId n);
  void release(NodeId n, DirLink in, const Packet& k) {
    if (buffer->release(n, in, k)) send_pause(in, false);
  }
  void send_pause(DirLink in, bool on);
  void on_pause(DirLink p, bool on) {
    ports->on_pause(p, on, L().now);
    if (!on && has_work(p)) try_send(p);
  }

  // ---- failures
  void set_link_rate(topology::LinkId l, double bps);
  void set_link_dead(topology::LinkId l, bool dead);
  int64_t reroute(const std::vector<DirLink>& dirs);
  bool which_path(const Qp& q, const Packet& k, DirLink p, uint32_t& off, uint32_t& len) const;
  void lose(DirLink p, const Packet& k) {
    ++ports->stats_of[p].lost;
    ++(k.type == kData ? L().stats.lost : L().stats.lost_ctrl);
    gone(k);
  }
  // Unreliable delivery: a data packet (or its trimmed header) that will never arrive is counted at its
  // receiver, whose stream may end with it (nic.hpp). The sequential engine only.
  void gone(const Packet& k) {
    if (nic->unreliable() && (k.type == kData || k.type == kTrim) && nic->lose_unreliable(k.qp, k.psn, L().now))
      nic->complete(k.qp, L().now);
  }
  // A packet lost arriving over p (on its wire when it died, or with nowhere to go), counted at p. The
  // partitioned engine counts these apart (p's own lane counts the others) and adds them when the run ends.
  void lose_arrived(DirLink p, const Packet& k) {
    if (!part) return lose(p, k);
    ++lost_arrived[static_cast<size_t>(p)];
    ++(k.type == kData ? L().stats.lost : L().stats.lost_ctrl);
  }
  std::vector<uint64_t> lost_arrived;  // partitioned: per port
  // The credit of a lossless packet lost arriving over p goes back to p's sender: at once, or (partitioned:
  // p's sender may be another lane's) as a credit one link latency later.
  void credit_back(DirLink p, const Packet& k) {
    if (part) L().push(Time(L().now + ports->info[p].latency), kCredit, static_cast<uint64_t>(p), k.wire);
    else ports->state[p].credits += k.wire;
  }
  std::vector<Rng> fault_port_rng;  // partitioned: the silent faults' draws, a stream per port
  void return_credit(DirLink in, const Packet& k) {
    if (credits && k.cls == kLossless && ports->state[in].credit_limited)
      L().push(Time(L().now + ports->info[in].latency), kCredit, static_cast<uint64_t>(in), k.wire);
  }
};

// ---------------------------------------------------------------- construction

PacketSim::Impl::Impl(const topology::Topology& t, const NetworkOptions& net, const PacketOptions& o)
    : topo(t), opt(o), transport(net.transport) {
  LaneScope scope(lane0);
  if (net.observers.heartbeat && net.observers.heartbeat_every > 0) {
    heartbeat = net.observers.heartbeat;
    heartbeat_mask = std::bit_ceil(static_cast<uint64_t>(net.observers.heartbeat_every)) - 1;
  }
  routing::RouteOptions ro = net.routing;
  const routing::PolicyInfo& policy = routing::policy_info(ro.policy);
  per_packet = static_cast<int>(policy.per_packet);  // 1 least loaded, 2 spray, 3 entropy
  ev_seed = mix64(net.routing.seed ^ 0x7265707300000000ULL);
  if (per_packet) ro.policy = "ecmp";  // the per-packet choice replaces the flow's route
  tracks_load = policy.load_aware && !per_packet;
  router = std::make_unique<routing::Router>(t, ro);
  compiler = std::make_unique<PlanCompiler>(t, *router, transport, net.links);
  if (per_packet) {
    next_hops = std::make_unique<NextHops>(t, router->graph());
    rr_node.assign(kRrSlots, 0);
  }
  mtu = transport.mtu;
  header = transport.header_bytes;
  if (mtu <= 0 || mtu + header > 65535)
    throw InputError(fmt::format("packet engine: MTU {} + header {} must be 1..65535 bytes", mtu, header));
  cc::Context ctx;
  ctx.mtu = mtu;
  ctx.header = header;
  ctrl_wire = std::max<int64_t>(84, header + 4);
  ctx.network_rtt = fabric_rtt(t, *compiler, mtu + header, ctrl_wire);
  cc = cc::make(opt.cc, ctx);
  const cc::Traits& tr = cc->traits();
  if (opt.delivery == Delivery::Unreliable && tr.receiver_credits)
    throw InputError(fmt::format("packet engine: network.delivery=unreliable with network.cc={}: receiver credits "
                                 "pace a sender that is acknowledged; choose nscc or another sender algorithm, or "
                                 "reliable delivery (ordered, unordered)",
                                 opt.cc));
  ecn = tr.ecn;
  credits = tr.credits || opt.link_credits;
  trim = tr.trim;
  int_telemetry = tr.int_telemetry;
  pfc = !credits && opt.pfc;
  data_cls = (credits || pfc) ? kLossless : kLossy;
  torus = !t.torus_dims.empty();
  if (opt.ack_every < 1) opt.ack_every = 1;

  ports.emplace(t, tr, Rng(net.routing.seed).stream("packet.ecn"), [&](NodeId n) { return switch_like(n); });
  const int32_t D = static_cast<int32_t>(ports->info.size());
  // Link classes (engine/link_classes.hpp): a port serializes at raw x its class's efficiency, and
  // only Ethernet/InfiniBand links carry the transport's header bytes (chip-to-chip links none).
  for (DirLink d = 0; d < D; ++d) {
    const topology::LinkId l = routing::link_of(d);
    auto& p = ports->info[d];
    p.bps = std::max<int64_t>(1, std::llround(t.links[l].capacity.bps * compiler->class_efficiency(l)));
    p.quanta_ps = std::llround(65535.0 * 512.0 * 1e12 / static_cast<double>(p.bps));
    p.net = compiler->carries_transport(l);
    ports->hot[d].bps = p.bps;
    ports->hot[d].net = p.net;
  }
  dead.assign(D, 0);
  drop_until.assign(D, -1);
  if (opt.link_retry) {
    replay_until.assign(D, -1);
    replay_shift.assign(D, 0);
  }
  cap.resize(D);
  for (DirLink d = 0; d < D; ++d) cap[d] = compiler->payload_capacity_bps(d);
  buffer.emplace(t, opt, mtu + header, pfc, credits, *ports);
  // The scenario's marking band (network.ecn_kmin, ecn_kmax, ecn_pmax): the same at every switch port, in place
  // of the algorithm's own; a port into a NIC under receiver credits still marks nothing (port.hpp).
  if (ecn && (opt.ecn_kmin >= 0 || opt.ecn_kmax >= 0 || opt.ecn_pmax >= 0)) {
    for (DirLink d = 0; d < D; ++d) {
      PortInfo& p = ports->info[d];
      if (!p.from_mmu || (tr.receiver_credits && !p.to_mmu)) continue;
      if (opt.ecn_kmin >= 0) p.kmin = opt.ecn_kmin;
      if (opt.ecn_kmax >= 0) p.kmax = opt.ecn_kmax;
      if (opt.ecn_pmax >= 0) p.pmax = opt.ecn_pmax;
      if (p.kmax < p.kmin) {
        // Whose top it is: the user's network.ecn_kmax, or the congestion control's own at this port's rate.
        if (opt.ecn_kmax >= 0)
          throw InputError(fmt::format("network.ecn_kmin: {} is above network.ecn_kmax, {}: the band marks from "
                                       "ecn_kmin up to ecn_kmax",
                                       buffer_text(p.kmin), buffer_text(p.kmax)));
        throw InputError(fmt::format(
            "network.ecn_kmin: {} is above the top of the marking band, {} at {} ({}'s own at a {} Gbps port; set "
            "network.ecn_kmax too)",
            buffer_text(p.kmin), buffer_text(p.kmax), engine::dir_link_name(t, d), opt.cc,
            static_cast<double>(p.bps) / 1e9));
      }
    }
  }
  ecn_cfg.resize(D);
  for (DirLink d = 0; d < D; ++d) ecn_cfg[d] = {ports->info[d].kmin, ports->info[d].kmax, ports->info[d].pmax};
  for (const ThresholdDrift& dr : net.faults.threshold_drifts) {
    if (dr.node < 0 || dr.node >= static_cast<NodeId>(t.nodes.size()) || t.nodes[dr.node].kind != NodeKind::Switch)
      throw InputError(fmt::format("packet engine: {}: not a switch", dr.what));
    if (dr.dt_shift >= 0) {
      if (dr.dt_shift > 20) throw InputError(fmt::format("packet engine: {}: alpha below 2^-20", dr.what));
      buffer->set_dt_shift(dr.node, dr.dt_shift);
    }
    for (DirLink d = 0; d < D; ++d) {
      PortInfo& p = ports->info[d];
      if (p.from != dr.node) continue;
      if (dr.kmin >= 0) p.kmin = dr.kmin;
      if (dr.kmax >= 0) p.kmax = dr.kmax;
      if (dr.pmax >= 0) p.pmax = dr.pmax;
      if (p.kmax < p.kmin || p.pmax > 1)
        throw InputError(fmt::format("packet engine: {}: expected kmin <= kmax and pmax <= 1 (the port's band is "
                                     "{} to {} B, pmax {})",
                                     dr.what, p.kmin, p.kmax, p.pmax));
    }
  }
  // Auto: above any queueing delay. A switch's buffer bounds its queue, so 1 ms + 2 x the largest drain time
  // does; torus chips forward with an unlimited buffer (nothing bounds their queues: a 16-chip all-to-all
  // queued 102 MB, 2 ms at 50 GB/s, and the 1 ms RTO resent what was only waiting, 3.6x to 165x slower), so
  // there the RTO is the RDMA transport's own ACK timeout under NCCL's default NCCL_IB_TIMEOUT = 20
  // (failures.hpp): 4.096 us x 2^20 = 4.295 s (InfiniBand Architecture Specification, local ACK timeout).
  constexpr int64_t kIbTimeout20Ps = 4'096'000LL << 20;
  rto = opt.rto.ps > 0 ? opt.rto.ps
        : torus        ? kIbTimeout20Ps
                       : 1'000'000'000 + std::llround(2 * buffer->worst_drain_ps());
  deadlock_window = std::max<int64_t>(10'000'000'000, 4 * rto);
  // A timeout shorter than the unloaded round trip fires before any acknowledgement can come back: every
  // packet is sent again, and again, and the run never ends (2 us on leafspine-8k simulated 10 s of a 0.15 ms
  // all-reduce before it was stopped).
  if (opt.rto.ps > 0 && rto < ctx.network_rtt)
    throw InputError(fmt::format(
        "network.rto = {} is shorter than the fabric's unloaded round trip, {} (one MTU out and an ACK back "
        "between the farthest NICs): every packet would time out before its acknowledgement arrives and be sent "
        "again without end; expected at least {}, or leave it out (auto: 1 ms + 2 x the deepest queue's drain)",
        format_time(Time(rto)), format_time(Time(ctx.network_rtt)), format_time(Time(ctx.network_rtt))));

  Nic::Config nc;
  nc.mtu = mtu;
  nc.header = header;
  nc.ctrl_wire = ctrl_wire;
  nc.ctrl_raw = ctrl_raw;
  nc.data_cls = data_cls;
  nc.rto = rto;
  nc.reps = per_packet == static_cast<int>(routing::PerPacket::Entropy);
  nc.mrc = policy.path_set;
  nc.planes = std::max(1, t.nic_planes);
  nc.network_rtt = ctx.network_rtt;
  nic.emplace(opt, nc, *cc, *ports, next_hops.get());
  if (per_packet && t.nic_planes > 1 && !torus) {  // §7: a multi-plane NIC's ports share one schedule
    std::vector<std::vector<DirLink>> groups;      // each NIC's ports into its planes, in plane order
    plane_down.assign(t.nodes.size() * static_cast<size_t>(t.nic_planes), -1);
    for (NodeId n : t.nics) {
      std::vector<DirLink> up;
      for (auto [l, e] = t.incident(n); l != e; ++l)
        if (t.nodes[t.other_end(*l, n)].kind == NodeKind::Switch) up.push_back(routing::dir_link(*l, n, t));
      for (size_t p = 0; p < up.size(); ++p) plane_down[static_cast<size_t>(n) * t.nic_planes + p] = up[p] ^ 1;
      if (up.size() > 1) groups.push_back(std::move(up));
    }
    nic->share_ports(std::move(groups));
    nic->plane_downlinks(&plane_down, t.nic_planes);
  }

  storms = net.faults.pause_storms;
  for (size_t i = 0; i < storms.size(); ++i) {
    const PauseStorm& st = storms[i];
    if (st.port < 0 || st.port >= D)
      throw InputError(fmt::format("packet engine: PFC storm port {} out of range", st.port));
    if (st.end.ps <= st.start.ps)
      throw InputError(fmt::format("packet engine: PFC storm {} ends before it starts", st.what));
    L().push(st.start, kStorm, static_cast<uint64_t>(st.port), i);
    storm_until = std::max(storm_until, st.end.ps);
  }

  faults = net.faults.silent_faults;
  fault_rng = Rng(net.routing.seed).stream("packet.faults");
  if (!faults.empty()) {
    has_faults = true;
    dir_faults.resize(D);
    node_faults.resize(t.nodes.size());
    for (size_t i = 0; i < faults.size(); ++i) {
      const SilentFault& f = faults[i];
      if (!(f.probability >= 0 && f.probability <= 1) || f.latency.ps < 0 || f.period.ps < 0 || f.down.ps < 0)
        throw InputError(fmt::format("packet engine: fault {}: probability outside [0, 1] or a negative time", f.what));
      for (const int32_t d : f.dirs) {
        if (d < 0 || d >= D) throw InputError(fmt::format("packet engine: fault {}: link out of range", f.what));
        dir_faults[d].push_back(static_cast<int32_t>(i));
      }
      if (f.node != topology::kNone) {
        if (f.node < 0 || f.node >= static_cast<NodeId>(t.nodes.size()))
          throw InputError(fmt::format("packet engine: fault {}: node out of range", f.what));
        node_faults[f.node].push_back(static_cast<int32_t>(i));
      }
    }
  }

  if (opt.partitioned) partition(net, opt.threads);  // (before the telemetry's first sample: a coordinator event)
  if (opt.sample_all_ports) {
    opt.sample_ports.resize(D);
    std::iota(opt.sample_ports.begin(), opt.sample_ports.end(), 0);
    sampled_busy.assign(D, 0);
  }
  if (opt.sample_interval.ps > 0 && (!opt.sample_ports.empty() || opt.sample_streams)) {
    for (int32_t p : opt.sample_ports)
      if (p < 0 || p >= D) throw InputError(fmt::format("packet engine: sample port {} out of range", p));
    sampling = true;
    L().push(Time(0), kSample);
  }
}

// ---------------------------------------------------------------- partitioned runs (partition.hpp)

int32_t partition_unit_count(const topology::Topology& topo) {
  int32_t units = 0;
  partition_units(topo, units);
  return units;
}

std::vector<int32_t> partition_units(const topology::Topology& topo, int32_t& units) {
  // Union-find over the links that do not cut (partition.hpp).
  const auto N = static_cast<int32_t>(topo.nodes.size());
  std::vector<int32_t> up(static_cast<size_t>(N));
  std::iota(up.begin(), up.end(), 0);
  const auto find = [&](int32_t x) {
    while (up[static_cast<size_t>(x)] != x)
      x = up[static_cast<size_t>(x)] = up[static_cast<size_t>(up[static_cast<size_t>(x)])];
    return x;
  };
  // The coarsest grouping that splits the leaves: pods if they have two or more, else aggregation groups,
  // else every switch on its own.
  std::set<int32_t> pods, groups;
  for (const topology::Node& n : topo.nodes)
    if (n.kind == NodeKind::Switch && n.tier == 1) {
      pods.insert(n.pod);
      groups.insert(n.group);
    }
  const int by = pods.size() >= 2 && !pods.count(topology::kNone)       ? 0
                 : groups.size() >= 2 && !groups.count(topology::kNone) ? 1
                                                                        : 2;
  const auto cuts = [&](const topology::Link& l) {
    const topology::Node& a = topo.nodes[static_cast<size_t>(l.a)];
    const topology::Node& b = topo.nodes[static_cast<size_t>(l.b)];
    if (a.kind != NodeKind::Switch || b.kind != NodeKind::Switch) return false;
    if (by == 0) return a.pod == topology::kNone || a.pod != b.pod;
    if (by == 1) return a.group == topology::kNone || a.group != b.group;
    return true;
  };
  for (const topology::Link& l : topo.links)
    if (!cuts(l)) {
      const int32_t x = find(l.a), y = find(l.b);
      if (x != y) up[static_cast<size_t>(std::max(x, y))] = std::min(x, y);
    }
  std::vector<int32_t> unit_of_node(static_cast<size_t>(N), -1), unit_of_root(static_cast<size_t>(N), -1);
  units = 0;
  for (int32_t n = 0; n < N; ++n) {
    int32_t& u = unit_of_root[static_cast<size_t>(find(n))];
    if (u < 0) u = units++;
    unit_of_node[static_cast<size_t>(n)] = u;
  }
  return unit_of_node;
}

void PacketSim::Impl::partition(const NetworkOptions& net, int32_t threads) {
  const auto refuse = [](const char* what) {
    throw InputError(fmt::format("packet engine: network.partitioned does not run {} yet; set "
                                 "network.partitioned=false (the sequential engine runs it)",
                                 what));
  };
  if (tracks_load) refuse("load-aware routing (ugal; minimal and valiant run partitioned)");
  if (!net.faults.pause_storms.empty()) refuse("PFC storms");
  // (Routing builds a failed fabric's next-hop tables as packets ask for them, which threads must not do.)
  if (per_packet && !net.faults.failures.events.empty())
    refuse("per-packet routing (adaptive, spray, reps) with failures");
  if (opt.link_retry) refuse("link-level retry");
  if (opt.delivery == Delivery::Unreliable) refuse("unreliable delivery");
  if (threads < 1 || threads > 64)
    throw InputError(fmt::format("packet engine: {} threads: expected 1 to 64", threads));
  if (!lane0.events.empty()) throw Error("packet engine: internal: events before partitioning");

  Partition& P = part.emplace();
  const auto N = static_cast<int32_t>(topo.nodes.size());
  P.unit_of_node = partition_units(topo, P.units);
  const auto D = static_cast<DirLink>(ports->info.size());
  P.unit_from.resize(static_cast<size_t>(D));
  P.unit_to.resize(static_cast<size_t>(D));
  P.unit_ports.assign(static_cast<size_t>(P.units), 0);
  constexpr int64_t kUnset = std::numeric_limits<int64_t>::max();
  int64_t cut = kUnset, in_server = kUnset, shortest = kUnset;
  for (DirLink d = 0; d < D; ++d) {
    const PortInfo& i = ports->info[static_cast<size_t>(d)];
    P.unit_from[static_cast<size_t>(d)] = P.unit_of_node[static_cast<size_t>(i.from)];
    P.unit_to[static_cast<size_t>(d)] = P.unit_of_node[static_cast<size_t>(i.to)];
    ++P.unit_ports[static_cast<size_t>(P.unit_from[static_cast<size_t>(d)])];
    if (i.latency > 0) shortest = std::min(shortest, i.latency);
    if (P.unit_from[static_cast<size_t>(d)] != P.unit_to[static_cast<size_t>(d)]) cut = std::min(cut, i.latency);
    else if (!i.net && i.latency > 0) in_server = std::min(in_server, i.latency);
  }
  if (cut <= 0)
    throw InputError("packet engine: network.partitioned: a link of zero latency joins two partitions of the fabric");
  // A completion is reported after the in-server links behind a stream's last network link (PCIe, NVLink):
  // windows no longer than those see every completion made in a window fall after it, so no callback is
  // late. With one unit and no such link, windows of the shortest link still bound how late one can be.
  P.lookahead = std::min(cut, in_server);
  if (P.lookahead == kUnset) P.lookahead = shortest != kUnset ? shortest : 1'000'000;
  // Ranks (partition.hpp): `threads` lanes on each, in contiguous runs.
  P.ranks = mpi::world().size;
  P.rank = mpi::world().rank;
  if (P.ranks > 1) {
    const auto across = [](const char* what) {
      throw InputError(fmt::format("packet engine: network.partitioned under mpirun does not run {} yet; run it "
                                   "in one process (its threads: network.threads)",
                                   what));
    };
    if (!net.faults.failures.events.empty()) across("failures");
  }
  P.lanes = std::min<int32_t>(threads * P.ranks, P.units);
  P.lane_of = Partition::assign(P.unit_ports, P.lanes);
  P.rank_of_lane.resize(static_cast<size_t>(P.lanes));
  P.first_lane = P.lanes;
  P.end_lane = 0;
  for (int32_t i = 0; i < P.lanes; ++i) {
    const int32_t r = static_cast<int32_t>(static_cast<int64_t>(i) * P.ranks / P.lanes);
    P.rank_of_lane[static_cast<size_t>(i)] = r;
    if (r == P.rank) {
      P.first_lane = std::min(P.first_lane, i);
      P.end_lane = i + 1;
    }
  }
  if (P.end_lane <= P.first_lane) P.first_lane = P.end_lane = 0;  // more ranks than units: this one idles
  P.unit_mine.resize(static_cast<size_t>(P.units));
  for (int32_t u = 0; u < P.units; ++u)
    P.unit_mine[static_cast<size_t>(u)] = P.mine(P.lane_of[static_cast<size_t>(u)]) ? 1 : 0;
  P.unit_events.assign(static_cast<size_t>(P.units) + 1, 0);
  P.unit_cross.assign(static_cast<size_t>(P.units) + 1, 0);
  P.next_key.resize(static_cast<size_t>(P.units));
  for (size_t u = 0; u < P.next_key.size(); ++u) P.next_key[u] = static_cast<uint64_t>(u) << Partition::kKeyBits;
  P.coord_key.assign(static_cast<size_t>(P.units) + 1, static_cast<uint64_t>(P.units) << Partition::kKeyBits);
  for (int32_t i = 0; i < P.lanes; ++i) {
    auto& l = lanes.emplace_back(std::make_unique<Lane>());
    l->part = &P;
    l->id = i;
    l->mail.resize(2 * (static_cast<size_t>(P.lanes) + 1));
    l->mail_min.assign(static_cast<size_t>(P.lanes) + 1, std::numeric_limits<int64_t>::max());
    P.lane_ptr.push_back(l.get());
  }
  P.lane_ptr.push_back(&lane0);
  lane0.part = &P;
  lane0.id = P.lanes;
  lane0.unit = P.units;
  P.qps = &nic->qps;
  if (per_packet) {  // each unit its own round-robin counters: 4,096 per switch (at most 2^16 a unit)
    std::vector<uint64_t> switches(static_cast<size_t>(P.units), 0);
    for (NodeId n = 0; n < N; ++n)
      if (topo.nodes[static_cast<size_t>(n)].kind == NodeKind::Switch)
        ++switches[static_cast<size_t>(P.unit_of_node[static_cast<size_t>(n)])];
    rr_base.resize(static_cast<size_t>(P.units));
    rr_mask.resize(static_cast<size_t>(P.units));
    uint64_t total = 0;
    for (size_t u = 0; u < switches.size(); ++u) {
      const uint64_t slots = std::min<uint64_t>(kRrSlots, std::bit_ceil(4096 * std::max<uint64_t>(1, switches[u])));
      rr_base[u] = total;
      rr_mask[u] = slots - 1;
      total += slots;
    }
    rr_node.assign(total, 0);
  }
  lost_arrived.assign(static_cast<size_t>(D), 0);
  if (has_faults)
    fault_port_rng = Ports::port_streams(net.routing.seed ^ 0x6661756c74000000ULL, static_cast<size_t>(D));
  ports->partition(P.unit_from, P.units, mix64(net.routing.seed ^ 0x65636e0000000000ULL));
  nic->defer_extra_bytes = true;
}

int64_t PacketSim::Impl::lanes_next() {
  int64_t t = std::numeric_limits<int64_t>::max();
  for (const auto& l : lanes) {
    if (!l->events.empty()) t = std::min(t, l->events.next_time().ps);
    for (const auto& o : lanes) t = std::min(t, o->mail_min[static_cast<size_t>(l->id)]);
  }
  return t;
}

void PacketSim::Impl::run_window(Lane& l, int64_t end) {
  // The events other lanes made for this one in the last window.
  const size_t last = ((part->window - 1) & 1) * (lanes.size() + 1) + static_cast<size_t>(l.id);
  for (const auto& o : lanes) {
    auto& box = o->mail[last];
    for (const Event& e : box) l.events.push_event(e);
    box.clear();
  }
  const std::function<void(const SimEvent&)> none;
  Partition& P = *part;
  while (!l.events.empty() && l.events.next_time().ps < end) {
    const Event e = l.events.pop();
    l.now = e.time.ps;
    ++l.stats.events;
    l.unit = P.unit_of(e);
    ++P.unit_events[static_cast<size_t>(l.unit)];  // (a unit runs on one lane only)
    dispatch(e, none);
  }
}

void PacketSim::Impl::run_partitioned(const std::function<void(const SimEvent&)>& on_event, int64_t limit) {
  Partition& P = *part;
  const int32_t n = P.lanes;
  const int32_t first = P.first_lane, local = P.end_lane - P.first_lane;  // this rank's lanes
  constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  int64_t window_end = lane0.frontier;  // where the last call left the lanes (0 at the start)
  bool quit = false;
  std::exception_ptr failed;
  std::mutex failed_mu;
  SpinBarrier sync(std::max(1, local));
  const auto work = [&](int32_t i) {
    LaneScope scope(*lanes[static_cast<size_t>(i)]);
    try {
      run_window(*lanes[static_cast<size_t>(i)], window_end);
    } catch (...) {
      const std::lock_guard<std::mutex> g(failed_mu);
      if (!failed) failed = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (int32_t j = 1; j < local; ++j)
    threads.emplace_back([&, j] {
      for (;;) {
        sync.arrive_and_wait();  // a window starts (or the run ends)
        if (quit) return;
        work(first + j);
        sync.arrive_and_wait();  // the window is done
      }
    });
  const auto stop_threads = [&] {
    quit = true;
    if (local > 1) sync.arrive_and_wait();
    for (auto& t : threads) t.join();
  };
  constexpr uint64_t kParallelEvents = 256;
  bool busy = true;
  uint64_t last_events = 0;
  try {
    uint64_t beat = 0;
    while (!stopped) {
      // The coordinator's mail: completions, progress, timers the lanes (of every rank) scheduled.
      for (const auto& l : lanes) {
        auto& box = l->mail[(P.window & 1) * (static_cast<size_t>(n) + 1) + static_cast<size_t>(n)];
        for (const Event& e : box) lane0.events.push_event(e);
        box.clear();
      }
      lane0.frontier = window_end;
      const int64_t E = all_lanes_next();
      const int64_t G = lane0.events.empty() ? kNever : lane0.events.next_time().ps;
      if (G != kNever && G <= limit && (G < window_end || G <= E)) {
        // A callback, at its own time, every lane stopped; what it starts before the window end is clamped.
        const Event e = lane0.events.pop();
        lane0.now = e.time.ps;
        ++lane0.stats.events;
        ++P.unit_events[static_cast<size_t>(P.units)];
        dispatch(e, on_event);
        continue;
      }
      if (E == kNever || E > limit) break;
      window_end = std::min({E + P.lookahead, G, limit == kNever ? kNever : limit + 1});
      for (const auto& l : lanes)
        for (auto& m : l->mail_min) m = kNever;
      P.pushed_min = kNever;
      ++P.window;
      if (local > 1 && busy) {
        sync.arrive_and_wait();
        work(first);
        sync.arrive_and_wait();
      } else {  // few events: every lane on this thread, no barrier (who runs a lane changes nothing)
        for (int32_t i = first; i < first + local; ++i) work(i);
      }
      // Between windows: the deadlock check (packet_sim.hpp §9) and the heartbeat, over every lane.
      int64_t last_tx = 0, paused = 0;
      uint64_t lane_events = 0;
      for (int32_t i = first; i < first + local; ++i) {
        const Lane& l = *lanes[static_cast<size_t>(i)];
        last_tx = std::max(last_tx, l.last_tx);
        paused += l.paused_ports;
        lane_events += l.stats.events;
      }
      // The next window on every thread when this one kept them busy: a window costs the threads two
      // barriers (~0.2 us each), so below a few hundred events (~0.3 us each) one thread runs it faster.
      busy = lane_events - last_events >= kParallelEvents;
      last_events = lane_events;
      if (P.ranks > 1) exchange_ranks(failed, last_tx, paused, lane_events);  // every rank's
      else if (failed) std::rethrow_exception(failed);
      check_deadlock(window_end, std::max(last_tx, lane0.last_tx), paused + lane0.paused_ports);
      const uint64_t events = lane_events + lane0.stats.events;
      if (heartbeat && (events & ~heartbeat_mask) != beat) {
        beat = events & ~heartbeat_mask;
        heartbeat(Time(window_end));
      }
    }
  } catch (...) {
    stop_threads();
    throw;
  }
  stop_threads();
  int64_t end = std::max(lane0.now, ranks_now);
  for (const auto& l : lanes) end = std::max(end, l->now);
  if (limit != kNever && limit > end) end = limit;
  // Failure actions between run_until() calls act at `limit`, after every event up to it (as sequentially):
  // what they schedule from then on is not late.
  lane0.frontier = std::min(window_end, limit);
  lane0.now = end;
  for (const auto& l : lanes) l->now = end;
  merge_totals();
}

void PacketSim::Impl::exchange_ranks(const std::exception_ptr& failed, int64_t& last_tx, int64_t& paused,
                                     uint64_t& lane_events) {
  Partition& P = *part;
  const auto n = static_cast<size_t>(P.lanes);
  const size_t parity = (P.window & 1) * (n + 1);
  ranks::Status me;
  me.next = std::numeric_limits<int64_t>::max();
  me.last_tx = last_tx;
  me.paused = paused;
  me.events = static_cast<int64_t>(lane_events);
  me.failed = failed ? 1 : 0;
  std::vector<std::vector<ranks::Wire>> out(static_cast<size_t>(P.ranks));
  const auto to_all = [&](const ranks::Wire& w) {
    for (int32_t r = 0; r < P.ranks; ++r)
      if (r != P.rank) out[static_cast<size_t>(r)].push_back(w);
  };
  for (int32_t i = P.first_lane; i < P.end_lane; ++i) {
    Lane& l = *lanes[static_cast<size_t>(i)];
    me.now = std::max(me.now, l.now);
    if (!l.events.empty()) me.next = std::min(me.next, l.events.next_time().ps);
    for (size_t t = 0; t < n; ++t) {
      me.next = std::min(me.next, l.mail_min[t]);
      if (P.mine(static_cast<int32_t>(t))) continue;
      auto& box = l.mail[parity + t];  // another rank's lane: sent, not kept
      for (const Event& e : box) out[static_cast<size_t>(P.rank_of_lane[t])].push_back({e, i, static_cast<int32_t>(t)});
      box.clear();
      l.mail_min[t] = std::numeric_limits<int64_t>::max();
    }
    for (const Event& e : l.mail[parity + n]) to_all({e, i, static_cast<int32_t>(n)});  // the coordinator's: kept too
  }
  // The receiver progress of the pipelined streams this rank receives, when it moved: the coordinator reads it.
  for (auto& [qi, sent] : rx_shared) {
    const Qp& q = nic->qps[qi];
    const uint64_t now_at = static_cast<uint64_t>(q.rcv_nxt) << 1 | (q.rx_done ? 1 : 0);
    if (now_at == sent) continue;
    sent = now_at;
    ranks::Wire w;
    w.e.a = qi;
    w.e.b = q.rcv_nxt;
    w.e.tag = q.rx_done ? 1 : 0;
    w.to = ranks::kProgress;
    to_all(w);
  }
  std::vector<ranks::Status> all;
  std::vector<ranks::Wire> in;
  for (const auto& o : out) P.sent += o.size();
  ranks::exchange(me, all, out, in);
  bool any_failed = false;
  ranks_next = std::numeric_limits<int64_t>::max();
  last_tx = paused = 0;
  lane_events = 0;
  for (const ranks::Status& s : all) {
    any_failed = any_failed || s.failed != 0;
    ranks_next = std::min(ranks_next, s.next);
    last_tx = std::max(last_tx, s.last_tx);
    paused += s.paused;
    lane_events += static_cast<uint64_t>(s.events);
    ranks_now = std::max(ranks_now, s.now);
  }
  if (any_failed) {
    std::string what;
    if (failed) {
      try {
        std::rethrow_exception(failed);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
        what = "unknown error";
      }
    }
    const std::string first = ranks::first_error(what);
    if (failed) std::rethrow_exception(failed);
    throw Error(first);
  }
  for (const ranks::Wire& w : in) {
    if (w.to == ranks::kProgress) {
      Qp& q = nic->qps[w.e.a];
      q.rcv_nxt = static_cast<uint32_t>(w.e.b);
      q.rx_done = w.e.tag != 0;
      continue;
    }
    Lane& from = *lanes[static_cast<size_t>(w.from)];
    from.mail[parity + static_cast<size_t>(w.to)].push_back(w.e);
    if (static_cast<size_t>(w.to) < n) {
      int64_t& m = from.mail_min[static_cast<size_t>(w.to)];
      m = std::min(m, w.e.time.ps);
    }
  }
}

namespace {
// The counters of SimStats that lanes (and ranks) add up; the rest are peaks or the run's own figures.
constexpr uint64_t SimStats::*kSummed[] = {
    &SimStats::events,    &SimStats::data_sent,    &SimStats::data_delivered, &SimStats::retransmits,
    &SimStats::drops,     &SimStats::trims,        &SimStats::trims_received, &SimStats::trim_nacks,
    &SimStats::pulls,     &SimStats::link_retries, &SimStats::lost,           &SimStats::lost_ctrl,
    &SimStats::silent,    &SimStats::probes_sent,  &SimStats::probe_replies,  &SimStats::rerouted,
    &SimStats::ecn_marks, &SimStats::cnps,         &SimStats::acks,           &SimStats::nacks,
    &SimStats::timeouts,  &SimStats::pause_frames, &SimStats::reorder_events};
// A port's and a stream's results as merge_ranks() reduces them: counters (summed: each is written on one
// rank, zero on the others) and peaks (the largest).
constexpr uint64_t PortStats::*kPortCounts[] = {&PortStats::packets,     &PortStats::data_packets,
                                                &PortStats::rx_packets,  &PortStats::cnp_packets,
                                                &PortStats::retransmits, &PortStats::out_of_order,
                                                &PortStats::drops,       &PortStats::trims,
                                                &PortStats::ecn_marks,   &PortStats::pause_rx,
                                                &PortStats::pause_tx,    &PortStats::lost,
                                                &PortStats::silent};
constexpr double PortStats::*kPortAmounts[] = {&PortStats::payload_bytes, &PortStats::wire_bytes, &PortStats::rx_bytes,
                                               &PortStats::queue_byte_ps};
constexpr Bytes PortStats::*kPortPeaks[] = {&PortStats::pg_shared_max, &PortStats::max_queue};
constexpr uint32_t StreamRecord::*kStreamCounts[] = {&StreamRecord::retransmits, &StreamRecord::timeouts,
                                                     &StreamRecord::nacks,       &StreamRecord::cnps,
                                                     &StreamRecord::trims,       &StreamRecord::out_of_order};
constexpr Time StreamRecord::*kStreamTimes[] = {&StreamRecord::first_send, &StreamRecord::finish};

void add_stats(SimStats& t, const SimStats& x) {
  for (const auto f : kSummed) t.*f += x.*f;
  t.max_reorder_packets = std::max(t.max_reorder_packets, x.max_reorder_packets);
  t.max_reorder_delay = std::max(t.max_reorder_delay, x.max_reorder_delay);
}
}  // namespace

void PacketSim::Impl::merge_totals() {
  SimStats x;  // every lane's (of every rank)
  int64_t reorder_sum = 0;
  for (const auto& l : lanes) {
    add_stats(x, l->stats);
    reorder_sum += l->reorder_sum_ps;
  }
  uint64_t peak = ports->peak_packets_of_units();
  if (part->ranks > 1) {  // another rank's lanes are idle here: their counters are zero
    std::vector<uint64_t> sums;
    for (const auto f : kSummed) sums.push_back(x.*f);
    sums.push_back(static_cast<uint64_t>(reorder_sum));
    sums.push_back(peak);
    ranks::sum(sums);
    size_t i = 0;
    for (const auto f : kSummed) x.*f = sums[i++];
    reorder_sum = static_cast<int64_t>(sums[i++]);
    peak = sums[i];
    std::vector<int64_t> peaks{x.max_reorder_packets, x.max_reorder_delay.ps};
    ranks::max(peaks);
    x.max_reorder_packets = static_cast<uint32_t>(peaks[0]);
    x.max_reorder_delay = Time(peaks[1]);
  }
  SimStats t = lane0.stats;
  add_stats(t, x);
  reorder_sum += lane0.reorder_sum_ps;
  t.mean_reorder_delay_ps = t.reorder_events ? static_cast<double>(reorder_sum) / static_cast<double>(t.reorder_events)
                                             : 0;
  t.peak_packets = peak;
  t.clamped = static_cast<uint64_t>(lane0.clamped);
  t.clamped_time = Time(lane0.clamped_ps);
  t.units = part->units;
  t.lookahead = Time(part->lookahead);
  t.windows = part->window;
  totals = t;
}

void PacketSim::Impl::sample_stream_ends(uint32_t i) {
  const Qp& q = nic->qps[i];
  const int64_t now = L().now;
  const bool under_way = opt.sample_all_ports;  // every port sampled (telemetry): only the QPs under way
  if (under_way && now < nic->records[i].first_send.ps) return;
  const Partition& P = *part;
  if (P.unit_mine[static_cast<size_t>(P.unit_of_node[static_cast<size_t>(q.dst_node)])] && !(under_way && q.rx_done)) {
    const Bytes got = std::min<Bytes>(nic->records[i].bytes, static_cast<Bytes>(q.rcv_nxt) * mtu);
    rx_half.push_back({Time(now), static_cast<int32_t>(i), got, 0.0, q.rx_done ? 1u : 0u});
  }
  // (A sender done has its every packet acknowledged: its receiver is done too.)
  if (P.unit_mine[static_cast<size_t>(P.unit_from[static_cast<size_t>(q.inj_port)])] && !(under_way && q.tx_done))
    tx_half.push_back({Time(now), static_cast<int32_t>(i), 0, q.cc.rate, q.cc.window});
}

void PacketSim::Impl::merge_samples() {
  const auto before = [](const auto& x, const auto& y) {
    return x.time.ps != y.time.ps ? x.time.ps < y.time.ps : x.stream < y.stream;
  };
  // Queue samples: every rank's, in the order one process takes them (by time, then the port's place in
  // sample_ports).
  std::vector<int32_t> place(ports->info.size(), 0);
  for (size_t k = opt.sample_ports.size(); k-- > 0;)
    place[static_cast<size_t>(opt.sample_ports[k])] = static_cast<int32_t>(k);
  samples = ranks::all_of(samples);
  std::stable_sort(samples.begin(), samples.end(), [&](const QueueSample& x, const QueueSample& y) {
    return x.time.ps != y.time.ps ? x.time.ps < y.time.ps
                                  : place[static_cast<size_t>(x.port)] < place[static_cast<size_t>(y.port)];
  });
  std::vector<StreamSample> rx = ranks::all_of(rx_half), tx = ranks::all_of(tx_half);
  std::sort(rx.begin(), rx.end(), before);
  std::sort(tx.begin(), tx.end(), before);
  stream_samples.clear();
  size_t j = 0;
  for (const StreamSample& r : rx) {
    if (opt.sample_all_ports && r.window != 0) continue;  // done: not under way
    while (j < tx.size() && before(tx[j], r)) ++j;
    if (j == tx.size() || before(r, tx[j]))
      throw Error("packet engine: internal: a stream sample lost its sender's half");
    stream_samples.push_back({r.time, r.stream, r.delivered, tx[j].rate_bps, tx[j].window});
  }
  rx_half.clear();
  tx_half.clear();
}

void PacketSim::Impl::merge_ranks() {
  // Each counter of a port, a stream or a unit was written on one rank (the one running the port's end
  // that counts it) and is zero on the others: sums. Peaks and times: the largest.
  std::vector<uint64_t> u;
  std::vector<double> d, dmax;
  std::vector<int64_t> imax;
  auto& ps = ports->stats_of;
  for (const PortStats& s : ps) {
    for (const auto f : kPortCounts) u.push_back(s.*f);
    u.push_back(static_cast<uint64_t>(s.paused.ps));
    for (const auto f : kPortAmounts) d.push_back(s.*f);
    for (const auto f : kPortPeaks) imax.push_back(s.*f);
    imax.push_back(static_cast<int64_t>(s.queue_hist.size()));
    dmax.push_back(s.peak_utilization);
  }
  auto& rec = nic->records;
  for (const StreamRecord& r : rec) {
    for (const auto f : kStreamCounts) u.push_back(r.*f);
    for (const auto f : kStreamTimes) imax.push_back((r.*f).ps);
    dmax.push_back(r.final_rate_bps);
  }
  for (int32_t k = 0; k < part->units; ++k) {
    u.push_back(part->unit_events[static_cast<size_t>(k)]);
    u.push_back(part->unit_cross[static_cast<size_t>(k)]);
  }
  ranks::sum(u);
  ranks::sum(d);
  ranks::max(imax);
  ranks::max(dmax);
  size_t iu = 0, id = 0, im = 0, idm = 0;
  std::vector<double> hist;
  for (PortStats& s : ps) {
    for (const auto f : kPortCounts) s.*f = u[iu++];
    s.paused = Time(static_cast<int64_t>(u[iu++]));
    for (const auto f : kPortAmounts) s.*f = d[id++];
    for (const auto f : kPortPeaks) s.*f = imax[im++];
    s.queue_hist.resize(static_cast<size_t>(imax[im++]), 0.0);
    hist.insert(hist.end(), s.queue_hist.begin(), s.queue_hist.end());
    s.peak_utilization = dmax[idm++];
  }
  for (StreamRecord& r : rec) {
    for (const auto f : kStreamCounts) r.*f = static_cast<uint32_t>(u[iu++]);
    for (const auto f : kStreamTimes) r.*f = Time(imax[im++]);
    r.final_rate_bps = dmax[idm++];
  }
  for (int32_t k = 0; k < part->units; ++k) {
    part->unit_events[static_cast<size_t>(k)] = u[iu++];
    part->unit_cross[static_cast<size_t>(k)] = u[iu++];
  }
  ranks::sum(hist);  // the depth histograms, each port's at its largest length
  size_t ih = 0;
  for (PortStats& s : ps)
    for (double& h : s.queue_hist) h = hist[ih++];
}

// ---------------------------------------------------------------- event loop

void PacketSim::Impl::run(const std::function<void(const SimEvent&)>& on_event, int64_t limit) {
  if (part) return run_partitioned(on_event, limit);
  Lane& l = lane0;
  while (!stopped && !l.events.empty() && l.events.next_time().ps <= limit) {
    request_ahead(l);
    const Event e = l.events.pop();
    l.now = e.time.ps;
    if ((++l.stats.events & heartbeat_mask) == 0) heartbeat(Time(l.now));
    dispatch(e, on_event);
  }
  if (limit > l.now && limit != std::numeric_limits<int64_t>::max()) l.now = limit;
}

void PacketSim::Impl::dispatch(const Event& e, const std::function<void(const SimEvent&)>& on_event) {
  switch (kind_of(e)) {
    case kArrive: on_arrive(decode(e), (e.kind >> 31) != 0); break;
    case kKick: {
      const auto p = static_cast<DirLink>(e.a);
      if (ports->state[p].kick_at == L().now) ports->state[p].kick_at = -1;
      try_send(p);
      break;
    }
    case kPause:
      if (!links_failed || !dead[e.a]) on_pause(static_cast<DirLink>(e.a), e.b != 0);  // else lost with its link
      break;
    case kPauseRefresh: {
      if (!part) check_deadlock(L().now, L().last_tx, L().paused_ports);  // partitioned: between windows
      const auto i = static_cast<DirLink>(e.a);
      const SwitchBuffer::Ingress& g = buffer->ingress(i);
      if (g.pause_sent && g.stamp == e.tag) send_pause(i, true);
      break;
    }
    case kCredit: {
      const auto p = static_cast<DirLink>(e.a);
      ports->state[p].credits += static_cast<int64_t>(e.b);
      if (has_work(p)) try_send(p);
      break;
    }
    case kQpStart: kick(nic->start(static_cast<uint32_t>(e.a), L().now)); break;
    case kPullPace:
      nic->pull_pace(static_cast<int32_t>(e.a), L().now);
      send_outbox();
      break;
    case kRto: {
      if (!part) check_deadlock(L().now, L().last_tx, L().paused_ports);
      DirLink k = -1;
      const int64_t next = nic->on_rto(static_cast<uint32_t>(e.a), L().now, k);
      kick(k);
      if (next >= 0) L().push(Time(next), kRto, e.a);
      break;
    }
    case kCcTimer: {
      const auto qi = static_cast<uint32_t>(e.a);
      if (nic->qps[qi].cc.stamp != e.tag) break;
      kick(nic->cc_timer(qi, L().now));
      nic->cc_timer_rearm(qi, L().now);
      break;
    }
    case kDone: {
      const auto qi = static_cast<uint32_t>(e.a);
      --nic->open_streams;
      if (part) nic->count_extra_bytes(qi);  // (sequential: at its completion)
      if (tracks_load) {
        const Qp& q = nic->qps[qi];
        L().scratch.clear();
        for (uint32_t i = 0; i < q.route_len; ++i) L().scratch.push_back({nic->routes[q.route_off + i], 1.0});
        router->release(L().scratch, 1.0);
      }
      SimEvent se;
      se.tag = nic->stream_tags[qi];
      se.at = Time(L().now);
      se.stream = static_cast<int32_t>(qi);
      on_event(se);
      break;
    }
    case kProgress: {
      const auto qi = static_cast<uint32_t>(e.a);
      if (nic->qps[qi].rx_done) break;  // completed meanwhile: kDone reports it
      SimEvent se;
      se.tag = nic->stream_tags[qi];
      se.at = Time(L().now);
      se.progress = true;
      se.stream = static_cast<int32_t>(qi);
      on_event(se);
      break;
    }
    case kTimer: {
      SimEvent se;
      se.tag = e.a;
      se.at = Time(L().now);
      se.timer = true;
      on_event(se);
      break;
    }
    case kSample: {
      // Ranks: each samples its own ports, and its own end of each QP; merge_samples() joins them at the end.
      const bool spread = part && part->ranks > 1;
      for (int32_t p : opt.sample_ports) {
        if (spread && !part->unit_mine[static_cast<size_t>(part->unit_from[static_cast<size_t>(p)])]) continue;
        const int64_t q = ports->state[p].qbytes;
        if (opt.sample_all_ports) {  // sparse: a port's rows run from its first non-empty sample to the empty one
                                     // after
          if (q == 0 && !sampled_busy[p]) continue;
          sampled_busy[p] = q > 0;
        }
        samples.push_back({Time(L().now), p, q});
      }
      if (opt.sample_streams)
        for (size_t i = 0; i < nic->qps.size(); ++i) {
          const Qp& q = nic->qps[i];
          if (spread) {
            sample_stream_ends(static_cast<uint32_t>(i));
            continue;
          }
          // every port sampled (telemetry): only the QPs under way
          if (opt.sample_all_ports && (q.rx_done || L().now < nic->records[i].first_send.ps)) continue;
          const Bytes got = std::min<Bytes>(nic->records[i].bytes, static_cast<Bytes>(q.rcv_nxt) * mtu);
          stream_samples.push_back({Time(L().now), static_cast<int32_t>(i), got, q.cc.rate, q.cc.window});
        }
      // Telemetry samples on while anything is left to happen (streams may start after compute delays).
      if (!idle() && (nic->open_streams > 0 || opt.sample_all_ports))
        L().push(Time(L().now + opt.sample_interval.ps), kSample);
      break;
    }
    case kStorm: {
      // A storming NIC (§3): PAUSE every half pause time until the storm's end, then XON.
      const auto d = static_cast<DirLink>(e.a);
      const PauseStorm& st = storms[e.b];
      const bool on = L().now < st.end.ps;
      storm_frame(d, on);
      if (on) L().push(Time(std::min(st.end.ps, L().now + ports->info[d].quanta_ps / 2)), kStorm, e.a, e.b);
      break;
    }
    default: throw Error("packet engine: internal: unknown event");
  }
}

void PacketSim::Impl::finish_run() {
  const bool ranks = part && part->ranks > 1;
  ports->flush(lane0.now, opt.util_window.ps, cap, ranks ? &part->unit_mine : nullptr);  // (ranks: its own ports)
  for (size_t d = 0; d < lost_arrived.size(); ++d) {
    ports->stats_of[d].lost += lost_arrived[d];
    lost_arrived[d] = 0;
  }
  if (ranks) {
    merge_ranks();
    if (sampling) merge_samples();
  }
  SimStats& s = lane0.stats;
  if (!part)
    s.mean_reorder_delay_ps =
        s.reorder_events ? static_cast<double>(lane0.reorder_sum_ps) / static_cast<double>(s.reorder_events) : 0;
}

void PacketSim::Impl::check_deadlock(int64_t now, int64_t last_tx, int64_t paused) {
  // Pause refreshes and RTOs are all that keep a deadlocked run going: a
  // cyclic buffer dependency under PFC stops every packet for good.
  if (nic->open_streams == 0 || paused == 0 || now - last_tx <= deadlock_window || now < storm_until) return;
  throw Error(
      fmt::format("packet engine: PFC deadlock at {}: no data packet has moved for {} while {} wait and {} "
                  "paused (a cyclic buffer dependency); use routing without cycles, a lossy data class (pfc off), or "
                  "another topology",
                  format_time(Time(now)), format_time(Time(now - last_tx)),
                  plural(static_cast<int64_t>(nic->open_streams), "stream", "streams"),
                  plural(paused, "port is", "ports are")));
}

// ---------------------------------------------------------------- ports

void PacketSim::Impl::try_send_one(DirLink p) {
  if (links_failed && dead[p]) return;
  PortState& s = ports->state[p];
  if (s.busy_until > L().now) {
    if (has_work(p)) ensure_kick(p, s.busy_until);
    return;
  }
  if (s.paused && L().now >= s.pause_until) ports->unpause(p, s.pause_until);
  Packet pk;
  const int64_t qp_wire = ports->hot[p].net ? mtu + header : mtu;
  Nic& n = *nic;
  const DirLink sp = n.sched_port(p);  // the schedule its QPs are on (§7)
  bool got = false;
  // Under ordered delivery a multi-plane NIC's port sends the packets the shared schedule gave it first, before
  // it takes a new one from the schedule (a QP's packets on one port never overtake each other). A port out of
  // service takes none.
  const bool handed = sp != p || n.shared_ports(p) != nullptr;
  while (true) {
    got = ports->pick(
        p, data_cls, qp_wire, L().now,
        [&] { return n.has_qps(sp) && !(handed && ((n.ordered() && !s.q[data_cls].empty()) || n.port_off(p))); },
        [&](Packet& out) { return n.next_packet(sp, p, L().now, out); }, pk);
    const DirLink to = got ? n.take_redirect() : -1;
    if (to < 0 || (links_failed && dead[to])) break;
    // REPS on a multi-plane NIC (§7): the packet's entropy value names another plane's port; it waits
    // there, and this port asks again.
    ports->enqueue(to, pk, L().now);
    ensure_kick(to, L().now);
  }
  if (!got) {
    const bool lossless_waiting = !s.q[kLossless].empty() || (data_cls == kLossless && n.has_qps(sp));
    if (s.paused && lossless_waiting) ensure_kick(p, s.pause_until);
    // A QP waiting for its pacing time wakes the port then; one blocked by the link's credits waits for them
    // instead (kCredit tries the port again): a kick at a pacing time already past would come back at once.
    const bool credit_blocked = data_cls == kLossless && s.credit_limited && s.credits < qp_wire;
    // (A port out of service takes nothing from the schedule: the ports in service wake it.)
    if (!s.paused && !credit_blocked && !n.ready(sp) && n.has_qps(sp) && !(handed && n.port_off(p)))
      ensure_kick(sp, n.next_wait(sp));
    return;
  }
  transmit(p, pk);
}

void PacketSim::Impl::transmit(DirLink p, Packet k) {
  const PortHot& I = ports->hot[p];
  PortState& s = ports->state[p];
  PortStats& st = ports->stats_of[p];
  const int64_t bytes = I.net ? k.wire : (k.type == kData ? k.raw : ctrl_raw);
  const int64_t ser = ser_ps(bytes, I.bps);
  s.busy_until = L().now + ser;
  ++st.packets;
  st.wire_bytes += static_cast<double>(bytes);
  if (k.type == kCnp) ++st.cnp_packets;
  if (k.type == kData) {
    ports->count_data(p, k.raw, L().now, ser, opt.util_window.ps, cap[p]);
    L().last_tx = L().now;
    if (k.in_port >= 0 && ecn && I.from_mmu) ports->mark_ecn(p, k);  // on the queue left behind (HPCC: at dequeue)
    if (int_telemetry && I.from_mmu)  // INT: the port's bytes sent before it and the queue it leaves behind
      nic->stamp(k, p, L().now, static_cast<int64_t>(st.wire_bytes) - bytes, s.q[0].bytes + s.q[1].bytes + s.q[2].bytes,
                 I.bps);
    if (k.in_port >= 0 && ports->hot[k.in_port].to_mmu) {
      release(I.from, k.in_port, k);
      if (credits && k.cls == kLossless && ports->state[k.in_port].credit_limited)
        L().push(Time(L().now + ports->info[k.in_port].latency), kCredit, static_cast<uint64_t>(k.in_port), k.wire);
    }
    if (s.credit_limited && k.cls == kLossless) s.credits -= k.wire;
  }
  k.in_port = p;  // the link it crosses
  L().push(Time(L().now + ser + I.arrive_extra + (has_faults ? fault_latency(p) : 0)), enc_kind(k), enc_a(k), enc_b(k),
           enc_tag(k));
  if (has_work(p)) ensure_kick(p, s.busy_until);
}

// Control packets the NIC made (ACK, NACK, CNP), in order: onto their ports.
void PacketSim::Impl::send_outbox() {
  auto& box = L().outbox;
  for (size_t i = 0; i < box.size(); ++i) {
    const auto [p, k] = box[i];
    if (links_failed && dead[p]) {
      lose(p, k);
      continue;
    }
    ports->enqueue(p, k, L().now);
    try_send(p);
  }
  box.clear();
}

// ---------------------------------------------------------------- switches

void PacketSim::Impl::on_arrive(Packet k, bool replayed) {
  const DirLink p = k.in_port;
  if (links_failed && L().now <= drop_until[p]) {  // it was on the wire when the link died
    if (k.type == kData && k.cls == kLossless && ports->state[p].credit_limited) credit_back(p, k);
    return lose_arrived(p, k);
  }
  if (!replay_until.empty() && !replayed && L().now < replay_until[p]) {  // sent after a packet being resent: so is it
    L().push(Time(L().now + replay_shift[p]), enc_kind(k) | kReplayed, enc_a(k), enc_b(k), enc_tag(k));
    return;
  }
  if (const Loss loss = has_faults ? silently_lost(p, k) : Loss::None; loss != Loss::None) {
    if (!replay_until.empty() && loss == Loss::Link) {
      // The link resends it: the receiver's MAC finds it bad and tells the sender across the cable, which
      // sends it again, a link round trip and a packet later (shift). Every packet already on its way
      // behind it (arriving within a full packet's time and the link's delay) is discarded and resent in
      // order after it, as late; the sender's port sends nothing new for as long.
      const PortHot& I = ports->hot[p];
      const int64_t shift =
          2 * ports->info[p].latency + ser_ps(I.net ? k.wire : (k.type == kData ? k.raw : ctrl_raw), I.bps);
      replay_until[p] = L().now + ser_ps(I.net ? mtu + header : mtu, I.bps) + I.arrive_extra;
      replay_shift[p] = shift;
      PortState& s = ports->state[p];
      s.busy_until = std::max(s.busy_until, L().now) + shift;
      ++L().stats.link_retries;
      L().push(Time(L().now + shift), enc_kind(k) | kReplayed, enc_a(k), enc_b(k), enc_tag(k));
      return;
    }
    ++ports->stats_of[p].silent;
    ++L().stats.silent;
    gone(k);
    if (k.type == kData && k.cls == kLossless && ports->state[p].credit_limited) credit_back(p, k);
    return;
  }
  {
    const PortHot& I = ports->hot[p];
    PortStats& st = ports->stats_of[p];
    ++st.rx_packets;
    st.rx_bytes += static_cast<double>(I.net ? k.wire : (k.type == kData ? k.raw : ctrl_raw));
  }
  if (k.type >= kProbe) return on_probe(p, k);
  const NodeId n = ports->hot[p].to;
  const uint32_t qi = k.qp;
  const Qp& q = nic->qps[qi];
  uint32_t off = q.path_off, len = q.path_len;  // the path the packet follows
  DirLink out = -1;
  if (on_data_path(k.type)) {
    if (n == q.dst_node && k.type == kTrim) {
      const bool done = nic->receive_trim(qi, k, L().now);
      send_outbox();
      if (done) nic->complete(qi, L().now);
      return;
    }
    if (n == q.dst_node) {
      const bool done = nic->receive_data(qi, k, L().now);
      send_outbox();
      if (done) nic->complete(qi, L().now);
      return;
    }
    if (!q.rerouted || (q.target != topology::kNone && next_hops->is_net(n)) || which_path(q, k, p, off, len))
      out = q.target == topology::kNone ? nic->routes[off + k.hop + 1]
                                        : next_data_port(q, k, n, off);  // per QP: its path
  } else {
    if (n == q.src_node) {
      kick(nic->receive_ctrl(qi, k, L().now));
      return;
    }
    if (!plane_down.empty() && topo.nodes[n].plane >= 0) out = ctrl_port(q, k, n);  // its plane's way back (§7)
    else if (!q.rerouted || which_path(q, k, p, off, len)) out = nic->rev_port(off, len, k.hop + 1u);
  }
  if (out < 0 || (links_failed && dead[out])) {  // stale, cut off, or toward a dead link: lost here
    if (k.type == kData && ports->hot[p].to_mmu) return_credit(p, k);
    return out < 0 ? lose_arrived(p, k) : lose(out, k);
  }
  ++k.hop;
  k.in_port = p;
  if (k.type == kData && ports->hot[p].to_mmu) {
    const SwitchBuffer::Admit a = buffer->admit(n, p, ports->state[out].q[kLossy].bytes, k);
    if (a == SwitchBuffer::Admit::Drop && trim) {  // cut to its header, which goes on at control priority
      ++ports->stats_of[out].trims;
      ++L().stats.trims;
      k.type = kTrim;
      k.cls = kCtrl;
      k.wire = static_cast<uint16_t>(ctrl_wire);
      k.raw = static_cast<uint16_t>(ctrl_raw);
      k.ecn = ports->hot[out].to_mmu ? 0 : kTrimmedLastHop;  // (read under receiver credits)
      ports->enqueue(out, k, L().now);
      try_send(out);
      return;
    }
    if (a == SwitchBuffer::Admit::Drop) {
      ++ports->stats_of[out].drops;
      ++L().stats.drops;
      return gone(k);
    }
    if (a == SwitchBuffer::Admit::OkPause) send_pause(p, true);
    if (pfc && k.cls == kLossless) {  // the ingress's shared watermark (§12)
      const int64_t sh = buffer->ingress(p).bytes - buffer->reserve();
      if (sh > ports->stats_of[p].pg_shared_max) ports->stats_of[p].pg_shared_max = sh;
    }
  }
  ports->enqueue(out, k, L().now);
  try_send(out);
}

// A packet of a re-routed QP follows the path it was sent on: the current or
// the previous one, whichever has the link it arrived on at its position
// (hop); (off, len) is set to it. False if neither (sent before an earlier
// re-route) or if that path ends here (its old end): the packet is lost.
bool PacketSim::Impl::which_path(const Qp& q, const Packet& k, DirLink p, uint32_t& off, uint32_t& len) const {
  auto on = [&](uint32_t o, uint32_t l) {
    if (k.hop + 1u >= l) return false;
    return on_data_path(k.type) ? nic->routes[o + k.hop] == p : nic->rev_port(o, l, k.hop) == p;
  };
  if (on(q.path_off, q.path_len)) return true;
  if (q.prev_len == 0 || !on(q.prev_off, q.prev_len)) return false;
  off = q.prev_off;
  len = q.prev_len;
  return true;
}

DirLink PacketSim::Impl::ctrl_port(const Qp& q, const Packet& k, NodeId n) {
  const DirLink down = down_into(q.src_node, n);
  const NodeId target = ports->hot[down].from;
  if (n == target) return down;
  next_hops->gather(n, target, L().cand);
  if (L().cand.empty()) next_hops->gather(n, target, L().cand, true);
  if (L().cand.empty()) return -1;
  return L().cand[mix64((static_cast<uint64_t>(k.qp) << 32) ^ k.psn ^ static_cast<uint64_t>(n)) % L().cand.size()];
}

DirLink PacketSim::Impl::next_data_port(const Qp& q, const Packet& k, NodeId n, uint32_t off) {
  const auto& routes = nic->routes;
  if (q.target == topology::kNone) return routes[off + k.hop + 1];
  NodeId target = q.target;
  DirLink last = routes[q.path_off + q.path_len - 1];
  if (!plane_down.empty() && topo.nodes[n].plane >= 0) {  // a multi-plane NIC's packet: the plane it is in
    last = down_into(q.dst_node, n);
    target = ports->hot[last].from;
  }
  if (n == target) return last;
  if (!next_hops->is_net(n)) return routes[off + k.hop + 1];
  next_hops->gather(n, target, L().cand);
  // cut off from the target by links routing has forgotten: the packet was
  // already on its way (over a drained link, which still forwards it)
  if (L().cand.empty()) next_hops->gather(n, target, L().cand, true);
  if (L().cand.empty()) return -1;
  if (L().cand.size() == 1) return L().cand[0];
  if (per_packet ==
      static_cast<int>(routing::PerPacket::Entropy))  // the packet's entropy, hashed with this switch's seed
    return L().cand[mix64(ev_seed ^ (static_cast<uint64_t>(static_cast<uint32_t>(n)) << 16) ^ k.ev) % L().cand.size()];
  // round-robin counter of (this switch, this destination): every destination's packets split evenly
  // (Partitioned: each unit its own slots, so that no two threads share one and the collisions are the
  // same on every thread count.)
  const uint64_t h = mix64((static_cast<uint64_t>(static_cast<uint32_t>(n)) << 32) | static_cast<uint32_t>(target));
  uint64_t slot = h & (kRrSlots - 1);
  if (part) {
    const auto u = static_cast<size_t>(part->unit_of_node[static_cast<size_t>(n)]);
    slot = rr_base[u] + (h & rr_mask[u]);
  }
  const uint32_t turn = rr_node[slot]++;
  if (per_packet == 2) return L().cand[turn % L().cand.size()];
  // adaptive: the fewest data bytes waiting, counting the rest of the frame being sent
  int64_t best = std::numeric_limits<int64_t>::max();
  L().ties.clear();
  for (DirLink d : L().cand) {
    const PortState& ps = ports->state[d];
    int64_t load = ps.qbytes;
    if (ps.busy_until > L().now) load += (ps.busy_until - L().now) * ports->hot[d].bps / (8 * kPsPerS);
    if (load < best) {
      best = load;
      L().ties.clear();
    }
    if (load == best) L().ties.push_back(d);
  }
  return L().ties.size() == 1 ? L().ties[0] : L().ties[turn % L().ties.size()];
}

void PacketSim::Impl::send_pause(DirLink in, bool on) {
  SwitchBuffer::Ingress& g = buffer->ingress(in);
  const PortInfo& I = ports->info[in];
  const DirLink rev = in ^ 1;
  const int64_t wait = std::max<int64_t>(0, ports->state[rev].busy_until - L().now);
  const int64_t at = L().now + wait + ser_ps(84, ports->hot[rev].bps) + I.latency;
  L().push(Time(at), kPause, static_cast<uint64_t>(in), on ? 1 : 0);
  g.pause_sent = on;
  ++g.stamp;
  if (on) {
    ++ports->stats_of[in].pause_tx;
    ++L().stats.pause_frames;
    L().push(Time(L().now + I.quanta_ps / 2), kPauseRefresh, static_cast<uint64_t>(in), 0, g.stamp);
  }
}

// A frame of a PFC storm: sent by the receiving end of d (a NIC, which sends
// nothing else), it reaches d's egress as a switch's PAUSE does (send_pause).
void PacketSim::Impl::storm_frame(DirLink d, bool on) {
  if (links_failed && dead[d]) return;
  const DirLink rev = d ^ 1;
  const int64_t wait = std::max<int64_t>(0, ports->state[rev].busy_until - L().now);
  L().push(Time(L().now + wait + ser_ps(84, ports->hot[rev].bps) + ports->info[d].latency), kPause,
           static_cast<uint64_t>(d), on ? 1 : 0);
  if (on) {
    ++ports->stats_of[d].pause_tx;
    ++L().stats.pause_frames;
  }
}

// ---------------------------------------------------------------- silent faults and probes (§11)

namespace {
// Whether fault f is active at `L().now`, and whether it loses everything then (a flap while down).
bool fault_on(const SilentFault& f, int64_t now, bool& all_lost) {
  all_lost = false;
  if (now < f.start.ps) return false;
  if (f.period.ps > 0) {
    all_lost = (now - f.start.ps) % f.period.ps < f.down.ps;
    return all_lost;
  }
  return true;
}
}  // namespace

PacketSim::Impl::Loss PacketSim::Impl::silently_lost(DirLink p, const Packet& k) {
  // Loss::Link for a loss drawn with a fault's probability, Loss::Other for a flap while down.
  const auto hit = [&](const std::vector<int32_t>& list) {
    for (const int32_t i : list) {
      const SilentFault& f = faults[i];
      bool all = false;
      if (!fault_on(f, L().now, all)) continue;
      if (all) return Loss::Other;
      if (f.probability > 0 &&
          (fault_port_rng.empty() ? fault_rng : fault_port_rng[static_cast<size_t>(p)]).uniform() < f.probability)
        return Loss::Link;
    }
    return Loss::None;
  };
  (void)k;
  if (const Loss l = hit(dir_faults[p]); l != Loss::None) return l;
  const NodeId n = ports->hot[p].to;
  if (topo.nodes[n].kind == NodeKind::Switch && hit(node_faults[n]) != Loss::None) return Loss::Other;
  return Loss::None;
}

int64_t PacketSim::Impl::fault_latency(DirLink p) const {
  int64_t add = 0;
  const auto sum = [&](const std::vector<int32_t>& list) {
    for (const int32_t i : list) {
      bool all = false;
      if (faults[i].latency.ps > 0 && fault_on(faults[i], L().now, all)) add += faults[i].latency.ps;
    }
  };
  sum(dir_faults[p]);
  const NodeId n = ports->hot[p].to;
  if (topo.nodes[n].kind == NodeKind::Switch) sum(node_faults[n]);
  return add;
}

// A probe or reply made here or forwarded: onto the control class of port p.
void PacketSim::Impl::probe_out(DirLink p, const Packet& k) {
  if (links_failed && dead[p]) return lose(p, k);
  ports->enqueue(p, k, L().now);
  try_send(p);
}

void PacketSim::Impl::on_probe(DirLink p, Packet k) {
  const ProbePath& pp = probe_paths[k.qp];
  const bool request = k.type == kProbe;
  const DirLink* path = probe_links.data() + pp.off + (request ? 0 : pp.fwd);
  const uint32_t len = request ? pp.fwd : pp.back;
  if (k.hop + 1u < len) {  // forward it
    ++k.hop;
    k.in_port = p;
    return probe_out(path[k.hop], k);
  }
  if (!request) {  // the reply is back at the prober
    ++L().stats.probe_replies;
    ProbeRecord& r = probe_log[k.psn];
    r.rtt = Time(L().now - r.sent.ps);
    return;
  }
  Packet rep = k;  // the far NIC answers at once
  rep.type = kProbeReply;
  rep.hop = 0;
  rep.in_port = -1;
  probe_out(probe_links[pp.off + pp.fwd], rep);
}

// ---------------------------------------------------------------- failures

void PacketSim::Impl::set_link_rate(topology::LinkId l, double bps) {
  for (const DirLink d : {2 * l, 2 * l + 1}) {
    ports->info[d].bps = ports->hot[d].bps = std::max<int64_t>(1, std::llround(bps * compiler->class_efficiency(l)));
    cap[d] = bps * compiler->payload_factor(l);
  }
}

void PacketSim::Impl::set_link_dead(topology::LinkId l, bool is_dead) {
  for (const DirLink d : {2 * l, 2 * l + 1}) {
    if ((dead[d] != 0) == is_dead) continue;
    dead[d] = is_dead ? 1 : 0;
    PortState& s = ports->state[d];
    if (!is_dead) {
      if (has_work(d)) try_send(d);
      continue;
    }
    links_failed = true;
    // The frame being sent and those on the wire arrive by then: all lost.
    drop_until[d] = std::max(L().now, s.busy_until) + ports->info[d].arrive_extra;
    for (uint8_t c = kCtrl; c <= kLossy; ++c)
      while (!s.q[c].empty()) {
        const Packet k = ports->dequeue(d, c, L().now);
        if (k.type == kData && k.in_port >= 0 && ports->hot[k.in_port].to_mmu) {  // its buffer (and credits) come back
          release(ports->hot[d].from, k.in_port, k);
          return_credit(k.in_port, k);
        }
        lose(d, k);
      }
    if (s.paused) ports->unpause(d, std::min(L().now, s.pause_until));  // the link's PFC state goes with it
  }
}

int64_t PacketSim::Impl::reroute(const std::vector<DirLink>& dirs) {
  // A QP uses a direction if its data path crosses it (per-flow policies, as
  // the flow engine); with per-packet policies the data follows the next-hop
  // tables and the QP's path carries its control packets back, so either
  // direction of a link counts.
  int64_t moved = 0;
  std::vector<PathPart> route;
  auto& qps = nic->qps;
  for (uint32_t qi = 0; qi < qps.size(); ++qi) {
    if (qps[qi].tx_done && qps[qi].rx_done) continue;
    bool hit = false;
    for (uint32_t j = 0; j < qps[qi].route_len && !hit; ++j) {
      const DirLink d = nic->routes[qps[qi].route_off + j];
      for (const DirLink x : dirs) hit = hit || x == d || (per_packet && (x ^ 1) == d);
    }
    if (!hit) continue;
    if (tracks_load) {
      L().scratch.clear();
      for (uint32_t i = 0; i < qps[qi].route_len; ++i) L().scratch.push_back({nic->routes[qps[qi].route_off + i], 1.0});
      router->release(L().scratch, 1.0);
    }
    route.clear();
    router->route(nic->records[qi].src, nic->records[qi].dst, qps[qi].entropy, 1.0,
                  route);  // throws when no path is left
    Qp& q = qps[qi];
    if (!q.rerouted || q.routed_at != L().now) {  // packets sent so far follow the path they left on
      q.prev_off = q.path_off;
      q.prev_len = q.path_len;
    }
    q.rerouted = true;
    q.routed_at = L().now;
    const DirLink old_inj = q.inj_port;
    int64_t phys = 0, prefix = 0;
    nic->install_route(qi, route, phys, prefix);
    ++moved;
    ++L().stats.rerouted;
    if (q.inj_port == old_inj || q.route_len == 0) continue;
    // A new first network link: the QP leaves the old port's schedule for the new one.
    nic->unschedule(qi, old_inj);
    q.cc.line = static_cast<double>(nic->line_bps(q.inj_port));
    q.cc.rate = std::min(q.cc.rate, q.cc.line);
    q.cc.target = std::min(q.cc.target, q.cc.line);
    kick(nic->maybe_activate(qi, L().now));
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
void PacketSim::peek_route(int32_t src, int32_t dst, uint64_t entropy, std::vector<PathPart>& out) {
  m_->router->route(src, dst, entropy, 0.0, out);  // weight 0: a load-tracking router (UGAL) books nothing
}
Time PacketSim::hop_latency(const std::vector<PathPart>& r) const { return m_->compiler->hop_latency(r); }
Time PacketSim::physical_latency(const std::vector<PathPart>& r) const {
  int64_t ps = 0;
  for (const auto& p : r) ps += m_->ports->info[static_cast<size_t>(p.link)].arrive_extra;
  return Time(ps);
}
int64_t PacketSim::link_bps(DirLink link) const { return m_->ports->info[static_cast<size_t>(link)].bps; }
Time PacketSim::prefix_latency(const std::vector<PathPart>& r) const {
  int64_t ps = 0;
  for (const auto& p : r) {
    const PortInfo& i = m_->ports->info[static_cast<size_t>(p.link)];
    if (i.net) return Time(ps);
    ps += i.latency;
  }
  return Time();  // no network link: the whole route is simulated
}
int32_t PacketSim::add_stream(const StreamSpec& s, const std::vector<PathPart>& r) {
  Impl& m = *m_;
  LaneScope scope(m.lane0);
  const int32_t qi = m.nic->add_stream(s, r);
  if (m.part) {  // a receiver-credit pacer's unit: its NIC's
    const Qp& q = m.nic->qps[static_cast<size_t>(qi)];
    if (m.next_hops && q.target != topology::kNone) m.next_hops->prepare(q.target);  // per-packet routing
    if (m.next_hops && q.target != topology::kNone && !m.plane_down.empty())         // every plane's, both ways (§7)
      for (int32_t p = 0; p < m.topo.nic_planes; ++p)
        for (const topology::NodeId end : {q.dst_node, q.src_node})
          m.next_hops->prepare(m.ports->hot[m.plane_down[static_cast<size_t>(end) * m.topo.nic_planes + p]].from);
    if (q.pacer >= 0) {
      auto& up = m.part->unit_pacer;
      if (up.size() <= static_cast<size_t>(q.pacer)) up.resize(static_cast<size_t>(q.pacer) + 1, 0);
      up[static_cast<size_t>(q.pacer)] = m.part->unit_of_node[static_cast<size_t>(q.dst_node)];
    }
    // Ranks: a pipelined stream's receiver progress, read by the coordinator on every rank, is sent from its own.
    if (m.part->ranks > 1 && q.slices > 0 && !q.rx_done &&
        m.part->unit_mine[static_cast<size_t>(m.part->unit_of_node[static_cast<size_t>(q.dst_node)])])
      m.rx_shared.emplace_back(static_cast<uint32_t>(qi), 0);
  }
  return qi;
}
void PacketSim::add_timer(Time at, uint64_t tag) {
  LaneScope scope(m_->lane0);
  m_->lane0.push(at, kTimer, tag);
}
void PacketSim::release_slices(int32_t s, int64_t slices) {
  LaneScope scope(m_->lane0);
  const DirLink p = m_->nic->release_slices(static_cast<uint32_t>(s), slices, m_->lane0.now);
  if (p >= 0 && m_->part)  // the port's lane runs it (at the window's end if the lanes have passed now)
    m_->lane0.push(Time(m_->lane0.now), kKick, static_cast<uint64_t>(p));
  else m_->kick(p);
}
int64_t PacketSim::delivered_slices(int32_t s) const { return m_->nic->delivered_slices(static_cast<uint32_t>(s)); }
void PacketSim::watch_slices(int32_t s, int64_t slices) { m_->nic->watch_slices(static_cast<uint32_t>(s), slices); }
int32_t PacketSim::add_probe_path(const std::vector<DirLink>& fwd, const std::vector<DirLink>& back,
                                  int32_t wire_bytes) {
  Impl& m = *m_;
  if (m.part)
    throw InputError("packet engine: network.partitioned does not send probes yet; set network.partitioned=false "
                     "(the sequential engine sends them)");
  const auto D = static_cast<DirLink>(m.ports->info.size());
  if (fwd.empty() || back.empty() || fwd.size() > 255 || back.size() > 255)
    throw InputError("packet engine: a probe path needs 1 to 255 links each way");
  if (wire_bytes < 64 || wire_bytes > 65535)
    throw InputError(fmt::format("packet engine: probe of {} bytes: expected 64 to 65535", wire_bytes));
  for (const auto* v : {&fwd, &back})
    for (size_t i = 0; i < v->size(); ++i) {
      if ((*v)[i] < 0 || (*v)[i] >= D) throw InputError("packet engine: probe path link out of range");
      if (i > 0 && routing::dir_from((*v)[i], m.topo) != routing::dir_to((*v)[i - 1], m.topo))
        throw InputError("packet engine: a probe path's links must join end to end");
    }
  if (routing::dir_to(fwd.back(), m.topo) != routing::dir_from(back.front(), m.topo) ||
      routing::dir_to(back.back(), m.topo) != routing::dir_from(fwd.front(), m.topo))
    throw InputError("packet engine: a probe's return path must run from its target back to its source");
  Impl::ProbePath pp;
  pp.off = static_cast<uint32_t>(m.probe_links.size());
  pp.fwd = static_cast<uint16_t>(fwd.size());
  pp.back = static_cast<uint16_t>(back.size());
  pp.wire = static_cast<uint16_t>(wire_bytes);
  m.probe_links.insert(m.probe_links.end(), fwd.begin(), fwd.end());
  m.probe_links.insert(m.probe_links.end(), back.begin(), back.end());
  m.probe_paths.push_back(pp);
  return static_cast<int32_t>(m.probe_paths.size() - 1);
}

uint32_t PacketSim::send_probe(int32_t path) {
  Impl& m = *m_;
  const Impl::ProbePath& pp = m.probe_paths.at(static_cast<size_t>(path));
  if (m.probe_log.size() >= kNil) throw Error("packet engine: more than 2^32 - 1 probes");
  const auto id = static_cast<uint32_t>(m.probe_log.size());
  LaneScope scope(m.lane0);
  m.probe_log.push_back({path, Time(m.lane0.now), Time(-1)});
  ++m.lane0.stats.probes_sent;
  Packet k;
  k.qp = static_cast<uint32_t>(path);
  k.psn = id;
  k.wire = pp.wire;
  k.raw = pp.wire;
  k.type = kProbe;
  k.cls = kCtrl;
  m.probe_out(m.probe_links[pp.off], k);
  return id;
}

const std::vector<ProbeRecord>& PacketSim::probes() const { return m_->probe_log; }

void PacketSim::run(const std::function<void(const SimEvent&)>& on_event) {
  LaneScope scope(m_->lane0);
  m_->run(on_event, std::numeric_limits<int64_t>::max());
  m_->finish_run();
}
void PacketSim::run_until(Time limit, const std::function<void(const SimEvent&)>& on_event) {
  LaneScope scope(m_->lane0);
  m_->run(on_event, limit.ps);
}
void PacketSim::stop() { m_->stopped = true; }
void PacketSim::set_link_rate(topology::LinkId l, Bandwidth rate) {
  LaneScope scope(m_->lane0);
  m_->set_link_rate(l, rate.bps);
}
void PacketSim::set_link_dead(topology::LinkId l, bool dead) {
  LaneScope scope(m_->lane0);
  m_->set_link_dead(l, dead);
}
void PacketSim::set_route_dir_up(routing::DirLink d, bool up) {
  m_->router->set_dir_up(d, up);  // the per-packet next hops share the Router's graph
  // A multi-plane NIC's link: its NIC and every sender toward it leave that plane alone (§7).
  if (!m_->plane_down.empty()) {
    const topology::Link& l = m_->topo.links[routing::link_of(d)];
    const auto planed = [&](NodeId n) { return m_->topo.nodes[n].kind == NodeKind::Nic; };
    if (planed(l.a) || planed(l.b)) m_->nic->set_port_off(d, !up);
  }
}
int64_t PacketSim::reroute(const std::vector<DirLink>& dirs) {
  LaneScope scope(m_->lane0);
  return m_->reroute(dirs);
}
bool PacketSim::stream_open(int32_t s) const { return !m_->nic->qps[s].rx_done; }
void PacketSim::stream_route(int32_t s, std::vector<DirLink>& out) const {
  const Qp& q = m_->nic->qps[s];
  out.assign(m_->nic->routes.begin() + q.route_off, m_->nic->routes.begin() + q.route_off + q.route_len);
}
Time PacketSim::now() const { return Time(m_->lane0.now); }
const SimStats& PacketSim::stats() const { return m_->part ? m_->totals : m_->lane0.stats; }
const std::vector<PortStats>& PacketSim::port_stats() const { return m_->ports->stats_of; }
const std::vector<StreamRecord>& PacketSim::streams() const { return m_->nic->records; }
const std::vector<QueueSample>& PacketSim::samples() const { return m_->samples; }
const std::vector<StreamSample>& PacketSim::stream_samples() const { return m_->stream_samples; }
std::vector<double> PacketSim::link_payload_bytes() const {
  const auto& ps = m_->ports->stats_of;
  std::vector<double> b(ps.size());
  for (size_t d = 0; d < b.size(); ++d) b[d] = ps[d].payload_bytes + m_->nic->extra_bytes[d];
  return b;
}
double PacketSim::payload_capacity_bps(DirLink d) const { return m_->cap[d]; }
Time PacketSim::rto() const { return Time(m_->rto); }
EcnBand PacketSim::configured_ecn(DirLink d) const { return m_->ecn_cfg[d]; }
Bytes PacketSim::configured_xoff_limit(NodeId n) const { return m_->buffer->xoff_limit(n); }
int32_t PacketSim::data_wire_bytes() const { return m_->mtu + m_->header; }
int64_t PacketSim::port_bps(DirLink d) const { return m_->ports->info[d].bps; }
Bytes PacketSim::buffer_of(NodeId n) const { return m_->buffer->buffer_of(n); }
Bytes PacketSim::headroom_of(DirLink in) const { return m_->buffer->headroom_of(in); }
const cc::CongestionControl& PacketSim::congestion_control() const { return *m_->cc; }
bool PacketSim::marks_ecn() const { return m_->cc->traits().ecn; }
int64_t PacketSim::open_streams() const { return m_->nic->open_streams; }
const Partition* PacketSim::partition() const { return m_->part ? &*m_->part : nullptr; }

}  // namespace podnet::engine::packet
