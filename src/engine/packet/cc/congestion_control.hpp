// Congestion control of the packet engine: one interface, one registry.
//
// An algorithm is a CongestionControl: what the switches do for it (ECN
// marking: the RED band on an egress queue), what the receiver NIC echoes
// (a CNP per marked packet, or the count of marked packets on each ACK),
// and how the sender reacts (the rate RC the NIC paces its QP at). The NIC
// (nic.hpp) keeps one cc::Flow per QP inside the QP and calls the algorithm
// at congestion events only:
//   init / start        a QP is created / may send
//   on_marked           receiver: a marked data packet arrived; true = send a CNP
//   on_cnp              sender: a CNP arrived
//   on_feedback         sender: an ACK or NACK arrived carrying the marks it echoes
//                       (with Traits::rtt, the round trip of the newest packet it
//                       acknowledges; with Traits::trim, whether a packet was trimmed)
//   on_sent             sender: a data packet left (only with traits().byte_counter)
//   on_timer / timer_next  the algorithm's own timer (one event per QP, generation-stamped)
// The hooks a Traits flag turns off are never called, so an algorithm that
// does not use them costs a predictable branch on the hot path; what is
// called is one virtual call per congestion event, never per packet hop
// (the ports read only the marking band, copied out of traits() at start).
// A hook returns a Reaction: the new rate (the NIC applies it, rescaling the
// pacing gap after the QP's last packet) and/or when the timer fires next.
// A window-based algorithm sets Flow::window instead (packets in flight;
// the NIC reads it with its own `window_packets` limit before every packet).
// An algorithm never sees the NIC, the ports or the event queue.
//
// Where to add a congestion control: one header + source in this folder
// with a class deriving from CongestionControl (its header states the model,
// its equations and its source, as dcqcn.hpp does), one line in
// registry.cpp (name, description, factory), one unit test with hand-derived
// expectations beside it (dctcp_test.cpp is the pattern). `network.cc = NAME` then
// selects it and `podnet list` shows it; nothing outside cc/ changes.
//
// Registered today: dcqcn_paper, dcqcn_nic (dcqcn.hpp), dctcp (dctcp.hpp),
// nscc, nscc_median (nscc.hpp), rccc, nscc_rccc (rccc.hpp), hpcc (hpcc.hpp), swift, swift_median (swift.hpp), timely
// (timely.hpp), infiniband (credits, line rate), none (line rate) (line_rate.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/units.hpp"

