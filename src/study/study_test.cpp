// The studies called as a sweep worker or a web request would call them:
// scenario text -> scenario::Setup -> study -> typed result, no CLI.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "cluster/placement.hpp"
#include "collective/collective.hpp"
#include "core/error.hpp"
#include "engine/registry.hpp"
#include "scenario/setup.hpp"
#include "study/bench.hpp"
#include "study/reliability.hpp"
#include "study/train.hpp"

namespace podnet::study {
namespace {

// Llama 3 8B, TP8 x PP2 x DP4 (64 GPUs) on a 64-GPU rail-optimized two-tier fat tree.
const char* kSmall = "schema_version: 1\n"       // 1
                     "name: small\n"             // 2
                     "topology:\n"               // 3
                     "  family: fat_tree\n"      // 4
                     "  gpus: 64\n"              // 5
                     "  tiers: 2\n"              // 6
                     "  rail_optimized: true\n"  // 7
                     "server:\n"                 // 8
                     "  gpus: 8\n"               // 9
                     "  nics: 8\n"               // 10
                     "  nic_speed: 400Gbps\n"    // 11
                     "switch:\n"                 // 12
                     "  radix: 64\n"             // 13
                     "  port_speed: 400Gbps\n"   // 14
                     "network:\n"                // 15
                     "  engine: analytical\n"    // 16
                     "workload:\n"               // 17
                     "  model: llama3-8b\n"      // 18
                     "  tp: 8\n"                 // 19
                     "  pp: 2\n"                 // 20
                     "  dp: 4\n"                 // 21
                     "  microbatch: 1\n"         // 22
                     "  global_batch: 16\n"      // 23
                     "  tokens: 1B\n";           // 24

scenario::Setup setup(const std::vector<std::string>& sets = {}, const std::string& extra = "") {
  return scenario::resolve(scenario::load_text(std::string(kSmall) + extra, "small.yaml", "small", sets));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Setup, ParsesEachConcernOnce) {
  const scenario::Setup s = setup({"network.collective_timeout=10s", "network.local_repair=2ms"});
  EXPECT_EQ(s.engine, "analytical");
  EXPECT_EQ(s.fabric.gpus.size(), 64u);
  // The recovery times are read once into the engine's FailureOptions; the risk model copies them.
  EXPECT_EQ(s.network.faults.failures.collective_timeout, Time::from_seconds(10));
  EXPECT_DOUBLE_EQ(s.reliability.collective_timeout_s, 10.0);
  EXPECT_DOUBLE_EQ(s.reliability.link_recovery_s, 0.002);
  EXPECT_EQ(s.placement, cluster::Policy::TopologyAware);
  EXPECT_EQ(s.job().gpus(), 64);  // 8 x 2 x 4
}

TEST(Setup, JobErrorsNameTheKeysLine) {
  // TP8 x PP2 x DP8 = 128 GPUs on a 64-GPU fabric.
  const scenario::Setup s = setup({}, "");
  const scenario::Setup big = setup({"workload.dp=8"});
  const std::string e = error_of([&] { (void)big.job(); });
  EXPECT_NE(e.find("workload."), std::string::npos) << e;
  EXPECT_EQ(error_of([&] { (void)s.job(); }), "");
}

TEST(BenchStudy, SizeSeriesAsNcclTests) {
  // 8 B .. 1 GiB by 2: 2^3 .. 2^30, 28 sizes.
  const auto sizes = size_series(8, 1LL << 30, 2);
  ASSERT_EQ(sizes.size(), 28u);
  EXPECT_EQ(sizes.front(), 8);
  EXPECT_EQ(sizes.back(), 1LL << 30);
  EXPECT_EQ(size_series(4096, 4096, 1.0).size(), 1u);  // one size needs no factor
  // 8 B .. 1 GiB by 1.0000001: log(2^27) / log(1.0000001) = 18.7 / 1e-7 = 1.9e8 sizes: refused, not run.
  EXPECT_NE(error_of([] { size_series(8, 1LL << 30, 1.0000001); }).find("at most 4096"), std::string::npos);
  EXPECT_NE(error_of([] { size_series(0, 1024, 2); }).find("at least 1 B"), std::string::npos);
  // Both sizes as the user may have typed them, and to the byte.
  EXPECT_EQ(error_of([] { size_series(4 << 20, 1 << 20, 2); }), "--min 4,194,304 B is larger than --max 1,048,576 B");
  EXPECT_NE(error_of([] { size_series(8, 1024, 1.0); }).find("--factor"), std::string::npos);
}

TEST(BenchStudy, RowsAreTheEnginesRunOfEachSizesPlan) {
  const scenario::Setup s = setup();
  BenchRequest r;
  r.op = collective::Op::AllReduce;
  r.group = {0, 8, 16, 24};  // one GPU on each of four servers
  r.sizes = {1 << 20, 16 << 20};
  const BenchResult b = bench(s, r);
  ASSERT_EQ(b.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(b.bus_factor, 2.0 * 3 / 4);  // all-reduce: 2(n-1)/n, n = 4
  for (const auto& row : b.rows) {
    // The same plan on a fresh engine of the Setup's kind gives the same time: the study adds nothing.
    const plan::TransferPlan p = collective::make_plan(b.algo, r.op, r.group, row.bytes, s.collective, s.fabric);
    EXPECT_EQ(row.run.makespan, engine::make_backend(s.engine, s.fabric, s.network)->run(p).makespan);
    EXPECT_EQ(row.algorithm, p.algorithm);
    EXPECT_FALSE(row.baseline);
    ASSERT_TRUE(row.nccl_model_us);
    EXPECT_GT(*row.nccl_model_us, 0);
  }
  // Larger messages take longer.
  EXPECT_GT(b.rows[1].run.makespan, b.rows[0].run.makespan);
}

TEST(BenchStudy, EmptyGroupIsTheWholeFabric) {
  BenchRequest r;
  r.sizes = {1 << 20};
  EXPECT_EQ(bench(setup(), r).group.size(), 64u);
}

const char* kLinkDown = "failures:\n  - {at: 0ms, link: \"gpu-node-001/nic0\", action: degrade, rate: 100Gbps}\n";

TEST(BenchStudy, FailuresNeedAnEngineThatInjectsThemBeforeAnyRun) {
  const scenario::Setup s = setup({}, kLinkDown);
  BenchRequest r;
  r.group = {0, 8};
  r.sizes = {1 << 20};
  EXPECT_NE(error_of([&] { bench(s, r); }).find("--engine flow"), std::string::npos);
}

TEST(BenchStudy, FailuresRunBesideTheBaseline) {
  const scenario::Setup s = setup({"network.engine=flow"}, kLinkDown);
  BenchRequest r;
  r.group = {0, 8};  // GPU 8 is gpu-node-001's GPU 0, on nic0
  r.sizes = {64 << 20};
  const BenchResult b = bench(s, r);
  ASSERT_EQ(b.rows.size(), 1u);
  ASSERT_TRUE(b.rows[0].baseline);
  EXPECT_EQ(b.rows[0].scheduled, 1u);
  // A NIC at 100 of 400 Gb/s from the start: the ring is slower, by at most the 4x of its rate.
  const double slowdown = b.rows[0].run.makespan.seconds() / b.rows[0].baseline->makespan.seconds();
  EXPECT_GT(slowdown, 1.5);
  EXPECT_LE(slowdown, 4.0 + 1e-9);
}

TEST(TrainStudy, IsTheClusterSimulationOfTheSetupsJob) {
  const scenario::Setup s = setup();
  const TrainStudy t = train(s, {});
  workload::TrainOptions o;
  o.collective = s.collective;
  auto backend = engine::make_backend(s.engine, s.fabric, s.network);
  std::vector<int32_t> gpus;
  const workload::TrainResult direct =
      simulate_job(s.job(), s.fabric, *backend, o, s.placement, s.scenario.seed, &gpus);
  EXPECT_EQ(t.result.iteration, direct.iteration);
  EXPECT_EQ(t.gpus, gpus);
  ASSERT_TRUE(t.reliability);
  // With failures the job takes longer than without (goodput < 1).
  EXPECT_GT(t.reliability->days_to_train, t.result.days_to_train);
  EXPECT_LT(t.reliability->goodput, 1.0);
  EXPECT_FALSE(t.failures);
  EXPECT_FALSE(t.swept);
}

// A packet run's progress goes by the iteration's traffic, not its time. With one pipeline stage the first
// forward pass sends nothing (TP stays in the server, DP waits for the gradients): the first sixteenth of the
// iteration holds none of the work, the whole iteration all of it, and the share never falls.
TEST(TrainStudy, NetworkWorkFollowsTheTrafficNotTheTime) {
  const scenario::Setup s = setup({"workload.pp=1", "workload.dp=8"});
  const workload::Job job = s.job();
  const std::vector<int32_t> gpus = cluster::place(job, s.fabric, cluster::Policy::TopologyAware, 1);
  const auto analytical = engine::make_backend("analytical", s.fabric, s.network);
  const std::vector<double> work = network_work(job, gpus, s.fabric, *analytical, workload::TrainOptions{});
  ASSERT_EQ(work.size(), 257u);
  EXPECT_EQ(work.front(), 0.0);
  EXPECT_NEAR(work.back(), 1.0, 1e-12);
  EXPECT_EQ(work[16], 0.0);
  for (size_t k = 1; k < work.size(); ++k) EXPECT_GE(work[k], work[k - 1]) << k;
  EXPECT_LT(work[128], 0.5);  // the gradients' all-reduces run in the backward half
}

TEST(TrainStudy, AFrontendWithStorageNodesTimesTheDataLoading) {
  // TP8 x PP2 x DP4: tp rank 0 of stage 0 reads each replica's 16 / 4 = 4 samples, and of stage 1 their
  // labels (8,192 token ids of 4 B), on 8 servers (one per stage and replica). 1 GB samples: 16 GB and
  // 16 x 32,768 B of labels through one storage node's 100G NIC, at 12.5e9 x 4096 / 4178 B/s: longer than
  // the iteration, so the GPUs wait the difference.
  const std::vector<std::string> fe = {"frontend.nics=1",   "frontend.nic_speed=100Gbps", "frontend.port_speed=100Gbps",
                                       "frontend.radix=32", "frontend.storage_nics=1",    "frontend.storage_nodes=1"};
  auto with = [&](const std::string& extra) {
    std::vector<std::string> v = fe;
    if (!extra.empty()) v.push_back(extra);
    return v;
  };
  const TrainStudy big = train(setup(with("frontend.sample_size=1GB")), {});
  ASSERT_TRUE(big.data_loading);
  EXPECT_EQ(big.data_loading->servers, 8);
  const double bytes = 16e9 + 16 * 32768;
  EXPECT_DOUBLE_EQ(big.data_loading->bytes, bytes);
  const double port = 12.5e9 * 4096 / 4178;
  EXPECT_NEAR(big.data_loading->read.seconds, bytes / port, 1e-4 * bytes / port);
  EXPECT_GT(big.data_loading->read.seconds, big.result.iteration.seconds());
  // Token ids (8,192 x 4 B a sample) take microseconds: the loader keeps up.
  const TrainStudy tokens = train(setup(with("")), {});
  ASSERT_TRUE(tokens.data_loading);
  EXPECT_DOUBLE_EQ(tokens.data_loading->sample_bytes, 8192 * 4);
  EXPECT_LT(tokens.data_loading->read.seconds, tokens.result.iteration.seconds());
  EXPECT_FALSE(train(setup(), {}).data_loading);  // no frontend, no data loading
}

TEST(TrainStudy, SweepAddsTheJobsOwnDp) {
  TrainRequest r;
  r.sweep = true;
  r.sweep_dps = {1, 2};
  r.sweep_caps = {0};
  const TrainStudy t = train(setup(), r);
  ASSERT_TRUE(t.swept);
  // DP 1, 2 and the job's own 4, at one cap.
  ASSERT_EQ(t.sweep.size(), 3u);
  EXPECT_EQ(t.sweep.back().dp, 4);
}

TEST(TrainStudy, FailuresOnTheAnalyticalEngineAreRefusedUpFront) {
  EXPECT_NE(error_of([] { train(setup({}, kLinkDown), {}); }).find("--engine flow"), std::string::npos);
  // A caller may leave them out.
  TrainRequest r;
  r.failures = false;
  EXPECT_FALSE(train(setup({}, kLinkDown), r).failures);
}

// A failure what-if runs the iteration several times; each run's progress label says which of how many (a 100K-GPU
// user saw a third run start with no warning). Two NIC links degraded, each its own failure: the iteration, with the
// failures, the straggler report's baseline and one run without each of the two: 5 runs.
TEST(TrainStudy, FailureRunsAreCountedInTheirProgress) {
  const std::string two = "failures:\n  - {at: 0ms, link: \"gpu-node-001/nic0\", action: degrade, rate: 100Gbps}\n"
                          "  - {at: 0ms, link: \"gpu-node-002/nic0\", action: degrade, rate: 100Gbps}\n";
  std::vector<std::string> runs;
  Progress p;
  p.run = [&](const std::string& what) { runs.push_back(what); };
  const TrainStudy t = train(setup({"network.engine=flow"}, two), {}, p);
  ASSERT_TRUE(t.failures);
  ASSERT_GT(t.failures->run.iteration, t.result.iteration);  // they slow it, so the straggler report runs
  ASSERT_EQ(runs.size(), 5u) << ::testing::PrintToString(runs);
  EXPECT_EQ(runs[0], "iteration");
  EXPECT_EQ(runs[1], "the iteration with the failures (run 2 of up to 5: the rest only if they slow it)");
  EXPECT_EQ(runs[2], "the iteration without failures, step by step (the straggler report; run 3 of 5)");
  EXPECT_EQ(runs[3], "the iteration without link gpu-node-001/nic0 degraded to 100Gbps (1 of 2; run 4 of 5)");
  EXPECT_EQ(runs[4], "the iteration without link gpu-node-002/nic0 degraded to 100Gbps (2 of 2; run 5 of 5)");
}

TEST(TrainStudy, APacketRunIsGivenTheAnalyticalIterationAsItsEstimate) {
  // The packet engine's progress lines say how far along a run is against the analytical engine's iteration (a
  // 16,384-GPU packet run had printed "simulated 2.18 ms so far" for hours). A two-layer toy on 16 GPUs.
  const std::vector<std::string> toy = {"topology.gpus=16",    "workload.layers=2",      "workload.hidden=512",
                                        "workload.heads=8",    "workload.kv_heads=8",    "workload.ffn=1024",
                                        "workload.vocab=1024", "workload.seq=256",       "workload.pp=1",
                                        "workload.dp=2",       "workload.global_batch=2"};
  std::vector<std::string> packet = toy;
  packet.push_back("network.engine=packet");
  Time expected;
  std::vector<double> work;
  Progress p;
  p.expect = [&](Time t, std::vector<double> w) {
    expected = t;
    work = std::move(w);
  };
  const TrainStudy ran = train(setup(packet), {}, p);
  EXPECT_EQ(expected, train(setup(toy), {}).result.iteration);
  EXPECT_EQ(work.size(), 257u);  // and how its traffic spreads over it
  EXPECT_GT(ran.result.iteration.ps, 0);
  // The analytical engine itself needs no estimate.
  expected = Time();
  (void)train(setup(toy), {}, p);
  EXPECT_EQ(expected.ps, 0);
}

TEST(ReliabilityStudy, SameSeedSameResult) {
  const scenario::Setup s = setup({"reliability.monte_carlo_trials=200"});
  const ReliabilityResult a = reliability(s), b = reliability(s);
  EXPECT_EQ(a.inventory.job_gpus, 64);
  EXPECT_EQ(a.interruptions.probability, b.interruptions.probability);
  EXPECT_EQ(a.training.goodput, b.training.goodput);
  // The risk model's rate is the sum of its classes' n x lambda.
  double sum = 0;
  for (const auto& c : a.risk.classes)
    if (c.interrupts) sum += c.class_rate;
  EXPECT_NEAR(a.risk.interrupt_rate, sum, 1e-12 * sum);
}

TEST(ReliabilityStudy, AStorageNetworkSetsTheCheckpointAndRestartCosts) {
  // Llama 3 8B (8.03e9 parameters x 14 B = 112.4 GB) from the fabric's 64 GPUs, 8 servers: the storage writes
  // 1 GB/s a server (the 2 x 200 Gb/s NICs take 45 GB/s): 112.4 GB / 8 GB/s + 30 s; it reads 3.4 GB/s a server.
  const std::vector<std::string> storage = {"reliability.monte_carlo_trials=100", "storage.frontend_nics=2"};
  const ReliabilityResult r = reliability(setup(storage));
  ASSERT_TRUE(r.checkpoint_io);
  const double bytes = setup().job(false).model.params() * kCheckpointBytesPerParam;
  EXPECT_DOUBLE_EQ(r.checkpoint_io->bytes, bytes);
  EXPECT_NEAR(r.checkpoint_io->write_s, bytes / 8e9 + 30, 1e-9);
  EXPECT_NEAR(r.config.checkpoint_cost_hours, (bytes / 8e9 + 30) / 3600, 1e-12);
  EXPECT_NEAR(r.config.restart_cost_hours, (300 + bytes / (8 * 3.4e9) + 30) / 3600, 1e-12);
  // Keys the scenario gives win over the storage network's times.
  std::vector<std::string> given = storage;
  given.push_back("reliability.checkpoint_cost=2min");
  EXPECT_NEAR(reliability(setup(given)).config.checkpoint_cost_hours, 2.0 / 60, 1e-12);
  // Without frontend NICs, the constants stay.
  EXPECT_FALSE(reliability(setup({"reliability.monte_carlo_trials=100"})).checkpoint_io);
}

TEST(ReliabilityStudy, AFrontendWithStorageNodesSimulatesTheCheckpoint) {
  // The fabric's 8 servers with one 100G frontend NIC each and `nodes` storage nodes of one 100G NIC on
  // a radix-32 leaf: the storage NICs bound the 112.4 GB checkpoint at nodes x 12.5e9 x 4096 / 4178 B/s
  // (RoCEv2's payload share); the write and the read each add storage.checkpoint_overhead (30 s).
  auto frontend = [](int nodes) {
    return std::vector<std::string>{"reliability.monte_carlo_trials=100",
                                    "frontend.nics=1",
                                    "frontend.nic_speed=100Gbps",
                                    "frontend.port_speed=100Gbps",
                                    "frontend.radix=32",
                                    "frontend.storage_nics=1",
                                    "frontend.storage_nodes=" + std::to_string(nodes)};
  };
  const double bytes = setup().job(false).model.params() * kCheckpointBytesPerParam;
  const double port = 12.5e9 * 4096 / 4178;
  const ReliabilityResult one = reliability(setup(frontend(1)));
  ASSERT_TRUE(one.checkpoint_io);
  EXPECT_FALSE(one.checkpoint_io->simulated_by.empty());
  EXPECT_NEAR(one.checkpoint_io->write_s, 30 + bytes / port, 1e-4 * bytes / port);
  EXPECT_NEAR(one.config.restart_cost_hours * 3600, 300 + 30 + bytes / port, 1e-4 * bytes / port);
  EXPECT_EQ(one.checkpoint_io->write_bound, "the storage nodes' NICs");
  // Four storage nodes: a quarter of the time, a cheaper checkpoint and a better goodput.
  const ReliabilityResult four = reliability(setup(frontend(4)));
  EXPECT_NEAR(four.checkpoint_io->write_s, 30 + bytes / (4 * port), 1e-4 * bytes / port);
  EXPECT_LT(four.config.checkpoint_cost_hours, one.config.checkpoint_cost_hours);
  EXPECT_GT(four.advice.goodput, one.advice.goodput);
  // Asynchronous: the job stops only to copy its 1/64 of the checkpoint to host memory at 25 GB/s; the
  // restart also loses the write in flight; checkpoints come no closer than the write takes.
  std::vector<std::string> async = frontend(1);
  async.push_back("storage.checkpoint_mode=async");
  const ReliabilityResult a = reliability(setup(async));
  ASSERT_TRUE(a.checkpoint_io);
  EXPECT_TRUE(a.checkpoint_io->async);
  EXPECT_NEAR(a.config.checkpoint_cost_hours * 3600, bytes / 64 / 25e9, 1e-9);
  EXPECT_NEAR(a.config.restart_cost_hours * 3600, 300 + 2 * (30 + bytes / port), 1e-3 * bytes / port);
  EXPECT_GE(a.advice.interval_hours * 3600, a.checkpoint_io->write_s * (1 - 1e-12));
  EXPECT_GT(a.advice.goodput, one.advice.goodput);
  // A write behind training (storage on the back end, as `podnet train` times it): 600 s behind an iteration
  // slowed 1.25x costs 600 (1 - 1 / 1.25) = 120 s of training besides the snapshot; the restart and the
  // interval take the 600 s (+ 30 s of overhead) instead of the write alone.
  WriteBehindTraining behind;
  behind.write_s = 600;
  behind.slowdown = 1.25;
  behind.iteration_s = 2.5;
  behind.iteration_alone_s = 2;
  behind.outlasts = true;
  reliability::Config rc = setup(async).reliability;
  const auto io = apply_storage(setup(async), 64, rc, &behind);
  ASSERT_TRUE(io);
  EXPECT_TRUE(io->behind_training);
  EXPECT_NEAR(io->training_lost_s, 120, 1e-9);
  EXPECT_NEAR(rc.checkpoint_cost_hours * 3600, bytes / 64 / 25e9 + 120, 1e-9);
  EXPECT_NEAR(rc.restart_cost_hours * 3600, 300 + (30 + bytes / port) + 630, 1e-3 * bytes / port);
  EXPECT_NEAR(rc.min_interval_hours * 3600, 630, 1e-9);
  EXPECT_NEAR(io->write_s, a.checkpoint_io->write_s, 1e-12);  // the write alone stays reported
  // A write that ends inside the iteration costs that iteration's extra 0.5 s.
  behind.outlasts = false;
  behind.write_s = 1;
  reliability::Config inside = setup(async).reliability;
  apply_storage(setup(async), 64, inside, &behind);
  EXPECT_NEAR(inside.checkpoint_cost_hours * 3600, bytes / 64 / 25e9 + 0.5, 1e-9);
  // Both places for the frontend NICs: refused, naming the key.
  std::vector<std::string> both = frontend(1);
  both.push_back("storage.frontend_nics=2");
  EXPECT_NE(error_of([&] { setup(both); }).find("storage.frontend_nics and frontend.nics both give"),
            std::string::npos);
}

}  // namespace
}  // namespace podnet::study
