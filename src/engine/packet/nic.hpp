// Nic: the RoCEv2 (or InfiniBand RC) NICs and their queue pairs.
//
// Model (packet_sim.hpp §5, §8):
// - A message of S bytes on one QP is ceil(S / MTU) packets with sequence
//   numbers (PSN) 0..n-1. The sender NIC's uplink port (a multi-plane NIC's
//   ports together, packet_sim.hpp §7) serves its QPs
//   round-robin (a ready list per port, and a heap of QPs waiting for their
//   pacing time); a QP may send when its rate limiter allows (next send =
//   previous send + 8 w / RC, RC from its congestion control, cc/) and,
//   with `window_packets` or a window-based congestion control, while fewer
//   than that many packets are unacknowledged. When RC changes, the wait after the QP's last packet is
//   rescaled to the new rate (HPCC's ChangeRate), so a QP slowed to a crawl
//   wakes up when it recovers.
// - Receiver (ECMP-routed QPs: packets of one QP stay in order): an in-order
//   packet advances rcv_nxt. An out-of-order packet is discarded and, once
//   per hole, a NACK(rcv_nxt) is sent; the sender goes back to that PSN
//   (go-back-N). Per-packet routing (adaptive, spray) reorders packets, so
//   the receiver keeps a reorder buffer (bitmap) and, on a lossy class,
//   NACKs a hole only when `reorder_nack_packets` packets lie beyond it (on a
//   lossless class a hole is only ever reordering: no NACK, the RTO remains
//   the safety net); reported: the largest number of packets held and the
//   reorder delay (first packet held to the hole being filled).
// - ACKs: every `ack_every`-th in-order packet, the last one, whenever
//   `ack_delay` has passed since the previous ACK, and at once for a packet
//   that asks (kAckRequest: under a window-based algorithm, the packet that
//   fills the window, so a window below `ack_every` does not stall). A marked data packet is
//   handed to the congestion control (a CNP if it says so); with
//   cc::Traits::ack_echo every ACK/NACK carries the marks since the previous one.
// - Timeout: if no ACK progress for RTO the sender goes back to the oldest
//   unacknowledged PSN.
// - Delivery modes (packet_options.hpp: Delivery). What follows is ordered
//   delivery (above) and unordered (below: the trimming case, which a
//   congestion control that trims gets by default); unordered delivery under
//   another algorithm behaves the same without the switches' trims. Ordered
//   delivery under trimming answers a trimmed header with a go-back-N NACK.
//   Unreliable delivery sends no ACK, NACK or resend: the sender has no window
//   and no RTO, a packet lost on the way (dropped, trimmed, a fault, a dead
//   link) is counted at its receiver (lose_unreliable), and the stream ends
//   when every packet has arrived or been lost.
// - Trimming (cc::Traits::trim; Ultra Ethernet's reliable unordered
//   delivery): every QP keeps a reorder buffer; a trimmed header makes the
//   receiver send a kTrimNack for its PSN at once; every NACK asks for its
//   PSN alone (the sender queues it and sends it before new packets, within
//   its window: a packet waiting to be resent is not in flight), never go-back-N; every data packet is acknowledged (an
//   ACK of the in-order point, also for a packet held beyond a hole; htsim coalesces to one per 16 KiB), and every ACK
//   and NACK carries the number of packets held beyond the first hole (a selective-ACK summary), which the sender takes
//   out of the packets it counts in flight.
// - Round trips (cc::Traits::rtt): the sender notes each packet's send time;
//   an ACK advancing to PSN P reports now minus the send time of P - 1, unless
//   P - 1 was sent more than once (Karn's rule: the sample is ambiguous).
// - A stream completes when its last byte is delivered in order at the
//   receiver, plus the in-server links after the network (their latency and
//   one packet's serialization); the links before the first network link
//   are a fixed delay before the QP may send.
// The NIC owns its QPs, their routes, the reorder bitmaps and the stream
// records; it schedules its own timers (QP start, RTO, CC timer, completion)
// on the event wheel. It never touches a port: control packets it makes go
// to an outbox the simulation core drains, and where a port should try to
// send, the call returns that port.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "engine/packet/cc/congestion_control.hpp"
#include "engine/packet/event_wheel.hpp"
#include "engine/packet/lane.hpp"
#include "engine/packet/mrc_paths.hpp"
#include "engine/packet/next_hops.hpp"
#include "engine/packet/packet.hpp"
#include "engine/packet/packet_options.hpp"
#include "engine/packet/packet_sim.hpp"
#include "engine/packet/port.hpp"
#include "engine/packet/reps.hpp"
#include "routing/route.hpp"

