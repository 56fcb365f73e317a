// The study registry (report/studies.hpp): its entries, the one set of
// request defaults, the --algo rule, the declared fields that tables format
// and optimize reads, the GPU count that sweep and diff show.
#include "report/studies.hpp"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "core/error.hpp"
#include "report/diff.hpp"
#include "report/sweep_report.hpp"
#include "report/upgrade_report.hpp"
#include "study/bench.hpp"
#include "study/optimize.hpp"

namespace podnet::report {
namespace {

StudyArgs args_of(const std::string& study, const std::map<std::string, std::string>& given) {
  return study_args(*find_study(study), given, [](const StudyParam& p) { return p.option(); });
}

// A document run through the registry records the options that differ from their defaults, as the command line
// takes them, so that its run block repeats the run (bench's sizes are no scenario key).
TEST(Studies, TheRunBlockRecordsTheOptionsGiven) {
  const StudyDef& bench = *find_study("bench");
  const scenario::Scenario sc = scenario::load("leafspine-8k", {"topology.gpus=16", "network.engine=analytical"});
  const StudyArgs a = args_of("bench", {{"min", "1MiB"}, {"max", "2MiB"}, {"op", "allreduce"}});
  const nlohmann::json run = run_study(bench, sc, a, {}).document["run"];
  ASSERT_TRUE(run.contains("options")) << run.dump();
  EXPECT_EQ(run["options"], (nlohmann::json{{"--min", "1MiB"}, {"--max", "2MiB"}})) << run.dump();  // op: its default
}

TEST(Studies, EveryStudyOnceWithARunAndDefaultsThatParse) {
  std::set<std::string> names;
  for (const auto& s : studies()) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name << " registered twice";
    EXPECT_TRUE(s.run) << s.name;
    EXPECT_FALSE(s.description.empty()) << s.name;
    EXPECT_NO_THROW(args_of(s.name, {})) << s.name << ": its defaults do not parse";
    if (!s.gpus_field.empty()) {
      EXPECT_NE(find_field(s, s.gpus_field), nullptr) << s.name;
    }
  }
  for (const char* n : {"design", "bench", "train", "reliability", "diagnose", "jobs", "inference", "plan-upgrade"})
    EXPECT_TRUE(names.count(n)) << n;
  EXPECT_EQ(study_names(), "design, bench, train, reliability, diagnose, jobs, inference or plan-upgrade");
  EXPECT_THROW(study_named("benhc", "--study"), InputError);
}

TEST(Studies, BenchHasOneSetOfDefaults) {
  // podnet bench's own: 8 B to 1 GiB by 2 = 2^3 .. 2^30, 28 sizes (nccl-tests' -b 8 -e 1G -f 2).
  const StudyArgs a = args_of("bench", {});
  EXPECT_EQ(a.values.get_string("min"), "8B");
  EXPECT_EQ(a.values.get_string("max"), "1GiB");
  EXPECT_DOUBLE_EQ(a.values.get_real("factor"), 2.0);
  EXPECT_EQ(study::size_series(parse_size("8B", "--min"), parse_size("1GiB", "--max"), 2).size(), 28u);
  EXPECT_TRUE(a.sets.empty());
}

TEST(Studies, TheAlgoRuleIsOneForEveryFrontEnd) {
  // One of NCCL's algorithms is also the tuner's list; another algorithm (no NCCL one) stays the request's; a
  // list goes to the tuner alone; one word that names nothing is refused naming the option.
  EXPECT_EQ(args_of("bench", {{"algo", "ring"}}).sets, std::vector<std::string>{"collective.algorithms=ring"});
  EXPECT_TRUE(args_of("bench", {{"algo", "halving_doubling"}}).sets.empty());
  EXPECT_EQ(args_of("bench", {{"algo", "ring,tree"}}).sets,
            std::vector<std::string>{"collective.algorithms=ring,tree"});
  EXPECT_EQ(study::algo_choice("ring,tree", "--algo").algo, "auto");
  EXPECT_EQ(study::algo_choice("halving_doubling", "--algo").algo, "halving_doubling");
  try {
    args_of("bench", {{"algo", "fastest"}});
    FAIL() << "accepted --algo fastest";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--algo: 'fastest' is not an algorithm"), std::string::npos) << e.what();
  }
}

TEST(Studies, BadParametersNameTheirLabel) {
  try {
    study_args(*find_study("diagnose"), {{"duration", "soon"}},
               [](const StudyParam& p) { return "'" + p.spec.name + "'"; });
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'duration': 'soon' is not a duration"), std::string::npos) << e.what();
  }
  EXPECT_THROW(args_of("bench", {{"min", "1MiB"}, {"max", "1KiB"}}), InputError);
  EXPECT_THROW(args_of("bench", {{"nope", "1"}}), InputError);
  EXPECT_THROW(args_of("diagnose", {{"probe", "star"}}), InputError);
}

TEST(Studies, WhatOptimizeReadsIsDeclared) {
  const StudyDef& design = *find_study("design");
  const StudyDef& train = *find_study("train");
  for (const char* k : {study::kCapexColumn, study::kPowerColumn, study::kBisectionColumn, study::kInjectionColumn,
                        study::kDiameterColumn})
    EXPECT_NE(find_field(design, k), nullptr) << k;
  std::map<std::string, std::string> objectives;
  for (const auto& f : train.fields)
    if (!f.objective.empty()) objectives[f.objective] = f.key;
  EXPECT_EQ(objectives, (std::map<std::string, std::string>{{"days", study::kDaysColumn},
                                                            {"days_with_failures", study::kDaysWithFailuresColumn},
                                                            {"iteration", study::kTimeColumn}}));
}

TEST(Studies, FieldsFormatLikeTheirCommandsTables) {
  const StudyDef& train = *find_study("train");
  EXPECT_EQ(format_field(find_field(train, "iteration_time_ms"), 14612.9055), "14,612.91 ms");
  EXPECT_EQ(format_field(find_field(train, "mfu"), 0.372), "37.2%");
  EXPECT_EQ(format_field(find_field(train, "parallelism.gpus"), 16384), "16,384");
  // Undeclared: integers and reals grouped by thousands alike (diff showed 17367040 beside 16,384).
  EXPECT_EQ(format_field(nullptr, 17367040.0), "17,367,040");
  EXPECT_EQ(format_field(nullptr, 16384), "16,384");
  EXPECT_EQ(format_field(nullptr, -1234.56789), "-1,234.5679");
  EXPECT_EQ(format_field(nullptr, nullptr), "-");
  // Per-size bench fields: "time_us@" declares every time_us@BYTES.
  EXPECT_EQ(format_field(find_field(*find_study("bench"), "time_us@0000000000001024"), 12.3456), "12.35 us");
}

study::ResultTable pp_sweep() {
  // aipod-16k pins dp: 128; pp 8 -> 8 x 8 x 128 = 8,192 GPUs, pp 16 -> 16,384.
  study::ResultTable t;
  t.study = "train";
  t.axes = {"workload.pp"};
  t.columns = {"id", "workload.pp", "status", "error", "iteration_time_ms", "mfu", "parallelism.gpus"};
  t.rows = {{int64_t{0}, std::string("8"), std::string("ok"), std::monostate{}, 14612.9055, 0.372, int64_t{8192}},
            {int64_t{1}, std::string("16"), std::string("ok"), std::monostate{}, 6000.5, 0.41, int64_t{16384}}};
  return t;
}

TEST(Studies, SweepTableShowsTheGpuCountAndWarnsWhenAnAxisChangesIt) {
  const study::ResultTable t = pp_sweep();
  const std::vector<std::string> cols = default_columns(t);
  ASSERT_GE(cols.size(), 3u);
  EXPECT_EQ(cols[2], "parallelism.gpus");  // right after the axes
  std::ostringstream out;
  write_sweep_results_table(t, {}, out);
  // The label and unit in the header, the number in the cell (right-aligned as a number); "%" in the cell.
  EXPECT_NE(out.str().find("iteration time (ms)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find(" 14,612.91 "), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("37.2%"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("16,384"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("warning: the points run on different GPU counts (8,192 to 16,384"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("workload.pp changes it"), std::string::npos) << out.str();

  study::ResultTable same = t;
  std::get<int64_t>(same.rows[1][6]) = 8192;
  EXPECT_EQ(gpu_count_warning(same), "");
  // An axis that counts copies (replicas, DP groups, the fabric's GPUs) sets the GPU count on purpose: a note.
  study::ResultTable dp = t;
  dp.axes = {"workload.dp"};
  dp.columns[1] = "workload.dp";
  EXPECT_EQ(gpu_count_warning(dp),
            "note: workload.dp sets the job's GPU count (8,192 to 16,384 GPUs; column \"GPUs\", parallelism.gpus)");
  // A fabric swept by its size whose job leaves GPUs idle at a point: the point says what the job ran on (the row
  // labelled 12,288 ran 8,192 GPUs).
  study::ResultTable fabric = t;
  fabric.axes = {"topology.gpus"};
  fabric.columns[1] = "topology.gpus";
  fabric.rows[0][1] = std::string("12288");
  fabric.rows[1][1] = std::string("16384");
  EXPECT_EQ(gpu_count_warning(fabric),
            "note: topology.gpus sets the job's GPU count (8,192 to 16,384 GPUs; column \"GPUs\", parallelism.gpus); "
            "at topology.gpus 12,288 the job ran on 8,192 GPUs, the others idle (podnet train at that size says why)");
  // A design sweep has no job: its axis sets the fabric's GPU count.
  study::ResultTable design;
  design.study = "design";
  design.axes = {"topology.gpus"};
  design.columns = {"id", "topology.gpus", "status", "error", "bom.gpus"};
  design.rows = {{int64_t{0}, std::string("1024"), std::string("ok"), std::monostate{}, int64_t{1024}},
                 {int64_t{1}, std::string("2048"), std::string("ok"), std::monostate{}, int64_t{2048}}};
  EXPECT_EQ(gpu_count_warning(design).rfind("note: topology.gpus sets the fabric's GPU count (1,024 to 2,048 GPUs", 0),
            0u)
      << gpu_count_warning(design);
}

TEST(Studies, DiffShowsTheGpuCountAndWarnsWhenItDiffers) {
  const auto doc = [](int64_t gpus, double ms) {
    return nlohmann::json{{"run", {{"command", "train"}}},
                          {"parallelism", {{"gpus", gpus}}},
                          {"iteration_time_ms", ms}};
  };
  DiffSide a{"A", "", {{"train", doc(8192, 14612.9055)}}}, b{"B", "", {{"train", doc(16384, 6000.5)}}};
  const nlohmann::json d = diff_document(a, b);
  EXPECT_EQ(d["studies"]["train"]["gpus"]["a"], 8192);
  EXPECT_EQ(d["studies"]["train"]["gpus"]["b"], 16384);
  std::ostringstream out;
  write_diff_table(d, out);
  EXPECT_NE(out.str().find("warning: A runs on 8,192 GPUs, B on 16,384"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("14,612.91 ms"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("-8,612.41 ms"), std::string::npos) << out.str();

  DiffSide c{"C", "", {{"train", doc(8192, 14000.0)}}};
  std::ostringstream same;
  write_diff_table(diff_document(a, c), same);
  EXPECT_NE(same.str().find("on 8,192 GPUs"), std::string::npos) << same.str();
  EXPECT_EQ(same.str().find("warning"), std::string::npos) << same.str();
}

TEST(Studies, ProgressGivesAnEtaOnceARunIsLong) {
  EXPECT_EQ(elapsed_and_eta(1, 10, 1.0), "1.0 s elapsed");
  EXPECT_EQ(elapsed_and_eta(4, 10, 8.0), "8.0 s elapsed, ETA 12 s");  // 2 s a point, 6 to go
  EXPECT_EQ(elapsed_and_eta(10, 10, 20.0), "20.0 s elapsed");
  EXPECT_EQ(elapsed_and_eta(1, 100, 60.0), "60.0 s elapsed, ETA 99 min");
}

// A plan that stops the job at some step costs it the step, a checkpoint and a restart: said whenever any plan has
// such a step (16 at a time cost 12 h in an 8 h window, and the note came only when the recommended plan stopped).
TEST(Studies, AStoppingStepsCostIsSaidWhenAnyPlanHasOne) {
  const auto plan = [](int64_t batch, const char* grouping, int64_t steps, int64_t stopping, double window,
                       double extra) {
    return nlohmann::json{{"batch", batch},
                          {"grouping", grouping},
                          {"steps", steps},
                          {"stopping_steps", stopping},
                          {"window_hours", window},
                          {"extra_hours", extra},
                          {"worst_slowdown", stopping > 0 ? nlohmann::json(nullptr) : nlohmann::json(1.2)},
                          {"mean_slowdown", 1.1},
                          {"simulated_steps", steps},
                          {"step_list", nlohmann::json::array()}};
  };
  nlohmann::json d = {{"tier", "spine"},
                      {"switches", 32},
                      {"step_time_minutes", 30.0},
                      {"stopping_step_minutes", 45.0},
                      {"negligible_minutes", 1.0},
                      {"steps_simulated_per_plan", 0},
                      {"iterations_simulated", 2},
                      {"batches_left_out", nlohmann::json::array()},
                      {"job", {{"gpus", 1024}, {"iteration_ms", 100.0}}},
                      {"plans", {plan(1, "one at a time", 32, 0, 16.0, 2.0), plan(16, "packed", 2, 2, 1.0, 1.5)}}};
  d["best"] = d["plans"][0];
  d["least_extra"] = d["plans"][1];
  std::ostringstream out;
  write_upgrade_table(d, out);
  EXPECT_NE(out.str().find("(a step that stops the job costs it 45"), std::string::npos) << out.str();
  d["plans"][1] = plan(16, "packed", 2, 0, 1.0, 1.5);
  d["least_extra"] = d["plans"][1];
  std::ostringstream none;
  write_upgrade_table(d, none);
  EXPECT_EQ(none.str().find("a step that stops the job costs it"), std::string::npos) << none.str();
}

}  // namespace
}  // namespace podnet::report
