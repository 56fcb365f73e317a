// The optimize study with stand-in design and train studies: the Pareto
// front, pruning on design metrics, the reference verdict, and the axes.
#include "study/optimize.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>

#include "core/error.hpp"

namespace podnet::study {
namespace {

std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("podnet-optimize-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto p = dir / name;
  for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(p.string() + ext);
  return p.string();
}

TEST(Optimize, ParetoFrontByHand) {
  // (capex, power), both minimised:
  //   0 (10, 5)  1 (8, 6)  2 (12, 4)  3 (10, 6): dominated by 0 (same capex, more power)
  //   4 (8, 6): equal to 1, later -> not on the front, "dominated" by 1
  //   5 (13, 7): dominated by 0 (worse in both)
  const std::vector<std::vector<double>> rows = {{10, 5}, {8, 6}, {12, 4}, {10, 6}, {8, 6}, {13, 7}};
  std::vector<int64_t> by;
  EXPECT_EQ(pareto_front(rows, {false, false}, &by), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(by, (std::vector<int64_t>{-1, -1, -1, 0, 1, 0}));
  // Maximising the second objective instead: (8, 6) and (10, 6) ... 1 beats 3 (cheaper, same); 5 (13, 7) is the
  // most; 0 (10, 5) is beaten by 1 (cheaper and more); 2 (12, 4) by 1.
  EXPECT_EQ(pareto_front(rows, {false, true}, nullptr), (std::vector<size_t>{1, 5}));
}

TEST(Optimize, AxesOfTheSpace) {
  OptimizeSpace s;
  s.gpus = 1024;
  const auto axes = optimize_axes(s);
  // topology shapes per family: 2 tiers x 2 leaf ratios + 3 tiers x 2 x 2 = 6; two families: 12
  ASSERT_EQ(axes.size(), 6u);
  EXPECT_EQ(axes[0].key, "topology");
  EXPECT_EQ(axes[0].values.size(), 12u);
  EXPECT_EQ(axes[0].values[0], "{family: rail_clos, gpus: 1024, tiers: 2, oversubscription: \"1:1\"}");
  EXPECT_EQ(axes[2].zip, "speed");
  EXPECT_EQ(axes[3].zip, "speed");
  // 12 x 2 radixes x 2 speeds (zipped: one dimension) x 2 NIC counts x 2 AOC reaches = 192 points
  EXPECT_EQ(cartesian(axes).size(), 192u);
  EXPECT_EQ(point_label(axes, cartesian(axes).front().values),
            "rail_clos 2 tiers 1:1, radix 64, 400Gbps, 4 NICs, no AOC");
  s.gpus = 0;
  EXPECT_THROW(optimize_axes(s), InputError);
  // The axes are a Clos's: another family is refused by name (it failed on topology.tiers, "did you mean dims").
  s.gpus = 1024;
  s.families = {"torus"};
  try {
    (void)optimize_axes(s);
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--families torus: optimize searches the Clos families fat_tree and "
                                         "rail_clos"),
              std::string::npos)
        << e.what();
  }
  // A value no family takes names its own option, not every option the topology axis is built from.
  s.families = {"rail_clos"};
  s.tiers = {2, 5};
  try {
    (void)optimize_axes(s);
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--tiers 5: not valid for rail_clos's topology.tiers", 0), 0u) << e.what();
  }
}

TEST(Optimize, BaseScalesDataParallelism) {
  const std::string yaml =
      "schema_version: 1\nname: x\ntopology: {family: rail_clos, gpus: 16384, groups_per_pod: 16}\n"
      "failures: [{random: 1}]\nworkload:\n  model: llama3-405b\n  tp: 8\n  pp: 16\n  cp: 1\n  dp: 128\n  "
      "global_batch: 2048\n";
  const std::string base = optimize_base(yaml, 1024, "");
  // 1024 / (8 x 16 x 1) = 8 replicas; batch 2048 / 128 x 8 = 128; topology reduced to family and gpus
  EXPECT_NE(base.find("dp: 8\n"), std::string::npos) << base;
  EXPECT_NE(base.find("global_batch: 128"), std::string::npos) << base;
  // Another model (--workload): the batch the scenario wrote for its own model stays, as train keeps it
  // (scaled by the old model's replicas, a 70B job read 128 sequences where train runs 2,048).
  const std::string other = optimize_base(yaml, 1024, "llama3-70b");
  EXPECT_NE(other.find("dp: 8\n"), std::string::npos) << other;
  EXPECT_NE(other.find("global_batch: 2048"), std::string::npos) << other;
  EXPECT_NE(other.find("model: llama3-70b"), std::string::npos) << other;
  EXPECT_EQ(base.find("groups_per_pod"), std::string::npos) << base;
  EXPECT_EQ(base.find("failures"), std::string::npos) << base;
  EXPECT_THROW(optimize_base(yaml, 1000, ""), InputError);  // 1000 is not a multiple of 128
}

TEST(Optimize, TheReferenceRunsTheBasesWorkloadWhole) {
  // leafspine-8k's job made for 1,024 GPUs: dp 16, batch 1536 / 128 x 16 = 192. A reference of 1,024 GPUs whose
  // own workload has batch 1,536 (ib-sharp-1k's) used to keep it: 8x the points' sequences, and its iteration
  // 5.4x theirs. It now runs the base's workload, every key of it, on its own fabric.
  const std::string base = optimize_base(
      "schema_version: 1\nname: x\ntopology: {family: rail_clos, gpus: 8192}\nworkload:\n  model: llama3-70b\n  "
      "tp: 8\n  pp: 8\n  cp: 1\n  microbatch: 1\n  global_batch: 1536\n",
      1024, "");
  const std::string ref = optimize_reference(
      "schema_version: 1\nname: r\ntopology: {family: fat_tree, gpus: 1024, tiers: 2}\n"
      "failures: [{random: 1}]\nworkload:\n  model: gpt3-175b\n  tp: 4\n  pp: 4\n  global_batch: 1536\n  "
      "interleave: 2\n",
      base);
  const YAML::Node r = YAML::Load(ref), b = YAML::Load(base);
  EXPECT_EQ(r["workload"]["global_batch"].as<int64_t>(), 192) << ref;
  EXPECT_EQ(r["workload"]["dp"].as<int64_t>(), 16) << ref;
  EXPECT_EQ(r["workload"]["model"].as<std::string>(), "llama3-70b") << ref;
  EXPECT_FALSE(r["workload"]["interleave"]) << ref;  // the reference's own keys do not survive
  EXPECT_EQ(YAML::Dump(r["workload"]), YAML::Dump(b["workload"]));
  EXPECT_EQ(r["topology"]["family"].as<std::string>(), "fat_tree") << ref;  // its fabric as it is
  EXPECT_FALSE(r["failures"]) << ref;
}

TEST(Optimize, BaseWithDataParallelismAutoFillsTheGpus) {
  // dp absent (auto), as in the built-in scenarios other than aipod-16k. On the scenario's own 8,192 GPUs auto is
  // 8192 / (8 x 8 x 1) = 128 replicas of 1536 / 128 = 12 sequences; at --gpus 1024, 16 replicas keep their 12:
  // global batch 192, as with dp written out (until 2026-11 the batch stayed 1536, 96 a replica, while dp: 128
  // written out gave 192). Before that, this was "bad conversion" (dp read as a number).
  const std::string yaml =
      "schema_version: 1\nname: x\ntopology: {family: rail_clos, gpus: 8192}\nworkload:\n  tp: 8\n  pp: 8\n  "
      "cp: 1\n  microbatch: 1\n  global_batch: 1536\n";
  const std::string base = optimize_base(yaml, 1024, "");
  EXPECT_NE(base.find("dp: 16\n"), std::string::npos) << base;
  EXPECT_NE(base.find("global_batch: 192\n"), std::string::npos) << base;
  std::string explicit_dp = yaml;
  explicit_dp.replace(explicit_dp.find("  global_batch"), 0, "  dp: 128\n");
  const std::string same = optimize_base(explicit_dp, 1024, "");
  EXPECT_NE(same.find("global_batch: 192\n"), std::string::npos) << same;
  // A batch that the scenario's own 128 replicas do not share evenly (1000 / 128): refused, naming the keys.
  std::string odd = yaml;
  odd.replace(odd.find("1536"), 4, "1000");
  try {
    optimize_base(odd, 1024, "");
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("workload.global_batch 1000 is not a multiple of dp 128 (dp auto"),
              std::string::npos)
        << e.what();
  }
}

