// End-to-end test of `podnet optimize` on a fabric small enough to price by
// hand: which designs the design metrics prune, the front, the reference's
// verdict, and the design file of the front point.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/test_util.hpp"

namespace {

namespace fs = std::filesystem;
using podnet::cli::testing::mpirun;
using podnet::cli::testing::Result;
using podnet::cli::testing::run;

// 64 GPUs: 8 servers x 8 GPUs, one 400G NIC per GPU on 8 rails; a 2-tier rail-optimized fat-tree of radix-64
// switches; Llama 3 8B with TP8 inside each server and DP8 across the servers.
constexpr const char* kBase =
    "schema_version: 1\nname: small\n"
    "topology: {family: fat_tree, gpus: 64, tiers: 2, rail_optimized: true, oversubscription: \"1:1\"}\n"
    "server: {gpus: 8, nics: 8, nic_speed: 400Gbps}\nswitch: {radix: 64, port_speed: 400Gbps}\n"
    "workload: {model: llama3-8b, gpu: h100, tp: 8, pp: 1, dp: 8, global_batch: 64, tokens: 1B}\n";

TEST(OptimizeCli, SmallFabricFrontDerivedByHand) {
  const fs::path d = podnet::cli::testing::temp_dir("podnet_optimize_test");
  fs::remove_all(d / "o");
  const std::string base = podnet::cli::testing::write_file(d, "base.yaml", kBase);
  const std::string out = (d / "o").string();
  const Result r = run("optimize " + base + " --gpus 64 --families fat_tree --tiers 2 --oversubscription 1:1,3:1 " +
                           "--radix 64 --speeds 400Gbps --nics 8 --aoc 0m,30m --dir " + out + " --reference " + base +
                           " --format json",
                       false);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto doc = nlohmann::json::parse(r.out);
  // Points (the last axis fastest): #0 1:1 transceivers, #1 1:1 AOC, #2 3:1 transceivers, #3 3:1 AOC.
  EXPECT_EQ(doc["points"], 4);
  EXPECT_EQ(doc["infeasible"], 0);
  // The job line names the engine that timed the points (the scenario's: flow, the default).
  EXPECT_NE(doc["job"].get<std::string>().find(", timed on the flow engine"), std::string::npos) << doc["job"];
  // Each rail's 8 NICs share one leaf (8 leaves). A radix-64 leaf at 1:1 has 32 down / 32 up ports: 8 x 32 = 256
  // leaf-spine links on 256 / 64 = 4 spines; at 3:1, 48 down / 16 up: 128 links on 2 spines.
  // NIC cables (rack layout, hardware.hpp): 3 servers a 40 kW rack, so racks 0-2 and the leaves' network rack
  // between racks 1 and 2; servers 3-7 (racks 1 and 2, beside it) have 3 m DACs (40), servers 0-2 (rack 0, 2
  // racks away) 3.6 m optical cables (24).
  //   capex #0 = 12 switches x 64 x 550 + 64 NICs x 1,500 + 40 DACs x 100 + 24 x 2 SR x 500 + 86 m of fibre x 2
  //              (24 x 3.6 = 86.4 m, rounded to whole metres) + 256 x (2 SR x 500 + 30 m x 2)
  //            = 422,400 + 96,000 + 4,000 + 24,000 + 172 + 271,360 = 817,932
  //   capex #3 = 10 x 35,200 + 96,000 + 4,000 + 24 AOCs x 600 + 128 AOCs x 600 = 352,000 + 100,000 + 91,200
  //            = 543,200
  //   power: a radix-64 switch of 400G ports (25.6 Tb/s) draws 2 kW x 0.5^0.14 = 1.815038 kW (topology/power.hpp)
  //         #0 = 8 x 10.2 kW + 12 x 1.815038 + (48 + 512) ends x 12 W = 110.100 kW;
  //         #3 = 81.6 + 10 x 1.815038 + (48 + 256) x 0.012 = 103.398
  // Bisection is NIC-bound in all four (64 x 400 / 2 = 12,800 Gbps: the uplinks, 51.2 or 25.6 Tb/s, carry more),
  // injection (400) and diameter (2) are equal, so #3, the cheapest and coolest, beats the other three on design
  // metrics: the only candidate, and the front.
  ASSERT_EQ(doc["candidates_after_design_pruning"], 1);
  ASSERT_EQ(doc["front"].size(), 1u);
  const auto& p = doc["front"][0];
  EXPECT_EQ(p["id"], 3);
  EXPECT_DOUBLE_EQ(p["capex_usd"].get<double>(), 543200);
  EXPECT_NEAR(p["power_kw"].get<double>(), 103.398, 1e-9);
  EXPECT_DOUBLE_EQ(p["bisection_bandwidth_gbps"].get<double>(), 12800);
  EXPECT_EQ(p["design"]["cost.aoc_max_length"], "30m");
  // Typed as a script reads them: a count is a number, the topology an object (it was the YAML text
  // "{family: fat_tree, ...}"), a value with a unit stays its --set text.
  EXPECT_EQ(p["design"]["server.nics"], 8);
  EXPECT_EQ(p["design"]["switch.radix"], 64);
  EXPECT_EQ(p["design"]["topology"]["family"], "fat_tree");
  EXPECT_EQ(p["design"]["topology"]["tiers"], 2);
  EXPECT_EQ(p["design"]["topology"]["oversubscription"], "3:1");
  EXPECT_EQ(p["design"]["server.nic_speed"], "400Gbps");
  // The CSV is a row per candidate (it was the JSON's key,value lines): #3 alone, on the front, with its file.
  fs::remove_all(d / "o");
  const Result csv = run("optimize " + base + " --gpus 64 --families fat_tree --tiers 2 --oversubscription 1:1,3:1 " +
                         "--radix 64 --speeds 400Gbps --nics 8 --aoc 0m,30m --dir " + out + " --format csv");
  ASSERT_EQ(csv.status, 0) << csv.out;
  EXPECT_EQ(csv.out.rfind("id,label,on_front,capex_usd,power_kw,", 0), 0u) << csv.out;
  EXPECT_NE(csv.out.find("\n3,\"fat_tree 2 tiers 3:1"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",true,543200.0,"), std::string::npos) << csv.out;
  // The reference is design #0 (the base as written). Its DP rings run within each rail's leaf, so no traffic
  // crosses a spine and the oversubscription does not change the iteration: #3 is as fast, cheaper and cooler.
  // It is priced as the points: compared with #3 (AOCs to 30 m) it is #1, 12 x 35,200 + 100,000 + (24 + 256) AOCs
  // x 600 = 690,400 USD (817,932 with its own transceivers and fibre, which the verdict used to compare).
  const auto& ref = doc["reference"];
  EXPECT_DOUBLE_EQ(ref["capex_usd"].get<double>(), 690400);
  EXPECT_NEAR(ref["power_kw"].get<double>(), 110.1, 1e-9);
  EXPECT_EQ(ref["priced_as"], "cost.aoc_max_length=30m");
  ASSERT_EQ(ref["pricings"].size(), 2u);
  EXPECT_DOUBLE_EQ(ref["pricings"][0]["capex_usd"].get<double>(), 817932);
  EXPECT_EQ(ref["front_match"], 3);
  EXPECT_DOUBLE_EQ(ref["iteration_time_ms"].get<double>(), p["iteration_time_ms"].get<double>());
  EXPECT_NE(ref["verdict"].get<std::string>().find("#3 on the front dominates"), std::string::npos) << ref;
  EXPECT_NE(ref["verdict"].get<std::string>().find("iteration equal"), std::string::npos) << ref;
  // The design file is a scenario podnet designs to the same capex.
  const std::string file = p["design_file"].get<std::string>();
  ASSERT_TRUE(fs::exists(file)) << file;
  const Result again = run("design " + file + " --format json");
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(again.out)["cost"]["capex_usd"].get<double>(), 543200);
  // Run again on the same directory: both sweeps resume with nothing to run, same front.
  const Result resumed = run("optimize " + base + " --gpus 64 --families fat_tree --tiers 2 --oversubscription " +
                                 "1:1,3:1 --radix 64 --speeds 400Gbps --nics 8 --aoc 0m,30m --dir " + out +
                                 " --reference " + base + " --format json",
                             false);
  ASSERT_EQ(resumed.status, 0);
  EXPECT_EQ(nlohmann::json::parse(resumed.out)["front"], doc["front"]);
  // Another workload (or --set) on the same directory: refused before base.yaml is touched; it used to print
  // the old front as if it were this run's.
  const std::string before = podnet::cli::testing::read_file((fs::path(out) / "base.yaml").string());
  for (const std::string other : {" --workload llama3-70b", " --set switch.latency=5us"}) {
    const Result refused = run("optimize " + base + " --gpus 64 --families fat_tree --tiers 2 --oversubscription " +
                                   "1:1,3:1 --radix 64 --speeds 400Gbps --nics 8 --aoc 0m,30m --dir " + out + other,
                               true);
    EXPECT_EQ(refused.status, 2) << other << "\n" << refused.out;
    EXPECT_NE(refused.out.find("holds the results of another optimize run"), std::string::npos) << refused.out;
    EXPECT_EQ(podnet::cli::testing::read_file((fs::path(out) / "base.yaml").string()), before);
  }
}

