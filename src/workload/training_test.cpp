#include "workload/training.hpp"
#include "engine/registry.hpp"
#include "workload/test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "collective/nccl/tuner.hpp"
#include "topology/builders.hpp"
#include "workload/schedule.hpp"

namespace podnet::workload {
namespace {

using namespace podnet::literals;

using workload::testing::rail;

// The critical-path table and the failure texts name ops in words; a label it does not know stays as it is.
TEST(OpWords, LabelsInWords) {
  EXPECT_EQ(op_words("p2p grad vs6->5 mb47"), "gradients sent, virtual stage 6 to 5, microbatch 47");
  EXPECT_EQ(op_words("p2p act vs0->1 mb3"), "activations sent, virtual stage 0 to 1, microbatch 3");
  EXPECT_EQ(op_words("F c0 mb3"), "forward, chunk 0, microbatch 3");
  EXPECT_EQ(op_words("B c2 mb10"), "backward, chunk 2, microbatch 10");
  EXPECT_EQ(op_words("cp kv 3->0"), "context-parallel K/V, rank 3 to 0");
  // The TP, EP and CP communication after a pass (it read "tp B c0 mb6"), and a pass split around a bucket.
  EXPECT_EQ(op_words("tp B c0 mb6"), "TP, backward, chunk 0, microbatch 6");
  EXPECT_EQ(op_words("ep F c1 mb2"), "EP, forward, chunk 1, microbatch 2");
  EXPECT_EQ(op_words("F c1 mb2 [2/3]"), "forward, chunk 1, microbatch 2, piece 2/3");
  // A data-parallel collective's transfers (the failure texts name them): after the optimizer or the last
  // backward, ZeRO-2's per microbatch, ZeRO-3's gathers, the experts' buckets.
  EXPECT_EQ(op_words("reducescatter c0 b0 rs/ring"),
            "data-parallel gradient reduce-scatter, chunk 0, bucket 0 (rs/ring)");
  EXPECT_EQ(op_words("allreduce c1 b12 expert ar/tree"),
            "data-parallel gradient all-reduce of the experts, chunk 1, bucket 12 (ar/tree)");
  EXPECT_EQ(op_words("reducescatter mb7 c0 b3 rs/ring"),
            "data-parallel gradient reduce-scatter, chunk 0, bucket 3, after microbatch 7 (rs/ring)");
  EXPECT_EQ(op_words("ag F c0 mb1 c0 b2 ag/ring"),
            "data-parallel parameter all-gather, chunk 0, bucket 2, before the forward of microbatch 1 (ag/ring)");
  EXPECT_EQ(op_words("allgather c0 b2"), "data-parallel parameter all-gather, chunk 0, bucket 2");
  EXPECT_EQ(op_words("dp reducescatter b3"), "dp reducescatter b3");
}

std::vector<int32_t> identity(int64_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// A tiny dense model whose p2p messages are ~1 KB (latency-bound, a few us).
Job tiny(int64_t pp, int64_t m, int64_t v = 1) {
  Job j;
  j.model = *find_model("gpt3-175b");
  j.model.layers = 8;
  j.model.hidden = 64;
  j.model.heads = 8;
  j.model.kv_heads = 8;
  j.model.ffn = 256;
  j.model.seq = 8;
  j.model.vocab = 128;
  j.gpu = *find_gpu("h100");
  j.tp = 1;
  j.pp = pp;
  j.dp = 1;
  j.interleave = v;
  j.microbatch = 1;
  j.global_batch = m;
  return j;
}

// The job's own times (buckets, p2p bytes) with every chunk's forward 1 ms / v, backward 2 ms / v,
// no TP/EP and no optimizer time.
IterationTimes fixed_times(const Job& j) {
  auto backend = engine::make_backend("analytical", rail(32));
  IterationTimes t = iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  for (auto& s : t.ops)
    for (auto& o : s) {
      o = OpTimes{};
      o.fwd_compute = Time(1'000'000'000 / j.interleave);
      o.bwd_compute = Time(2'000'000'000 / j.interleave);
    }
  t.optimizer.assign(static_cast<size_t>(j.pp), Time());
  t.grad_norm_local.assign(static_cast<size_t>(j.pp), Time());  // the fixed costs out of the hand-derived times
  t.grad_norm_reduce = Time();
  t.loss_reduce = Time();
  return t;
}

TEST(Schedule, OneFOneBOrder) {
  // p = 4, m = 6. Stage 0: 3 warmup forwards, 3 (F, B) pairs, 3 cooldown backwards.
  const auto s0 = pipeline_order(4, 1, 6, 0);
  ASSERT_EQ(s0.size(), 12u);
  std::string got;
  auto add = [&](const auto& o) {  // (appended piecewise: GCC 12 misreports -Wrestrict on "a" + to_string())
    got += o.forward ? 'F' : 'B';
    got += std::to_string(o.microbatch);
    got += ' ';
  };
  for (const auto& o : s0) add(o);
  EXPECT_EQ(got, "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5 ");
  // The last stage alternates from the start.
  got.clear();
  for (const auto& o : pipeline_order(4, 1, 6, 3)) add(o);
  EXPECT_EQ(got, "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 ");
}

TEST(Schedule, InterleavedOrder) {
  // p = 2, v = 2, m = 4: stage 1 warmup = (2-1-1) 2 + (2-1) 2 = 2 forwards: chunk 0 mb 0, 1;
  // then F(c1 mb0) B(c1 mb0) ... (backward chunks run v-1-c).
  const auto s1 = pipeline_order(2, 2, 4, 1);
  ASSERT_EQ(s1.size(), 16u);
  EXPECT_TRUE(s1[0].forward && s1[0].chunk == 0 && s1[0].microbatch == 0);
  EXPECT_TRUE(s1[1].forward && s1[1].chunk == 0 && s1[1].microbatch == 1);
  EXPECT_TRUE(s1[2].forward && s1[2].chunk == 1 && s1[2].microbatch == 0);
  EXPECT_TRUE(!s1[3].forward && s1[3].chunk == 1 && s1[3].microbatch == 0);
  // Every (chunk, microbatch) appears once forward and once backward.
  std::set<std::tuple<bool, int, int>> seen;
  for (const auto& o : s1) seen.insert({o.forward, o.chunk, o.microbatch});
  EXPECT_EQ(seen.size(), 16u);
}

// Simulates the plan built from fixed times on the analytical engine.
std::pair<engine::RunReport, IterationPlan> run_fixed(const Job& j) {
  const auto& topo = rail(32);
  auto backend = engine::make_backend("analytical", topo);
  IterationPlan ip = build_iteration(j, identity(j.gpus()), topo, fixed_times(j), TrainOptions{});
  engine::RunReport r = backend->run(ip.plan);
  return {std::move(r), std::move(ip)};
}

// The fixed costs (training.hpp, "Fixed costs"), by hand. PP2, m = 4, F 1 ms and B 2 ms: without fixed costs
// stage 0's chain ends at E0, stage 1's at E1 < E0 (1F1B: stage 0 runs the last backward; 12 ms and 11 ms plus
// the p2p the network takes; here both 15.004 ms). Own-shard norms 0.3 ms (stage 0) and 0.1 ms (stage 1), the
// all-reduce 0.05 ms, optimizers 0.2 and 0.4 ms, the loss 0.07 ms once a step on the last stage. The all-reduce
// waits for both norms: B = max(E0 + 0.3, E1 + 0.1) = E0 + 0.3 ms; stage 0 ends at B + 0.25, stage 1 at
// B + 0.52 = T. Stage 0 holds the barrier (its norm ends last): it is the critical stage, with grad norm 0.35,
// optimizer 0.2 and no loss; stage 1's grad norm is 0.15 (its wait for stage 0's norm is bubble).
TEST(Training, FixedCostsByHand) {
  Job j = tiny(2, 4);
  IterationTimes t = fixed_times(j);
  Time end[2];
  {
    auto [run, ip] = run_fixed(j);
    for (int s = 0; s < 2; ++s)
      end[s] = run.transfers[static_cast<size_t>(ip.chain[static_cast<size_t>(s)].back())].finish;
  }
  ASSERT_GT(end[0].seconds() + 0.3e-3, end[1].seconds() + 0.1e-3);
  const double barrier = end[0].seconds() + 0.3e-3;
  t.grad_norm_local = {Time::from_seconds(0.3e-3), Time::from_seconds(0.1e-3)};
  t.grad_norm_reduce = Time::from_seconds(0.05e-3);
  t.optimizer = {Time::from_seconds(0.2e-3), Time::from_seconds(0.4e-3)};
  t.loss_reduce = Time::from_seconds(0.07e-3);
  auto backend = engine::make_backend("analytical", rail(32));
  const TrainResult r = simulate_iteration(j, identity(j.gpus()), rail(32), *backend, t, TrainOptions{});
  EXPECT_NEAR(r.iteration.seconds(), barrier + 0.52e-3, 1e-12);
  EXPECT_EQ(r.critical_stage, 0);
  EXPECT_NEAR(r.breakdown.grad_norm.seconds(), 0.35e-3, 1e-12);
  EXPECT_NEAR(r.breakdown.optimizer.seconds(), 0.2e-3, 1e-12);
  EXPECT_EQ(r.breakdown.loss.ps, 0);
  EXPECT_NEAR(r.stages[1].loss.seconds(), 0.07e-3, 1e-12);
  EXPECT_NEAR(r.stages[1].optimizer.seconds(), 0.4e-3, 1e-12);
  EXPECT_NEAR(r.stages[1].grad_norm.seconds(), 0.15e-3, 1e-12);
  for (const Breakdown& b : r.stages) EXPECT_EQ(b.total(), r.iteration);
  // Per microbatch: four loss all-reduces on stage 1, each after its forward: the loss is on the critical path of
  // the last stage's passes (stage 1 ends its passes 4 x 0.07 ms later; stage 0 waits for its backwards).
  j.loss_reduce = LossReduce::Microbatch;
  const TrainResult m = simulate_iteration(j, identity(j.gpus()), rail(32), *backend, t, TrainOptions{});
  EXPECT_NEAR(m.stages[1].loss.seconds(), 4 * 0.07e-3, 1e-12);
  EXPECT_GT(m.iteration, r.iteration);
  for (const Breakdown& b : m.stages) EXPECT_EQ(b.total(), m.iteration);
}

// The step overhead (training.hpp, "Fixed costs"), by hand: PP2, m = 4, F 1 ms, B 2 ms, no other fixed cost. Every
// stage waits 1.5 ms before its first pass, so every pass, p2p and gap moves by 1.5 ms: the iteration is exactly
// 1.5 ms longer, each stage's breakdown has a step term of 1.5 ms, and the other terms are as before.
TEST(Training, StepOverheadByHand) {
  Job j = tiny(2, 4);
  const IterationTimes t = fixed_times(j);
  auto backend = engine::make_backend("analytical", rail(32));
  const TrainResult base = simulate_iteration(j, identity(j.gpus()), rail(32), *backend, t, TrainOptions{});
  j.step_overhead = 1.5e-3;
  const TrainResult r = simulate_iteration(j, identity(j.gpus()), rail(32), *backend, t, TrainOptions{});
  EXPECT_EQ(r.iteration.ps, base.iteration.ps + 1'500'000'000);
  ASSERT_EQ(r.stages.size(), 2u);
  for (size_t s = 0; s < 2; ++s) {
    const Breakdown& b = r.stages[s];
    const Breakdown& b0 = base.stages[s];
    EXPECT_EQ(b.step.ps, 1'500'000'000);
    EXPECT_EQ(b0.step.ps, 0);
    EXPECT_EQ(b.compute, b0.compute);
    EXPECT_EQ(b.pp, b0.pp);
    EXPECT_EQ(b.bubble, b0.bubble);
    EXPECT_EQ(b.total(), r.iteration);
  }
  // The model's FLOPs are the same over a longer step.
  EXPECT_NEAR(r.mfu * r.iteration.seconds(), base.mfu * base.iteration.seconds(), 1e-12);
}

// The fixed costs' figures: the own-shard norm reads 4 bytes per parameter a GPU owns at HBM bandwidth (ZeRO-1
// over 4 replicas: a quarter of the stage); the all-reduces are NCCL's model times, above zero across servers.
TEST(Training, FixedCostTimes) {
  Job j = tiny(1, 16);
  j.dp = 4;
  j.zero = 1;
  auto backend = engine::make_backend("analytical", rail(32));
  const IterationTimes t = iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  const double owned = stage_params(j, 0).total() / 4.0;
  ASSERT_EQ(t.grad_norm_local.size(), 1u);
  EXPECT_NEAR(t.grad_norm_local[0].seconds(), owned * 4 / j.gpu.hbm_bandwidth, 1e-12);
  EXPECT_GT(t.grad_norm_reduce.ps, 0);
  EXPECT_GT(t.loss_reduce.ps, 0);
  j.loss_reduce = LossReduce::None;
  EXPECT_EQ(iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{}).loss_reduce.ps, 0);
}

TEST(Variability, NoneLeavesEveryStageAtTheModelsSpeed) {
  Job j = tiny(4, 8);
  j.dp = 8;  // 32 GPUs
  const StageSlowdowns off = stage_slowdowns(j, identity(j.gpus()));
  for (double f : off.factor) EXPECT_EQ(f, 1.0);  // exp(0) x (1 + 0): every GPU at 1
  // And the iteration is the one without the hook.
  auto backend = engine::make_backend("analytical", rail(32));
  const TrainResult a = simulate_training(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  j.jitter_cv = 1e-12;  // on, but too small to move a picosecond
  const TrainResult b = simulate_training(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  EXPECT_EQ(a.iteration, b.iteration);
}

TEST(Variability, AStageRunsAtItsSlowestGpuAndAGpuKeepsItsSpeedAcrossJobs) {
  Job j = tiny(2, 8);
  j.dp = 8;  // 16 GPUs, 8 per stage
  j.speed_cv = 0.02;
  j.seed = 7;
  const std::vector<int32_t> ranks = identity(j.gpus());
  const StageSlowdowns s = stage_slowdowns(j, ranks);
  ASSERT_EQ(s.factor.size(), 2u);
  // The slowest GPU's factor is the largest stage's; deterministic for the seed.
  EXPECT_EQ(s.slowest, std::max(s.factor[0], s.factor[1]));
  EXPECT_EQ(stage_slowdowns(j, ranks).factor, s.factor);
  // Persistent: the same fabric GPUs in another order give the same stage maxima when each stage keeps its GPUs.
  std::vector<int32_t> shuffled = ranks;
  std::reverse(shuffled.begin(), shuffled.begin() + 8);  // stage 0's GPUs among themselves
  EXPECT_EQ(stage_slowdowns(j, shuffled).factor, s.factor);
  // A job on GPUs 8-15 alone (one stage) sees stage 1's maximum.
  Job one = j;
  one.pp = 1;
  one.dp = 8;
  one.global_batch = 8;
  std::vector<int32_t> upper(8);
  std::iota(upper.begin(), upper.end(), 8);
  EXPECT_EQ(stage_slowdowns(one, upper).factor[0], s.factor[1]);
}

// Slow hosts (MegaScale: about 0.5 % of machines, forward passes about 10 % longer): every host slow gives every
// stage a forward factor of exactly 1.1 and a backward factor of 1 (no speed spread, no jitter); none slow, 1 and 1.
// The draw is one per server: a server's GPUs are slow together, and the same servers in every job.
TEST(Variability, ASlowHostSlowsItsGpusForwardPassesOnly) {
  Job j = tiny(2, 8);
  j.dp = 8;  // 16 GPUs: two 8-GPU servers, one a stage
  const std::vector<int32_t> ranks = identity(j.gpus());
  std::vector<int32_t> server(16);
  for (int32_t g = 0; g < 16; ++g) server[static_cast<size_t>(g)] = g / 8;
  j.slow_host_forward = 0.1;
  j.slow_host_share = 1;
  StageSlowdowns s = stage_slowdowns(j, ranks, server);
  EXPECT_EQ(s.forward, (std::vector<double>{1.1, 1.1}));
  EXPECT_EQ(s.factor, (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(s.slow_hosts, 2);
  EXPECT_EQ(s.job_hosts, 2);
  j.slow_host_share = 1e-9;
  s = stage_slowdowns(j, ranks, server);
  EXPECT_EQ(s.forward, (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(s.slow_hosts, 0);
  // Half the hosts of a 64-server fabric: whichever are slow, a stage is slow exactly when its server is, and a
  // job on the same servers in another order meets the same ones.
  j.slow_host_share = 0.5;
  j.seed = 3;
  std::vector<int32_t> wide(512);
  for (int32_t g = 0; g < 512; ++g) wide[static_cast<size_t>(g)] = g / 8;
  std::vector<int32_t> on(16);
  for (int32_t k = 0; k < 16; ++k) on[static_cast<size_t>(k)] = 8 * 40 + k;  // servers 40 and 41
  s = stage_slowdowns(j, on, wide);
  for (double f : s.forward) EXPECT_TRUE(f == 1.0 || f == 1.1) << f;
  std::vector<int32_t> swapped(16);
  for (int32_t k = 0; k < 16; ++k) swapped[static_cast<size_t>(k)] = on[static_cast<size_t>((k + 8) % 16)];
  const StageSlowdowns t = stage_slowdowns(j, swapped, wide);
  EXPECT_EQ(t.forward[0], s.forward[1]);
  EXPECT_EQ(t.forward[1], s.forward[0]);
  EXPECT_EQ(t.slow_hosts, s.slow_hosts);
}

// workload.step redraws the jitter alone: without jitter every step's stages are the same; with it a step
// k > 0 differs from step 0, and the same step again is the same draw.
TEST(Variability, AnotherStepRedrawsTheJitterAlone) {
  Job j = tiny(2, 8);
  j.dp = 8;
  j.speed_cv = 0.02;
  const std::vector<int32_t> ranks = identity(j.gpus());
  const StageSlowdowns s0 = stage_slowdowns(j, ranks);
  j.step = 5;
  EXPECT_EQ(stage_slowdowns(j, ranks).factor, s0.factor);  // persistent speeds only
  j.jitter_cv = 0.01;
  j.step = 0;
  const StageSlowdowns j0 = stage_slowdowns(j, ranks);
  j.step = 5;
  const StageSlowdowns j5 = stage_slowdowns(j, ranks);
  EXPECT_NE(j5.factor, j0.factor);
  EXPECT_EQ(stage_slowdowns(j, ranks).factor, j5.factor);
}

TEST(Variability, TheSlowestOfNGrowsAsTheMaximumOfNormals) {
  // E[max of n standard normals]: 1.42 for n = 8, 3.25 for n = 1,024 (numeric integration). With the speed
  // spread alone (lognormal, sigma = sqrt(ln(1 + cv^2)) ~ cv for small cv) a stage of n GPUs runs at about
  // exp(cv E[max]); averaged over 40 seeds the mean sits within 0.3 % of it.
  for (const auto& [dp, expected_max] : {std::pair{8, 1.42}, std::pair{1024, 3.25}}) {
    Job j = tiny(1, dp);
    j.dp = dp;
    j.speed_cv = 0.01;
    double mean = 0;
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      j.seed = seed;
      mean += stage_slowdowns(j, identity(j.gpus())).factor[0] / 40;
    }
    EXPECT_NEAR(mean, std::exp(0.01 * expected_max), 0.003) << dp << " GPUs";
  }
}

TEST(Variability, TheSlowdownStretchesComputeOnly) {
  Job j = tiny(1, 4);
  j.speed_cv = 0.05;
  j.seed = 3;
  auto backend = engine::make_backend("analytical", rail(32));
  const TrainResult off = [&] {
    Job k = j;
    k.speed_cv = 0;
    return simulate_training(k, identity(k.gpus()), rail(32), *backend, TrainOptions{});
  }();
  const TrainResult on = simulate_training(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  const double f = on.variability.factor.at(0);
  // One GPU, one stage: its 4 forward and backward passes take f times as long; nothing else moves (the
  // optimizer step, also in the compute breakdown, keeps its time).
  const OpTimes& pass = off.times.ops.at(0).at(0);
  const double passes = 4 * (pass.fwd_compute + pass.bwd_compute).seconds();
  EXPECT_NEAR(on.variability_added.seconds(), passes * (f - 1), 1e-12 * 8);
  EXPECT_NEAR((on.breakdown.compute - off.breakdown.compute).seconds(), passes * (f - 1), 1e-12 * 8);
  EXPECT_NEAR((on.iteration - off.iteration).seconds(), passes * (f - 1), 1e-12 * 8);
}

TEST(Training, OneFOneBBubbleIsPMinusOneOverM) {
  // p = 4, m = 8, t_f = 1 ms, t_b = 2 ms: T = (m + p - 1)(t_f + t_b) = 11 x 3 = 33 ms plus the p2p
  // latencies on the fill/drain path (2 (p-1) hops of ~1 KB over NVLink, ~2 us each: < 0.1 ms).
  // Each stage computes m (t_f + t_b) = 24 ms, so bubble / compute = (p-1)/m = 3/8.
  const Job j = tiny(4, 8);
  auto [run, ip] = run_fixed(j);
  EXPECT_NEAR(run.makespan.seconds(), 33e-3, 0.1e-3);
  const auto stages = stage_breakdowns(ip, run);
  ASSERT_EQ(stages.size(), 4u);
  for (const auto& b : stages) {
    EXPECT_EQ(b.total(), run.makespan);
    EXPECT_NEAR(b.compute.seconds(), 24e-3, 1e-9);
    EXPECT_NEAR((b.bubble + b.pp).seconds() / b.compute.seconds(), 3.0 / 8.0, 0.005);
    EXPECT_EQ(b.dp, Time());
    EXPECT_EQ(b.tp, Time());
  }
}

TEST(Training, InterleavedBubbleIsDividedByV) {
  // v = 2 chunks of half the layers: ideal T = m (t_f + t_b) + (p-1)(t_f + t_b)/v = 24 + 4.5 = 28.5 ms.
  // Megatron's interleaved schedule reaches this when m is a multiple of p; allow 2 % for the p2p latencies
  // (v times as many as 1F1B).
  const Job j = tiny(4, 8, 2);
  auto [run, ip] = run_fixed(j);
  EXPECT_NEAR(run.makespan.seconds(), 28.5e-3, 0.02 * 28.5e-3);
  EXPECT_LT(run.makespan.seconds(), 33e-3);
}

TEST(Training, PlanHasEveryDpGroupAndEveryReplicasP2p) {
  // TP2 PP2 DP4 on 16 GPUs, 4 microbatches per pipeline: DP groups t p = 4, each reduced in K buckets;
  // p2p: (p-1) boundaries x m x 2 directions = 1 x 4 x 2 = 8 Coupled transfers, each holding every
  // replica's t edges: d t = 4 x 2 = 8 edges (rank = tp + 2 (dp + 4 pp): stage 0 is GPUs 0..7, stage 1 8..15,
  // so the forward edges are g -> g + 8 for g = 0..7 and the backward ones g + 8 -> g).
  Job j = tiny(2, 16);
  j.tp = 2;
  j.dp = 4;
  j.bucket_params = 10'000;  // a stage holds ~26k-34k parameters per GPU -> 3 or 4 buckets
  const auto& topo = rail(32);
  IterationPlan ip = build_iteration(j, identity(16), topo, fixed_times(j), TrainOptions{});
  EXPECT_EQ(ip.p2p_transfers, 8);
  int64_t coupled = 0, rings = 0;
  std::set<std::vector<int32_t>> ring_groups;
  for (const auto& t : ip.plan.transfers) {
    if (t.kind == plan::TransferKind::Coupled) {
      ++coupled;
      ASSERT_EQ(t.edges.size(), 8u);
      std::set<std::pair<int32_t, int32_t>> want, got(t.edges.begin(), t.edges.end());
      const bool fwd = t.edges.front().first < 8;
      for (int32_t g = 0; g < 8; ++g) want.insert(fwd ? std::make_pair(g, g + 8) : std::make_pair(g + 8, g));
      EXPECT_EQ(got, want) << t.label;
    }
    if (t.kind == plan::TransferKind::Ring) {
      ++rings;
      auto r = t.ranks;
      std::sort(r.begin(), r.end());
      ring_groups.insert(r);
    }
  }
  EXPECT_EQ(coupled, 8);
  EXPECT_EQ(ring_groups.size(), 4u);  // all four DP groups: {0,2,4,6}, {1,3,5,7}, {8,..}, {9,..}
  EXPECT_TRUE(ring_groups.count({0, 2, 4, 6}));
  EXPECT_TRUE(ring_groups.count({9, 11, 13, 15}));
  EXPECT_EQ(rings, ip.dp_collectives);  // one ring per collective (1 channel)
  EXPECT_GE(ip.dp_buckets, 3);
}

TEST(Training, RepeatedListsAreSharedNotCopied) {
  // The job above: each stage boundary's 4 transfers in one direction (one per microbatch) hold the same 8 edges,
  // one list shared by all 4 (core/shared_vector.hpp). The plan's weight counts each list once: 2 x 8 = 16 p2p
  // hops, where the transfers list 8 x 8 = 64; the DP rings' rank lists count once per distinct list too.
  Job j = tiny(2, 16);
  j.tp = 2;
  j.dp = 4;
  j.bucket_params = 10'000;
  const auto& topo = rail(32);
  const IterationPlan ip = build_iteration(j, identity(16), topo, fixed_times(j), TrainOptions{});
  std::map<const void*, int> users;
  std::map<const void*, int64_t> ring_lists;
  int64_t listed = 0;
  for (const auto& t : ip.plan.transfers) {
    if (t.kind == plan::TransferKind::Coupled) {
      ++users[t.edges.storage()];
      listed += static_cast<int64_t>(t.edges.size());
    }
    if (t.kind == plan::TransferKind::Ring) ring_lists[t.ranks.storage()] = static_cast<int64_t>(t.ranks.size());
  }
  EXPECT_EQ(listed, 64);
  ASSERT_EQ(users.size(), 2u);  // forward and backward
  for (const auto& [list, n] : users) EXPECT_EQ(n, 4);
  int64_t ring_hops = 0;
  for (const auto& [list, n] : ring_lists) ring_hops += n;
  EXPECT_LT(static_cast<int64_t>(ring_lists.size()), ip.dp_collectives);  // buckets of one size share a list
  EXPECT_EQ(plan::weight_of(ip.plan).hops, 16 + ring_hops);
}

TEST(Training, PipelineP2pAcrossServersRunsOnNcclsNetworkChannels) {
  // PP16 with one GPU a server (GPU 0 of 16 servers of rail(128)), a p2p message of b s h x 2 B = 1 x 4,096 x
  // 4,096 x 2 = 32 MiB, plain 1F1B (Megatron batches the sends: pp_p2p_comm auto = group). Under NCCL's model every
  // stage boundary's send is an operation of the pipeline group's communicator (16 ranks on 16 servers, 4 channels: the
  // ring search's 2 doubled), which runs it on nccl_p2p_net_channels(32 MiB, 16, 4, 50) = 2 channels
  // (collective/pairwise.hpp): at most 2 x 13.13 GB/s = 210.08e9 bits/s, below the NIC's 49.02 GB/s. Without the model
  // (a bare TrainOptions): no limit.
  Job j = tiny(16, 16);
  j.model.hidden = 4096;
  j.model.ffn = 16384;
  j.model.heads = 32;
  j.model.kv_heads = 32;
  j.model.seq = 4096;
  j.model.layers = 16;
  std::vector<int32_t> gpus;
  for (int32_t s = 0; s < 16; ++s) gpus.push_back(8 * s);
  const auto& topo = rail(128);
  IterationTimes times = fixed_times(j);
  ASSERT_EQ(times.pp_p2p_bytes, Bytes{32} << 20);
  TrainOptions o;
  o.collective.tuner = true;
  ASSERT_EQ(collective::execution_channels(collective::comm_shape(gpus, topo, o.collective.arch)), 4);
  // The rate limit of every pipeline p2p transfer of a plan.
  const auto pp_limits = [](const IterationPlan& ip) {
    std::vector<double> v;
    for (size_t k = 0; k < ip.plan.transfers.size(); ++k)
      if (ip.category[k] == Category::Pp) v.push_back(ip.plan.transfers[k].max_rate_bps);
    return v;
  };
  const std::vector<double> group = pp_limits(build_iteration(j, gpus, topo, times, o));
  EXPECT_EQ(group.size(), 15u * 16 * 2);  // (p - 1) boundaries x m x 2 directions
  for (double r : group) EXPECT_NEAR(r, 210.08e9, 1);
  for (double r : pp_limits(build_iteration(j, gpus, topo, times, TrainOptions{}))) EXPECT_EQ(r, 0.0);
  // Unbatched sends (pp_p2p_comm = pair, Megatron's default when interleaved): each on a two-rank communicator of
  // 2 servers (4 channels), nccl_p2p_net_channels(32 MiB, 2, 4, 50) = 4: 4 x 13.13 = 52.52 GB/s, above the NIC's
  // 49.02: no limit.
  j.pp_p2p_comm = P2pComm::Pair;
  const std::vector<double> pair = pp_limits(build_iteration(j, gpus, topo, times, o));
  EXPECT_EQ(pair.size(), 15u * 16 * 2);
  for (double r : pair) EXPECT_EQ(r, 0.0);
  // Auto follows Megatron: group without interleaving (above), pair with it.
  j.pp_p2p_comm = P2pComm::Auto;
  EXPECT_FALSE(j.pp_p2p_pairwise());
  j.interleave = 2;
  EXPECT_TRUE(j.pp_p2p_pairwise());
}

TEST(Training, PatDataParallelStepsAreOneTransferEach) {
  // DP16 with one GPU a server (GPU 0 of 16 servers of rail(128)), TP1 PP1, gradient buckets of ~10k
  // parameters (~40 KB in FP32 gradients: NCCL's tuner takes PAT for such a small reduce-scatter over one GPU a
  // server, as nccl/tuner_test's PatPlanAndModel), 4 channels. Each of its log2 16 = 4 steps is one Coupled
  // transfer of the 4 channels' lanes of 16 positions' sends (collective/pat.hpp, Options::coupled_steps): 4 a
  // collective, where one transfer per position would be 16 x 4 x 4 = 256.
  Job j = tiny(1, 4);
  j.dp = 16;
  j.global_batch = 4 * 16;  // 4 microbatches a replica
  j.zero = 1;
  j.bucket_params = 10'000;
  std::vector<int32_t> gpus;
  for (int32_t s = 0; s < 16; ++s) gpus.push_back(8 * s);
  const auto& topo = rail(128);
  TrainOptions o;
  o.collective.tuner = true;
  o.collective.channels = 4;
  const IterationPlan ip = build_iteration(j, gpus, topo, fixed_times(j), o);
  ASSERT_GT(ip.dp_collectives, 1);
  int64_t steps = 0, other = 0;
  for (size_t k = 0; k < ip.plan.transfers.size(); ++k) {
    if (ip.category[k] != Category::Dp) continue;
    const plan::Transfer& t = ip.plan.transfers[k];
    if (t.kind == plan::TransferKind::Compute) continue;  // NCCL's latency term
    if (t.kind != plan::TransferKind::Coupled || t.label.find("/pat/d") == std::string::npos) {
      ++other;
      continue;
    }
    ++steps;
    EXPECT_EQ(t.edges.size(), 4u * 16) << t.label;
    EXPECT_EQ(t.lanes, 4) << t.label;
    EXPECT_EQ(t.ranks, gpus) << t.label;
  }
  EXPECT_EQ(other, 0);
  EXPECT_EQ(steps, ip.dp_collectives * 4);
  // The engines time it: an iteration of 1 + 2 ms of compute a microbatch, 4 microbatches, then the last bucket's
  // reduce-scatters that queue behind the last backward (one chain per group) exposed, and the first bucket's
  // all-gather. Each is latency-bound: NCCL's PAT latency over 16 ranks is 8 + log2(16) x 14/3.5 + 16 x 2.8 =
  // 68.8 us (plus launch), ~40 KB move in about a microsecond, so at most 150 us each. The 16 GPUs hang off one
  // rail leaf, nothing collides: the flow and analytical engines agree on the whole iteration.
  const double flow = engine::make_backend("flow", topo)->run(ip.plan).makespan.seconds();
  const double analytical = engine::make_backend("analytical", topo)->run(ip.plan).makespan.seconds();
  EXPECT_GT(flow, 12e-3 + 68.8e-6);
  EXPECT_LT(flow, 12e-3 + static_cast<double>(ip.dp_collectives) * 150e-6);
  EXPECT_NEAR(analytical, flow, 1e-3 * flow);
}

TEST(Training, SimulateSmallJobEndToEnd) {
  // GPT-3-shaped tiny job on 32 GPUs with the flow engine: breakdown adds up, DP is exposed only at the end.
  Job j = tiny(2, 8);
  j.tp = 2;
  j.dp = 8;
  j.model.hidden = 1024;
  j.model.heads = 16;
  j.model.kv_heads = 16;
  j.model.ffn = 4096;
  j.model.seq = 1024;
  const auto& topo = rail(32);
  auto backend = engine::make_backend("flow", topo);
  const TrainResult r = simulate_training(j, identity(32), topo, *backend, TrainOptions{});
  EXPECT_GT(r.iteration, Time());
  EXPECT_EQ(r.breakdown.total(), r.iteration);
  EXPECT_GT(r.breakdown.tp, Time());
  EXPECT_GT(r.breakdown.compute, Time());
  EXPECT_GT(r.mfu, 0.0);
  EXPECT_LT(r.mfu, j.compute_efficiency);
  EXPECT_GT(r.hfu, r.mfu);  // recompute
  EXPECT_NEAR(r.tokens_per_second, 8.0 * 1024 / r.iteration.seconds(), 1e-6);
  EXPECT_EQ(r.groups.dp_groups, 4);
}

TEST(Training, ZeroStagesAddTheirCollectives) {
  // z0 = ZeRO-0's all-reduces (one per bucket per group, after the last microbatch). With m = 16 / 4 = 4
  // microbatches per replica: ZeRO-1 reduce-scatters once and gathers after the optimizer, 2 z0. ZeRO-2 keeps the
  // gradients sharded, so every microbatch's backward reduce-scatters: 4 z0, + the gathers: 5 z0. ZeRO-3 also
  // gathers a chunk's parameters before each of its 2 m passes: 4 z0 + 8 z0 = 12 z0 (before 2026-11 ZeRO-2 had
  // ZeRO-1's 2 z0 and ZeRO-3 3 z0, whatever m).
  Job j = tiny(2, 16);
  j.tp = 1;
  j.dp = 4;
  ASSERT_EQ(j.microbatches(), 4);
  const auto& topo = rail(32);
  auto count = [&](int zero) {
    j.zero = zero;
    return build_iteration(j, identity(8), topo, fixed_times(j), TrainOptions{}).dp_collectives;
  };
  const int64_t z0 = count(0);
  EXPECT_EQ(count(1), 2 * z0);
  EXPECT_EQ(count(2), 5 * z0);
  EXPECT_EQ(count(3), 12 * z0);
  auto backend = engine::make_backend("analytical", topo);
  Time it[4];
  for (int zero : {0, 1, 2, 3}) {
    j.zero = zero;
    const TrainResult r = simulate_training(j, identity(8), topo, *backend, TrainOptions{});
    EXPECT_EQ(r.breakdown.total(), r.iteration) << zero;
    it[zero] = r.iteration;
  }
  // More communication is never faster: ZeRO-2 and 3 take at least ZeRO-1's time.
  EXPECT_GE(it[2], it[1]);
  EXPECT_GE(it[3], it[2]);
}

TEST(Training, ZeroGathersTheParametersAtTheirOwnBytes) {
  // fp32 gradients (bytes_per_grad 4), bf16 parameters (2): ZeRO-1 reduce-scatters 4 bytes an element and
  // all-gathers 2 (Megatron's distributed optimizer gathers the bf16 parameters). A bucket of N elements: 4N and
  // 2N. Per GPU per iteration, (d-1)/d x P x (4 + 2) over ZeRO-0's (d-1)/d x P x 2 x 4.
  Job j = tiny(2, 16);
  j.tp = 1;
  j.dp = 4;
  j.zero = 1;
  j.bytes_per_grad = 4;
  const IterationTimes t = fixed_times(j);
  const GradBucket& b = t.buckets[0][0][0];
  EXPECT_EQ(b.op, collective::Op::ReduceScatter);
  EXPECT_EQ(b.bytes, 2 * b.gather_bytes());
  // The plan's all-gathers move what they move with bf16 gradients; its reduce-scatters twice that.
  const auto moved = [&](const char* prefix) {
    Bytes sum = 0;
    for (const auto& tr : build_iteration(j, identity(8), rail(32), fixed_times(j), TrainOptions{}).plan.transfers)
      if (tr.label.find(prefix) != std::string::npos) sum += tr.bytes;
    return sum;
  };
  const Bytes ag4 = moved("allgather"), rs4 = moved("rs/");
  j.bytes_per_grad = 2;
  EXPECT_GT(ag4, 0);
  EXPECT_EQ(moved("allgather"), ag4);
  EXPECT_NEAR(static_cast<double>(rs4) / static_cast<double>(moved("rs/")), 2.0, 0.01);
  j.bytes_per_grad = 4;
  const double one = volumes(j).dp_bytes_per_gpu;
  j.zero = 0;
  EXPECT_NEAR(one / volumes(j).dp_bytes_per_gpu, 6.0 / 8.0, 1e-12);
}

}  // namespace
}  // namespace podnet::workload

namespace podnet::workload {
namespace {

TEST(Training, Gpt3On1024A100TakesAbout34Days) {
  // Narayanan et al. SC'21: GPT-3 175B on 1,024 A100 (TP8 PP8 DP16, B = 1536, so
  // m = 96 microbatches and a (p-1)/m = 7.3 % bubble) reached 140 TFLOP/s per GPU (45 % of 312) and 34 days
  // for 300B tokens. Here: A100 at 50 % kernel efficiency (156 TFLOP/s while computing), NVLink 300 GB/s,
  // 8 x 200G NICs per server (DGX A100 / Selene), analytical engine. The bubble (7.3 %), the TP all-reduces
  // (~10 %) and the exposed DP tail bring the achieved rate to ~125-140 TFLOP/s, so 34-38 days; accept
  // 30-40 days and 120-156 TFLOP/s.
  topology::Hardware hw = topology::default_hardware();
  hw.nvlink_bw = Bandwidth(300e9 * 8);
  hw.nic_speed = Bandwidth(200e9);
  const topology::Topology t = topology::build_with("rail_clos", {{"gpus", "1024"}}, hw);
  Job j;
  j.model = *find_model("gpt3-175b");
  j.gpu = *find_gpu("a100");
  j.tp = 8;
  j.pp = 8;
  j.dp = 16;
  j.global_batch = 1536;
  j.tokens = 300e9;
  j.compute_efficiency = 0.5;
  auto backend = engine::make_backend("analytical", t);
  const TrainResult r = simulate_training(j, identity(1024), t, *backend, TrainOptions{});
  EXPECT_GT(r.days_to_train, 30.0);
  EXPECT_LT(r.days_to_train, 40.0);
  EXPECT_GT(r.tflops_per_gpu, 120.0);
  EXPECT_LT(r.tflops_per_gpu, 156.0);
  EXPECT_NEAR(r.ideal_bubble_fraction, 7.0 / 96.0, 1e-12);
  std::printf("  iteration %.2f s, %.1f TFLOP/s per GPU, MFU %.1f %%, %.1f days\n", r.iteration.seconds(),
              r.tflops_per_gpu, 100 * r.mfu, r.days_to_train);
}

TEST(Training, UnevenStagesAndSelectiveRecomputeInPassTimes) {
  // tiny(): 8 layers; split [3, 5] on 2 stages. A layer's forward per token: 2 (12 h^2) + 4 s h = 98,304 + 2,048
  // = 100,352 FLOPs (h 64, s 8); the head 2 h V = 16,384. One microbatch of s = 8 tokens at 989e12 x e:
  // stage 0 forward 8 x 3 x 100,352 = 2,408,448 FLOPs; stage 1 8 x (5 x 100,352 + 16,384) = 4,145,152.
  Job j = tiny(2, 4);
  j.chunk_layers = {3, 5};
  j.recompute = Recompute::Selective;
  const double rate = j.gpu.peak_flops * j.compute_efficiency;
  auto backend = engine::make_backend("analytical", rail(32));
  const IterationTimes t = iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  EXPECT_NEAR(t.ops[0][0].fwd_compute.seconds(), 2408448.0 / rate, 1e-12);
  EXPECT_NEAR(t.ops[1][0].fwd_compute.seconds(), 4145152.0 / rate, 1e-12);
  // Selective recompute: backward = 2 x forward + the attention core again, 4 s h = 2,048 FLOPs per token per
  // layer: stage 0 2 x 2,408,448 + 8 x 3 x 2,048 = 4,866,048.
  EXPECT_NEAR(t.ops[0][0].bwd_compute.seconds(), 4866048.0 / rate, 1e-12);
  // The simulated iteration runs and reports layers per stage through the job.
  const TrainResult r = simulate_training(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  EXPECT_EQ(r.job.stage_layers(0), 3);
  EXPECT_EQ(r.job.stage_layers(1), 5);
  EXPECT_GT(r.iteration.ps, 0);
}

// A Llama-shaped layer: h 1024, a 8, g 2 (h_kv 256), SwiGLU f 4096, s 2048, vocabulary 1000, one layer per
// stage on TP2 x PP2 with SP and selective recompute, on a GPU of peak 1e15 FLOP/s.
Job llama_layer_job() {
  Job j = tiny(2, 2);
  j.model = *find_model("llama3-8b");
  j.model.layers = 2;
  j.model.hidden = 1024;
  j.model.heads = 8;
  j.model.kv_heads = 2;
  j.model.ffn = 4096;
  j.model.seq = 2048;
  j.model.vocab = 1000;
  j.tp = 2;
  j.sequence_parallel = true;
  j.recompute = Recompute::Selective;
  j.gpu.peak_flops = 1e15;
  return j;
}

// llama_layer_job() with its kernels priced apart: GEMMs at 0.5, attention at 0.25, element-wise at HBM 2e12 B/s.
Job priced_layer_job() {
  Job j = llama_layer_job();
  j.gpu.hbm_bandwidth = 2e12;
  j.compute_efficiency = 0.5;
  j.attention_efficiency = 0.25;
  j.memory_bound_ops = true;
  return j;
}

TEST(Training, ComputeModelPricesGemmsAttentionAndElementwiseApart) {
  // A Llama-shaped layer: h 1024, a 8, g 2 (h_kv 256), SwiGLU f 4096, s 2048, no dropout, rotary; TP2 with SP,
  // one layer per stage, on a GPU of peak 1e15 FLOP/s, GEMMs at 0.5, attention at 0.25, HBM 2e12 B/s, e = 2.
  Job j = priced_layer_job();
  // Element-wise elements per token: norms 2 x 2h + residual adds 2 x 3h = 10h = 10,240 on the hidden width;
  // SwiGLU 3f = 12,288 + rotary 2 (h + h_kv) = 2,560 -> 14,848 TP-split.
  const ModelSpec::Elementwise ew = j.model.elementwise_elements_per_token();
  EXPECT_DOUBLE_EQ(ew.replicated, 10240.0);
  EXPECT_DOUBLE_EQ(ew.split, 14848.0);
  // Per token per layer on one GPU: GEMMs 2 (2h^2 + 2h h_kv + 3hf) / t = 2 (2,097,152 + 524,288 + 12,582,912) / 2
  // = 15,204,352 FLOPs at 0.5e15 = 30.408704 ns; the attention core's causal half 4sh / 2 / t = 2,097,152 FLOPs at
  // 0.25e15 = 8.388608 ns; element-wise (10,240 / 2 + 14,848 / 2) x 2 B = 25,088 B at 2e12 = 12.544 ns.
  // Sum 51.341312 ns; one microbatch of 2,048 tokens: 105.146 us (stage 0: one layer, no logits).
  auto backend = engine::make_backend("analytical", rail(32));
  const IterationTimes t = iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  const double layer_ns = 30.408704 + 8.388608 + 12.544;
  EXPECT_NEAR(t.ops[0][0].fwd_compute.seconds(), 2048 * layer_ns * 1e-9, 1e-12);
  // Backward: 2 x forward + the attention core again (selective recompute): 2 x 51.341312 + 8.388608 ns.
  EXPECT_NEAR(t.ops[0][0].bwd_compute.seconds(), 2048 * (2 * layer_ns + 8.388608) * 1e-9, 1e-12);
  // The last stage adds the logits' GEMM, 2 h V / t = 1,024,000 FLOPs per token at 0.5e15 = 2.048 ns.
  EXPECT_NEAR(t.ops[1][0].fwd_compute.seconds(), 2048 * (layer_ns + 2.048) * 1e-9, 1e-12);
  // With the attention efficiency unset and no element-wise kernels, the layer is FLOPs / (peak x 0.5): the core
  // counted whole, (15,204,352 + 4sh / t = 4,194,304) / 0.5e15 = 38.797312 ns.
  j.attention_efficiency = 0;
  j.memory_bound_ops = false;
  const IterationTimes u = iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  EXPECT_NEAR(u.ops[0][0].fwd_compute.seconds(), 2048 * 38.797312e-9, 1e-12);
}

TEST(Training, Fp8RunsTheLayerGemmsAtTheFp8RateAndPaysItsCasts) {
  // The layer of ComputeModelPricesGemmsAttentionAndElementwiseApart (h 1024, h_kv 256, SwiGLU f 4096, TP2 with
  // SP, HBM 2e12 B/s) in FP8 on a GPU of FP8 peak 2e15 FLOP/s at fp8_efficiency 0.4: its GEMMs' 15,204,352 FLOPs
  // per token at 0.8e15 = 19.00544 ns (30.408704 in BF16); the attention core (8.388608 ns) and the
  // element-wise kernels (12.544 ns) as in BF16.
  Job j = priced_layer_job();
  j.precision = Precision::Fp8;
  j.gpu.fp8_peak_flops = 2e15;
  j.fp8_efficiency = 0.4;
  // Casts per token: forward the projection's input h and the second MLP GEMM's f, TP-split: 1,024 + 4,096 =
  // 5,120; backward the projection's and second MLP GEMM's output gradients 2h = 2,048 on the hidden width, the
  // QKV GEMM's h + 2 h_kv = 1,536 and the first MLP GEMM's 2f = 8,192, TP-split: 9,728.
  const ModelSpec::Fp8Casts c = j.model.fp8_cast_elements_per_token();
  EXPECT_DOUBLE_EQ(c.forward.replicated, 0.0);
  EXPECT_DOUBLE_EQ(c.forward.split, 5120.0);
  EXPECT_DOUBLE_EQ(c.backward.replicated, 2048.0);
  EXPECT_DOUBLE_EQ(c.backward.split, 9728.0);
  // At 4 B an element: forward 5,120 / 2 x 4 = 10,240 B at 2e12 = 5.12 ns; backward (2,048 / 2 + 9,728 / 2) x 4 =
  // 23,552 B = 11.776 ns.
  auto backend = engine::make_backend("analytical", rail(32));
  const IterationTimes t = iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  const double kernels_ns = 19.00544 + 8.388608 + 12.544;  // 39.938048
  EXPECT_NEAR(t.ops[0][0].fwd_compute.seconds(), 2048 * (kernels_ns + 5.12) * 1e-9, 1e-12);
  // Backward: 2 x the forward's kernels, the selective recompute's core again, and its own casts.
  EXPECT_NEAR(t.ops[0][0].bwd_compute.seconds(), 2048 * (2 * kernels_ns + 8.388608 + 11.776) * 1e-9, 1e-12);
  // The LM head stays at the BF16 GEMM rate: + 2.048 ns on the last stage's forward.
  EXPECT_NEAR(t.ops[1][0].fwd_compute.seconds(), 2048 * (kernels_ns + 5.12 + 2.048) * 1e-9, 1e-12);
  // Full recompute: the forward's kernels and casts again in the backward: 3 x 39.938048 + 11.776 + 5.12.
  j.recompute = Recompute::Full;
  const IterationTimes f = iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  EXPECT_NEAR(f.ops[0][0].bwd_compute.seconds(), 2048 * (3 * kernels_ns + 11.776 + 5.12) * 1e-9, 1e-12);
  // Without the element-wise kernels timed, no casts either: the forward is 19.00544 + 8.388608 ns a token.
  j.recompute = Recompute::Selective;
  j.memory_bound_ops = false;
  const IterationTimes g = iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  EXPECT_NEAR(g.ops[0][0].fwd_compute.seconds(), 2048 * (19.00544 + 8.388608) * 1e-9, 1e-12);
}

TEST(Training, SustainedFractionLayerOverheadAndUnfusedAttention) {
  // The layer of ComputeModelPricesGemmsAttentionAndElementwiseApart: 51.341312 ns per token forward (GEMMs
  // 30.408704, attention core 8.388608, element-wise 12.544), 2,048 tokens, one layer per stage.
  Job j = priced_layer_job();
  // A step sustaining 0.8 of the kernels, plus 10 us per layer pass: forward 2,048 x 51.341312 ns / 0.8 + 10 us
  // = 131.433759 + 10 us; backward twice that plus the selective recompute's core again, 2,048 x 8.388608 ns / 0.8
  // (no overhead: not a layer pass).
  j.sustained_fraction = 0.8;
  j.layer_overhead = 10e-6;
  auto backend = engine::make_backend("analytical", rail(32));
  const IterationTimes t = iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  const double fwd = 2048 * 51.341312e-9 / 0.8 + 10e-6;
  EXPECT_NEAR(t.ops[0][0].fwd_compute.seconds(), fwd, 1e-12);
  EXPECT_NEAR(t.ops[0][0].bwd_compute.seconds(), 2 * fwd + 2048 * 8.388608e-9 / 0.8, 1e-12);
  // Full recompute: the whole forward again, overhead included: 3 x fwd.
  j.recompute = Recompute::Full;
  const IterationTimes full = iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  EXPECT_NEAR(full.ops[0][0].bwd_compute.seconds(), 3 * fwd, 1e-12);
  // Unfused attention (no FlashAttention), kernels alone again: the core's counted 4 s h / t = 4,194,304 FLOPs at
  // the GEMM rate 0.5e15 = 8.388608 ns, plus its scores through HBM: a / t x s = 4 x 2,048 = 8,192 scores per
  // token, no dropout: written by the QK^T GEMM, read and written by the softmax, read by the PV GEMM = 4
  // elements of 2 B = 8 B each, 65,536 B at 2e12 = 32.768 ns. Layer: 30.408704 + 41.156608 + 12.544 = 84.109312.
  j.recompute = Recompute::Selective;
  j.sustained_fraction = 1;
  j.layer_overhead = 0;
  j.flash_attention = false;
  const IterationTimes u = iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  EXPECT_NEAR(u.ops[0][0].fwd_compute.seconds(), 2048 * 84.109312e-9, 1e-12);
  // With dropout the softmax output is also read and written by the dropout, which writes a 1-byte mask:
  // 6.5 elements = 13 B per score, 106,496 B at 2e12 = 53.248 ns.
  j.model.dropout = true;
  const double ew_dropout = 2.0 * 2.5 * 1024 / 2 * 2 / 2e12 * 1e9;  // dropout's 2 x 2.5 h on the SP-split width
  const IterationTimes v = iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  EXPECT_NEAR(v.ops[0][0].fwd_compute.seconds(), 2048 * (30.408704 + 8.388608 + 53.248 + 12.544 + ew_dropout) * 1e-9,
              1e-12);
}

TEST(Training, OverlapParamGatherExposesOnlyTheFirstBucketsGather) {
  // ZeRO-1 on tiny(2, 16), DP 4, buckets of 1,000 parameters: without the overlap every bucket's parameter
  // all-gather follows the optimizer step (as many all-gathers as reduce-scatters); with it only the bucket the
  // next forward needs first, one per DP group, and the iteration is shorter by the other buckets' gathers.
  Job j = tiny(2, 16);
  j.dp = 4;
  j.zero = 1;
  j.bucket_params = 1000;
  const auto& topo = rail(32);
  auto backend = engine::make_backend("analytical", topo);
  int64_t collectives[2] = {0, 0};
  Time iteration[2];
  for (bool overlap : {false, true}) {
    j.overlap_param_gather = overlap;
    const IterationPlan ip = build_iteration(j, identity(8), topo, fixed_times(j), TrainOptions{});
    collectives[overlap] = ip.dp_collectives;
    iteration[overlap] = simulate_training(j, identity(8), topo, *backend, TrainOptions{}).iteration;
  }
  j.zero = 0;
  const int64_t reductions = build_iteration(j, identity(8), topo, fixed_times(j), TrainOptions{}).dp_collectives;
  ASSERT_GT(reductions, 2);  // 2 stages x 1 DP group x more than one bucket
  EXPECT_EQ(collectives[0], 2 * reductions);
  EXPECT_EQ(collectives[1], reductions + 2);  // + one gather per stage's DP group
  EXPECT_LT(iteration[1], iteration[0]);
}

TEST(Training, WithoutOverlapGradReduceTheReductionFollowsTheLastPass) {
  // One stage (PP1), m = 4 microbatches of fixed 1 ms forward + 2 ms backward: the compute chain ends at
  // 4 x 3 = 12 ms. ZeRO-0, DP 4, buckets of 1,000 parameters: several all-reduces per DP group. With
  // overlap_grad_reduce (the default) the first bucket's all-reduce starts inside the last backward (before
  // 12 ms); without it every all-reduce starts at or after 12 ms, they run one after another on the group's
  // stream, and the iteration ends when the last has (the optimizer takes 0 here): exposed DP = T - 12 ms.
  Job j = tiny(1, 16);
  j.dp = 4;  // 16 / 4 = 4 microbatches per replica
  j.zero = 0;
  j.bucket_params = 1000;
  Time iteration[2];
  for (bool overlap : {true, false}) {
    j.overlap_grad_reduce = overlap;
    auto [run, ip] = run_fixed(j);
    ASSERT_GT(ip.dp_collectives, 2);
    Time first_dp = Time::max(), last_compute;
    for (size_t k = 0; k < ip.plan.transfers.size(); ++k) {
      const plan::Transfer& t = ip.plan.transfers[k];
      if (t.kind == plan::TransferKind::Compute) {
        if (t.label.rfind("B", 0) == 0 || t.label.rfind("F", 0) == 0)
          last_compute = std::max(last_compute, run.transfers[k].finish);
      } else if (t.label.find("allreduce") != std::string::npos) {
        first_dp = std::min(first_dp, run.transfers[k].start);
      }
    }
    EXPECT_NEAR(last_compute.seconds(), 12e-3, 1e-9);
    if (overlap) {
      EXPECT_LT(first_dp.seconds(), 12e-3);
    } else {
      EXPECT_GE(first_dp.seconds(), 12e-3 - 1e-12);
      const auto stages = stage_breakdowns(ip, run);
      EXPECT_NEAR(stages[0].dp.seconds(), run.makespan.seconds() - 12e-3, 1e-9);
    }
    iteration[overlap] = run.makespan;
  }
  EXPECT_GT(iteration[0], iteration[1]);
}

TEST(Training, EveryStagesEpAllToAllRunsAtOnce) {
  // EP4 x PP8 on 4 servers of 8 GPUs, pipeline inner (tp-cp-pp-dp): stage s of replica d is GPU s of server d,
  // so each stage's EP group is GPU s of every server. An all-to-all of S bytes a GPU sends 3S/4 off its server.
  // With a NIC per GPU (one per rail) every stage has its own NIC: 3S/4 / B. With one NIC a server the 8 stages'
  // groups share it: 8 x 3S/4 / B, 8 times as long, which timing stage 0's groups alone (1 GPU a NIC) missed.
  Job j = testing::small_gpt_job(1, 8, 4);
  j.model.experts = 8;
  j.model.top_k = 2;
  j.model.hidden = 4096;
  j.model.heads = 32;
  j.model.kv_heads = 32;
  j.model.seq = 4096;
  j.ep = 4;
  j.pipeline_inner = true;
  ASSERT_EQ(volumes(j).ep_alltoall_bytes, 4096 * 4096 * 2 * 2);  // b s h k e / t = 64 MiB
  topology::Hardware one_nic = topology::default_hardware();
  one_nic.nics_per_server = 1;
  const topology::Topology shared = topology::build_with("rail_clos", {{"gpus", "32"}}, one_nic);
  auto per_rail = engine::make_backend("analytical", rail(32));
  auto one = engine::make_backend("analytical", shared);
  const Time a = iteration_times(j, identity(j.gpus()), rail(32), *per_rail, TrainOptions{}).ep_collective;
  const Time b = iteration_times(j, identity(j.gpus()), shared, *one, TrainOptions{}).ep_collective;
  EXPECT_NEAR(static_cast<double>(b.ps) / static_cast<double>(a.ps), 8.0, 0.4) << a.seconds() << " " << b.seconds();
}

TEST(Training, TpCommOverlapExposesOnlyWhatExceedsTheGemms) {
  // The layer of ComputeModelPricesGemmsAttentionAndElementwiseApart (TP2 with SP, selective recompute): GEMMs
  // 30.408704 ns per token forward, 2,048 tokens -> g_f = 62.277026 us per layer, g_b = 2 g_f = 124.554051 us.
  // Without overlap a pass's TP time is k x layers x c (c = one RS + AG as timed); with it, max(0, k c - g) x
  // layers, k = 2 forward and backward.
  Job j = llama_layer_job();
  j.compute_efficiency = 0.5;
  auto backend = engine::make_backend("analytical", rail(32));
  const IterationTimes plain = iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  const double c = plain.tp_collective.seconds();
  ASSERT_GT(c, 0.0);
  EXPECT_NEAR(plain.ops[0][0].fwd_tp.seconds(), 2 * c, 1e-12);
  const double g_f = 2048 * 30.408704e-9, g_b = 2 * g_f;
  EXPECT_LT(2 * c, g_f);  // NVLink TP2 of 2,048 x 1,024 x 2 B: the collectives fit inside the GEMMs
  j.tp_comm_overlap = true;
  const IterationTimes over = iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  EXPECT_EQ(over.ops[0][0].fwd_tp.ps, 0);
  EXPECT_EQ(over.ops[0][0].bwd_tp.ps, 0);
  // GEMMs 100x faster (peak 1e17): g_f / 100 = 0.622770 us, shorter than the collectives; the excess stays exposed.
  j.gpu.peak_flops = 1e17;
  const IterationTimes fast = iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  const double c2 = fast.tp_collective.seconds();
  EXPECT_GT(2 * c2, g_f / 100);
  EXPECT_NEAR(fast.ops[0][0].fwd_tp.seconds(), 2 * c2 - g_f / 100, 1e-11);
  EXPECT_NEAR(fast.ops[0][0].bwd_tp.seconds(), std::max(0.0, 2 * c2 - g_b / 100), 1e-11);
}

TEST(Training, TpCollectiveIsNcclsChoiceWithItsModel) {
  // TP8 without SP on the first server of rail(32) (8 GPUs on an NVSwitch): one TP collective is an
  // all-reduce of b s h e = 1 x 2,048 x 1,024 x 2 B = 4 MiB over GPUs 0-7. With NCCL's model (tuner) it is
  // what NCCL's tuner picks there, nvls (the plan "auto" makes), timed on the same engine; without the
  // model it is the plain ring, as before.
  Job j = llama_layer_job();
  j.tp = 8;
  j.sequence_parallel = false;
  const topology::Topology& topo = rail(32);
  auto backend = engine::make_backend("analytical", topo);
  collective::Group g(8);
  std::iota(g.begin(), g.end(), 0);
  const Bytes bsh = 2048 * 1024 * 2;
  TrainOptions tuned;
  tuned.collective.tuner = true;
  tuned.collective.channels = collective::kAutoChannels;
  const auto nvls = collective::make_plan("auto", collective::Op::AllReduce, g, bsh, tuned.collective, topo);
  ASSERT_EQ(nvls.algorithm, "nvls");
  EXPECT_EQ(iteration_times(j, identity(j.gpus()), topo, *backend, tuned).tp_collective, backend->run(nvls).makespan);
  const auto ring = collective::make_plan("ring", collective::Op::AllReduce, g, bsh, TrainOptions{}.collective, topo);
  EXPECT_EQ(iteration_times(j, identity(j.gpus()), topo, *backend, TrainOptions{}).tp_collective,
            backend->run(ring).makespan);
}

TEST(Training, ContextParallelExchangeIsExposedBeyondTheCore) {
  // tiny() with cp 2 on 2 GPUs of one server: a KV block is 2 b (s/c) h_kv e = 2 x 4 x 64 x 2 = 1,024 bytes; its
  // NVLink hop takes a few microseconds of latency, far longer than the block's attention core (4 b (s/c)^2 h =
  // 4,096 FLOPs, ~5 ps): the forward pass is delayed by (c-1) (t_kv - t_blk) per layer, the backward twice that.
  Job j = tiny(1, 2);
  j.cp = 2;
  j.recompute = Recompute::None;
  auto backend = engine::make_backend("analytical", rail(32));
  const IterationTimes t = iteration_times(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  ASSERT_GT(t.cp_step.ps, 0);
  const double rate = j.gpu.peak_flops * j.compute_efficiency;
  const Time block = Time::from_seconds(4.0 * 4 * 4 * 64 / rate);
  EXPECT_EQ(t.ops[0][0].fwd_cp, (t.cp_step - block) * 8);
  EXPECT_EQ(t.ops[0][0].bwd_cp, (t.cp_step - block) * 16);
  const TrainResult r = simulate_training(j, identity(j.gpus()), rail(32), *backend, TrainOptions{});
  EXPECT_GT(r.breakdown.cp.ps, 0);
}

}  // namespace
}  // namespace podnet::workload