// A stand-in space of 4 designs: a = {cheap, dear} x b = {slow, fast}; and a stand-in for their studies.
struct Fake {
  // design metrics by (a, b): capex, power, bisection, injection, diameter
  std::map<std::string, std::vector<double>> design = {
      {"cheap/slow", {100, 10, 50, 400, 2}},   // pruned: "cheap/fast" equals it but for bisection 100 > 50
      {"cheap/fast", {100, 10, 100, 400, 2}},  // kept
      {"dear/slow", {200, 12, 200, 400, 2}},   // kept (most bisection)
      {"dear/fast", {250, 10, 200, 800, 2}},   // kept (most injection)
  };
  std::map<std::string, double> time_ms = {{"cheap/fast", 30}, {"dear/slow", 30}, {"dear/fast", 20}};
  Outcome design_point(const SweepPoint& p) {
    const auto& m = design.at(p.values[0] + "/" + p.values[1]);
    return {true,
            {},
            {{kCapexColumn, m[0]},
             {kPowerColumn, m[1]},
             {kBisectionColumn, m[2]},
             {kInjectionColumn, m[3]},
             {kDiameterColumn, static_cast<int64_t>(m[4])},
             {kNicsColumn, static_cast<int64_t>(m.size() > 5 ? m[5] : 8)}}};
  }
  Outcome train_point(const SweepPoint& p) {
    const std::string k = p.values[0] + "/" + p.values[1];
    ++trained[k];
    return {true, {}, {{kTimeColumn, time_ms.at(k)}, {kDaysColumn, time_ms.at(k) / 10}}};
  }
  std::map<std::string, int> trained;
};

