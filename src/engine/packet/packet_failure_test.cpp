// Failures injected into the packet engine (failures.hpp,
// packet_sim.hpp §10): degraded links, dead links and their repair, job
// failures, stragglers, drains; cross-checked against the flow engine on the
// same plan. Expected values are derived in each test's comment.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/flow/flow_backend.hpp"
#include "engine/packet/packet_backend.hpp"
#include "engine/packet/packet_test_util.hpp"
#include "engine/registry.hpp"
#include "engine/test_util.hpp"

namespace podnet::engine::packet {
namespace {

using namespace podnet::literals;
using namespace testing;
using engine::testing::event;
using engine::testing::nic_link;
using engine::testing::p2p_plan;

// 32 single-NIC hosts at 100 Gb/s, radix-8 switches: 8 leaves of 4 hosts, 4
// spines, one 100G link from every leaf to every spine (no twins).
const topology::Topology& fabric32() {
  static const topology::Topology t = topology::build_with("fat_tree", {{"gpus", "32"}}, hw100(8));
  return t;
}

// The base (ECMP) route of QP 0 of a transfer src -> dst (the one the engine uses).
std::vector<routing::PathPart> base_route(const topology::Topology& t, const NetworkOptions& o, int32_t src,
                                          int32_t dst) {
  PacketSim sim(t, o, PacketOptions{});
  std::vector<routing::PathPart> r;
  sim.route(src, dst, 0, r);
  return r;
}

// The leaf -> spine link on that route.
topology::LinkId uplink_on_path(const topology::Topology& t, const NetworkOptions& o, int32_t src, int32_t dst) {
  for (const auto& p : base_route(t, o, src, dst)) {
    const auto from = routing::dir_from(p.link, t), to = routing::dir_to(p.link, t);
    if (t.nodes[from].tier == 1 && t.nodes[to].tier == 2) return routing::link_of(p.link);
  }
  return -1;
}

TEST(PacketFailures, DegradedLinkAtTimeZeroHalvesTheRate) {
  // One_leaf(4), host 0 -> host 1, S = 1,000,000 B: 244 packets of 4096 B + one
  // of 576 B; path gpu -PCIe-> nic -3 m copper-> leaf -> nic -PCIe-> gpu; the
  // NIC starts at 5.5 us (derivation in PacketSim.OneFlowOnAnIdlePath...).
  // Host 0's NIC link drops to 50 Gb/s at time 0: ser(4178 B) = 668,480 ps,
  // ser(658 B) = 105,280 ps there; the leaf still forwards at 100G (334,240 ps),
  // so it never queues. Packet 243 leaves the NIC at 5.5 us + 243 x 668,480 and
  // reaches the leaf 668,480 + 615,000 later; packet 244 arrives 105,280 after
  // it and waits for it to leave (334,240): finish =
  //   5,500,000 + 244 x 668,480 + 615,000 + 334,240 + 52,640 + 15,000 + 510,067
  //   = 170,136,067 ps (510,067: PCIe suffix, 500 ns + 576 B at 457.728 Gb/s),
  // the fault-free 88,581,507 plus the 244 full frames' extra 244 x 334,240:
  // 1.92x (the serialization doubles, the 7 us of latency does not).
  const auto topo = one_leaf(4);
  const plan::TransferPlan plan = p2p_plan({{0, 1}}, 1'000'000);
  NetworkOptions o = net();
  const topology::LinkId l = nic_link(topo, 0);
  ASSERT_GE(l, 0);
  FailureEvent e = event(Time(), FailureAction::Degrade, {l}, "slow nic");
  e.rate = Bandwidth(50e9);
  o.faults.failures.events.push_back(e);
  PacketBackend backend(topo, o);
  const RunReport r = backend.run(plan);
  EXPECT_FALSE(r.job_failed);
  EXPECT_EQ(r.makespan.ps, 170'136'067);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].what, "slow nic");
  // The payload capacity reported follows: 50G x 4096 / 4178.
  EXPECT_DOUBLE_EQ(backend.last_run()->payload_capacity_bps(2 * l), 50e9 * 4096 / 4178);
  // The flow engine: 6.63 us + 8e6 / (50e9 x 4096/4178) = 169.833 us; the packet
  // engine is one store-and-forward frame at the leaf later (< 334 + 53 ns).
  const RunReport f = flow::FlowBackend(topo, o).run(plan);
  EXPECT_NEAR(r.makespan.us(), f.makespan.us(), 0.334240 + 0.052640);
}

