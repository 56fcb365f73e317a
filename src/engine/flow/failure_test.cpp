// Failures injected into the flow engine (failures.hpp): stall,
// repair by rerouting, job failure on timeout or lost route, stragglers.
// Expected times are derived from the model in each test's comment, using the
// same plan's failure-free time T0 from the baseline run (T0 itself is
// checked against closed forms in engine_validation_test.cpp).
#include <gtest/gtest.h>

#include "engine/registry.hpp"
#include "engine/test_util.hpp"
#include "routing/router.hpp"
#include "topology/test_util.hpp"

namespace podnet::engine {
namespace {

using namespace podnet::literals;
using testing::compute_then_p2p;
using testing::nic_link;
using testing::p2p_plan;
using topology::testing::hw_with;

// 2-tier fat-tree of radix-8 switches, 1 GPU and 1 NIC per server.
topology::Topology fabric(int gpus) {
  return topology::build_with("fat_tree", {{"gpus", std::to_string(gpus)}, {"tiers", "2"}}, hw_with(1, 1, 8));
}

Time run(const topology::Topology& t, const plan::TransferPlan& plan, NetworkOptions o, RunReport* out = nullptr) {
  RunReport r = make_backend("flow", t, o)->run(plan);
  if (out) *out = r;
  return r.makespan;
}

// The link between a leaf and the spine it reaches through its first uplink.
topology::LinkId first_uplink(const topology::Topology& t, const std::string& leaf) {
  for (topology::LinkId l = 0; l < static_cast<topology::LinkId>(t.links.size()); ++l)
    if (t.nodes[t.links[l].a].name == leaf && t.nodes[t.links[l].b].kind == topology::NodeKind::Switch) return l;
  return -1;
}

// The spine -> leaf link on the static route src -> dst (-1 if none).
topology::LinkId static_downlink(const topology::Topology& t, int32_t src, int32_t dst) {
  routing::RouteOptions ro;
  ro.policy = "static";
  routing::Router router(t, ro);
  std::vector<routing::PathPart> path;
  router.route(src, dst, 0, 1.0, path);
  for (const auto& p : path)
    if (t.nodes[routing::dir_from(p.link, t)].tier == 2 && t.nodes[routing::dir_to(p.link, t)].tier == 1)
      return routing::link_of(p.link);
  return -1;
}

// Every link of the first spine (tier-2 switch).
std::vector<topology::LinkId> first_spine_links(const topology::Topology& t) {
  for (topology::NodeId n = 0; n < static_cast<topology::NodeId>(t.nodes.size()); ++n)
    if (t.nodes[n].kind == topology::NodeKind::Switch && t.nodes[n].tier == 2) {
      auto [b, e] = t.incident(n);
      return {b, e};
    }
  return {};
}

TEST(Failures, SprayedFlowsSlowByTheLostCapacityShare) {
  // 8 GPUs: 2 leaves of 4 hosts, 4 uplinks each, all to one spine (4 parallel links).
  // Hosts 0..3 (leaf 0) each send S to hosts 4..7 (leaf 1), sprayed over the 4 uplinks:
  // every flow runs at its NIC rate C until t_f, when one uplink dies. Every flow
  // crosses it (1/4 of its bytes), so all stall until the leaf drops it from its
  // group at t_f + local_repair; then the 4 flows share 3 uplinks: each at 3C/4.
  // Remaining time at C was T0 - t_f, so
  //   T = t_f + local_repair + (4/3) (T0 - t_f).
  const auto t = fabric(8);
  const plan::TransferPlan plan = p2p_plan({{0, 4}, {1, 5}, {2, 6}, {3, 7}}, 256_MiB);
  NetworkOptions o;
  o.routing.policy = "spray";
  const Time t0 = run(t, plan, o);
  const Time tf = 2_ms;
  ASSERT_GT(t0, tf + 1_ms);
  o.faults.failures.events.push_back({tf, FailureAction::Down, {first_uplink(t, "leaf-000")}, {}, -1, 1.0, "uplink"});
  RunReport r;
  const Time got = run(t, plan, o, &r);
  const double expect = (tf + o.faults.failures.local_repair).seconds() + 4.0 / 3.0 * (t0 - tf).seconds();
  EXPECT_FALSE(r.job_failed);
  EXPECT_NEAR(got.seconds(), expect, 1e-9 * expect + 1e-9);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].flows_rerouted, 4);
}

