#include "engine/packet/slice_pipeline.hpp"

#include <gtest/gtest.h>

#include <map>

namespace podnet::engine::packet {
namespace {

// A discrete-time driver of the bookkeeping alone: every hop sends one
// released slice per tick; a slice sent at tick t is delivered at tick
// t + 1 + delay (deliveries are applied before the tick's sends). Returns
// the tick of the last delivery.
int64_t run_ticks(const plan::Transfer& t, int64_t delay) {
  SlicePipeline p(t.pipeline, SlicePipeline::upstream_of(t));
  const auto hops = static_cast<int32_t>(SlicePipeline::hops_of(t).size());
  std::vector<int32_t> raised;
  p.start(raised);
  std::vector<int64_t> sent(hops, 0), got(hops, 0);
  std::multimap<int64_t, int32_t> arrivals;  // tick -> hop
  int64_t last = 0;
  for (int64_t tick = 0; tick < 100000; ++tick) {
    for (auto it = arrivals.begin(); it != arrivals.end() && it->first == tick; it = arrivals.erase(it)) {
      p.deliver(it->second, ++got[it->second], raised);
      last = tick;
    }
    bool all = true;
    for (int32_t h = 0; h < hops; ++h) {
      if (sent[h] < p.released(h)) {
        ++sent[h];
        arrivals.emplace(tick + 1 + delay, h);
      }
      all = all && got[h] == p.slices();
    }
    if (all) return last;
  }
  ADD_FAILURE() << "pipeline stalled";
  return -1;
}

plan::Transfer chain(int32_t ranks, int64_t slices, int32_t window) {
  plan::Transfer t;
  t.kind = plan::TransferKind::Ring;
  t.open = true;
  for (int32_t r = 0; r < ranks; ++r) t.ranks.push_back(r);
  t.pipeline = {slices, window, 0, 0};
  return t;
}

plan::Transfer ring(int32_t ranks, int64_t slices, int32_t window, int32_t lag, int64_t period) {
  plan::Transfer t;
  t.kind = plan::TransferKind::Ring;
  for (int32_t r = 0; r < ranks; ++r) t.ranks.push_back(r);
  t.pipeline = {slices, window, lag, period};
  return t;
}

TEST(SlicePipeline, ChainCompletesInStepsPlusRanksMinusTwo) {
  // 4 ranks, 3 hops, 8 slices, no delay: hop h sends slice u at tick u + h
  // (slice u of hop h-1 arrives at tick u + h). The last, slice 7 on hop 2,
  // is sent at tick 9 and arrives at tick 10 = steps + ranks - 2 slice times. A window of 2 never binds:
  // slice u - 2 of hop h is consumed when hop h+1 releases it at tick u - 1.
  EXPECT_EQ(run_ticks(chain(4, 8, 2), 0), 8 + 4 - 2);
  EXPECT_EQ(run_ticks(chain(4, 8, 1), 0), 8 + 4 - 2);
}

TEST(SlicePipeline, WindowSmallerThanTheRoundTripThrottlesTheChain) {
  // A slice takes 1 tick to send and 1 more to arrive (delay 1). With 2
  // slots the sender never waits: t_h(u) = u + 2h, last delivery at
  // t_2(7) + 2 = 7 + 4 + 2 = 13 = (U - 1) + hops x (1 + delay).
  EXPECT_EQ(run_ticks(chain(4, 8, 2), 1), 13);
  // With one slot a hop waits for its previous slice to be consumed: one
  // slice per 1 + delay ticks, t_h(u) = 2u + 2h, last at t_2(7) + 2 = 20 =
  // (U + hops - 1) x (1 + delay).
  EXPECT_EQ(run_ticks(chain(4, 8, 1), 1), 20);
}

TEST(SlicePipeline, RingAllReduceStepsInLockstep) {
  // 4 ranks, one loop of 2(n-1) = 6 ring steps, one slice a chunk (lag 1,
  // period 6): every hop sends slice u at tick u (slice u - 1 of the
  // previous hop arrived at the end of tick u - 1): done after 6 ticks
  // (last delivery at tick 6).
  EXPECT_EQ(run_ticks(ring(4, 6, 2, 1, 6), 0), 6);
  // Delay 1: every step waits for the previous rank's slice, 2 ticks a step:
  // 2(n-1) x (1 + delay) = 12.
  EXPECT_EQ(run_ticks(ring(4, 6, 2, 1, 6), 1), 12);
  // Two slices a chunk (lag 2, period 12, NCCL's simple ring): slice u
  // forwards u - 2, delivered at t(u - 2) + 2 = u, so t(u) = u and the delay
  // is hidden but once: last delivery at t(11) + 2 = 13 = 12 + delay.
  EXPECT_EQ(run_ticks(ring(4, 12, 4, 2, 12), 1), 13);
  // Two loops: slice 6 starts loop 2 with the rank's own chunk (no wait).
  EXPECT_EQ(run_ticks(ring(4, 12, 2, 1, 6), 0), 12);
}

TEST(SlicePipeline, UpstreamOfATreeIsEveryOtherEdgeIntoTheSource) {
  // Tree 0 <- 1, 0 <- 2 (root 0), all-reduce edges: up 1->0, 2->0; down 0->1, 0->2.
  plan::Transfer t;
  t.kind = plan::TransferKind::Coupled;
  t.edges = {{1, 0}, {2, 0}, {0, 1}, {0, 2}};
  const auto up = SlicePipeline::upstream_of(t);
  ASSERT_EQ(up.size(), 4u);
  EXPECT_TRUE(up[0].empty());                      // leaf 1 sends its own data
  EXPECT_TRUE(up[1].empty());                      // leaf 2
  EXPECT_EQ(up[2], (std::vector<int32_t>{0, 1}));  // the root sends 1 the sum of both children
  EXPECT_EQ(up[3], (std::vector<int32_t>{0, 1}));
  // The chain 0 <- 1 <- 2 (root 0), reduce edges listed first: 1 -> 0 waits for 2 -> 1
  // only (0 -> 1, listed after it, is the broadcast coming back), 0 -> 1 for 1 -> 0, and
  // 1 -> 2 for 0 -> 1 and for 2 -> 1 (listed before it; implied through 0 -> 1 anyway).
  plan::Transfer c;
  c.kind = plan::TransferKind::Coupled;
  c.edges = {{2, 1}, {1, 0}, {0, 1}, {1, 2}};
  EXPECT_EQ(SlicePipeline::upstream_of(c), (std::vector<std::vector<int32_t>>{{}, {0}, {1}, {0, 2}}));
  // With window 8 and no delay the leaves send slice u at tick u, the root
  // forwards it at tick u + 1: 4 slices, last delivered at the end of tick
  // 3 + 1, i.e. tick 5.
  t.pipeline = {4, 8, 0, 0};
  EXPECT_EQ(run_ticks(t, 0), 5);
}

TEST(SlicePipeline, ChainHopsAreTheLongestRunOfForwards) {
  // A ring all-reduce of 4 ranks, one slice a step: 2(n-1) = 6 steps; with 2 slices a chunk (lag 2,
  // period 12) still 6; two loops do not lengthen it; cut to 4 slices: 4.
  EXPECT_EQ(SlicePipeline::chain_hops(ring(4, 6, 2, 1, 6)), 6);
  EXPECT_EQ(SlicePipeline::chain_hops(ring(4, 12, 4, 2, 12)), 6);
  EXPECT_EQ(SlicePipeline::chain_hops(ring(4, 12, 2, 1, 6)), 6);
  EXPECT_EQ(SlicePipeline::chain_hops(ring(4, 4, 2, 1, 6)), 4);
  // A chain of 5 ranks (4 hops, every slice forwards): 4.
  EXPECT_EQ(SlicePipeline::chain_hops(chain(5, 3, 2)), 4);
  // The tree 0 <- 1 <- 2, reduce then broadcast: 2 -> 1, 1 -> 0, 0 -> 1, 1 -> 2: 4 hops.
  plan::Transfer c;
  c.kind = plan::TransferKind::Coupled;
  c.edges = {{2, 1}, {1, 0}, {0, 1}, {1, 2}};
  c.pipeline = {4, 8, 0, 0};
  EXPECT_EQ(SlicePipeline::chain_hops(c), 4);
  // Weighted (a hop's physical latency): the heaviest path, here every hop: 1 + 2 + 3 + 4 = 10; a
  // ring: its 6 steps x the mean weight (1 + 2 + 3 + 6) / 4 = 3, 18.
  EXPECT_DOUBLE_EQ(SlicePipeline::chain_length(c, {1, 2, 3, 4}), 10.0);
  EXPECT_DOUBLE_EQ(SlicePipeline::chain_length(ring(4, 6, 2, 1, 6), {1, 2, 3, 6}), 18.0);
  // Two leaves into a root, then back: the heavier leaf's path, 5 + 1 = 6 (not 2 + 1 + ...).
  plan::Transfer t;
  t.kind = plan::TransferKind::Coupled;
  t.edges = {{1, 0}, {2, 0}, {0, 1}, {0, 2}};
  t.pipeline = {4, 8, 0, 0};
  EXPECT_DOUBLE_EQ(SlicePipeline::chain_length(t, {5, 2, 1, 1}), 6.0);
  // No pipeline: 0.
  c.pipeline = {};
  EXPECT_EQ(SlicePipeline::chain_hops(c), 0);
}

TEST(SlicePipeline, ClosedRingUpstreamWraps) {
  const auto up = SlicePipeline::upstream_of(ring(3, 1, 2, 1, 1));
  EXPECT_EQ(up, (std::vector<std::vector<int32_t>>{{2}, {0}, {1}}));
  const auto open = SlicePipeline::upstream_of(chain(3, 1, 1));
  EXPECT_EQ(open, (std::vector<std::vector<int32_t>>{{}, {0}}));
}

}  // namespace
}  // namespace podnet::engine::packet
