// locate_slowdown (straggler.hpp) on hand-built timelines: a two-stage
// pipeline step whose expected culprits and excesses are read off the
// timings below.
#include "diagnose/straggler.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"

namespace podnet::diagnose {
namespace {

using workload::Category;

Time us(int64_t n) { return Time(n * 1'000'000); }

// Stage 0 (GPUs 0-3): F0 -> F1, then the pipeline send F1 -> stage 1 (GPUs 4-7, from 0 to 4), then stage 1's
// F2; a DP all-reduce of stage 0 (GPUs 0, 2) after F1, off the critical path of the baseline.
//   0 F0   compute s0          deps -
//   1 F1   compute s0          deps 0
//   2 send pp s0 (0 -> 4)      deps 1
//   3 F2   compute s1          deps 2
//   4 dp   dp s0 (ring 0, 2)   deps 1
workload::IterationPlan step() {
  workload::IterationPlan ip;
  auto add = [&](plan::TransferKind k, std::vector<int32_t> ranks, std::vector<int32_t> deps, Category c, int stage,
                 std::string label) {
    plan::Transfer t;
    t.kind = k;
    t.ranks = std::move(ranks);
    t.deps = std::move(deps);
    t.label = std::move(label);
    ip.plan.add(t);
    ip.category.push_back(c);
    ip.stage.push_back(static_cast<int16_t>(stage));
    ip.lane.push_back(0);
  };
  add(plan::TransferKind::Compute, {0, 1, 2, 3}, {}, Category::Compute, 0, "F0");
  add(plan::TransferKind::Compute, {3, 2, 1, 0}, {0}, Category::Compute, 0, "F1");
  add(plan::TransferKind::P2p, {0, 4}, {1}, Category::Pp, 0, "send");
  add(plan::TransferKind::Compute, {4, 5, 6, 7}, {2}, Category::Compute, 1, "F2");
  add(plan::TransferKind::Ring, {0, 2}, {1}, Category::Dp, 0, "dp");
  return ip;
}

// Baseline: F0 0-10, F1 10-20, send 20-25, F2 25-35, dp 20-30. Iteration 35 us.
engine::RunReport baseline() {
  engine::RunReport r;
  r.transfers = {{us(0), us(10)}, {us(10), us(20)}, {us(20), us(25)}, {us(25), us(35)}, {us(20), us(30)}};
  r.makespan = us(35);
  return r;
}

TEST(Straggler, SlowGpuNamesItsStageAndTheExcess) {
  // A straggler in stage 0 stretches F0 by 4 us and F1 by 2 us (x1.4 from t=0, x1.2 later: any figures
  // do): F0 0-14, F1 14-26, send 26-31, F2 31-41, dp 26-36. Iteration 41 us: +6 us.
  // Critical path F2 <- send <- F1 <- F0: excesses 0, 0, 2, 4 -> stage 0 compute +6 us = the slowdown; its
  // worst op is F0 (+4 us) on GPUs 0-3 (sorted).
  engine::RunReport s;
  s.transfers = {{us(0), us(14)}, {us(14), us(26)}, {us(26), us(31)}, {us(31), us(41)}, {us(26), us(36)}};
  s.makespan = us(41);
  const StragglerReport r = locate_slowdown(step(), baseline(), s);
  EXPECT_EQ(r.baseline, us(35));
  EXPECT_EQ(r.slowed, us(41));
  EXPECT_EQ(r.path_excess, us(6));
  EXPECT_EQ(r.path_length, 4);
  ASSERT_EQ(r.parts.size(), 1u);
  EXPECT_EQ(r.parts[0].stage, 0);
  EXPECT_EQ(r.parts[0].category, Category::Compute);
  EXPECT_EQ(r.parts[0].excess, us(6));
  EXPECT_EQ(r.parts[0].ops, 2);
  EXPECT_EQ(r.parts[0].worst, "F0");
  EXPECT_EQ(r.parts[0].worst_excess, us(4));
  EXPECT_EQ(r.parts[0].worst_gpus, (std::vector<int32_t>{0, 1, 2, 3}));
}

TEST(Straggler, SlowLinkNamesThePipelineSend) {
  // A degraded link under the send GPU 0 -> 4: it takes 8 us instead of 5. F0 0-10, F1 10-20, send 20-28,
  // F2 28-38, dp 20-30: +3 us, all of it stage 0's pp, worst op "send" between GPUs 0 and 4.
  engine::RunReport s = baseline();
  s.transfers[2] = {us(20), us(28)};
  s.transfers[3] = {us(28), us(38)};
  s.makespan = us(38);
  const StragglerReport r = locate_slowdown(step(), baseline(), s);
  EXPECT_EQ(r.path_excess, us(3));
  ASSERT_EQ(r.parts.size(), 1u);
  EXPECT_EQ(r.parts[0].category, Category::Pp);
  EXPECT_EQ(r.parts[0].excess, us(3));
  EXPECT_EQ(r.parts[0].worst_gpus, (std::vector<int32_t>{0, 4}));
}

TEST(Straggler, ACollectiveThatBecomesCriticalIsFound) {
  // The DP ring slowed from 10 to 20 us (20-40): it now ends the iteration at 40 us (+5 us), though it had
  // 5 us of slack. Critical path dp <- F1 <- F0: stage 0 dp +10 us (more than the +5 us slowdown: the path
  // moved), nothing else.
  engine::RunReport s = baseline();
  s.transfers[4] = {us(20), us(40)};
  s.makespan = us(40);
  const StragglerReport r = locate_slowdown(step(), baseline(), s);
  EXPECT_EQ(r.slowed - r.baseline, us(5));
  EXPECT_EQ(r.path_excess, us(10));
  EXPECT_EQ(r.path_length, 3);
  ASSERT_EQ(r.parts.size(), 1u);
  EXPECT_EQ(r.parts[0].category, Category::Dp);
  EXPECT_EQ(r.parts[0].stage, 0);
  EXPECT_EQ(r.parts[0].excess, us(10));
}

TEST(Straggler, APartThatRanFasterIsListedSoThePartsAddUp) {
  // A failure moved traffic off the send's path and onto F2's stage: the send takes 3 us instead of 5 (20-23),
  // F2 13 instead of 10 (23-36). Iteration 36 us: +1 us. Critical path F2 <- send <- F1 <- F0: stage 1 compute
  // +3 us, stage 0 pp -2 us, so the parts add up to the path's excess (+1 us), the faster one last.
  engine::RunReport s = baseline();
  s.transfers[2] = {us(20), us(23)};
  s.transfers[3] = {us(23), us(36)};
  s.makespan = us(36);
  const StragglerReport r = locate_slowdown(step(), baseline(), s);
  EXPECT_EQ(r.path_excess, us(1));
  ASSERT_EQ(r.parts.size(), 2u);
  EXPECT_EQ(r.parts[0].stage, 1);
  EXPECT_EQ(r.parts[0].category, Category::Compute);
  EXPECT_EQ(r.parts[0].excess, us(3));
  EXPECT_EQ(r.parts[1].category, Category::Pp);
  EXPECT_EQ(r.parts[1].excess, Time() - us(2));
}

TEST(Straggler, NoFaultNoCulprit) {
  const StragglerReport r = locate_slowdown(step(), baseline(), baseline());
  EXPECT_EQ(r.path_excess, Time());
  EXPECT_TRUE(r.parts.empty());
  engine::RunReport bad;
  EXPECT_THROW(locate_slowdown(step(), baseline(), bad), Error);
}

}  // namespace
}  // namespace podnet::diagnose