TEST(Failures, RepairSlowerThanTheTimeoutFailsTheJob) {
  // Same failure with local_repair 40 s > collective_timeout 30 s: the job stops
  // when the collective gives up, at t_f + 30 s.
  const auto t = fabric(8);
  const plan::TransferPlan plan = p2p_plan({{0, 4}, {1, 5}, {2, 6}, {3, 7}}, 256_MiB);
  NetworkOptions o;
  o.routing.policy = "spray";
  o.faults.failures.local_repair = Time::from_seconds(40);
  o.faults.failures.events.push_back({2_ms, FailureAction::Down, {first_uplink(t, "leaf-000")}, {}, -1, 1.0, "uplink"});
  RunReport r;
  run(t, plan, o, &r);
  EXPECT_TRUE(r.job_failed);
  EXPECT_EQ(r.failed_at, 2_ms + o.faults.failures.collective_timeout);
  EXPECT_NE(r.failure.find("collective timeout"), std::string::npos) << r.failure;
}

TEST(Failures, LostNicLinkFailsTheJobAtTheTimeout) {
  // Host 4's NIC link dies: nothing can reroute around a NIC's only link, so the
  // transfer to it can never finish; the job fails when the collective times out.
  const auto t = fabric(8);
  const plan::TransferPlan plan = p2p_plan({{0, 4}}, 256_MiB);
  ASSERT_GE(nic_link(t, 4), 0);
  NetworkOptions o;
  o.faults.failures.events.push_back({1_ms, FailureAction::Down, {nic_link(t, 4)}, {}, -1, 1.0, "nic"});
  RunReport r;
  run(t, plan, o, &r);
  EXPECT_TRUE(r.job_failed);
  EXPECT_EQ(r.failed_at, 1_ms + o.faults.failures.collective_timeout);
  EXPECT_NE(r.failure.find("no route"), std::string::npos) << r.failure;
}

TEST(Failures, DownlinkWithoutTwinWaitsForConvergence) {
  // 32 GPUs: 8 leaves, 4 spines, one link between each leaf and spine (no twins).
  // One flow from host 4 (leaf 1) to host 0 (leaf 0) on the static path; its
  // spine -> leaf 0 link dies at t_f. The spine cannot repair that alone, so the
  // flow stalls until convergence, then resumes at full rate on another spine:
  //   T = t_f + convergence + (T0 - t_f).
  const auto t = fabric(32);
  const plan::TransferPlan plan = p2p_plan({{4, 0}}, 256_MiB);
  NetworkOptions o;
  o.routing.policy = "static";
  const Time t0 = run(t, plan, o);
  const topology::LinkId down = static_downlink(t, 4, 0);
  ASSERT_GE(down, 0);
  const Time tf = 2_ms;
  o.faults.failures.events.push_back({tf, FailureAction::Down, {down}, {}, -1, 1.0, "downlink"});
  RunReport r;
  const Time got = run(t, plan, o, &r);
  EXPECT_FALSE(r.job_failed);
  // (the rerouted flow restarts with its remaining bytes rounded to a whole byte: 1 B at
  // 392 Gb/s is 20 ps, so compare to the nanosecond)
  EXPECT_NEAR(got.seconds(), (tf + o.faults.failures.convergence + (t0 - tf)).seconds(), 1e-9);
}

TEST(Failures, DrainingASpineMovesFlowsWithoutStall) {
  // 32 GPUs: 8 leaves, 4 spines, one link from each leaf to each spine. Hosts
  // 0..3 (leaf 0) send S to hosts 4..7 (leaf 1), sprayed over the 4 spines:
  // each of leaf 0's 4 uplinks carries 4 x C/4 = C, every flow runs at C.
  // Spine 0 is drained at t_f: routing moves the flows off at once (no stall),
  // 4 flows now share 3 uplinks: 3C/4 each, so
  //   T = t_f + (4/3) (T0 - t_f).
  const auto t = fabric(32);
  const plan::TransferPlan plan = p2p_plan({{0, 4}, {1, 5}, {2, 6}, {3, 7}}, 256_MiB);
  NetworkOptions o;
  o.routing.policy = "spray";
  const Time t0 = run(t, plan, o);
  const Time tf = 2_ms;
  o.faults.failures.events.push_back({tf, FailureAction::Drain, first_spine_links(t), {}, -1, 1.0, "drain spine"});
  RunReport r;
  const Time got = run(t, plan, o, &r);
  EXPECT_FALSE(r.job_failed);
  EXPECT_NEAR(got.seconds(), tf.seconds() + 4.0 / 3.0 * (t0 - tf).seconds(), 1e-9);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].flows_rerouted, 4);
}

