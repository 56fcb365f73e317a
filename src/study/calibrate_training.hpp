// Calibration against a training log (`podnet calibrate SCENARIO --training LOG`): one compute key fitted
// so that podnet's iteration of the scenario's job takes the log's steady step time.
//
// Model. The log (study/training_log.hpp) gives the steady steps' median time t_log, at the global batch
// the scenario's job runs (lines at another batch, such as a batch ramp-up, are left out; a log with no
// line at the job's batch is refused, naming both). podnet times one iteration of the scenario's job as
// `podnet train` does (failures left out, a job that does not fit in memory still timed) at a value x of
// the key, T(x). The fit solves
//     ln T(x) = ln t_log
// for x in the key's bounds by false position (the Illinois variant) on ln x: T is monotone in a compute
// key (workload.sustained_fraction, the default: a step's compute scales by 1/x; workload.layer_overhead,
// compute_efficiency and the like), so a bracket converges in a few simulations, to |ln T - ln t_log| <
// 1e-5 or 40 simulations. When the bracket holds no root the key ends on the bound nearer the log and the
// fit is not trusted.
//
// The step-to-step jitter (workload.jitter_cv), first, when the log times every step (one line a step, at
// least kMinJitterSteps steady ones) and the compute key is the default: podnet times kJitterSteps steps
// of the job (workload.step 1..K: each GPU's jitter redrawn, its persistent speed kept) with
// workload.variability measured at jitter_cv = j, and bisects j in [0, kMaxFittedJitterCv] until their
// robust coefficient of variation (1.4826 MAD / median, the log's estimator: a step waits for its slowest
// GPU, so step times are skewed, and only the same estimator on both sides measures the same spread) is the
// log's: the same draws at every j, so the spread grows smoothly with j. The compute key is then fitted with that
// jitter so that the median of podnet's steps 1..K is the log's median: step 0, which `podnet train` reports,
// is one draw, and the fit aims it at the log's median x (step 0 / that median, measured at the start value).
// Megatron-LM's lines are means over --log-interval steps, which hide the jitter: it is not fitted from them.
//
// What it does not fit. The persistent speed spread between GPUs (workload.speed_cv, the scenario's; 0
// when its variability is none) is one slowdown of the whole job, which a single job's log cannot tell
// from the compute key.
//
// Trust. Not trusted (Calibration-style doubts; `podnet calibrate` writes no fragment and exits 2 unless
// --force): the key on a bound, podnet's MFU at the fitted value below kMinTrustedMfu (no training job
// runs that slowly: the scenario is not the log's job), or steady steps whose robust CV exceeds
// kMaxTrustedStepCv (the log is not one steady job: restarts with other settings, a failing node). A key
// that does not change the step time (equal at both bounds) is refused.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "study/calibrate.hpp"
#include "study/training_log.hpp"

namespace podnet::study {

inline constexpr double kMaxTrustedStepCv = 0.10;
inline constexpr double kMinTrustedMfu = 0.10;
inline constexpr int kMaxTrainingFitSimulations = 40;
inline constexpr int kJitterSteps = 32;
inline constexpr size_t kMinJitterSteps = 8;
inline constexpr double kMaxFittedJitterCv = 0.2;
inline constexpr int kJitterBisections = 10;

struct TrainingCalibrationInput {
  std::string scenario;
  std::vector<std::string> sets, fragments;
  TrainingLog log;
  std::string fit;     // "KEY" or "KEY=LO:HI"; "" = workload.sustained_fraction
  std::string engine;  // "" = the scenario's
  // After every simulation: (simulations so far, |ln T - ln t_log| of the best so far, the key).
  std::function<void(int, double, const std::string&)> progress;
};

struct TrainingCalibration {
  std::string source, format, engine;
  StepStats steps;
  FittedKey key;
  int64_t gpus = 0, global_batch = 0, seq = 0;
  double log_seconds = 0;  // t_log: the steady steps' median
  // podnet's iteration at the start and fitted values (with a fitted jitter: the median of its steps 1..K,
  // fit_step0_seconds the step `podnet train` reports, step0_over_median their ratio).
  double start_seconds = 0, fit_seconds = 0, fit_step0_seconds = 0, step0_over_median = 1;
  double start_mfu = 0, fit_mfu = 0;
  // The jitter fit, when made: workload.jitter_cv, at workload.speed_cv = speed_cv, and the robust CV of
  // podnet's kJitterSteps steps there (as the log's, steps.robust_cv).
  bool jitter_fitted = false;
  double jitter_cv = 0, jitter_start = 0, speed_cv = 0, podnet_step_cv = 0;
  int evaluations = 0;
  std::vector<std::string> notes, doubts;
  // The --set entries the fit ends with (variability, spreads, the key), in the fragment's order.
  std::vector<std::pair<std::string, std::string>> fitted;
};

// InputError for a bad key or bound, a log without steady steps at the job's global batch, or a scenario
// that cannot run the job.
TrainingCalibration calibrate_training(const TrainingCalibrationInput& in);

// The fitted key as a scenario fragment (`--config-add FILE`), commented with what it was fitted to.
std::string training_fragment_yaml(const TrainingCalibration& c);

}  // namespace podnet::study
