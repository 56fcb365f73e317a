#include "study/calibrate_training.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "scenario/setup.hpp"
#include "study/train.hpp"

namespace podnet::study {
namespace {

// Megatron-LM's CI job gpt3_7b_tp4_pp1 (tests/data/training-logs/README.md) on one 8-GPU server.
const std::vector<std::string> kJob = {"topology.gpus=8",
                                       "workload.model=gpt3-175b",
                                       "workload.layers=32",
                                       "workload.hidden=4096",
                                       "workload.heads=32",
                                       "workload.kv_heads=8",
                                       "workload.ffn=16384",
                                       "workload.vocab=131072",
                                       "workload.seq=8192",
                                       "workload.tp=4",
                                       "workload.pp=1",
                                       "workload.dp=2",
                                       "workload.microbatch=2",
                                       "workload.global_batch=8",
                                       "workload.zero=1",
                                       "workload.recompute=none",
                                       "workload.interleave=1",
                                       "workload.stage_layers=even",
                                       "network.engine=analytical"};

double step_seconds(const std::vector<std::string>& extra) {
  std::vector<std::string> sets = kJob;
  sets.insert(sets.end(), extra.begin(), extra.end());
  TrainRequest r;
  r.failures = false;
  return train(scenario::resolve(scenario::load("aipod-16k", sets)), r).result.iteration.seconds();
}

TrainingCalibrationInput input(const std::string& log_text, const std::vector<std::string>& extra = {}) {
  TrainingCalibrationInput in;
  in.scenario = "aipod-16k";
  in.sets = kJob;
  in.sets.insert(in.sets.end(), extra.begin(), extra.end());
  std::istringstream text(log_text);
  in.log = parse_training_log(text, "run.log");
  return in;
}

// A log podnet wrote fits back: 60 steps of the job at sustained_fraction 0.7 with a step-to-step jitter
// of 2 % (workload.step 1..60, persistent speeds equal), written as NeMo 2 prints them (4 significant
// digits). The fit finds 0.7 within 0.5 % and the jitter within 30 % (it finds 0.016): a spread read as
// 1.4826 MAD / median from n steps is known to about 1.17 / sqrt(n), +-17 % for the log's 49 steady steps
// and +-21 % for podnet's 32 (steps 1-32 of this job read 1.04 % at jitter 0.02, steps 12-120 0.86 %).
TEST(CalibrateTraining, FitsBackTheComputeAndJitterOfALogPodnetWrote) {
  std::string text;
  for (int k = 1; k <= 60; ++k) {
    const double t =
        step_seconds({"workload.sustained_fraction=0.7", "workload.variability=measured", "workload.speed_cv=0",
                      "workload.jitter_cv=0.02", fmt::format("workload.step={}", k)});
    text += fmt::format("Training epoch 0, iteration {}/59 | global_batch_size: 8 | train_step_timing in s: {:.4g} |\n",
                        k - 1, t);
  }
  const TrainingCalibration c = calibrate_training(input(text));
  EXPECT_EQ(c.format, "NeMo 2");
  EXPECT_EQ(c.steps.kept, 49u);
  EXPECT_EQ(c.key.key, "workload.sustained_fraction");
  EXPECT_NEAR(c.key.value / 0.7, 1.0, 0.005);
  ASSERT_TRUE(c.jitter_fitted);
  EXPECT_NEAR(c.jitter_cv / 0.02, 1.0, 0.3);
  EXPECT_NEAR(c.fit_seconds / c.log_seconds, 1.0, 1e-4);
  EXPECT_TRUE(c.doubts.empty());
  // The fragment holds the four keys.
  const std::string y = training_fragment_yaml(c);
  for (const char* key : {"variability: measured", "speed_cv: 0", "jitter_cv: ", "sustained_fraction: "})
    EXPECT_NE(y.find(key), std::string::npos) << key << "\n" << y;
}

// Megatron-LM's CI log: lines every 2 iterations (means over 2 steps), so the jitter is not fitted and the
// note says why; the compute key lands the step on the log's median (1.115 s).
TEST(CalibrateTraining, FitsMegatronsPublishedCiRun) {
  TrainingCalibrationInput in;
  in.scenario = "aipod-16k";
  in.sets = kJob;
  in.log =
      read_training_log(std::string(PODNET_SOURCE_DIR) + "/tests/data/training-logs/megatron-ci-gpt3-7b-tp4-h100.log");
  const TrainingCalibration c = calibrate_training(in);
  EXPECT_EQ(c.format, "Megatron-LM");
  EXPECT_EQ(c.steps.interval, 2);
  EXPECT_EQ(c.steps.kept, 6u);  // iterations 14-24; 2-12 are the first line and its 10 iterations
  EXPECT_DOUBLE_EQ(c.log_seconds, 1.115);
  EXPECT_NEAR(c.fit_seconds / 1.115, 1.0, 1e-4);
  EXPECT_FALSE(c.jitter_fitted);
  bool said = false;
  for (const auto& n : c.notes) said = said || n.find("means over 2 iterations") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_LT(c.evaluations, 12);  // false position: a handful of simulations
}

// A log at another global batch is refused at its first line that says so; a bracket without the log's
// step time leaves the key on a bound, not trusted.
TEST(CalibrateTraining, RefusesAnotherBatchAndDoubtsABound) {
  std::string text;
  for (int k = 1; k <= 20; ++k)
    text += fmt::format(" iteration {}/ 20 | elapsed time per iteration (ms): 1100.0 | global batch size: 8 |\n", k);
  try {
    calibrate_training(input(text, {"workload.global_batch=16", "workload.dp=2"}));
    FAIL() << "the log ran batch 8";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("run.log:1: the log's global batch size is 8; the scenario's job runs "
                                         "workload.global_batch = 16"),
              std::string::npos)
        << e.what();
  }
  TrainingCalibrationInput in = input(text);
  in.fit = "workload.sustained_fraction=0.95:1";
  const TrainingCalibration c = calibrate_training(in);
  ASSERT_EQ(c.doubts.size(), 1u);
  EXPECT_NE(c.doubts[0].find("workload.sustained_fraction at its lower bound"), std::string::npos) << c.doubts[0];
  EXPECT_DOUBLE_EQ(c.key.value, 0.95);
}

}  // namespace
}  // namespace podnet::study
