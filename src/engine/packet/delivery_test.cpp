// Delivery modes (PacketOptions::delivery, Ultra Ethernet's ROD, RUD and UUD; nic.hpp): what a QP does
// with a packet that arrives beyond a hole, and with one that never arrives.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "engine/packet/packet_test_util.hpp"

using namespace podnet;
using namespace podnet::engine;
using namespace podnet::engine::packet;
using namespace podnet::engine::packet::testing;

namespace {

constexpr int64_t kPacketPs = 334'240;  // 4,096 B + 82 B of header at 100 Gb/s

struct FlowRun {
  int64_t fct = 0;  // ps
  SimStats stats;
  StreamRecord rec;
};

// One 4 MiB flow (1,024 packets) from host 1 to host 2 under one leaf, DCQCN on a lossy class. With
// `lose`, the host's cable into the leaf loses every packet arriving in [100 us, 100 us + 3 packets):
// the packets arrive back to back, one every 334.24 ns, so a half-open window three packets long holds
// exactly three arrivals, whatever their phase.
FlowRun one_flow(Delivery d, bool lose) {
  const auto topo = one_leaf(4);
  NetworkOptions n = net();
  PacketOptions opt;
  opt.pfc = false;
  opt.delivery = d;
  if (lose) {
    SilentFault f;
    f.dirs = {first_cable(topo, n, opt, 1, 2)};
    EXPECT_GE(f.dirs[0], 0);
    f.start = Time(100'000'000);
    f.period = Time(1'000'000'000'000);
    f.down = Time(3 * kPacketPs);
    f.what = "a cable that flaps";
    n.faults.silent_faults.push_back(f);
  }
  PacketSim sim(topo, n, opt);
  add(sim, 1, 2, 4 << 20);
  run(sim);
  EXPECT_EQ(sim.open_streams(), 0);
  const auto& st = sim.streams()[0];
  return {st.finish.ps - st.first_send.ps, sim.stats(), st};
}

}  // namespace

TEST(Delivery, ThreeLostPacketsUnderEachMode) {
  const FlowRun clean = one_flow(Delivery::Ordered, false);
  const FlowRun autom = one_flow(Delivery::Auto, true);
  const FlowRun rod = one_flow(Delivery::Ordered, true);
  const FlowRun rud = one_flow(Delivery::Unordered, true);
  const FlowRun uud = one_flow(Delivery::Unreliable, true);
  for (const FlowRun* f : {&autom, &rod, &rud, &uud}) EXPECT_EQ(f->stats.silent, 3u);
  // DCQCN does not trim, so auto is ordered: the same run.
  EXPECT_EQ(autom.fct, rod.fct);
  EXPECT_EQ(autom.stats.retransmits, rod.stats.retransmits);
  // Ordered: the packets after the hole are discarded until the sender goes back to it, so it resends
  // more than the three it lost (what it sent in the NACK's round trip).
  EXPECT_GT(rod.stats.retransmits, 3u);
  EXPECT_EQ(rod.rec.lost, 0u);
  // Unordered: each hole is NACKed once 64 packets lie beyond it, and resent alone, ahead of new packets.
  // The three resends take three of the sender's packet slots before its last packet, which arrives
  // exactly three packet times later than in the clean run.
  EXPECT_EQ(rud.stats.retransmits, 3u);
  EXPECT_EQ(rud.stats.timeouts, 0u);
  EXPECT_NEAR(static_cast<double>(rud.fct), static_cast<double>(clean.fct + 3 * kPacketPs), 2.0);
  EXPECT_LT(rud.fct, rod.fct);
  // Unreliable: nothing is resent or acknowledged; the three are gone, and the stream ends when its last
  // packet arrives, as in the clean run.
  EXPECT_EQ(uud.stats.retransmits, 0u);
  EXPECT_EQ(uud.stats.acks, 0u);
  EXPECT_EQ(uud.stats.nacks, 0u);
  EXPECT_EQ(uud.rec.lost, 3u);
  EXPECT_EQ(uud.stats.data_delivered, 1024u - 3u);
  EXPECT_EQ(uud.fct, clean.fct);
}

