#include "cluster/placement.hpp"
#include "workload/test_util.hpp"

#include <gtest/gtest.h>

#include <set>

#include "core/error.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::cluster {
namespace {

using workload::testing::rail;

workload::Job job(int64_t tp, int64_t pp, int64_t dp, int64_t m = 4) {
  return workload::testing::small_gpt_job(tp, pp, dp, m);
}

int32_t server_of(const topology::Topology& t, int32_t g) {
  return t.nodes[static_cast<size_t>(t.gpus[static_cast<size_t>(g)])].server;
}
int32_t group_of(const topology::Topology& t, int32_t g) {
  return t.nodes[static_cast<size_t>(t.gpus[static_cast<size_t>(g)])].group;
}

TEST(Placement, PackedIsRankOrder) {
  const auto g = place(job(8, 2, 4), rail(1024), Policy::Packed, 1);
  ASSERT_EQ(g.size(), 64u);
  for (int32_t r = 0; r < 64; ++r) EXPECT_EQ(g[static_cast<size_t>(r)], r);
}

TEST(Placement, RandomShufflesWholeServersDeterministically) {
  const auto& t = rail(1024);
  const auto a = place(job(8, 2, 8), t, Policy::Random, 7);
  EXPECT_EQ(a, place(job(8, 2, 8), t, Policy::Random, 7));
  EXPECT_NE(a, place(job(8, 2, 8), t, Policy::Random, 8));
  EXPECT_EQ(std::set<int32_t>(a.begin(), a.end()).size(), a.size());
  // Every TP group (8 consecutive ranks) is one server, GPUs in local order.
  for (size_t r = 0; r < a.size(); r += 8)
    for (size_t k = 1; k < 8; ++k) {
      EXPECT_EQ(server_of(t, a[r + k]), server_of(t, a[r]));
      EXPECT_EQ(a[r + k], a[r] + static_cast<int32_t>(k));
    }
}

TEST(Placement, TopologyAwareKeepsStagesInsideGroups) {
  // rail_clos 1024 GPUs = 2 aggregation groups of 512. TP8 PP2 DP48 = 768 GPUs; a stage is t d = 384 GPUs.
  // packed: stage 1 = GPUs 384..767 straddles the group boundary at 512, so its DP rings cross the spine.
  // topology_aware (best fit): stage 0 -> group 0 (both groups have 512 free: the lower), stage 1 -> group 1
  // (group 0 has only 128 left): no DP ring hop leaves its group; every PP edge crosses.
  const auto& t = rail(1024);
  const workload::Job j = job(8, 2, 48);
  const auto ta = place(j, t, Policy::TopologyAware, 1);
  const auto packed = place(j, t, Policy::Packed, 1);
  collective::Options o;
  const auto s_ta = summarize(j, ta, t, o, "topology_aware");
  const auto s_packed = summarize(j, packed, t, o, "packed");
  EXPECT_EQ(s_ta.dp_cross_group_bytes, 0.0);
  EXPECT_GT(s_packed.dp_cross_group_bytes, 0.0);
  EXPECT_EQ(s_ta.pp_cross_group_bytes, s_ta.pp_bytes);
  EXPECT_LT(s_ta.cross_spine_fraction(), s_packed.cross_spine_fraction());
  ASSERT_EQ(s_ta.gpus_per_group.size(), 2u);
  EXPECT_EQ(s_ta.gpus_per_group[0].second, 384);
  EXPECT_EQ(s_ta.gpus_per_group[1].second, 384);
  for (int64_t r = 0; r < 384; ++r) EXPECT_EQ(group_of(t, ta[static_cast<size_t>(r)]), 0);
  // TP groups stay in one server.
  for (size_t r = 0; r < ta.size(); r += 8) EXPECT_EQ(server_of(t, ta[r + 7]), server_of(t, ta[r]));
  // Here topology_aware moved stage 1 off the boundary: not packed's placement, and it does not say it is.
  EXPECT_FALSE(s_ta.same_as_packed);
  EXPECT_FALSE(s_packed.same_as_packed);  // packed is packed: nothing to say
}

// TP8 PP2 DP32 = 512 GPUs, a stage t d = 256: best fit puts stage 0 in group 0 (the lower of two empty groups)
// and stage 1 after it (group 0's 256 free GPUs are the fewest that hold it). That is GPU r for rank r, as packed
// numbers them, and the summary says so (the train report then names packed beside the policy).
TEST(Placement, TopologyAwareSaysWhenItPlacedAsPackedDoes) {
  const auto& t = rail(1024);
  const workload::Job j = job(8, 2, 32);
  const auto ta = place(j, t, Policy::TopologyAware, 1);
  const auto s = summarize(j, ta, t, collective::Options{}, "topology_aware");
  for (size_t r = 0; r < ta.size(); ++r) ASSERT_EQ(ta[r], static_cast<int32_t>(r)) << r;
  EXPECT_TRUE(s.same_as_packed);
  EXPECT_FALSE(summarize(j, place(j, t, Policy::Random, 1), t, collective::Options{}, "random").same_as_packed);
}

TEST(Placement, TopologyAwareKeepsEpGroupsOnTheirServer) {
  // TP1 x PP8 x DP16 (EP8), 256 microbatches a pipeline: a GPU's PP bytes exceed its DP bytes, so the PP-heavy
  // order (blocks of one pipeline) would spread each EP group (8 consecutive DP ranks) over 8 servers. Its
  // all-to-all bytes count with DP's: Megatron's order, each EP group on one server.
  workload::Job j = job(1, 8, 16, 256);
  j.model.experts = 8;
  j.model.top_k = 2;
  j.ep = 8;
  const workload::Volumes v = workload::volumes(j);
  ASSERT_GT(v.pp_bytes_per_gpu, v.dp_bytes_per_gpu);
  ASSERT_GT(v.dp_bytes_per_gpu + v.ep_bytes_per_gpu, v.pp_bytes_per_gpu);
  const auto& t = rail(1024);
  const auto s = summarize(j, place(j, t, Policy::TopologyAware, 1), t, collective::Options{}, "topology_aware");
  EXPECT_EQ(s.ep_servers, 1);
}

TEST(Placement, PipelineInnerRankOrderKeepsPipelinesInsideGroups) {
  // The same TP8 PP2 DP48 job laid out tp-cp-pp-dp (Llama 3's [TP, CP, PP, DP]): a pipeline is t p = 16
  // consecutive ranks (2 servers), 32 pipelines fill group 0's 512 GPUs and the other 16 go to group 1.
  // Every PP edge then stays inside its group (PP bytes cross the spine: 0), and the DP rings (one GPU per
  // pipeline) join the two groups: 2 of each ring's 48 hops cross.
  const auto& t = rail(1024);
  workload::Job j = job(8, 2, 48);
  j.pipeline_inner = true;
  const auto ta = place(j, t, Policy::TopologyAware, 1);
  const auto s = summarize(j, ta, t, collective::Options{}, "topology_aware");
  EXPECT_EQ(s.pp_cross_group_bytes, 0.0);
  EXPECT_GT(s.pp_bytes, 0.0);
  EXPECT_GT(s.dp_cross_group_bytes, 0.0);
  for (int64_t d = 0; d < 48; ++d)
    for (int64_t k = 0; k < 8; ++k)
      EXPECT_EQ(group_of(t, ta[static_cast<size_t>(j.rank(k, d, 0))]),
                group_of(t, ta[static_cast<size_t>(j.rank(k, d, 1))]));
  for (int64_t r = 0; r < 512; ++r) EXPECT_EQ(group_of(t, ta[static_cast<size_t>(r)]), 0);
  for (int64_t r = 512; r < 768; ++r) EXPECT_EQ(group_of(t, ta[static_cast<size_t>(r)]), 1);
}

TEST(Placement, SummaryBytesByHand) {
  // TP1 PP2 DP2 on GPUs 0..3 (one server, packed): DP groups {0,1} (stage 0) and {2,3} (stage 1).
  // DP: a 2-ring has 2 hops of 2(n-1)/n = 1 x the stage's gradient bytes each.
  // PP: 1 boundary x 2 replicas x 1 TP rank, 2 directions x m = 4 microbatches x b s h e = 2 MiB each: 32 MiB.
  const auto& t = rail(1024);
  const workload::Job j = job(1, 2, 2);
  const auto s = summarize(j, place(j, t, Policy::Packed, 1), t, collective::Options{}, "packed");
  const double g0 = workload::stage_params(j, 0).total() * 2, g1 = workload::stage_params(j, 1).total() * 2;
  EXPECT_DOUBLE_EQ(s.dp_bytes, 2 * g0 + 2 * g1);
  EXPECT_DOUBLE_EQ(s.pp_bytes, 2.0 * 2 * 4 * (1024.0 * 1024 * 2));
  EXPECT_EQ(s.cross_spine_fraction(), 0.0);
}

TEST(Placement, DpBytesCountTheParametersGatheredAtTheirOwnBytes) {
  // ZeRO-1 with fp32 gradients: a 2-ring hop carries (n-1)/n x P x (4 + 2) = 3 P, where ZeRO-0's all-reduce of
  // bf16 gradients carries (n-1)/n x P x 2 x 2 = 2 P.
  const auto& t = rail(1024);
  workload::Job j = job(1, 2, 2);
  const auto s0 = summarize(j, place(j, t, Policy::Packed, 1), t, collective::Options{}, "packed");
  j.zero = 1;
  j.bytes_per_grad = 4;
  const auto s1 = summarize(j, place(j, t, Policy::Packed, 1), t, collective::Options{}, "packed");
  EXPECT_DOUBLE_EQ(s1.dp_bytes / s0.dp_bytes, 1.5);
}

TEST(Placement, EpGroupsServersAndBytes) {
  // An MoE job TP1 x PP2 x DP8 (EP8) on 16 GPUs. Megatron's order (tp-cp-dp-pp): stage 0's EP group is GPUs
  // 0..7, one server. Pipeline inner (tp-cp-pp-dp): ranks 0, 2, ..., 14, two servers. Each GPU is in one EP
  // group and sends its all-to-all bytes to the 7 others: the groups' pairs carry 16 x its ep_bytes_per_gpu.
  const auto& t = rail(1024);
  workload::Job j = job(1, 2, 8);
  j.model.experts = 8;
  j.model.top_k = 2;
  j.ep = 8;
  auto s = summarize(j, place(j, t, Policy::Packed, 1), t, collective::Options{}, "packed");
  EXPECT_EQ(s.ep_servers, 1);
  EXPECT_DOUBLE_EQ(s.ep_bytes, 16 * workload::volumes(j).ep_bytes_per_gpu);
  EXPECT_EQ(s.ep_cross_group_bytes, 0.0);
  j.pipeline_inner = true;
  s = summarize(j, place(j, t, Policy::Packed, 1), t, collective::Options{}, "packed");
  EXPECT_EQ(s.ep_servers, 2);
}

TEST(Placement, BytesCrossingTheCoreOfAFourTierClos) {
  // The 4-level fat tree of 4-port switches (32 one-GPU servers; a zone = 2 pods = 8 GPUs). TP1 PP2 DP16,
  // packed: stage 0 on GPUs 0-15 (zones 0, 1), stage 1 on 16-31 (zones 2, 3). Each stage's 16-GPU DP ring
  // crosses zones at 7 -> 8 and 15 -> 0 (2 of its 16 hops, each 2 (n-1)/n = 15/8 x the stage's gradient
  // bytes); every PP edge (rank d -> 16 + d) crosses.
  const auto t = topology::build_with("fat_tree", {{"gpus", "32"}}, topology::testing::hw_with(1, 1, 4));
  ASSERT_EQ(t.zones, 4);
  const workload::Job j = job(1, 2, 16);
  const auto s = summarize(j, place(j, t, Policy::Packed, 1), t, collective::Options{}, "packed");
  ASSERT_TRUE(s.zones);
  const double g0 = workload::stage_params(j, 0).total() * 2, g1 = workload::stage_params(j, 1).total() * 2;
  EXPECT_DOUBLE_EQ(s.cross_zone_bytes, 2 * (15.0 / 8) * g0 + 2 * (15.0 / 8) * g1 + s.pp_bytes);
  EXPECT_DOUBLE_EQ(s.cross_core_fraction(), s.cross_zone_bytes / (s.dp_bytes + s.pp_bytes));
  EXPECT_FALSE(
      summarize(j, place(j, rail(1024), Policy::Packed, 1), rail(1024), collective::Options{}, "packed").zones);
}

TEST(Placement, TooLargeJobIsAnInputError) {
  EXPECT_THROW(place(job(8, 8, 32), rail(1024), Policy::Packed, 1), InputError);
  EXPECT_THROW(parse_policy("best"), InputError);
}

}  // namespace
}  // namespace podnet::cluster
