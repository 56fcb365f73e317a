// Swift (swift.hpp): one flow's window, ACK by ACK, against figures derived by hand.
//
// Packets of 4,068 + 82 = 4,150 B (MSS), 100 Gb/s, R = 14 us, a path of 6 network links.
// h = 20 us / 6.55 = 3.0534 us a hop; fs_alpha = 100 us / (1 / sqrt(0.1) - 1 / sqrt(100)) = 32.655 us,
// fs_beta = -fs_alpha / 10. The first window is one BDP: 12.5 GB/s x 14 us = 175,000 B (42 packets).
#include <gtest/gtest.h>

#include "engine/packet/cc/cc_test_util.hpp"
#include "engine/packet/cc/swift.hpp"
#include "engine/packet/packet_test_util.hpp"

namespace cc = podnet::engine::packet::cc;

namespace {

using cc::testing::kUs;

cc::Context context() { return cc::testing::fabric_14us(); }

// A flow of `s` on a path of 6 network links, started at 0.
cc::Flow started(const cc::Swift& s) {
  cc::Flow f;
  f.hops = 6;
  s.init(f, 100e9);
  s.start(f, 0);
  return f;
}

cc::Feedback ack(uint32_t packets, int64_t rtt) {
  cc::Feedback b;
  b.acked = packets;
  b.rtt = rtt;
  return b;
}

}  // namespace

TEST(Swift, WindowFollowsTheDelayTarget) {
  const cc::Swift s(cc::SwiftParams{}, context());
  cc::Flow f = started(s);
  EXPECT_DOUBLE_EQ(f.wnd_bytes, 175'000.0);
  EXPECT_EQ(f.window, 42u);
  EXPECT_FALSE(s.traits().ecn);  // delay alone
  // target = 20 + 6 x 3.0534 + (32.655 / sqrt(175,000 / 4,150) - 3.2655) = 20 + 18.3206 + 1.7632 = 40.0838 us.
  EXPECT_NEAR(s.target_ps(6, 175'000), 40'083'822.26, 0.01);
  // Under the target: W + MSS x ai x n / W = 175,000 + 4,150 x 4,150 / 175,000 = 175,098.41.
  s.on_feedback(f, 10 * kUs, ack(1, 30 * kUs));
  EXPECT_NEAR(f.wnd_bytes, 175'098.4143, 1e-3);
  // Over it (60 us against 40.0824 us at the new window), a round trip since the last cut (none yet):
  // W x (1 - 0.8 x 19.9176 / 60) = 128,597.90.
  s.on_feedback(f, 50 * kUs, ack(1, 60 * kUs));
  EXPECT_NEAR(f.wnd_bytes, 128'597.8993, 1e-3);
  // Again 20 us later: less than the 60 us round trip since that cut, no second cut.
  s.on_feedback(f, 70 * kUs, ack(1, 60 * kUs));
  EXPECT_NEAR(f.wnd_bytes, 128'597.8993, 1e-3);
  // A NACK a round trip later: fast recovery halves it.
  cc::Feedback nack;
  nack.nack = true;
  s.on_feedback(f, 111 * kUs, nack);
  EXPECT_NEAR(f.wnd_bytes, 64'298.9496, 1e-3);
}

TEST(Swift, BelowOnePacketItPacesAtTheWindowPerRoundTrip) {
  // W = 1,500 B, last round trip 60 us: one packet out at a time, paced at 1,500 x 8 / 60 us = 200 Mb/s.
  const cc::Swift s(cc::SwiftParams{}, context());
  cc::Flow f = started(s);
  s.on_feedback(f, 10 * kUs, ack(0, 60 * kUs));  // a sample of 60 us, nothing newly acknowledged
  f.wnd_bytes = 3'000;
  f.t_dec = 0;
  cc::Feedback nack;
  nack.nack = true;
  const cc::Reaction r = s.on_feedback(f, 100 * kUs, nack);
  EXPECT_DOUBLE_EQ(f.wnd_bytes, 1'500.0);
  EXPECT_EQ(f.window, 1u);
  EXPECT_NEAR(r.rate, 200e6, 1e-3);
}

TEST(Swift, AWindowBelowTheAckCadenceAsksForItsAck) {
  // Two hosts under one leaf: an unloaded round trip of about 2.2 us, so Swift's first window is one
  // BDP = 100 Gb/s x 2.2 us = 27 KB, 6 packets: fewer than the receiver's ACK cadence of 8. The packet
  // that fills the window asks for an ACK at once (kAckRequest); without it each window would wait for
  // the retransmission timeout (over 1 ms). 1 MiB then takes about its serialization: 1 MiB /
  // (100G x 4096 / 4178) = 85.6 us, and no timeout fires.
  using namespace podnet::engine::packet::testing;
  const auto topo = one_leaf(2);
  podnet::engine::packet::PacketOptions opt;
  opt.cc = "swift";
  podnet::engine::packet::PacketSim sim(topo, net(), opt);
  add(sim, 0, 1, 1 << 20);
  run(sim);
  EXPECT_EQ(sim.open_streams(), 0);
  EXPECT_EQ(sim.stats().timeouts, 0u);
  const auto& s = sim.streams()[0];
  EXPECT_LT((s.finish - s.first_send).us(), 2 * 85.6);
}

TEST(Swift, TheMedianVariantLetsOneSlowPathPass) {
  // Seven ACKs at 30 us (under the 40 us target: W + 4,150^2 / W each, 175,000 -> 175,687.74 B), then one
  // at 60 us, as one sprayed path's queue would report. swift cuts: W x (1 - 0.8 x (60 - 40.0740) / 60)
  // = 129,010.95 B. swift_median reads the median of the eight, 30 us, and grows once more: 175,785.77 B.
  cc::SwiftParams mp;
  mp.median_of = 8;
  const cc::Swift plain(cc::SwiftParams{}, context()), median(mp, context());
  cc::Flow a = started(plain), b = started(median);
  for (int i = 0; i < 7; ++i) {
    plain.on_feedback(a, (10 + i) * kUs, ack(1, 30 * kUs));
    median.on_feedback(b, (10 + i) * kUs, ack(1, 30 * kUs));
  }
  EXPECT_NEAR(a.wnd_bytes, 175'687.7417, 1e-3);
  EXPECT_NEAR(b.wnd_bytes, 175'687.7417, 1e-3);
  plain.on_feedback(a, 100 * kUs, ack(1, 60 * kUs));  // a round trip (60 us) since the start: a cut may come
  median.on_feedback(b, 100 * kUs, ack(1, 60 * kUs));
  EXPECT_NEAR(a.wnd_bytes, 129'010.9520, 1e-3);
  EXPECT_NEAR(b.wnd_bytes, 175'785.7707, 1e-3);
}
