// NSCC (nscc.hpp): one flow's window, ACK by ACK, against figures derived by hand.
//
// The fabric of every test: MTU 4,068 payload + 82 header = 4,150 bytes a packet on the wire,
// NIC line 100 Gb/s, R = 14 us. Then BDP = 12.5 GB/s x 14 us = 175,000 B,
// a = 175,000 / 150,000 = 7/6, T = 0.75 R = 10.5 us, b = 10.5 / 12 = 7/8,
// Wmax = 1.5 BDP = 262,500 B (63 packets).
#include <cmath>

#include <gtest/gtest.h>

#include "engine/packet/cc/cc_test_util.hpp"
#include "engine/packet/cc/congestion_control.hpp"
#include "engine/packet/cc/nscc.hpp"

namespace cc = podnet::engine::packet::cc;

namespace {

using cc::testing::kUs;
constexpr double kWire = 4150;

cc::Context context() { return cc::testing::fabric_14us(); }

struct OneFlow {
  cc::Nscc nscc{cc::NsccParams{}, context()};
  cc::Flow f;
  OneFlow() {
    nscc.init(f, 100e9);
    nscc.start(f, 0);
  }
  // An ACK of `packets` packets whose newest took `rtt` ps; `marked` ECN marks echoed.
  void ack(int64_t now, uint32_t packets, int64_t rtt, uint32_t marked = 0) {
    cc::Feedback b;
    b.acked = b.received = packets;
    b.marked = marked;
    una += packets;
    b.snd_una = una;
    b.snd_nxt = una + 10;
    b.rtt = rtt;
    nscc.on_feedback(f, now, b);
  }
  // A NACK of a trimmed packet: by default the newest sent (una + 9).
  void trim_nack(int64_t now, int64_t psn = -1) {
    cc::Feedback b;
    b.nack = b.trimmed = true;
    b.snd_una = una;
    b.snd_nxt = una + 10;
    b.psn = psn < 0 ? una + 9 : static_cast<uint32_t>(psn);
    nscc.on_feedback(f, now, b);
  }
  uint32_t una = 0;
};

}  // namespace