// Fault-free and failed runs of one plan on both engines.
struct Pair {
  RunReport base, failed;
};
Pair packet_runs(const topology::Topology& t, const plan::TransferPlan& plan, NetworkOptions o, const FailureEvent& e,
                 SimStats* stats = nullptr) {
  Pair p;
  p.base = PacketBackend(t, o).run(plan);
  o.faults.failures.events.push_back(e);
  PacketBackend b(t, o);
  p.failed = b.run(plan);
  if (stats) *stats = b.last_run()->stats();
  return p;
}
Pair flow_runs(const topology::Topology& t, const plan::TransferPlan& plan, NetworkOptions o, const FailureEvent& e) {
  Pair p;
  p.base = flow::FlowBackend(t, o).run(plan);
  o.faults.failures.events.push_back(e);
  p.failed = flow::FlowBackend(t, o).run(plan);
  return p;
}

TEST(PacketFailures, UplinkDownMidTransferAdaptive) {
  // Host 0 (leaf 0) -> host 4 (leaf 1), S = 40,000,000 B (9,766 packets, T0 =
  // 3.27 ms at 100G x 4096/4178), adaptive routing. At t_f = 0.5 ms the leaf-0
  // uplink of the QP's base (ECMP) path dies; it is an uplink, so leaf 0
  // repairs it alone at t_f + L (L = local_repair = 1 ms).
  // Loss: packets reach leaf 0 every ser = 334,240 ps and each frame ends just
  // as the next arrives, so all 4 uplinks look idle and adaptive ties go
  // round-robin: a quarter of the L / ser = 2,991.9 packets of the blackout go
  // to the dead port, 748, plus at most one frame on its 30 m wire.
  // Recovery: PFC makes the class lossless, so a hole is reordering (no NACK)
  // and the RTO catches it: 1 ms + 2 x 320 us (a radix-8 switch buffers 8 x
  // 100G x 40 us = 4 MB, drained at 100G in 320 us) = 1.64 ms after the last
  // ACK, i.e. at ~t_f + 1.64 ms < T0: the sender still has new data. It goes
  // back to its oldest unacknowledged packet and resends the blackout's span
  // (L of sending time, a bit more: the ACKs of the last RTT before t_f return
  // over the dead link) and jumps ahead when the receiver, whose reorder
  // buffer holds the rest, acknowledges everything. Every byte after the
  // repair crosses once, so T - T0 = L + about 2 RTT + the 8-packet ACK
  // cadence; RTT ~ 5.6 us (data: 4 frames of 334 ns, 3 switches of 600 ns,
  // 2 x 15 + 2 x 150 ns of wire; the ACK back ~2.1 us): L <= T - T0 <= L + 20 us.
  // The flow engine on the same plan and options: a lone adaptive flow takes
  // the ECMP path (all loads 0, ties by the ECMP hash), stalls for L, then
  // resumes at full rate on another spine: T = T0 + L exactly. Its T0 is ~1 us
  // shorter (no store-and-forward of the last frame at 3 switches), so the
  // engines agree within 1.1 + 20 us (0.6 % of T).
  const auto& t = fabric32();
  const plan::TransferPlan plan = p2p_plan({{0, 4}}, 40'000'000);
  const NetworkOptions o = net("adaptive");
  const topology::LinkId up = uplink_on_path(t, o, 0, 4);
  ASSERT_GE(up, 0);
  const Time tf = 500_us, L = o.faults.failures.local_repair;
  const FailureEvent e = event(tf, FailureAction::Down, {up}, "leaf uplink");
  SimStats st;
  const Pair p = packet_runs(t, plan, o, e, &st);
  ASSERT_GT(p.base.makespan, tf + 1640_us + L);  // the RTO fires while there is new data
  EXPECT_FALSE(p.failed.job_failed) << p.failed.failure;
  const Time extra = p.failed.makespan - p.base.makespan;
  EXPECT_GE(extra, L);
  EXPECT_LE(extra, L + 20_us);
  EXPECT_GE(st.lost, 747u);
  EXPECT_LE(st.lost, 750u);
  EXPECT_GE(st.timeouts, 1u);
  ASSERT_EQ(p.failed.failures.size(), 1u);
  EXPECT_EQ(p.failed.failures[0].flows_rerouted, 1);
  EXPECT_EQ(p.failed.failures[0].repaired, tf + L);

  const Pair f = flow_runs(t, plan, o, e);
  EXPECT_NEAR(f.failed.makespan.us(), (f.base.makespan + L).us(), 1e-3);  // remaining bytes rounded to 1 B
  EXPECT_NEAR(p.failed.makespan.us(), f.failed.makespan.us(), 21.1);
}