namespace podnet::engine::packet {

struct Qp {
  // route: routes[route_off, route_off + route_len); network part [path_off, path_off + path_len)
  uint32_t route_off = 0, path_off = 0;
  uint16_t route_len = 0, path_len = 0;
  uint16_t net_first = 0, net_last = 0;
  topology::NodeId src_node = 0, dst_node = 0, target = topology::kNone;
  int32_t inj_port = 0;
  uint64_t key = 0;
  uint64_t entropy = 0;
  // re-routing (§10): the path before the last re-route, which packets sent earlier still follow
  uint32_t prev_off = 0;
  uint16_t prev_len = 0;
  bool rerouted = false;
  // No network link on its route (NVLink inside a domain, GPUs sharing a NIC over PCIe): no congestion control
  // runs for it (its rate stays the line's; no window, no credits, no timestamps), as none does for such traffic.
  bool local = false;
  int64_t routed_at = 0;
  int64_t suffix_delay = 0;
  uint32_t npkts = 0;
  uint16_t last_payload = 0;
  // slice pipeline (packet_sim.hpp: StreamSpec::slices): `slices` messages, the first slice_extra of
  // slice_bytes + 1 bytes (pkts1 packets each), the rest of slice_bytes (pkts0 packets); the sender
  // may send PSNs < send_limit; a progress event fires once rcv_nxt >= notify_at
  uint32_t slices = 0, slice_extra = 0, pkts1 = 0, pkts0 = 0;
  int64_t slice_bytes = 0;
  uint32_t send_limit = kNil;
  uint32_t notify_at = kNil;
  // sender
  uint32_t snd_nxt = 0, snd_una = 0, max_sent = 0;
  uint32_t next_ready = kNil;
  int64_t next_send = 0;
  int64_t last_progress = 0;
  bool started = false, in_sched = false, tx_done = false, rto_armed = false;
  bool in_heap = false;  // its valid wait-heap entry is at heap_time
  int64_t heap_time = 0;
  int64_t last_bytes = 0;  // wire bytes of the last packet (rate changes rescale its gap)
  uint32_t sacked = 0;     // trimming: packets the receiver holds beyond its hole (its latest ACK/NACK)
  uint32_t heard = 0;      // packets the receiver has reported having, in order or held (its latest ACK)
  uint32_t rtx_pos = 0;    // trimming: rtx[rtx_pos..] are PSNs to resend before new ones
  std::vector<uint32_t> rtx;
  uint32_t st_off = kNil;  // Traits::rtt: send times of PSN p at times_[st_off + p % kMaxTimed]
  Reps reps;               // routing policy reps: the entropy values to reuse
  uint32_t mrc = kNil;     // routing policy mrc: its path set, paths_[mrc], and the value PSN p left on, at
                           // evs_[mrc * kMaxTimed + p % kMaxTimed]
  uint16_t rx_ev = 0;      // receiver: the entropy of the last data packet, echoed on its ACK/NACK
  cc::Flow cc;             // congestion state (rate RC, ...), owned by the algorithm
  double max_rate = 0;     // > 0: payload bits/s the QP sends at most (StreamSpec::max_rate_bps)
  // receiver
  bool rx_done = false, nack_sent = false;
  uint32_t rcv_nxt = 0, last_acked = 0;
  uint32_t loss_scan = 0;  // routing mrc: PSNs below were checked for holes
  int64_t last_ack_time = 0;
  uint32_t bm_off = kNil;  // reorder bitmap (per-packet routing)
  uint32_t ooo = 0;
  int64_t ooo_since = 0;
  // Receiver credits (cc::Traits::receiver_credits, cc/rccc.hpp). Sender: its credit in wire bytes (below 0
  // by at most one packet) and its cap, the wire bytes not yet sent, the credit granted so far (256-byte
  // quanta, cumulative), whether it still speculates; the pull target stamped on PSN p is
  // pull_targets_[pt_off + p % kMaxTimed]. Receiver: the highest target heard, what it granted (quanta),
  // its receiving NIC's pacer and its place there (0 none, 1 active, 2 idle).
  int64_t credit = 0, max_credit = 0, unsent_wire = 0;
  uint32_t pull = 0;
  bool speculating = false;
  uint8_t pull_state = 0;
  bool in_idle = false;  // in its pacer's idle list (an entry of a QP no longer idle is skipped there)
  uint32_t pt_off = kNil;
  uint32_t pt_high = 0, granted = 0;
  int32_t pacer = -1;
  // In-band telemetry (cc::Traits::int_telemetry): PSN p's stack is slot p & int_mask of the QP's
  // (int_hops_ from int_off x kMaxIntHops, its hop count int_count_[int_off + slot]).
  uint32_t int_off = kNil, int_mask = 0;
  // At most this many packets between snd_una and snd_nxt: the send times, pull targets and INT stacks
  // kept per PSN (kNil: no limit).
  uint32_t track = kNil;
};

class Nic {
 public:
  struct Config {
    int32_t mtu = 4096, header = 82;
    int64_t ctrl_wire = 84, ctrl_raw = 64;
    uint8_t data_cls = kLossless;
    int64_t rto = 0;
    bool reps = false;        // the sender picks each packet's entropy value (reps.hpp)
    bool mrc = false;         // ... from MRC's set of paths (mrc_paths.hpp), which also names the plane
    int planes = 1;           // the fabric's planes (topology/planes.hpp)
    int64_t network_rtt = 0;  // ps: the fabric's largest unloaded NIC-to-NIC round trip (cc::Context)
  };
  using Ctrl = packet::Ctrl;