TEST(Failures, DegradedLinkAndStraggler) {
  // Degrade: host 0's NIC link drops to 100 Gbps from the start: the flow runs
  // at a quarter of the rate, so its transfer time (T0 - alpha) quadruples.
  const auto t = fabric(8);
  const plan::TransferPlan plan = p2p_plan({{0, 4}}, 64_MiB);
  NetworkOptions o;
  RunReport base;
  const Time t0 = run(t, plan, o, &base);
  o.faults.failures.events.push_back(
      {Time(), FailureAction::Degrade, {nic_link(t, 0)}, Bandwidth(100e9), -1, 1.0, "slow nic"});
  // alpha: the whole-plan time minus the serialization at the full payload rate.
  const double rate = 400e9 * o.transport.efficiency();
  const double alpha = t0.seconds() - 64.0 * 1048576 * 8 / rate;
  EXPECT_NEAR(run(t, plan, o).seconds(), alpha + 4 * (t0.seconds() - alpha), 1e-9);

  // Straggler: compute on GPU 3 takes 1.5x as long once it is slowed.
  plan::TransferPlan work;
  plan::Transfer c;
  c.kind = plan::TransferKind::Compute;
  c.ranks = {3};
  c.duration = 10_ms;
  work.add(c);
  NetworkOptions s;
  s.faults.failures.events.push_back({Time(), FailureAction::Slow, {}, {}, 3, 1.5, "gpu 3"});
  EXPECT_EQ(run(t, work, s), 15_ms);
}

TEST(Failures, StopEndsTheJobAtOnceAndEventsAfterTheEndDoNothing) {
  // A GPU failing (Stop) at 1 ms stops the job there, even with a link failure
  // earlier whose timeout would come later (1 ms + 30 s is after 1 ms).
  const auto t = fabric(8);
  const plan::TransferPlan plan = p2p_plan({{0, 4}}, 256_MiB);
  NetworkOptions o;
  const Time t0 = run(t, plan, o);
  ASSERT_GT(t0, 2_ms);
  o.faults.failures.events.push_back({Time(500000000), FailureAction::Down, {nic_link(t, 4)}, {}, -1, 1.0, "nic"});
  o.faults.failures.events.push_back({1_ms, FailureAction::Stop, {}, {}, 5, 1.0, "gpu 5"});
  RunReport r;
  EXPECT_EQ(run(t, plan, o, &r), 1_ms);
  EXPECT_TRUE(r.job_failed);
  EXPECT_EQ(r.failed_at, 1_ms);
  EXPECT_NE(r.failure.find("gpu 5 failed"), std::string::npos) << r.failure;

  // The same GPU failing after the transfer finished: the job was over, nothing applies.
  NetworkOptions late;
  late.faults.failures.events.push_back({t0 + 1_ms, FailureAction::Stop, {}, {}, 5, 1.0, "gpu 5"});
  EXPECT_EQ(run(t, plan, late, &r), t0);
  EXPECT_FALSE(r.job_failed);
  EXPECT_TRUE(r.failures.empty());
}

TEST(Failures, ATransferStartingWithNoRouteTimesOut) {
  // Host 4's NIC link dies at 1 ms and routing forgets it at 1 ms + convergence;
  // a second transfer to host 4 starts after that (it follows a 3 s compute),
  // finds no path, and the job fails when its collective times out: at 3 s + 30 s.
  const auto t = fabric(8);
  plan::TransferPlan plan;
  plan::Transfer c;
  c.kind = plan::TransferKind::Compute;
  c.ranks = {0};
  c.duration = Time::from_seconds(3);
  const int32_t wait = plan.add(c);
  plan::Transfer x;
  x.ranks = {0, 4};
  x.bytes = 1_MiB;
  x.deps = {wait};
  plan.add(x);
  NetworkOptions o;
  o.faults.failures.events.push_back({1_ms, FailureAction::Down, {nic_link(t, 4)}, {}, -1, 1.0, "nic"});
  RunReport r;
  EXPECT_EQ(run(t, plan, o, &r), Time::from_seconds(33));
  EXPECT_TRUE(r.job_failed);
  EXPECT_NE(r.failure.find("no route after the failures"), std::string::npos) << r.failure;
  EXPECT_EQ(r.failed_transfer, 1);  // the transfer it names, whose label a study can put in words
}

