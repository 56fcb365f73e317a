// Young/Daly intervals and goodput; expected values derived in the comments.
#include "reliability/checkpoint.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace podnet::reliability {
namespace {

constexpr double kMin = 1.0 / 60.0;  // hours
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Checkpoint, DalyPaperExamples) {
  const double d = 5 * kMin;
  // M = 24 h: √(2·(1/12)·24) = 2 h; δ/2M = 1/576, √ = 1/24;
  // 2·(1 + 1/72 + 1/5184) − 1/12 = 1.944830 h = 116.69 min (paper: 117 min).
  EXPECT_NEAR(daly_interval(d, 24) / kMin, 116.69, 0.01);
  // M = 6 h: √(2·(1/12)·6) = 1 h; δ/2M = 1/144, √ = 1/12;
  // (1 + 1/36 + 1/1296) − 1/12 = 0.945216 h = 56.71 min (paper: 57 min).
  EXPECT_NEAR(daly_interval(d, 6) / kMin, 56.71, 0.01);
  // M = 15 min: √(2·5·15) = 12.247 min; δ/2M = 1/6, √ = 0.408248;
  // 12.247·(1 + 0.136083 + 0.018519) − 5 = 9.141 min (paper: 9.1 min).
  EXPECT_NEAR(daly_interval(d, 15 * kMin) / kMin, 9.141, 0.001);
}

TEST(Checkpoint, DalyBeyondTwiceTheMtbfIsTheMtbf) {
  // δ ≥ 2M: T_opt = M.
  EXPECT_DOUBLE_EQ(daly_interval(2.0, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(daly_interval(3.0, 1.0), 1.0);
  EXPECT_TRUE(std::isinf(daly_interval(0.1, kInf)));
}

TEST(Checkpoint, Young) {
  // √(2·5 min·24 h) = √(2·5·1440) min = √14400 = 120 min.
  EXPECT_NEAR(young_interval(5 * kMin, 24) / kMin, 120.0, 1e-9);
  // Daly adds the higher-order terms and subtracts δ: 116.7 < 120.
  EXPECT_LT(daly_interval(5 * kMin, 24), young_interval(5 * kMin, 24));
}

TEST(Checkpoint, SegmentTimeClosedForm) {
  // No restart cost: E = M(e^{s/M} − 1). s = M: E = M(e − 1).
  EXPECT_NEAR(expected_segment_time(0.9, 0.1, 0, 1.0), std::exp(1.0) - 1.0, 1e-12);
  // With R: E = M·e^{R/M}·(e^{s/M} − 1); M = 2, R = 0.5, s = 1: 2·e^{0.25}·(e^{0.5} − 1).
  EXPECT_NEAR(expected_segment_time(0.8, 0.2, 0.5, 2.0), 2 * std::exp(0.25) * (std::exp(0.5) - 1), 1e-12);
  // No failures: just the segment.
  EXPECT_DOUBLE_EQ(expected_segment_time(1.0, 0.25, 1.0, kInf), 1.25);
}

TEST(Checkpoint, GoodputBelowOneAndTendsToOne) {
  const double d = 5 * kMin, r = 10 * kMin;
  double previous = 0;
  for (double m : {0.25, 1.0, 3.09, 24.0, 1e3, 1e5, 1e7}) {
    const double g = goodput(daly_interval(d, m), d, r, m);
    EXPECT_GT(g, 0.0) << m;
    EXPECT_LT(g, 1.0) << m;
    EXPECT_GT(g, previous) << m;  // more reliable -> more goodput
    previous = g;
  }
  // M = 1e7 h: τ_D ≈ √(2·(1/12)·1e7) = 1,291 h; goodput ≈ 1 − δ/τ − (R + τ/2)/M ≈ 1 − 6.5e-5 − 6.5e-5.
  EXPECT_GT(previous, 0.9998);
  EXPECT_DOUBLE_EQ(goodput(kInf, d, r, kInf), 1.0);
}

TEST(Checkpoint, DalyIntervalIsNearTheOptimum) {
  // The exact model's goodput at τ_D is within 0.1 % of the best τ found by a scan.
  const double d = 5 * kMin, r = 10 * kMin;
  for (double m : {0.5, 3.09, 24.0}) {
    double best = 0;
    for (double tau = 0.001; tau < 10 * m; tau *= 1.001) best = std::max(best, goodput(tau, d, r, m));
    const double at_daly = goodput(daly_interval(d, m), d, r, m);
    EXPECT_LE(at_daly, best + 1e-6);  // the scan's step (0.1 %) may just miss Daly's point
    EXPECT_GT(at_daly, best * 0.999) << m;
  }
}

TEST(Checkpoint, FirstOrderAgreesWhenFailuresAreRare) {
  // (τ+δ)/M and R/M small: exact and first-order goodput differ by O((τ/M)²).
  const double d = 5 * kMin, r = 10 * kMin, m = 200.0;
  const double tau = daly_interval(d, m);  // ≈ √(2·(1/12)·200) = 5.8 h; (τ+δ)/M ≈ 0.03
  EXPECT_NEAR(goodput(tau, d, r, m), goodput_first_order(tau, d, r, m), 1e-3);
  // First order: τ/(τ+δ)·(1 − (R + (τ+δ)/2)/M).
  EXPECT_NEAR(goodput_first_order(1.0, 0.0, 0.0, 10.0), 0.95, 1e-12);
}

}  // namespace
}  // namespace podnet::reliability