  Nic(const PacketOptions& opt, const Config& c, const cc::CongestionControl& cc, Ports& ports,
      const NextHops* next_hops);

  // ---- streams (packet_sim.hpp: add_stream)
  int32_t add_stream(const StreamSpec& s, const std::vector<routing::PathPart>& route);
  // Sets QP qi's route and what follows from it; `phys` and `prefix` get the
  // route's physical latency and the in-server delay before its first network link.
  void install_route(uint32_t qi, const std::vector<routing::PathPart>& route, int64_t& phys, int64_t& prefix);

  // ---- sender. Each returns the port that should try to send (-1: none).
  routing::DirLink start(uint32_t qi, int64_t now);
  routing::DirLink maybe_activate(uint32_t qi, int64_t now) {
    Qp& q = qps[qi];
    return !q.in_sched && can_send(q) ? activate(qi, now) : -1;
  }
  routing::DirLink receive_ctrl(uint32_t qi, const Packet& k, int64_t now);
  // Receiver: a trimmed header of QP qi (its NACK goes to the outbox); true when the stream is complete
  // (unreliable delivery: the packet is lost; then call complete()).
  bool receive_trim(uint32_t qi, const Packet& k, int64_t now);
  // Unreliable delivery: a data packet of QP qi was lost on its way; true when the stream is complete (then
  // call complete()). The sequential engine only (the partitioned engine refuses unreliable delivery).
  bool lose_unreliable(uint32_t qi, uint32_t psn, int64_t now);
  bool unreliable() const { return unreliable_; }
  bool ordered() const { return ordered_; }
  // RTO: returns when the timer fires next (-1: disarmed).
  int64_t on_rto(uint32_t qi, int64_t now, routing::DirLink& kick);
  routing::DirLink cc_timer(uint32_t qi, int64_t now);
  void cc_timer_rearm(uint32_t qi, int64_t now);
  // QPs of port p: ready or waiting for their pacing time.
  bool has_qps(routing::DirLink p) const { return sched_[p].head != kNil || !sched_[p].heap.empty(); }
  int64_t next_wait(routing::DirLink p) const { return sched_[p].heap.front().time; }
  bool ready(routing::DirLink p) const { return sched_[p].head != kNil; }
  // The next paced packet of a QP on port p's schedule, if one is due, to leave on port tx (p itself, or
  // another port sharing p's schedule).
  bool next_packet(routing::DirLink p, routing::DirLink tx, int64_t now, Packet& out);
  // Multi-plane NICs under per-packet routing (packet_sim.hpp §7): each group is one NIC's ports into its
  // planes, in plane order; its QPs are on the first port's schedule (sched_port), paced at the ports' rates
  // together (line_bps). Under routing mrc (Config::mrc) the packet's entropy value also names its port:
  // group[ev mod P], and the last packet made says where it goes (take_redirect). Set before the first stream.
  void share_ports(std::vector<std::vector<routing::DirLink>> groups);
  // The link into each NIC from its switch in each plane ([NIC node x planes + p], packet_sim.hpp §7), which
  // a packet's plane must have in service at its receiver too.
  void plane_downlinks(const std::vector<routing::DirLink>* down, int planes) {
    plane_down_ = down;
    planes_ = planes;
  }
  // A multi-plane NIC's link that routing has taken out of service (dead, or down before the run): its NIC
  // sends nothing new on it, and no sender sends a packet toward its NIC in that plane (packet_sim.hpp §7).
  void set_port_off(routing::DirLink d, bool off) {
    if (port_off_.empty()) port_off_.assign(ports_.hot.size(), 0);
    port_off_[static_cast<size_t>(d)] = off ? 1 : 0;
  }
  bool port_off(routing::DirLink d) const { return !port_off_.empty() && port_off_[static_cast<size_t>(d)] != 0; }
  // The ports sharing p's schedule when p is a group's first (else nullptr).
  const std::vector<routing::DirLink>* shared_ports(routing::DirLink p) const {
    return group_of_.empty() || group_of_[p] < 0 ? nullptr : &groups_[static_cast<size_t>(group_of_[p])];
  }
  // The port the packet next_packet() just made belongs on, if not the one that asked for it (-1: that one).
  routing::DirLink take_redirect() { return std::exchange(lane().redirect, -1); }
  routing::DirLink sched_port(routing::DirLink p) const { return lead_.empty() ? p : lead_[p]; }
  int64_t line_bps(routing::DirLink p) const { return line_.empty() ? ports_.hot[p].bps : line_[p]; }
  // QP qi leaves port `old`'s schedule (it was re-routed to another first link).
  void unschedule(uint32_t qi, routing::DirLink old);