// aipod-16k (examples/aipod-16k.yaml): rail-optimized, 8 GPUs and 8 x 400G NICs per
// server, 128-port switches at 1:1: a rail-0 leaf has 64 servers below and 64
// uplinks (4 parallel links to each of its rail's 16 spines in the pod).
const topology::Topology& aipod16k() {
  static const topology::Topology t =
      topology::build_with("rail_clos", {{"gpus", "16384"}, {"tiers", "3"}, {"groups_per_pod", "16"}},
                           topology::default_hardware());
  return t;
}

// Rail-0 GPU of each of the 64 servers under su000-leaf-r0 (servers 0..63) sends
// to the rail-0 GPU of the matching server of group 1 (servers 64..127).
plan::TransferPlan leaf_to_leaf(Bytes bytes) {
  std::vector<std::pair<int32_t, int32_t>> pairs;
  for (int32_t h = 0; h < 64; ++h) pairs.emplace_back(8 * h, 8 * (64 + h));
  return p2p_plan(pairs, bytes);
}

TEST(Failures, LeafUplinkDownOnAipod16kCostsTheLostCapacityShare) {
  // Sprayed, each of the 64 flows puts 1/64 of its rate on each of the leaf's 64
  // uplinks, so each uplink carries 64 x C/64 = C: every flow runs at its NIC
  // rate C. One uplink dies at t_f: every flow crosses it and stalls until the
  // leaf drops it from its ECMP group (t_f + local_repair); then 63 uplinks (and,
  // symmetrically, 63/64 of the downlinks into the far leaf) carry 64 flows:
  // each at 63/64 C. Remaining time at C was T0 - t_f, so
  //   T = t_f + local_repair + (64/63) (T0 - t_f).
  const auto& t = aipod16k();
  const plan::TransferPlan plan = leaf_to_leaf(256_MiB);
  NetworkOptions o;
  o.routing.policy = "spray";
  const Time t0 = run(t, plan, o);
  const Time tf = 500_us;
  ASSERT_GT(t0, tf + 1_ms);
  o.faults.failures.events.push_back(
      {tf, FailureAction::Down, {first_uplink(t, "su000-leaf-r0")}, {}, -1, 1.0, "uplink"});
  RunReport r;
  const Time got = run(t, plan, o, &r);
  EXPECT_FALSE(r.job_failed);
  const double expect = (tf + o.faults.failures.local_repair).seconds() + 64.0 / 63.0 * (t0 - tf).seconds();
  EXPECT_NEAR(got.seconds(), expect, 1e-9 * expect + 1e-9);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].flows_rerouted, 64);

  // Adaptive routing (per flow): each flow on its own least-loaded uplink; the
  // flow on the dead one (remaining C (T0 - t_f)) stalls until t_r = t_f +
  // local_repair, then shares a live flow's uplink (remaining C (T0 - t_r)),
  // both at C/2. The partner ends at t_r + 2 (T0 - t_r) = 2 T0 - t_r, leaving
  // the rerouted flow C (T0 - t_f) - C (T0 - t_r) = C (t_r - t_f) alone at C:
  //   T = 2 T0 - t_r + (t_r - t_f) = 2 T0 - t_f
  // (per-flow adaptive routing doubles one flow up: the worst case for DLB).
  NetworkOptions a;
  a.routing.policy = "adaptive";
  const Time a0 = run(t, plan, a);
  a.faults.failures.events = o.faults.failures.events;
  const Time ag = run(t, plan, a, &r);
  EXPECT_FALSE(r.job_failed);
  EXPECT_NEAR(ag.seconds(), 2 * a0.seconds() - tf.seconds(), 1e-9);

  // The same failure repaired after 40 s, beyond the 30 s collective timeout: job failure.
  o.faults.failures.local_repair = Time::from_seconds(40);
  run(t, plan, o, &r);
  EXPECT_TRUE(r.job_failed);
  EXPECT_EQ(r.failed_at, tf + o.faults.failures.collective_timeout);
}