TEST(Optimize, PrunesOnDesignMetricsThenTimesTheCandidates) {
  Fake f;
  OptimizeRequest r;
  r.base = "unused.yaml";
  r.axes = {{"a", {"cheap", "dear"}, ""}, {"b", {"slow", "fast"}, ""}};
  r.design_db = temp_path("d.db");
  r.train_db = temp_path("t.db");
  const auto res = optimize(
      r, [&](const SweepPoint& p) { return f.design_point(p); }, [&](const SweepPoint& p) { return f.train_point(p); });
  EXPECT_EQ(res.points, 4);
  // ids: 0 cheap/slow, 1 cheap/fast, 2 dear/slow, 3 dear/fast; 0 is pruned, the others timed once each
  ASSERT_EQ(res.candidates.size(), 3u);
  EXPECT_EQ(res.candidates[0].id, 1);
  EXPECT_EQ(f.trained.count("cheap/slow"), 0u);
  EXPECT_EQ(f.trained["dear/fast"], 1);
  // front on (capex, power, time): 1 (100, 10, 30) and 3 (250, 10, 20); 2 (200, 12, 30) is beaten by 1
  ASSERT_EQ(res.front.size(), 2u);
  EXPECT_EQ(res.candidates[res.front[0]].id, 1);
  EXPECT_EQ(res.candidates[res.front[1]].id, 3);
  EXPECT_EQ(res.candidates[1].dominated_by, 1);
  EXPECT_EQ(point_overrides(res, res.candidates[res.front[1]]), (std::vector<std::string>{"a=dear", "b=fast"}));

  // A reference like "dear/slow" priced 220: beaten by #1 (capex 100 vs 220, power 10 vs 12, time equal).
  OptimizeReference ref{"ref", 220, 12, 30, 3, true, 30};
  compare_reference(res, ref);
  EXPECT_EQ(res.candidates[static_cast<size_t>(ref.match)].id, 1);
  EXPECT_FALSE(ref.equal);
  EXPECT_NE(ref.verdict.find("#1 on the front dominates ref"), std::string::npos) << ref.verdict;
  EXPECT_NE(ref.verdict.find("iteration equal"), std::string::npos) << ref.verdict;
  // Faster than everything: not dominated.
  OptimizeReference fast{"fast", 300, 20, 10, 1, true, 10};
  compare_reference(res, fast);
  EXPECT_EQ(fast.match, -1);
  EXPECT_NE(fast.verdict.find("no design in the space is as cheap, as cool and as fast at once"), std::string::npos)
      << fast.verdict;
  // The same with a candidate the train study could not time (#2 made untimed): the verdict says it holds for the
  // timed designs only, 1 of the 3 candidates being off the front.
  OptimizeResult partly = res;
  partly.candidates[1].timed = false;
  compare_reference(partly, fast);
  EXPECT_EQ(fast.match, -1);
  EXPECT_NE(fast.verdict.find("but 1 of the 3 candidates could not be timed"), std::string::npos) << fast.verdict;

  // Run again on the same databases: nothing reruns (both sweeps resume), same front.
  Fake g;
  const auto again = optimize(
      r, [&](const SweepPoint& p) { return g.design_point(p); }, [&](const SweepPoint& p) { return g.train_point(p); });
  EXPECT_TRUE(g.trained.empty());
  EXPECT_EQ(again.front, res.front);
}