TEST(PacketFailures, UplinkDownMidTransferEcmp) {
  // As above with ECMP: the QP's only path dies, so every packet reaching
  // leaf 0 during the blackout is lost (L / ser = 2,991.9), plus the frame on
  // the wire at t_f and the ~3 frames between the NIC and leaf 0 when the QP
  // moves at t_f + L (they follow the old path: 0.33 + 0.015 + 0.6 us each way).
  // The first packet on the new path reaches the receiver out of order: it
  // NACKs at once (go-back-N), so the sender goes back ~1 RTT after the repair
  // to its oldest unacknowledged packet (~1 RTT before t_f): T - T0 = L + ~2 RTT,
  // no RTO. The flow engine: T0 + L, as above.
  const auto& t = fabric32();
  const plan::TransferPlan plan = p2p_plan({{0, 4}}, 40'000'000);
  const NetworkOptions o = net("ecmp");
  const Time tf = 500_us, L = o.faults.failures.local_repair;
  const FailureEvent e = event(tf, FailureAction::Down, {uplink_on_path(t, o, 0, 4)}, "leaf uplink");
  SimStats st;
  const Pair p = packet_runs(t, plan, o, e, &st);
  EXPECT_FALSE(p.failed.job_failed) << p.failed.failure;
  const Time extra = p.failed.makespan - p.base.makespan;
  EXPECT_GE(extra, L);
  EXPECT_LE(extra, L + 20_us);
  EXPECT_GE(st.lost, 2991u);
  EXPECT_LE(st.lost, 2998u);
  EXPECT_EQ(st.timeouts, 0u);
  EXPECT_GE(st.nacks, 1u);
  const Pair f = flow_runs(t, plan, o, e);
  EXPECT_NEAR(f.failed.makespan.us(), (f.base.makespan + L).us(), 1e-3);  // remaining bytes rounded to 1 B
  EXPECT_NEAR(p.failed.makespan.us(), f.failed.makespan.us(), 21.1);
}

TEST(PacketFailures, RepairSlowerThanTheTimeoutFailsTheJob) {
  // local_repair 40 s > collective_timeout 30 s: the stream crossing the dead
  // uplink would stall 40 s, so the job stops when the collective gives up, at
  // t_f + 30 s; the transfer never finishes.
  const auto& t = fabric32();
  const plan::TransferPlan plan = p2p_plan({{0, 4}}, 4'000'000);
  NetworkOptions o = net("ecmp");
  o.faults.failures.local_repair = Time::from_seconds(40);
  o.faults.failures.events.push_back(event(100_us, FailureAction::Down, {uplink_on_path(t, o, 0, 4)}, "uplink"));
  const RunReport r = PacketBackend(t, o).run(plan);
  EXPECT_TRUE(r.job_failed);
  EXPECT_EQ(r.failed_at, 100_us + o.faults.failures.collective_timeout);
  EXPECT_EQ(r.makespan, r.failed_at);
  EXPECT_EQ(r.transfers[0].finish, Time());
  EXPECT_NE(r.failure.find("collective timeout"), std::string::npos) << r.failure;
}

