// TIMELY (timely.hpp): one flow's rate, ACK by ACK, against figures derived by hand.
// delta = 40 Mb/s, EWMA a = 0.02, minRTT = 2 us, T_low = 50 us, T_high = 1,000 us, beta = 0.8.
#include <gtest/gtest.h>

#include "engine/packet/cc/cc_test_util.hpp"
#include "engine/packet/cc/timely.hpp"

namespace cc = podnet::engine::packet::cc;
using cc::testing::kUs;

namespace {

// An ACK of one packet whose newest took `rtt`; the rate it asks for (the NIC applies it).
double ack(const cc::Timely& t, cc::Flow& f, int64_t rtt) {
  cc::Feedback b;
  b.acked = 1;
  b.rtt = rtt;
  const cc::Reaction r = t.on_feedback(f, 0, b);
  if (r.rate >= 0) f.rate = r.rate;
  return f.rate;
}

}  // namespace

TEST(Timely, RateFollowsTheRoundTripAndItsGradient) {
  const cc::Timely t(cc::TimelyParams{});
  cc::Flow f;
  t.init(f, 100e9);
  EXPECT_DOUBLE_EQ(f.rate, 100e9);  // starts at line rate
  EXPECT_FALSE(t.traits().ecn);
  f.rate = 50e9;
  // 10 us < T_low: + delta = 50.04 Gb/s.
  EXPECT_DOUBLE_EQ(ack(t, f, 10 * kUs), 50.04e9);
  // 60 us: diff = 0.02 x (60 - 10) us = 1 us, gradient 1 / 2 = 0.5 > 0: x (1 - 0.8 x 0.5) = 30.024 Gb/s.
  EXPECT_NEAR(ack(t, f, 60 * kUs), 30.024e9, 1);
  // 1,200 us > T_high: x (1 - 0.8 (1 - 1,000 / 1,200)) = 26.0208 Gb/s.
  EXPECT_NEAR(ack(t, f, 1200 * kUs), 26.0208e9, 1);
}

TEST(Timely, FiveFallingOrFlatRoundTripsInARowIncreaseFiveFold) {
  // 100 us each time (between T_low and T_high): the gradient stays 0. ACKs 1-4 add delta each, the
  // 5th and 6th 5 delta each: 50 Gb/s + 4 x 40 + 5 x 40 + 5 x 40 Mb/s = 50.56 Gb/s.
  const cc::Timely t(cc::TimelyParams{});
  cc::Flow f;
  t.init(f, 100e9);
  f.rate = 50e9;
  for (int i = 0; i < 5; ++i) ack(t, f, 100 * kUs);
  EXPECT_NEAR(f.rate, 50.36e9, 1);
  EXPECT_NEAR(ack(t, f, 100 * kUs), 50.56e9, 1);
}