  // ---- slice pipeline (sliced QPs): the sender may send the first `slices` slices (never
  // lowered); returns the port to kick. A progress event (kProgress) fires once the first `slices`
  // slices are delivered in order. Slices delivered in order so far.
  routing::DirLink release_slices(uint32_t qi, int64_t slices, int64_t now) {
    Qp& q = qps[qi];
    const uint32_t pkts = packets_before(q, slices);
    if (q.send_limit != kNil) q.send_limit = std::max(q.send_limit, pkts);  // kNil: no limit
    return maybe_activate(qi, now);
  }
  void watch_slices(uint32_t qi, int64_t slices) { qps[qi].notify_at = packets_before(qps[qi], slices); }
  int64_t delivered_slices(uint32_t qi) const;
  // Packets of the first u slices of a sliced QP (all of them for u >= slices).
  static uint32_t packets_before(const Qp& q, int64_t u) {
    if (u >= q.slices) return q.npkts;
    if (u <= 0) return 0;
    const int64_t a = std::min<int64_t>(u, q.slice_extra);
    return static_cast<uint32_t>(a * q.pkts1 + (u - a) * q.pkts0);
  }

  // ---- in-band telemetry: a switch port stamps data packet k as it starts to leave (cc::IntHop).
  void stamp(const Packet& k, routing::DirLink port, int64_t now, int64_t tx_bytes, int64_t qlen, int64_t bps) {
    const Qp& q = qps[k.qp];
    if (q.int_off == kNil) return;
    const uint32_t slot = q.int_off + (k.psn & q.int_mask);
    const uint8_t n = int_count_[slot];
    if (n < cc::kMaxIntHops)
      int_hops_[static_cast<size_t>(slot) * cc::kMaxIntHops + n] = {now, tx_bytes,
                                                                    static_cast<int32_t>(
                                                                        std::min<int64_t>(qlen, INT32_MAX)),
                                                                    static_cast<int32_t>(bps / 1'000'000), port};
    if (n < 255) int_count_[slot] = static_cast<uint8_t>(n + 1);
  }

  // ---- receiver credits: pacer `pacer`'s next pull (a kPullPace event); the pull goes to the outbox.
  void pull_pace(int32_t pacer, int64_t now);