TEST(PacketFailures, AStreamStartingOnADeadUplinkBeyondTheTimeoutFailsTheJob) {
  // The uplink dies at time 0, before the transfer starts (it waits for a 1 ms compute): nothing runs at
  // the failure. The stream then starts on the dead uplink at 1 ms, which leaf 0 routes around only at
  // 0 + local_repair = 40 s: a stall of 39.999 s > 30 s, so the job fails at 1 ms + 30 s.
  const auto& t = fabric32();
  const plan::TransferPlan plan = engine::testing::compute_then_p2p(0, 4, 1_ms, 4'000'000);
  NetworkOptions o = net("ecmp");
  o.faults.failures.local_repair = Time::from_seconds(40);
  o.faults.failures.events.push_back(event(Time(), FailureAction::Down, {uplink_on_path(t, o, 0, 4)}, "uplink"));
  const RunReport r = PacketBackend(t, o).run(plan);
  EXPECT_TRUE(r.job_failed);
  EXPECT_EQ(r.failed_at, 1_ms + o.faults.failures.collective_timeout);
  EXPECT_NE(r.failure.find("would stall 39.999s"), std::string::npos) << r.failure;
}

TEST(PacketFailures, LostNicLinkFailsTheJobAtTheTimeout) {
  // Host 4's only NIC link dies at t_f = 100 us. Neither direction can be
  // repaired locally (a NIC, a downlink without twin): at t_f + convergence
  // routing forgets the link and the stream has no route left, so the job
  // fails when the collective times out, at t_f + 30 s. (convergence is cut
  // to 100 us so the test simulates little; the failure time does not depend
  // on it.) Meanwhile the sender keeps sending at line rate into the dead
  // port: 100 us / 334,240 ps = 299.2 packets, plus at most 2 frames queued or
  // on the wire at t_f.
  const auto& t = fabric32();
  const plan::TransferPlan plan = p2p_plan({{0, 4}}, 4'000'000);
  NetworkOptions o = net("ecmp");
  o.faults.failures.convergence = 100_us;
  const topology::LinkId l = nic_link(t, 4);
  ASSERT_GE(l, 0);
  o.faults.failures.events.push_back(event(100_us, FailureAction::Down, {l}, "nic 4"));
  PacketBackend b(t, o);
  const RunReport r = b.run(plan);
  EXPECT_TRUE(r.job_failed);
  EXPECT_EQ(r.failed_at, 100_us + o.faults.failures.collective_timeout);
  EXPECT_NE(r.failure.find("no route"), std::string::npos) << r.failure;
  EXPECT_GE(b.last_run()->stats().lost, 299u);
  EXPECT_LE(b.last_run()->stats().lost, 302u);
}

TEST(PacketFailures, StopEndsTheRunAtOnce) {
  // A GPU fails at 100 us in the middle of a 326 us transfer: the job stops
  // there; the transfer never finishes.
  const auto& t = fabric32();
  const plan::TransferPlan plan = p2p_plan({{0, 4}}, 4'000'000);
  NetworkOptions o = net();
  FailureEvent e = event(100_us, FailureAction::Stop, {}, "gpu 2");
  e.gpu = 2;
  o.faults.failures.events.push_back(e);
  const RunReport r = PacketBackend(t, o).run(plan);
  EXPECT_TRUE(r.job_failed);
  EXPECT_EQ(r.failed_at, 100_us);
  EXPECT_EQ(r.makespan, 100_us);
  EXPECT_EQ(r.failure, "gpu 2 failed: the job stops (restart from the last checkpoint)");
  EXPECT_EQ(r.transfers[0].finish, Time());
  ASSERT_EQ(r.failures.size(), 1u);
}

