#include "workload/simai.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <sstream>

#include "core/error.hpp"
#include "topology/builders.hpp"

namespace podnet::workload::simai {
namespace {

const std::string kDir = std::string(PODNET_SOURCE_DIR) + "/tests/data/simai/";

std::vector<int32_t> identity(int64_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// Expects parse_workload(text) to throw an InputError mentioning `where`.
void expect_bad(const std::string& text, const std::string& where) {
  std::istringstream in(text);
  try {
    parse_workload(in, "w.txt");
    ADD_FAILURE() << "expected an error at " << where;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
  }
}

TEST(SimaiWorkload, OldHeaderGpt13b) {
  // AICB output: TP8 with sequence parallelism, no ep/pp/vpp/ga/all_gpus keys -> all 1, GPU count from the caller.
  const Workload w = load_workload(kDir + "G13B-M1-C02_GPT13B_megatron_tp8_pp1_mbs1_sp_A100.txt");
  EXPECT_FALSE(w.new_header);
  EXPECT_EQ(w.tp, 8);
  EXPECT_EQ(w.ep, 1);
  EXPECT_EQ(w.pp, 1);
  EXPECT_EQ(w.ga, 1);
  EXPECT_EQ(w.all_gpus, 0);
  ASSERT_EQ(w.rows.size(), 172u);
  const Row& r = w.rows[4];  // attention_column_layer: fwd ALLGATHER 20 MiB, ig REDUCESCATTER
  EXPECT_EQ(r.name, "attention_column_layer");
  EXPECT_EQ(r.line, 7);
  EXPECT_EQ(r.fwd_ns, 375000);
  EXPECT_EQ(r.fwd.op, collective::Op::AllGather);
  EXPECT_EQ(r.fwd_bytes, 20971520);
  EXPECT_EQ(r.ig.op, collective::Op::ReduceScatter);
  EXPECT_TRUE(r.wg.none);
  EXPECT_EQ(w.rows[1].wg.op, collective::Op::ReduceScatter);  // grad_norm: the gradients' reduce-scatter
  EXPECT_EQ(w.rows[1].wg_bytes, 6497239040);
}

TEST(SimaiWorkload, NewHeaderMoe) {
  const Workload w = load_workload(kDir + "moe_9216gpu_workload.txt");
  EXPECT_TRUE(w.new_header);
  EXPECT_EQ(w.tp, 2);
  EXPECT_EQ(w.ep, 16);
  EXPECT_EQ(w.pp, 12);
  EXPECT_EQ(w.vpp, 8);
  EXPECT_EQ(w.ga, 24);
  EXPECT_EQ(w.all_gpus, 9216);
  EXPECT_EQ(w.pp_comm, 50331648);  // written "pp_comm 50331648", without the colon
  EXPECT_EQ(w.rows.size(), 1789u);
  EXPECT_EQ(w.rows[4].wg.scope, Scope::DpEp);  // moe_grad_norm1 ALLGATHER_DP_EP
  EXPECT_EQ(w.rows[11].fwd.scope, Scope::Ep);  // mlp_moelayer ALLTOALL_EP
  EXPECT_EQ(w.rows[11].fwd.op, collective::Op::AllToAll);
  EXPECT_EQ(w.rows[10].fwd.scope, Scope::Default);  // ALLTOALL without a suffix: the TP group
  // d = 9216 / (2 x 12) = 384; EP groups of 16, EDP groups of 24.
  const Job j = job_of(w, 0, 16384);
  EXPECT_EQ(j.dp, 384);
  EXPECT_EQ(j.microbatches(), 24);
  EXPECT_EQ(group_counts(j).edp_size, 24);
}

TEST(SimaiWorkload, BadInputNamesTheLine) {
  const std::string head = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 checkpoints: 0\n";
  expect_bad(head + "2\nl1 -1 1 NONE 0 1 NONE 0 1 NONE 0 100\nl2 -1 x NONE 0 1 NONE 0 1 NONE 0 100\n", "w.txt:4:");
  expect_bad(head + "1\nl1 -1 1 ALLSUM 0 1 NONE 0 1 NONE 0 100\n", "w.txt:3: field 4");
  expect_bad(head + "1\nl1 -1 1 NONE 0 1 NONE\n", "w.txt:3: expected 12 fields");
  expect_bad(head + "3\nl1 -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n", "announces 3 layer rows, the file has 1");
  expect_bad(head + "two\n", "w.txt:2:");
  expect_bad("DATA\n1\n", "w.txt:1: parallelism 'DATA'");
  expect_bad("HYBRID_TRANSFORMER_FWD_IN_BCKWD ep: 2\n0\n", "model_parallel_NPU_group");
}

TEST(SimaiTopology, RailOptimizedSingleTor) {
  // 34 nodes = 16 H20 GPUs + 2 NVSwitches + 16 switches (8 ASW leaves, one per rail, and 8 PSW spines);
  // 96 links = 16 NVLink + 16 GPU-leaf + 64 leaf-spine. Each GPU-leaf link becomes PCIe + NIC-leaf.
  const topology::Topology t = load_topology(kDir + "Rail_Opti_SingleToR_16g_8gps_200Gbps_H20.topo");
  EXPECT_EQ(t.gpus.size(), 16u);
  EXPECT_EQ(t.servers, 2);
  EXPECT_EQ(t.nics.size(), 16u);
  EXPECT_EQ(t.links.size(), 16u + 16u * 2 + 64u);
  int leaves = 0, spines = 0, nvswitches = 0;
  for (const auto& n : t.nodes) {
    if (n.kind == topology::NodeKind::Switch) (n.tier == 1 ? leaves : spines)++;
    if (n.kind == topology::NodeKind::NvSwitch) ++nvswitches;
  }
  EXPECT_EQ(leaves, 8);
  EXPECT_EQ(spines, 8);
  EXPECT_EQ(nvswitches, 2);
  // Leaf r serves rail r: GPU 3 and GPU 11 (local 3 of both servers) share a leaf.
  EXPECT_EQ(t.nodes[static_cast<size_t>(t.gpu_nic[3])].rail, 3);
  // A 16-GPU ring all-reduce routes over it: 2 x 15/16 x 64 MiB over 200 Gbps NICs (25 GB/s x 4096/4178
  // RoCE payload) ~ 5.5 ms, more than over NVLink alone.
  const engine::NetworkOptions options;
  auto backend = engine::make_backend("flow", t, options);
  const auto plan = collective::make_plan("ring", collective::Op::AllReduce, identity(16), 64LL << 20,
                                          collective::Options{}, t);
  const double s = backend->run(plan).makespan.seconds();
  EXPECT_GT(s, 5.0e-3);
  EXPECT_LT(s, 6.5e-3);
}

TEST(SimaiTopology, BadLinkNamesTheLine) {
  std::istringstream in("3 2 1 0 2 H20\n2\n0 2 900Gbps 0.000025ms 0\n1 2 fastGbps 1ns 0\n");
  try {
    parse_topology(in, "t.topo");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.topo:4: bandwidth"), std::string::npos) << e.what();
  }
}

TEST(SimaiRun, MicroAllReduceOnTheSimaiFabric) {
  // 8 GPUs of one server, TP8: forward = 2 x 556 us compute + an all-reduce of 16 MiB and one of 64 MiB in the
  // TP group (NVLink 900 Gbps = 112.5 GB/s per GPU: 2 x 7/8 x 80 MiB / 112.5 GB/s = 1.31 ms), backward ~0.
  const Workload w = load_workload(kDir + "microAllReduce.txt");
  const topology::Topology t = load_topology(kDir + "Rail_Opti_SingleToR_16g_8gps_200Gbps_H20.topo");
  const Job j = job_of(w, 0, 16);
  EXPECT_EQ(j.gpus(), 8);
  EXPECT_EQ(j.dp, 1);
  const engine::NetworkOptions options;
  auto backend = engine::make_backend("flow", t, options);
  const Imported im = import_iteration(w, j, identity(8), t, *backend, TrainOptions{});
  ASSERT_EQ(im.traffic.size(), 1u);
  EXPECT_EQ(im.traffic[0].group, "tp");
  EXPECT_EQ(im.traffic[0].collectives, 2);
  const TrainResult r = simulate_iteration(j, identity(8), t, *backend, im.times, TrainOptions{});
  EXPECT_NEAR(r.breakdown.compute.seconds(), 2 * 556e-6 + 2e-9, 1e-8);
  EXPECT_NEAR(r.breakdown.tp.seconds(), 2 * 7.0 / 8 * 80 * 1048576 / 112.5e9, 0.1e-3);
  EXPECT_EQ(r.breakdown.total(), r.iteration);
  EXPECT_EQ(r.mfu, 0.0);  // an imported workload has no model FLOPs
}

TEST(SimaiRun, Gpt13bWithDataParallelism) {
  // The 172-row GPT-13B workload on the 16-GPU SimAI fabric: TP8 x DP2 (one TP group per server); the wg
  // REDUCESCATTER of 6.5 GB runs on the 8 DP groups {g, g + 8} over the 200G NICs and overlaps the backward.
  const Workload w = load_workload(kDir + "G13B-M1-C02_GPT13B_megatron_tp8_pp1_mbs1_sp_A100.txt");
  const topology::Topology t = load_topology(kDir + "Rail_Opti_SingleToR_16g_8gps_200Gbps_H20.topo");
  const Job j = job_of(w, 16, 16);
  EXPECT_EQ(j.dp, 2);
  const engine::NetworkOptions options;
  auto backend = engine::make_backend("flow", t, options);
  const Imported im = import_iteration(w, j, identity(16), t, *backend, TrainOptions{});
  bool has_dp = false;
  for (const auto& g : im.traffic)
    if (g.group == "dp") {
      has_dp = true;
      EXPECT_EQ(g.collectives, 1);
      EXPECT_EQ(g.bytes, 6497239040.0);
    }
  EXPECT_TRUE(has_dp);
  const TrainResult r = simulate_iteration(j, identity(16), t, *backend, im.times, TrainOptions{});
  EXPECT_EQ(r.breakdown.total(), r.iteration);
  EXPECT_GT(r.breakdown.dp, Time());  // 6.5 GB at 25 GB/s (~0.14 s) outlasts the overlap
  EXPECT_EQ(r.dp_collectives, 8);     // one bucket x 8 DP groups
  EXPECT_GT(r.breakdown.tp, Time());
}

TEST(SimaiRun, Moe9216OnAipodSizedFabric) {
  // The 9,216-GPU MoE workload (TP2 EP16 PP12, GA 24) on a 16,384-GPU rail Clos, analytical engine: every
  // replica's p2p (11 x 24 x 2 x 384) and every DP/EDP group's buckets are in the plan.
  const Workload w = load_workload(kDir + "moe_9216gpu_workload.txt");
  const topology::Topology t = topology::build_with("rail_clos", {{"gpus", "16384"}}, topology::default_hardware());
  const Job j = job_of(w, 0, 16384);
  auto backend = engine::make_backend("analytical", t);
  const Imported im = import_iteration(w, j, identity(j.gpus()), t, *backend, TrainOptions{});
  std::vector<std::string> kinds;
  for (const auto& g : im.traffic) kinds.push_back(g.group);
  EXPECT_EQ(kinds, (std::vector<std::string>{"tp", "ep", "dp", "edp"}));
  const TrainResult r = simulate_iteration(j, identity(j.gpus()), t, *backend, im.times, TrainOptions{});
  EXPECT_EQ(r.p2p_transfers, 11 * 24 * 2 * 384);
  EXPECT_EQ(r.breakdown.total(), r.iteration);
  EXPECT_GT(r.breakdown.ep, Time());
  EXPECT_GT(r.breakdown.bubble, Time());
}

}  // namespace
}  // namespace podnet::workload::simai
