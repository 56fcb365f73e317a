// The packet engine on a multi-plane fabric (packet_sim.hpp §7, topology/planes.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "engine/packet/packet_test_util.hpp"

namespace podnet::engine::packet {
namespace {

using namespace testing;

// A k = 4 fat-tree of single-NIC hosts, 400G NICs as 4 ports of 100G on 4 planes (hosts 0-3 in pod 0).
topology::Topology planes4() {
  topology::Hardware hw = hw100(4);
  hw.nic_speed = Bandwidth(400e9);
  hw.nic_planes = 4;
  return topology::build_with("fat_tree", {{"k", "4"}}, hw);
}

struct FlowRun {
  double fct_us = 0;
  std::vector<double> share;  // data packets on each of the source NIC's plane ports
  double max_port_wire = 0;   // bytes on the wire of its busiest plane port
};

FlowRun one_flow(const topology::Topology& t, const std::string& policy) {
  PacketOptions opt;
  opt.cc = "nscc";
  opt.pfc = false;
  PacketSim sim(t, net(policy), opt);
  add(sim, 0, 4, 8 << 20);
  run(sim);
  EXPECT_EQ(sim.open_streams(), 0);
  FlowRun r;
  r.fct_us = (sim.streams()[0].finish - sim.streams()[0].first_send).seconds() * 1e6;
  const topology::NodeId nic = t.gpu_nic[0];
  double all = 0;
  for (auto [l, e] = t.incident(nic); l != e; ++l) {
    if (t.nodes[t.other_end(*l, nic)].kind != topology::NodeKind::Switch) continue;
    const auto& s = sim.port_stats()[static_cast<size_t>(routing::dir_link(*l, nic, t))];
    r.share.push_back(static_cast<double>(s.data_packets));
    all += static_cast<double>(s.data_packets);
    r.max_port_wire = std::max(r.max_port_wire, s.wire_bytes);
  }
  for (double& s : r.share) s /= all;
  return r;
}

TEST(PlanePackets, AQpSpraysOverEveryPlaneAndGetsTheWholeNic) {
  // 8 MiB is 2,048 packets of 4,096 B, 4,178 B on the wire: 171.1 us at 400 Gb/s, 684.5 us at 100 Gb/s.
  const topology::Topology t = planes4();
  const FlowRun reps = one_flow(t, "reps");
  ASSERT_EQ(reps.share.size(), 4u);
  for (double s : reps.share) EXPECT_NEAR(s, 0.25, 0.02);  // a free port takes the next packet
  EXPECT_GT(reps.fct_us, 171.1);
  EXPECT_LT(reps.fct_us, 171.1 * 1.1);
  // The busiest port's bytes take at least their time at 100 Gb/s.
  EXPECT_GE(reps.fct_us, reps.max_port_wire * 8 / 100e9 * 1e6 * 0.99);
  // Per-flow ECMP pins the QP to one plane: a quarter of the NIC.
  const FlowRun ecmp = one_flow(t, "ecmp");
  EXPECT_EQ(std::count(ecmp.share.begin(), ecmp.share.end(), 1.0), 1);
  EXPECT_GT(ecmp.fct_us, 684.5);
  EXPECT_LT(ecmp.fct_us, 684.5 * 1.1);
  // The same run again: the same result.
  EXPECT_EQ(one_flow(t, "reps").fct_us, reps.fct_us);
}

TEST(PlanePackets, WithoutReorderNacksEveryResendAnswersATrim) {
  // Four senders in the other pod into host 0, sprayed over 4 planes under NSCC with trimming: packets
  // arrive out of order. A receiver that NACKs every hole at once (reorder_nack 1) resends packets that
  // were only late; with 0 only trimmed packets are resent, one resend each.
  const topology::Topology t = planes4();
  auto incast = [&](int32_t reorder_nack, uint64_t& resent, uint64_t& trims) {
    PacketOptions opt;
    opt.cc = "nscc";
    opt.pfc = false;
    opt.reorder_nack_packets = reorder_nack;
    PacketSim sim(t, net("reps"), opt);
    for (int32_t s = 4; s < 8; ++s) add(sim, s, 0, 2 << 20, static_cast<uint64_t>(s));
    run(sim);
    EXPECT_EQ(sim.open_streams(), 0);
    resent = trims = 0;
    for (const auto& r : sim.streams()) {
      resent += r.retransmits;
      trims += r.trims;
    }
  };
  uint64_t resent1 = 0, trims1 = 0, resent0 = 0, trims0 = 0;
  incast(1, resent1, trims1);
  incast(0, resent0, trims0);
  EXPECT_GT(resent1, trims1);
  EXPECT_GT(trims0, 0u);  // the incast trims (575 here)
  EXPECT_EQ(resent0, trims0);
}

TEST(PlanePackets, MrcLosesAPlaneAndKeepsTheOthersBusy) {
  // One 8 MiB flow, host 0 to host 4, as above; at t_f = 50 us the link from host 4's switch in plane 1
  // down to its NIC dies (routing is not told). Without the failure it takes T0 (177.95 us here). After
  // t_f three of the four ports carry the rest: at least t_f + (T0 - t_f) x 4/3 = 220.6 us. MRC rests every
  // path of plane 1 once a packet sent on it is found lost (64 later ones arrived, or 4 round trips
  // without progress) and resends the lost ones on paths that delivered: under 2 T0. REPS chooses the
  // plane by the free port, keeps sending a quarter into the dead plane and takes far longer (here MRC
  // 307.75 us, REPS 2,777.53 us: its losses wait for the timeout).
  const topology::Topology t = planes4();
  topology::LinkId dead = topology::kNone;
  const topology::NodeId nic = t.gpu_nic[4];
  for (auto [l, e] = t.incident(nic); l != e; ++l)
    if (t.nodes[t.other_end(*l, nic)].plane == 1) dead = *l;
  ASSERT_NE(dead, topology::kNone);
  auto fct = [&](const std::string& policy, bool fail) {
    PacketOptions opt;
    opt.cc = "nscc";
    opt.pfc = false;
    PacketSim sim(t, net(policy), opt);
    add(sim, 0, 4, 8 << 20);
    sim.run_until(Time::from_seconds(50e-6), [](const SimEvent&) {});
    if (fail) sim.set_link_dead(dead, true);
    run(sim);
    EXPECT_EQ(sim.open_streams(), 0);
    return (sim.streams()[0].finish - sim.streams()[0].first_send).seconds() * 1e6;
  };
  const double t0 = fct("mrc", false), mrc = fct("mrc", true), reps = fct("reps", true);
  EXPECT_GT(t0, 171.1);
  EXPECT_LT(t0, 171.1 * 1.1);
  EXPECT_GT(mrc, 50 + (t0 - 50) * 4 / 3);
  EXPECT_LT(mrc, 2 * t0);
  EXPECT_GT(reps, 2 * mrc);
}

TEST(PlanePackets, MrcOnThreadsGivesTheSameRunOnEveryThreadCount) {
  // Every host of the 4-plane k = 4 fat-tree sends 64 KiB to every other under MRC, on the partitioned
  // engine with 1, 2 and 4 threads: every stream ends at the same time and every port counts the same.
  const topology::Topology t = planes4();
  auto once = [&](int threads) {
    PacketOptions opt;
    opt.cc = "nscc";
    opt.pfc = false;
    opt.partitioned = true;
    opt.threads = threads;
    PacketSim sim(t, net("mrc"), opt);
    for (int32_t a = 0; a < 16; ++a)
      for (int32_t b = 0; b < 16; ++b)
        if (a != b) add(sim, a, b, 64 << 10, static_cast<uint64_t>(a * 16 + b));
    run(sim);
    EXPECT_EQ(sim.open_streams(), 0);
    std::vector<int64_t> out;
    for (const auto& r : sim.streams()) out.push_back(r.finish.ps);
    for (const auto& p : sim.port_stats()) {
      out.push_back(static_cast<int64_t>(p.data_packets));
      out.push_back(static_cast<int64_t>(p.ecn_marks));
    }
    return out;
  };
  const auto one = once(1);
  EXPECT_EQ(once(2), one);
  EXPECT_EQ(once(4), one);
}

TEST(PlanePackets, APlaneOutOfServiceAtTheReceiverIsLeftAlone) {
  // Host 4's link into plane 1 is out of service before the run (routing told, as a failure down before
  // the run is). Host 0's 8 MiB then runs on planes 0, 2 and 3: 2,048 packets of 4,178 B at 300 Gb/s take
  // at least 228.2 us (171.1 us on four planes), and no data packet reaches host 4 in plane 1. The QP still
  // paces at the NIC's four ports, so the three ports' queues reorder packets and some are resent that were
  // only late: within 20 % (measured: reps 238.95 us, mrc 266.11 us).
  const topology::Topology t = planes4();
  const topology::NodeId nic = t.gpu_nic[4];
  topology::LinkId off = topology::kNone;
  for (auto [l, e] = t.incident(nic); l != e; ++l)
    if (t.nodes[t.other_end(*l, nic)].plane == 1) off = *l;
  ASSERT_NE(off, topology::kNone);
  for (const char* policy : {"reps", "mrc"}) {
    PacketOptions opt;
    opt.cc = "nscc";
    opt.pfc = false;
    PacketSim sim(t, net(policy), opt);
    sim.set_route_dir_up(2 * off, false);
    sim.set_route_dir_up(2 * off + 1, false);
    add(sim, 0, 4, 8 << 20);
    run(sim);
    EXPECT_EQ(sim.open_streams(), 0);
    const double fct = (sim.streams()[0].finish - sim.streams()[0].first_send).seconds() * 1e6;
    EXPECT_GE(fct, 228.2) << policy;
    EXPECT_LT(fct, 228.2 * 1.2) << policy;
    const auto into = static_cast<size_t>(routing::dir_link(off, t.other_end(off, nic), t));
    EXPECT_EQ(sim.port_stats()[into].data_packets, 0u) << policy;
  }
}

TEST(PlanePackets, OrderedDeliveryKeepsAQpOnOnePlane) {
  // Ordered delivery (one entropy value per QP) on 4 planes: the flow takes one 100G plane, in order:
  // at least 684.5 us, no packet out of order, no resend.
  const topology::Topology t = planes4();
  for (const char* policy : {"reps", "mrc"}) {
    PacketOptions opt;
    opt.cc = "nscc";
    opt.pfc = false;
    opt.delivery = Delivery::Ordered;
    PacketSim sim(t, net(policy), opt);
    add(sim, 0, 4, 8 << 20);
    run(sim);
    EXPECT_EQ(sim.open_streams(), 0);
    const auto& st = sim.streams()[0];
    EXPECT_GE((st.finish - st.first_send).seconds() * 1e6, 684.5) << policy;
    EXPECT_LT((st.finish - st.first_send).seconds() * 1e6, 684.5 * 1.05) << policy;
    EXPECT_EQ(st.out_of_order, 0u) << policy;
    EXPECT_EQ(sim.stats().retransmits, 0u) << policy;
  }
}
}  // namespace
}  // namespace podnet::engine::packet
