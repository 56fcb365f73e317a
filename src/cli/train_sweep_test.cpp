// `podnet train --sweep`: an efficiency above 100% is what the iteration times say (efficiency = the base
// DP's iteration / this DP's, the global batch growing with DP), and the table says why instead of hiding it.
#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>
#include <string>

#include "cli/test_util.hpp"

namespace {

using podnet::cli::testing::Result;
using podnet::cli::testing::run;

TEST(TrainSweep, EfficiencyAbove100IsTheIterationTimesAndExplained) {
  const std::string args = "train aipod-16k --set workload.dp=16 --set workload.global_batch=256 --sweep --sweep-dp "
                           "1,4 --sweep-bw 0 --engine analytical";
  const Result j = run(args + " --format json");
  ASSERT_EQ(j.status, 0) << j.out;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  const auto& rows = doc["sweep"];
  ASSERT_EQ(rows.size(), 3u);  // DP 1, 4 and the job's own 16
  const double t1 = rows[0]["iteration_time_ms"].get<double>(), t4 = rows[1]["iteration_time_ms"].get<double>();
  // Weak scaling: tokens per second = batch x seq / iteration with the batch d x, ideal d x: efficiency = t1 / td.
  for (size_t i = 1; i < 3; ++i)
    EXPECT_NEAR(rows[i]["efficiency"].get<double>(), t1 / rows[i]["iteration_time_ms"].get<double>(), 1e-5) << i;
  if (t4 < t1) {
    // ZeRO-1 (aipod-16k's): each GPU's optimizer step updates 1/dp of its stage's weights.
    const Result t = run(args);
    ASSERT_EQ(t.status, 0) << t.out;
    EXPECT_NE(t.out.find("efficiency above 100% (DP 4:"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("with ZeRO-1 each GPU's optimizer step updates 1/dp"), std::string::npos) << t.out;
    // The parts that shrank, from the two breakdowns: the optimizer step first.
    EXPECT_NE(podnet::cli::testing::flat(t.out).find("what shrank: optimizer step -"), std::string::npos) << t.out;
  }
  // Without ZeRO the same sweep is at most 100%: the iteration grows with the DP communication.
  const Result z = run(args + " --set workload.zero=0 --allow-oom --format json");
  ASSERT_EQ(z.status, 0) << z.out;
  const nlohmann::json zd = nlohmann::json::parse(z.out);
  for (size_t i = 1; i < 3; ++i) EXPECT_LE(zd["sweep"][i]["efficiency"].get<double>(), 1.0) << i;
}

TEST(TrainSweep, APointThatDoesNotFitIsMarked) {
  // The default job at DP 1: every stage's optimizer states unsharded, 120.5 GB per GPU on an 85.9 GB H100 (the
  // refusal train prints for it); at DP 128 it fits (82.6 GB). The row of DP 1 is marked and the note says why.
  const std::string args = "train aipod-16k --sweep --sweep-dp 1 --sweep-bw 0 --engine analytical";
  const Result j = run(args + " --format json");
  ASSERT_EQ(j.status, 0) << j.out;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc["sweep"].size(), 2u);
  EXPECT_FALSE(doc["sweep"][0]["fits"].get<bool>());
  EXPECT_NEAR(doc["sweep"][0]["memory_gbyte"].get<double>(), 120.5, 0.05);
  EXPECT_TRUE(doc["sweep"][1]["fits"].get<bool>());
  const Result t = run(args);
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_NE(t.out.find("as built  1 *"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("* does not fit in the GPU's memory (DP 1: up to 120.5 GB per GPU"), std::string::npos) << t.out;
}

TEST(TrainSweep, TheDefaultCapsStayBelowTheNicsOwnSpeed) {
  // 400G NICs (50 GB/s): the default caps 50, 20, 10 and 5 GB/s keep those below, so 50 GB/s does not repeat the
  // "as built" rows (it did, row for row).
  const Result j = run("train leafspine-8k --set workload.model=llama3-8b --set topology.gpus=64 --engine analytical "
                       "--sweep --sweep-dp 1,8 --format json");
  ASSERT_EQ(j.status, 0) << j.out;
  std::set<double> caps;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  for (const auto& r : doc["sweep"]) caps.insert(r["cap_gbytes_per_second"].get<double>());
  EXPECT_EQ(caps, (std::set<double>{0, 5, 10, 20}));
}

}  // namespace