  // ---- receiver: a data packet for QP qi. Control packets go to the
  // outbox; true when the stream is complete (then call complete()).
  bool receive_data(uint32_t qi, const Packet& k, int64_t now);
  void complete(uint32_t qi, int64_t now);
  // Adds a completed stream's bytes to its in-server links modelled as delays (extra_bytes): at its
  // completion, or (defer_extra_bytes: a partitioned run, whose in-server links at the source another
  // thread may be counting) when the coordinator runs its kDone.
  void count_extra_bytes(uint32_t qi);
  bool defer_extra_bytes = false;

  bool can_send(const Qp& q) const {
    if (!q.started || q.tx_done) return false;
    if (unreliable_) return q.snd_nxt < q.npkts && q.snd_nxt < q.send_limit;  // no window: nothing is acknowledged
    const uint32_t out = q.snd_nxt - q.snd_una;
    uint32_t flight = out;
    bool resend = false;
    if (selective_) {  // in flight: not held by the receiver, not waiting to be resent (trimmed)
      const auto pending = static_cast<uint32_t>(q.rtx.size() - q.rtx_pos);
      flight = out - std::min(out, q.sacked + pending);
      resend = pending > 0;
    }
    const bool window = (window_ <= 0 || flight < static_cast<uint32_t>(window_)) &&
                        (q.cc.window == 0 || flight < q.cc.window) && (q.pt_off == kNil || q.credit > 0);
    // A NACKed PSN goes first; under routing mrc a lost packet's resend does not wait for a window that
    // packets lost but not yet found may fill.
    if (resend) return window || q.mrc != kNil;
    return window && q.snd_nxt < q.npkts && q.snd_nxt < q.send_limit && out < q.track;
  }
  routing::DirLink rev_port(uint32_t off, uint32_t len, uint32_t i) const { return routes[off + len - 1 - i] ^ 1; }
  routing::DirLink rev_port(const Qp& q, uint32_t i) const { return rev_port(q.path_off, q.path_len, i); }
  const cc::CongestionControl& cc() const { return cc_; }

  std::vector<Qp> qps;
  std::vector<routing::DirLink> routes;
  std::vector<StreamRecord> records;
  std::vector<uint64_t> stream_tags;
  std::vector<double> extra_bytes;  // payload per in-server link modelled as a delay
  int64_t open_streams = 0;