TEST(Failures, ServerToLeafLinkDownOnAipod16kStopsTheJob) {
  // Server 3's rail-0 NIC link (GPU 24) dies under its transfer: no spare rail,
  // no other path for that NIC, so once routing converges the flow has no route
  // and the job fails when the collective times out, at t_f + 30 s.
  const auto& t = aipod16k();
  const plan::TransferPlan plan = leaf_to_leaf(256_MiB);
  NetworkOptions o;
  o.routing.policy = "adaptive";
  o.faults.failures.events.push_back({500_us, FailureAction::Down, {nic_link(t, 24)}, {}, -1, 1.0, "nic link"});
  RunReport r;
  run(t, plan, o, &r);
  EXPECT_TRUE(r.job_failed);
  EXPECT_EQ(r.failed_at, 500_us + o.faults.failures.collective_timeout);
  EXPECT_NE(r.failure.find("no route"), std::string::npos) << r.failure;
}

TEST(FlowBackend, QuantumFromTheScenarioRoundsCompletionsUp) {
  // network.flow_quantum reaches the flow simulation: a completion at T0 (exact)
  // becomes the next multiple of the quantum, T0 < T <= T0 + quantum.
  const auto t = fabric(8);
  const plan::TransferPlan plan = p2p_plan({{0, 4}}, 3_MiB);
  NetworkOptions o;
  const Time t0 = run(t, plan, o);
  o.flow.quantum = 1_us;
  const Time tq = run(t, plan, o);
  EXPECT_EQ(tq.ps % (1_us).ps, 0);
  EXPECT_GT(tq, t0);
  EXPECT_LE(tq, t0 + 1_us);
}

TEST(FlowBackend, ProgressIsReportedEveryNTransfers) {
  // 7 independent transfers, progress every 3: called at 3 and 6 finished, with the total 7
  // and a simulated time no later than the makespan.
  const auto t = fabric(8);
  const plan::TransferPlan plan = p2p_plan({{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}}, 1_MiB);
  NetworkOptions o;
  std::vector<std::pair<int64_t, int64_t>> calls;
  Time last;
  o.observers.progress = [&](int64_t done, int64_t total, Time now) {
    calls.emplace_back(done, total);
    last = now;
  };
  o.observers.progress_every = 3;
  const Time makespan = run(t, plan, o);
  EXPECT_EQ(calls, (std::vector<std::pair<int64_t, int64_t>>{{3, 7}, {6, 7}}));
  EXPECT_LE(last, makespan);
}

TEST(Failures, AFlowMovedDuringItsLatencyKeepsTheRestOfIt) {
  // One flow with a long latency phase (1,000 latency steps: α of several ms),
  // sprayed over 4 spines; one spine is drained at 100 us, while the flow still
  // waits out α. Its NIC (C) stays the bottleneck on 3 spines (3C of uplinks),
  // so the drained run must take exactly T0: the moved flow keeps the rest of its
  // latency (restarting without it would finish α - 100 us early).
  const auto t = fabric(32);
  plan::TransferPlan plan = p2p_plan({{0, 4}}, 64_MiB);
  plan.transfers[0].latency_steps = 1000;
  NetworkOptions o;
  o.routing.policy = "spray";
  const Time t0 = run(t, plan, o);
  o.faults.failures.events.push_back({100_us, FailureAction::Drain, first_spine_links(t), {}, -1, 1.0, "drain"});
  RunReport r;
  EXPECT_EQ(run(t, plan, o, &r), t0);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].flows_rerouted, 1);
}

TEST(Failures, AFlowStartingBeforeConvergenceStillTakesTheDeadDownlink) {
  // 32 GPUs, 8 leaves, 4 spines, no twins; static routing. The spine -> leaf 0
  // link of host 4's static path to host 0 dies at t_f = 1 ms. Leaf 0 drops its
  // uplink direction at t_f + local_repair, but the spine -> leaf 0 direction
  // stays in every upstream table until t_f + convergence. A transfer 4 -> 0
  // that starts at 10 ms (after a compute) is therefore routed into the dead
  // downlink, stalls, and is moved at t_f + convergence, then runs alone at its
  // NIC rate: T = t_f + convergence + (T0 - 10 ms - alpha) with T0 the
  // failure-free time, so T lies in (t_f + convergence, t_f + convergence + T0 - 10 ms].
  const auto t = fabric(32);
  plan::TransferPlan plan = compute_then_p2p(4, 0, 10_ms, 64_MiB);
  NetworkOptions o;
  o.routing.policy = "static";
  const Time t0 = run(t, plan, o);
  const topology::LinkId down = static_downlink(t, 4, 0);
  ASSERT_GE(down, 0);
  o.faults.failures.events.push_back({1_ms, FailureAction::Down, {down}, {}, -1, 1.0, "downlink"});
  RunReport r;
  const Time got = run(t, plan, o, &r);
  EXPECT_FALSE(r.job_failed);
  EXPECT_GT(got, 1_ms + o.faults.failures.convergence);
  EXPECT_LE(got, 1_ms + o.faults.failures.convergence + (t0 - 10_ms));
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].flows_rerouted, 1);
}