TEST(Nscc, StartsAtOneAndAHalfBdpWithTheFabricsTargetAndEcnBand) {
  OneFlow r;
  EXPECT_EQ(r.nscc.target_ps(), 10'500'000);
  EXPECT_DOUBLE_EQ(r.f.wnd_bytes, 262'500.0);
  EXPECT_EQ(r.f.window, 63u);  // floor(262,500 / 4,150)
  EXPECT_EQ(r.f.base_rtt, 14 * kUs);
  // ECN from 20 % to 80 % of the BDP at 100 Gb/s, linear to certainty.
  EXPECT_EQ(r.nscc.traits().kmin, 35'000);
  EXPECT_EQ(r.nscc.traits().kmax, 140'000);
  EXPECT_DOUBLE_EQ(r.nscc.traits().pmax, 1.0);
  EXPECT_TRUE(r.nscc.traits().trim);
  EXPECT_TRUE(r.nscc.traits().rtt);
}

TEST(Nscc, FairIncreaseIsPendingUntilEightMtusWereAcknowledged) {
  // Unmarked ACKs of one packet with d = 26 - 14 = 12 us >= T: fair increase,
  // inc += 5 x 4,068 x 7/6 x 4,150 = 98,479,500 per ACK. The eighth ACK brings the bytes
  // acknowledged to 8 x 4,150 = 33,200 and applies W += 8 x 98,479,500 / 262,500.
  OneFlow r;
  for (int i = 1; i <= 7; ++i) r.ack(i * kUs / 2, 1, 26 * kUs);
  EXPECT_DOUBLE_EQ(r.f.wnd_bytes, 262'500.0);  // at Wmax, nothing applied yet
  EXPECT_NEAR(r.f.inc, 7 * 98'479'500.0, 1e-3);
  // The delay average sees an unmarked sample over T as 0.25 x base = 3.5 us.
  EXPECT_NEAR(r.f.avg_delay, 3.5e6 * (1 - std::pow(1 - 0.0125, 7)), 1e-6);
  r.ack(4 * kUs, 1, 26 * kUs);
  EXPECT_DOUBLE_EQ(r.f.inc, 0.0);
  EXPECT_DOUBLE_EQ(r.f.wnd_bytes, 262'500.0);  // 265,501.28 clamped back to Wmax
}

TEST(Nscc, MultiplicativeDecreaseOncePerBaseRoundTrip) {
  // A marked ACK with d = 20 us and an average of 20 us: W x max(1 - 0.8 x 9.5 / 20, 0.5) = 0.62 W
  // = 162,750 B (39 packets). A second one 1 us later waits for the base round trip.
  OneFlow r;
  r.f.avg_delay = 20e6;
  r.ack(1 * kUs, 1, 34 * kUs, 1);
  EXPECT_DOUBLE_EQ(r.f.avg_delay, 20e6);
  EXPECT_DOUBLE_EQ(r.f.wnd_bytes, 162'750.0);
  EXPECT_EQ(r.f.window, 39u);
  r.ack(2 * kUs, 1, 34 * kUs, 1);
  EXPECT_DOUBLE_EQ(r.f.wnd_bytes, 162'750.0);
  // 14 us after the first cut, another: 162,750 x 0.62 = 100,905; R has passed since the start, so
  // the once-per-R step adds 0.15 x 4,068 x 7/6 = 711.9: 101,616.9.
  r.ack(15 * kUs, 1, 34 * kUs, 1);
  EXPECT_NEAR(r.f.wnd_bytes, 101'616.9, 1e-6);
}

TEST(Nscc, AMarkWithoutQueueingDelayChangesNothing) {
  OneFlow r;
  r.f.wnd_bytes = 100'000;
  r.ack(1 * kUs, 1, 16 * kUs, 1);  // d = 2 us < T, marked: the fourth quadrant
  EXPECT_DOUBLE_EQ(r.f.wnd_bytes, 100'000.0);
  EXPECT_DOUBLE_EQ(r.f.inc, 0.0);
}

TEST(Nscc, ProportionalIncreaseGrowsWithTheDelayLeft) {
  // Unmarked, d = 2 us: inc += 4 x 4,068 x 7/6 x 7/8 / 10.5 us x 4,150 x (10.5 - 2) us = 55,805,050.
  OneFlow r;
  r.f.wnd_bytes = 100'000;
  r.ack(1 * kUs, 1, 16 * kUs);
  EXPECT_NEAR(r.f.inc, 55'805'050.0, 1e-3);
}

TEST(Nscc, FastIncreaseAfterAWindowOfAcksWithoutQueueing) {
  // From W = 162,750: one ACK of 40 packets (166,000 B > W) at d = 0 switches to fast increase:
  // W += 0.25 x 7/6 x 166,000 = 48,416.67, at once.
  OneFlow r;
  r.f.wnd_bytes = 162'750;
  r.ack(1 * kUs, 40, 14 * kUs);
  EXPECT_TRUE(r.f.fast);
  EXPECT_NEAR(r.f.wnd_bytes, 211'166.6667, 1e-3);
  // A delay of 1 us or more leaves it.
  r.ack(2 * kUs, 1, 16 * kUs);
  EXPECT_FALSE(r.f.fast);
}

TEST(Nscc, ATrimmedPacketCostsOnePacketOfWindow) {
  // No quick adapt in the first period: W - 4,150; the average is fed one congested sample of R.
  OneFlow r;
  r.trim_nack(1 * kUs);
  EXPECT_DOUBLE_EQ(r.f.wnd_bytes, 262'500.0 - kWire);
  EXPECT_DOUBLE_EQ(r.f.avg_delay, 0.0125 * 14e6);
}

TEST(Nscc, QuickAdaptCutsToWhatThePeriodDelivered) {
  // Periods of base + T = 24.5 us. The first (to 24.5 us) is not judged; an ACK at 25 us opens the
  // second (to 49.5 us). Two packets (8,300 B) are acknowledged in it, under Wmax / 8 = 32,812.5 B;
  // a trimmed NACK at 50 us: W = 8,300 B (2 packets).
  OneFlow r;
  r.ack(25 * kUs, 1, 15 * kUs);
  EXPECT_TRUE(r.f.qa_armed);
  r.ack(30 * kUs, 1, 15 * kUs);
  r.ack(40 * kUs, 1, 15 * kUs);
  r.trim_nack(50 * kUs);
  EXPECT_DOUBLE_EQ(r.f.wnd_bytes, 8'300.0);
  EXPECT_EQ(r.f.window, 2u);
  // The cut answered what was in flight (PSNs below snd_nxt = 13 at the cut; htsim's bytes to ignore):
  // a marked ACK of it with d = 20 us >= T changes nothing, neither a cut nor an increase; nor does a
  // NACK of a packet trimmed before (PSN 5).
  const int64_t cut = r.f.t_dec;
  r.f.avg_delay = 20e6;
  r.ack(51 * kUs, 1, 34 * kUs, 1);
  EXPECT_EQ(r.f.t_dec, cut);
  EXPECT_DOUBLE_EQ(r.f.wnd_bytes, 8'300.0);
  EXPECT_DOUBLE_EQ(r.f.inc, 0.0);
  r.trim_nack(52 * kUs, 5);
  EXPECT_DOUBLE_EQ(r.f.wnd_bytes, 8'300.0);
  // A packet sent after the cut (PSN 13) trimmed: one packet off, W = 4,150 B.
  r.trim_nack(53 * kUs, 13);
  EXPECT_DOUBLE_EQ(r.f.wnd_bytes, 4'150.0);
}

TEST(Nscc, PacketsHeldBeyondAHoleCountAsDelivered) {
  // The second period (25 to 49.5 us) ends with a trimmed NACK at 50 us. The receiver reports 10 packets
  // in it, all held beyond a hole (nothing acknowledged in order): 41,500 B >= Wmax / 8 = 32,812.5 B, so
  // quick adapt does not cut; the NACK takes one packet off the window: 262,500 - 4,150 = 258,350 B.
  // Counting only what was acknowledged in order, quick adapt would have cut W to one packet.
  OneFlow r;
  r.ack(25 * kUs, 1, 15 * kUs);
  const double w = r.f.wnd_bytes;
  for (int i = 0; i < 10; ++i) {
    cc::Feedback b;
    b.received = 1;  // b.acked = 0: the hole holds snd_una
    b.snd_una = r.una;
    b.snd_nxt = r.una + 20;
    b.rtt = -1;
    r.nscc.on_feedback(r.f, (30 + i) * kUs, b);
  }
  r.trim_nack(50 * kUs);
  EXPECT_DOUBLE_EQ(r.f.wnd_bytes, w - 4'150.0);
}

TEST(Nscc, TheMultipathVariantAnswersTheMedianNotTheNewestAck) {
  // Seven unmarked ACKs at d = 1 us, then one marked at d = 20 us (a packet that crossed a congested
  // path), with the delay average at 20 us. Each unmarked ACK adds a proportional increase of
  // 4 x 4,068 x 7/6 x 7/8 / 10.5 us x 4,150 x 9.5 us = 62,370,350 (pending); the eighth ACK brings the
  // acknowledged bytes to 33,200 and applies what is pending. NSCC answers the newest ACK: marked,
  // d >= T, D > T: W = 0.62 x 100,000 = 62,000, then + 7 x 62,370,350 / 62,000 = 69,041.81.
  // nscc_median reads the median of the eight delays (1 us) and the majority mark (unmarked): an eighth
  // proportional increase, no cut: 100,000 + 8 x 62,370,350 / 100,000 = 104,989.63.
  cc::NsccParams median;
  median.median_of = 8;
  cc::Nscc plain(cc::NsccParams{}, context()), multi(median, context());
  for (const cc::Nscc* n : {&plain, &multi}) {
    cc::Flow f;
    n->init(f, 100e9);
    n->start(f, 0);
    f.wnd_bytes = 100'000;
    for (uint32_t i = 1; i <= 8; ++i) {
      cc::Feedback b;
      b.acked = b.received = 1;
      b.snd_una = i;
      b.snd_nxt = i + 10;
      b.rtt = i < 8 ? 15 * kUs : 34 * kUs;
      b.marked = i < 8 ? 0 : 1;
      if (i == 8) f.avg_delay = 20e6;
      n->on_feedback(f, i * kUs, b);
    }
    if (n == &plain) {
      EXPECT_NEAR(f.wnd_bytes, 69'041.8137, 1e-3) << "NSCC cuts on the newest ACK";
    } else {
      EXPECT_NEAR(f.wnd_bytes, 104'989.628, 1e-3) << "the median ACK was unmarked at 1 us: no cut";
      EXPECT_EQ(f.t_dec, -14 * kUs);  // never decreased
    }
  }
}
