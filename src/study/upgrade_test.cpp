// Rolling upgrades (study/upgrade.hpp) on a fabric where every data-parallel hop crosses the spines: 8
// servers of 8 GPUs, one server per radix-16 leaf (8 NICs down, 8 up), 4 spines; Llama 3 8B at TP8 x DP8
// with the gradient all-reduce exposed. The slowdowns are the engine's; the plans, their costs and the
// sampling are checked against the arithmetic of the model's header.
#include "study/upgrade.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "scenario/scenario.hpp"
#include "study/reliability.hpp"

namespace podnet::study {
namespace {

const char* kFabric = "schema_version: 1\n"
                      "name: upgrade\n"
                      "topology: {family: fat_tree, gpus: 64, tiers: 2, rail_optimized: false}\n"
                      "server: {gpus: 8, nics: 8, nic_speed: 400Gbps}\n"
                      "switch: {radix: 16, port_speed: 400Gbps}\n"
                      "network: {engine: flow}\n"
                      "workload: {model: llama3-8b, tp: 8, pp: 1, dp: 8, microbatch: 1, global_batch: 8, tokens: 1B, "
                      "overlap_grad_reduce: false}\n";

scenario::Setup setup(const std::vector<std::string>& sets) {
  return scenario::resolve(scenario::load_text(kFabric, "upgrade.yaml", "upgrade", sets));
}

std::string error_of(const std::vector<std::string>& sets) {
  try {
    plan_upgrade(setup(sets));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(PlanUpgrade, EachPlanCostsItsStepsSlowdowns) {
  const UpgradeResult r = plan_upgrade(setup({"maintenance.batches=[1, 2]", "maintenance.runs=0"}));
  EXPECT_EQ(r.switches, 4);
  EXPECT_EQ(r.gpus, 64);
  ASSERT_EQ(r.plans.size(), 3u);  // one at a time; 2 packed; 2 spread
  EXPECT_EQ(r.plans[0].grouping, "one at a time");
  EXPECT_EQ(r.plans[1].grouping, "packed");
  EXPECT_EQ(r.plans[2].grouping, "spread");
  // Packed steps drain neighbours (spines 0-1, then 2-3); spread ones one from each half (0 and 2, 1 and 3).
  EXPECT_EQ(r.plans[1].steps[0].switches, (std::vector<std::string>{"pod000-spine-000", "pod000-spine-001"}));
  EXPECT_EQ(r.plans[2].steps[0].switches, (std::vector<std::string>{"pod000-spine-000", "pod000-spine-002"}));
  const double step_h = 0.5;  // 30 min, the default
  for (const auto& p : r.plans) {
    EXPECT_EQ(p.simulated, static_cast<int64_t>(p.steps.size()));
    EXPECT_DOUBLE_EQ(p.window_hours, step_h * static_cast<double>(p.steps.size()));
    double extra = 0;
    for (const auto& st : p.steps) {
      EXPECT_FALSE(st.stops_job);
      // Every DP hop crosses the spines: losing one of four slows the exposed all-reduce.
      EXPECT_GT(st.slowdown, 1.01) << st.switches[0];
      extra += std::max(0.0, step_h * (1 - 1 / st.slowdown));
    }
    EXPECT_NEAR(p.extra_hours, extra, 1e-12);
  }
  // The spines are alike: each one-at-a-time step costs the same, and two down cost more than one.
  for (const auto& st : r.plans[0].steps) EXPECT_NEAR(st.slowdown, r.plans[0].steps[0].slowdown, 1e-9);
  EXPECT_GT(r.plans[2].worst_slowdown, r.plans[0].worst_slowdown);
  // The least costly plan has the least extra time; the recommended one is within a minute of it.
  for (const auto& p : r.plans) EXPECT_LE(r.plans[r.least].extra_hours, p.extra_hours);
  EXPECT_LE(r.plans[r.best].extra_hours, r.plans[r.least].extra_hours + 1.0 / 60 + 1e-12);
}

TEST(PlanUpgrade, AShorterWindowWinsWhenTheExtraTimeIsNegligible) {
  // The audit's case: 16 steps of 8 h costing 0.6 s against 256 steps of 128 h costing nothing.
  const auto plan = [](double window, double extra) {
    UpgradePlan p;
    p.window_hours = window;
    p.extra_hours = extra;
    return p;
  };
  const std::vector<UpgradePlan> plans = {plan(128, 0), plan(8, 0.6 / 3600), plan(2, 0.5), plan(8, 0.1 / 3600)};
  EXPECT_EQ(least_extra_plan(plans), 0u);
  // Within a minute of nothing: plans 1 and 3 (8 h), the cheaper of them; plan 2 costs 30 min.
  EXPECT_EQ(recommended_plan(plans, 1.0 / 60), 3u);
  // Nothing counts as negligible: the least extra time.
  EXPECT_EQ(recommended_plan(plans, 0), 0u);
  // Within an hour: the 2-hour window.
  EXPECT_EQ(recommended_plan(plans, 1), 2u);
  EXPECT_EQ(recommended_plan({}, 1), 0u);
}

TEST(PlanUpgrade, TheThreadCountChangesNothing) {
  // Every step is its own run: one thread or three give the same slowdowns to the bit.
  const UpgradeResult one = plan_upgrade(setup({"maintenance.batches=[1, 2]", "maintenance.threads=1"}));
  const UpgradeResult three = plan_upgrade(setup({"maintenance.batches=[1, 2]", "maintenance.threads=3"}));
  EXPECT_EQ(one.threads, 1);
  EXPECT_EQ(three.threads, 3);
  ASSERT_EQ(one.plans.size(), three.plans.size());
  for (size_t p = 0; p < one.plans.size(); ++p) {
    ASSERT_EQ(one.plans[p].steps.size(), three.plans[p].steps.size());
    for (size_t i = 0; i < one.plans[p].steps.size(); ++i)
      EXPECT_EQ(one.plans[p].steps[i].slowdown, three.plans[p].steps[i].slowdown) << p << " " << i;
    EXPECT_EQ(one.plans[p].extra_hours, three.plans[p].extra_hours);
  }
  EXPECT_EQ(one.best, three.best);
}

TEST(PlanUpgrade, StepsNotSimulatedTakeTheMeanOfThoseThatWere) {
  const UpgradeResult r = plan_upgrade(setup({"maintenance.batches=[1]", "maintenance.runs=2"}));
  ASSERT_EQ(r.plans.size(), 1u);
  const UpgradePlan& p = r.plans[0];
  ASSERT_EQ(p.steps.size(), 4u);
  // Two runs over four steps: the first and the last, evenly spaced; the middle two estimated.
  EXPECT_TRUE(p.steps[0].simulated);
  EXPECT_FALSE(p.steps[1].simulated);
  EXPECT_FALSE(p.steps[2].simulated);
  EXPECT_TRUE(p.steps[3].simulated);
  EXPECT_EQ(p.simulated, 2);
  EXPECT_DOUBLE_EQ(p.steps[1].slowdown, (p.steps[0].slowdown + p.steps[3].slowdown) / 2);
  EXPECT_EQ(r.runs, 3);  // the intact iteration and two steps
}

TEST(PlanUpgrade, ALeafThatIsTheServersOnlyLinkStopsTheJob) {
  // One server per leaf: draining a leaf strands its 8 GPUs. The job stops for the whole step.
  const UpgradeResult r = plan_upgrade(
      setup({"maintenance.tier=leaf", "maintenance.batches=[1]", "maintenance.runs=1", "maintenance.step_time=1h"}));
  const UpgradePlan& p = r.plans[0];
  EXPECT_EQ(p.steps.size(), 8u);
  EXPECT_TRUE(p.steps[0].stops_job);
  EXPECT_FALSE(p.steps[0].failure.empty());
  EXPECT_TRUE(p.steps[5].stops_job);  // estimated: every simulated step stopped it
  EXPECT_EQ(p.stopping_steps, 8);
  // Each stopping step costs its hour, a 5 min checkpoint before it and a 10 min restart after it: 8 x 1.25 h.
  EXPECT_DOUBLE_EQ(p.extra_hours, 10.0);
  EXPECT_DOUBLE_EQ(r.stop_hours, 1.25);
}

TEST(PlanUpgrade, RefusesATierTheFabricLacksAndBatchesThatLeaveNothing) {
  EXPECT_NE(error_of({"maintenance.tier=super_spine"})
                .find("maintenance.tier: 'super_spine' is not a switch tier of this fabric; expected one of: leaf, "
                      "spine"),
            std::string::npos);
  EXPECT_NE(error_of({"maintenance.batches=[4, 8]"}).find("every batch is at or above the 4 spine switches"),
            std::string::npos);
  EXPECT_NE(error_of({"network.engine=analytical"}).find("draining switches under a run needs the"), std::string::npos);
}

// The frontend: the 8 servers' one 100G NIC each and one storage node of 4 x 100G NICs on radix-8 leaves
// (4 down, 4 up): servers on leaves 0 and 1, the storage node on leaf 2, each leaf with 2 links to each of
// the 2 spines. A checkpoint (112.4 GB) enters leaf 2 over its 4 uplinks as fast as the 4 storage NICs take it:
// W0 = bytes / (4 x port). One spine out leaves leaf 2 two uplinks: W = bytes / (2 x port) = 2 W0. Spraying
// splits every flow evenly over the uplinks (ECMP's hash would load one more than the others).
const std::vector<std::string> kFrontend = {
    "frontend.nics=1",       "frontend.nic_speed=100Gbps",  "frontend.port_speed=100Gbps",
    "frontend.radix=8",      "frontend.storage_nodes=1",    "frontend.storage_nics=4",
    "network.routing=spray", "maintenance.network=frontend"};

std::vector<std::string> with_frontend(std::vector<std::string> sets) {
  sets.insert(sets.begin(), kFrontend.begin(), kFrontend.end());
  return sets;
}

TEST(PlanUpgradeFrontend, ASpineOutDoublesTheCheckpointWriteAndCostsItsShareOfTheStep) {
  const UpgradeResult r = plan_upgrade(setup(with_frontend({"maintenance.batches=[1]", "maintenance.runs=0"})));
  EXPECT_EQ(r.request.network, "frontend");
  EXPECT_EQ(r.switches, 2);
  const double bytes = setup({}).job(false).model.params() * kCheckpointBytesPerParam;
  const double port = 12.5e9 * 4096 / 4178;  // RoCEv2's payload share of 100 Gb/s
  EXPECT_NEAR(r.checkpoint_write_s, bytes / (4 * port), 1e-3 * r.checkpoint_write_s);
  ASSERT_TRUE(std::isfinite(r.checkpoint_interval_hours));
  ASSERT_GT(r.checkpoint_interval_hours, 0);
  EXPECT_FALSE(r.async_checkpoints);
  const UpgradePlan& p = r.plans[0];
  ASSERT_EQ(p.steps.size(), 2u);
  for (const auto& st : p.steps) {
    EXPECT_FALSE(st.stops_job);
    EXPECT_NEAR(st.checkpoint_write_s, 2 * r.checkpoint_write_s, 2e-3 * r.checkpoint_write_s);
    // A few kilobytes of token ids a step: the loader keeps up, the iteration is untouched.
    EXPECT_LT(st.data_read_s, r.baseline.seconds());
    EXPECT_DOUBLE_EQ(st.slowdown, 1);
    // The step holds 0.5 h / I synchronous checkpoints, each W - W0 longer.
    EXPECT_NEAR(st.extra_hours,
                0.5 / r.checkpoint_interval_hours * (st.checkpoint_write_s - r.checkpoint_write_s) / 3600, 1e-15);
  }
  EXPECT_NEAR(p.extra_hours, p.steps[0].extra_hours + p.steps[1].extra_hours, 1e-15);
  EXPECT_NEAR(p.worst_write_s, 2 * r.checkpoint_write_s, 2e-3 * r.checkpoint_write_s);
  // Asynchronous checkpoints run behind training: the same steps cost nothing.
  const UpgradeResult a = plan_upgrade(
      setup(with_frontend({"maintenance.batches=[1]", "maintenance.runs=0", "storage.checkpoint_mode=async"})));
  EXPECT_TRUE(a.async_checkpoints);
  EXPECT_DOUBLE_EQ(a.plans[0].extra_hours, 0);
}

TEST(PlanUpgradeFrontend, ALeafCutsItsServersOffTheStorage) {
  // Each server's one NIC attaches to one leaf: draining it cuts those servers off; the job stops.
  const UpgradeResult r =
      plan_upgrade(setup(with_frontend({"maintenance.tier=leaf", "maintenance.batches=[1]", "maintenance.runs=0"})));
  const UpgradePlan& p = r.plans[0];
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.stopping_steps, 3);
  EXPECT_NE(p.steps[0].failure.find("have no frontend NIC in service"), std::string::npos) << p.steps[0].failure;
  // 3 steps of 30 min, each with a checkpoint before it and a restart after it, timed on the storage network as
  // `podnet train` times them (not reliability's 5 and 10 min): more than the step, less than the constants'.
  EXPECT_DOUBLE_EQ(p.extra_hours, 3 * r.stop_hours);
  EXPECT_GT(r.stop_hours, 0.5);
  EXPECT_LT(r.stop_hours, 0.75);
}

TEST(PlanUpgradeFrontend, DualHomedServersRideThroughALeafOnTheirOtherNic) {
  // Two NICs a server, two storage nodes of two NICs, dual-homed (NIC-major) on leaves of 4 down-ports: NIC 0
  // of servers 0-7 on leaves 0-1, the storage nodes' NIC 0 on leaf 2, NIC 1 of servers 0-1 on leaf 2, of 2-5
  // on leaf 3, of 6-7 on leaf 4 with the storage nodes' NIC 1. The 4 storage NICs (400G) bound the write. A
  // leaf without storage NICs out leaves its servers their other NIC: still 400G, the write takes W0. Leaf 2
  // or 4 out takes one NIC from each storage node: 2 left, the write takes 2 W0. No step stops the job.
  std::vector<std::string> sets =
      with_frontend({"frontend.nics=2", "frontend.storage_nodes=2", "frontend.storage_nics=2", "frontend.homing=dual",
                     "maintenance.tier=leaf", "maintenance.batches=[1]", "maintenance.runs=0"});
  const UpgradeResult r = plan_upgrade(setup(sets));
  const UpgradePlan& p = r.plans[0];
  ASSERT_EQ(p.steps.size(), 5u);
  const double bytes = setup({}).job(false).model.params() * kCheckpointBytesPerParam;
  const double port = 12.5e9 * 4096 / 4178;
  EXPECT_NEAR(r.checkpoint_write_s, bytes / (4 * port), 1e-3 * r.checkpoint_write_s);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_FALSE(p.steps[i].stops_job) << p.steps[i].failure;
    const double expect = i == 2 || i == 4 ? 2 : 1;
    EXPECT_NEAR(p.steps[i].checkpoint_write_s, expect * r.checkpoint_write_s, 2e-3 * r.checkpoint_write_s) << i;
  }
  EXPECT_EQ(p.stopping_steps, 0);
  // Single-homed, a server leaf out cuts its servers off.
  sets.push_back("frontend.homing=single");
  const UpgradeResult single = plan_upgrade(setup(sets));
  EXPECT_TRUE(single.plans[0].steps[0].stops_job);
}

TEST(PlanUpgradeFrontend, RefusesWithoutAFrontendOrWithStorageOnTheBackEnd) {
  EXPECT_NE(error_of({"maintenance.network=frontend"}).find("no frontend network to upgrade"), std::string::npos);
  EXPECT_NE(error_of(with_frontend({"frontend.storage_nodes=0"})).find("the frontend has no storage nodes"),
            std::string::npos);
  EXPECT_NE(error_of(with_frontend({"maintenance.tier=core"})).find("is not a switch tier of the frontend network"),
            std::string::npos);
}

}  // namespace
}  // namespace podnet::study