// The reference is priced as the points are: their cost: section (its own cost: keys replaced), and for each
// value of a cost: axis (cost.aoc_max_length) once, each point compared with the reference priced by its own
// value. Before, aipod-16k kept pluggable optics and fibre (its cost.aoc_max_length 0) while the point that
// "dominated" it at -42.8 % capex was priced with AOCs up to 30 m.
TEST(Optimize, TheReferenceIsPricedAsThePoints) {
  const std::string base = optimize_base(
      "schema_version: 1\nname: x\ntopology: {family: rail_clos, gpus: 1024}\ncost: {nic: 1200, fibre_per_m: 3}\n"
      "workload:\n  model: llama3-70b\n  tp: 8\n  pp: 8\n  cp: 1\n  microbatch: 1\n  global_batch: 192\n",
      1024, "");
  const YAML::Node r = YAML::Load(optimize_reference(
      "schema_version: 1\nname: r\ntopology: {family: fat_tree, gpus: 1024}\ncost: {nic: 1500, aoc_max_length: 0m}\n",
      base));
  EXPECT_EQ(YAML::Dump(r["cost"]), YAML::Dump(YAML::Load(base)["cost"]));
  EXPECT_FALSE(r["cost"]["aoc_max_length"]);  // the reference's own cost: keys do not survive

  EXPECT_EQ(cost_axis_overrides({{"topology", {"a", "b"}, ""}, {"switch.radix", {"64"}, ""}}),
            (std::vector<std::vector<std::string>>{{}}));
  EXPECT_EQ(cost_axis_overrides({{"cost.aoc_max_length", {"0m", "30m"}, ""}, {"cost.nic", {"1000"}, ""}}),
            (std::vector<std::vector<std::string>>{{"cost.aoc_max_length=0m", "cost.nic=1000"},
                                                   {"cost.aoc_max_length=30m", "cost.nic=1000"}}));

  // The stand-in space with its second axis a cost: key: the front is #1 (cheap, "fast" pricing: capex 100,
  // power 10, 30 ms) and #3 (dear, "fast": 250, 10, 20 ms).
  Fake f;
  OptimizeRequest q;
  q.axes = {{"a", {"cheap", "dear"}, ""}, {"cost.aoc_max_length", {"slow", "fast"}, ""}};
  q.design_db = temp_path("dc.db");
  q.train_db = temp_path("tc.db");
  const auto res = optimize(
      q, [&](const SweepPoint& p) { return f.design_point(p); }, [&](const SweepPoint& p) { return f.train_point(p); });
  ASSERT_EQ(res.front.size(), 2u);
  // Priced one way it costs 220, the points' way 90: #1 (100) does not beat it where a single price of 220 did.
  OptimizeReference ref{"ref", 220, 12, 30, 3, true, 30};
  ref.pricings = {{{"cost.aoc_max_length=slow"}, 220, 12}, {{"cost.aoc_max_length=fast"}, 90, 12}};
  compare_reference(res, ref);
  EXPECT_EQ(ref.match, -1) << ref.verdict;
  // At 150 the points' way, #1 dominates it, by the figures of that pricing, and says so.
  ref.pricings[1].capex_usd = 150;
  compare_reference(res, ref);
  ASSERT_GE(ref.match, 0);
  EXPECT_EQ(res.candidates[static_cast<size_t>(ref.match)].id, 1);
  EXPECT_EQ(ref.capex_usd, 150);
  EXPECT_EQ(ref.priced_as, "cost.aoc_max_length=fast");
  EXPECT_NE(ref.verdict.find("capex $100 vs $150 (-33.3%)"), std::string::npos) << ref.verdict;
  EXPECT_NE(ref.verdict.find("(ref priced as #1: cost.aoc_max_length=fast)"), std::string::npos) << ref.verdict;
}

