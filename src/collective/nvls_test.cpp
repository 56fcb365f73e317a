#include "collective/nvls.hpp"

#include <gtest/gtest.h>

#include "collective/test_topologies.hpp"

namespace podnet::collective {
namespace {

using testing::iota;
using testing::rail32;

// One server of rail32: 8 H100-class GPUs on an NVSwitch. NCCL's NVLS
// algorithm bandwidth there is 272 GB/s (nccl/tuner_test NvlsOnOneServer:
// busBw 8 x 59.5 = 476, x 8/14), i.e. 272,000 bytes per us.
CommShape one_server(Arch arch = Arch::Hopper) { return comm_shape(iota(8), rail32(), arch); }

TEST(NvlsPipeline, ChunkFollowsNcclsThresholds) {
  // Hopper: 16 NVLS channels x 8 heads = 128 concurrent chunks (enqueue.cc "concurrentOps").
  // 64 KiB below 64 x 128 x 128 KiB = 1 GiB; 32 KiB below 8 x 128 x 64 KiB = 64 MiB;
  // 16 KiB below 2 x 128 x 32 KiB = 8 MiB.
  const CommShape s = one_server();
  const Bytes MiB = Bytes{1} << 20;
  struct Row {
    Bytes bytes;
    int64_t chunk;
  };
  for (const Row& r :
       {Row{MiB, 16384}, Row{2 * MiB, 16384}, Row{8 * MiB - 1, 16384}, Row{8 * MiB, 32768}, Row{64 * MiB - 1, 32768},
        Row{64 * MiB, 65536}, Row{1024 * MiB - 1, 65536}, Row{1024 * MiB, 131072}, Row{8192 * MiB, 131072}}) {
    const NvlsPipeline p = nvls_pipeline(s, r.bytes);
    EXPECT_EQ(p.channels, 16) << r.bytes;
    EXPECT_EQ(p.heads, 8) << r.bytes;
    EXPECT_EQ(p.chunk, r.chunk) << r.bytes;
    EXPECT_EQ(p.loop, 128 * r.chunk) << r.bytes;
  }
}

TEST(NvlsPipeline, FillIsTwoStagesOfOneLoop) {
  const CommShape s = one_server();
  const Bytes MiB = Bytes{1} << 20;
  // 128 MiB: C = 64 KiB, loop = 128 x 64 KiB = 8 MiB = 8,388,608 B, 16 loops;
  // fill = 2 x 8,388,608 / 272,000 = 61.680941... us.
  const NvlsPipeline p = nvls_pipeline(s, 128 * MiB);
  EXPECT_EQ(p.loops, 16);
  EXPECT_NEAR(p.fill_us, 2.0 * 8388608 / 272000, 1e-9);
  EXPECT_NEAR(p.fill_us, 61.6809, 1e-4);
  // 1 GiB: C = 128 KiB, loop 16 MiB, 64 loops; the fill doubles: 2 x 16,777,216 / 272,000 = 123.36 us.
  const NvlsPipeline g = nvls_pipeline(s, 1024 * MiB);
  EXPECT_EQ(g.loops, 64);
  EXPECT_NEAR(g.fill_us, 2.0 * 16777216 / 272000, 1e-9);
  // 1 MiB: C = 16 KiB, loop 2 MiB, one partial loop: a stage moves the 1 MiB there is,
  // fill = 2 x 1,048,576 / 272,000 = 7.71 us.
  const NvlsPipeline small = nvls_pipeline(s, MiB);
  EXPECT_EQ(small.loops, 1);
  EXPECT_NEAR(small.fill_us, 2.0 * 1048576 / 272000, 1e-9);
}

TEST(NvlsPipeline, EveryStageTimePaysTheFittedCost) {
  // L loops take L + 2 stage times, each 2.5 us beyond its bytes; the launch is 13 us at every size.
  const CommShape s = one_server();
  const Bytes MiB = Bytes{1} << 20;
  // 1 MiB and 2 MiB: one loop, 3 stage times = 7.5 us; 128 MiB: 16 loops, 18 x 2.5 = 45 us;
  // 8 GiB: 8,192 / 16 = 512 loops of 16 MiB, 514 x 2.5 = 1,285 us.
  EXPECT_DOUBLE_EQ(nvls_pipeline(s, MiB).stage_cost_us, 7.5);
  EXPECT_DOUBLE_EQ(nvls_pipeline(s, 2 * MiB).stage_cost_us, 7.5);
  EXPECT_DOUBLE_EQ(nvls_pipeline(s, 128 * MiB).stage_cost_us, 45.0);
  EXPECT_EQ(nvls_pipeline(s, 8192 * MiB).loops, 512);
  EXPECT_DOUBLE_EQ(nvls_pipeline(s, 8192 * MiB).stage_cost_us, 1285.0);
  EXPECT_DOUBLE_EQ(nvls_pipeline(s, 128 * MiB).launch_us, 13.0);
  // Where NVLS does not run, nothing.
  EXPECT_EQ(nvls_pipeline(one_server(Arch::Ampere), MiB).stage_cost_us, 0.0);
  EXPECT_EQ(nvls_pipeline(one_server(Arch::Ampere), MiB).launch_us, 0.0);
}

TEST(NvlsPipeline, BlackwellRunsMoreChannels) {
  // One Blackwell NVLink domain: 24 NVLS channels (NVLS_NCHANNELS_SM100_NVL), 24 x 8 = 192
  // concurrent chunks, so 1 GiB < 64 x 192 x 128 KiB = 1.5 GiB still runs 64 KiB chunks
  // (Hopper's 128 already runs 128 KiB there).
  const NvlsPipeline p = nvls_pipeline(one_server(Arch::Blackwell), Bytes{1} << 30);
  EXPECT_EQ(p.channels, 24);
  EXPECT_EQ(p.chunk, 65536);
  EXPECT_EQ(p.loop, 192 * 65536);
}

TEST(NvlsPipeline, NoneWhereNvlsDoesNotRun) {
  // Two servers (NCCL's NVLS needs CollNet beyond one node), Ampere, and 0 bytes.
  EXPECT_EQ(nvls_pipeline(comm_shape(iota(16), rail32(), Arch::Hopper), 1 << 20).chunk, 0);
  EXPECT_EQ(nvls_pipeline(one_server(Arch::Ampere), 1 << 20).fill_us, 0.0);
  EXPECT_EQ(nvls_pipeline(one_server(), 0).loops, 0);
}

TEST(NvlsPipeline, PlanWaitsForTheFillAfterTheLatency) {
  // 128 MiB over one server, auto: nvls / simple. Transfer 0: the 13 us launch (in place of NCCL's
  // 25 us latency); transfer 1: the fill (61.68 us, above) + 18 stage costs of 2.5 us = 106.68 us,
  // which waits for it; the data wait for the fill.
  Options o;
  o.channels = kAutoChannels;
  o.tuner = true;
  const auto plan = make_plan("auto", Op::AllReduce, iota(8), Bytes{128} << 20, o, rail32());
  ASSERT_EQ(plan.algorithm, "nvls");
  // 2 delays + 16 channels: NCCL's NVLS channels on Hopper (NVLS_NCHANNELS_SM90), not the
  // ring's 24 that auto gives the other algorithms on one 8-GPU NVLink server.
  ASSERT_EQ(plan.transfers.size(), 18u);
  EXPECT_EQ(plan.channels, 16);
  EXPECT_EQ(plan.transfers[0].duration, Time::from_seconds(13e-6));
  EXPECT_EQ(plan.transfers[1].kind, plan::TransferKind::Compute);
  EXPECT_EQ(plan.transfers[1].duration, Time::from_seconds((2.0 * 8388608 / 272000 + 18 * 2.5) * 1e-6));
  EXPECT_EQ(plan.transfers[1].label, "pipeline-fill/nvls/chunk-65536");
  EXPECT_EQ(plan.transfers[1].deps, std::vector<int32_t>{0});
  EXPECT_EQ(plan.transfers[2].deps, std::vector<int32_t>{1});
  // Without NCCL's model (nccl_model: false) the plain algorithm has neither delay.
  o.tuner = false;
  const auto plain = make_plan("nvls", Op::AllReduce, iota(8), Bytes{128} << 20, o, rail32());
  EXPECT_EQ(plain.transfers.size(), 16u);
  // Channels given: the user's count, whatever the algorithm.
  o.channels = 24;
  EXPECT_EQ(make_plan("nvls", Op::AllReduce, iota(8), Bytes{128} << 20, o, rail32()).transfers.size(), 24u);
}

}  // namespace
}  // namespace podnet::collective
