#include "study/training_log.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "core/error.hpp"

namespace podnet::study {
namespace {

TrainingLog parse(const std::string& text, const std::string& source = "run.log") {
  std::istringstream in(text);
  return parse_training_log(in, source);
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Megatron-LM core_v0.6+ (a timestamp first) behind a torchrun prefix, and v2.x without a timestamp; the
// labels are found wherever they are. The time is in ms, the iteration 1-based.
TEST(TrainingLog, ReadsMegatronLinesWithOrWithoutATimestamp) {
  const TrainingLog log =
      parse("using world size: 8\n"
            "[default7]: [2024-05-01 12:00:00] iteration      100/  500000 | consumed samples:          800 | elapsed "
            "time per iteration (ms): 1115.2 | throughput per GPU (TFLOP/s/GPU): 400.1 | learning rate: 1.500000E-04 | "
            "global batch size:     8 | lm loss: 1.000000E+01 | loss scale: 1.0 | number of skipped iterations:   0 | "
            "number of nan iterations:   0 |\n"
            " iteration      200/  500000 | consumed samples:         1600 | elapsed time per iteration (ms): 1120.0 | "
            "learning rate: 1.500E-04 | global batch size:     8 | lm loss: 9.0 |\n");
  EXPECT_EQ(log.format, "Megatron-LM");
  ASSERT_EQ(log.steps.size(), 2u);
  EXPECT_EQ(log.steps[0].iteration, 100);
  EXPECT_DOUBLE_EQ(log.steps[0].seconds, 1.1152);
  EXPECT_EQ(log.steps[0].global_batch, 8);
  EXPECT_EQ(log.steps[0].line, 2);
  EXPECT_EQ(log.steps[1].iteration, 200);
  EXPECT_DOUBLE_EQ(log.steps[1].seconds, 1.12);
}

// NeMo 2's progress printer counts iterations from 0, kept as printed.
TEST(TrainingLog, ReadsNemo2ProgressLines) {
  const TrainingLog log =
      parse("ining-demo/0 [default0]:Training epoch 0, iteration 48/99 | lr: 7.496e-06 | global_batch_size: 128 | "
            "global_step: 48 | reduced_train_loss: 11.96 | train_step_timing in s: 12.39 | consumed_samples: 6272\n"
            "Training epoch 0, iteration 49/99 | global_batch_size: 128 | train_step_timing in s: 12.4 |\n");
  EXPECT_EQ(log.format, "NeMo 2");
  ASSERT_EQ(log.steps.size(), 2u);
  EXPECT_EQ(log.steps[0].iteration, 48);
  EXPECT_DOUBLE_EQ(log.steps[0].seconds, 12.39);
  EXPECT_EQ(log.steps[0].global_batch, 128);
  EXPECT_EQ(log.steps[1].iteration, 49);
}

// NeMo 1's tqdm bar redraws on one physical line with carriage returns; the last redraw of each global
// step counts (the same step redrawn twice here, the second with 3.13).
TEST(TrainingLog, ReadsNemo1ProgressBarRedraws) {
  const TrainingLog log =
      parse("Epoch 0: :  1%| | 1/100 [00:05<09:00, reduced_train_loss=11.0, global_step=0.000, train_step_timing in "
            "s=5.210]\rEpoch 0: :  2%| | 2/100 [00:08<09:00, reduced_train_loss=11.0, global_step=1.000, "
            "train_step_timing in s=3.120]\rEpoch 0: :  2%| | 2/100 [00:08<09:00, reduced_train_loss=11.0, "
            "global_step=1.000, train_step_timing in s=3.130]\n");
  EXPECT_EQ(log.format, "NeMo 1 progress bar");
  ASSERT_EQ(log.steps.size(), 2u);
  EXPECT_EQ(log.steps[0].iteration, 0);
  EXPECT_DOUBLE_EQ(log.steps[0].seconds, 5.21);
  EXPECT_EQ(log.steps[1].iteration, 1);
  EXPECT_DOUBLE_EQ(log.steps[1].seconds, 3.13);
}

TEST(TrainingLog, ReadsNemoDeltaTiming) {
  const TrainingLog log = parse("Step 12: train_step_timing in s=1.2345\nStep 13: train_step_timing in s=1.25\n");
  EXPECT_EQ(log.format, "NeMo step timing");
  ASSERT_EQ(log.steps.size(), 2u);
  EXPECT_EQ(log.steps[0].iteration, 12);
  EXPECT_DOUBLE_EQ(log.steps[0].seconds, 1.2345);
}

// A label without its number is an error at its line; a file without any step line says what it expected.
TEST(TrainingLog, RefusesWhatItCannotRead) {
  EXPECT_NE(error_of("x\n iteration 2/ 10 | elapsed time per iteration (ms): abc |\n")
                .find("run.log:2: expected a time in milliseconds after 'elapsed time per iteration (ms):'"),
            std::string::npos);
  EXPECT_NE(error_of("Training epoch 0, iteration 3/9 | train_step_timing in s: nan |\n")
                .find("run.log:1: expected a time in seconds"),
            std::string::npos);
  EXPECT_NE(error_of(" elapsed time per iteration (ms): 12.0 |\n").find("run.log:1: a Megatron-LM step line without"),
            std::string::npos);
  EXPECT_NE(error_of(" iteration 2/ 10 | elapsed time per iteration (ms): 0.0 |\n").find("expected a positive time"),
            std::string::npos);
  // A thousands separator would read as 1: refused.
  EXPECT_NE(error_of(" iteration 2/ 10 | elapsed time per iteration (ms): 1,115.0 |\n")
                .find("run.log:1: expected a time in milliseconds after 'elapsed time per iteration (ms):' (a plain "
                      "number: 1115.2)"),
            std::string::npos);
  EXPECT_NE(error_of("Training epoch 0, iteration 3/9 | train_step_timing in s: 1,115 |\n").find("run.log:1:"),
            std::string::npos);
  const std::string none = error_of("hello\nworld\n");
  EXPECT_NE(none.find("run.log: no training step lines: expected Megatron-LM's"), std::string::npos) << none;
}

std::string megatron(int64_t iteration, double ms, int64_t batch = 8) {
  return " iteration " + std::to_string(iteration) + "/ 1000 | elapsed time per iteration (ms): " + std::to_string(ms) +
         " | global batch size: " + std::to_string(batch) + " |\n";
}

// Hand-derived: a run logged every step from 1 to 20, then restarted (the count starts again at 1) for 15
// more. Warm-up: each run's first line and every line up to 10 iterations after it (iterations 1-11): 11 +
// 11 left out; 9 + 4 = 13 kept, all at 100 ms except iteration 15 of the first run at 130 ms (a stall).
// Sorted: twelve 100s and one 130: median 100, p95 at position 0.95 x 12 = 11.4 between 100 and 130: 112;
// the deviations from the median: twelve 0 and one 30: MAD 0, robust CV 0 (the stall does not move it).
TEST(TrainingLog, SteadyStepsLeaveOutWarmupAndRestarts) {
  std::string text;
  for (int i = 1; i <= 20; ++i) text += megatron(i, i == 1 ? 900.0 : i == 15 ? 130.0 : 100.0);
  for (int i = 1; i <= 15; ++i) text += megatron(i, i == 1 ? 900.0 : 100.0);
  const StepStats s = steady_steps(parse(text), 8);
  EXPECT_EQ(s.runs, 2);
  EXPECT_EQ(s.warmup, 22u);
  EXPECT_EQ(s.kept, 13u);
  EXPECT_EQ(s.interval, 1);
  EXPECT_DOUBLE_EQ(s.median, 0.1);
  EXPECT_NEAR(s.p95, 0.112, 1e-12);
  EXPECT_DOUBLE_EQ(s.max, 0.13);
  EXPECT_DOUBLE_EQ(s.robust_cv, 0.0);
  EXPECT_NEAR(s.mean, (12 * 0.1 + 0.13) / 13, 1e-12);
}

// Spread by hand: steps 0.9, 1.0, 1.1 (after warm-up) x3: median 1.0, deviations 0.1, 0, 0.1 (x3): MAD 0.1,
// robust CV 1.4826 x 0.1 / 1.0.
TEST(TrainingLog, RobustSpreadIsMadOverMedian) {
  std::string text;
  for (int i = 1; i <= 11; ++i) text += megatron(i, 1000);
  const double t[] = {900, 1000, 1100};
  for (int i = 12; i <= 20; ++i) text += megatron(i, t[i % 3]);
  const StepStats s = steady_steps(parse(text), 0);
  EXPECT_EQ(s.kept, 9u);
  EXPECT_NEAR(s.robust_cv, 0.14826, 1e-9);
}

// Lines at another global batch (a batch ramp-up) are left out; too few steady lines is an error that says
// why. 16 lines, batch 4 up to iteration 14, then 8: warm-up 11 (iterations 1-11), at batch 4 three (12-14),
// at batch 8 two (15, 16).
TEST(TrainingLog, OtherBatchesAndTooFewStepsAreSaid) {
  std::string text;
  for (int i = 1; i <= 16; ++i) text += megatron(i, 100, i <= 14 ? 4 : 8);
  const TrainingLog log = parse(text);
  try {
    steady_steps(log, 8);
    FAIL() << "two steady lines at batch 8";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("run.log: 2 steady step lines of 16; need at least 3: left out 11 as "
                                         "warm-up (every run's first line and the 10 iterations after it) and 3 at a "
                                         "global batch other than the scenario's 8"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(steady_steps(log, 0).kept, 5u);  // iterations 12-16, any batch
}

}  // namespace
}  // namespace podnet::study
