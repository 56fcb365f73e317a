// NCCL's plan transforms (nccl/transforms.hpp): the list, when each applies, and what each does, with
// expected values derived by hand.
#include "collective/nccl/transforms.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "collective/collective.hpp"
#include "collective/nvls.hpp"
#include "collective/pairwise.hpp"
#include "collective/test_topologies.hpp"

namespace podnet::collective {
namespace {

using testing::iota;
using testing::rail32;

constexpr Bytes kMiB = Bytes{1} << 20;

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const auto& t : nccl_transforms()) out.emplace_back(t.name);
  return out;
}

TEST(NcclTransforms, AreAppliedInTheirListedOrder) {
  EXPECT_EQ(names(), (std::vector<std::string>{"slice_pipeline", "protocol_bytes", "nvls_fill", "model_latency",
                                               "sendrecv_channels", "alltoall_nvlink", "alltoall_launch"}));
  for (const auto& t : nccl_transforms()) EXPECT_FALSE(std::string(t.model).empty()) << t.name;
}

TEST(NcclTransforms, WireBytesFollowTheLineFormat) {
  EXPECT_EQ(wire_bytes(1000, Proto::Simple), 1000);
  EXPECT_EQ(wire_bytes(1000, Proto::LL), 2000);       // 8 B per 4 B of data
  EXPECT_EQ(wire_bytes(1200, Proto::LL128), 1280);    // 128 B per 120 B
  EXPECT_EQ(wire_bytes(1, Proto::LL128), 2);          // ceil(128 / 120)
  EXPECT_EQ(wire_bytes(1000, Proto::LL, 2.0), 2000);  // the line format's own overhead: exact
  EXPECT_EQ(wire_bytes(1000, Proto::LL, 2.5), 2500);  // a ceiling below it: ceil(b x factor)
  EXPECT_DOUBLE_EQ(line_factor(Proto::LL128), 128.0 / 120.0);
}

TEST(NcclTransforms, ALeadingDelayComesFirstAndHoldsTheRoots) {
  plan::TransferPlan p;
  plan::Transfer a;
  a.kind = plan::TransferKind::P2p;
  a.ranks = {1, 0};
  a.bytes = 10;
  p.add(a);
  plan::Transfer b = a;
  b.deps = {0};
  p.add(b);
  const plan::TransferPlan out = with_leading_delay(p, {1, 0}, Time::from_seconds(5e-6), "x", true);
  ASSERT_EQ(out.transfers.size(), 3u);
  EXPECT_EQ(out.transfers[0].kind, plan::TransferKind::Compute);
  EXPECT_EQ(out.transfers[0].ranks, (std::vector<int32_t>{0, 1}));
  EXPECT_TRUE(out.transfers[0].holds_hop_latency);
  EXPECT_EQ(out.transfers[1].deps, (std::vector<int32_t>{0}));                 // a root now waits for the delay
  EXPECT_EQ(out.transfers[2].deps, (std::vector<int32_t>{1}));                 // the others keep their order, shifted
  EXPECT_EQ(with_leading_delay(p, {0, 1}, Time(), "x").transfers.size(), 2u);  // no delay, no transfer
}

TEST(NcclTransforms, AllToAllPostsTwoMicrosecondsPerOffNodePeer) {
  CommShape s;
  s.ranks = 16;
  s.nodes = 2;
  // ppn 8: 2 x (16 - 8) x 1 us + 7 x 0.6 us = 20.2 us
  EXPECT_NEAR(alltoall_post_latency(s).seconds(), 20.2e-6, 1e-12);
  s.ranks = 1;
  EXPECT_EQ(alltoall_post_latency(s), Time());
}

TEST(NcclTransforms, ATunedRingGetsItsPipelineBytesAndLatency) {
  const Group g = iota(32);
  Options o;
  o.channels = 4;
  const CommShape shape = comm_shape(g, rail32(), o.arch);
  const Bytes bytes = 64 * kMiB;
  const plan::TransferPlan built = find_algorithm("ring")->build(Op::AllReduce, g, bytes, o, rail32());
  for (const Proto proto : {Proto::Simple, Proto::LL}) {
    plan::TransferPlan p = built;
    const NcclContext c{Op::AllReduce, g, bytes, o, shape, rail32(), Choice{Algo::Ring, proto, 1.0}, 4};
    EXPECT_EQ(apply_nccl_transforms(c, p),
              (std::vector<std::string>{"slice_pipeline", "protocol_bytes", "model_latency"}));
    ASSERT_EQ(p.transfers.size(), built.transfers.size() + 1);
    const plan::Transfer& lat = p.transfers[0];
    EXPECT_EQ(lat.label, proto == Proto::Simple ? "latency/ring/simple" : "latency/ring/ll");
    EXPECT_TRUE(lat.holds_hop_latency);
    EXPECT_NEAR(lat.duration.seconds(), model_latency_us(Op::AllReduce, Algo::Ring, proto, shape, bytes) * 1e-6, 1e-12);
    const double slowdown = protocol_slowdown(Op::AllReduce, Algo::Ring, proto, shape);
    for (size_t i = 0; i < built.transfers.size(); ++i) {
      const plan::Transfer& t = p.transfers[i + 1];
      EXPECT_EQ(t.latency_steps, 0);
      EXPECT_GT(t.pipeline.slices, 0);
      EXPECT_EQ(t.bytes, wire_bytes(built.transfers[i].bytes, proto, slowdown));
      if (proto == Proto::LL) EXPECT_GE(t.bytes, 2 * built.transfers[i].bytes);
    }
  }
}

