#include "engine/packet/nic.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "engine/packet/partition.hpp"
#include "routing/router.hpp"

namespace podnet::engine::packet {

using routing::DirLink;
using routing::PathPart;

Nic::Nic(const PacketOptions& opt, const Config& c, const cc::CongestionControl& cc, Ports& ports,
         const NextHops* next_hops)
    : opt_(opt),
      c_(c),
      cc_(cc),
      traits_(cc.traits()),
      ports_(ports),
      next_hops_(next_hops),
      window_(opt.window_packets) {
  const Delivery d = opt.delivery != Delivery::Auto ? opt.delivery
                                                    : (traits_.trim ? Delivery::Unordered : Delivery::Ordered);
  selective_ = d == Delivery::Unordered;
  ordered_ = opt.delivery == Delivery::Ordered;  // auto keeps a reorder buffer under per-packet routing
  unreliable_ = d == Delivery::Unreliable;
  sched_.resize(ports.info.size());
  extra_bytes.assign(ports.info.size(), 0.0);
}

// ---------------------------------------------------------------- streams

int32_t Nic::add_stream(const StreamSpec& s, const std::vector<PathPart>& route) {
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
    q.max_rate = s.max_rate_bps;
    q.npkts = static_cast<uint32_t>((s.bytes + c_.mtu - 1) / c_.mtu);
    q.last_payload = static_cast<uint16_t>(s.bytes - static_cast<Bytes>(q.npkts > 0 ? q.npkts - 1 : 0) * c_.mtu);
    if (s.slices > 0 && s.bytes > 0) {  // every slice is its own message: packets never span two
      const int64_t u = std::min<int64_t>(s.slices, s.bytes);
      if (u > kNil - 1) throw Error("packet engine: internal: too many slices on one QP");
      q.slices = static_cast<uint32_t>(u);
      q.slice_bytes = s.bytes / u;
      q.slice_extra = static_cast<uint32_t>(s.bytes % u);
      q.pkts0 = static_cast<uint32_t>((q.slice_bytes + c_.mtu - 1) / c_.mtu);
      q.pkts1 = static_cast<uint32_t>((q.slice_bytes + 1 + c_.mtu - 1) / c_.mtu);
      const int64_t n = static_cast<int64_t>(q.slice_extra) * q.pkts1 + (u - q.slice_extra) * q.pkts0;
      if (n >= kNil) throw Error("packet engine: a stream of more than 4 billion packets");
      q.npkts = static_cast<uint32_t>(n);
      q.last_payload = payload_of(q, q.npkts - 1);
      q.send_limit = packets_before(q, s.send_slices < 0 ? u : s.send_slices);
    }
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
    lane().push(rec.finish, kDone, qi);
    return static_cast<int32_t>(qi);
  }
  // The algorithm's init sees the QP's path figures; the QP keeps them whatever init makes of them.
  const int64_t base_rtt = q.cc.base_rtt;
  const int32_t hops = q.cc.hops;
  const double line = static_cast<double>(line_bps(q.inj_port));
  if (q.local) q.cc.line = q.cc.rate = q.cc.target = line;  // no algorithm: the line's rate, no window
  else cc_.init(q.cc, line);
  q.cc.base_rtt = base_rtt;
  q.cc.hops = hops;
  if (traits_.rtt && !q.local) {
    q.st_off = static_cast<uint32_t>(times_.size());
    times_.resize(times_.size() + cc::kMaxTimed, 0);
  }
  if (c_.mrc && !ordered_) {  // MRC's path set, and the value each PSN in flight left on
    q.mrc = static_cast<uint32_t>(paths_.size());
    paths_.emplace_back().init(q.key, c_.planes);
    evs_.resize(evs_.size() + cc::kMaxTimed, 0);
    q.track = cc::kMaxTimed;
  }
  if (q.st_off != kNil) q.track = cc::kMaxTimed;
  // The QP's BDP (bytes) at the fabric's largest round trip, which sizes its INT slots and its credit.
  const double bdp_bytes = static_cast<double>(line_bps(q.inj_port)) / 8.0 *
                           static_cast<double>(std::max(q.cc.base_rtt, c_.network_rtt)) / 1e12;
  if (traits_.int_telemetry && !q.local) {  // an INT slot per packet the window can have out, twice over
    const double bdp = bdp_bytes / c_.mtu;
    uint32_t slots = 16;
    while (slots < 2 * (bdp + 1) && slots < cc::kMaxTimed) slots *= 2;
    q.int_off = static_cast<uint32_t>(int_count_.size());
    q.int_mask = slots - 1;
    q.track = std::min(q.track, slots);
    int_count_.resize(int_count_.size() + slots, 0);
    int_hops_.resize(int_count_.size() * cc::kMaxIntHops);
  }
  if (traits_.receiver_credits && !q.local) {  // cc/rccc.hpp: 1.5 BDP of speculative credit, at the fabric's round trip
    q.pt_off = static_cast<uint32_t>(pull_targets_.size());
    pull_targets_.resize(pull_targets_.size() + cc::kMaxTimed, 0);
    q.track = std::min(q.track, cc::kMaxTimed);
    q.max_credit = std::max<int64_t>(c_.mtu + c_.header, std::llround(traits_.credit_bdp * bdp_bytes));
    q.credit = q.max_credit;
    q.speculating = true;
    q.unsent_wire = s.bytes + static_cast<int64_t>(q.npkts) * c_.header;
    pacer_for(qi);
  }
  const int64_t inject = start + std::max<int64_t>(0, s.latency.ps - phys) + prefix;
  rec.first_send = Time(inject);
  records.push_back(rec);
  stream_tags.push_back(s.tag);
  lane().push(Time(inject), kQpStart, qi);
  return static_cast<int32_t>(qi);
}

