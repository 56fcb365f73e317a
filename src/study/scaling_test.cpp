// simulate_job and the scaling sweep (study/scaling.hpp) on built fabrics.
#include "study/scaling.hpp"

#include <gtest/gtest.h>

#include <cstdio>

#include "core/error.hpp"
#include "engine/registry.hpp"
#include "topology/builders.hpp"
#include "workload/test_util.hpp"

namespace podnet::study {
namespace {

using workload::testing::rail;

workload::Job job(int64_t tp, int64_t pp, int64_t dp, int64_t m = 4) {
  return workload::testing::small_gpt_job(tp, pp, dp, m);
}

TEST(Scaling, TopologyAwareBeatsRandomOnAipod16k) {
  // The aipod-16k fabric (2 pods x 16 groups of 512 GPUs, 8 rails, 400G NICs) with a 4,096-GPU GPT-3 job
  // (TP8 PP8 DP64, B = 512 so m = 8): topology_aware puts each stage's 512 GPUs (its 8 DP rings) in one
  // aggregation group; random scatters whole servers over all 32 groups, so DP rings climb to the spines.
  // Expect a smaller cross-spine fraction and an iteration no longer than random's (flow engine).
  topology::Hardware hw = topology::default_hardware();
  const topology::Topology t =
      topology::build_with("rail_clos", {{"gpus", "16384"}, {"rails", "8"}, {"tiers", "3"}, {"groups_per_pod", "16"}},
                           hw);
  workload::Job j;
  j.model = *workload::find_model("gpt3-175b");
  j.gpu = *workload::find_gpu("h100");
  j.tp = 8;
  j.pp = 8;
  j.dp = 64;
  j.global_batch = 512;
  auto backend = engine::make_backend("flow", t);
  const auto ta = simulate_job(j, t, *backend, workload::TrainOptions{}, cluster::Policy::TopologyAware, 1);
  const auto rnd = simulate_job(j, t, *backend, workload::TrainOptions{}, cluster::Policy::Random, 1);
  EXPECT_LT(ta.placement.cross_spine_fraction(), rnd.placement.cross_spine_fraction());
  EXPECT_EQ(ta.placement.dp_cross_group_bytes, 0.0);
  EXPECT_LE(ta.iteration, rnd.iteration);
  EXPECT_EQ(ta.placement.gpus_per_group.size(), 8u);  // 8 stages x 512 GPUs
  std::printf("  topology_aware %.2f ms (cross spine %.3f), random %.2f ms (cross spine %.3f)\n",
              ta.iteration.seconds() * 1e3, ta.placement.cross_spine_fraction(), rnd.iteration.seconds() * 1e3,
              rnd.placement.cross_spine_fraction());
}

TEST(Scaling, WeakScalingEfficiency) {
  // TP8 PP2 on a 1024-GPU rail Clos, DP 1, 2, 4, 8 with fixed work per replica. d = 1 is the reference
  // (efficiency 1); more replicas add DP all-reduce time, so efficiency <= 1, and capping the NICs at 5 GB/s
  // makes the DP all-reduce slower (lower efficiency at d = 8 than as built).
  const auto& t = rail(1024);
  workload::Job j = job(8, 2, 1, 8);
  const auto points =
      scaling_sweep(j, t, [](const topology::Topology& tt) { return engine::make_backend("analytical", tt); },
                    workload::TrainOptions{}, cluster::Policy::TopologyAware, 1, {1, 2, 4, 8}, {0, 5e9});
  ASSERT_EQ(points.size(), 8u);
  EXPECT_DOUBLE_EQ(points[0].efficiency, 1.0);
  for (const auto& p : points) {
    EXPECT_LE(p.efficiency, 1.0 + 1e-9);
    EXPECT_EQ(p.global_batch, 8 * p.dp);
  }
  EXPECT_LT(points[7].efficiency, points[3].efficiency);
  EXPECT_THROW(scaling_sweep(j, t, nullptr, workload::TrainOptions{}, cluster::Policy::Packed, 1, {1000}, {}),
               InputError);
}

TEST(Scaling, ACapAtTheNicSpeedIsTheFabricAsBuilt) {
  // The cap binds the NIC's port on the network only: at the NIC's own speed no link changes (it capped the
  // faster PCIe link too, so "50 GB/s" on 400G NICs ran slower than as built); below it, every NIC-switch
  // link and nothing else.
  const auto& t = rail(64);
  double nic_port = 0;
  for (const auto& l : t.links)
    if ((t.nodes[l.a].kind == topology::NodeKind::Nic && t.nodes[l.b].kind == topology::NodeKind::Switch) ||
        (t.nodes[l.b].kind == topology::NodeKind::Nic && t.nodes[l.a].kind == topology::NodeKind::Switch))
      nic_port = l.capacity.bytes_per_second();
  ASSERT_GT(nic_port, 0);
  const topology::Topology same = cap_nic_bandwidth(t, nic_port);
  for (size_t i = 0; i < t.links.size(); ++i) EXPECT_EQ(same.links[i].capacity.bps, t.links[i].capacity.bps) << i;
  const topology::Topology half = cap_nic_bandwidth(t, nic_port / 2);
  size_t changed = 0;
  for (size_t i = 0; i < t.links.size(); ++i) {
    const bool port = (t.nodes[t.links[i].a].kind == topology::NodeKind::Nic) !=
                          (t.nodes[t.links[i].b].kind == topology::NodeKind::Nic) &&
                      (t.nodes[t.links[i].a].kind == topology::NodeKind::Switch ||
                       t.nodes[t.links[i].b].kind == topology::NodeKind::Switch);
    EXPECT_EQ(half.links[i].capacity.bps, port ? t.links[i].capacity.bps / 2 : t.links[i].capacity.bps) << i;
    changed += port;
  }
  EXPECT_EQ(changed, 64u);  // one port per NIC, one NIC per GPU
}

}  // namespace
}  // namespace podnet::study