TEST(NcclTransforms, ARingOnFewerChannelsThanTheModelIsRateCapped) {
  // Ring LL is capped by NCCL's model (llMaxBw) beyond one server; on 1 of 16 model channels each ring
  // carries the line format's bytes (2x) at most at bytes x 8 x algBw / S.
  const Group g = iota(32);
  Options o;
  o.channels = 1;
  const CommShape shape = comm_shape(g, rail32(), o.arch);
  const Bytes bytes = kMiB;
  ASSERT_GT(protocol_slowdown(Op::AllReduce, Algo::Ring, Proto::LL, shape), 2.0 * (1 + 1e-12));
  plan::TransferPlan p = find_algorithm("ring")->build(Op::AllReduce, g, bytes, o, rail32());
  const Bytes payload = p.transfers[0].bytes;
  const NcclContext c{Op::AllReduce, g, bytes, o, shape, rail32(), Choice{Algo::Ring, Proto::LL, 1.0}, 16};
  apply_nccl_transforms(c, p);
  const plan::Transfer& ring = p.transfers[1];
  EXPECT_EQ(ring.bytes, 2 * payload);
  const double alg = model_entry(Op::AllReduce, Algo::Ring, Proto::LL, shape).bw_gbs * 1e9;
  EXPECT_NEAR(ring.max_rate_bps, static_cast<double>(2 * payload) * 8 * alg / static_cast<double>(bytes), 1e-3);
}

TEST(NcclTransforms, AnNvlsAllReduceOnOneServerPaysItsFillAfterTheLaunch) {
  const Group g = iota(8);
  Options o;
  o.channels = nvls_channels(Arch::Hopper);
  const CommShape shape = comm_shape(g, rail32(), o.arch);
  const Bytes bytes = 64 * kMiB;
  const NvlsPipeline fill = nvls_pipeline(shape, bytes);
  ASSERT_GT(fill.loops, 0);
  plan::TransferPlan p = find_algorithm("nvls")->build(Op::AllReduce, g, bytes, o, rail32());
  const NcclContext c{Op::AllReduce, g, bytes, o, shape, rail32(), Choice{Algo::Nvls, Proto::Simple, 1.0}, 16};
  EXPECT_EQ(apply_nccl_transforms(c, p), (std::vector<std::string>{"protocol_bytes", "nvls_fill", "model_latency"}));
  // The launch first (in place of NCCL's model latency), then the fill, then the data.
  EXPECT_EQ(p.transfers[0].label, "latency/nvls/simple");
  EXPECT_NEAR(p.transfers[0].duration.seconds(), fill.launch_us * 1e-6, 1e-12);
  EXPECT_EQ(p.transfers[1].label, "pipeline-fill/nvls/chunk-" + std::to_string(fill.chunk));
  EXPECT_NEAR(p.transfers[1].duration.seconds(), (fill.fill_us + fill.stage_cost_us) * 1e-6, 1e-12);
  EXPECT_EQ(p.transfers[1].deps, (std::vector<int32_t>{0}));
}

TEST(NcclTransforms, AnUntunedAllToAllGetsNvlinkBytesAndItsLaunchOnlyWithTheTuner) {
  const Group g = iota(8);
  Options o;
  const CommShape shape = comm_shape(g, rail32(), o.arch);
  const plan::TransferPlan built = find_algorithm("pairwise")->build(Op::AllToAll, g, 8 * kMiB, o, rail32());
  plan::TransferPlan p = built;
  EXPECT_TRUE(apply_nccl_transforms(NcclContext{Op::AllToAll, g, 8 * kMiB, o, shape, rail32(), {}, 0}, p).empty());
  o.tuner = true;
  EXPECT_EQ(apply_nccl_transforms(NcclContext{Op::AllToAll, g, 8 * kMiB, o, shape, rail32(), {}, 0}, p),
            (std::vector<std::string>{"alltoall_nvlink", "alltoall_launch"}));
  // One server: no off-node peer, 7 on NVLink at 0.6 us, and the 36.5 us launch: 40.7 us.
  EXPECT_EQ(p.transfers[0].label, "latency/alltoall-launch-and-posts");
  EXPECT_NEAR(p.transfers[0].duration.seconds(), 40.7e-6, 1e-12);
  for (size_t i = 0; i < built.transfers.size(); ++i)
    if (built.transfers[i].kind == plan::TransferKind::P2p)
      EXPECT_EQ(p.transfers[i + 1].bytes, static_cast<Bytes>(std::ceil(static_cast<double>(built.transfers[i].bytes) /
                                                                       kAlltoallNvlinkEfficiency)));
}

TEST(NcclTransforms, MakePlanIsChooseBuildApply) {
  Options o;
  o.tuner = true;
  o.channels = kAutoChannels;
  const plan::TransferPlan p = make_plan("ring", Op::AllReduce, iota(32), 64 * kMiB, o, rail32());
  EXPECT_EQ(p.algorithm, "ring");
  EXPECT_FALSE(p.protocol.empty());
  EXPECT_EQ(p.transfers[0].label, "latency/ring/" + p.protocol);
  EXPECT_TRUE(p.transfers[0].holds_hop_latency);
}

}  // namespace
}  // namespace podnet::collective