 private:
  std::vector<routing::DirLink> lead_;  // share_ports(); empty: every port its own schedule
  std::vector<int64_t> line_;
  std::vector<int32_t> group_of_;  // a group's first port -> its index in groups_ (else -1)
  std::vector<MrcPaths> paths_;
  std::vector<uint16_t> evs_;
  // The retransmission timeout: under routing mrc with trimming, 4 of the fabric's round trips without
  // progress resend the oldest packet alone (MRC's fast loss recovery); else the NIC's RTO (go-back-N).
  int64_t rto_of(const Qp& q) const { return q.mrc != kNil && selective_ ? 4 * c_.network_rtt : c_.rto; }
  uint16_t& ev_of(const Qp& q, uint32_t psn) {
    return evs_[static_cast<size_t>(q.mrc) * cc::kMaxTimed + psn % cc::kMaxTimed];
  }
  std::vector<std::vector<routing::DirLink>> groups_;
  std::vector<uint8_t> port_off_;  // per directed link (set_port_off); empty: all in service
  const std::vector<routing::DirLink>* plane_down_ = nullptr;
  int planes_ = 1;
  // Port tx of group `ports`, or, if its plane is out of service at either end of QP q, the port of a plane
  // in service at both with the least queued (tx itself when none is).
  routing::DirLink plane_in_service(const Qp& q, const std::vector<routing::DirLink>& ports, routing::DirLink tx) const;
  // Plane p (port ports[p]) is in service at both ends of QP q.
  bool plane_ok(const Qp& q, const std::vector<routing::DirLink>& ports, size_t p) const;
  // A multi-plane receiver answers on the plane the packet came in on (packet_sim.hpp §7): while it handles
  // that packet, its NIC's port into that plane (Lane::reply_via; else -1: the QP's path reversed). Lane
  // state, as Lane::redirect: the partitioned engine's threads each have their own.
  struct ReplyVia {
    ReplyVia(const Nic& n, const Packet& k) {
      if (!n.group_of_.empty() && k.in_port >= 0) lane().reply_via = k.in_port ^ 1;
    }
    ~ReplyVia() { lane().reply_via = -1; }
  };
  struct WaitEntry {
    int64_t time;
    uint32_t qp;
    bool operator>(const WaitEntry& o) const { return time > o.time || (time == o.time && qp > o.qp); }
  };
  struct Sched {
    uint32_t head = kNil, tail = kNil;
    std::vector<WaitEntry> heap;
  };
  // A receiving NIC's credit pacer (cc/rccc.hpp): its active and idle QPs, in order, and its pace.
  struct Pacer {
    std::deque<uint32_t> active, idle;
    double ps_per_quantum = 0;  // at pull_rate x the NIC's line rate
    bool running = false;
  };
  // Receiver credits: the sender's pull target now (quanta), stamped on the packet it sends.
  uint32_t pull_target(const Qp& q) const;
  // The receiver heard target `pt` from QP qi (a data packet or its trimmed header).
  void heard_target(uint32_t qi, uint32_t pt, int64_t now);
  void pacer_for(uint32_t qi);
  routing::DirLink activate(uint32_t qi, int64_t now);
  uint16_t payload_of(const Qp& q, uint32_t psn) const;  // sliced QPs
  Packet make_data_packet(uint32_t qi, routing::DirLink p, routing::DirLink tx, int64_t now);
  void ctrl(uint32_t qi, uint8_t type, uint32_t psn, bool last_hop = false);
  void selective_nack(Qp& q, uint32_t psn);
  void prune_rtx(Qp& q);
  cc::Feedback feedback(const Qp& q, uint32_t una_before, uint32_t received, const Packet& k, int64_t now) const;
  void maybe_ack(uint32_t qi, bool force, int64_t now);
  // Applies a rate; returns the port to wake when the QP's wait got shorter.
  routing::DirLink set_rate(uint32_t qi, double rate, int64_t now);
  void react(uint32_t qi, const cc::Reaction& r, int64_t now, routing::DirLink& kick);
  void ready_push(routing::DirLink p, uint32_t qi) {
    Sched& s = sched_[p];
    qps[qi].next_ready = kNil;
    if (s.tail == kNil) s.head = qi;
    else qps[s.tail].next_ready = qi;
    s.tail = qi;
  }
  uint32_t ready_pop(routing::DirLink p) {
    Sched& s = sched_[p];
    const uint32_t qi = s.head;
    s.head = qps[qi].next_ready;
    if (s.head == kNil) s.tail = kNil;
    return qi;
  }
  void wait_push(routing::DirLink p, int64_t t, uint32_t qi) {
    qps[qi].in_heap = true;
    qps[qi].heap_time = t;
    auto& h = sched_[p].heap;
    h.push_back({t, qi});
    std::push_heap(h.begin(), h.end(), std::greater<>());
  }

  const PacketOptions& opt_;
  Config c_;
  const cc::CongestionControl& cc_;
  cc::Traits traits_;  // a copy: read per packet
  // Delivery (packet_options.hpp): a selective resend and every packet acknowledged (unordered), in order
  // only with no reorder buffer (ordered), or no acknowledgement at all (unreliable).
  bool selective_ = false, ordered_ = false, unreliable_ = false;
  // Unreliable delivery: packet qi's stream advanced by one (arrived or lost); true when it is complete.
  bool unreliable_step(uint32_t qi, int64_t now);
  Ports& ports_;  // reads rates; counts retransmissions and out-of-order arrivals per port
  const NextHops* next_hops_;
  int32_t window_ = 0;
  std::vector<Sched> sched_;  // per port
  std::vector<uint64_t> bitmap_;
  std::vector<int64_t> times_;          // send times (Traits::rtt)
  std::vector<uint32_t> pull_targets_;  // stamped pull targets (Traits::receiver_credits)
  std::vector<cc::IntHop> int_hops_;    // INT stacks (Traits::int_telemetry)
  std::vector<uint8_t> int_count_;
  std::vector<Pacer> pacers_;
  std::vector<int32_t> pacer_of_node_;
};

}  // namespace podnet::engine::packet
