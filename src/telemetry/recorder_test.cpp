// Telemetry counters against closed forms and conservation laws, on small
// fabrics of the packet engine (one leaf, 100G hosts: engine/packet/packet_test_util.hpp).
#include "telemetry/recorder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <sstream>

#include "engine/backend.hpp"
#include "engine/depth_histogram.hpp"
#include "engine/packet/packet_sim.hpp"
#include "engine/packet/packet_test_util.hpp"
#include "routing/route.hpp"
#include "telemetry/export.hpp"
#include "telemetry/metrics.hpp"
#include "telemetry/test_util.hpp"

namespace podnet::telemetry {
namespace {

using namespace engine::packet;
using namespace engine::packet::testing;
namespace depth = engine::depth;
using testing::record;

// The NIC of GPU rank g and the directed links between it and its leaf.
struct HostLinks {
  routing::DirLink up = -1, down = -1;  // NIC -> leaf, leaf -> NIC
};
HostLinks host_links(const topology::Topology& t, int32_t gpu) {
  HostLinks h;
  for (routing::DirLink d = 0; d < routing::dir_link_count(t); ++d) {
    const auto from = routing::dir_from(d, t), to = routing::dir_to(d, t);
    if (t.nodes[from].kind == topology::NodeKind::Nic && t.nodes[to].kind == topology::NodeKind::Switch &&
        t.nodes[from].local == t.nodes[t.gpus[gpu]].local && t.nodes[from].server == t.nodes[t.gpus[gpu]].server) {
      h.up = d;
      h.down = d ^ 1;
    }
  }
  return h;
}

TEST(DepthHistogram, BucketsAreLogLinearAndInvert) {
  // q < 16: one bucket each. 16 = 2^4: e = 4, sub = 16/2 - 8 = 0 -> bucket 16, floor 16.
  // 31: e = 4, sub = 15 - 8 = 7 -> bucket 23, floor 30. 32: e = 5, sub = 0 -> bucket 24, floor 32.
  // 4178: e = 12, sub = 4178 >> 9 = 8 -> 0 -> bucket 16 + 8 x 8 = 80, floor 8 x 512 = 4096.
  EXPECT_EQ(depth::bucket(15), 15);
  EXPECT_EQ(depth::bucket(16), 16);
  EXPECT_EQ(depth::lower(23), 30);
  EXPECT_EQ(depth::bucket(31), 23);
  EXPECT_EQ(depth::bucket(32), 24);
  EXPECT_EQ(depth::bucket(4178), 80);
  EXPECT_EQ(depth::lower(80), 4096);
  for (int64_t q : {1, 17, 999, 4178, 123456, 16'000'000}) {
    EXPECT_LE(depth::lower(depth::bucket(q)), q);
    EXPECT_GT(depth::lower(depth::bucket(q)), q - q / 8 - 1);
  }
  // 90 ps empty, 9 ps at 1000 B (bucket floor 992: e = 9, sub = (1000 >> 6) - 8 = 7, floor 15 x 64 = 960?
  // no: 1000 >> 6 = 15 -> sub 7 -> floor (8 + 7) << 6 = 960), 1 ps at 5000 B (floor 4608 + ... = 4608:
  // 5000 >> 9 = 9 -> sub 1 -> (8 + 1) << 9 = 4608). T = 100 ps: p90 = 0 (90 % empty), p95 and p99 = 960,
  // p99.5 = 4608.
  std::vector<double> h;
  depth::add(h, 1000, 9);
  depth::add(h, 5000, 1);
  EXPECT_EQ(depth::quantile(h, 100, 0.90), 0);
  EXPECT_EQ(depth::quantile(h, 100, 0.95), 960);
  EXPECT_EQ(depth::quantile(h, 100, 0.99), 960);
  EXPECT_EQ(depth::quantile(h, 100, 0.995), 4608);
}

TEST(Telemetry, PfcStormPauseFramesAndTimeAreClosedForm) {
  // A NIC storms from 10 us to 1010 us on an idle 100G fabric. Pause time
  // Q = 65535 x 512 bit / (100e9 x class efficiency of the link) and the NIC
  // sends a PAUSE at start + k Q/2 while < end:
  //   frames = ceil(1000 us / (Q / 2)).
  // Each frame arrives ser(84 B) + latency later; the next comes after Q/2 < Q,
  // so the port stays paused from start + delay to the XON at end + delay:
  //   paused = end - start = 1000 us exactly.
  const auto t = one_leaf(4);
  const HostLinks h = host_links(t, 1);
  auto n = net();
  n.faults.pause_storms.push_back({h.down, Time(10'000'000), Time(1'010'000'000), "storm"});
  PacketSim sim(t, n, PacketOptions{});
  const Recorder r = record(t, sim);
  const auto& p = r.ports()[h.down];
  EXPECT_EQ(p.pause_tx, p.pause_rx);
  EXPECT_NEAR(p.paused_s, 1000e-6, 1e-12);
  // Q at a 100G Ethernet port (class efficiency 1, engine/link_classes.hpp) = 65535 x 512 / 100e9 s
  // = 335.52 us; frames = ceil(1000 / 167.76) = ceil(5.96) = 6.
  EXPECT_EQ(p.pause_rx, 6u);
  // Every other port is untouched.
  for (const auto& c : r.ports())
    if (c.link != h.down) {
      EXPECT_EQ(c.pause_rx, 0u);
    }
}

TEST(Telemetry, IncastPauseTimeIsBracketedByTheClosedForm) {
  // N senders of S bytes at line rate C into one receiver port of rate C,
  // CC off, PFC on. A sender's uplink is, from its first packet f to the
  // last one leaving it, either sending (S_w / C in all, S_w its wire bytes)
  // or paused, so with F the finish of the last byte at the receiver:
  //   paused <= (F - f) - S_w / C                                   (upper)
  // and the last packet leaves the NIC no earlier than F less the drain of
  // everything still queued behind it at the leaf (at most the receiver
  // port's peak queue Qmax, all in that one queue) and one hop (ser + 0.63 us):
  //   paused >= (F - f) - S_w / C - Qmax / C - 1 us                  (lower)
  // N = 4, S = 512 KiB = 128 packets: S_w = 524,288 + 128 x 82 = 534,784 B, S_w / C = 42.78 us.
  // Without the backlog term the simple share (N - 1) S_w / C = 128.3 us would
  // overstate it by Qmax / C (the pause ends while the leaf still holds data).
  const int N = 4;
  const Bytes S = 512 * 1024;
  const auto t = one_leaf(16);
  PacketOptions opt;
  opt.cc = "none";
  opt.buffer_bytes = 4'000'000;
  PacketSim sim(t, net(), opt);
  for (int s = 1; s <= N; ++s) add(sim, s, 0, S, 0, Time(), static_cast<uint64_t>(s));
  const Recorder r = record(t, sim);
  const double C = 100e9, Sw = 524'288.0 + 128 * 82;
  const auto& down = r.ports()[host_links(t, 0).down];
  double F = 0;
  for (const auto& q : r.qps()) F = std::max(F, q.finish_s);
  for (const auto& q : r.qps()) {
    const auto& up = r.ports()[host_links(t, q.src).up];
    const double upper = (F - q.first_send_s) - Sw * 8 / C;
    const double lower = upper - static_cast<double>(down.queue_max_bytes) * 8 / C - 1e-6;
    EXPECT_LE(up.paused_s, upper) << "sender " << q.src;
    EXPECT_GE(up.paused_s, lower) << "sender " << q.src;
    EXPECT_GT(up.pause_rx, 0u);
    EXPECT_EQ(up.pause_rx, up.pause_tx);  // every PAUSE the leaf sent about the uplink arrived
  }
  // The receiver's port is never paused (nothing pauses a NIC's downlink), holds the queue, drops nothing.
  EXPECT_EQ(down.paused_s, 0.0);
  EXPECT_GT(down.queue_max_bytes, 0);
  EXPECT_EQ(down.drops_buffer, 0u);
  // Its mean queue is below its peak and its p99 between them (time-weighted over the makespan).
  const double mean = down.queue_byte_s / r.observed_s();
  EXPECT_GT(mean, 0.0);
  EXPECT_LE(static_cast<double>(down.queue_p99_bytes), static_cast<double>(down.queue_max_bytes));
  EXPECT_GE(static_cast<double>(down.queue_p99_bytes), mean * 0.875);
}

TEST(Telemetry, LossyIncastDropsAreConserved) {
  // PFC off, CC off, B = 300 KB buffer, 8 senders of 64 packets at line rate into one port: the lossy
  // class drops at the receiver's port (engine/packet/switch_buffer.hpp).
  // Round one, by hand (the admission rule and timing of LossyIncastDropsAreCountedByHand below):
  // B = 71.8 s (s = 4,178 B) holds m = 8 packets (9m - 1 <= 71.8 < 9m + 8). All senders start together,
  // so their packets reach the leaf in eights at t_i = t0 + i tau, in sender order, the port starting a
  // frame at each t_i after them. t_0: one to the wire, 7 queued. A t_i finding 7: senders 1 and 2
  // admitted (one leaves), senders 3..8 dropped (6), 8 left; a t_i finding 8: all 8 dropped, 7 left. So
  // the first drop is at t0 + tau with 8 packets (33,424 B) queued, and t_1, t_3, ... drop 6, t_2, t_4,
  // ... drop 8. Sender 1's PSN 3 (beyond its hole at PSN 2) joins 6 others at t_3 and leaves at t_3 + 7
  // tau; its NACK reaches sender 1 at R = t0 + 11 tau + 3 L + S_sw + 2 c, between its frames starting at
  // f + 15 tau and f + 16 tau (asserted), so the first retransmission (PSN 2) leaves at f + 16 tau and
  // reaches the leaf at t0 + 16 tau (sender 2's NACK comes a tau after sender 1's; senders 3..8 lose
  // every packet after PSN 0, so no NACK: they wait for the RTO). Before it, pairs 1..15 drop
  //   8 x 6 + 7 x 8 = 104.
  // The whole run: every data packet that entered the leaf either left it or was dropped there:
  //   sum over senders' uplinks of data rx = data tx on the receiver's downlink + drops there,
  // every drop is retransmitted (go-back-N resends at least what was lost), and no other port drops.
  const auto t = one_leaf(16);
  PacketOptions opt;
  opt.cc = "none";
  opt.pfc = false;
  opt.buffer_bytes = 300'000;
  PacketSim sim(t, net(), opt);
  for (int s = 1; s <= 8; ++s) add(sim, s, 0, 256 * 1024);
  const auto down = host_links(t, 0).down;
  {
    const int64_t s = 4178, tau = 334'240, c = 6'880;
    ASSERT_LE((9 * 8 - 1) * s, 300'000);
    ASSERT_LT(300'000, (9 * 8 + 8) * s);
    const int64_t L = t.links[routing::link_of(down)].latency.ps, Ssw = t.switch_latency.ps;
    const int64_t f = sim.streams()[0].first_send.ps, t0 = f + tau + L + Ssw;
    for (const auto& q : sim.streams()) ASSERT_EQ(q.first_send.ps, f);
    const int64_t R = t0 + 11 * tau + 3 * L + Ssw + 2 * c;
    ASSERT_GT(R, f + 15 * tau);
    ASSERT_LE(R, f + 16 * tau);
    ASSERT_GT(R + tau, f + 16 * tau);
    const auto none = [](const SimEvent&) {};
    const auto& dp = sim.port_stats()[down];
    sim.run_until(Time(t0 + tau - 1), none);
    EXPECT_EQ(dp.drops, 0u);
    EXPECT_EQ(dp.max_queue, 7 * s);
    sim.run_until(Time(t0 + tau), none);
    EXPECT_EQ(dp.drops, 6u);
    EXPECT_EQ(dp.max_queue, 8 * s);
    sim.run_until(Time(f + 16 * tau - 1), none);
    EXPECT_EQ(sim.stats().retransmits, 0u);
    EXPECT_EQ(sim.stats().nacks, 1u);
    sim.run_until(Time(f + 16 * tau), none);
    EXPECT_EQ(sim.stats().retransmits, 1u);
    sim.run_until(Time(t0 + 16 * tau - 1), none);
    EXPECT_EQ(dp.drops, 104u);
  }
  const Recorder r = record(t, sim);
  uint64_t in = 0, retx = 0;
  for (int s = 1; s <= 8; ++s) {
    const auto& up = r.ports()[host_links(t, s).up];
    in += up.data_packets;  // all arrive (no failure): rx data = tx data on that link
    EXPECT_EQ(up.rx_packets, up.tx_packets);
    retx += up.retransmits;
  }
  const auto& d = r.ports()[down];
  EXPECT_GT(d.drops_buffer, 0u);
  EXPECT_EQ(in, d.data_packets + d.drops_buffer);
  EXPECT_GE(retx, d.drops_buffer);
  EXPECT_EQ(retx, sim.stats().retransmits);
  uint64_t all = 0;
  for (const auto& c : r.ports()) all += c.drops_buffer;
  EXPECT_EQ(all, d.drops_buffer);
  EXPECT_EQ(all, sim.stats().drops);
  EXPECT_EQ(d.pause_rx + d.pause_tx, 0u);
}

TEST(Telemetry, LossyIncastDropsAreCountedByHand) {
  // Incast 2 -> 1, PFC off, CC off (line rate), one 100G leaf with a shared buffer of B bytes. Every full
  // data packet is s = 4,096 + 82 = 4,178 B on the wire and takes tau = 8 s / 100e9 = 334,240 ps.
  //
  // Admission (engine/packet/switch_buffer.hpp, lossy class, no PFC so no headroom or reserve): a packet
  // joining an egress queue of q bytes is dropped if q + s > (B - S) >> 3, S the lossy bytes the switch
  // holds. Here every data byte in the leaf waits in the one queue toward the receiver (bytes are released
  // when a packet starts leaving), so S = q and a queue of m packets still admits one more iff
  //   (m - 1) s + s <= (B - (m - 1) s) / 8  <=>  B >= (9m - 1) s,  and drops it at m packets iff B < (9m + 8) s.
  //   B = 160,000 = 38.3 s: m = 4 (35 s <= B < 44 s).   B = 100,000 = 23.9 s: m = 2 (17 s <= B < 26 s).
  //
  // Arrivals. Sender 1 sends P1 packets from f (its first send), sender 2 P2 < P1 - 1 packets from
  // f + tau / 2. Sender 1's packet i reaches the leaf at a_i = t0 + i tau, t0 = f + tau + L + S_sw (link
  // latency L, switch latency S_sw), sender 2's j at b_j = a_j + tau / 2. The leaf's port starts a frame
  // at every a_i (the first packet found it idle; it stays busy), and an arrival at the same instant is
  // admitted before that frame leaves (the arrival was scheduled first: the (time, sequence) order), so
  // it sees the queue including the packet about to leave. Queue (packets waiting, after each arrival):
  //   a_0: 0 (straight to the wire);  b_j: j + 1;  a_i (0 < i < m): admitted, one leaves: unchanged.
  // So after b_{m-1} the queue holds m packets (the depth at the first drop, m s bytes), a_m finds m:
  // the first drop, sender 1's PSN m at t0 + m tau. From then on every a_i finds m (dropped, then one
  // leaves: m - 1) and every b_i finds m - 1 (admitted: m): sender 1 loses PSNs m .. P2 (a_{P2} still finds
  // the m left by b_{P2-1}), sender 2 nothing. After sender 2 stops, sender 1 alone keeps m - 1 queued:
  // PSNs P2 + 1 .. P1 - 1 pass, and reach the receiver beyond the hole at PSN m.
  //   drops = P2 - m + 1,  out-of-order arrivals = P1 - P2 - 1.
  // First retransmission (go-back-N, engine/packet/nic.hpp): the receiver NACKs the first PSN beyond the
  // hole, P2 + 1, admitted at a_{P2+1} behind m - 2 others, so it leaves the leaf at t0 + (P2 + m) tau,
  // reaches the receiver tau + L later; its NACK (a control packet of max(84, 82 + 4) = 86 B, c = 6,880 ps
  // a hop, packet_sim.hpp §1) crosses two idle ports to sender 1:
  //   R = t0 + (P2 + m + 1) tau + 3 L + S_sw + 2 c,
  // and sender 1 resends at once from PSN m (its port is idle: its last packet left at f + P1 tau <= R,
  // asserted), P1 - m retransmissions. They reach the leaf from R + tau + L + S_sw, after its queue emptied
  // (the last original packet left at t0 + (P1 + m - 2) tau, asserted earlier than that), and one sender at
  // the port's own rate finds it free at every arrival: no drop in round two, no timeout.
  //   retransmissions = P1 - m,  NACKs = 1,  timeouts = 0.
  // B = 160,000, P1 = 12, P2 = 8 (m = 4): 5 drops, 3 out of order, 8 retransmissions;
  // B = 100,000, P1 = 10, P2 = 7 (m = 2): 6 drops, 2 out of order, 8 retransmissions.
  struct Case {
    Bytes buffer;
    int64_t m, p1, p2;
    uint64_t drops, out_of_order, retransmits;
  };
  const int64_t s = 4178, tau = 334'240, c = 6'880;
  for (const Case& k : {Case{160'000, 4, 12, 8, 5, 3, 8}, Case{100'000, 2, 10, 7, 6, 2, 8}}) {
    SCOPED_TRACE(k.buffer);
    ASSERT_LE((9 * k.m - 1) * s, k.buffer);
    ASSERT_LT(k.buffer, (9 * k.m + 8) * s);
    const auto t = one_leaf(4);
    const HostLinks rx = host_links(t, 0), h1 = host_links(t, 1), h2 = host_links(t, 2);
    const int64_t L = t.links[routing::link_of(rx.down)].latency.ps, Ssw = t.switch_latency.ps;
    ASSERT_EQ(t.links[routing::link_of(h1.up)].latency.ps, L);
    ASSERT_EQ(t.links[routing::link_of(h2.up)].latency.ps, L);
    PacketOptions opt;
    opt.cc = "none";
    opt.pfc = false;
    opt.buffer_bytes = k.buffer;
    PacketSim sim(t, net(), opt);
    ASSERT_EQ(sim.data_wire_bytes(), s);
    add(sim, 1, 0, k.p1 * 4096, 0, Time(), 1);
    add(sim, 2, 0, k.p2 * 4096, 0, Time(tau / 2), 2);
    const int64_t f = sim.streams()[0].first_send.ps;
    ASSERT_EQ(sim.streams()[1].first_send.ps, f + tau / 2);
    const int64_t t0 = f + tau + L + Ssw;
    const int64_t first_drop = t0 + k.m * tau;
    const int64_t R = t0 + (k.p2 + k.m + 1) * tau + 3 * L + Ssw + 2 * c;
    ASSERT_LE(f + k.p1 * tau, R);                                     // sender 1 idle when the NACK arrives
    ASSERT_LT(t0 + (k.p1 + k.m - 2) * tau + tau, R + tau + L + Ssw);  // the queue is empty for round two
    const auto none = [](const SimEvent&) {};
    const auto& down = sim.port_stats()[rx.down];
    sim.run_until(Time(first_drop - 1), none);
    EXPECT_EQ(down.drops, 0u);
    EXPECT_EQ(down.max_queue, k.m * s);  // the depth the first drop finds
    sim.run_until(Time(first_drop), none);
    EXPECT_EQ(down.drops, 1u);
    sim.run_until(Time(R - 1), none);
    EXPECT_EQ(down.drops, k.drops);  // every drop of the run happened in round one
    EXPECT_EQ(sim.stats().retransmits, 0u);
    EXPECT_EQ(sim.stats().nacks, 0u);
    sim.run_until(Time(R), none);
    EXPECT_EQ(sim.stats().nacks, 1u);
    EXPECT_EQ(sim.stats().retransmits, 1u);

    const Recorder r = record(t, sim);  // the rest of the run, then the counters an operator scrapes
    const auto& d = r.ports()[rx.down];
    const auto &u1 = r.ports()[h1.up], &u2 = r.ports()[h2.up];
    EXPECT_EQ(d.drops_buffer, k.drops);
    EXPECT_EQ(d.out_of_order, k.out_of_order);
    EXPECT_EQ(d.queue_max_bytes, k.m * s);
    EXPECT_EQ(u1.retransmits, k.retransmits);
    EXPECT_EQ(u2.retransmits, 0u);
    EXPECT_EQ(sim.stats().drops, k.drops);  // no other port dropped
    EXPECT_EQ(sim.stats().retransmits, k.retransmits);
    EXPECT_EQ(sim.stats().nacks, 1u);
    EXPECT_EQ(sim.stats().timeouts, 0u);
    // Conservation: every data packet into the leaf left toward the receiver or was dropped there; the
    // senders put P1 + (P1 - m) and P2 packets on their uplinks; the receiver took P1 + P2 in order.
    EXPECT_EQ(u1.data_packets, static_cast<uint64_t>(k.p1) + k.retransmits);
    EXPECT_EQ(u2.data_packets, static_cast<uint64_t>(k.p2));
    EXPECT_EQ(u1.data_packets + u2.data_packets, d.data_packets + d.drops_buffer);
    EXPECT_GE(u1.retransmits, d.drops_buffer);
    EXPECT_EQ(sim.stats().data_delivered, static_cast<uint64_t>(k.p1 + k.p2));
    EXPECT_EQ(d.data_packets, sim.stats().data_delivered + d.out_of_order);
    for (const auto& q : r.qps()) EXPECT_EQ(q.retransmits, q.src == 1 ? k.retransmits : 0u);
  }
}

TEST(Telemetry, DcqcnMarksOnlyAtTheBottleneckAndCnpsFollowThem) {
  // Incast 4 -> 1 under DCQCN: the only queue is the receiver's port, so
  // every ECN mark is counted there (marking at dequeue on a switch's egress,
  // engine/packet/port.hpp); each CNP is sent by the receiver's NIC for a
  // marked packet, so CNPs <= marks, all CNPs leave on the receiver's uplink,
  // and they equal the CNPs the senders' QPs received.
  const auto t = one_leaf(16);
  PacketOptions opt;
  opt.cc = "dcqcn_nic";
  PacketSim sim(t, net(), opt);
  for (int s = 1; s <= 4; ++s) add(sim, s, 0, 1'000'000, 0, Time(), static_cast<uint64_t>(s));
  const Recorder r = record(t, sim);
  const auto& d = r.ports()[host_links(t, 0).down];
  uint64_t marks = 0, cnps = 0, qp_cnps = 0;
  for (const auto& c : r.ports()) {
    marks += c.ecn_marks;
    cnps += c.cnp_packets;
  }
  for (const auto& q : r.qps()) qp_cnps += q.cnps;
  EXPECT_GT(d.ecn_marks, 0u);
  EXPECT_EQ(marks, d.ecn_marks);
  EXPECT_EQ(marks, sim.stats().ecn_marks);
  const auto& rx_up = r.ports()[host_links(t, 0).up];
  EXPECT_GT(rx_up.cnp_packets, 0u);
  EXPECT_LE(rx_up.cnp_packets, marks);
  EXPECT_EQ(sim.stats().cnps, rx_up.cnp_packets);
  // CNPs cross the leaf: counted again on each sender's downlink; the senders' QPs received them all.
  EXPECT_EQ(cnps, 2 * rx_up.cnp_packets);
  EXPECT_EQ(qp_cnps, rx_up.cnp_packets);
  // FCT: every QP finished after it started.
  for (const auto& q : r.qps()) EXPECT_GT(q.fct_s(), 0.0);
  // The summary's worst ports are those that paused, dropped, trimmed or marked: the receiver's port alone,
  // not the links that only carried CNPs.
  std::ostringstream out;
  write_summary(r, out, 5);
  const std::string text = out.str();
  const size_t at = text.find("worst ports");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin() + static_cast<std::ptrdiff_t>(at), text.end(), '\n'), 2) << text;
  EXPECT_NE(text.find(engine::dir_link_name(t, host_links(t, 0).down), at), std::string::npos) << text;
}

TEST(Telemetry, DcqcnMarksOnceItReactsAreBoundedByTheMeasuredQueueDepths) {
  // Incast 4 -> 1 of 2 MiB each (512 full packets of s = 4,178 B, tau = 334.24 ns at 100 Gb/s) under
  // DCQCN, which reacts: every sender gets CNPs and ends below line rate (asserted). The receiver's port
  // marks a packet leaving with Q bytes of data behind it with p(Q) = 0 (Q <= Kmin), Pmax (Q - Kmin) /
  // (Kmax - Kmin), 1 (Q > Kmax) (engine/packet/port.hpp), so the marks M have the compensator
  // E = sum over departures k of p(Q_k), and M - E is a martingale of variance sum p (1 - p) <= E.
  // E from the port's measured depth histogram (time T_b at depths in bucket b = [lower(b), lower(b+1))):
  //  - upper: the port sends only full data packets and is never paused, so a departure leaving Q_k > 0
  //    starts the next frame tau later, and in between the queue only grows (arrivals): q(t) >= Q_k on
  //    [d_k, d_k + tau), these intervals are disjoint, and p is non-decreasing:
  //      E <= (1/tau) integral p(q(t)) dt <= E_hi = (1/tau) sum_b T_b p(lower(b + 1));
  //  - lower: each sender's packets reach the leaf at least tau apart (its NIC sends at most at line
  //    rate), so at most N = 4 arrive in [d_k, d_k + tau): q(t) <= Q_k + N s; while the port is idle
  //    q = 0 and p(q - N s) = 0:
  //      E >= (1/tau) integral p(q(t) - N s) dt >= E_lo = (1/tau) sum_b T_b p(lower(b) - N s).
  // So M lies in [E_lo - 4 sqrt(E_hi), E_hi + 4 sqrt(E_hi)]. With the paper's absolute band (5 KB -
  // 200 KB, Pmax 1 %) a bucket's two ends differ by under 1/8 in p where the queue sits (tens to hundreds
  // of KB above Kmin); the NIC preset's band (400 KB - 1.6 MB at 100 Gb/s, Pmax 20 %) starts higher, so
  // the bracket is wider. A fixed seed: the check is deterministic; marking against the other class (no
  // marks) or with the band unscaled from its 25 Gb/s reference (100 - 400 KB) moves M by many sigma.
  const int N = 4;
  const double s = 4178, tau = s * 8 / 100e9;
  for (const char* cc : {"dcqcn_paper", "dcqcn_nic"}) {
    SCOPED_TRACE(cc);
    const auto t = one_leaf(16);
    PacketOptions opt;
    opt.cc = cc;
    opt.buffer_bytes = 16'000'000;  // room for the queue: no PFC pause anywhere
    PacketSim sim(t, net(), opt);
    for (int i = 1; i <= N; ++i) add(sim, i, 0, 2 * 1024 * 1024, 0, Time(), static_cast<uint64_t>(i));
    const Recorder r = record(t, sim);
    const auto& d = r.ports()[host_links(t, 0).down];
    ASSERT_EQ(d.paused_s, 0.0);
    ASSERT_EQ(d.drops_buffer, 0u);
    ASSERT_EQ(d.data_packets, static_cast<uint64_t>(N) * 512);  // all full: 2 MiB = 512 x 4,096
    for (const auto& q : r.qps()) {
      EXPECT_GT(q.cnps, 0u) << q.src;
      EXPECT_LT(q.final_rate_bps, 100e9) << q.src;
    }
    const auto p = [&](double q) {
      if (q <= static_cast<double>(d.ecn_kmin)) return 0.0;
      if (q > static_cast<double>(d.ecn_kmax)) return 1.0;
      return d.ecn_pmax * (q - static_cast<double>(d.ecn_kmin)) / static_cast<double>(d.ecn_kmax - d.ecn_kmin);
    };
    double lo = 0, hi = 0;
    for (size_t b = 0; b < d.queue_hist_s.size(); ++b) {
      const auto bucket = static_cast<int32_t>(b);
      lo += d.queue_hist_s[b] / tau * p(static_cast<double>(depth::lower(bucket)) - N * s);
      hi += d.queue_hist_s[b] / tau * p(static_cast<double>(depth::lower(bucket + 1)));
    }
    const auto m = static_cast<double>(d.ecn_marks);
    EXPECT_GT(lo, 100.0);  // enough marks for the bound to say something
    EXPECT_GE(m, lo - 4 * std::sqrt(hi)) << lo << " - " << hi;
    EXPECT_LE(m, hi + 4 * std::sqrt(hi)) << lo << " - " << hi;
    EXPECT_EQ(sim.stats().ecn_marks, d.ecn_marks);  // the only queue
  }
}

TEST(Telemetry, StepMarkingIncastMarksACountedNumberOfPackets) {
  // Incast 2 -> 1 of N = 8 full packets each (8 x 4,096 B) at 100 Gb/s under DCQCN, the leaf marking in a
  // step: every data packet leaving its egress with more than K = 3.5 packets (14,623 B) of data queued
  // behind it, none below (a drift with kmin = kmax = K, pmax 1: no random draw; packet_sim.hpp §12).
  // Both senders' packets reach the leaf in pairs every tau = 4,178 x 8 / 100e9 = 334.24 ns. At pair i
  // the first packet finds the port free (its previous frame ends exactly then: arrivals were scheduled
  // before the port's wake-up), so the port starts the oldest queued packet and leaves c = i behind
  // (i = 0 .. N-1); the second joins the queue. Then the backlog drains leaving N-1, ..., 0 behind. So
  // 2N departures leave c = 0..N-1 and N-1..0 packets behind; marked when c x 4,178 > 14,623, i.e.
  // c >= 4: 2 (N - 4) = 8 marks, all on the leaf's port to the receiver, none elsewhere.
  // DCQCN cannot change this: the first CNP reaches a sender no earlier than 6 tau + 4 L + 2 S after the
  // start (checked below) and the senders' last packets leave at 7 tau.
  const auto t = one_leaf(4);
  const HostLinks rx = host_links(t, 0);
  const topology::NodeId leaf = routing::dir_from(rx.down, t);
  const int64_t tau = Time::from_seconds(4178 * 8 / 100e9).ps;
  const int64_t L = t.links[routing::link_of(rx.down)].latency.ps, S = t.switch_latency.ps;
  ASSERT_GT(6 * tau + 4 * L + 2 * S, 7 * tau);
  // K = 3.5 packets: c >= 4, 2 (8 - 4) = 8 marks; K = 1.5 packets (6,267 B): c >= 2, 2 (8 - 2) = 12.
  for (const auto& [K, want] : {std::pair<int64_t, uint64_t>{14'623, 8}, {6'267, 12}}) {
    auto n = net();
    n.faults.threshold_drifts.push_back({leaf, K, K, 1.0, -1, "step marking"});
    PacketOptions opt;
    opt.cc = "dcqcn_nic";
    PacketSim sim(t, n, opt);
    add(sim, 1, 0, 8 * 4096, 0, Time(), 1);
    add(sim, 2, 0, 8 * 4096, 0, Time(), 2);
    const Recorder r = record(t, sim);
    EXPECT_EQ(r.ports()[rx.down].ecn_marks, want) << K;
    EXPECT_EQ(sim.stats().ecn_marks, want) << K;
    EXPECT_EQ(r.ports()[rx.down].queue_max_bytes, 8 * 4178);  // the pair's second joins N - 1 queued: N packets
    EXPECT_EQ(r.ports()[rx.down].drops_buffer, 0u);
  }
}

TEST(Metrics, NamesLabelsAndFlavours) {
  // One flow 1 -> 0: the metrics carry its bytes under the exporters' names.
  const auto t = one_leaf(4);
  PacketSim sim(t, net(), PacketOptions{});
  add(sim, 1, 0, 100'000);
  const Recorder r = record(t, sim);
  std::ostringstream prom, om;
  write_metrics(r, Flavour::Prometheus, prom);
  write_metrics(r, Flavour::OpenMetrics, om);
  // 100,000 B = 24 packets of 4096 + 1 of 1696: wire bytes = 100,000 + 25 x 82 = 102,050 on the NIC uplink.
  EXPECT_NE(prom.str().find("# TYPE node_network_transmit_bytes_total counter"), std::string::npos);
  EXPECT_NE(om.str().find("# TYPE node_network_transmit_bytes counter"), std::string::npos);
  EXPECT_NE(om.str().find("# UNIT node_network_transmit_bytes bytes"), std::string::npos);
  const auto up = host_links(t, 1).up;
  const auto& lk = t.links[routing::link_of(up)];
  const auto nic = (up & 1) == 0 ? lk.a : lk.b;
  // The node is the NIC's server (a host's node_exporter scrape), not the NIC: "gpu-node-1", not ".../nic0".
  EXPECT_EQ(t.device_name(nic).find('/'), std::string::npos) << t.device_name(nic);
  EXPECT_EQ(t.device_name(nic), t.device_name(t.gpus[1]));
  const std::string line = "node_network_transmit_bytes_total{node=\"" + t.device_name(nic) + "\",device=\"" +
                           t.port_name(nic, (up & 1) == 0 ? lk.port_a : lk.port_b) + "\"} 102050\n";
  EXPECT_NE(prom.str().find(line), std::string::npos) << prom.str().substr(0, 2000);
  EXPECT_NE(om.str().find(line), std::string::npos);
  EXPECT_EQ(om.str().substr(om.str().size() - 6), "# EOF\n");
  EXPECT_EQ(prom.str().find("# EOF"), std::string::npos);
  EXPECT_NE(prom.str().find("sonic_interface_receive_bytes_total{"), std::string::npos);
  // The leaf's port is named as SONiC names it (Ethernet<8p>, the config plan's PORT key), its alias beside it.
  const auto leaf = (up & 1) == 0 ? lk.b : lk.a;
  const int32_t port = (up & 1) == 0 ? lk.port_b : lk.port_a;
  const std::string dev = "node=\"" + t.nodes[leaf].name + "\",device=\"Ethernet" + std::to_string(8 * port) + "\"";
  EXPECT_NE(prom.str().find("sonic_interface_receive_bytes_total{" + dev + "} 102050\n"), std::string::npos)
      << prom.str();
  EXPECT_NE(prom.str().find("sonic_interface_info{" + dev + ",alias=\"Ethernet1/" + std::to_string(port + 1) +
                            "\"} 1\n"),
            std::string::npos);
  // node_exporter's ethtool statistics: its own names, untyped, no _total.
  EXPECT_NE(prom.str().find("# TYPE node_ethtool_received_prio3_pause untyped"), std::string::npos);
  EXPECT_NE(om.str().find("# TYPE node_ethtool_received_prio3_pause unknown"), std::string::npos);
  EXPECT_EQ(prom.str().find("node_ethtool_received_prio3_pause_total"), std::string::npos);
}

// Only the ports that carried something are written (an 8-GPU incast on leafspine-8k wrote 745,474 samples,
// 745,392 of them zero: every port of the fabric), unless all_ports. One flow 1 -> 0 under one leaf crosses two
// links: 4 interfaces (NIC 1, its leaf port, the leaf port to NIC 0, NIC 0) of the fabric's 2 per network link.
TEST(Metrics, OnlyThePortsThatCarriedTraffic) {
  const auto t = one_leaf(4);
  PacketSim sim(t, net(), PacketOptions{});
  add(sim, 1, 0, 100'000);
  const Recorder r = record(t, sim);
  int64_t network_links = 0;
  for (const auto& l : t.links)
    network_links += l.media == topology::Media::Copper || l.media == topology::Media::Optical ? 1 : 0;
  const PortCoverage some = port_coverage(r, false), all = port_coverage(r, true);
  EXPECT_EQ(some.ports, 2 * network_links);
  EXPECT_EQ(some.written, 4);
  EXPECT_EQ(all.written, all.ports);
  const auto count = [](const std::string& text, const std::string& what) {
    int64_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  std::ostringstream few, every;
  write_metrics(r, Flavour::Prometheus, few);
  write_metrics(r, Flavour::Prometheus, every, true);
  // NIC families: the two NICs that sent or received; with all_ports the 4 hosts' NICs.
  EXPECT_EQ(count(few.str(), "node_network_transmit_bytes_total{"), 2);
  EXPECT_EQ(count(every.str(), "node_network_transmit_bytes_total{"), 4);
  // Every port family: one sample per interface written.
  EXPECT_EQ(count(few.str(), "podnet_port_paused_seconds_total{"), 4);
  EXPECT_EQ(count(every.str(), "podnet_port_paused_seconds_total{"), all.ports);
  // The idle NICs (hosts 2 and 3) are absent, the busy one's bytes as before.
  const auto up = host_links(t, 1).up;
  const auto& lk = t.links[routing::link_of(up)];
  const auto nic = (up & 1) == 0 ? lk.a : lk.b;
  EXPECT_NE(few.str().find("node_network_transmit_bytes_total{node=\"" + t.device_name(nic)), std::string::npos);
}

}  // namespace
}  // namespace podnet::telemetry