void Nic::install_route(uint32_t qi, const std::vector<PathPart>& route, int64_t& phys, int64_t& prefix) {
  Qp& q = qps[qi];
  const auto& info = ports_.info;
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
  q.local = first < 0;
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
    q.suffix_delay += p.arrive_extra + ser_ps(p.net ? q.last_payload + c_.header : q.last_payload, p.bps);
  }
  {  // the unloaded round trip of the network part: each link's latency both ways, a data packet out, an ACK back
    const int64_t data_wire = (q.npkts > 1 ? c_.mtu : q.last_payload) + c_.header;
    int64_t rtt = 0;
    for (uint32_t i = 0; i < q.path_len; ++i) {
      const DirLink d = routes[q.path_off + i];
      rtt += info[d].arrive_extra + info[d ^ 1].arrive_extra + ser_ps(data_wire, info[d].bps) +
             ser_ps(c_.ctrl_wire, info[d ^ 1].bps);
    }
    q.cc.base_rtt = rtt;
    q.cc.hops = q.path_len;
  }
  q.inj_port = sched_port(routes[q.path_off]);
  q.src_node = ports_.hot[q.inj_port].from;
  q.dst_node = info[routes[q.path_off + q.path_len - 1]].to;
  q.key = routing::Router::flow_key(q.src_node, q.dst_node, q.entropy);
  if (next_hops_) {
    const DirLink lastl = routes[q.path_off + q.path_len - 1];
    q.target = topology::kNone;
    if (next_hops_->is_net(q.dst_node)) q.target = q.dst_node;
    else if (next_hops_->is_net(ports_.hot[lastl].from)) q.target = ports_.hot[lastl].from;
  }
  if ((q.target != topology::kNone || selective_) && !ordered_ && !unreliable_ &&
      q.bm_off == kNil) {  // a reorder buffer
    q.bm_off = static_cast<uint32_t>(bitmap_.size());
    bitmap_.resize(bitmap_.size() + (q.npkts + 63) / 64, 0);
  }
}

// ---------------------------------------------------------------- sender

DirLink Nic::start(uint32_t qi, int64_t now) {
  Qp& q = qps[qi];
  q.started = true;
  q.last_progress = now;
  if (!q.local) cc_.start(q.cc, now);
  return maybe_activate(qi, now);
}

DirLink Nic::activate(uint32_t qi, int64_t now) {
  Qp& q = qps[qi];
  q.in_sched = true;
  const DirLink p = q.inj_port;
  if (q.next_send <= now) ready_push(p, qi);
  else wait_push(p, q.next_send, qi);
  return p;
}

bool Nic::plane_ok(const Qp& q, const std::vector<DirLink>& ports, size_t p) const {
  if (port_off(ports[p])) return false;
  if (!plane_down_ || p >= static_cast<size_t>(planes_)) return true;
  const DirLink down = (*plane_down_)[static_cast<size_t>(q.dst_node) * static_cast<size_t>(planes_) + p];
  return down < 0 || !port_off(down);
}

DirLink Nic::plane_in_service(const Qp& q, const std::vector<DirLink>& ports, DirLink tx) const {
  const auto P = ports.size();
  size_t at = 0;
  while (at < P && ports[at] != tx) ++at;
  if (at == P) return tx;
  if (plane_ok(q, ports, at)) return tx;
  // The plane in service whose port has the least queued (a port that is free takes the next packet).
  DirLink best = tx;
  int64_t least = INT64_MAX;
  for (size_t i = 1; i < P; ++i) {
    const size_t p = (at + i) % P;
    if (!plane_ok(q, ports, p)) continue;
    const PortState& s = ports_.state[static_cast<size_t>(ports[p])];  // its queued data, and the packet on it
    const int64_t queued = s.q[kLossless].bytes + s.q[kLossy].bytes + (s.busy_until > lane().now ? 1 : 0);
    if (queued < least) {
      least = queued;
      best = ports[p];
    }
  }
  return best;
}

void Nic::unschedule(uint32_t qi, DirLink old) {
  Qp& q = qps[qi];
  if (!q.in_sched) return;
  Sched& s = sched_[old];
  for (uint32_t i = s.head, before = kNil; i != kNil; before = i, i = qps[i].next_ready) {
    if (i != qi) continue;
    (before == kNil ? s.head : qps[before].next_ready) = q.next_ready;
    if (s.tail == qi) s.tail = before;
    break;
  }
  q.in_heap = false;  // its wait-heap entry there goes stale
  q.in_sched = false;
}

