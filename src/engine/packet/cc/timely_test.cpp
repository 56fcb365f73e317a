// TIMELY (timely.hpp): one flow's rate, ACK by ACK, against figures derived by hand.
// 100 Gb/s line: delta = 100 Mb/s (1/1,000 of the line); EWMA a = 0.02, minRTT = 2 us, T_low = 50 us,
// T_high = 1,000 us, beta = 0.8. ACKs at least minRTT apart take whole steps (f = 1).
#include <gtest/gtest.h>

#include "engine/packet/cc/cc_test_util.hpp"
#include "engine/packet/cc/timely.hpp"

namespace cc = podnet::engine::packet::cc;
using cc::testing::kUs;

namespace {

// An ACK at `now` of one packet whose newest took `rtt`; the rate it asks for (the NIC applies it).
double ack(const cc::Timely& t, cc::Flow& f, int64_t now, int64_t rtt) {
  cc::Feedback b;
  b.acked = 1;
  b.rtt = rtt;
  const cc::Reaction r = t.on_feedback(f, now, b);
  if (r.rate >= 0) f.rate = r.rate;
  return f.rate;
}

// A QP of a 100 Gb/s NIC started at 0, its rate set to 50 Gb/s.
cc::Flow at_half_rate(const cc::Timely& t) {
  cc::Flow f;
  t.init(f, 100e9);
  t.start(f, 0);
  f.rate = 50e9;
  return f;
}

}  // namespace

TEST(Timely, RateFollowsTheRoundTripAndItsGradient) {
  const cc::Timely t(cc::TimelyParams{});
  cc::Flow f;
  t.init(f, 100e9);
  t.start(f, 0);
  EXPECT_DOUBLE_EQ(f.rate, 100e9);  // starts at line rate
  EXPECT_FALSE(t.traits().ecn);
  f.rate = 50e9;
  // 10 us < T_low: + delta = 50.1 Gb/s.
  EXPECT_DOUBLE_EQ(ack(t, f, 10 * kUs, 10 * kUs), 50.1e9);
  // 60 us: diff = 0.02 x (60 - 10) us = 1 us, gradient 1 / 2 = 0.5 > 0: x (1 - 0.8 x 0.5) = 30.06 Gb/s.
  EXPECT_NEAR(ack(t, f, 20 * kUs, 60 * kUs), 30.06e9, 1);
  // 1,200 us > T_high: x (1 - 0.8 (1 - 1,000 / 1,200)) = 26.052 Gb/s.
  EXPECT_NEAR(ack(t, f, 30 * kUs, 1200 * kUs), 26.052e9, 1);
  // 0.5 us later (a quarter of minRTT, f = 0.25), 10 us: + 0.25 x 100 Mb/s = 26.077 Gb/s.
  EXPECT_NEAR(ack(t, f, 30 * kUs + kUs / 2, 10 * kUs), 26.077e9, 1);
}

TEST(Timely, AnUpdateAtMostHalvesTheRate) {
  // 100 us (between T_low and T_high), the first sample: gradient 0, + delta = 50.1 Gb/s. Then 300 us:
  // diff = 0.02 x 200 us = 4 us, gradient 2: x (1 - 0.8 x 2) < 0, held at half: 25.05 Gb/s.
  const cc::Timely t(cc::TimelyParams{});
  cc::Flow f = at_half_rate(t);
  EXPECT_NEAR(ack(t, f, 10 * kUs, 100 * kUs), 50.1e9, 1);
  EXPECT_NEAR(ack(t, f, 20 * kUs, 300 * kUs), 25.05e9, 1);
}

TEST(Timely, FiveFallingOrFlatRoundTripsInARowIncreaseFiveFold) {
  // 100 us each time (between T_low and T_high), 2 us apart: the gradient stays 0. ACKs 1-4 add delta
  // each, the 5th and 6th 5 delta each: 50 Gb/s + 4 x 100 + 5 x 100 Mb/s = 50.9 Gb/s, then 51.4 Gb/s.
  const cc::Timely t(cc::TimelyParams{});
  cc::Flow f = at_half_rate(t);
  for (int i = 1; i <= 5; ++i) ack(t, f, 2 * i * kUs, 100 * kUs);
  EXPECT_NEAR(f.rate, 50.9e9, 1);
  EXPECT_NEAR(ack(t, f, 12 * kUs, 100 * kUs), 51.4e9, 1);
}