namespace podnet::engine::packet::cc {

// In-band network telemetry (Traits::int_telemetry, HPCC): what a switch's egress port stamps on a data
// packet as the packet starts to leave. The receiver echoes a packet's stack on the ACK it answers it with.
struct IntHop {
  int64_t ts = 0;        // ps
  int64_t tx_bytes = 0;  // the port's bytes sent before this packet (wire bytes, every class)
  int32_t qlen = 0;      // bytes left in the port's queues (every class) after this packet
  int32_t mbps = 0;      // the port's rate, Mb/s
  int32_t port = -1;     // which port (directed link) stamped it
};
constexpr int kMaxIntHops = 5;  // HPCC's INT header holds 5 hops; a longer path carries none

// Per-QP congestion state: one struct for every algorithm (each uses its
// part), kept inside the NIC's QP next to what the sender reads per packet.
struct Flow {
  double line = 0;  // the QP's NIC line rate (bps)
  // ps: the QP's unloaded round trip (its path's latencies, one data and one ACK serialization per link),
  // and the network links on its path; both set by the NIC.
  int64_t base_rtt = 0;
  int32_t hops = 0;
  double rate = 0;                 // current rate RC: the NIC paces the QP at it (set only by the NIC, from a Reaction)
  uint32_t window = 0;             // > 0: at most this many packets unacknowledged (window-based algorithms set it)
  double cwnd = 0;                 // congestion window in packets, fractional (window-based algorithms)
  double target = 0;               // target rate RT (DCQCN)
  double alpha = 1;                // congestion estimate (DCQCN, DCTCP)
  int64_t t_alpha = 0, t_dec = 0;  // DCQCN: last alpha update, last decrease
  int64_t bytes_since = 0;         // DCQCN: byte counter
  int32_t t_stage = 0, b_stage = 0;
  uint32_t stamp = 0;  // timer generation: a timer event of an older stamp is stale
  bool decreased = false, cnp_seen = false;
  // receiver (notification point)
  bool cnp_once = false;
  int64_t last_cnp = 0;
  uint32_t rx_marked = 0;  // marked data packets since the last ACK/NACK (ECN echo)
  // sender observation window, congestion avoidance (DCTCP)
  uint32_t win_end = 0, win_acked = 0, win_marked = 0;
  bool slow_start = false;
  // NSCC (nscc.hpp): window in bytes, pending increase, delay average (ps), fulfilment and quick-adapt state
  double wnd_bytes = 0, inc = 0, avg_delay = 0, adjust_bytes = 0, qa_bytes = 0, fi_bytes = 0;
  int64_t last_adjust = 0, last_eta = 0, qa_end = 0;
  uint32_t qa_psn = 0;
  bool fast = false, qa_nack = false, qa_armed = false;
  // TIMELY (timely.hpp): the previous round trip (ps, -1 none), the smoothed difference, increases in a row, the
  // time of the last update
  double prev_rtt = -1, rtt_diff = 0;
  uint32_t hai = 0;
  int64_t tl_update = 0;  // ps: its last rate update (the QP's start before the first)
  // the multipath NSCC (nscc.hpp, median_of): the last delay samples (ps) and their marks, a ring
  static constexpr int kMedianSlots = 8;
  std::array<float, kMedianSlots> med_delay{};
  uint8_t med_marks = 0, med_pos = 0, med_n = 0;
  // HPCC (hpcc.hpp): the previous ACK's hops, the utilization estimate U, the reference rate Rc, the
  // increase stage, the PSN whose acknowledgement ends the current round trip (0: no ACK yet).
  std::array<IntHop, kMaxIntHops> int_prev{};
  uint8_t int_n = 0;
  int32_t hp_stage = 0;
  double hp_u = 1, hp_rc = 0;
  uint32_t hp_last = 0;
  bool hp_started = false;
};

// The multipath variants (nscc_median, swift_median): sample x joins the flow's ring of its last k samples
// (k at most Flow::kMedianSlots; it goes to slot f.med_pos, which then advances); returns their upper median.
inline double median_push(Flow& f, double x, int k) {
  k = std::min(k, Flow::kMedianSlots);
  f.med_delay[f.med_pos] = static_cast<float>(x);
  f.med_pos = static_cast<uint8_t>((f.med_pos + 1) % k);
  if (f.med_n < k) ++f.med_n;
  std::array<float, Flow::kMedianSlots> s{};
  std::copy_n(f.med_delay.begin(), f.med_n, s.begin());
  std::nth_element(s.begin(), s.begin() + f.med_n / 2, s.begin() + f.med_n);
  return s[f.med_n / 2];  // the upper median of an even count
}

// What the rest of the engine must do for an algorithm.
struct Traits {
  bool ecn = false;        // switches mark data packets at dequeue (RED: kmin, kmax, pmax on the egress queue)
  double ecn_ref_bps = 0;  // > 0: kmin and kmax scale with port rate / ecn_ref_bps
  Bytes kmin = 0, kmax = 0;
  double pmax = 0;
  bool cnp = false;           // receiver: on_marked decides CNPs; sender: on_cnp
  bool ack_echo = false;      // ACKs/NACKs carry the marked count since the previous one (<= 255); sender: on_feedback
  bool byte_counter = false;  // sender: on_sent for every data packet
  bool credits = false;       // lossless links by credits (InfiniBand): no PFC, no drops
  // The NIC notes each packet's send time and an ACK reports the round trip of the newest packet it
  // covers (Feedback::rtt). A QP then has at most kMaxTimed packets between its oldest unacknowledged
  // and its next.
  bool rtt = false;
  // Packet trimming (Ultra Ethernet): a lossy data packet that a switch would drop is cut to its header
  // and forwarded in the control class; the receiver holds out-of-order packets, NACKs the trimmed PSN
  // and reports how many packets it holds beyond its first hole on every ACK and NACK; the sender
  // resends each NACKed PSN alone (selective) and counts the held packets out of its window.
  bool trim = false;
  // Receiver credits (Ultra Ethernet's RCCC, rccc.hpp; kept in the NIC, nic.hpp): a sender sends only while
  // it holds credit (wire bytes). It starts with credit_bdp x its path's BDP of speculative credit; every
  // data packet tells the receiver how much more it wants (its pull target); the receiving NIC's pacer
  // grants pull_mtus full packets at a time, round robin over its senders, at pull_rate x its line rate.
  // A window-based algorithm beside it (nscc_rccc) also caps each request at its window. Under receiver
  // credits the switch ports into NICs do not mark ECN, and a NACK says whether its packet was trimmed
  // there (Feedback::last_hop; the echoed mark count then stops at 127).
  bool receiver_credits = false;
  // In-band network telemetry (HPCC): switches stamp every data packet at dequeue (IntHop), the receiver
  // acknowledges every data packet and echoes its stack, the sender's on_feedback reads it
  // (Feedback::hops). A QP then has at most its INT slots of packets out (nic.cpp).
  bool int_telemetry = false;
  double pull_rate = 0.99;
  int32_t pull_mtus = 4;
  double credit_bdp = 1.5;
};
constexpr uint32_t kMaxTimed = 2048;
// Receiver credits are counted in quanta of 256 bytes (a pull carries the cumulative count).
constexpr int64_t kPullQuantum = 256;

// What an ACK or NACK tells the sender.
struct Feedback {
  uint32_t acked = 0;                 // packets newly acknowledged (cumulative)
  uint32_t received = 0;              // an ACK: packets newly at the receiver, in order or held beyond a hole
  uint32_t marked = 0;                // the echoed count of ECN-marked data packets
  uint32_t snd_una = 0, snd_nxt = 0;  // the sender's PSNs after the update
  int64_t rtt = -1;                   // ps: round trip of the newest packet acknowledged (Traits::rtt), -1 none
  bool nack = false;                  // a NACK: a hole, or (trimmed) a trimmed packet
  uint32_t psn = 0;                   // a NACK: the PSN it names
  bool trimmed = false;
  bool last_hop = false;  // (receiver_credits) the packet was trimmed at the port into its receiver's NIC
  // (int_telemetry) the stack the answered data packet collected, `nhops` hops (0: none, or over kMaxIntHops)
  const IntHop* hops = nullptr;
  int32_t nhops = 0;
};

// A reaction: rate >= 0 sets the QP's rate; timer >= 0 schedules the
// algorithm's timer at that time (ps) with the flow's current stamp.
struct Reaction {
  double rate = -1;
  int64_t timer = -1;
};

// What an algorithm may know of its environment.
struct Context {
  int32_t mtu = 4096;       // payload bytes per packet
  int32_t header = 82;      // header bytes per data packet on the wire
  int64_t network_rtt = 0;  // ps: the fabric's largest unloaded NIC-to-NIC round trip (0: unknown)
};

class CongestionControl {
 public:
  explicit CongestionControl(Traits t) : traits_(t) {}
  virtual ~CongestionControl() = default;
  const Traits& traits() const { return traits_; }

