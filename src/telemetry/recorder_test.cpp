// Telemetry counters against closed forms and conservation laws, on small
// fabrics of the packet engine (one leaf, 100G hosts: engine/packet/packet_test_util.hpp).
#include "telemetry/recorder.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <sstream>

#include "engine/packet/depth_histogram.hpp"
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
  n.pause_storms.push_back({h.down, Time(10'000'000), Time(1'010'000'000), "storm"});
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
  // PFC off, 300 KB buffer, 8 senders at line rate into one port: the lossy
  // class drops at the receiver's port (engine/packet/switch_buffer.hpp). Every
  // data packet that entered the leaf either left it or was dropped there:
  //   sum over senders' uplinks of data rx = data tx on the receiver's downlink + drops there,
  // every drop is retransmitted (go-back-N resends at least what was lost), and no other port drops.
  const auto t = one_leaf(16);
  PacketOptions opt;
  opt.cc = "none";
  opt.pfc = false;
  opt.buffer_bytes = 300'000;
  PacketSim sim(t, net(), opt);
  for (int s = 1; s <= 8; ++s) add(sim, s, 0, 256 * 1024);
  const Recorder r = record(t, sim);
  const auto down = host_links(t, 0).down;
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
    n.threshold_drifts.push_back({leaf, K, K, 1.0, -1, "step marking"});
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
  const std::string line = "node_network_transmit_bytes_total{node=\"" + t.nodes[nic].name + "\",device=\"" +
                           t.port_name(nic, (up & 1) == 0 ? lk.port_a : lk.port_b) + "\"} 102050\n";
  EXPECT_NE(prom.str().find(line), std::string::npos) << prom.str().substr(0, 2000);
  EXPECT_NE(om.str().find(line), std::string::npos);
  EXPECT_EQ(om.str().substr(om.str().size() - 6), "# EOF\n");
  EXPECT_EQ(prom.str().find("# EOF"), std::string::npos);
  EXPECT_NE(prom.str().find("sonic_interface_receive_bytes_total{"), std::string::npos);
}

}  // namespace
}  // namespace podnet::telemetry