bool Nic::next_packet(DirLink p, DirLink tx, int64_t now, Packet& out) {
  auto& h = sched_[p].heap;
  while (!h.empty() && h.front().time <= now) {
    std::pop_heap(h.begin(), h.end(), std::greater<>());
    const WaitEntry w = h.back();
    h.pop_back();
    Qp& q = qps[w.qp];
    if (!q.in_heap || q.heap_time != w.time || q.inj_port != p) continue;  // superseded (or the QP moved)
    q.in_heap = false;
    ready_push(p, w.qp);
  }
  while (sched_[p].head != kNil) {
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
    out = make_data_packet(qi, p, tx, now);
    return true;
  }
  return false;
}

void Nic::share_ports(std::vector<std::vector<DirLink>> groups) {
  const size_t D = ports_.hot.size();
  lead_.resize(D);
  line_.resize(D);
  group_of_.assign(D, -1);
  for (size_t d = 0; d < D; ++d) {
    lead_[d] = static_cast<DirLink>(d);
    line_[d] = ports_.hot[d].bps;
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    int64_t sum = 0;
    for (DirLink d : groups[g]) sum += ports_.hot[d].bps;
    for (DirLink d : groups[g]) {
      lead_[d] = groups[g][0];
      line_[d] = sum;
    }
    group_of_[groups[g][0]] = static_cast<int32_t>(g);
  }
  groups_ = std::move(groups);
}

Packet Nic::make_data_packet(uint32_t qi, DirLink p, DirLink tx, int64_t now) {
  Qp& q = qps[qi];
  uint32_t psn;
  if (!q.rtx.empty() && (prune_rtx(q), q.rtx_pos < q.rtx.size())) {  // a NACKed PSN first (trimming)
    psn = q.rtx[q.rtx_pos++];
    if (q.rtx_pos == q.rtx.size()) {
      q.rtx.clear();
      q.rtx_pos = 0;
    }
  } else {
    psn = q.snd_nxt++;
  }
  // A resent packet's round trip is ambiguous (which copy did the ACK answer?): it gives no sample (Karn).
  if (q.st_off != kNil) times_[q.st_off + psn % cc::kMaxTimed] = psn < q.max_sent ? -1 : now;
  const uint16_t payload = q.slices ? payload_of(q, psn)
                                    : (psn + 1 == q.npkts ? q.last_payload : static_cast<uint16_t>(c_.mtu));
  Packet k;
  k.qp = qi;
  k.psn = psn;
  k.in_port = -1;
  k.raw = payload;
  k.wire = static_cast<uint16_t>(payload + c_.header);
  k.type = kData;
  k.cls = c_.data_cls;
  k.ecn = 0;
  k.hop = 0;
  const std::vector<DirLink>* group = shared_ports(p);  // a multi-plane NIC's ports (§7), else nullptr
  if (c_.reps) {                                        // ordered delivery: one entropy value, one path (and one plane)
    k.ev = ordered_        ? static_cast<uint16_t>(q.key)
           : q.mrc != kNil ? (ev_of(q, psn) = paths_[q.mrc].next(now, psn < q.max_sent))
                           : q.reps.next(q.key);
    if (q.mrc != kNil && group && !port_off_.empty())  // a value of a plane out of service rests; another is drawn
      for (int i = 0; i < 64 && !plane_ok(q, *group, k.ev % group->size()); ++i) {
        paths_[q.mrc].lost(k.ev, now);
        k.ev = ev_of(q, psn) = paths_[q.mrc].next(now, psn < q.max_sent);
      }
    if ((q.mrc != kNil || ordered_) && group) {  // the value names the plane
      const DirLink want = (*group)[k.ev % group->size()];
      if (want != tx) tx = lane().redirect = want;
    }
  }
  if (group && !port_off_.empty()) {  // a plane out of service at either end
    const DirLink use = plane_in_service(q, *group, tx);
    if (use != tx) tx = lane().redirect = use;
  }
  if (q.int_off != kNil) int_count_[q.int_off + (psn & q.int_mask)] = 0;  // its INT stack starts empty
  if (q.pt_off != kNil) {  // receiver credits: the packet spends its wire bytes and carries the sender's request
    q.credit -= k.wire;
    if (psn >= q.max_sent) q.unsent_wire -= k.wire;
    pull_targets_[q.pt_off + psn % cc::kMaxTimed] = pull_target(q);
  }
  if (q.cc.window > 0) {  // a window-based algorithm: the packet that fills the window asks for an ACK
    const uint32_t out = q.snd_nxt - q.snd_una;
    if (out - std::min(out, q.sacked) >= q.cc.window) k.ecn = kAckRequest;
  }
  ++lane().stats.data_sent;
  if (q.snd_una == q.max_sent) q.last_progress = now;  // nothing was outstanding: the RTO clock starts now
  if (psn < q.max_sent) {
    ++lane().stats.retransmits;
    ++records[qi].retransmits;
    ++ports_.stats_of[tx].retransmits;
  } else {
    q.max_sent = psn + 1;
  }
  if (unreliable_ && q.snd_nxt == q.npkts) {  // sent: nothing will come back
    q.tx_done = true;
    records[qi].final_rate_bps = q.cc.rate;
  }
  if (!q.rto_armed && !unreliable_) {
    q.rto_armed = true;
    lane().push(Time(now + rto_of(q)), kRto, qi);
  }
  const PortHot& I = ports_.hot[tx];
  const int64_t bytes = I.net ? k.wire : k.raw;
  const int64_t ser = ser_ps(bytes, line_bps(p));  // the schedule's line: its ports together
  int64_t gap = q.cc.rate >= q.cc.line ? ser : std::llround(static_cast<double>(bytes) * 8e12 / q.cc.rate);
  if (q.max_rate > 0) gap = std::max<int64_t>(gap, std::llround(static_cast<double>(k.raw) * 8e12 / q.max_rate));
  q.next_send = now + gap;
  q.last_bytes = bytes;
  if (traits_.byte_counter && !q.local) {
    const cc::Reaction r = cc_.on_sent(q.cc, bytes);
    // Not in a wait heap now (it was just taken from the ready list): no port to wake.
    if (r.rate >= 0) set_rate(qi, r.rate, now);
  }
  if (can_send(q)) {
    if (q.next_send <= now + ser) ready_push(p, qi);
    else wait_push(p, q.next_send, qi);
  } else {
    q.in_sched = false;
  }
  return k;
}