TEST(PacketFailures, ATransferStartingWithNoRouteTimesOut) {
  // Host 4's NIC link dies at 10 us and routing forgets it at 10 us + convergence
  // (100 us here); a transfer to host 4 that starts after that (it follows a
  // 1 ms compute) finds no path: the job fails when its collective times out,
  // at 1 ms + 30 s, as in the flow engine (FailureDriver).
  const auto& t = fabric32();
  plan::TransferPlan plan = engine::testing::compute_then_p2p(0, 4, 1_ms, 1'000'000);
  plan.transfers[1].label = "send to 4";
  NetworkOptions o = net();
  o.faults.failures.convergence = 100_us;
  o.faults.failures.events.push_back(event(10_us, FailureAction::Down, {nic_link(t, 4)}, "nic"));
  const RunReport r = PacketBackend(t, o).run(plan);
  EXPECT_TRUE(r.job_failed);
  EXPECT_EQ(r.failed_at, 1_ms + o.faults.failures.collective_timeout);
  EXPECT_EQ(r.makespan, r.failed_at);
  EXPECT_EQ(r.failure.rfind("send to 4: no route after the failures", 0), 0u) << r.failure;
  EXPECT_EQ(r.failed_transfer, 1);
}

TEST(PacketFailures, StragglerSlowsTheComputesItStarts) {
  // A: compute on ranks {2, 3}, 10 ms; then B on {3} and C on {2}, 10 ms each.
  // GPU 3 is slowed 1.5x at time 0 (this applies to the first compute) and 2x
  // at 5 ms (A has started: unchanged). A: the slowest rank sets the pace,
  // 15 ms; B starts at 15 ms at 2x: 35 ms; C is not slowed: 25 ms. Same in the
  // flow engine.
  const auto& t = fabric32();
  plan::TransferPlan plan;
  plan::Transfer a;
  a.kind = plan::TransferKind::Compute;
  a.ranks = {2, 3};
  a.duration = 10_ms;
  const int32_t ai = plan.add(a);
  plan::Transfer b = a;
  b.ranks = {3};
  b.deps = {ai};
  const int32_t bi = plan.add(b);
  plan::Transfer c = b;
  c.ranks = {2};
  const int32_t ci = plan.add(c);
  NetworkOptions o = net();
  FailureEvent s0 = event(Time(), FailureAction::Slow, {}, "gpu 3");
  s0.gpu = 3;
  s0.factor = 1.5;
  FailureEvent s1 = s0;
  s1.at = 5_ms;
  s1.factor = 2.0;
  o.faults.failures.events = {s0, s1};
  for (const char* engine : {"packet", "flow"}) {
    const RunReport r = make_backend(engine, t, o)->run(plan);
    EXPECT_EQ(r.transfers[ai].finish, 15_ms) << engine;
    EXPECT_EQ(r.transfers[bi].finish, 35_ms) << engine;
    EXPECT_EQ(r.transfers[ci].finish, 25_ms) << engine;
    EXPECT_EQ(r.makespan, 35_ms) << engine;
    EXPECT_EQ(r.failures.size(), 2u) << engine;
  }
}

