#include "report/train_report.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace podnet::report {
namespace {

workload::TrainResult sample() {
  workload::TrainResult r;
  r.job.model.name = "gpt3-175b";
  r.job.model.layers = 96;
  r.job.model.hidden = 12288;
  r.job.gpu.name = "h100";
  r.job.tp = 8;
  r.job.pp = 2;
  r.job.dp = 4;
  r.job.global_batch = 16;
  r.fabric_gpus = 64;
  r.engine = "flow";
  r.iteration = Time(10'000'000'000);  // 10 ms
  r.breakdown = {Time(6'000'000'000), Time(1'000'000'000), Time(500'000'000), Time(1'500'000'000), Time(),
                 Time(1'000'000'000)};
  r.stages = {r.breakdown, r.breakdown};
  r.mfu = 0.4;
  r.placement.present = true;
  r.placement.policy = "topology_aware";
  r.placement.dp_bytes = 300;
  r.placement.pp_bytes = 100;
  r.placement.pp_cross_group_bytes = 100;  // (0 + 100) / 400 = 0.25
  r.trace_lanes = {"compute", "pp send (replica 0)"};
  r.trace.push_back({"F c0 mb0", "compute", 1, 0, Time(2'000'000), Time(3'000'000)});
  return r;
}

TEST(TrainReport, JsonKeysAndTable) {
  nlohmann::json doc;
  add_training(doc, sample());
  EXPECT_DOUBLE_EQ(doc["iteration_time_ms"].get<double>(), 10.0);
  for (const char* k : {"compute", "tp", "pp", "dp", "ep", "bubble"}) EXPECT_TRUE(doc["breakdown_ms"].contains(k)) << k;
  EXPECT_DOUBLE_EQ(doc["breakdown_ms"]["dp"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(doc["placement"]["cross_spine_fraction"].get<double>(), 0.25);
  for (const char* k : {"mfu", "tokens_per_second", "days_to_train"}) EXPECT_TRUE(doc.contains(k)) << k;
  std::ostringstream out;
  write_training_table(doc, out);
  EXPECT_NE(out.str().find("iteration time"), std::string::npos);
  EXPECT_NE(out.str().find("DP (exposed)"), std::string::npos);
}

TEST(TrainReport, ImportedWorkloadPrintsDashesNotZeros) {
  // An imported SimAI workload has no model shape (layers = hidden = 0): params, FLOPs, MFU, tokens/s and
  // days are unknown, so null in JSON and '-' in the table, never 0.
  workload::TrainResult r = sample();
  r.job.model = workload::ModelSpec{};
  r.job.model.name = "simai:moe.txt";
  r.mfu = 0;
  nlohmann::json doc;
  add_training(doc, r);
  for (const char* k : {"mfu", "hfu", "tflops_per_gpu", "tokens_per_second", "days_to_train", "tokens_budget"})
    EXPECT_TRUE(doc[k].is_null()) << k;
  EXPECT_TRUE(doc["model"]["params_billion"].is_null());
  EXPECT_TRUE(doc["batch"]["global_batch"].is_null());
  EXPECT_EQ(doc["batch"]["microbatches_per_pipeline"].get<int64_t>(), 16 / 4);  // B / (b d), b = 1
  EXPECT_DOUBLE_EQ(doc["iteration_time_ms"].get<double>(), 10.0);
  std::ostringstream out;
  write_training_table(doc, out);
  const std::string s = out.str();
  EXPECT_NE(s.find("(params -)"), std::string::npos) << s;
  EXPECT_EQ(s.find("0.0B params"), std::string::npos) << s;
  for (const char* row : {"MFU (model FLOPs)", "tokens/s", "days to train"}) {
    const auto at = s.find(row);
    ASSERT_NE(at, std::string::npos) << row;
    std::string line = s.substr(at, s.find('\n', at) - at);
    line.erase(line.find_last_not_of(' ') + 1);
    EXPECT_EQ(line.back(), '-') << line;
  }
}

TEST(TrainReport, ChromeTrace) {
  // One complete event: ts = 2 us, dur = 3 us; metadata names the stage processes.
  std::ostringstream out;
  write_training_trace(sample(), out);
  const auto j = nlohmann::json::parse(out.str());
  bool found = false;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    found = true;
    EXPECT_EQ(e["pid"], 1);
    EXPECT_EQ(e["tid"], 0);
    EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 2.0);
    EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 3.0);
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace podnet::report
