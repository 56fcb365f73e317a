#include "engine/plan_runner.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace podnet::engine {
namespace {

plan::TransferPlan dag(const std::vector<std::vector<int32_t>>& deps) {
  plan::TransferPlan p;
  for (const auto& d : deps) {
    plan::Transfer t;
    t.kind = plan::TransferKind::Compute;
    t.ranks = {0};
    t.deps = d;
    p.add(t);
  }
  return p;
}

using Launched = std::vector<std::pair<int32_t, int64_t>>;  // (transfer, start in ps)

TEST(PlanRunner, StartsEachTransferAtItsLatestDependency) {
  // Diamond 0 -> {1, 2} -> 3, plus 4 without dependencies.
  const auto p = dag({{}, {0}, {0}, {1, 2}, {}});
  RunReport report;
  PlanRunner runner(p, report);
  Launched launched;
  const auto launch = [&](int32_t i, Time at) { launched.emplace_back(i, at.ps); };
  runner.start(launch);
  EXPECT_EQ(launched, (Launched{{0, 0}, {4, 0}}));  // the roots at 0, by index
  runner.complete(0, Time(5), launch);              // 1 and 2 become ready at 5
  EXPECT_EQ(launched, (Launched{{0, 0}, {4, 0}, {1, 5}, {2, 5}}));
  // Completions out of time order (as the analytical engine's): 3 starts at
  // max(finish(1), finish(2)) = max(9, 7) = 9, not at the last one's 7.
  runner.complete(1, Time(9), launch);
  EXPECT_EQ(launched.size(), 4u);
  runner.complete(2, Time(7), launch);
  ASSERT_EQ(launched.size(), 5u);
  EXPECT_EQ(launched.back(), (std::pair<int32_t, int64_t>{3, 9}));
  EXPECT_TRUE(runner.all_launched());
  EXPECT_FALSE(runner.done());
  runner.complete(3, Time(12), launch);
  runner.complete(4, Time(3), launch);
  EXPECT_TRUE(runner.done());
  EXPECT_EQ(runner.finished(), 5);
  EXPECT_EQ(report.makespan, Time(12));
  ASSERT_EQ(report.transfers.size(), 5u);
  EXPECT_EQ(report.transfers[3].start, Time(9));
  EXPECT_EQ(report.transfers[3].finish, Time(12));
  EXPECT_EQ(report.transfers[4].start, Time(0));
  EXPECT_EQ(report.transfers[4].finish, Time(3));
}

TEST(PlanRunner, ATransferCompletesWithItsLastPart) {
  const auto p = dag({{}, {0}});
  RunReport report;
  PlanRunner runner(p, report);
  Launched launched;
  const auto launch = [&](int32_t i, Time at) { launched.emplace_back(i, at.ps); };
  runner.start(launch);
  runner.add_parts(0, 3);  // e.g. three QP flows
  EXPECT_FALSE(runner.part_done(0, Time(4), launch));
  EXPECT_FALSE(runner.part_done(0, Time(6), launch));
  EXPECT_EQ(runner.parts_left(0), 1);
  EXPECT_EQ(launched.size(), 1u);
  EXPECT_TRUE(runner.part_done(0, Time(8), launch));
  EXPECT_EQ(launched, (Launched{{0, 0}, {1, 8}}));
  EXPECT_EQ(report.transfers[0].finish, Time(8));
}

TEST(PlanRunner, ADependencyListedTwiceIsWaitedForOnce) {
  // 1 depends on 0 twice: one completion of 0 meets both entries.
  const auto p = dag({{}, {0, 0}});
  RunReport report;
  PlanRunner runner(p, report);
  Launched launched;
  const auto launch = [&](int32_t i, Time at) { launched.emplace_back(i, at.ps); };
  runner.start(launch);
  runner.complete(0, Time(2), launch);
  EXPECT_EQ(launched, (Launched{{0, 0}, {1, 2}}));
}

TEST(PlanRunner, ProgressEveryNCompletions) {
  const auto p = dag({{}, {}, {}, {}, {}});
  RunReport report;
  PlanRunner runner(p, report);
  std::vector<std::pair<int64_t, int64_t>> calls;  // (finished, total)
  const std::function<void(int64_t, int64_t, Time)> progress = [&](int64_t f, int64_t n, Time) {
    calls.emplace_back(f, n);
  };
  runner.report_progress(&progress, 2);
  const auto launch = [](int32_t, Time) {};
  runner.start(launch);
  for (int32_t i = 0; i < 5; ++i) runner.complete(i, Time(i), launch);
  // 5 completions, every 2nd reported: after the 2nd and the 4th.
  EXPECT_EQ(calls, (std::vector<std::pair<int64_t, int64_t>>{{2, 5}, {4, 5}}));
}

TEST(PlanRunner, RejectsCyclesAndBadIndices) {
  RunReport report;
  EXPECT_THROW(PlanRunner(dag({{1}, {0}}), report), Error);
  EXPECT_THROW(PlanRunner(dag({{}, {2}, {1}}), report), Error);
  EXPECT_THROW(PlanRunner(dag({{3}}), report), Error);
  EXPECT_THROW(PlanRunner(dag({{-1}}), report), Error);
  EXPECT_NO_THROW(PlanRunner(dag({}), report));
}

}  // namespace
}  // namespace podnet::engine