TEST(PacketFailures, DrainMovesStreamsWithoutLoss) {
  // Hosts 0..3 (leaf 0) each send S = 10 MB to hosts 4..7 (leaf 1), adaptive:
  // leaf 0's 4 uplinks carry the 4 x 100G. At t_f = 300 us the spine on QP 0's
  // base path is drained: routing forgets its links and the QPs using them
  // move at once; packets already queued at or heading for its ports still
  // cross them. So nothing is lost (no drop, no retransmission, no RTO).
  // The drained uplink of leaf 0 carries nothing new after t_f: at most
  // t_f x its payload rate, plus what was queued at it.
  // After t_f, 4 x 100G share 3 uplinks: every flow gets 3/4. The flow
  // engine's picture of per-packet balancing is spray (each flow split
  // equally over the live uplinks): T = t_f + (4/3)(T0 - t_f). The packet
  // engine resolves the 4:3 congestion with PFC and DCQCN; its transient
  // costs some throughput: within 10 % (the tolerance of the fault-free
  // congestion cross-checks, packet_backend_test.cpp).
  const auto& t = fabric32();
  const plan::TransferPlan plan = p2p_plan({{0, 4}, {1, 5}, {2, 6}, {3, 7}}, 10'000'000);
  const NetworkOptions o = net("adaptive");
  const topology::LinkId up = uplink_on_path(t, o, 0, 4);
  ASSERT_GE(up, 0);
  const topology::NodeId spine = t.links[up].b;
  ASSERT_EQ(t.nodes[spine].tier, 2);
  auto [lb, le] = t.incident(spine);
  const std::vector<topology::LinkId> links(lb, le);
  // QPs whose base path touches the spine (per-packet policies: either direction).
  int64_t touching = 0;
  for (int32_t s = 0; s < 4; ++s)
    for (const auto& p : base_route(t, o, s, s + 4))
      if (std::find(links.begin(), links.end(), routing::link_of(p.link)) != links.end()) {
        ++touching;
        break;
      }
  const Time tf = 300_us;
  const FailureEvent e = event(tf, FailureAction::Drain, links, "drain spine");
  NetworkOptions with = o;
  with.faults.failures.events.push_back(e);
  PacketBackend b(t, with);
  const RunReport r = b.run(plan);
  const SimStats& st = b.last_run()->stats();
  EXPECT_FALSE(r.job_failed) << r.failure;
  EXPECT_EQ(st.lost + st.lost_ctrl, 0u);
  EXPECT_EQ(st.drops, 0u);
  EXPECT_EQ(st.retransmits, 0u);
  EXPECT_EQ(st.timeouts, 0u);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_GE(touching, 1);
  EXPECT_EQ(r.failures[0].flows_rerouted, touching);
  const routing::DirLink d = routing::dir_link(up, t.links[up].a, t);  // leaf 0 -> spine
  const PortStats& ps = b.last_run()->port_stats()[d];
  EXPECT_LE(ps.payload_bytes, tf.seconds() * b.last_run()->payload_capacity_bps(d) / 8 + ps.max_queue);
  EXPECT_GT(ps.payload_bytes, 0);

  const Pair f = flow_runs(t, plan, net("spray"), e);
  const double expect = tf.seconds() + 4.0 / 3.0 * (f.base.makespan - tf).seconds();
  EXPECT_NEAR(f.failed.makespan.seconds(), expect, 1e-9);
  EXPECT_NEAR(r.makespan.seconds(), expect, 0.10 * expect);
  EXPECT_GT(r.makespan, PacketBackend(t, o).run(plan).makespan);
}

TEST(PacketFailures, EventsAfterTheJobAreNotApplied) {
  // A link dies 1 ms after the only transfer finished: nothing is applied.
  const auto& t = fabric32();
  const plan::TransferPlan plan = p2p_plan({{0, 4}}, 1'000'000);
  NetworkOptions o = net();
  const RunReport base = PacketBackend(t, o).run(plan);
  o.faults.failures.events.push_back(
      event(base.makespan + 1_ms, FailureAction::Down, {uplink_on_path(t, o, 0, 4)}, "late"));
  const RunReport r = PacketBackend(t, o).run(plan);
  EXPECT_FALSE(r.job_failed);
  EXPECT_TRUE(r.failures.empty());
  EXPECT_EQ(r.makespan, base.makespan);
}

