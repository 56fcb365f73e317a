// Packet trimming (cc::Traits::trim; nic.hpp, packet_sim.cpp): a full queue cuts a packet to its
// header, the receiver NACKs that PSN, the sender resends it alone.
#include <gtest/gtest.h>

#include "engine/packet/packet_test_util.hpp"

using namespace podnet;
using namespace podnet::engine;
using namespace podnet::engine::packet;
using namespace podnet::engine::packet::testing;

namespace {

PacketOptions lossy_nscc(Bytes buffer) {
  PacketOptions opt;
  opt.cc = "nscc";
  opt.pfc = false;
  opt.buffer_bytes = buffer;
  return opt;
}

}  // namespace

class TrimOnePacketEach : public ::testing::TestWithParam<int> {};

TEST_P(TrimOnePacketEach, TheQueueHoldsWhatTheThresholdAllowsAndTheRestIsTrimmed) {
  // N senders under one leaf each send one 4,096-byte packet (4,178 B on the wire) at the same
  // time; they reach the leaf together (equal cables). The first finds the receiver's port idle and
  // leaves at once (its bytes are released as it starts). Each next one is admitted while
  // q + 4,178 <= (B - q) / 8 (lossy class, dynamic threshold 1/8 of the free buffer, no headroom
  // without PFC), with B = 300,000: 9 q <= 300,000 - 8 x 4,178 = 266,576, q <= 29,620 B, so at
  // q = 0 .. 7 packets (29,246 B): 8 are queued. The other N - 9 are trimmed. They reach the leaf
  // 334 ns (serialization) + 15 ns (3 m) + 600 ns (the switch) after they may leave, and no NACK
  // can be back before another 600 ns: 1.2 us after the start, exactly N - 9 are trimmed and no
  // NACK has arrived.
  const int n = GetParam();
  const auto topo = one_leaf(32);
  PacketSim sim(topo, net(), lossy_nscc(300'000));
  for (int s = 1; s <= n; ++s) add(sim, s, 0, 4096, 0, Time(), static_cast<uint64_t>(s));
  const Time first = sim.streams()[0].first_send;
  for (const auto& s : sim.streams()) ASSERT_EQ(s.first_send, first);
  sim.run_until(first + Time(1'200'000), [](const SimEvent&) {});
  const auto trims = static_cast<uint64_t>(n - 9);
  EXPECT_EQ(sim.stats().trims, trims);
  EXPECT_EQ(sim.stats().trim_nacks, 0u);
  EXPECT_EQ(total(sim, [](const PortStats& p) { return p.trims; }), static_cast<double>(trims));
  // The resends come back into a queue still draining, and some are trimmed again. In all, every
  // trimmed header reaches its receiver, draws one NACK and one resend; nothing is dropped.
  run(sim);
  const uint64_t all = sim.stats().trims;
  EXPECT_GE(all, trims);
  EXPECT_EQ(sim.stats().trims_received, all);
  EXPECT_EQ(sim.stats().trim_nacks, all);
  EXPECT_EQ(sim.stats().retransmits, all);
  EXPECT_EQ(sim.stats().drops, 0u);
  EXPECT_EQ(sim.stats().timeouts, 0u);
  EXPECT_EQ(sim.open_streams(), 0);
  EXPECT_EQ(sim.stats().data_delivered, static_cast<uint64_t>(n));
  uint64_t resent = 0;
  for (const auto& s : sim.streams()) resent += s.trims;
  EXPECT_EQ(resent, all);
}

INSTANTIATE_TEST_SUITE_P(PacketSim, TrimOnePacketEach, ::testing::Values(16, 24));

TEST(PacketSim, TrimmedIncastDeliversEverythingWithoutATimeout) {
  // The lossy incast of packet_sim_test.cpp (8 x 256 KiB, 300 KB buffer) under NSCC: where go-back-N
  // dropped and waited, every overflow is now a trimmed header and a single resend. Each trim
  // costs exactly one retransmission (a resend trimmed again is a new trim), nothing is dropped or
  // timed out, and nothing is sent twice beyond the trims.
  const auto topo = one_leaf(16);
  PacketSim sim(topo, net(), lossy_nscc(300'000));
  for (int s = 1; s <= 8; ++s) add(sim, s, 0, 256 * 1024);
  run(sim);
  EXPECT_EQ(sim.open_streams(), 0);
  EXPECT_GT(sim.stats().trims, 0u);
  EXPECT_EQ(sim.stats().drops, 0u);
  EXPECT_EQ(sim.stats().timeouts, 0u);
  EXPECT_EQ(sim.stats().nacks, 0u);  // no hole waited for the reorder threshold
  EXPECT_EQ(sim.stats().retransmits, sim.stats().trims);
  EXPECT_EQ(sim.stats().data_delivered, 8u * 64u);
  // The receiver's port stays more than 90 % busy: the eight finish within 1 / 0.9 of its line
  // (2 MiB / (100G x 4096 / 4178)), counted from when they may send (181.0 us here against 171.1).
  Time last;
  for (const auto& s : sim.streams()) last = std::max(last, s.finish - s.first_send);
  const double ideal_us = 8 * 256 * 1024 * 8.0 / (100e9 * 4096.0 / 4178.0) * 1e6;
  EXPECT_LT(last.us(), ideal_us / 0.9);
}

TEST(PacketSim, WithoutTrimmingTheSameQueueDrops) {
  // The same one-packet incast under DCTCP (no trimming): the 7 packets past the threshold are dropped.
  PacketOptions opt = lossy_nscc(300'000);
  opt.cc = "dctcp";
  const auto topo = one_leaf(32);
  PacketSim sim(topo, net(), opt);
  for (int s = 1; s <= 16; ++s) add(sim, s, 0, 4096);
  run(sim);
  EXPECT_EQ(sim.stats().drops, 7u);
  EXPECT_EQ(sim.stats().trims, 0u);
  EXPECT_EQ(sim.open_streams(), 0);
}

TEST(PacketSim, LinkCreditsMakeTheSameIncastLossless) {
  // The lossy incast above (8 x 256 KiB into one host, 300 KB of buffer) under NSCC, with credit-based flow
  // control on every link (Ultra Ethernet's CBFC, network.link_credits): a port sends only while the next
  // switch has buffer for the packet, so nothing is trimmed or dropped, no PAUSE frame is sent, and every
  // byte arrives once. Without the credits the same incast trims.
  const auto topo = one_leaf(16);
  for (const bool credits : {false, true}) {
    PacketOptions opt = lossy_nscc(300'000);
    opt.link_credits = credits;
    PacketSim sim(topo, net(), opt);
    for (int s = 1; s <= 8; ++s) add(sim, s, 0, 256 * 1024);
    run(sim);
    EXPECT_EQ(sim.open_streams(), 0);
    EXPECT_EQ(sim.stats().drops, 0u);
    EXPECT_EQ(sim.stats().pause_frames, 0u);
    if (credits) {
      EXPECT_EQ(sim.stats().trims, 0u);
      EXPECT_EQ(sim.stats().retransmits, 0u);
      EXPECT_EQ(sim.stats().data_sent, 8u * 64u);  // 256 KiB = 64 packets each, every one sent once
    } else {
      EXPECT_GT(sim.stats().trims, 0u);
    }
  }
}

TEST(PacketSim, LinkCreditsHoldAPacedSenderUntilCreditReturns) {
  // A rate-paced sender (HPCC, DCQCN) whose pacing time has passed while its link has no credit waits for
  // the credit, not for a wake-up at a time already gone (that loop once stopped the clock). The same incast
  // completes, lossless, under both.
  const auto topo = one_leaf(16);
  for (const char* cc : {"hpcc", "dcqcn_nic"}) {
    PacketOptions opt;
    opt.cc = cc;
    opt.pfc = false;
    opt.buffer_bytes = 300'000;
    opt.link_credits = true;
    PacketSim sim(topo, net(), opt);
    for (int s = 1; s <= 8; ++s) add(sim, s, 0, 256 * 1024);
    run(sim);
    EXPECT_EQ(sim.open_streams(), 0) << cc;
    EXPECT_EQ(sim.stats().drops, 0u) << cc;
    EXPECT_EQ(sim.stats().retransmits, 0u) << cc;
    EXPECT_EQ(sim.stats().pause_frames, 0u) << cc;
  }
}