DirLink Nic::set_rate(uint32_t qi, double rate, int64_t now) {
  // As HPCC's ChangeRate: the pending gap after the last packet is rescaled
  // to the new rate, so a QP slowed to a crawl does not sleep through its recovery.
  Qp& q = qps[qi];
  const double old = q.cc.rate;
  q.cc.rate = rate;
  if (q.last_bytes <= 0 || old == rate) return -1;
  const double gap_old = static_cast<double>(q.last_bytes) * 8e12 / old;
  const double gap_new = static_cast<double>(q.last_bytes) * 8e12 / rate;
  const int64_t next = std::max<int64_t>(now, q.next_send + std::llround(gap_new - gap_old));
  q.next_send = next;
  if (q.in_heap && next < q.heap_time) {  // wake earlier: a new entry supersedes the old one
    wait_push(q.inj_port, next, qi);
    return q.inj_port;
  }
  return -1;
}

void Nic::react(uint32_t qi, const cc::Reaction& r, int64_t now, DirLink& kick) {
  if (r.rate >= 0) {
    const DirLink w = set_rate(qi, r.rate, now);
    if (w >= 0) kick = w;
  }
  if (r.timer >= 0) lane().push(Time(r.timer), kCcTimer, qi, 0, qps[qi].cc.stamp);
}

DirLink Nic::receive_ctrl(uint32_t qi, const Packet& k, int64_t now) {
  Qp& q = qps[qi];
  DirLink kick = -1;
  if (selective_ && k.type != kCnp && k.type != kPull) q.sacked = k.raw;
  // The algorithm hears of an ACK or NACK (una: snd_una before it); the QP may send again.
  const auto answer = [&](uint32_t una, uint32_t received = 0) {
    if (traits_.ack_echo && !q.tx_done && !q.local)
      react(qi, cc_.on_feedback(q.cc, now, feedback(q, una, received, k, now)), now, kick);
    const DirLink a = maybe_activate(qi, now);
    if (a >= 0) kick = a;
  };
  switch (k.type) {
    case kAck: {
      ++lane().stats.acks;
      const uint32_t una = q.snd_una;
      if (k.psn > q.snd_una) {
        q.snd_una = k.psn;
        q.last_progress = now;
        if (q.snd_nxt < q.snd_una) q.snd_nxt = q.snd_una;
      }
      if (!q.rtx.empty()) prune_rtx(q);
      if (c_.reps && !ordered_ && k.ecn == 0) q.reps.recycle(k.ev);
      if (q.mrc != kNil) paths_[q.mrc].echoed(k.ev, k.ecn != 0);
      if (q.snd_una >= q.npkts) {
        q.tx_done = true;
        records[qi].final_rate_bps = q.cc.rate;
        ++q.cc.stamp;
        break;
      }
      // What the receiver has now, in order or held beyond a hole: a hole filled moves packets from one count
      // to the other, so only new arrivals add.
      const uint32_t have = q.snd_una + q.sacked;
      const uint32_t received = have > q.heard ? have - q.heard : 0;
      q.heard = std::max(q.heard, have);
      answer(una, received);
      break;
    }
    case kNack: {
      ++lane().stats.nacks;
      ++records[qi].nacks;
      const uint32_t una = q.snd_una;
      if (k.psn > q.snd_una) {
        q.snd_una = k.psn;
        q.last_progress = now;
      }
      if (q.mrc != kNil && k.psn >= q.snd_una && k.psn < q.max_sent)  // a hole: its path lost it
        paths_[q.mrc].lost(ev_of(q, k.psn), now);
      if (selective_) selective_nack(q, k.psn);
      else if (!q.tx_done && q.snd_nxt > k.psn && k.psn >= q.snd_una) q.snd_nxt = k.psn;
      answer(una);
      break;
    }
    case kLossNack: {  // routing mrc: its path lost it; resent alone. A path's loss, not congestion: the
                       // congestion control does not hear of it.
      ++lane().stats.nacks;
      ++records[qi].nacks;
      if (q.mrc != kNil && k.psn >= q.snd_una && k.psn < q.max_sent) paths_[q.mrc].lost(ev_of(q, k.psn), now);
      selective_nack(q, k.psn);
      const DirLink a = maybe_activate(qi, now);
      if (a >= 0) kick = a;
      break;
    }
    case kTrimNack: {
      ++lane().stats.trim_nacks;
      ++records[qi].trims;
      if (selective_) selective_nack(q, k.psn);
      else if (!q.tx_done && q.snd_nxt > k.psn && k.psn >= q.snd_una) q.snd_nxt = k.psn;  // ordered: go back
      answer(q.snd_una);
      break;
    }
    case kPull: {  // receiver credits: what is new in the cumulative grant, up to the cap
      ++lane().stats.pulls;
      if (q.tx_done) break;
      if (q.speculating) {  // the receiver has heard of the QP: speculative credit left over is dropped
        q.speculating = false;
        q.credit = std::min<int64_t>(q.credit, 0);
      }
      if (k.psn > q.pull) {
        q.credit = std::min(q.max_credit, q.credit + static_cast<int64_t>(k.psn - q.pull) * cc::kPullQuantum);
        q.pull = k.psn;
      }
      const DirLink a = maybe_activate(qi, now);
      if (a >= 0) kick = a;
      break;
    }
    case kCnp:
      ++records[qi].cnps;
      if (traits_.cnp && !q.tx_done && !q.local) react(qi, cc_.on_cnp(q.cc, now), now, kick);
      break;
    default: break;
  }
  return kick;
}

