// The Chrome/Perfetto trace writer: whole-nanosecond times that Perfetto
// reads back exactly, touching slices that stay touching, slice args.
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "report/train_report.hpp"

namespace podnet::report {
namespace {

// Perfetto's JSON importer: int64(us * 1000.0), truncating (json_utils.cc, CoerceToTs, google/perfetto).
int64_t perfetto_ns(const nlohmann::json& v) { return static_cast<int64_t>(v.get<double>() * 1000.0); }

std::vector<nlohmann::json> slices(const workload::TrainResult& r) {
  std::ostringstream out;
  write_training_trace(r, out);
  const auto doc = nlohmann::json::parse(out.str());
  std::vector<nlohmann::json> x;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "X") x.push_back(e);
  return x;
}

workload::TrainResult lanes() {
  workload::TrainResult r;
  r.stages.resize(1);
  r.trace_lanes = {"compute", "pp send (replica 0)", "dp (tp rank 0)"};
  return r;
}

TEST(TrainTrace, TouchingSlicesStayTouching) {
  // A: 2000.6 ns .. 3001.2 ns; B starts where A ends (3001.2 ns).
  // Rounded separately (ts 2.001 us, dur 1.0006 -> 1.001 us) A would end at 3.002 us, 1 ns after B's
  // ts 3.001 us. End points rounded: A = [2001, 3001) ns, dur 3001 - 2001 = 1000 ns; B starts at 3001 ns.
  workload::TrainResult r = lanes();
  r.trace.push_back({"A", "compute", 0, 0, Time(2'000'600), Time(1'000'600)});
  r.trace.push_back({"B", "compute", 0, 0, Time(3'001'200), Time(500'000)});
  const auto x = slices(r);
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(perfetto_ns(x[0]["ts"]), 2001);
  EXPECT_EQ(perfetto_ns(x[0]["dur"]), 1000);
  EXPECT_EQ(perfetto_ns(x[1]["ts"]), 3001);
  EXPECT_EQ(perfetto_ns(x[0]["ts"]) + perfetto_ns(x[0]["dur"]), perfetto_ns(x[1]["ts"]));
  // B: 3001.2 .. 3501.2 ns -> [3001, 3501), dur 500 ns.
  EXPECT_EQ(perfetto_ns(x[1]["dur"]), 500);
}

TEST(TrainTrace, PerfettoReadsBackTheExactNanosecond) {
  // 8465964065 ns: the double nearest 8465964.065 is 8465964.064999999..., so 8465964.065 * 1000.0
  // truncates to 8465964064. The writer steps to the next double up, which truncates to ...065.
  ASSERT_EQ(static_cast<int64_t>(8465964.065 * 1000.0), 8465964064);  // the premise
  workload::TrainResult r = lanes();
  r.trace.push_back({"late", "compute", 0, 0, Time(8'465'964'065'000), Time(1'093'500'000)});
  const auto x = slices(r);
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(perfetto_ns(x[0]["ts"]), 8'465'964'065);
  EXPECT_EQ(perfetto_ns(x[0]["dur"]), 1'093'500);  // 1093.5 us
  // Still the intended microseconds to any reader that does not truncate (within one ulp ~ 1e-9 us).
  EXPECT_NEAR(x[0]["ts"].get<double>(), 8465964.065, 1e-6);
}

TEST(TrainTrace, SliceArgs) {
  workload::TrainResult r = lanes();
  r.trace.push_back({"F c0 mb0", "compute", 0, 0, Time(0), Time(1'000'000)});
  // A ring over 8 GPUs carrying 1 MiB per hop on channel 3, on lane 2 ("dp (tp rank 0)").
  r.trace.push_back({"rs/ring", "dp", 0, 2, Time(1'000'000), Time(2'000'000), "ring", 1 << 20, 8, 3});
  const auto x = slices(r);
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(x[0]["args"], nlohmann::json({{"kind", "compute"}, {"group", "stage 0/compute"}}));
  EXPECT_EQ(
      x[1]["args"],
      nlohmann::json(
          {{"kind", "ring"}, {"group", "stage 0/dp (tp rank 0)"}, {"bytes", 1048576}, {"peers", 8}, {"channel", 3}}));
}

TEST(TrainTrace, FlowArrowsBindInsideTheirSlicesAndCountersAreSteps) {
  // A send on stage 0's pp lane [1000, 3000) ns and the pass on stage 1 that waits for it [3000, 7000) ns:
  // "s" at the send's middle 2000 ns, "f" (binding point e) at the pass's middle 5000 ns, one id.
  workload::TrainResult r = lanes();
  r.stages.resize(2);
  r.trace.push_back({"p2p act", "pp", 0, 1, Time(1'000'000), Time(2'000'000), "coupled", 4096, 2, 0});
  r.trace.push_back({"F c0 mb0", "compute", 1, 0, Time(3'000'000), Time(4'000'000)});
  r.trace_flows.push_back({0, 1});
  // A link at 50 % from 1000 ns, idle from 3000 ns.
  r.trace_counters.push_back({"leaf-1 -> spine-2", {{Time(1'000'000), 0.5}, {Time(3'000'000), 0.0}}});
  std::ostringstream out;
  write_training_trace(r, out);
  const auto doc = nlohmann::json::parse(out.str());
  std::vector<nlohmann::json> s, f, c;
  bool links_named = false;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "s") s.push_back(e);
    if (e["ph"] == "f") f.push_back(e);
    if (e["ph"] == "C") c.push_back(e);
    if (e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == 2)
      links_named = e["args"]["name"].get<std::string>().find("links") != std::string::npos;
  }
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(s[0]["id"], f[0]["id"]);
  EXPECT_EQ(s[0]["cat"], f[0]["cat"]);
  EXPECT_EQ(s[0]["pid"], 0);
  EXPECT_EQ(s[0]["tid"], 1);
  EXPECT_EQ(perfetto_ns(s[0]["ts"]), 2000);
  EXPECT_EQ(f[0]["pid"], 1);
  EXPECT_EQ(f[0]["tid"], 0);
  EXPECT_EQ(f[0]["bp"], "e");
  EXPECT_EQ(perfetto_ns(f[0]["ts"]), 5000);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_TRUE(links_named);
  EXPECT_EQ(c[0]["pid"], 2);  // after the two stages
  EXPECT_EQ(c[0]["name"], "leaf-1 -> spine-2");
  EXPECT_EQ(perfetto_ns(c[0]["ts"]), 1000);
  EXPECT_EQ(c[0]["args"]["utilization"], 0.5);
  EXPECT_EQ(perfetto_ns(c[1]["ts"]), 3000);
  EXPECT_EQ(c[1]["args"]["utilization"], 0.0);
  // A send and its receive spanning the same time (a Chakra pair): "f" is not before "s".
  r.trace_flows = {{1, 1}};
  std::ostringstream same;
  write_training_trace(r, same);
  const auto d2 = nlohmann::json::parse(same.str());
  int64_t ts_s = -1, ts_f = -1;
  for (const auto& e : d2["traceEvents"]) {
    if (e["ph"] == "s") ts_s = perfetto_ns(e["ts"]);
    if (e["ph"] == "f") ts_f = perfetto_ns(e["ts"]);
  }
  EXPECT_EQ(ts_s, 5000);
  EXPECT_EQ(ts_f, 5000);
}

}  // namespace
}  // namespace podnet::report