TEST(OptimizeCli, TheReferenceRunsThePointsJob) {
  // The base writes dp: 8 for its 64 GPUs (global batch 64, 8 a replica). At --gpus 128 the points run dp 16 and
  // batch 128; the reference (the base at 128 GPUs) must run that job too: it used to keep dp 8 on 64 of its 128
  // GPUs, and the verdict compared a half-size job with the points'.
  const fs::path d = podnet::cli::testing::temp_dir("podnet_optimize_test");
  fs::remove_all(d / "r");
  const std::string base = podnet::cli::testing::write_file(d, "base-ref.yaml", kBase);
  const Result r = run("optimize " + base + " --gpus 128 --families fat_tree --tiers 2 --oversubscription 1:1 " +
                           "--radix 64 --speeds 400Gbps --nics 8 --aoc 30m --dir " + (d / "r").string() +
                           " --reference " + base + " --set topology.gpus=128 --format json",
                       false);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string ref = podnet::cli::testing::read_file(d / "r" / "reference.yaml");
  EXPECT_NE(ref.find("dp: 16\n"), std::string::npos) << ref;
  EXPECT_NE(ref.find("global_batch: 128\n"), std::string::npos) << ref;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["front"].size(), 1u);
  // The reference is the front's design point (same fabric, same job): the same iteration.
  EXPECT_DOUBLE_EQ(doc["reference"]["iteration_time_ms"].get<double>(),
                   doc["front"][0]["iteration_time_ms"].get<double>());
}

