// What podnet prints, checked against what the run did: headers that name only what applies, ratios with
// what was asked, output paths joined as paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/test_util.hpp"

namespace {

namespace fs = std::filesystem;
using podnet::cli::testing::flat;
using podnet::cli::testing::Result;
using podnet::cli::testing::run;

// An incast has no ring and no tuner: its header said 'topology_aware ring order' and 'tuner: algorithms auto'.
TEST(Presentation, IncastHeaderNamesNoRingOrderNorTuner) {
  const Result r = run("bench leafspine-8k --set topology.gpus=64 --op incast --gpus 0-63:8 --min 1MiB --max 1MiB "
                       "--engine analytical");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("podnet bench: incast on 8 GPUs"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ring order"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("tuner:"), std::string::npos) << r.out;
  // A ring all-reduce keeps both (a plan without rings, as the tuner's NVLS tree, names no ring order).
  const Result a = run(
      "bench leafspine-8k --set topology.gpus=64 --gpus 0-15 --min 1MiB --max 1MiB --engine analytical --algo ring");
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_NE(a.out.find("ring order"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("tuner:"), std::string::npos) << a.out;
}

// 2:1 on radix-128 leaves: floor(128 x 2/3) = 85 down, 43 up, of which 40 cabled (spread evenly over the
// spines): 85 / 40 = 2.125. The table printed 2.13:1 and said why only in the notes.
TEST(Presentation, OversubscriptionSaysWhatWasAsked) {
  const Result r = run("design aipod-16k --set topology.oversubscription=2:1");
  ASSERT_EQ(r.status, 0) << r.out;
  // The cell is wider than the table may be (Table::kTableWidth): it wraps at a space, in its column.
  EXPECT_NE(r.out.find("2.125:1 (asked 2:1: leaf: 85 down / 43 up ports (40 of them cabled: 3 left\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("idle so the rest spread evenly))\n"), std::string::npos) << r.out;
  // A ratio built as asked says nothing more.
  const Result s = run("design aipod-16k");
  EXPECT_EQ(s.out.find("asked"), std::string::npos) << s.out;
}

// GPUs a job leaves idle are said, with why. 1,024 GPUs at TP4 x CP2 x PP4 fit 32 replicas; a batch of 1,000
// splits over at most 25 (the largest divisor of 1,000 up to 32), so 224 GPUs idle. DP32 takes a batch that is a
// multiple of 32 x pp 4 = 128 (the interleaved schedule's multiple of pp microbatches): 896 or 1,024 around 1,000.
// Given dp (aipod-16k's 128 for a 70B TP8 x PP4 job): 512 replicas fit. Both ran silently on fewer GPUs.
TEST(Presentation, IdleGpusAreSaidWithWhy) {
  const std::string job =
      "train leafspine-8k --engine analytical --set workload.model=llama3-70b --set topology.gpus=1024";
  const Result r = run(job + " --set workload.global_batch=1000");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(flat(r.out).find(
                "224 of the fabric's 1,024 GPUs stay idle: DP25 is the largest that divides the 1,000 "
                "microbatches of 1 (global_batch 1,000 / microbatch 1); global_batch 896 or 1,024 would run DP32"),
            std::string::npos)
      << r.out;
  const Result full = run(job);
  EXPECT_EQ(full.out.find("stay idle"), std::string::npos) << full.out;
  // CP's ranks share the gradient groups: 16 groups of dp x cp = 64 are named so.
  EXPECT_NE(full.out.find("DP x CP (gradients) 16 x 64"), std::string::npos) << full.out;
  const Result given = run("train aipod-16k --engine analytical --set workload.model=llama3-70b --set workload.tp=8 "
                           "--set workload.pp=4");
  ASSERT_EQ(given.status, 0) << given.out;
  EXPECT_NE(given.out.find("12,288 of the fabric's 16,384 GPUs stay idle: workload.dp is 128; left out (--set "
                           "workload.dp=) it would be 512"),
            std::string::npos)
      << given.out;
  // aipod-16k doubled: its pinned DP128 is also the largest its batch gives an interleaved pipeline, and a larger
  // batch alone keeps DP128 (the note had said "global_batch 4,096 would run DP256", which then ran out of memory).
  // 32,768 / (8 x 16) = 256 replicas; 256 x 16 microbatches = 4,096.
  const Result doubled = run("train aipod-16k --engine analytical --set topology.gpus=32768");
  ASSERT_EQ(doubled.status, 0) << doubled.out;
  EXPECT_NE(flat(doubled.out)
                .find("16,384 of the fabric's 32,768 GPUs stay idle: workload.dp is 128: to run DP256, "
                      "leave it out (--set workload.dp=) and set global_batch 4,096"),
            std::string::npos)
      << doubled.out;
  const Result fixed = run("train aipod-16k --engine analytical --set topology.gpus=32768 --set workload.dp= --set "
                           "workload.global_batch=4096");
  ASSERT_EQ(fixed.status, 0) << fixed.out;
  EXPECT_NE(fixed.out.find("(32,768 of 32,768 GPUs)"), std::string::npos) << fixed.out;
}

// Too many GPUs: the product, and the dp that fits (4 x 2 x 4 = 32 a replica: 1,024 / 32 = 32).
TEST(Presentation, TooManyGpusNamesTheDpThatFits) {
  const Result r = run("train leafspine-8k --engine analytical --set workload.model=llama3-70b --set "
                       "topology.gpus=1024 --set workload.dp=64",
                       true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("tp x cp x pp x dp = 4 x 2 x 4 x 64 = 2,048 GPUs, but the fabric has 1,024; expected dp at "
                       "most 32"),
            std::string::npos)
      << r.out;
  // dp: auto, as `podnet list keys` shows the default, is dp left out.
  const Result a = run("train leafspine-8k --engine analytical --set workload.model=llama3-70b --set "
                       "topology.gpus=1024 --set workload.dp=auto");
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_NE(a.out.find("TP4 x CP2 x PP4 x DP32"), std::string::npos) << a.out;
  // tp x cp x pp alone too many: llama3-8b's recipe dropped for tp 8 leaves podnet's pp 8 (8 x 1 x 8 = 64 on 16
  // GPUs); the pp that fits is named, and --set workload.dp, which is not the cause, is not blamed.
  const Result pp = run("train leafspine-8k --set topology.gpus=16 --set workload.model=llama3-8b --set workload.tp=8 "
                        "--set workload.dp=2",
                        true);
  EXPECT_EQ(pp.status, 2) << pp.out;
  EXPECT_NE(pp.out.find("--set workload.tp: tp x cp x pp = 8 x 1 x 8 = 64 GPUs before any data parallelism, but the "
                        "fabric has 16; expected pp at most 2 (--set workload.pp=2), or a smaller tp or cp"),
            std::string::npos)
      << pp.out;
}

// A probe mesh that leaves links unprobed says so, and what covers more: 128 GPUs on 2 tiers with rails have 128
// NIC links and 256 leaf-spine links, 768 directions; a rail's NICs share one leaf, so the rail mesh crosses only
// the NIC links, 256 directions (512 unprobed, 66.7 %), and a fault on a spine read as "suspects: none".
TEST(Presentation, UnprobedLinksAreSaid) {
  const fs::path d = podnet::cli::testing::temp_dir("podnet_presentation_test");
  const std::string file = podnet::cli::testing::write_file(
      d, "faults.yaml",
      "schema_version: 1\nname: small-faults\nseed: 1\n"
      "topology: {family: fat_tree, gpus: 128, tiers: 2, rail_optimized: true}\n"
      "server: {gpus: 8, nics: 8, nic_speed: 400Gbps}\nswitch: {radix: 64, port_speed: 400Gbps}\n"
      "faults:\n  - {kind: corrupt, switch: \"pod000-spine-002\", probability: 0.0005}\n");
  const Result r = run("diagnose " + file);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(flat(r.out).find(
                "256 of 768 link directions covered note: 512 link directions (66.7%) carry no probe, so a "
                "fault on them cannot be seen; --probe leaf-mesh or full-mesh covers more"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1,000 probes/s per NIC"), std::string::npos) << r.out;
}

// `--out DIR/` wrote DIR//design.json in its message.
TEST(Presentation, OutPathsAreJoinedAsPaths) {
  const fs::path d = podnet::cli::testing::temp_dir("podnet_presentation_test") / "results";
  fs::remove_all(d);
  const Result r = run("design leafspine-8k --set topology.gpus=64 --out " + d.string() + "/", true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("podnet: wrote " + (d / "design.json").string() + ", "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("//"), std::string::npos) << r.out;
}

// One key of a recipe group given leaves the group's other keys to podnet's defaults: the report says which
// values of the recipe were not used (llama3-70b's layout is TP4 x CP2 x PP4, v=5; pp=8 alone ran TP8 x PP8,
// CP1, v=1 without a word), and that the global batch is podnet's default when the recipe gives none.
TEST(Presentation, ARecipeGroupNotUsedIsSaid) {
  const Result r =
      run("train leafspine-8k --engine analytical --set workload.model=llama3-70b --set topology.gpus=1024 "
          "--set workload.pp=8");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("note: workload.pp is given, so the llama3-70b recipe's other layout keys are not used (cp 2, "
                       "interleave 5, tp 4)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("note: global batch 1,536 is podnet's default (the llama3-70b recipe gives none)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  network: fat_tree, rail-optimized, 2 switch tiers, 8 x 400Gbps NICs per server, rocev2\n"),
            std::string::npos)
      << r.out;
  // The whole layout given: no note on it.
  const Result w =
      run("train leafspine-8k --engine analytical --set workload.model=llama3-70b --set topology.gpus=1024 "
          "--set workload.pp=8 --set workload.tp=4 --set workload.cp=2 --set workload.interleave=5");
  ASSERT_EQ(w.status, 0) << w.out;
  EXPECT_EQ(w.out.find("layout keys are not used"), std::string::npos) << w.out;
  // A key given at the recipe's own value keeps its group: the same run, no note (it read full recompute).
  const std::string eight =
      "train leafspine-8k --engine analytical --set workload.model=llama3-8b --set topology.gpus=64";
  const Result plain = run(eight + " --format json"),
               same = run(eight + " --set workload.bytes_per_grad=4 --format json"),
               other = run(eight + " --set workload.bytes_per_grad=2 --allow-oom");
  ASSERT_EQ(same.status, 0) << same.out;
  EXPECT_EQ(nlohmann::json::parse(plain.out)["iteration_time_ms"],
            nlohmann::json::parse(same.out)["iteration_time_ms"]);
  EXPECT_NE(other.out.find("note: workload.bytes_per_grad is given, so the llama3-8b recipe's other memory keys are "
                           "not used"),
            std::string::npos)
      << other.out;
}

// Keys given at the recipe's own values keep its group (a what-if that repeats a value changes nothing), which a user
// who gives tp and pp does not expect: said, with the values the recipe still sets (llama3-70b: TP4 x CP2 x PP4, v=5).
TEST(Presentation, ARecipeGroupKeptAtItsOwnValuesIsSaid) {
  const Result r =
      run("train leafspine-8k --engine analytical --set workload.model=llama3-70b --set topology.gpus=1024 "
          "--set workload.tp=4 --set workload.pp=4");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(flat(r.out).find("note: workload.tp, workload.pp are given at the llama3-70b recipe's own values, so the "
                             "recipe's other layout keys apply too (cp 2, interleave 5): give them to change them"),
            std::string::npos)
      << r.out;
  EXPECT_NE(flat(r.out).find("(given by the scenario instead: tp, pp)"), std::string::npos) << r.out;
  // A preset with no published recipe: which of podnet's defaults it runs with (full recompute, 300B tokens).
  const Result m =
      run("train leafspine-8k --engine analytical --set workload.model=mixtral-8x7b --set topology.gpus=1024");
  ASSERT_EQ(m.status, 0) << m.out;
  EXPECT_NE(flat(m.out).find("note: podnet holds no published training recipe for mixtral-8x7b, so these are podnet's "
                             "defaults: bytes_per_grad 2, global_batch 1536, microbatch 1, recompute full"),
            std::string::npos)
      << m.out;
  EXPECT_NE(flat(m.out).find("tokens 300B"), std::string::npos) << m.out;
  // A model with a recipe has no such note.
  EXPECT_EQ(r.out.find("no published training recipe"), std::string::npos) << r.out;
}

// A batch that does not split over a --set dp blames that --set, not the file's global_batch line, and suggests
// batches the interleaved schedule also takes: dp 30 with pp 4 needs multiples of 30 x 4 = 120 around 1,536.
TEST(Presentation, ABatchThatDoesNotSplitBlamesTheSetDp) {
  const Result r =
      run("train leafspine-8k --engine analytical --set workload.model=llama3-70b --set topology.gpus=1024 "
          "--set workload.dp=30",
          true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(flat(r.out).find("error: --set workload.dp: global_batch 1,536 is not divisible by microbatch x dp = 1 x "
                             "30 = 30; nearest that also give each pipeline a multiple of pp = 4 microbatches (the "
                             "interleaved schedule's need): 1,440 or 1,560"),
            std::string::npos)
      << r.out;
  // 1,440 runs: 48 microbatches a pipeline.
  EXPECT_EQ(run("train leafspine-8k --engine analytical --set workload.model=llama3-70b --set topology.gpus=1024 "
                "--set workload.dp=30 --set workload.global_batch=1440")
                .status,
            0);
}

// The critical stage of Llama 3 405B is stage 0, which holds 7 layers of the others' 8: its bubble counts its wait for
// the busier stages. The note gives the busiest stage's compute and bubble beside it, as the per-stage table has them.
TEST(Presentation, TheBusiestStageIsNamedBesideTheCriticalOne) {
  const Result r = run("train aipod-16k --engine analytical");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string f = flat(r.out);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(f, m,
                                std::regex(R"(The busiest stage, 1, computes ([0-9,.]+) ms \([0-9.]+%\) with a )"
                                           R"(bubble of ([0-9,.]+) ms)")))
      << r.out;
  std::smatch row;
  ASSERT_TRUE(std::regex_search(r.out, row, std::regex(R"(
    1 +8 +([0-9,.]+) .* ([0-9,.]+)
)"))) << r.out;
  EXPECT_EQ(m[1].str(), row[1].str());
  EXPECT_EQ(m[2].str(), row[2].str());
  // Why the bubble is above the ideal one: the busiest stage computes more than the critical one, by
  // busiest / critical - 1 of the two computes printed (8 layers against 7: about 14 %).
  const auto number = [](std::string x) {
    x.erase(std::remove(x.begin(), x.end(), ','), x.end());
    return std::stod(x);
  };
  std::smatch crit, more;
  ASSERT_TRUE(std::regex_search(r.out, crit, std::regex(R"(
    compute +([0-9,.]+) ms)")))
      << r.out;
  ASSERT_TRUE(std::regex_search(f, more,
                                std::regex(R"(It computes ([0-9]+)% more than stage 0, and the others wait )"
                                           R"(for it: hence a bubble above the ideal [0-9.]+% of even )"
                                           R"(stages\.)")))
      << r.out;
  EXPECT_EQ(std::stoi(more[1].str()),
            static_cast<int>(std::lround(100 * (number(m[1].str()) / number(crit[1].str()) - 1))));
  // podnet run prints train's rows: days with random failures and the capex per token/s.
  const Result whole = run("run");
  ASSERT_EQ(whole.status, 0) << whole.out;
  EXPECT_NE(whole.out.find("  days to train with random failures "), std::string::npos) << whole.out;
  EXPECT_NE(whole.out.find("  network capex per token/s "), std::string::npos) << whole.out;
}

// What a missed latency target advises follows what missed: a prompt's length sets the first token's time, not the
// pace of the others.
// With injected failures the headline rows under "iteration time with the injected failures" are the failure-free
// run's: their labels say so (MFU and tokens/s read as the failed run's).
TEST(Presentation, TheRowsOfTheFailureFreeRunSaySo) {
  const Result r = run("train leafspine-8k --set workload.model=llama3-70b --set topology.gpus=1024 --engine flow "
                       "--fail-links leaf-spine=2%");
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* row :
       {"MFU (model FLOPs), no failures", "tokens/s, no failures", "HFU (with recompute), no failures"})
    EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
  const Result plain = run("train leafspine-8k --set workload.model=llama3-70b --set topology.gpus=1024 --engine "
                           "analytical");
  EXPECT_EQ(plain.out.find(", no failures"), std::string::npos) << plain.out;
}

// One request alone is the stream's median request: prompts uniform in [1,024, 4,096] give 1,024 + 3,072 / 2 =
// 2,560 tokens (it took the shortest, 1,024, against a stream of 1,024 to 4,096).
TEST(Presentation, OneRequestAloneIsTheStreamsMedian) {
  const Result r = run("inference leafspine-8k --set workload.model=llama3-70b --set inference.prompt_max=4096");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("time to first token (2,560 prompt tokens, the range's median)"), std::string::npos) << r.out;
  const Result fixed = run("inference leafspine-8k --set workload.model=llama3-70b");
  ASSERT_EQ(fixed.status, 0) << fixed.out;
  EXPECT_NE(fixed.out.find("time to first token (1,024 prompt tokens)"), std::string::npos) << fixed.out;
}

TEST(Presentation, AMissedTargetsAdviceFollowsWhatMissed) {
  const std::string base = "inference leafspine-8k --set workload.model=llama3-70b";
  const Result tpot = run(base + " --target-tpot 5ms");
  ASSERT_EQ(tpot.status, 0) << tpot.out;
  EXPECT_NE(flat(tpot.out).find("try a larger inference.tp or inference.precision=fp8"), std::string::npos) << tpot.out;
  EXPECT_EQ(tpot.out.find("shorter prompts"), std::string::npos) << tpot.out;
  const Result ttft = run(base + " --target-ttft 10ms");
  ASSERT_EQ(ttft.status, 0) << ttft.out;
  EXPECT_NE(flat(ttft.out).find("try a larger inference.tp, inference.precision=fp8 or shorter prompts"),
            std::string::npos)
      << ttft.out;
}

// A NIC faster than the switch ports: the error names both ways out, faster ports or the NIC's ports on planes (1.6T
// NICs on 102.4T switches of 128 x 800G: 2 planes). A design out of the checkpoint model's range says so in its
// table cell, not only in a note (clos-1m-800g: an interruption every 2.6 min against 5 and 10 min costs).
TEST(Presentation, AFasterNicNamesPlanesAndAnOutOfRangeCheckpointIsMarked) {
  const Result r = run("design clos-128k --set server.nic_speed=1.6Tbps", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(flat(r.out).find("set switch.port_speed=1.6Tbps with it, or keep the switches and give each NIC 2 ports of "
                             "800Gbps on 2 planes: server.nic_planes=2)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(run("design clos-128k --set server.nic_speed=1.6Tbps --set server.nic_planes=2").status, 0);
  const Result rel = run("reliability clos-1m-800g");
  ASSERT_EQ(rel.status, 0) << rel.out;
  EXPECT_NE(rel.out.find(" days (out of the model's range: see the notes)"), std::string::npos) << rel.out;
  EXPECT_EQ(run("reliability aipod-16k").out.find("out of the model's range"), std::string::npos);
}

// An option and a --set that disagree: a value wrong in itself is reported as such, with the nearest, before the
// conflict (it read "--engine and --set network.engine give network.engine different values").
TEST(Presentation, AWrongValueBesideItsOptionIsNamedFirst) {
  const Result r = run("train leafspine-8k --engine analytical --set network.engine=analytic", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("analytic"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'analytic' is not valid (did you mean 'analytical'?)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("different values"), std::string::npos) << r.out;
  const Result both = run("train leafspine-8k --engine analytical --set network.engine=flow", true);
  EXPECT_EQ(both.status, 2) << both.out;
  EXPECT_NE(both.out.find("give network.engine different values (analytical and flow): give one"), std::string::npos)
      << both.out;
}

// What a layout or the servers leave out: an MoE model without expert parallelism runs no all-to-all; a NIC
// faster than the GPU's PCIe link is bound by it (800 Gb/s = 100 GB/s against PCIe Gen5's 64 GB/s). TP1 prints
// no TP collective and no SP.
TEST(Presentation, AnMoeWithoutEpAndANicPastPcieAreSaid) {
  Result r = run("train leafspine-8k --engine analytical --set workload.model=mixtral-8x7b --set topology.gpus=1024");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("note: mixtral-8x7b has 8 experts and workload.ep is 1: every GPU holds all of them and no "
                       "all-to-all runs"),
            std::string::npos)
      << r.out;
  r = run("train leafspine-8k --engine analytical --set server.nic_speed=800Gbps --set switch.port_speed=800Gbps");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("note: a NIC's 800Gbps (100 GB/s) is more than a GPU's PCIe link (64 GB/s)"), std::string::npos)
      << r.out;
  r = run("train leafspine-8k --engine analytical --set server.nic_speed=800Gbps --set switch.port_speed=800Gbps "
          "--set server.pcie_bandwidth=128GB/s");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("PCIe link"), std::string::npos) << r.out;
  r = run("train leafspine-8k --engine analytical --set workload.model=mixtral-8x7b --set topology.gpus=1024 "
          "--set workload.tp=1 --set workload.pp=8 --set workload.ep=8 --set workload.sequence_parallel=true");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find(", SP"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("one TP"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("has 8 experts"), std::string::npos) << r.out;
  // design says it too: its injection and bisection figures are the NICs' (800 Gb/s), a GPU's PCIe link
  // carries 64 GB/s = 512 Gb/s. With PCIe Gen6 (128 GB/s = 1,024 Gb/s) the NICs bind: no note.
  r = run(
      "design leafspine-8k --set topology.gpus=1024 --set server.nic_speed=800Gbps --set switch.port_speed=800Gbps");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("note: each GPU reaches its NICs over PCIe at 512 Gbps, less than their 800 Gbps"),
            std::string::npos)
      << r.out;
  r = run("design leafspine-8k --set topology.gpus=1024 --set server.nic_speed=800Gbps --set switch.port_speed=800Gbps "
          "--set server.pcie_bandwidth=128GB/s");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("over PCIe"), std::string::npos) << r.out;
}

// A preset whose shape the scenario changed is not named as the published model; an out-of-memory error blames
// the key the user changed (layers), not the model they chose.
TEST(Presentation, AReshapedPresetSaysSo) {
  const std::string eight =
      "train leafspine-8k --engine analytical --set workload.model=llama3-8b --set topology.gpus=64";
  Result r = run(eight + " --set workload.layers=40 --allow-oom");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("podnet train: a model from llama3-8b (layers changed) (9.8B params)"), std::string::npos)
      << r.out;
  r = run(eight + " --set workload.layers=40", true);
  EXPECT_NE(r.out.find("podnet: error: --set workload.layers: the job (a model from llama3-8b, TP1 x PP1 x CP2 x DP32) "
                       "needs 87.5 GB per GPU"),
            std::string::npos)
      << r.out;
  r = run(eight);
  EXPECT_NE(r.out.find("podnet train: llama3-8b (8.0B params)"), std::string::npos) << r.out;
  r = run("inference leafspine-8k --set workload.model=mixtral-8x7b --set workload.layers=16");
  EXPECT_NE(r.out.find("podnet inference: a model from mixtral-8x7b (layers changed)"), std::string::npos) << r.out;
}

// train gives the fabric's network capex (design's, to the dollar) and its capex per token/s of the job; a sweep of
// several studies is refused, naming the train study's columns that give that figure.
TEST(Presentation, TrainGivesTheNetworkCapexPerTokenPerSecond) {
  const Result d = run("design leafspine-8k --format json"), t = run("train leafspine-8k --engine analytical -f json");
  ASSERT_EQ(t.status, 0) << t.out;
  const nlohmann::json dj = nlohmann::json::parse(d.out), tj = nlohmann::json::parse(t.out);
  const double capex = dj["cost"]["capex_usd"].get<double>();
  EXPECT_DOUBLE_EQ(tj["cost"]["network_capex_usd"].get<double>(), capex);
  EXPECT_NEAR(tj["cost"]["network_capex_usd_per_token_per_second"].get<double>(),
              capex / tj["tokens_per_second"].get<double>(), 1e-6);
  const Result s = run("sweep leafspine-8k --study design,train --vary topology.oversubscription=1,2", true);
  EXPECT_EQ(s.status, 2) << s.out;
  EXPECT_NE(s.out.find("a sweep runs one study; the train study also gives the fabric's network capex"),
            std::string::npos)
      << s.out;
}

// Auto DP with the interleaved schedule: 8,192 GPUs at TP4 x CP2 x PP4 fit 256 replicas, but 1,536 / 256 = 6
// microbatches per pipeline is no multiple of pp 4 (the schedule's need), so the run failed. 192 gives 8. DP256
// takes multiples of 256 x 4 = 1,024: 1,024 or 2,048 around 1,536.
TEST(Presentation, AutoDpKeepsTheInterleavedScheduleRunnable) {
  const Result r = run("train leafspine-8k --engine analytical --set workload.model=llama3-70b");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(
      flat(r.out).find(
          "2,048 of the fabric's 8,192 GPUs stay idle: DP192 is the largest that gives each pipeline a "
          "multiple of pp 4 microbatches (here 8), as the interleaved schedule (interleave 5) needs; global_batch "
          "1,024 or 2,048 would run DP256"),
      std::string::npos)
      << r.out;
}

// An error is blamed on what the user typed: --set-b in diff, a default (not a --set) for a key the user never
// gave in a section another flag created, a recipe's value as the recipe's.
TEST(Presentation, ErrorsNameWhatTheUserTyped) {
  const Result d = run("diff aipod-16k aipod-16k --set-b server.nic_speed=800Gbps", true);
  EXPECT_NE(d.status, 0);
  EXPECT_NE(d.out.find("--set-b server.nic_speed: server.nic_speed = 800Gbps exceeds switch.port_speed = 400Gbps"),
            std::string::npos)
      << d.out;
  EXPECT_NE(d.out.find("set switch.port_speed=800Gbps with it"), std::string::npos) << d.out;
  // One 8-GPU server: the default layout cannot grow more stages (TP8 x PP2 would need 16 GPUs), so the default
  // key is blamed as the default.
  const Result i = run("inference leafspine-8k --set workload.model=llama3-405b --rate 2 --set topology.gpus=8", true);
  EXPECT_NE(i.status, 0);
  EXPECT_NE(i.out.find("inference.tp (default): the weights of llama3-405b"), std::string::npos) << i.out;
  EXPECT_EQ(i.out.find("--set inference.tp"), std::string::npos) << i.out;
  EXPECT_NE(i.out.find("or serve a smaller workload.model"), std::string::npos) << i.out;
  // Case does not count, and Megatron-LM's names point at podnet's.
  const Result g = run("train aipod-16k --set workload.gpu=H100", true);
  EXPECT_NE(g.out.find("(did you mean 'h100'?)"), std::string::npos) << g.out;
  const Result p = run("train aipod-16k --set workload.pipeline_model_parallel_size=8", true);
  EXPECT_NE(p.out.find("(did you mean 'pp'?)"), std::string::npos) << p.out;
}

// Another family over a built-in scenario: --set topology.family keeps the file's other topology keys, so the
// error says so and how to drop them; `--set KEY=` drops one; `auto` on an optional key leaves it to run time.
TEST(Presentation, ChangingTheFamilyOnTheCommandLine) {
  const Result k = run("design leafspine-8k --set topology.family=dragonfly", true);
  EXPECT_NE(k.status, 0);
  EXPECT_NE(k.out.find("topology.tiers: not a key of topology.family dragonfly (--set topology.family changes the "
                       "family but keeps the file's other topology keys)"),
            std::string::npos)
      << k.out;
  EXPECT_NE(k.out.find("or --set topology.tiers= to drop this key"), std::string::npos) << k.out;
  const Result d = run("design leafspine-8k --set topology.family=dragonfly --set topology.tiers= --set "
                       "topology.rail_optimized= --set topology.oversubscription=",
                       true);
  ASSERT_EQ(d.status, 0) << d.out;
  // Each drop is said, with the default it leaves (an unset shell variable in --set topology.gpus=$GPUS reads so).
  EXPECT_NE(d.out.find("podnet: note: --set topology.tiers= (nothing after '=') drops the key from the scenario"),
            std::string::npos)
      << d.out;
  const Result g = run("design leafspine-8k --set topology.gpus=", true);
  EXPECT_NE(g.out.find("--set topology.gpus= (nothing after '=') drops the key from the scenario: it takes its "
                       "default, 1024"),
            std::string::npos)
      << g.out;
  EXPECT_NE(d.out.find("(dragonfly"), std::string::npos) << d.out;
  // dragonfly-16k gives p = 8, a = 16, h = 8; auto takes each back to the balanced default from the GPUs.
  const Result a = run("design dragonfly-16k --set topology.gpus=1024 --set topology.p=auto --set topology.a=auto "
                       "--set topology.h=auto",
                       true);
  ASSERT_EQ(a.status, 0) << a.out;
  // 1,024 GPUs: the smallest balanced p with 2p^2(2p^2+1) >= 1,024 is 4 (p = 3: 18 x 19 = 342).
  EXPECT_NE(a.out.find("note: p = 4, a = 8, h = 4"), std::string::npos) << a.out;
  // An 800 Mb/s NIC is named so, not rounded to "1G".
  const Result m = run("design leafspine-8k --set server.nic_speed=800Mbps");
  EXPECT_NE(m.out.find("server: NIC 800M "), std::string::npos) << m.out;
}

// A capacity planner's what-ifs: network capex per token/s says when the job leaves most of the fabric idle
// (llama3-8b's recipe, CP2 x DP8: 16 of 1,024 GPUs); diff takes --engine as train does; a key's prefix
// suggests the key (cost.switch -> switch_port); the servers' capex group reads as their NICs.
TEST(Presentation, CapacityPlannersWhatIfs) {
  const Result d = run("diff leafspine-8k leafspine-8k --engine analytical --set topology.gpus=1024 --set "
                       "workload.model=llama3-8b --set workload.dp=8 --study design,train --set-b cost.switch_port=600",
                       true);
  ASSERT_EQ(d.status, 0) << d.out;
  EXPECT_NE(d.out.find("(each side's job uses 16 of its fabric's 1,024 GPUs: the whole network is charged to it"),
            std::string::npos)
      << d.out;
  // A word three letters from every engine is no typo: the engines are listed, none suggested (`fast` had
  // suggested flow, not the fastest engine).
  const Result e = run("diff leafspine-8k leafspine-8k --engine fast", true);
  EXPECT_NE(e.out.find("--engine: 'fast' is not valid: expected one of: analytical, flow, packet"), std::string::npos)
      << e.out;
  const Result e2 = run("diff leafspine-8k leafspine-8k --engine flwo", true);
  EXPECT_NE(e2.out.find("--engine: 'flwo' is not valid (did you mean 'flow'?)"), std::string::npos) << e2.out;
  const Result k = run("design leafspine-8k --set cost.switch=30000", true);
  EXPECT_NE(k.out.find("(did you mean 'switch_port'?)"), std::string::npos) << k.out;
  const Result g = run("design leafspine-8k");
  EXPECT_NE(g.out.find("  capex: server NICs "), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("  IT power, servers included (kW) "), std::string::npos) << g.out;
}

}  // namespace