void Nic::selective_nack(Qp& q, uint32_t psn) {
  if (q.tx_done || psn < q.snd_una || psn >= q.max_sent) return;
  q.rtx.push_back(psn);
}

void Nic::prune_rtx(Qp& q) {
  while (q.rtx_pos < q.rtx.size() && q.rtx[q.rtx_pos] < q.snd_una) ++q.rtx_pos;  // acknowledged meanwhile
  if (q.rtx_pos == q.rtx.size() && q.rtx_pos > 0) {
    q.rtx.clear();
    q.rtx_pos = 0;
  }
}

cc::Feedback Nic::feedback(const Qp& q, uint32_t una_before, uint32_t received, const Packet& k, int64_t now) const {
  cc::Feedback b;
  b.acked = q.snd_una - una_before;
  b.received = received;
  b.marked = traits_.receiver_credits ? (k.ecn & ~kEchoLastHop) : k.ecn;
  b.last_hop = traits_.receiver_credits && (k.ecn & kEchoLastHop) != 0;
  if (q.int_off != kNil && k.raw > 0 && (k.type == kAck || k.type == kNack)) {
    const uint32_t slot = q.int_off + ((k.raw - 1u) & q.int_mask);
    const uint8_t n = int_count_[slot];
    b.nhops = n <= cc::kMaxIntHops ? n : 0;
    b.hops = int_hops_.data() + static_cast<size_t>(slot) * cc::kMaxIntHops;
  }
  b.snd_una = q.snd_una;
  b.snd_nxt = q.snd_nxt;
  b.nack = k.type != kAck;
  b.psn = k.psn;
  b.trimmed = k.type == kTrimNack;
  // Under routing mrc an ACK that fills a hole (advancing more than 2 packets) gives no sample: the time of
  // its last packet includes the wait for the lost one (MRC echoes each packet's own send time).
  if (q.st_off != kNil && k.type == kAck && k.psn > una_before && k.psn <= q.max_sent &&
      (q.mrc == kNil || k.psn - una_before <= 2)) {
    const int64_t sent = times_[q.st_off + (k.psn - 1) % cc::kMaxTimed];
    if (sent >= 0) b.rtt = now - sent;
  }
  return b;
}

int64_t Nic::on_rto(uint32_t qi, int64_t now, DirLink& kick) {
  Qp& q = qps[qi];
  kick = -1;
  if (q.tx_done) {
    q.rto_armed = false;
    return -1;
  }
  const int64_t wait = rto_of(q);
  const int64_t deadline = q.last_progress + wait;
  if (now < deadline) return deadline;
  if (q.snd_una < q.max_sent && q.mrc != kNil && selective_) {
    // MRC: the oldest packet outstanding (or its resend) was lost on its path: resent alone, on another.
    paths_[q.mrc].lost(ev_of(q, q.snd_una), now);
    if (std::find(q.rtx.begin() + q.rtx_pos, q.rtx.end(), q.snd_una) == q.rtx.end()) q.rtx.push_back(q.snd_una);
    q.last_progress = now;
    kick = maybe_activate(qi, now);
    return now + wait;
  }
  if (q.snd_una < q.max_sent) {
    if (q.mrc != kNil) paths_[q.mrc].lost(ev_of(q, q.snd_una), now);
    ++lane().stats.timeouts;
    ++records[qi].timeouts;
    q.snd_nxt = q.snd_una;
    q.rtx.clear();
    q.rtx_pos = 0;
    q.sacked = 0;
    q.last_progress = now;
    kick = maybe_activate(qi, now);
  }
  return now + wait;
}

DirLink Nic::cc_timer(uint32_t qi, int64_t now) {
  Qp& q = qps[qi];
  if (q.tx_done) return -1;
  DirLink kick = -1;
  react(qi, cc_.on_timer(q.cc, now), now, kick);
  return kick;
}

void Nic::cc_timer_rearm(uint32_t qi, int64_t now) {
  Qp& q = qps[qi];
  if (q.tx_done) return;
  const int64_t t = cc_.timer_next(q.cc, now);
  if (t >= 0) lane().push(Time(t), kCcTimer, qi, 0, q.cc.stamp);
}

