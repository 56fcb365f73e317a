#include "collective/nccl/pipeline.hpp"

#include <gtest/gtest.h>

#include "collective/test_topologies.hpp"

namespace podnet::collective {
namespace {

using testing::iota;
using testing::rail32;

constexpr Bytes kMiB = Bytes{1} << 20;

TEST(NcclPipeline, StepsAndChunksFollowNcclsBuffers) {
  // simple: 4 MiB / 8 steps; ll: 8 lines x 512 threads x 8 steps x 16 B = 524,288 B / 8;
  // ll128: 120 x 640 x 8 x 8 B = 4,915,200 B / 8.
  EXPECT_EQ(nccl_step_bytes(Proto::Simple), 524'288);
  EXPECT_EQ(nccl_step_bytes(Proto::LL), 65'536);
  EXPECT_EQ(nccl_step_bytes(Proto::LL128), 614'400);
  // The simple ring all-reduce takes 4 steps a chunk (2 MiB); ll carries half its step, ll128
  // 15/16 of it (614,400 / 16 x 15 = 576,000); broadcast and trees one step.
  EXPECT_EQ(nccl_chunk_bytes(Op::AllReduce, Algo::Ring, Proto::Simple), 2'097'152);
  EXPECT_EQ(nccl_chunk_bytes(Op::AllReduce, Algo::Ring, Proto::LL), 32'768);
  EXPECT_EQ(nccl_chunk_bytes(Op::AllReduce, Algo::Ring, Proto::LL128), 576'000);
  EXPECT_EQ(nccl_chunk_bytes(Op::Broadcast, Algo::Ring, Proto::Simple), 524'288);
  EXPECT_EQ(nccl_chunk_bytes(Op::AllReduce, Algo::Tree, Proto::Simple), 524'288);
}

TEST(NcclPipeline, RingAllReduceLoopsChunksAndSlices) {
  const CommShape shape;
  // 4 ranks, 64 MiB on the channel: loops = ceil(64 MiB / (4 x 2 MiB)) = 8, 2(n-1) = 6 steps a
  // loop, 2 slices a chunk: 96 slices, lag 2, period 12; window 8 steps / 2 steps a slice = 4.
  auto p = nccl_pipeline(Op::AllReduce, Algo::Ring, Proto::Simple, 4, 64 * kMiB, 64 * kMiB, 1, shape);
  EXPECT_EQ(p, (plan::Pipeline{96, 4, 2, 12}));
  // 16 ranks, 64 KiB: one loop, chunk ceil(65,536 / 16) = 4,096 B <= 32 KiB: one slice a chunk,
  // 2 x 15 = 30 slices, lag 1, period 30.
  p = nccl_pipeline(Op::AllReduce, Algo::Ring, Proto::Simple, 16, 64 * 1024, 64 * 1024, 1, shape);
  EXPECT_EQ(p, (plan::Pipeline{30, 4, 1, 30}));
  // All-gather, ll, 8 ranks, 1 MiB: chunk 32 KiB, loops = ceil(1 MiB / (8 x 32 KiB)) = 4, 7 steps a
  // loop; a step is 8 passes of the block (64 KiB / (512 threads x 16 B)), each forwarded on its own (a
  // flag per line): 4 x 7 x 8 = 224 slices, lag 8, period 56, window 8 steps x 8 = 64.
  p = nccl_pipeline(Op::AllGather, Algo::Ring, Proto::LL, 8, kMiB, kMiB, 1, shape);
  EXPECT_EQ(p, (plan::Pipeline{224, 64, 8, 56}));
  // Fewer bytes a hop than slices: fewer slices a chunk, the steps kept. LL all-reduce, 8 ranks,
  // 64 B: 14 steps x 8 passes = 112 slices, but a hop carries 14 x 64 / 8 = 112 B: 8 a chunk stay.
  // At 32 B (56 B a hop): floor(56 / 14) = 4 slices a chunk, lag 4, period 56, window 64 x 4/8 = 32.
  // At 8 B (14 B a hop): one a step, 14 slices, window 8. At 4 B (7 B a hop, fewer than 14 steps):
  // one a step, cut to 7 slices (the chain's last steps missing).
  EXPECT_EQ(nccl_pipeline(Op::AllReduce, Algo::Ring, Proto::LL, 8, 64, 64, 1, shape),
            (plan::Pipeline{112, 64, 8, 112}));
  EXPECT_EQ(nccl_pipeline(Op::AllReduce, Algo::Ring, Proto::LL, 8, 32, 32, 1, shape), (plan::Pipeline{56, 32, 4, 56}));
  EXPECT_EQ(nccl_pipeline(Op::AllReduce, Algo::Ring, Proto::LL, 8, 8, 8, 1, shape), (plan::Pipeline{14, 8, 1, 14}));
  EXPECT_EQ(nccl_pipeline(Op::AllReduce, Algo::Ring, Proto::LL, 8, 4, 4, 1, shape), (plan::Pipeline{7, 8, 1, 14}));
}

TEST(NcclPipeline, ChainsAndTreesTakeOneChunkAStep) {
  const CommShape shape;
  // Broadcast 1 MiB: 2 chunks of 512 KiB, every slice forwarded, window 8.
  EXPECT_EQ(nccl_pipeline(Op::Broadcast, Algo::Ring, Proto::Simple, 8, kMiB, kMiB, 1, shape),
            (plan::Pipeline{2, 8, 0, 0}));
  // A tree half of 3 MiB: ceil(3 MiB / 512 KiB) = 6.
  EXPECT_EQ(nccl_pipeline(Op::AllReduce, Algo::Tree, Proto::Simple, 16, 3 * kMiB, 6 * kMiB, 1, shape),
            (plan::Pipeline{6, 8, 0, 0}));
  // Tree ll128, S = 64 MiB on 16 channels, 2 nodes x 8: s = 1 + log2 2 + 0.8 = 2.8;
  // 67,108,864 / (16 x 576,000) = 7 < 2.8 x 64 / 8 = 22.4 -> 288,000: 14 < 22.4 -> 144,000: 29, stop
  // (then 29 >= 2.8 x 16 / 8). A 2 MiB half: ceil(2,097,152 / 144,000) = 15 chunks, each 15 passes of the block
  // (614,400 B / (20 warps x 32 x 8 x 8 B)): 225 slices, window 8 x 15 = 120.
  CommShape two;
  two.nodes = 2;
  two.ranks = 16;
  EXPECT_EQ(nccl_pipeline(Op::AllReduce, Algo::Tree, Proto::LL128, 16, 2 * kMiB, 64 * kMiB, 16, two),
            (plan::Pipeline{225, 120, 0, 0}));
  // Broadcast ll128, 2 MiB on the channel: ceil(2,097,152 / 576,000) = 4 chunks x 15 passes = 60 slices of
  // about 35 KB, each forwarded as it arrives (before: 4 slices of a whole step, so every hop of the chain
  // waited for 576,000 B; the packet engine's 32 MiB broadcast on 16 GPUs took 2.0 x the flow engine's).
  EXPECT_EQ(nccl_pipeline(Op::Broadcast, Algo::Ring, Proto::LL128, 16, 2 * kMiB, 32 * kMiB, 16, shape),
            (plan::Pipeline{60, 120, 0, 0}));
}

TEST(NcclPipeline, MakePlanPipelinesTheChosenRing) {
  Options o;
  o.channels = 2;
  o.tuner = true;
  o.selection = parse_protocols("simple", o.selection, "collective.protocols");
  // 32 GPUs, 32 MiB, 2 channels of 16 MiB: loops = ceil(16 MiB / (32 x 2 MiB)) = 1, chunk
  // ceil(16 MiB / 32) = 512 KiB > 32 KiB: 2 slices; 62 steps: 124 slices, lag 2, period 124.
  const auto plan = make_plan("ring", Op::AllReduce, iota(32), 32 * kMiB, o, rail32());
  ASSERT_EQ(plan.transfers.size(), 3u);  // the latency delay and one ring per channel
  for (int i = 1; i < 3; ++i) {
    EXPECT_EQ(plan.transfers[i].kind, plan::TransferKind::Ring);
    EXPECT_EQ(plan.transfers[i].pipeline, (plan::Pipeline{124, 4, 2, 124}));
  }
  EXPECT_NO_THROW(plan::check_pipelines(plan));
  // Without NCCL's model the plain ring is not pipelined.
  const auto plain = make_plan("ring", Op::AllReduce, iota(32), 32 * kMiB, testing::naive(2), rail32());
  for (const auto& t : plain.transfers) EXPECT_EQ(t.pipeline.slices, 0);
}

}  // namespace
}  // namespace podnet::collective