  // A new QP whose NIC sends at `line` bps: line rate, alpha = initial.
  virtual void init(Flow& f, double line) const {
    f.line = line;
    f.rate = f.target = line;
  }
  // The QP may send from `now` (ps).
  virtual void start(Flow& f, int64_t now) const { f.t_alpha = now; }
  virtual bool on_marked(Flow& /*f*/, int64_t /*now*/) const { return false; }
  virtual Reaction on_cnp(Flow& /*f*/, int64_t /*now*/) const { return {}; }
  virtual Reaction on_feedback(Flow& /*f*/, int64_t /*now*/, const Feedback& /*fb*/) const { return {}; }
  virtual Reaction on_sent(Flow& /*f*/, int64_t /*wire_bytes*/) const { return {}; }
  virtual Reaction on_timer(Flow& /*f*/, int64_t /*now*/) const { return {}; }
  // After on_timer's rate took effect: the next timer time, or -1.
  virtual int64_t timer_next(const Flow& /*f*/, int64_t /*now*/) const { return -1; }

 private:
  Traits traits_;
};

struct Entry {
  const char* name;
  const char* description;
  std::unique_ptr<CongestionControl> (*make)(const Context&);
};
// Every registered algorithm, in `podnet list` order.
const std::vector<Entry>& registry();
// The algorithm registered as `name`; throws InputError listing the names.
std::unique_ptr<CongestionControl> make(std::string_view name, const Context& ctx);

}  // namespace podnet::engine::packet::cc