// ---------------------------------------------------------------- receiver

void Nic::ctrl(uint32_t qi, uint8_t type, uint32_t psn, bool last_hop) {
  Qp& q = qps[qi];
  Packet k;
  k.qp = qi;
  k.psn = psn;
  k.in_port = -1;
  k.wire = static_cast<uint16_t>(c_.ctrl_wire);
  k.raw = static_cast<uint16_t>(c_.ctrl_raw);
  k.type = type;
  k.cls = kCtrl;
  k.ecn = 0;
  k.hop = 0;
  k.ev = q.rx_ev;
  if (traits_.ack_echo && type != kCnp && type != kPull) {
    k.ecn = static_cast<uint8_t>(std::min<uint32_t>(traits_.receiver_credits ? 127 : 255, q.cc.rx_marked));
    q.cc.rx_marked = 0;
    if (last_hop && traits_.receiver_credits) k.ecn |= kEchoLastHop;
  }
  if (selective_) k.raw = static_cast<uint16_t>(std::min<uint32_t>(65535, q.ooo));
  if (traits_.int_telemetry && (type == kAck || type == kNack)) k.raw = static_cast<uint16_t>(lane().echo_slot);
  lane().outbox.push_back({lane().reply_via >= 0 ? lane().reply_via : rev_port(q, 0), k});
}

void Nic::maybe_ack(uint32_t qi, bool force, int64_t now) {
  Qp& q = qps[qi];
  if (force || q.rcv_nxt - q.last_acked >= static_cast<uint32_t>(opt_.ack_every) ||
      (q.rcv_nxt > q.last_acked && now - q.last_ack_time >= opt_.ack_delay.ps)) {
    q.last_acked = q.rcv_nxt;
    q.last_ack_time = now;
    ctrl(qi, kAck, q.rcv_nxt);
  }
}

bool Nic::receive_data(uint32_t qi, const Packet& k, int64_t now) {
  Qp& q = qps[qi];
  const ReplyVia via(*this, k);
  if (c_.reps) q.rx_ev = k.ev;
  if (q.pt_off != kNil) heard_target(qi, pull_targets_[q.pt_off + k.psn % cc::kMaxTimed], now);
  lane().echo_slot = q.int_off != kNil ? (k.psn & q.int_mask) + 1 : 0;  // the ACK it draws echoes its INT stack
  // Trimming and INT: every data packet is acknowledged (selectively when held); else the sender asks.
  const bool ack_request = selective_ || q.int_off != kNil || (k.ecn & kAckRequest) != 0;
  if (unreliable_) {  // counted, never answered (a DCQCN receiver still sends its CNPs)
    if ((k.ecn & 1) && traits_.cnp && !q.local && cc_.on_marked(q.cc, now)) {
      ++lane().stats.cnps;
      ctrl(qi, kCnp, 0);
    }
    if (q.rx_done) return false;
    ++lane().stats.data_delivered;
    return unreliable_step(qi, now);
  }
  if (k.ecn & 1) {
    if (traits_.cnp && !q.local && cc_.on_marked(q.cc, now)) {
      ++lane().stats.cnps;
      ctrl(qi, kCnp, 0);
    }
    if (traits_.ack_echo) ++q.cc.rx_marked;
  }
  const uint32_t psn = k.psn;
  auto dup = [&] {
    // A duplicate (go-back-N resent what had arrived): re-ACK on the usual cadence.
    if (ack_request || psn + 1 == q.npkts || (psn + 1) % static_cast<uint32_t>(opt_.ack_every) == 0) {
      q.last_acked = q.rcv_nxt;
      q.last_ack_time = now;
      ctrl(qi, kAck, q.rcv_nxt);
    }
    return false;
  };
  if (q.rx_done || psn < q.rcv_nxt) return dup();
  uint32_t advanced = 0;
  if (q.bm_off != kNil) {
    uint64_t* bm = bitmap_.data() + q.bm_off;
    if (psn > q.rcv_nxt) {
      uint64_t& w = bm[psn >> 6];
      const uint64_t bit = 1ULL << (psn & 63);
      if (w & bit) return dup();
      w |= bit;
      ++records[qi].out_of_order;
      ++ports_.stats_of[k.in_port].out_of_order;
      if (++q.ooo == 1) q.ooo_since = now;
      lane().stats.max_reorder_packets = std::max(lane().stats.max_reorder_packets, q.ooo);
      if (c_.mrc && selective_) {  // MRC: each hole reported once, when a packet R or more later arrives
        const auto R = static_cast<uint32_t>(opt_.reorder_nack_packets);
        if (R > 0 && psn >= R) {
          for (uint32_t y = std::max(q.loss_scan, q.rcv_nxt); y <= psn - R; ++y)
            if ((bm[y >> 6] >> (y & 63) & 1) == 0) ctrl(qi, kLossNack, y);
          q.loss_scan = std::max(q.loss_scan, psn - R + 1);
        }
        q.last_ack_time = now;
        ctrl(qi, kAck, q.rcv_nxt);
        return false;
      }
      if (c_.data_cls == kLossy && !q.nack_sent && opt_.reorder_nack_packets > 0 &&
          psn - q.rcv_nxt >= static_cast<uint32_t>(opt_.reorder_nack_packets)) {
        q.nack_sent = true;
        ctrl(qi, kNack, q.rcv_nxt);
      } else if (ack_request) {  // held beyond the hole: the ACK tells the sender how many
        q.last_ack_time = now;
        ctrl(qi, kAck, q.rcv_nxt);
      }
      return false;
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
      ++lane().stats.reorder_events;
      lane().reorder_sum_ps += d;
      lane().stats.max_reorder_delay.ps = std::max(lane().stats.max_reorder_delay.ps, d);
    }
  } else {
    if (psn != q.rcv_nxt) {  // a hole: go-back-N discards what follows it
      ++records[qi].out_of_order;
      ++ports_.stats_of[k.in_port].out_of_order;
      if (!q.nack_sent) {
        q.nack_sent = true;
        ctrl(qi, kNack, q.rcv_nxt);
      }
      return false;
    }
    ++q.rcv_nxt;
    advanced = 1;
  }
  q.nack_sent = false;
  lane().stats.data_delivered += advanced;
  if (q.rcv_nxt == q.npkts) {
    q.rx_done = true;
    maybe_ack(qi, true, now);
    return true;
  }
  if (q.rcv_nxt >= q.notify_at) {  // a watched slice end: reported after the in-server links, as a completion
    q.notify_at = kNil;
    lane().push(Time(now + q.suffix_delay), kProgress, qi);
  }
  // The last packet the sender was allowed so far ends a message (an RDMA write): it asks for an ACK,
  // so a sender that has to wait for its next slice does not wait for an RTO instead.
  maybe_ack(qi, ack_request || q.rcv_nxt == q.send_limit, now);
  return false;
}

