// Monte Carlo against the closed forms, with fixed seeds.
#include "reliability/monte_carlo.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "reliability/checkpoint.hpp"

namespace podnet::reliability {
namespace {

std::vector<ClassRisk> thousand_gpus() {
  // 1,000 GPUs at 99.9 % monthly availability over a month: P = 1 − 0.999^1000 = 0.6323,
  // expected failures 1000·(−ln 0.999) = 1.0005.
  Config cfg;
  std::string expected;
  cfg.set_rate(Part::Gpu, parse_rate("99.9%", expected).value());
  cfg.duration_hours = kHoursPerMonth;
  Inventory inv;
  inv.classes = {{"gpu", "GPUs", Part::Gpu, Role::Compute, 1000},
                 {"optic:leaf-spine", "optics", Part::Optic, Role::FabricLink, 50000}};
  cfg.set_rate(Part::Optic, 1e-6);  // absorbed: 50,000 × 1e-6 × 720 = 36 per month
  return assess(inv, cfg).classes;
}

TEST(MonteCarlo, ClosedFormInsideTheConfidenceInterval) {
  const double p = 1 - std::pow(0.999, 1000);
  const double mean = -1000 * std::log(0.999);
  // A fixed seed. Two 95 % intervals both cover the truth for about 9 seeds in 10, not all: of seeds
  // 1..10, seed 1 misses the mean (by 2.9 standard errors) and seed 7 the probability (by 2.0); the
  // other eight cover both. This test uses seed 2. The 1e6-trial run below bounds any bias independently of the seed
  // choice.
  InterruptionEstimate e = simulate_interruptions(thousand_gpus(), kHoursPerMonth, 20000, Rng(2).stream("test"));
  ASSERT_TRUE(e.simulated);
  EXPECT_LE(e.ci95_low, p);
  EXPECT_GE(e.ci95_high, p);
  EXPECT_LE(e.mean_ci95_low, mean);
  EXPECT_GE(e.mean_ci95_high, mean);
  // Wilson half-width ≈ 1.96·√(0.632·0.368/20000) = 0.0067.
  EXPECT_NEAR(e.ci95_high - e.ci95_low, 2 * 1.96 * std::sqrt(p * (1 - p) / 20000), 1e-3);
  // Absorbed optics: 36 per trial on average (Poisson: s.e. of the mean √36/√20000 = 0.04).
  EXPECT_NEAR(e.mean_absorbed, 36.0, 0.2);
  // 1e6 trials: standard error √(0.632·0.368/1e6) = 4.8e-4; within 5 of them.
  InterruptionEstimate big =
      simulate_interruptions({thousand_gpus()[0]}, kHoursPerMonth, 1000000, Rng(2).stream("big"));
  EXPECT_NEAR(big.probability, p, 5 * 4.8e-4);
  EXPECT_NEAR(big.mean_interruptions, mean, 5 * 1e-3);  // s.e. √1.0005/1000 = 1e-3
}

TEST(MonteCarlo, DeterministicForASeed) {
  auto a = simulate_interruptions(thousand_gpus(), kHoursPerMonth, 2000, Rng(42).stream("x"));
  auto b = simulate_interruptions(thousand_gpus(), kHoursPerMonth, 2000, Rng(42).stream("x"));
  auto c = simulate_interruptions(thousand_gpus(), kHoursPerMonth, 2000, Rng(43).stream("x"));
  EXPECT_EQ(a.probability, b.probability);
  EXPECT_EQ(a.mean_interruptions, b.mean_interruptions);
  EXPECT_EQ(a.mean_absorbed, b.mean_absorbed);
  EXPECT_NE(a.mean_absorbed, c.mean_absorbed);
  auto t1 = simulate_training(100, 0.5, 0.1, 0.2, 3.0, 500, Rng(1).stream("t"));
  auto t2 = simulate_training(100, 0.5, 0.1, 0.2, 3.0, 500, Rng(1).stream("t"));
  EXPECT_EQ(t1.mean_wall_hours, t2.mean_wall_hours);
}

TEST(MonteCarlo, WilsonInterval) {
  double lo = 0, hi = 0;
  // 0 of 100: [0, z²/(n + z²)] = [0, 3.8416/103.8416] = [0, 0.0370].
  wilson95(0, 100, lo, hi);
  EXPECT_EQ(lo, 0.0);
  EXPECT_NEAR(hi, 3.8416 / 103.8416, 1e-9);
  wilson95(100, 100, lo, hi);
  EXPECT_NEAR(lo, 1 - 3.8416 / 103.8416, 1e-9);
  EXPECT_NEAR(hi, 1.0, 1e-12);
}

TEST(MonteCarlo, TrainingMatchesDalysModel) {
  // 30 days of work, MTBI 3.09 h, δ = 5 min, R = 10 min, τ = Daly (39.8 min): the simulated mean wall
  // time brackets the closed form (K−1)·E(τ) + E(w), E(s) = M·e^{R/M}·(e^{(s+δ)/M} − 1).
  const double m = 1296.0 / 419, d = 5.0 / 60, r = 10.0 / 60, work = 720;
  const double tau = daly_interval(d, m);
  const double expected = expected_training_wall(work, tau, d, r, m);
  TrainingEstimate e = simulate_training(work, tau, d, r, m, 4000, Rng(3).stream("training"));
  ASSERT_TRUE(e.simulated);
  EXPECT_LE(e.wall_ci95_low, expected);
  EXPECT_GE(e.wall_ci95_high, expected);
  // ... and the goodput of whole segments, τ / E(τ), agrees to well under 0.1 %.
  EXPECT_NEAR(work / expected, goodput(tau, d, r, m), 1e-3);
  EXPECT_LE(e.goodput_ci95_low, work / expected);
  EXPECT_GE(e.goodput_ci95_high, work / expected);
}

TEST(MonteCarlo, SkipsRatherThanRunsForever) {
  // MTBI 1 min with a 10 min restart: E ∝ e^{10}: refused, with the reason.
  TrainingEstimate e = simulate_training(720, 0.01, 0.01, 10.0 / 60, 1.0 / 60, 10000, Rng(1));
  EXPECT_FALSE(e.simulated);
  EXPECT_NE(e.skipped.find("budget"), std::string::npos);
  EXPECT_FALSE(simulate_interruptions(thousand_gpus(), 720, 0, Rng(1)).simulated);
}

TEST(MonteCarlo, AnOverflowingDrawCountIsSaidInWordsNotInf) {
  // MTBI 1 min (1/60 h) and a 1000 h restart: a restart succeeds with
  // probability e^(-R/M) = e^(-60,000), so the expected wall time, and the
  // draws per trial, overflow a double (e^709 is its largest power of e).
  // The note must say so without printing "inf" (it is echoed in every
  // output format).
  TrainingEstimate e = simulate_training(720, 0.01, 0.01, 1000.0, 1.0 / 60, 10000, Rng(1));
  EXPECT_FALSE(e.simulated);
  EXPECT_EQ(e.skipped, "more than 1e308 random draws per trial: 0 of 10,000 trials fit the 20,000,000-draw budget");
  EXPECT_EQ(e.skipped.find("inf"), std::string::npos);
}

TEST(MonteCarlo, FewerTrialsWhenTheBudgetRequires) {
  // One class failing 1e4 times per trial (+1 closing draw): 2e7 / 10,001 = 1,999 of 10,000 trials fit.
  ClassRisk c;
  c.class_rate = 1e4 / 720;
  c.interrupts = true;
  InterruptionEstimate e = simulate_interruptions({c}, 720, 10000, Rng(1));
  EXPECT_TRUE(e.simulated);
  EXPECT_EQ(e.requested, 10000);
  EXPECT_EQ(e.trials, 1999);
  EXPECT_NE(e.reduced.find("1,999 of 10,000"), std::string::npos) << e.reduced;
  EXPECT_NEAR(e.mean_interruptions, 1e4, 5 * 100 / std::sqrt(1999.0));  // Poisson s.e. √1e4/√n
}

}  // namespace
}  // namespace podnet::reliability
