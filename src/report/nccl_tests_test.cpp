#include "report/nccl_tests.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "core/error.hpp"
#include "study/nccl_tests_log.hpp"

namespace podnet::report {
namespace {

using study::parse_nccl_tests;

TEST(NcclTests, NumbersFollowNcclTestsWidths) {
  // util.cu getFloatStr: 2 decimals if they fit the width, then 1, then 0, then exponent.
  EXPECT_EQ(nccl_tests_number(12.345, 7), "  12.35");      // %7.2f
  EXPECT_EQ(nccl_tests_number(12345.678, 7), "12345.7");   // 8 chars at 2 decimals -> 1 decimal
  EXPECT_EQ(nccl_tests_number(1234567.0, 7), "1234567");   // 0 decimals
  EXPECT_EQ(nccl_tests_number(12345678.0, 7), "1.2e+07");  // exponent, 1 decimal (width >= 7)
  EXPECT_EQ(nccl_tests_number(123456.0, 6), "123456");
  EXPECT_EQ(nccl_tests_number(1234567.0, 6), " 1e+06");  // width 6: no decimals
}

// The writer's output is read back by the parser with the same numbers.
TEST(NcclTests, WriterOutputParsesBack) {
  nlohmann::json doc;
  doc["run"] = {{"scenario", "tiny"}};
  doc["bench"] = {{"op", "allgather"}, {"algorithm", "ring"}, {"gpus", 4}, {"engine", "analytical"}};
  // 4 MiB over 4 ranks: count = 4194304 / 4 B per float / 4 ranks = 262144 (nccl-tests counts per rank).
  doc["rows"] = {
      {{"bytes", 1024}, {"time_us", 10.5}, {"algbw_gbyte_per_s", 0.0975}, {"busbw_gbyte_per_s", 0.0731}},
      {{"bytes", 4194304}, {"time_us", 100.25}, {"algbw_gbyte_per_s", 41.8385}, {"busbw_gbyte_per_s", 31.3789}}};
  std::vector<NcclTestsRank> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back({r, 0, r, r < 2 ? "gpu-node-0000" : "gpu-node-0001", r % 2, "sim"});
  std::ostringstream out;
  write_nccl_tests(doc, ranks, out);
  const auto logs = parse_nccl_tests(out.str(), "w.log");
  ASSERT_EQ(logs.size(), 1u);
  const auto& l = logs[0];
  EXPECT_EQ(l.test, "all_gather");
  EXPECT_EQ(l.nranks(), 4);
  EXPECT_EQ(l.ranks_per_host(), 2);
  ASSERT_EQ(l.rows.size(), 2u);
  EXPECT_EQ(l.rows[1].bytes, 4194304);
  EXPECT_EQ(l.rows[1].count, 262144);
  EXPECT_EQ(l.rows[1].redop, "none");
  EXPECT_DOUBLE_EQ(l.rows[1].out_of_place.time_us, 100.25);
  EXPECT_DOUBLE_EQ(l.rows[1].in_place.time_us, 100.25);
  EXPECT_DOUBLE_EQ(l.rows[1].out_of_place.busbw_gbyte_per_s, 31.38);  // 2 decimals
  EXPECT_DOUBLE_EQ(l.rows[0].out_of_place.algbw_gbyte_per_s, 0.10);
  // (0.0731 + 31.3789) / 2 = 15.726 (both blocks of both rows)
  EXPECT_NEAR(l.avg_busbw_gbyte_per_s, 15.726, 1e-9);
}

}  // namespace
}  // namespace podnet::report