bool Nic::receive_trim(uint32_t qi, const Packet& k, int64_t now) {
  Qp& q = qps[qi];
  const ReplyVia via(*this, k);
  ++lane().stats.trims_received;
  if (unreliable_) return lose_unreliable(qi, k.psn, now);  // its payload is gone, and nobody asks for it again
  if (c_.reps) q.rx_ev = k.ev;
  if (q.pt_off != kNil) heard_target(qi, pull_targets_[q.pt_off + k.psn % cc::kMaxTimed], now);
  if (q.rx_done || k.psn < q.rcv_nxt) return false;  // it arrived whole meanwhile
  if (q.bm_off != kNil && k.psn > q.rcv_nxt && (bitmap_[q.bm_off + (k.psn >> 6)] >> (k.psn & 63) & 1)) return false;
  if (!selective_) {  // ordered: go back to the in-order point, once per hole (again if this is its packet)
    if (q.nack_sent && k.psn != q.rcv_nxt) return false;
    q.nack_sent = true;
    ctrl(qi, kTrimNack, q.rcv_nxt, (k.ecn & kTrimmedLastHop) != 0);
    return false;
  }
  ctrl(qi, kTrimNack, k.psn, (k.ecn & kTrimmedLastHop) != 0);
  return false;
}

bool Nic::lose_unreliable(uint32_t qi, uint32_t psn, int64_t now) {
  Qp& q = qps[qi];
  if (q.rx_done) return false;
  ++records[qi].lost;
  records[qi].lost_bytes += q.slices ? payload_of(q, psn) : (psn + 1 == q.npkts ? q.last_payload : c_.mtu);
  return unreliable_step(qi, now);
}

bool Nic::unreliable_step(uint32_t qi, int64_t now) {
  Qp& q = qps[qi];
  ++q.rcv_nxt;  // packets accounted for, arrived or lost (sent in order, so slices end in order too)
  if (q.rcv_nxt == q.npkts) {
    q.rx_done = true;
    return true;
  }
  if (q.rcv_nxt >= q.notify_at) {
    q.notify_at = kNil;
    lane().push(Time(now + q.suffix_delay), kProgress, qi);
  }
  return false;
}

// ---------------------------------------------------------------- receiver credits (cc/rccc.hpp)

uint32_t Nic::pull_target(const Qp& q) const {
  const int64_t wire = c_.mtu + c_.header;
  const auto pending = static_cast<int64_t>(q.rtx.size() - q.rtx_pos);
  int64_t want = q.unsent_wire + pending * wire;
  if (q.cc.wnd_bytes > 0) want = std::min<int64_t>(want, std::llround(q.cc.wnd_bytes) + wire);  // nscc_rccc
  want = std::min(want, q.max_credit) - q.credit;
  if (q.speculating && want < wire && q.unsent_wire > 0) want = wire;
  const int64_t target = static_cast<int64_t>(q.pull) * cc::kPullQuantum + want;
  if (target <= 0) return 0;
  const int64_t quanta = (target + cc::kPullQuantum - 1) / cc::kPullQuantum;
  if (quanta >= kNil) throw Error("packet engine: more than 1 TiB of receiver credit on one QP");
  return static_cast<uint32_t>(quanta);
}

