#include "reliability/monte_carlo.hpp"

#include <cmath>
#include <fmt/format.h>

#include "core/units.hpp"
#include "reliability/checkpoint.hpp"

namespace podnet::reliability {

namespace {

constexpr double kZ = 1.96;
constexpr double kMaxDraws = 2e7;    // about half a second
constexpr int64_t kMinTrials = 100;  // fewer than this: skip rather than report a loose estimate

// Trials that fit the draw budget; sets `note` when fewer than requested.
int64_t affordable(int64_t requested, double draws_per_trial, std::string& note) {
  if (!(draws_per_trial * static_cast<double>(requested) > kMaxDraws)) return requested;
  const double fit = std::isfinite(draws_per_trial) ? std::floor(kMaxDraws / draws_per_trial) : 0.0;
  // An expected count past what a double holds (e^(R/M) overflows for a
  // restart R far above the MTBI M) is said in words: no output prints inf.
  // Two significant digits, with thousands separators (25,000,000, not 2.5e+07); past what an int64 holds, in words.
  std::string draws = "more than 1e308";
  if (std::isfinite(draws_per_trial) && draws_per_trial < 9e18) {
    const double step = std::pow(10.0, std::max(0.0, std::floor(std::log10(std::max(draws_per_trial, 1.0))) - 1));
    draws = "about " + thousands(static_cast<int64_t>(std::llround(draws_per_trial / step) * step));
  } else if (std::isfinite(draws_per_trial)) {
    draws = "more than 9e18";
  }
  note = fmt::format("{} random draws per trial: {} of {} trials fit the {}-draw budget", draws,
                     thousands(static_cast<int64_t>(std::max(fit, 0.0))), thousands(requested),
                     thousands(static_cast<int64_t>(kMaxDraws)));
  return static_cast<int64_t>(std::max(fit, 0.0));
}

struct Moments {
  double sum = 0, sum_sq = 0;
  void add(double x) {
    sum += x;
    sum_sq += x * x;
  }
  double mean(int64_t n) const { return sum / static_cast<double>(n); }
  // Half-width of the 95 % normal interval of the mean.
  double half95(int64_t n) const {
    if (n < 2) return 0;
    const double m = mean(n);
    const double var = std::max(0.0, (sum_sq - static_cast<double>(n) * m * m) / static_cast<double>(n - 1));
    return kZ * std::sqrt(var / static_cast<double>(n));
  }
};

}  // namespace

void wilson95(int64_t k, int64_t n, double& low, double& high) {
  if (n <= 0) {
    low = 0;
    high = 1;
    return;
  }
  const double nn = static_cast<double>(n), p = static_cast<double>(k) / nn, z2 = kZ * kZ;
  const double denom = 1.0 + z2 / nn;
  const double center = (p + z2 / (2.0 * nn)) / denom;
  const double half = kZ * std::sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn)) / denom;
  low = std::max(0.0, center - half);
  high = std::min(1.0, center + half);
}

InterruptionEstimate simulate_interruptions(const std::vector<ClassRisk>& classes, double hours, int64_t trials,
                                            Rng rng) {
  InterruptionEstimate e;
  e.requested = trials;
  if (trials <= 0) {
    e.skipped = "monte_carlo_trials is 0";
    return e;
  }
  double per_trial = 0;
  for (const auto& c : classes) per_trial += c.class_rate * hours + 1.0;
  trials = affordable(trials, per_trial, e.reduced);
  e.trials = trials;
  if (trials < kMinTrials) {
    e.skipped = e.reduced;
    return e;
  }
  int64_t hit = 0;
  Moments inter, absorbed;
  for (int64_t trial = 0; trial < trials; ++trial) {
    int64_t n_int = 0, n_abs = 0;
    for (const auto& c : classes) {
      if (!(c.class_rate > 0)) continue;
      for (double t = rng.exponential(c.class_rate); t < hours; t += rng.exponential(c.class_rate)) {
        // A failure interrupts the job when it always does, or when its recovery exceeds the timeout
        // (ClassRisk::interrupts already holds that comparison).
        if (c.interrupts) ++n_int;
        else ++n_abs;
      }
    }
    hit += n_int > 0;
    inter.add(static_cast<double>(n_int));
    absorbed.add(static_cast<double>(n_abs));
  }
  e.simulated = true;
  e.probability = static_cast<double>(hit) / static_cast<double>(trials);
  wilson95(hit, trials, e.ci95_low, e.ci95_high);
  e.mean_interruptions = inter.mean(trials);
  e.mean_ci95_low = std::max(0.0, e.mean_interruptions - inter.half95(trials));
  e.mean_ci95_high = e.mean_interruptions + inter.half95(trials);
  e.mean_absorbed = absorbed.mean(trials);
  return e;
}

double expected_training_wall(double work, double tau, double d, double r, double m) {
  if (std::isinf(tau) || tau >= work) return expected_segment_time(work, d, r, m);
  const double k = std::ceil(work / tau);
  const double last = work - (k - 1.0) * tau;
  return (k - 1.0) * expected_segment_time(tau, d, r, m) + expected_segment_time(last, d, r, m);
}

TrainingEstimate simulate_training(double work, double tau, double d, double r, double m, int64_t trials, Rng rng) {
  TrainingEstimate e;
  e.requested = trials;
  if (trials <= 0) {
    e.skipped = "monte_carlo_trials is 0";
    return e;
  }
  if (std::isinf(m)) {
    e.skipped = "nothing interrupts the job";
    return e;
  }
  const double wall = expected_training_wall(work, tau, d, r, m);
  const double segments = std::isinf(tau) ? 1.0 : std::ceil(work / tau);
  // Draws per trial: one per segment attempt and per restart attempt, about segments + 2 * wall / M.
  trials = affordable(trials, segments + 2.0 * wall / m + 1.0, e.reduced);
  e.trials = trials;
  if (trials < kMinTrials) {
    e.skipped = e.reduced;
    return e;
  }
  const double rate = 1.0 / m;
  // Same schedule as expected_training_wall: K - 1 segments of tau, then the rest.
  const bool one = std::isinf(tau) || tau >= work;
  const auto k_segments = static_cast<int64_t>(one ? 1.0 : segments);
  const double last = one ? work : work - static_cast<double>(k_segments - 1) * tau;
  Moments walls;
  for (int64_t trial = 0; trial < trials; ++trial) {
    double clock = 0;
    for (int64_t k = 0; k < k_segments; ++k) {
      const double seg = (k + 1 < k_segments ? tau : last) + d;
      for (;;) {
        const double x = rng.exponential(rate);
        if (x >= seg) {
          clock += seg;
          break;
        }
        clock += x;  // interrupted: the segment's progress is lost
        for (;;) {   // restart, which can itself be interrupted
          const double y = rng.exponential(rate);
          if (y >= r) {
            clock += r;
            break;
          }
          clock += y;
        }
      }
    }
    walls.add(clock);
  }
  e.simulated = true;
  e.mean_wall_hours = walls.mean(trials);
  const double half = walls.half95(trials);
  e.wall_ci95_low = e.mean_wall_hours - half;
  e.wall_ci95_high = e.mean_wall_hours + half;
  e.goodput = work / e.mean_wall_hours;
  e.goodput_ci95_low = work / e.wall_ci95_high;
  e.goodput_ci95_high = e.wall_ci95_low > 0 ? work / e.wall_ci95_low : 1.0;
  return e;
}

}  // namespace podnet::reliability