TEST(Delivery, OrderedKeepsASprayedQpOnOnePath) {
  // A permutation of 16 hosts on a k = 4 fat-tree under routing reps (the sender picks each packet's
  // entropy value), lossless (PFC) so nothing is lost: sprayed packets of one QP cross queues of
  // different depths and arrive out of order; ordered delivery keeps one value per QP, one path, and
  // nothing arrives out of order.
  const auto topo = kary(4);
  auto run_with = [&](Delivery d) {
    PacketOptions opt;
    opt.cc = "nscc";
    opt.delivery = d;
    PacketSim sim(topo, net("reps"), opt);
    for (int s = 0; s < 16; ++s) add(sim, s, (s + 5) % 16, 1 << 20, 0, Time(), static_cast<uint64_t>(s));
    run(sim);
    EXPECT_EQ(sim.open_streams(), 0);
    uint64_t ooo = 0;
    for (const auto& s : sim.streams()) ooo += s.out_of_order;
    return ooo;
  };
  EXPECT_GT(run_with(Delivery::Unordered), 0u);
  EXPECT_EQ(run_with(Delivery::Ordered), 0u);
}

TEST(Delivery, TrimsUnderEachMode) {
  // 8-to-1 incast of 256 KiB each under one leaf, NSCC on a lossy class with a 300 KB buffer: the
  // receiver's port trims. Unordered (NSCC's default): each trim draws one NACK and one resend of that
  // packet alone. Ordered: a trim's NACK sends the QP back to that packet, which resends what followed
  // it too. Unreliable: a trimmed packet is lost, counted at its receiver, and never resent.
  const auto topo = one_leaf(16);
  auto run_with = [&](Delivery d, uint64_t& lost) {
    PacketOptions opt;
    opt.cc = "nscc";
    opt.pfc = false;
    opt.buffer_bytes = 300'000;
    opt.delivery = d;
    PacketSim sim(topo, net(), opt);
    for (int s = 1; s <= 8; ++s) add(sim, s, 0, 256 << 10, 0, Time(), static_cast<uint64_t>(s));
    run(sim);
    EXPECT_EQ(sim.open_streams(), 0);
    lost = 0;
    for (const auto& s : sim.streams()) lost += s.lost;
    return sim.stats();
  };
  uint64_t lost = 0;
  const SimStats rud = run_with(Delivery::Unordered, lost);
  EXPECT_GT(rud.trims, 0u);
  EXPECT_EQ(rud.retransmits, rud.trims);
  EXPECT_EQ(lost, 0u);
  const SimStats rod = run_with(Delivery::Ordered, lost);
  EXPECT_GT(rod.trims, 0u);
  EXPECT_GT(rod.retransmits, rod.trims);
  EXPECT_EQ(lost, 0u);
  const SimStats uud = run_with(Delivery::Unreliable, lost);
  EXPECT_GT(uud.trims, 0u);
  EXPECT_EQ(uud.retransmits, 0u);
  EXPECT_EQ(lost, uud.trims);
  EXPECT_EQ(uud.data_delivered + lost, 8u * 64u);
}

TEST(Delivery, UnreliableIsRefusedWhereItCannotRun) {
  const auto topo = one_leaf(4);
  PacketOptions opt;
  opt.delivery = Delivery::Unreliable;
  opt.cc = "rccc";
  opt.pfc = false;
  EXPECT_THROW(PacketSim(topo, net(), opt), InputError);
  EXPECT_THROW(delivery_from("rod"), InputError);
  EXPECT_EQ(delivery_from("unordered"), Delivery::Unordered);
  EXPECT_EQ(delivery_name("nscc", Delivery::Auto, true), "reliable, unordered (selective resend)");
  EXPECT_EQ(delivery_name("dcqcn_nic", Delivery::Auto, false), "reliable, ordered (go-back-N)");
  EXPECT_EQ(delivery_name("dcqcn_nic", Delivery::Auto, true), "reliable, reordered by the NIC (go-back-N)");
  EXPECT_EQ(delivery_name("dcqcn_nic", Delivery::Ordered, true), "reliable, ordered (go-back-N)");
}
