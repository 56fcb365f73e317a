// Monte-Carlo check of the closed forms (risk.hpp, checkpoint.hpp).
//
// Interruptions. Each trial runs the job for T hours. For every component
// class the failure times are drawn one after another, t_{k+1} = t_k + X_k
// with X_k ~ Exp(n·λ) (our own inverse-CDF sampling on podnet::Rng: the
// first failure among n components failing at λ each is exponential with
// rate n·λ, and a failed component is replaced, so the class is a Poisson
// process of rate n·λ); each failure interrupts the job when its recovery
// exceeds the collective timeout (or always, for the classes that stop the
// job), else it is absorbed. Estimates over the trials:
//   P(at least one interruption): the fraction of trials with one, with a
//     95 % Wilson score interval (well-behaved at p near 0 or 1):
//     (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n), z = 1.96;
//   interruptions per trial: the mean ± 1.96·s/√n.
//
// Training. Each trial trains for W hours of useful work in segments of τ
// compute + δ checkpoint (the last one shorter), drawing the time to the
// next interruption as Exp(1/M): an interruption loses the segment's
// progress and costs a restart R, itself interruptible (the assumptions of
// Daly's model). The mean wall time (± 1.96·s/√n) gives goodput = W / wall
// and days to train; the closed form (K−1)·E(τ) + E(w) must lie inside.
//
// Work is bounded to about 2e7 random draws per part (half a second): when
// the requested trials need more, fewer are run (`trials` < `requested`,
// with the reason in `reduced`; the intervals widen accordingly), and below
// 100 trials the part is skipped (`skipped`). Nothing is truncated silently.
// Streams: "reliability.interruptions" and "reliability.training" of the
// scenario seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "reliability/risk.hpp"

namespace podnet::reliability {

struct InterruptionEstimate {
  int64_t requested = 0;
  int64_t trials = 0;  // run
  bool simulated = false;
  std::string reduced;  // why fewer trials than requested
  std::string skipped;  // why not simulated
  double probability = 0, ci95_low = 0, ci95_high = 0;
  double mean_interruptions = 0, mean_ci95_low = 0, mean_ci95_high = 0;
  double mean_absorbed = 0;
};

struct TrainingEstimate {
  int64_t requested = 0;
  int64_t trials = 0;
  bool simulated = false;
  std::string reduced;
  std::string skipped;
  double mean_wall_hours = 0, wall_ci95_low = 0, wall_ci95_high = 0;
  double goodput = 0, goodput_ci95_low = 0, goodput_ci95_high = 0;
};

InterruptionEstimate simulate_interruptions(const std::vector<ClassRisk>& classes, double hours, int64_t trials,
                                            Rng rng);
TrainingEstimate simulate_training(double work_hours, double interval, double checkpoint_cost, double restart_cost,
                                   double mtbi, int64_t trials, Rng rng);
// Closed-form expected wall time of simulate_training's schedule.
double expected_training_wall(double work_hours, double interval, double checkpoint_cost, double restart_cost,
                              double mtbi);

// 95 % Wilson score interval of a proportion.
void wilson95(int64_t successes, int64_t trials, double& low, double& high);

}  // namespace podnet::reliability