TEST(PacketFailures, RunsTwiceIdentically) {
  // Down, Degrade and Up in one run, adaptive, 4 streams: two runs (one
  // backend reused, one fresh) give identical results and counters.
  const auto& t = fabric32();
  const plan::TransferPlan plan = p2p_plan({{0, 4}, {1, 5}, {2, 6}, {3, 7}}, 8'000'000);
  NetworkOptions o = net("adaptive");
  const topology::LinkId up = uplink_on_path(t, o, 0, 4);
  topology::LinkId other = -1;
  for (topology::LinkId l = 0; l < static_cast<topology::LinkId>(t.links.size()) && other < 0; ++l)
    if (l != up && t.links[l].a == t.links[up].a && t.nodes[t.links[l].b].tier == 2) other = l;
  ASSERT_GE(other, 0);
  FailureEvent degrade = event(200_us, FailureAction::Degrade, {other}, "degrade");
  degrade.rate = Bandwidth(50e9);
  o.faults.failures.events = {event(100_us, FailureAction::Down, {up}, "down"), degrade,
                              event(400_us, FailureAction::Up, {up}, "up")};
  PacketBackend b1(t, o), b2(t, o);
  const RunReport x = b1.run(plan), y = b1.run(plan), z = b2.run(plan);
  for (const RunReport* r : {&y, &z}) {
    EXPECT_FALSE(r->job_failed);
    EXPECT_EQ(r->makespan, x.makespan);
    ASSERT_EQ(r->transfers.size(), x.transfers.size());
    for (size_t i = 0; i < x.transfers.size(); ++i) EXPECT_EQ(r->transfers[i].finish, x.transfers[i].finish);
    ASSERT_EQ(r->failures.size(), x.failures.size());
    for (size_t i = 0; i < x.failures.size(); ++i) {
      EXPECT_EQ(r->failures[i].at, x.failures[i].at);
      EXPECT_EQ(r->failures[i].flows_rerouted, x.failures[i].flows_rerouted);
      EXPECT_EQ(r->failures[i].repaired, x.failures[i].repaired);
    }
  }
  EXPECT_EQ(x.failures.size(), 3u);
  const SimStats& s1 = b1.last_run()->stats();
  const SimStats& s2 = b2.last_run()->stats();
  EXPECT_GT(s1.lost, 0u);
  EXPECT_EQ(s1.lost, s2.lost);
  EXPECT_EQ(s1.lost_ctrl, s2.lost_ctrl);
  EXPECT_EQ(s1.retransmits, s2.retransmits);
  EXPECT_EQ(s1.events, s2.events);
  EXPECT_EQ(s1.ecn_marks, s2.ecn_marks);
  const auto& p1 = b1.last_run()->port_stats();
  const auto& p2 = b2.last_run()->port_stats();
  for (size_t d = 0; d < p1.size(); ++d) EXPECT_EQ(p1[d].packets, p2[d].packets) << d;
}

TEST(PacketFailures, AMultiPlaneNicMovesOffItsDeadPortAtLocalRepair) {
  // A k = 4 fat-tree whose 400G NICs are 4 planes of 100G; host 0 sprays S = 40,000,000 B to host 4 (flow
  // engine: 1/4 on each plane). At t_f = 0.5 ms host 0's link into plane 0 dies. The NIC leaves from it, and
  // its other planes reach every host, so it repairs that direction alone at t_f + L (L = local_repair,
  // 1 ms), not after the routing protocol's convergence (2 s). Until then the flow stalls (a quarter of it
  // crosses the dead link); after it, 3 planes carry the rest at 3/4 of the fault-free rate R = S / T0:
  //   T = t_f + L + (S - t_f R) / (3/4 R).
  topology::Hardware hw = hw100(4);
  hw.nic_speed = Bandwidth(400e9);
  hw.nic_planes = 4;
  const topology::Topology t = topology::build_with("fat_tree", {{"k", "4"}}, hw);
  topology::LinkId up = topology::kNone;
  for (auto [l, e] = t.incident(t.gpu_nic[0]); l != e && up == topology::kNone; ++l)
    if (t.nodes[t.other_end(*l, t.gpu_nic[0])].plane == 0) up = *l;
  ASSERT_NE(up, topology::kNone);
  const NetworkOptions o = net("spray");
  const Time tf = 500_us, L = o.faults.failures.local_repair;
  const Pair f = flow_runs(t, p2p_plan({{0, 4}}, 40'000'000), o, event(tf, FailureAction::Down, {up}, "plane 0"));
  EXPECT_FALSE(f.failed.job_failed) << f.failed.failure;
  ASSERT_EQ(f.failed.failures.size(), 1u);
  EXPECT_EQ(f.failed.failures[0].repaired, tf + L);
  // The fault-free run gives the rate (S / T0); the failed one loses L and runs at 3/4 of it after.
  const double rate = 40e6 / f.base.makespan.seconds();
  const double expect = (tf + L).seconds() + (40e6 - tf.seconds() * rate) / (0.75 * rate);
  EXPECT_NEAR(f.failed.makespan.seconds(), expect, 2e-6);
}

}  // namespace
}  // namespace podnet::engine::packet