// --workload is the model `train --set workload.model=` runs: its recipe's layout (llama3-70b: TP4 x CP2 x PP4,
// so DP32 on 1,024 GPUs) and the scenario's global batch. It used to time the scenario's own TP8 x PP8 layout
// with the batch scaled per replica (192), and with recipe=preset a 512-GPU job. The output names the job.
TEST(OptimizeCli, WorkloadIsTheModelTrainRuns) {
  const fs::path d = podnet::cli::testing::temp_dir("podnet_optimize_test");
  fs::remove_all(d / "w");
  const Result r = run("optimize leafspine-8k --gpus 1024 --workload llama3-70b --families rail_clos --tiers 2 "
                       "--oversubscription 1:1 --radix 128 --speeds 400Gbps --nics 8 --aoc 30m --dir " +
                       (d / "w").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(podnet::cli::testing::flat(r.out).find(
                "job timed at every point: llama3-70b on 1,024 x h100: TP4 x CP2 x PP4 x DP32, global batch 1,536 x "
                "seq 8,192, timed on the flow engine"),
            std::string::npos)
      << r.out;
  // The scenario's own model at another size scales its batch with DP (the batch per replica kept), which train does
  // not: said. aipod-16k's 2,048 sequences over DP128 are 16 a replica; DP64 on 8,192 GPUs takes 1,024.
  fs::remove_all(d / "s");
  const Result s = run("optimize --gpus 8192 --stage design --dir " + (d / "s").string());
  ASSERT_EQ(s.status, 0) << s.out;
  EXPECT_NE(podnet::cli::testing::flat(s.out).find(
                "TP8 x CP1 x PP16 x DP64, global batch 1,024 x seq 8,192 (the scenario's 2,048 scaled with DP: the "
                "batch per replica is kept)"),
            std::string::npos)
      << s.out;
  const Result t = run("train leafspine-8k --set workload.model=llama3-70b --set topology.gpus=1024 --format json");
  ASSERT_EQ(t.status, 0) << t.out;
  const Result p = run("train " + (d / "w" / "design-0000.yaml").string() + " --format json");
  ASSERT_EQ(p.status, 0) << p.out;
  EXPECT_EQ(nlohmann::json::parse(p.out)["parallelism"]["dp"], 32);
  EXPECT_EQ(nlohmann::json::parse(p.out)["batch"]["global_batch"],
            nlohmann::json::parse(t.out)["batch"]["global_batch"]);
}

TEST(OptimizeCli, AJobThatFitsNoGpuIsRefusedBeforeTheSweeps) {
  // The default job (Llama 3 405B, TP8 x PP16) on 1,024 GPUs is DP8: 87.1 GB per GPU on 85.9 GB parts, on any
  // fabric. optimize said so only after sweeping every design, and its advice named --allow-oom, which it lacks.
  const fs::path d = podnet::cli::testing::temp_dir("podnet_optimize_test");
  fs::remove_all(d / "oom");
  const Result r = run("optimize --gpus 1024 --dir " + (d / "oom").string(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--gpus 1,024, whatever the fabric: the job (llama3-405b, TP8 x PP16 x DP8) needs 87.1 GB "
                       "per GPU"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("a smaller model (--workload, e.g. llama3-70b or llama3-8b)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--allow-oom"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(d / "oom" / "design.db"));
  // --workload brings its model's recipe: aipod-16k's PP16 x v8 (written for 405B) would not hold 70B's 80 layers.
  const Result w = run("optimize --gpus 1024 --workload llama3-70b --families rail_clos --tiers 2 --oversubscription "
                       "1:1 --radix 128 --speeds 400Gbps --nics 8 --aoc 30m --dir " +
                           (d / "oom").string() + "-70b",
                       true);
  EXPECT_EQ(w.status, 0) << w.out;
  EXPECT_NE(w.out.find("llama3-70b on 1,024 x h100: TP4 x CP2 x PP4 x DP32"), std::string::npos) << w.out;
}

TEST(OptimizeCli, NothingFeasibleSaysWhy) {
  // 3 NICs cannot serve 8-GPU servers: every design point fails, and the error gives the reason (it said only
  // that nothing was feasible; the reason was in design.db).
  const fs::path d = podnet::cli::testing::temp_dir("podnet_optimize_test");
  fs::remove_all(d / "n");
  const std::string base = podnet::cli::testing::write_file(d, "base-n.yaml", kBase);
  const Result r = run("optimize " + base + " --gpus 64 --families fat_tree --tiers 2 --radix 64 --speeds 400Gbps " +
                           "--nics 3 --dir " + (d / "n").string(),
                       true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("is feasible; for example:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("server.nics = 3 does not divide evenly among server.gpus = 8"), std::string::npos) << r.out;
}

TEST(OptimizeCli, MpiStagesGiveTheSameFront) {
  // Under mpirun one sweep per job: --stage design, then --stage train, then a plain run prints the front; it
  // must equal the threaded run's. Open MPI from scripts/setup.sh; root and more ranks than cores allowed here.
  const fs::path d = podnet::cli::testing::temp_dir("podnet_optimize_test");
  const std::string base = podnet::cli::testing::write_file(d, "base-mpi.yaml", kBase);
  const std::string space =
      " --gpus 64 --families fat_tree --tiers 2 --oversubscription 1:1,3:1 --radix 64 --speeds 400Gbps --nics 8 "
      "--aoc 0m,30m --format json --dir ";
  fs::remove_all(d / "t");
  fs::remove_all(d / "m");
  const Result threads = run("optimize " + base + space + (d / "t").string() + " -j 2");
  ASSERT_EQ(threads.status, 0) << threads.out;
  const std::string mpi = mpirun(2) + "optimize " + base + space + (d / "m").string();
  // Both stages at once under mpirun: refused, saying how to run it.
  Result r = podnet::cli::testing::run_shell(mpi, true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("--stage design"), std::string::npos) << r.out;
  for (const char* stage : {" --stage design", " --stage train"}) {
    r = podnet::cli::testing::run_shell(mpi + stage, true);
    ASSERT_EQ(r.status, 0) << stage << r.out;
  }
  r = run("optimize " + base + space + (d / "m").string());
  ASSERT_EQ(r.status, 0) << r.out;
  auto a = nlohmann::json::parse(threads.out)["front"], b = nlohmann::json::parse(r.out)["front"];
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i].erase("design_file");
    b[i].erase("design_file");
  }
  EXPECT_EQ(a, b);
}

TEST(OptimizeCli, BadInputIsRefused) {
  const fs::path d = podnet::cli::testing::temp_dir("podnet_optimize_test");
  // 100 GPUs are not a multiple of aipod-16k's TP8 x PP16 x CP1 = 128.
  Result r = run("optimize --gpus 100 --dir " + (d / "bad").string(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("not a multiple of workload tp x pp x cp"), std::string::npos) << r.out;
  r = run("optimize --gpus 1024 --radix 64,x --dir " + (d / "bad").string(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--radix"), std::string::npos) << r.out;
  // A bad value in a later position of a list is found before anything runs, and the error names the optimize
  // option that gave it (it said --set server.nic_speed, and only the first point was checked).
  r = run("optimize --gpus 1024 --speeds 400Gbps,999Gbpz --dir " + (d / "bad").string(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--speeds: server.nic_speed: '999Gbpz' is not valid"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(d / "bad" / "design.db"));
  r = run("optimize --gpus 1024 --families rail_clos,nope --dir " + (d / "bad").string(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--families nope: no such family; expected one of the Clos families fat_tree and rail_clos"),
            std::string::npos)
      << r.out;
  // A family spelt with a dash is named as it is spelt.
  r = run("optimize --gpus 1024 --families fat-tree --dir " + (d / "bad").string(), true);
  EXPECT_NE(r.out.find("--families fat-tree: no such family (did you mean fat_tree?)"), std::string::npos) << r.out;
  r = run("optimize --gpus 1024 --families torus --dir " + (d / "bad").string(), true);
  EXPECT_NE(r.out.find("--families torus: optimize searches the Clos families fat_tree and rail_clos"),
            std::string::npos)
      << r.out;
  // A model that is no preset is refused naming --workload, before base.yaml is written (the error named
  // base.yaml:83, a file podnet wrote itself).
  fs::remove_all(d / "badmodel");
  r = run("optimize --gpus 1024 --workload gpt5 --dir " + (d / "badmodel").string(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--workload gpt5: not a model preset"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(d / "badmodel" / "base.yaml"));
  // A reference of another size (leafspine-8k: 8,192 GPUs) is refused before anything runs.
  r = run("optimize --gpus 1024 --reference leafspine-8k --dir " + (d / "bad").string(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--reference leafspine-8k: it has 8,192 GPUs, the designs 1,024 (--gpus)"), std::string::npos)
      << r.out;
}

TEST(OptimizeCli, DataParallelismAutoAndUntimedCandidatesAreExplained) {
  const fs::path d = podnet::cli::testing::temp_dir("podnet_optimize_test");
  // kBase with dp left to auto (as most built-in scenarios have it) and Llama 3 405B at TP8 x DP8 on 64 GPUs:
  // 405e9 x 2 B / 8 = 101 GB of weights alone per GPU on 80 GB parts, so the train study refuses every
  // candidate. Before, dp auto stopped optimize with "bad conversion"; an all-refused front printed no reason,
  // and then exited 0 as if it had done its job; now the job is refused before any design is swept.
  std::string text = kBase;
  text.replace(text.find("model: llama3-8b"), 16, "model: llama3-405b");
  text.replace(text.find("dp: 8, "), 7, "");
  const std::string base = podnet::cli::testing::write_file(d, "auto-dp.yaml", text);
  fs::remove_all(d / "auto");
  const Result r = run("optimize " + base + " --gpus 64 --families fat_tree --tiers 2 --oversubscription 1:1 " +
                           "--radix 64 --speeds 400Gbps --nics 8 --aoc 30m --dir " + (d / "auto").string(),
                       true);
  // Refused before the sweeps: the job's memory does not depend on the fabric.
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--gpus 64, whatever the fabric: the job (llama3-405b, TP8 x PP1 x DP8) needs 348.3 GB per GPU"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("bad conversion"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GB per GPU"), std::string::npos) << r.out;
}

}  // namespace

namespace {

TEST(CostCli, BadCostSectionNamesFileLineAndKey) {
  const fs::path d = podnet::cli::testing::temp_dir("podnet_optimize_test");
  // line 4: a multimode reach beyond the single-mode DR reach (checked across keys by the cost model)
  const std::string f = podnet::cli::testing::write_file(
      d, "bad-cost.yaml",
      "schema_version: 1\ntopology: {family: fat_tree, gpus: 64}\ncost:\n  sr_max_length: 600m\n  pue: 1.2\n");
  Result r = run("design " + f, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("bad-cost.yaml:4: cost.sr_max_length"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dr_max_length"), std::string::npos) << r.out;
  // a PUE below 1 is out of range; a price needs no unit but must be a number
  r = run("design " + f + " --set cost.sr_max_length=50m --set cost.pue=0.5", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("cost.pue"), std::string::npos) << r.out;
  r = run("design " + f + " --set cost.sr_max_length=50m --set cost.nic=cheap", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("cost.nic"), std::string::npos) << r.out;
  // the same file with a valid reach prices the fabric; --set changes one price and the capex by count x delta
  const auto a = nlohmann::json::parse(run("design " + f + " --set cost.sr_max_length=50m --format json").out);
  const auto b =
      nlohmann::json::parse(run("design " + f + " --set cost.sr_max_length=50m --set cost.nic=2000 --format json").out);
  // 64 NICs x (2,000 - 1,500) = 32,000
  EXPECT_DOUBLE_EQ(b["cost"]["capex_usd"].get<double>() - a["cost"]["capex_usd"].get<double>(),
                   a["bom"]["nics"].get<double>() * 500);
  EXPECT_EQ(a["bom"]["nics"], 64);
  // --cost-csv: the priced bill as a tidy table whose totals add up to the capex
  const std::string csv = (d / "cost.csv").string();
  ASSERT_EQ(run("design " + f + " --set cost.sr_max_length=50m --cost-csv " + csv).status, 0);
  std::istringstream in(podnet::cli::testing::read_file(csv));
  std::string line;
  std::getline(in, line);
  // label: "nic-leaf: SR transceiver 400G"; count_unit says what count counts (parts, metres of fibre, kWh).
  EXPECT_EQ(line, "group,label,part,speed_gbps,count,count_unit,unit_usd,total_usd");
  double sum = 0, total = -1;
  int rows = 0;
  std::string energy;
  const auto total_usd = [](const std::string& l) { return std::stod(l.substr(l.rfind(',') + 1)); };
  while (std::getline(in, line)) {
    if (line.rfind("total,", 0) == 0) total = total_usd(line);
    else if (line.rfind("energy,", 0) == 0) energy = line;
    else {
      sum += total_usd(line);
      ++rows;
    }
  }
  EXPECT_EQ(rows, static_cast<int>(a["cost"]["items"].size()));
  EXPECT_DOUBLE_EQ(sum, a["cost"]["capex_usd"].get<double>());
  // Closed by the bill's total and a year's energy (kWh x $/kWh = $ a year), as design prints them.
  EXPECT_DOUBLE_EQ(total, a["cost"]["capex_usd"].get<double>());
  EXPECT_NE(energy.find("energy per year, kWh"), std::string::npos) << energy;
  EXPECT_NE(energy.find(",kWh,"), std::string::npos) << energy;
  EXPECT_DOUBLE_EQ(total_usd(energy), a["cost"]["energy_usd_per_year"].get<double>());
}

}  // namespace