void Nic::pacer_for(uint32_t qi) {
  Qp& q = qps[qi];
  const auto node = static_cast<size_t>(q.dst_node);
  if (pacer_of_node_.size() <= node) pacer_of_node_.resize(node + 1, -1);
  if (pacer_of_node_[node] < 0) {  // the receiving NIC's line: the QP's last network link
    const DirLink last = routes[q.path_off + q.path_len - 1];
    const double bps = static_cast<double>(lead_.empty() ? ports_.hot[last].bps : line_bps(last ^ 1));
    Pacer p;
    p.ps_per_quantum = 8.0 * cc::kPullQuantum * 1e12 / bps / traits_.pull_rate;
    pacer_of_node_[node] = static_cast<int32_t>(pacers_.size());
    pacers_.push_back(std::move(p));
  }
  q.pacer = pacer_of_node_[node];
}

void Nic::heard_target(uint32_t qi, uint32_t pt, int64_t now) {
  Qp& q = qps[qi];
  if (q.rx_done || pt <= q.pt_high) return;
  q.pt_high = pt;
  if (q.pull_state == 1) return;
  q.pull_state = 1;
  Pacer& pc = pacers_[static_cast<size_t>(q.pacer)];
  pc.active.push_back(qi);
  if (!pc.running) {
    pc.running = true;
    lane().push(Time(now), kPullPace, static_cast<uint64_t>(q.pacer));
  }
}

void Nic::pull_pace(int32_t id, int64_t now) {
  Pacer& pc = pacers_[static_cast<size_t>(id)];
  const auto per =
      static_cast<uint32_t>(std::max<int64_t>(1, static_cast<int64_t>(traits_.pull_mtus) * c_.mtu / cc::kPullQuantum));
  uint32_t qi = kNil, extra = 0;
  while (qi == kNil && !pc.active.empty()) {  // round robin over the QPs that asked for more
    const uint32_t i = pc.active.front();
    pc.active.pop_front();
    Qp& q = qps[i];
    if (q.pull_state != 1) continue;
    if (q.rx_done) {
      q.pull_state = 0;
      continue;
    }
    const uint32_t prev = q.granted;
    q.granted = std::max(prev, std::min(prev + per, q.pt_high));
    extra = q.granted - prev;
    qi = i;
    if (q.pt_high > q.granted) {
      pc.active.push_back(i);
    } else {
      q.pull_state = 2;
      if (!q.in_idle) {
        q.in_idle = true;
        pc.idle.push_back(i);
      }
    }
  }
  while (qi == kNil && !pc.idle.empty()) {  // nobody asks: speculative credit to idle QPs, up to their cap
    const uint32_t i = pc.idle.front();
    pc.idle.pop_front();
    Qp& q = qps[i];
    q.in_idle = false;
    if (q.pull_state != 2) continue;
    if (q.rx_done) {
      q.pull_state = 0;
      continue;
    }
    q.granted += per;
    extra = per;
    qi = i;
    if (q.granted - std::min(q.granted, q.pt_high) < static_cast<uint32_t>(q.max_credit / cc::kPullQuantum)) {
      q.in_idle = true;
      pc.idle.push_back(i);
    } else {
      q.pull_state = 0;
    }
  }
  if (qi == kNil) {
    pc.running = false;
    return;
  }
  ctrl(qi, kPull, qps[qi].granted);
  // The line's time for what was granted (4 quanta's when nothing was).
  const int64_t wait = std::llround(pc.ps_per_quantum * (extra > 0 ? extra : 4));
  lane().push(Time(now + wait), kPullPace, static_cast<uint64_t>(id));
}

uint16_t Nic::payload_of(const Qp& q, uint32_t psn) const {
  // The packet's slice (the first slice_extra slices are one byte longer) and its place in it.
  const uint64_t head = static_cast<uint64_t>(q.slice_extra) * q.pkts1;
  int64_t size = q.slice_bytes + 1;
  uint32_t per = q.pkts1, off = 0;
  if (psn < head) {
    off = psn % q.pkts1;
  } else {
    size = q.slice_bytes;
    per = q.pkts0;
    off = static_cast<uint32_t>((psn - head) % q.pkts0);
  }
  return static_cast<uint16_t>(off + 1 < per ? c_.mtu : size - static_cast<int64_t>(per - 1) * c_.mtu);
}

int64_t Nic::delivered_slices(uint32_t qi) const {
  const Qp& q = qps[qi];
  if (q.rx_done) return std::numeric_limits<int64_t>::max();  // everything, whatever was asked
  const uint64_t head = static_cast<uint64_t>(q.slice_extra) * q.pkts1;
  if (q.rcv_nxt <= head) return q.pkts1 ? q.rcv_nxt / q.pkts1 : q.slice_extra;
  if (q.pkts0 == 0) return q.slices;  // slices of no bytes: delivered with the last real one
  return q.slice_extra + static_cast<int64_t>((q.rcv_nxt - head) / q.pkts0);
}

void Nic::count_extra_bytes(uint32_t qi) {
  const Qp& q = qps[qi];
  for (uint32_t j = 0; j < q.route_len; ++j)
    if (j < q.net_first || j > q.net_last)
      extra_bytes[routes[q.route_off + j]] += static_cast<double>(records[qi].bytes);
}

void Nic::complete(uint32_t qi, int64_t now) {
  const Qp& q = qps[qi];
  const int64_t fin = now + q.suffix_delay;
  records[qi].finish = Time(fin);
  if (!defer_extra_bytes) count_extra_bytes(qi);
  lane().push(Time(fin), kDone, qi);
}

}  // namespace podnet::engine::packet
