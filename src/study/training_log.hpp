// Training logs, read: the per-step times of a real training run, which `podnet calibrate --training` fits a
// scenario's compute terms to (study/calibrate_training.hpp).
//
// Formats (found by their labels anywhere on a line, so launcher prefixes such as srun's "0: " or
// torchrun's "[default7]:" and other ranks' output glued onto the line do not matter):
// - Megatron-LM and Megatron-Bridge, `training_log` in megatron/training/training.py (megatron/training.py
//   before core_v0.6.0):
//     [2024-05-01 12:00:00] iteration      200/  500000 | consumed samples: ... | elapsed time per
//     iteration (ms): 1115.2 | ... | global batch size:     8 | lm loss: ... |
//   The time is the mean over the --log-interval iterations since the previous line (evaluation and
//   checkpoint saves excluded), 1-based iterations; the timestamp is absent before core_v0.6.0.
// - NeMo 2's ProgressPrinter: "Training epoch 0, iteration 49/99 | ... | global_batch_size: 128 | ... |
//   train_step_timing in s: 12.39 | ..." (0-based iterations, kept as printed).
// - NeMo 1's progress bar (PyTorch Lightning's tqdm): "Epoch 0: : 40%|...| 40/100 [..., global_step=39.00,
//   ..., train_step_timing in s=3.130]", redrawn with carriage returns on one physical line (each redraw
//   is a record; the last one of a global_step counts; its iteration is the global step, 0-based); the
//   value has 3 significant digits.
// A number must end where it ends: "1,115.0" (a thousands separator, which no trainer prints) is refused,
// not read as 1.
// - NeMo's DeltaTimingCallback: "Step 12: train_step_timing in s=1.2345".
// A line that carries a step label but no number after it is an InputError at FILE:LINE; lines without
// one are skipped.
//
// Steady state (steady_steps): a run restarts where the iteration number does not grow; in every run the
// first logged line (the first step's warm-up: CUDA and NCCL initialisation, allocator growth) and every
// line within kWarmupIterations after it are left out. The median of the rest is the
// step time; the robust coefficient of variation is 1.4826 MAD / median (the standard deviation's estimate
// for normal data, unmoved by the rare garbage-collection or data-loader stall).
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace podnet::study {

struct TrainingStep {
  int64_t iteration = 0;     // as the log numbers it (Megatron-LM 1-based, NeMo 0-based)
  double seconds = 0;        // the step time as logged (a mean over the log interval for Megatron)
  int64_t global_batch = 0;  // as the line says; 0 when it does not
  int line = 0;              // in the file, 1-based
};

struct TrainingLog {
  std::string source;
  std::string format;  // "Megatron-LM", "NeMo 2", "NeMo 1 progress bar", "NeMo step timing"
  std::vector<TrainingStep> steps;
};

// What a log's steady steps say.
struct StepStats {
  size_t kept = 0, warmup = 0, other_batch = 0;  // lines kept; left out as warm-up; at another global batch
  int runs = 1;                                  // restarts + 1
  int64_t interval = 0;         // iterations between consecutive kept lines (the median gap; 1 = every step)
  int64_t first = 0, last = 0;  // the first and last kept iterations
  double median = 0, mean = 0, p5 = 0, p95 = 0, min = 0, max = 0;  // seconds
  double robust_cv = 0;                                            // 1.4826 MAD / median
};

inline constexpr int64_t kWarmupIterations = 10;
inline constexpr size_t kMinSteadySteps = 3;

TrainingLog parse_training_log(std::istream& in, const std::string& source);
// InputError when the file cannot be read or holds no step lines.
TrainingLog read_training_log(const std::string& path);

// The median of `t`, and its robust coefficient of variation 1.4826 MAD / median (0 for a zero median).
double median_of(std::vector<double> t);
double robust_cv(const std::vector<double>& t);

// The steady steps at global batch `batch` (0 = any). InputError when fewer than kMinSteadySteps remain,
// saying how many lines were left out and why.
StepStats steady_steps(const TrainingLog& log, int64_t batch);

}  // namespace podnet::study