TEST(Optimize, FewerFasterNicsDoNotPruneMoreSlowerOnes) {
  // Two designs with the same capex, bisection, injection per GPU and diameter: 4 NICs of 800G a server, 10 kW,
  // and 8 NICs of 400G, 11 kW. On design metrics the 4-NIC one dominates; but other NICs change what NCCL picks
  // (800G x 4 timed 4.9 % slower than 400G x 8 on the default job: PAT, docs/commands/optimize.md), so designs prune
  // each other only at the same NICs, and both are timed. A third, 8 x 400G at 12 kW, is pruned by the second.
  Fake f;
  f.design = {{"x/four", {100, 10, 100, 400, 2, 4}},
              {"x/eight", {100, 11, 100, 400, 2, 8}},
              {"x/warm", {100, 12, 100, 400, 2, 8}}};
  f.time_ms = {{"x/four", 31}, {"x/eight", 30}, {"x/warm", 30}};
  OptimizeRequest r;
  r.axes = {{"a", {"x"}, ""}, {"b", {"four", "eight", "warm"}, ""}};
  r.design_db = temp_path("dn.db");
  r.train_db = temp_path("tn.db");
  const auto res = optimize(
      r, [&](const SweepPoint& p) { return f.design_point(p); }, [&](const SweepPoint& p) { return f.train_point(p); });
  ASSERT_EQ(res.candidates.size(), 2u);
  EXPECT_EQ(f.trained["x/eight"], 1);
  EXPECT_EQ(f.trained.count("x/warm"), 0u);
  ASSERT_EQ(res.front.size(), 2u);  // cooler (four) and faster (eight)
}

TEST(Optimize, DaysAsTheThirdObjective) {
  // The stand-in's days are time / 10 but for dear/fast, made the slowest to train (5 days): then 3 (250, 10, 5)
  // is beaten by 1 (100, 10, 3) and the front is 1 alone; 2 (200, 12, 3) is beaten by 1 as before.
  Fake f;
  f.time_ms["dear/fast"] = 50;
  OptimizeRequest r;
  r.axes = {{"a", {"cheap", "dear"}, ""}, {"b", {"slow", "fast"}, ""}};
  r.design_db = temp_path("d3.db");
  r.train_db = temp_path("t3.db");
  r.objective = kDaysColumn;
  const auto res = optimize(
      r, [&](const SweepPoint& p) { return f.design_point(p); }, [&](const SweepPoint& p) { return f.train_point(p); });
  ASSERT_EQ(res.front.size(), 1u);
  EXPECT_EQ(res.candidates[res.front[0]].id, 1);
  EXPECT_DOUBLE_EQ(res.candidates[res.front[0]].objective, 3);
  OptimizeReference ref{"ref", 100, 10, 30, 3, true, 3};
  compare_reference(res, ref);
  EXPECT_TRUE(ref.equal);
  EXPECT_NE(ref.verdict.find("days to train equal"), std::string::npos) << ref.verdict;
  // A column the train study does not give is refused before anything runs.
  r.objective = "mfu";
  EXPECT_THROW(optimize(r, {}, {}), InputError);
}

TEST(Optimize, InfeasibleDesignsAreCountedWithTheirReason) {
  Fake f;
  OptimizeRequest r;
  r.axes = {{"a", {"cheap", "dear", "none"}, ""}, {"b", {"slow", "fast"}, ""}};
  r.design_db = temp_path("d2.db");
  r.train_db = temp_path("t2.db");
  r.stage = "design";
  const auto res = optimize(
      r,
      [&](const SweepPoint& p) {
        if (p.values[0] == "none") throw InputError("--set a: radix too small");  // as the design stage words it
        return f.design_point(p);
      },
      [&](const SweepPoint& p) { return f.train_point(p); });
  EXPECT_EQ(res.infeasible, 2);
  ASSERT_EQ(res.infeasible_examples.size(), 1u);  // one distinct reason
  // Its first point's design, the key without "--set" (a sweep axis, not the user's option), how many points.
  EXPECT_EQ(res.infeasible_examples[0], "#4 (none, slow): a: radix too small (2 points)");
  EXPECT_TRUE(f.trained.empty());  // design stage only
  // front on (capex, power): 1 (100, 10) beats 2 (200, 12) and 3 (250, 10)
  ASSERT_EQ(res.front.size(), 1u);
  EXPECT_EQ(res.candidates[res.front[0]].id, 1);
}

}  // namespace
}  // namespace podnet::study