TEST(Failures, AFlowStartingOnADeadLinkWhoseRepairIsBeyondTheTimeoutFailsTheJob) {
  // As above, with convergence 45 s > collective_timeout 30 s. When the link dies at t_f = 1 ms no flow
  // crosses it (the transfer waits for its 10 ms compute), so the failure itself stalls nothing; the
  // transfer then starts at 10 ms into the dead downlink, which routing repairs only at t_f + 45 s: it
  // would stall 45 s + 1 ms - 10 ms = 44.991 s > 30 s, so the job fails at 10 ms + 30 s. (Before, only
  // the flows running at the failure were checked and this run "completed" at about t_f + 45 s.)
  const auto t = fabric(32);
  plan::TransferPlan plan = compute_then_p2p(4, 0, 10_ms, 64_MiB);
  NetworkOptions o;
  o.routing.policy = "static";
  o.faults.failures.convergence = Time::from_seconds(45);
  const topology::LinkId down = static_downlink(t, 4, 0);
  ASSERT_GE(down, 0);
  o.faults.failures.events.push_back({1_ms, FailureAction::Down, {down}, {}, -1, 1.0, "downlink"});
  RunReport r;
  run(t, plan, o, &r);
  EXPECT_TRUE(r.job_failed);
  EXPECT_EQ(r.failed_at, 10_ms + o.faults.failures.collective_timeout);
  EXPECT_NE(r.failure.find("started at 10ms on it and would stall 44.991s"), std::string::npos) << r.failure;
  // With the compute 15 s long the transfer starts 15 s after t_f: it would stall 45 s + 1 ms - 15 s =
  // 30.001 s, still beyond 30 s; at 15.002 s it stalls 29.999 s and the job survives, moved at t_f + 45 s.
  plan.transfers[0].duration = Time::from_seconds(15);
  run(t, plan, o, &r);
  EXPECT_TRUE(r.job_failed);
  EXPECT_EQ(r.failed_at, Time::from_seconds(15) + o.faults.failures.collective_timeout);
  plan.transfers[0].duration = Time::from_seconds(15) + 2_ms;
  const Time got = run(t, plan, o, &r);
  EXPECT_FALSE(r.job_failed) << r.failure;
  EXPECT_GT(got, 1_ms + o.faults.failures.convergence);
}

TEST(Failures, AFlowStartingThroughADeadSpineWaitsForTheFirstRepairOnItsPath) {
  // 32 GPUs, static routing; the spine on host 4's path to host 0 dies at t_f = 0 with convergence 45 s >
  // collective_timeout 30 s. A transfer 4 -> 0 starting at 0.5 ms crosses two dead directions: the leaf's
  // uplink into the spine (repaired locally at t_f + local_repair = 1 ms) and the spine's downlink (t_f +
  // 45 s). It is moved at the first, 1 ms: a 0.5 ms stall, so the job survives (judged against the 45 s
  // repair it failed), and the run ends by T = 1 ms + (T0 - 0.5 ms) with T0 the failure-free time.
  const auto t = fabric(32);
  plan::TransferPlan plan = compute_then_p2p(4, 0, 500_us, 64_MiB);
  NetworkOptions o;
  o.routing.policy = "static";
  const Time t0 = run(t, plan, o);
  o.faults.failures.convergence = Time::from_seconds(45);
  const topology::LinkId down = static_downlink(t, 4, 0);
  ASSERT_GE(down, 0);
  const topology::NodeId spine = t.nodes[t.links[down].a].tier == 2 ? t.links[down].a : t.links[down].b;
  ASSERT_EQ(t.nodes[spine].tier, 2);
  std::vector<topology::LinkId> links;
  auto [b, e] = t.incident(spine);
  links.assign(b, e);
  o.faults.failures.events.push_back({Time(), FailureAction::Down, links, {}, -1, 1.0, "spine"});
  RunReport r;
  const Time got = run(t, plan, o, &r);
  EXPECT_FALSE(r.job_failed) << r.failure;
  EXPECT_LE(got, 1_ms + (t0 - 500_us));
}

}  // namespace
}  // namespace podnet::engine
