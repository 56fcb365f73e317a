#include "plan/transfer_plan.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace podnet::plan {
namespace {

Transfer p2p(int32_t src, int32_t dst, Bytes bytes, std::vector<int32_t> deps = {}) {
  Transfer t;
  t.kind = TransferKind::P2p;
  t.ranks = {src, dst};
  t.bytes = bytes;
  t.deps = std::move(deps);
  return t;
}

TEST(TopologicalOrder, DependenciesFirstTiesByIndex) {
  // 0 <- 2, 1 <- 2, 2 <- 3; 4 free. Kahn: roots {0, 1, 4} by index, then
  // 2 (its last dep 1 done), then 3.
  TransferPlan p;
  p.add(p2p(0, 1, 1));
  p.add(p2p(1, 2, 1));
  p.add(p2p(2, 3, 1, {0, 1}));
  p.add(p2p(3, 0, 1, {2}));
  p.add(p2p(4, 5, 1));
  EXPECT_EQ(topological_order(p), (std::vector<int32_t>{0, 1, 4, 2, 3}));
}

TEST(TopologicalOrder, RejectsCyclesAndBadIndices) {
  TransferPlan cycle;
  cycle.add(p2p(0, 1, 1, {1}));
  cycle.add(p2p(1, 0, 1, {0}));
  EXPECT_THROW(topological_order(cycle), Error);
  TransferPlan bad;
  bad.add(p2p(0, 1, 1, {5}));
  EXPECT_THROW(topological_order(bad), Error);
  TransferPlan negative;
  negative.add(p2p(0, 1, 1, {-1}));
  EXPECT_THROW(topological_order(negative), Error);
}

TEST(BytesSentByRank, EachKindCountsItsSenders) {
  TransferPlan p;
  p.add(p2p(3, 4, 100));  // rank 3: 100
  Transfer ring;          // closed ring 0 -> 1 -> 2 -> 0: each of 0, 1, 2 sends 10
  ring.kind = TransferKind::Ring;
  ring.ranks = {0, 1, 2};
  ring.bytes = 10;
  p.add(ring);
  Transfer chain = ring;  // open chain 5 -> 6 -> 7: 5 and 6 send 1, not 7
  chain.ranks = {5, 6, 7};
  chain.bytes = 1;
  chain.open = true;
  p.add(chain);
  Transfer tree;  // edges (0,1), (0,2), (1,0): rank 0 sends 2 x 7, rank 1 sends 7
  tree.kind = TransferKind::Coupled;
  tree.ranks = {0, 1, 2};
  tree.edges = {{0, 1}, {0, 2}, {1, 0}};
  tree.bytes = 7;
  p.add(tree);
  Transfer compute;  // no wire bytes
  compute.kind = TransferKind::Compute;
  compute.ranks = {0, 9};
  compute.bytes = 1000;
  p.add(compute);
  const std::map<int32_t, Bytes> expect = {{0, 10 + 14}, {1, 10 + 7}, {2, 10}, {3, 100}, {5, 1}, {6, 1}};
  EXPECT_EQ(bytes_sent_by_rank(p), expect);
}

TEST(TransferPlan, PipelinesAreChecked) {
  TransferPlan p;
  Transfer ring;
  ring.kind = TransferKind::Ring;
  ring.ranks = {0, 1, 2};
  ring.bytes = 100;
  ring.pipeline = {12, 4, 2, 12};  // NCCL's simple ring: 2 slices a chunk, 4 in flight
  p.add(ring);
  EXPECT_NO_THROW(check_pipelines(p));
  p.transfers[0].pipeline.window = 2;  // window <= lag: a closed ring would wait for itself
  EXPECT_THROW(check_pipelines(p), Error);
  p.transfers[0].pipeline = {12, 4, 13, 12};  // lag > period
  EXPECT_THROW(check_pipelines(p), Error);
  p.transfers[0].pipeline = {12, 4, 1, 0};  // a lag needs a period
  EXPECT_THROW(check_pipelines(p), Error);
  p.transfers[0].pipeline = {};
  Transfer p2p;
  p2p.ranks = {0, 1};
  p2p.pipeline = {2, 8, 0, 0};  // only rings and coupled transfers are pipelined
  p.add(p2p);
  EXPECT_THROW(check_pipelines(p), Error);
}

TEST(TransferPlan, LanesSplitACoupledTransfersEdgesByChannel) {
  // 6 edges in 3 lanes from channel 5: edges 0-1 are channel 5's, 2-3 channel 6's, 4-5 channel 7's.
  Transfer t;
  t.kind = TransferKind::Coupled;
  t.edges = {{0, 1}, {1, 0}, {0, 1}, {1, 0}, {0, 1}, {1, 0}};
  t.ranks = {0, 1};
  t.channel = 5;
  t.lanes = 3;
  const std::vector<int32_t> want{5, 5, 6, 6, 7, 7};
  for (size_t e = 0; e < want.size(); ++e) EXPECT_EQ(t.hop_channel(e), want[e]) << e;
  TransferPlan p;
  p.add(t);
  EXPECT_NO_THROW(check_pipelines(p));
  p.transfers[0].lanes = 4;  // 6 edges do not split into 4 lanes
  EXPECT_THROW(check_pipelines(p), Error);
  p.transfers[0].lanes = 3;
  p.transfers[0].pipeline = {2, 8, 0, 0};  // lanes and a pipeline do not go together
  EXPECT_THROW(check_pipelines(p), Error);
  Transfer ring;
  ring.kind = TransferKind::Ring;
  ring.ranks = {0, 1, 2};
  ring.channel = 2;
  EXPECT_EQ(ring.hop_channel(1), 2);  // one lane: every hop is the channel's
  ring.lanes = 2;                     // only a Coupled transfer has lanes
  TransferPlan q;
  q.add(ring);
  EXPECT_THROW(check_pipelines(q), Error);
}

}  // namespace
}  // namespace podnet::plan
