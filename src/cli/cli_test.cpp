// End-to-end tests of the podnet binary: exit status and messages for bad
// input, determinism of every output format, and golden designs.
//
// Golden runs: tests/golden/<name>/ hold a podnet command line (`args`, or a
// built-in example's design) and its full JSON output (tests/golden/README.md).
// Regenerate with PODNET_UPDATE_GOLDEN=1 ctest -R Golden, then review the diff.
#include <gtest/gtest.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include <fmt/format.h>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/common.hpp"
#include "cli/test_util.hpp"
#include "core/process.hpp"
#include "report/report.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace {

namespace fs = std::filesystem;

using podnet::cli::testing::flat;
using podnet::cli::testing::mpirun;
using podnet::cli::testing::Result;
using podnet::cli::testing::run;
using podnet::cli::testing::run_shell;

fs::path temp_dir() { return podnet::cli::testing::temp_dir("podnet_cli_test"); }

std::string write_file(const std::string& name, const std::string& text) {
  return podnet::cli::testing::write_file(temp_dir(), name, text);
}
using podnet::cli::testing::read_file;

std::string blank_sha(std::string json) {
  return std::regex_replace(json, std::regex("\"git_sha\": \"[^\"]*\""), "\"git_sha\": \"\"");
}

TEST(Cli, HelpAndList) {
  Result r = run("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("design"), std::string::npos);
  // It teaches the way on: each command's own help, and the options many take (it listed the commands alone).
  EXPECT_NE(r.out.find("Run `podnet COMMAND --help` for a command's options and examples"), std::string::npos) << r.out;
  for (const char* flag : {"--set KEY=VALUE", "--engine NAME", "--format FORMAT", "--out DIR"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  r = run("list");
  EXPECT_EQ(r.status, 0);
  for (const char* name : {"aipod-16k", "leafspine-8k", "fat-tree-k48", "rail_clos", "fat_tree", "tree3"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  // Alone, the scenarios and one line a part (it printed every part, about 1,200 lines); `all` prints them.
  EXPECT_NE(r.out.find("More to list (`podnet list PART`):"), std::string::npos) << r.out;
  EXPECT_LT(std::count(r.out.begin(), r.out.end(), '\n'), 80) << r.out;
  r = run("list all");
  EXPECT_EQ(r.status, 0);
  for (const char* name : {"Built-in scenarios", "Model presets", "Routing policies", "Topology families"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  // One part: the network's choices (routing, algorithms, engines, transports, congestion controls, presets).
  r = run("list network");
  EXPECT_EQ(r.status, 0);
  for (const char* name : {"Routing policies", "ecmp", "reps", "Congestion control", "nscc", "Deployment presets"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  EXPECT_EQ(r.out.find("Built-in scenarios"), std::string::npos);
  // A part asked for by what it holds points to where it is.
  r = run("list cc", true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("'cc' is not a part podnet lists; it is under `podnet list network`"), std::string::npos)
      << r.out;
}

TEST(Cli, BadInputExitsTwoWithLocation) {
  struct Case {
    const char* what;
    std::string yaml;
    std::string expect;
  };
  const std::string head = "schema_version: 1\ntopology:\n  family: rail_clos\n";
  std::vector<Case> cases = {
      {"unknown key", head + "  gpuz: 8\n", "bad.yaml:4: topology.gpuz: unknown key"},
      {"missing required", "topology:\n  family: rail_clos\n", "schema_version: missing required key"},
      {"bad unit", head + "server:\n  nic_speed: 400\n", "bad.yaml:5: server.nic_speed: '400' is not valid"},
      {"impossible: 7 GPUs per server on 8 rails", head + "  gpus: 700\n  rails: 8\nserver:\n  gpus: 7\n  nics: 7\n",
       "bad.yaml:5: topology.rails"},
      {"impossible: radix cannot host the GPUs", head + "  gpus: 65544\n  tiers: 2\n",
       "bad.yaml:4: topology.gpus: topology.gpus = 65,544 exceeds"},
      // A number pasted as podnet prints it, in a block map and in a { } map (where the comma splits it).
      {"thousands separator", head + "  gpus: 4,096\n",
       "bad.yaml:4: topology.gpus: '4,096' is not valid: expected an integer in [1, 1048576] (write numbers without "
       "thousands separators)"},
      {"thousands separator in { }", "schema_version: 1\ntopology: {family: rail_clos, gpus: 4,096}\n",
       "bad.yaml:2: topology.096: unknown key '096': inside { } a comma ends a value"},
      {"a tab", "schema_version: 1\ntopology:\n\tfamily: rail_clos\n",
       "(line 3 is indented with a tab: YAML indents with spaces only)"},
  };
  for (const auto& c : cases) {
    std::string path = write_file("bad.yaml", c.yaml);
    Result r = run("design " + path, true);
    EXPECT_EQ(r.status, 2) << c.what << ": " << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.what << ": " << r.out;
  }
  Result r = run("design aipod-16k --set topology.gpus=abc", true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--set topology.gpus"), std::string::npos) << r.out;
  r = run("design no-such-scenario", true);
  EXPECT_EQ(r.status, 2);
  r = run("design aipod-16k --format xml", true);
  EXPECT_EQ(r.status, 2);
}

TEST(Cli, GrowsAipodTo131kOrSaysWhy) {
  Result r = run("design aipod-16k --set topology.gpus=131072 --format json");
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("\"gpus\": 131072"), std::string::npos);
  // 524,288 is the 3-tier limit (16 pods x 64 groups x 512 GPUs); one more group is refused with the reason.
  r = run("design aipod-16k --set topology.gpus=524800 --set topology.groups_per_pod=64", true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("524,288"), std::string::npos) << r.out;
}

TEST(Cli, FasterPortsAreNamedAsTheTradeDoesAndOversizedSwitchesNoted) {
  // 64 x 1.6T = 102.4 Tb/s: one chip today; priced as 1.6T ports (it read "1,600G"), no note.
  Result r = run("design aipod-16k --set topology.gpus=4096 --set topology.groups_per_pod=auto --set "
                 "switch.radix=64 --set switch.port_speed=1.6Tbps --set server.nic_speed=1.6Tbps");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("leaf: switch 1.6T"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("server: NIC 1.6T"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("more than one switch chip"), std::string::npos) << r.out;
  // 128 x 1.6T = 204.8 Tb/s: more than the 115.2 Tb/s of the largest chip; said in a note.
  r = run("design aipod-16k --set topology.gpus=4096 --set topology.groups_per_pod=auto --set "
          "switch.port_speed=1.6Tbps --set server.nic_speed=1.6Tbps");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("a switch of 128 x 1.6T ports carries 204.8 Tbps, more than one switch chip does today"),
            std::string::npos)
      << r.out;
}

TEST(Cli, ConfigPlanFilesAreTheSameWhateverTheThreadCount) {
  // The switches' files are written on several threads: 1 and 3 threads give the same files, byte for byte
  // (a 4-tier rail Clos of radix 8: 224 switches, chunks of 16 taken in any order).
  using namespace podnet;
  const topology::Topology t =
      topology::build_with("rail_clos", {{"gpus", "256"}}, topology::testing::hw_with(2, 2, 8));
  const topology::AddressPlan plan =
      topology::plan_addresses(t, topology::addressing_from(defaults_of(topology::addressing_params())));
  const fs::path one = temp_dir() / "plan-1", three = temp_dir() / "plan-3";
  cli::write_config_plan(t, plan, one.string(), {}, nullptr, 1);
  cli::write_config_plan(t, plan, three.string(), {}, nullptr, 3);
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(one)) {
    if (!e.is_regular_file()) continue;
    ++files;
    const fs::path other = three / fs::relative(e.path(), one);
    std::ifstream a(e.path()), b(other);
    std::stringstream sa, sb;
    sa << a.rdbuf();
    sb << b.rdbuf();
    ASSERT_TRUE(fs::exists(other)) << other;
    EXPECT_EQ(sa.str(), sb.str()) << other;
  }
  EXPECT_EQ(files, 2 * plan.switches.size() + 2);  // frr and sonic per switch, switches.csv, ip-addresses.csv
  EXPECT_EQ(plan.switches.size(), 224u);
  // A slice (--config-switches): the files of the switches matched, each the same as in the whole plan.
  const fs::path slice = temp_dir() / "plan-slice";
  const std::string first = t.nodes[plan.switches[0].node].name;
  cli::write_config_plan(t, plan, slice.string(), {}, nullptr, 2, {first, "no-such-*"});
  size_t sliced = 0;
  for (const auto& e : fs::recursive_directory_iterator(slice)) {
    if (!e.is_regular_file()) continue;
    ++sliced;
    std::ifstream a(e.path()), b(one / fs::relative(e.path(), slice));
    std::stringstream sa, sb;
    sa << a.rdbuf();
    sb << b.rdbuf();
    EXPECT_EQ(sa.str(), sb.str()) << e.path();
  }
  EXPECT_EQ(sliced, 2u + 2u);  // one switch's frr and sonic files, and the two whole CSVs
  EXPECT_THROW(cli::write_config_plan(t, plan, slice.string(), {}, nullptr, 1, {"no-such-*"}), InputError);
}

TEST(Cli, AConfigPlanSliceSaysHowManySwitchesOfEachTierItWrote) {
  // aipod-16k has 256 leaves (32 groups of 512 GPUs x 8 rails), 256 spines (2 pods x 8 rails x 16) and 128
  // super-spines. Pod 0's spines are named pod000-spine-*, its leaves after their groups (su000-leaf-r0): the
  // pattern takes pod 0's 128 spines and no leaf, and the summary says so.
  const fs::path dir = temp_dir() / "plan-tiers";
  Result r = run("design aipod-16k --config-plan " + dir.string() + " --config-switches 'pod000-*'", true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("the files of 128 of the 640 switches (leaf 0 of 256, spine 128 of 256, super_spine 0 of "
                       "128)"),
            std::string::npos)
      << r.out;
  fs::remove_all(dir);
  // Patterns that pick no switch are refused before the design prints (they were after the whole report), and no
  // frr/ or sonic/ folder is made.
  r = run("design aipod-16k --config-plan " + dir.string() + " --config-switches 'su0000-*'", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.out.rfind("podnet: error: --config-switches su0000-*: matches none of the 640 switches", 0), 0u) << r.out;
  EXPECT_FALSE(fs::exists(dir / "frr"));
  fs::remove_all(dir);
}

// reliability --format csv: the components in the table's order (GPUs first, as printed; they came sorted by name,
// copper cables first), and every figure of the job the table shows, the job's own interval too.
TEST(Cli, ReliabilityCsvKeepsTheTablesOrderAndFigures) {
  const Result r = run("reliability aipod-16k --set reliability.checkpoint_interval=2h --format csv");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string head = r.out.substr(0, r.out.find('\n'));
  for (const char* col : {"job_young_interval_minutes", "job_checkpoint_cost_minutes", "job_restart_cost_minutes",
                          "job_your_interval_minutes", "job_your_goodput", "job_your_days_to_train_with_failures"})
    EXPECT_NE(head.find(col), std::string::npos) << col << " in " << head;
  EXPECT_EQ(r.out.find("\ngpu,GPUs,"), head.size()) << r.out.substr(0, 400);
}

TEST(Cli, CheckpointAdviceOutOfItsModelsRangeIsSaid) {
  // aipod-16k: 254.9 interruptions in 30 days, one every 2.82 h (169.5 min). Young and Daly assume a checkpoint
  // and a restart short beside that: a 4 h restart (5 + 240 min > 169.5) is out of range, the 10 min default
  // (15 min) is not. With a 4 h checkpoint, Daly's interval sqrt(2 d M) (1 + sqrt(d / 2M) / 3 + d / 18M) - d
  // with d = 4 h, M = 2.82 h is 2.46 h (147.7 min): shorter than the checkpoint itself.
  const std::string note = "the checkpoint advice is out of its model's range: an interruption every 2.82 h";
  Result r = run("reliability aipod-16k --set reliability.restart_cost=4h");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(note), std::string::npos) << r.out;
  r = run("reliability aipod-16k --set reliability.checkpoint_cost=4h");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("2.46 h (shorter than a checkpoint)"), std::string::npos) << r.out;  // 147.7 min
  r = run("reliability aipod-16k");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("out of its model's range"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("shorter than a checkpoint"), std::string::npos) << r.out;
  r = run("train aipod-16k --engine analytical --set reliability.restart_cost=4h");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("(out of the checkpoint model's range: an interruption every 2.82 h is less than a checkpoint "
                       "(5.0 min) and a restart"),  // (the line wraps here)
            std::string::npos)
      << r.out;
  // Far out of range, the days are no forecast (they read 9.16e+16 days); a 100 h restart reads in hours.
  r = run("reliability aipod-16k --set reliability.restart_cost=100h");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("more than 100 years (out of the model's range"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("restart 100.00 h, MTBI as above"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("e+"), std::string::npos) << r.out;
  // A scenario of two jobs (24 GPUs each on 64): the risk is one job's, of reliability.job_gpus, and it says so.
  r = run("reliability two-jobs");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(flat(r.out).find("note: the scenario runs 2 jobs (a 24, b 24 GPUs): this is the risk of one job of 64 GPUs "
                             "(reliability.job_gpus 0: every GPU); set reliability.job_gpus to a job's GPUs for its "
                             "own"),
            std::string::npos)
      << r.out;
}

TEST(Cli, FailuresOnTheAnalyticalEngineAtScaleSayWhatTheOtherEnginesCost) {
  Result r = run("train clos-128k --fail-links leaf-spine=1%", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("use --engine flow or --engine packet; at 131,072 GPUs the flow engine takes minutes a run, "
                       "and the packet engine is for fabrics of a few thousand GPUs"),
            std::string::npos)
      << r.out;
  r = run("train aipod-16k --engine analytical --fail-links leaf-spine=1%", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.out.find("takes minutes a run"), std::string::npos) << r.out;
}

// A NIC's only link down: the job fails, and the text names the transfer that found no route in words
// (it read "reducescatter c0 b0 rs/ring"); the trace keeps the label.
TEST(Cli, AJobFailureNamesItsTransferInWords) {
  const Result r = run("train leafspine-8k --set workload.model=llama3-8b --set topology.gpus=64 --engine flow "
                       "--fail-links nic-leaf=1 --format json");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string failure = nlohmann::json::parse(r.out)["failures"]["failure"].get<std::string>();
  EXPECT_EQ(failure.rfind("data-parallel gradient reduce-scatter, chunk 0, bucket 0 (rs/ring): no route after the "
                          "failures",
                          0),
            0u)
      << failure;
}

// A share of links that is not a whole number says how it was rounded (0.01 % of 1,024 links became one link,
// ten times the share asked, without a word). 1 % of 64 GPUs' 512 leaf-spine links is 5.12: five.
TEST(Cli, AFailureShareSaysHowItWasRounded) {
  const Result r = run("train leafspine-8k --set workload.model=llama3-8b --set topology.gpus=64 --engine flow "
                       "--fail-links leaf-spine=1%");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("(leaf-spine links, 5 of 512, 1% of 512 = 5.12, rounded down to 5), down before the run"),
            std::string::npos)
      << r.out;
  // Said once, at the first of the five events (it was repeated on every line).
  size_t times = 0;
  for (size_t at = r.out.find("rounded down to 5"); at != std::string::npos;
       at = r.out.find("rounded down to 5", at + 1))
    ++times;
  EXPECT_EQ(times, 1u) << r.out;
}

// design, reliability and resolve take the default scenario as train and run do.
TEST(Cli, TheDesignCommandsDefaultToTheDefaultScenario) {
  for (const char* c : {"design", "reliability", "resolve"}) {
    const Result r = run(std::string(c) + " --format json");
    ASSERT_EQ(r.status, 0) << c << ": " << r.out;
    EXPECT_NE(r.out.find("aipod-16k"), std::string::npos) << c;
  }
}

// reliability counts a job's GPUs and servers whether or not it fits in memory, but says when train refuses it: Llama 3
// 405B at TP1 x PP16 needs 650.9 GB per GPU on 85.9 GB H100s (the memory error's own figures). Before, it was silent.
TEST(Cli, ReliabilitySaysWhenTrainRefusesTheJob) {
  const Result r = run("reliability aipod-16k --set workload.tp=1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(flat(r.out).find(
                "note: podnet train refuses this job: --set workload.tp: the job (llama3-405b, TP1 x PP16 x "
                "DP128) needs 650.9 GB per GPU"),
            std::string::npos)
      << r.out;
  EXPECT_NE(flat(r.out).find("The figures above count its GPUs, servers and fabric all the same"), std::string::npos);
  EXPECT_EQ(run("reliability aipod-16k").out.find("refuses"), std::string::npos);
}

// A question in words where a flag or a document was wrong: an option given twice, a file that is not JSON, a study's
// option that is a scenario key (podnet inference --rate is inference.rate; diff has no --rate).
TEST(Cli, MistakesAreAnsweredInWords) {
  Result r = run("bench leafspine-8k --gpus 0-7 --min 1MiB --min 2MiB", true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--min is given 2 times; expected it once"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("At Most"), std::string::npos) << r.out;
  const std::string bad = ::testing::TempDir() + "/not-json.json";
  std::ofstream(bad) << "{bad";
  r = run("diff " + bad + " " + bad, true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find(bad + ": line 1, column 2: not JSON: syntax error"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("json.exception"), std::string::npos) << r.out;
  r = run("diff leafspine-8k leafspine-8k --study inference --rate 8", true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--rate 8: not an option of the inference study (it is diagnose's); the scenario key: --set "
                       "inference.rate=8"),
            std::string::npos)
      << r.out;
  // One serving layout or the other: co-located replicas beside a disaggregated pair was served as the pair alone.
  r = run("inference leafspine-8k --set workload.model=llama3-8b --replicas 4 --disaggregated 1:1", true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(flat(r.out).find("--replicas: co-located replicas, but the layout is disaggregated"), std::string::npos)
      << r.out;
}

// NCCL's latency constants were measured on RDMA NICs; TCP's stack (50 us against RoCEv2's 5 us) adds its excess at
// each network step. An 8 B all-reduce over 8 servers, one GPU each, runs NCCL's tree (LL): 2 log2(8) = 6 network steps
// one after another, so TCP takes 6 x 45 = 270 us longer. InfiniBand's 2 us adds nothing: the same 36.80 us as RoCEv2.
// Before, every transport gave 36.80 us, and TCP was the fastest at 1 GiB.
TEST(Cli, ASocketTransportPaysItsStackLatencyAtEachNetworkStep) {
  const auto time_us = [](const std::string& transport, const std::string& size) {
    const Result r = run("bench leafspine-8k --gpus 0-63:8 --min " + size + " --max " + size + " --transport " +
                         transport + " --format json");
    EXPECT_EQ(r.status, 0) << r.out;
    const auto d = nlohmann::json::parse(r.out);
    return std::pair{d["rows"][0]["time_us"].get<double>(), d["rows"][0]["algorithm"].get<std::string>()};
  };
  const auto [roce, algo] = time_us("rocev2", "8B");
  EXPECT_EQ(algo, "tree");
  EXPECT_NEAR(time_us("tcp", "8B").first - roce, 270.0, 0.01);
  EXPECT_DOUBLE_EQ(time_us("infiniband", "8B").first, roce);
  // 8 MiB runs a ring (LL128): 2 (8 - 1) = 14 steps, 630 us more, less what TCP's jumbo frames save on the wire.
  const auto [roce8m, ring] = time_us("rocev2", "8MiB");
  EXPECT_EQ(ring, "ring");
  EXPECT_GT(time_us("tcp", "8MiB").first - roce8m, 600.0);
}

// Two saved results of two scenario files: the files are an input that differs (the section was empty, though the
// run blocks record them).
TEST(Cli, DiffOfTwoSavedResultsNamesTheirScenarioFiles) {
  const std::string dir = ::testing::TempDir();
  const Result resolved = run("resolve leafspine-8k");
  ASSERT_EQ(resolved.status, 0);
  std::ofstream(dir + "/diff-a.yaml") << resolved.out;
  std::ofstream(dir + "/diff-b.yaml") << resolved.out;
  ASSERT_EQ(run("design " + dir + "/diff-a.yaml --format json > " + dir + "/diff-a.json").status, 0);
  ASSERT_EQ(run("design " + dir + "/diff-b.yaml --format json > " + dir + "/diff-b.json").status, 0);
  const Result r = run("diff " + dir + "/diff-a.json " + dir + "/diff-b.json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("scenario file  " + dir + "/diff-a.yaml  " + dir + "/diff-b.yaml"), std::string::npos) << r.out;
}

// diagnose --loss takes a percentage, as --fail-links and fraction: do: 1% is 0.01 (it was refused).
TEST(Cli, DiagnoseLossTakesAPercentage) {
  const Result r = run("diagnose leafspine-8k --evaluate 1 --loss 1% --format json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(r.out)["evaluation"]["loss_probability"].get<double>(), 0.01);
  EXPECT_EQ(run("diagnose leafspine-8k --evaluate 1 --loss 1x%").status, 2);
}

// An incast's header counts the GPUs that take part: 16 senders and the receiver of --gpus' 129.
TEST(Cli, AnIncastCountsItsSendersAndReceiver) {
  const Result r = run("bench leafspine-8k --op incast --gpus 0-1024:8 --senders 16 --min 1MiB --max 1MiB "
                       "--engine analytical");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("podnet bench: incast on 17 GPUs of leafspine-8k"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pattern: 16 senders (the 16 GPUs after the first of --gpus) each send the size to GPU 0"),
            std::string::npos)
      << r.out;
  // Its busbw is what the receiver takes in: 16 x algbw, just under the receiver's 400 Gb/s NIC (50 GB/s). It
  // was algbw x 1 (3 GB/s), which read as a fabric sixteen times too slow.
  EXPECT_NE(flat(r.out).find("busbw = algbw x senders: what the receiver's link takes in"), std::string::npos) << r.out;
  const auto doc = nlohmann::json::parse(
      run("bench leafspine-8k --op incast --gpus 0-1024:8 --senders 16 --min 1MiB --max 1MiB --engine analytical "
          "--format json")
          .out);
  const auto& row = doc["rows"][0];
  EXPECT_NEAR(row["busbw_gbyte_per_s"].get<double>(), 16 * row["algbw_gbyte_per_s"].get<double>(), 1e-3);
  EXPECT_GT(row["busbw_gbyte_per_s"].get<double>(), 45.0);
  EXPECT_LE(row["busbw_gbyte_per_s"].get<double>(), 50.0);
}

// A slice smaller than one group: 8 servers on leafspine-8k's rail leaves of 64 down ports use 8 of them, yet every
// leaf cables its 64 uplinks; the port count read 1:1 and nothing said the uplinks carry at most 8 / 64 = 12.5%.
TEST(Cli, ASliceSmallerThanAGroupSaysItsUplinksAreBuiltForAFullLeaf) {
  const Result r = run("design leafspine-8k --set topology.gpus=64");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(flat(r.out).find("note: leaf: 8 of its 64 down ports hold servers (8 of the 64 a group holds); its 64 "
                             "cabled uplinks are built for a full leaf and carry at most 12.5% of their capacity"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(run("design leafspine-8k --set topology.gpus=1024").out.find("down ports hold servers"), std::string::npos);
}

// A torus's rings close under dimension-order routes: the deadlock check gives the cycle and a verdict that says
// what it means and what breaks it (it gave the cycle alone). A duration shorter than a round names both.
TEST(Cli, ADeadlockCycleComesWithAVerdict) {
  const std::string torus = "diagnose torus-3d-4k --set 'topology.dims=[4,4,4]' --set 'topology.cube=[2,2,2]'";
  Result r = run(torus + " --duration 10s");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(flat(r.out).find("verdict: a PFC deadlock is possible: each of these link directions can wait for the "
                             "next to resume"),
            std::string::npos)
      << r.out;
  r = run(torus + " --duration 1s", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--duration 1s: expected at least one round (--round 10s)"), std::string::npos) << r.out;
}

TEST(Cli, CablesBeyondAnFrTransceiversReachAreNoted) {
  // 4 tiers, 2 zones of 2 pods on radix 128 (65,536 GPUs): the super-spine to core cables at 50 km are
  // priced as FR (the longest optic of the cost model, 2 km), which they cannot be: a note says so.
  Result r = run("design clos-1m-800g --set topology.gpus=65536 --set topology.pods_per_zone=1 --set "
                 "cabling.super_spine_to_core=50km");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("65,536 optical cables are longer than the 2 km an FR transceiver reaches (up to 50 km)"),
            std::string::npos)
      << r.out;
  r = run("design clos-1m-800g --set topology.gpus=65536 --set topology.pods_per_zone=1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("FR transceiver reaches"), std::string::npos) << r.out;
}

TEST(Cli, APartFilledPodPricesItsSpareSpineLayer) {
  // aipod-16k at 2,048 GPUs: pod 0 holds 4 of the 16 groups a pod takes, and its 128 spines (16 per rail x 8)
  // and their 128 x 64 = 8,192 super-spine uplinks are built whole. At the default prices a 400G switch is
  // $70,400 and an uplink $1,200 (two SR transceivers at $500, 100 m of fibre at $2): the 12 missing groups'
  // share is 0.75 x (128 x 70,400 + 8,192 x 1,200) = $14,131,200.
  Result r = run("design aipod-16k --set topology.gpus=2048");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("of which spare in pod 0's spine layer (4 of 16 groups)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("$14,131,200"), std::string::npos) << r.out;
  // A whole number of pods has no spare row.
  r = run("design aipod-16k");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("of which spare"), std::string::npos) << r.out;
}

TEST(Cli, OutputsAreDeterministic) {
  for (const char* args : {"design aipod-16k", "design aipod-16k --format json", "design leafspine-8k --format csv",
                           "design fat-tree-k48 --export dot", "design leafspine-8k --export graphml"}) {
    Result a = run(args), b = run(args);
    ASSERT_EQ(a.status, 0) << args;
    EXPECT_FALSE(a.out.empty()) << args;
    EXPECT_EQ(a.out, b.out) << args;
  }
}

TEST(Cli, BenchAlgoIsInTheResolvedScenario) {
  // --algo ring (one of NCCL's algorithms) is also collective.algorithms: the tuner line says it, and the resolved
  // scenario of --out reproduces the run. It said "algorithms auto", and the resolved scenario re-run chose
  // nvls_tree at 1 MiB over 16 GPUs: another algorithm and time than the run it was written by.
  fs::path dir = temp_dir() / "algo";
  fs::remove_all(dir);
  const std::string sizes = " --gpus 0-15 --min 1MiB --max 1MiB";
  Result r = run("bench aipod-16k" + sizes + " --algo ring --out " + dir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("tuner: algorithms ring,"), std::string::npos) << r.out;
  const std::string resolved = read_file(dir / "scenario.resolved.yaml");
  EXPECT_NE(resolved.find("algorithms: ring"), std::string::npos) << resolved;
  Result again = run("bench " + (dir / "scenario.resolved.yaml").string() + sizes);
  ASSERT_EQ(again.status, 0) << again.out;
  const auto row = [](const std::string& out) {  // the size's row: time, bandwidths, algorithm, protocol, channels
    const size_t at = out.find("\n  1,048,576");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at + 1) - at);
  };
  EXPECT_FALSE(row(r.out).empty()) << r.out;
  EXPECT_EQ(row(again.out), row(r.out));
  EXPECT_NE(row(again.out).find(" ring "), std::string::npos) << again.out;
}

TEST(Cli, OutDirWritesEverything) {
  fs::path dir = temp_dir() / "out";
  fs::remove_all(dir);
  fs::path plan = temp_dir() / "cables.csv";
  Result r = run("design leafspine-8k --out " + dir.string() + " --cabling-plan " + plan.string());
  ASSERT_EQ(r.status, 0);
  for (const char* f : {"design.json", "design.csv", "design.txt", "scenario.resolved.yaml"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  // The resolved scenario runs again to the same design.
  Result again = run("design " + (dir / "scenario.resolved.yaml").string() + " --format json");
  Result first = run("design leafspine-8k --format json");
  ASSERT_EQ(again.status, 0);
  auto strip = [](std::string s) {
    return std::regex_replace(blank_sha(s), std::regex("\"(scenario|source)\": \"[^\"]*\""), "\"$1\": \"\"");
  };
  EXPECT_EQ(strip(again.out), strip(first.out));
  // cabling plan: header + one row per network cable: 8192 NIC-leaf + 128 leaves x 64 spines = 16384 cables.
  std::string csv = read_file(plan);
  size_t lines = std::count(csv.begin(), csv.end(), '\n');
  EXPECT_EQ(lines, 1u + 8192u + 8192u);
  EXPECT_EQ(csv.rfind("side_a_device,side_a_type,side_a_name,side_b_device,side_b_type,side_b_name,type,status,label,"
                      "length,length_unit",
                      0),
            0u);
}

TEST(Cli, DocumentsRecordTheOptionsThatRepeatTheRun) {
  // bench's sizes, op and group are options, not scenario keys: without them the run block (scenario + --set)
  // would repeat another bench. --engine sets network.engine (an override already); --format and --out only
  // say where the result goes; --factor 2 is its default.
  const fs::path dir = temp_dir() / "options";
  Result r =
      run("bench leafspine-8k --engine analytical --op allgather -b 1MiB -e 4MiB -F 2 -g 0-63 --format json --out " +
          dir.string());
  ASSERT_EQ(r.status, 0);
  nlohmann::json run_block = nlohmann::json::parse(r.out)["run"];
  EXPECT_EQ(run_block["options"],
            (nlohmann::json{{"--gpus", "0-63"}, {"--max", "4MiB"}, {"--min", "1MiB"}, {"--op", "allgather"}}))
      << run_block.dump();
  EXPECT_EQ(run_block["overrides"], nlohmann::json::array({"network.engine=analytical"}));
  // The file --out wrote says the same.
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "bench.json"))["run"]["options"], run_block["options"]);
  // A flag is recorded as true; a run given no such option has no "options".
  r = run("train leafspine-8k --engine analytical --allow-oom --set workload.dp=8 --format json");
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(nlohmann::json::parse(r.out)["run"]["options"], (nlohmann::json{{"--allow-oom", true}}));
  r = run("design leafspine-8k --format json");
  ASSERT_EQ(r.status, 0);
  EXPECT_FALSE(nlohmann::json::parse(r.out)["run"].contains("options"));
}

// Keys a JSON document must carry (dotted paths).
void expect_keys(const std::string& json, const std::vector<std::string>& keys, const std::string& what) {
  for (const auto& k : keys) {
    const std::string leaf = k.substr(k.rfind('.') == std::string::npos ? 0 : k.rfind('.') + 1);
    EXPECT_NE(json.find("\"" + leaf + "\":"), std::string::npos) << what << ": no key " << k;
  }
}

TEST(Cli, RunDefaultIsDesignPlusTraining) {
  Result r = run("run --format json");
  ASSERT_EQ(r.status, 0);
  expect_keys(r.out,
              {"bom.gpus", "bom.switches.total", "limits.max_gpus", "training.iteration_time_ms",
               "training.breakdown_ms.compute", "training.breakdown_ms.bubble", "training.mfu",
               "training.tokens_per_second", "training.days_to_train", "training.placement.cross_spine_fraction"},
              "podnet run");
  EXPECT_NE(r.out.find("\"scenario\": \"aipod-16k\""), std::string::npos);
  // The default job (Llama 3 405B on 16,384 GPUs) takes seconds: it runs once here; its determinism is the
  // golden run train-aipod-16k's (the same job at DP8, run twice).
}

TEST(Cli, RunTimesTheInjectedFailuresAsTrainDoes) {
  // `podnet run --fail-switches spine=1` (an example of run's --help) had recorded the failure in its run block and
  // printed the run without it.
  const std::string args = "leafspine-8k --set topology.gpus=1024 --fail-switches spine=1";
  Result r = run("run " + args);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("iteration time, no failures"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("with the injected failures: iteration"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(1 of 8 spine switches), down before the run"), std::string::npos) << r.out;
  // The same figures as train's for the same job.
  const nlohmann::json ran = nlohmann::json::parse(run("run " + args + " --format json").out);
  const nlohmann::json trained = nlohmann::json::parse(run("train " + args + " --format json").out);
  EXPECT_EQ(ran["training"]["failures"], trained["failures"]);
}

TEST(Cli, ResolveSaysWhatThePresetsGiveTheKeysLeftOut) {
  // Beside the `auto` keys, the keys a preset fills (the model's shape, the GPU's compute fit): the trailer had
  // promised what each auto becomes and left them out. A time of zero reads 0s, as the keys' defaults do.
  // Expected: Llama 3 405B's published shape (Dubey et al. 2024, Table 3; vocabulary 128,256); the h100 preset's
  // 794.5 / 989 = 0.803 and 327.9 / 989 = 0.332 of peak, and its fit's 0.83 and 400 us (workload/model.cpp).
  Result r = run("resolve aipod-16k");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("#   workload model shape (llama3-405b): layers 126, hidden 16,384, heads 128, kv_heads 8, "
                       "ffn 53,248, vocab 128,256, seq 8,192\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("#   workload compute (h100 preset): compute_efficiency 0.803, attention_efficiency 0.332, "
                       "sustained_fraction 0.830, layer_overhead 400us\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  step_overhead: 0s\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("0ps"), std::string::npos) << r.out;
}

TEST(Cli, TrainRefusesAJobThatDoesNotFitUnlessAllowOom) {
  // Llama 3 405B on one TP8 server: 405.8e9 / 8 parameters x 16 bytes (bf16 weights and gradients, fp32 Adam
  // states) = 812 GB per GPU before activations, against 85.9 GB.
  const std::string args =
      "train leafspine-8k --engine analytical --set workload.model=llama3-405b --set workload.tp=8 "
      "--set workload.pp=1 --set workload.dp=1 --set workload.global_batch=1";
  Result r = run(args, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--set workload.tp: the job (llama3-405b, TP8 x PP1 x DP1) needs 881.0 GB per GPU"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("h100 has 85.9 GB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("raise workload.tp/pp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--allow-oom"), std::string::npos) << r.out;
  Result forced = run(args + " --allow-oom --format json");
  ASSERT_EQ(forced.status, 0) << forced.out;
  EXPECT_NE(forced.out.find("\"fits\": false"), std::string::npos);
}

TEST(Cli, DiffLabelsEveryTrainFigureInWords) {
  // Every row of a train diff, --all of them, by a label, not a key ("dp", "plan, flows",
  // "placement.cross_spine_fraction" as 0.1076): no underscore and no dotted key in the figure column.
  Result r = run("diff leafspine-8k fat-tree-k48 --study train --engine analytical --all");
  ASSERT_EQ(r.status, 0) << r.out;
  std::istringstream lines(r.out);
  bool table = false;
  int rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("    figure ", 0) == 0) table = true;
    if (!table || line.rfind("    ", 0) != 0 || line.find("----") != std::string::npos || line.find("figure") == 4)
      continue;
    const std::string label = line.substr(4, line.find("  ", 4) - 4);
    ++rows;
    EXPECT_EQ(label.find('_'), std::string::npos) << line;
    EXPECT_EQ(label.find("placement."), std::string::npos) << line;
  }
  EXPECT_GT(rows, 30) << r.out;
  EXPECT_NE(r.out.find("DP+PP bytes crossing the spine"), std::string::npos) << r.out;
}

TEST(Cli, DiffOfAModelChangeWhoseTunersChoseTreeAndRingPrints) {
  // A (GPT-3 175B, no SP) reduces its gradients with a tree, B (Llama 3 70B with SP) with a ring, and B's TP
  // all-gathers inside a server run only as rings: holding one choice must leave out A's tree, not the ring.
  // It had left out the ring, and the whole diff stopped on B's TP all-gather.
  Result r = run("diff leafspine-8k leafspine-8k --set-b workload.model=llama3-70b --study train --engine analytical");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("with the same DP algorithm on both sides (--set 'collective.algorithms=^tree')"),
            std::string::npos)
      << r.out;
}

TEST(Cli, DiffWhoseTunerChoseOtherCollectivesAlsoComparesUnderOneChoice) {
  // 400G against 800G: the tuner picks ring for A and PAT for B. diff runs both again with PAT left out and gives
  // that change too; it must equal what a diff run with that key on both sides says.
  const std::string what = "diff aipod-16k aipod-16k --study train --engine analytical --set-b "
                           "server.nic_speed=800Gbps --set-b switch.port_speed=800Gbps";
  Result r = run(what + " --format json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto dc = nlohmann::json::parse(r.out)["attribution"]["train"]["dp_collectives"];
  ASSERT_EQ(dc["hold"], "collective.algorithms=^pat") << dc.dump();
  ASSERT_TRUE(dc.contains("held")) << dc.dump();
  Result one = run(what + " --set 'collective.algorithms=^pat' --format json");
  ASSERT_EQ(one.status, 0) << one.out;
  const auto at = nlohmann::json::parse(one.out)["attribution"]["train"];
  // One algorithm on both sides (only the channels differ): nothing left to hold.
  EXPECT_FALSE(at["dp_collectives"].contains("hold")) << at.dump();
  EXPECT_EQ(dc["held"]["iteration_time_ms_delta"], at["iteration_time_ms_delta"]);
  EXPECT_EQ(dc["held"]["by_breakdown_ms"], at["by_breakdown_ms"]);
  // The table gives both headlines, the one-choice one first.
  Result t = run(what);
  ASSERT_EQ(t.status, 0) << t.out;
  const size_t held = t.out.find("with the same DP algorithm on both sides (--set 'collective.algorithms=^pat'):");
  const size_t tuner = t.out.find("with NCCL's tuner's choice on each side (the table below):");
  ASSERT_NE(held, std::string::npos) << t.out;
  ASSERT_NE(tuner, std::string::npos) << t.out;
  EXPECT_LT(held, tuner);
}

TEST(Cli, TrainTimesPatDataParallelCollectivesAndSaysSo) {
  // The default job at 800 Gb/s: NCCL's tuner picks PAT for the 128-GPU data-parallel reduce-scatters (one GPU a
  // server) of its 190 MiB buckets and for the first bucket's all-gathers, on 8 channels. One transfer per position
  // was 128 x 7 steps x 8 channels + 1 latency delay = 7,169 a collective, and the plan passed podnet's
  // 4,194,304-transfer limit after 583 of them; with PAT's steps coupled (collective/pat.hpp: a step of every
  // channel one transfer) a collective is 7 + 1 = 8, so the DP collectives hold 8 x dp_collectives transfers and
  // the job is timed. The report names what they ran as.
  const std::string args =
      "train aipod-16k --engine analytical --set server.nic_speed=800Gbps --set switch.port_speed=800Gbps";
  Result r = run(args + " --format json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const auto& plan = j["plan"];
  int64_t pat = 0;
  for (const auto& c : plan["dp_choices"]) {
    EXPECT_EQ(c["algorithm"], "pat") << c.dump();
    EXPECT_EQ(c["protocol"], "simple") << c.dump();
    EXPECT_EQ(c["channels"], 8) << c.dump();
    pat += c["collectives"].get<int64_t>();
  }
  EXPECT_EQ(pat, plan["dp_collectives"].get<int64_t>());
  EXPECT_GT(pat, 128 * 31);  // 128 DP groups x 31 buckets of reduce-scatter, at least
  const int64_t transfers = plan["transfers"].get<int64_t>();
  EXPECT_GE(transfers, 8 * pat + plan["p2p_transfers"].get<int64_t>());
  EXPECT_LT(transfers, 60'000);
  Result text = run(args);
  ASSERT_EQ(text.status, 0) << text.out;
  EXPECT_NE(flat(text.out).find("reducescatter pat/simple on 8 channels"), std::string::npos) << text.out;
  // And why it may be slower than at 400G, with the key that times rings instead.
  EXPECT_NE(flat(text.out).find("note: NCCL's tuner chose PAT for data-parallel collectives: it prices each algorithm "
                                "on an idle fabric, not under the job's own traffic. To time rings instead: --set "
                                "'collective.algorithms=^pat'"),
            std::string::npos)
      << text.out;
}

TEST(Cli, TrainAndReliabilityJson) {
  Result t = run("train leafspine-8k --engine analytical --format json");
  ASSERT_EQ(t.status, 0);
  expect_keys(t.out,
              {"iteration_time_ms", "breakdown_ms.tp", "breakdown_ms.pp", "breakdown_ms.dp", "breakdown_ms.ep", "mfu",
               "days_to_train", "placement.cross_spine_fraction"},
              "podnet train");
  // Days with failures = failure-free days / goodput (Daly's interval on the job's MTBI).
  std::smatch days, with, goodput;
  ASSERT_TRUE(std::regex_search(t.out, days, std::regex("\"days_to_train\": ([0-9.]+)")));
  ASSERT_TRUE(std::regex_search(t.out, with, std::regex("\"days_to_train_with_failures\": ([0-9.]+)")));
  ASSERT_TRUE(std::regex_search(t.out, goodput, std::regex("\"goodput\": ([0-9.]+)")));
  EXPECT_GT(std::stod(with[1].str()), std::stod(days[1].str()));
  EXPECT_NEAR(std::stod(with[1].str()), std::stod(days[1].str()) / std::stod(goodput[1].str()), 0.01);
  Result rel = run("reliability aipod-16k --format json");
  ASSERT_EQ(rel.status, 0);
  expect_keys(rel.out,
              {"interruption_probability", "mtbi_hours", "by_component", "checkpoint.interval_minutes",
               "checkpoint.goodput"},
              "podnet reliability");
  Result bad = run("train aipod-16k --set workload.tp=7", true);
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("workload.tp"), std::string::npos) << bad.out;
}

TEST(Cli, TrainInFp8SaysSoAndPrintsBothMfus) {
  // The default job with its transformer GEMMs in FP8: the report names the FP8 rate and its source, and the MFU of
  // the FP8 peak is the BF16-peak MFU x 989 / 1,979 (the H100's dense peaks); the FP8 GEMMs make the step faster.
  Result bf16 = run("train aipod-16k --engine analytical --format json");
  Result fp8 = run("train aipod-16k --engine analytical --set workload.precision=fp8 --format json");
  ASSERT_EQ(bf16.status, 0) << bf16.out;
  ASSERT_EQ(fp8.status, 0) << fp8.out;
  const nlohmann::json b = nlohmann::json::parse(bf16.out), f = nlohmann::json::parse(fp8.out);
  EXPECT_EQ(b["gpu"]["precision"], "bf16");
  EXPECT_FALSE(b.contains("mfu_of_fp8_peak"));
  EXPECT_EQ(f["gpu"]["precision"], "fp8");
  EXPECT_DOUBLE_EQ(f["gpu"]["fp8_peak_tflops"].get<double>(), 1979.0);
  EXPECT_NEAR(f["mfu_of_fp8_peak"].get<double>(), f["mfu"].get<double>() * 989 / 1979, 1e-6);
  EXPECT_LT(f["iteration_time_ms"].get<double>(), b["iteration_time_ms"].get<double>());
  Result text = run("train aipod-16k --engine analytical --set workload.precision=fp8");
  ASSERT_EQ(text.status, 0) << text.out;
  EXPECT_NE(text.out.find("FP8 GEMMs in the transformer layers (workload.precision fp8) at 63.5% of the 1979 TFLOPS"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("MFU of the FP8 peak"), std::string::npos) << text.out;
}

TEST(Cli, HugePagesLeaveResultsAsTheyWere) {
  // core/process.hpp: podnet runs itself again, once, with glibc's huge-page tunable when the kernel grants huge
  // pages on request. Whether it does or not, and whatever else GLIBC_TUNABLES holds, the bytes out are the same.
  const std::string podnet = PODNET_BINARY;
  const std::string args = " bench aipod-16k --gpus 0-63 --min 1MiB --max 64MiB --factor 8 --format json";
  const Result fresh =
      run_shell("env -u PODNET_HUGE_PAGES -u PODNET_HUGE_PAGES_SET -u GLIBC_TUNABLES " + podnet + args);
  const Result off = run_shell("env PODNET_HUGE_PAGES=0 " + podnet + args);
  const Result on = run_shell("env -u PODNET_HUGE_PAGES_SET -u GLIBC_TUNABLES PODNET_HUGE_PAGES=1 " + podnet + args);
  const Result other =
      run_shell("env -u PODNET_HUGE_PAGES_SET GLIBC_TUNABLES=glibc.malloc.tcache_count=7 " + podnet + args);
  ASSERT_EQ(fresh.status, 0) << fresh.out;
  ASSERT_EQ(off.status, 0) << off.out;
  ASSERT_EQ(on.status, 0) << on.out;
  ASSERT_EQ(other.status, 0) << other.out;
  EXPECT_FALSE(fresh.out.empty());
  EXPECT_EQ(fresh.out, off.out);
  EXPECT_EQ(fresh.out, on.out);
  EXPECT_EQ(fresh.out, other.out);
  // `podnet --version` says what was done. Turned off by the user: off. Where the kernel grants huge pages on
  // request (its mode "madvise"), with glibc 2.35 or later and glibc's own malloc: on. Started through the dynamic
  // loader (whose /proc/self/exe is the loader, not podnet): off, and podnet still runs.
  const Result v_off = run_shell("env PODNET_HUGE_PAGES=off " + podnet + " --version", true);
  EXPECT_NE(v_off.out.find("huge pages: off (PODNET_HUGE_PAGES)"), std::string::npos) << v_off.out;
  const Result v =
      run_shell("env -u PODNET_HUGE_PAGES -u PODNET_HUGE_PAGES_SET -u GLIBC_TUNABLES " + podnet + " --version", true);
  std::string mode;
  {
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
    std::getline(f, mode);
  }
  int major = 0, minor = 0;
#ifdef __GLIBC__
  std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor);
#endif
  const bool glibc_235 = major > 2 || (major == 2 && minor >= 35);
  bool sanitizer = false;  // as core/process.cpp decides it
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
  sanitizer = true;
#endif
#endif
  if (mode.find("[madvise]") != std::string::npos && glibc_235 && !sanitizer) {
    // In a virtual machine that hands freed memory back to its host: off unless PODNET_HUGE_PAGES=1 asks.
    if (podnet::free_page_reporting()) {
      EXPECT_NE(v.out.find("huge pages: off (this virtual machine hands freed memory back"), std::string::npos)
          << v.out;
    } else {
      EXPECT_NE(v.out.find("huge pages: on (glibc.malloc.hugetlb=1"), std::string::npos) << v.out;
    }
    const Result v_on =
        run_shell("env -u PODNET_HUGE_PAGES_SET -u GLIBC_TUNABLES PODNET_HUGE_PAGES=on " + podnet + " --version", true);
    EXPECT_NE(v_on.out.find("huge pages: on (glibc.malloc.hugetlb=1"), std::string::npos) << v_on.out;
  } else {
    std::printf("  (not re-executed here: kernel mode '%s', glibc %d.%d%s): %s", mode.c_str(), major, minor,
                sanitizer ? ", a sanitizer's allocator" : "", v.out.c_str());
  }
  const char* loader = "/lib64/ld-linux-x86-64.so.2";
  if (std::filesystem::exists(loader) && !sanitizer && major > 0) {
    const Result l = run_shell(std::string("env -u PODNET_HUGE_PAGES -u PODNET_HUGE_PAGES_SET -u GLIBC_TUNABLES ") +
                                   loader + " " + podnet + " --version",
                               true);
    EXPECT_EQ(l.status, 0) << l.out;
    EXPECT_NE(l.out.find("huge pages: off (started through the dynamic loader)"), std::string::npos) << l.out;
  }
}

TEST(Cli, TrainWithAStraggler) {
  // A GPU of the last pipeline stage computing 1.5x slower: the iteration is
  // slower, but by less than 1.5x (only that stage's compute is stretched).
  Result r = run("train leafspine-8k --format json --set 'failures=[{at: 0ms, gpu: 8191, action: slow, factor: 1.5}]'");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::smatch m = [&] {
    std::smatch x;
    std::regex_search(r.out, x, std::regex("\"slowdown\": ([0-9.]+)"));
    return x;
  }();
  ASSERT_EQ(m.size(), 2u) << r.out;
  const double slowdown = std::stod(m[1].str());
  EXPECT_GT(slowdown, 1.0);
  EXPECT_LT(slowdown, 1.5);
  EXPECT_NE(r.out.find("\"job_failed\": false"), std::string::npos);
  // The table shows the failed iteration beside the headline, with the same figures as the document.
  const nlohmann::json d = nlohmann::json::parse(r.out);
  const Result t = run("train leafspine-8k --set 'failures=[{at: 0ms, gpu: 8191, action: slow, factor: 1.5}]'");
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_NE(t.out.find("iteration time, no failures "), std::string::npos) << t.out;
  const std::string row = fmt::format("iteration time with the injected failures  {} ms ({}x)",
                                      podnet::report::fixed(d["failures"]["iteration_ms"].get<double>(), 2),
                                      podnet::report::fixed(d["failures"]["slowdown"].get<double>(), 3));
  const std::regex spaced(R"(iteration time with the injected failures +)");
  EXPECT_NE(std::regex_replace(t.out, spaced, "iteration time with the injected failures  ").find(row),
            std::string::npos)
      << row << "\n"
      << t.out;
}

TEST(Cli, TrainSaysWhatSetsALowGoodput) {
  // A 2 h restart against an interruption every 2.82 h (aipod-16k's 254.9 in 30 days) leaves 38.2 % of the time
  // training: the line under the days to train names the keys that set the costs. The defaults keep 73.2 %: no line.
  Result r = run("train aipod-16k --engine analytical --set reliability.restart_cost=2h");
  ASSERT_EQ(r.status, 0) << r.out;
  // By hand from Daly (2006): M = 30 days / the expected interruptions `reliability` prints, checkpoint cost
  // d = 5 min, restart R = 2 h, interval t = sqrt(2 d M) (1 + sqrt(d / 2M) / 3 + d / 18M) - d, and
  // goodput = t / (M e^(R/M) (e^((t + d)/M) - 1)): 254.9 interruptions give 38.243 %.
  const Result rel = run("reliability aipod-16k");
  std::smatch count, printed;
  ASSERT_TRUE(std::regex_search(rel.out, count, std::regex(R"(expected interruptions +([0-9.]+))"))) << rel.out;
  ASSERT_TRUE(std::regex_search(r.out, printed, std::regex(R"(goodput ([0-9.]+)%)"))) << r.out;
  const double m = 30 * 24 / std::stod(count[1].str()), d = 5.0 / 60, restart = 2;
  const double tau = std::sqrt(2 * d * m) * (1 + std::sqrt(d / (2 * m)) / 3 + d / (18 * m)) - d;
  const double goodput = tau / (m * std::exp(restart / m) * (std::exp((tau + d) / m) - 1));
  EXPECT_NEAR(std::stod(printed[1].str()), 100 * goodput, 0.01) << r.out;
  EXPECT_NE(r.out.find("(goodput under 50%: each interruption costs a 120.0 min restart"), std::string::npos) << r.out;
  r = run("train aipod-16k --engine analytical");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("goodput under 50%"), std::string::npos) << r.out;
  // The default job keeps 73.19 % on podnet's assumed 5 min checkpoints and 10 min restarts: said to be
  // assumptions, with the keys that set them.
  EXPECT_NE(flat(r.out).find("(goodput under 80%: each interruption costs a 10.0 min restart and the lost work since "
                             "the last checkpoint, and each checkpoint 5.0 min; these are assumptions"),
            std::string::npos)
      << r.out;
}

TEST(Cli, TrainNamesTheStraggler) {
  // The same straggler (GPU 8191, compute x1.5): straggler detection puts the largest excess on the critical
  // path in the compute of the stage holding GPU 8191 (leafspine-8k's default job: PP8 over 8,192 GPUs, stage 7
  // = GPUs 7168-8191, its computes run in lockstep over them), and the one failure, left out, gives the
  // baseline back: it costs exactly the whole slowdown.
  Result r = run("train leafspine-8k --format json --set 'failures=[{at: 0ms, gpu: 8191, action: slow, factor: 1.5}]'");
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json d = nlohmann::json::parse(r.out);
  const auto& st = d["failures"]["straggler"];
  ASSERT_FALSE(st["parts"].empty()) << st.dump();
  EXPECT_EQ(st["parts"][0]["stage"], 7);
  EXPECT_EQ(st["parts"][0]["part"], "compute");
  EXPECT_EQ(st["parts"][0]["gpus"], "7168-8191");
  // Every stretched part is stage 7's (compute and the TP delays that run on its GPUs).
  for (const auto& p : st["parts"]) EXPECT_EQ(p["stage"], 7) << p.dump();
  ASSERT_EQ(st["failure_costs"].size(), 1u);
  EXPECT_EQ(st["failure_costs"][0]["what"], "gpu 8191 slowed x1.5");
  EXPECT_EQ(st["failure_costs"][0]["recovered_ms"], st["slowdown_ms"]);
  const double slowdown = st["slowdown_ms"].get<double>();
  EXPECT_NEAR(slowdown,
              d["failures"]["iteration_ms"].get<double>() - d["failures"]["baseline_iteration_ms"].get<double>(), 1e-5);
  EXPECT_GE(st["critical_path_excess_ms"].get<double>(), slowdown - 1e-6);  // the path bound (straggler.hpp)
}

TEST(Cli, TrainWithAStragglerOnTheAnalyticalEngine) {
  // The same straggler on the analytical engine (slow GPUs are the failures it takes): the straggler report
  // names stage 7's compute, the one failure costs the whole slowdown, and the slowdown is the flow engine's
  // within 1 % (both stretch the same computes; the engines differ only in how they share links). A link
  // failure is refused, naming what this engine takes.
  const std::string straggler = "--set 'failures=[{at: 0ms, gpu: 8191, action: slow, factor: 1.5}]'";
  const Result a = run("train leafspine-8k --engine analytical --format json " + straggler);
  const Result f = run("train leafspine-8k --engine flow --format json " + straggler);
  ASSERT_EQ(a.status, 0) << a.out;
  ASSERT_EQ(f.status, 0) << f.out;
  const nlohmann::json da = nlohmann::json::parse(a.out), df = nlohmann::json::parse(f.out);
  const auto& st = da["failures"]["straggler"];
  ASSERT_FALSE(st["parts"].empty()) << st.dump();
  EXPECT_EQ(st["parts"][0]["stage"], 7);
  EXPECT_EQ(st["parts"][0]["part"], "compute");
  ASSERT_EQ(st["failure_costs"].size(), 1u);
  EXPECT_EQ(st["failure_costs"][0]["recovered_ms"], st["slowdown_ms"]);
  const double sa = da["failures"]["slowdown"].get<double>(), sf = df["failures"]["slowdown"].get<double>();
  EXPECT_GT(sa, 1.0);
  EXPECT_LT(sa, 1.5);
  EXPECT_NEAR(sa / sf, 1.0, 0.01) << sa << " against the flow engine's " << sf;
  // The table gives the rates at the slowed iteration: the document's MFU and tokens/s over the slowdown.
  const Result table = run("train leafspine-8k --engine analytical " + straggler);
  const std::string rates =
      fmt::format("at that iteration: MFU {}%, {} tokens/s",
                  podnet::report::fixed(100 * da["mfu"].get<double>() / sa, 1),
                  podnet::report::thousands(std::llround(da["tokens_per_second"].get<double>() / sa)));
  EXPECT_NE(table.out.find(rates), std::string::npos) << rates << "\n" << table.out;
  // The stage's GPUs in the straggler table name the slow one the scenario gave.
  EXPECT_NE(table.out.find("slow 8191 of 7168-8191"), std::string::npos) << table.out;
  const Result down =
      run("train leafspine-8k --engine analytical --set 'failures=[{at: 0ms, link: \"gpu-node-0000/nic0\", action: "
          "down}]'",
          true);
  EXPECT_EQ(down.status, 2) << down.out;
  EXPECT_NE(down.out.find("it takes slow GPUs only: gpu: N, action: slow"), std::string::npos) << down.out;
}

TEST(Cli, TrainSaysWhenTheFailuresLengthenedNothing) {
  // A slow factor of 1, or a slowdown scheduled after the iteration ends (it lasts 2.5 s here), leaves the
  // iteration as it was: no straggler report and no failure costs (the iteration is not run 1 + N times more),
  // and the table says why. The event list names the factor.
  for (const char* f : {"[{at: 0ms, gpu: 8191, action: slow, factor: 1}]", "[{at: 100s, gpu: 8191, action: slow, "
                                                                           "factor: 1.5}]"}) {
    const std::string failures = fmt::format("--set 'failures={}'", f);
    const Result j = run("train leafspine-8k --engine analytical --format json " + failures);
    ASSERT_EQ(j.status, 0) << j.out;
    const nlohmann::json d = nlohmann::json::parse(j.out);
    EXPECT_EQ(d["failures"]["slowdown"].get<double>(), 1.0) << f;
    EXPECT_FALSE(d["failures"].contains("straggler")) << f;
    const Result table = run("train leafspine-8k --engine analytical " + failures);
    EXPECT_NE(table.out.find("(the iteration took no longer"), std::string::npos) << table.out;
    EXPECT_EQ(table.out.find("what made the step slower"), std::string::npos) << table.out;
  }
  const Result one = run("train leafspine-8k --engine analytical --set 'failures=[{at: 0ms, gpu: 8191, action: slow, "
                         "factor: 1}]'");
  EXPECT_NE(one.out.find("0.000 ms  gpu 8191 slowed x1\n"), std::string::npos) << one.out;
}

TEST(Cli, TrainCsvGivesEachStagesPartsInMsAndTheirSum) {
  // Every stage's parts add up to the iteration time (each stage's timeline spans the step).
  const std::string base =
      "train leafspine-8k --engine analytical --set workload.model=llama3-8b --set topology.gpus=64";
  const Result csv = run(base + " --format csv"), json = run(base + " --format json");
  ASSERT_EQ(csv.status, 0) << csv.out;
  std::istringstream in(csv.out);
  std::string header, row;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("stage,bubble_ms,compute_ms,", 0), 0u) << header;
  std::vector<std::string> cols, cells;
  for (std::istringstream h(header); std::getline(h, row, ',');) cols.push_back(row);
  std::getline(in, row);
  for (std::istringstream r(row); std::getline(r, header, ',');) cells.push_back(header);
  const auto step = std::find(cols.begin(), cols.end(), "step_ms") - cols.begin();
  ASSERT_LT(static_cast<size_t>(step), cells.size());
  EXPECT_NEAR(std::stod(cells[static_cast<size_t>(step)]),
              nlohmann::json::parse(json.out)["iteration_time_ms"].get<double>(), 1e-5);
  // The headline figures ride on every row, as the JSON gives them.
  for (const char* k : {"iteration_time_ms", "mfu", "tokens_per_second"}) {
    const auto at = std::find(cols.begin(), cols.end(), k) - cols.begin();
    ASSERT_LT(static_cast<size_t>(at), cells.size()) << k;
    EXPECT_NEAR(std::stod(cells[static_cast<size_t>(at)]), nlohmann::json::parse(json.out)[k].get<double>(),
                1e-6 * std::max(1.0, nlohmann::json::parse(json.out)[k].get<double>()))
        << k;
  }
}

TEST(Cli, TheScenarioPagesCompleteExampleRuns) {
  // docs/reference/scenario.md's complete example is what users copy: it runs as shown (failures included),
  // and so does the same fabric with the page's jobs: block in place of failures:.
  std::ifstream page(fs::path(PODNET_SOURCE_DIR) / "docs/reference/scenario.md");
  std::vector<std::string> blocks;
  std::string line, block;
  bool in = false;
  while (std::getline(page, line)) {
    if (!in && line == "```yaml") {
      in = true;
      block.clear();
    } else if (in && line == "```") {
      in = false;
      blocks.push_back(block);
    } else if (in) {
      block += line + "\n";
    }
  }
  ASSERT_GE(blocks.size(), 2u);
  const std::string full = write_file("scenario-page-example.yaml", blocks[0]);
  const std::string jobs =
      write_file("scenario-page-jobs.yaml", blocks[0].substr(0, blocks[0].find("failures:")) + blocks[1]);
  Result r = run("train " + full + " --format json");
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json d = nlohmann::json::parse(r.out);
  EXPECT_EQ(d["parallelism"]["gpus"], 4096);
  EXPECT_TRUE(d.contains("failures")) << r.out.substr(0, 2000);
  r = run("train " + jobs + " --format json");
  ASSERT_EQ(r.status, 0) << r.out;
  d = nlohmann::json::parse(r.out);
  EXPECT_EQ(d["jobs"].size(), 2u);
}

TEST(Cli, TrainRunsChakraTraces) {
  // ASTRA-sim's published 4-rank all-reduce trace (tests/data/chakra/README.md) on leafspine-8k: one ring
  // all-reduce of 1 MiB over the 4 placed GPUs; the iteration is that collective, exposed on every rank, and
  // what a trace does not know (parallelism, MFU, days to train) is null in JSON and '-' in the table.
  const std::string dir = (fs::path(PODNET_SOURCE_DIR) / "tests/data/chakra/astra-sim-all_reduce-4npus-1MB").string();
  Result r = run("train leafspine-8k --engine flow --format json --chakra " + dir);
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json d = nlohmann::json::parse(r.out);
  EXPECT_EQ(d["chakra"]["ranks"], 4);
  EXPECT_EQ(d["chakra"]["collectives"], 1);
  EXPECT_EQ(d["chakra"]["traffic"][0]["group"], "world");
  EXPECT_EQ(d["parallelism"]["gpus"], 4);
  EXPECT_TRUE(d["parallelism"]["tp"].is_null());
  EXPECT_TRUE(d["mfu"].is_null());
  EXPECT_GT(d["iteration_time_ms"].get<double>(), 0.0);
  EXPECT_EQ(d["iteration_time_ms"], d["breakdown_ms"]["collective"]);
  ASSERT_EQ(d["stages_ms"].size(), 4u);
  EXPECT_EQ(d["stages_ms"][3]["rank"], 3);
  r = run("train leafspine-8k --engine flow --chakra " + dir);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("4 ranks from Chakra traces"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("MFU \\(model FLOPs\\) +-\\n"))) << r.out;
  // Failures are not injected into an imported iteration: refused, naming the option, not dropped in silence.
  r = run("train leafspine-8k --engine flow --chakra " + dir + " --fail-links leaf-spine=50%", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--fail-links: failures are not simulated on an imported workload (--chakra) yet"),
            std::string::npos)
      << r.out;
  // A bad trace: exit status 2 and the file, the message and what is wrong.
  const fs::path bad = fs::temp_directory_path() / "podnet-cli-chakra-bad";
  fs::remove_all(bad);
  fs::create_directories(bad);
  podnet::cli::testing::write_file(bad, "x.0.et",
                                   std::string("\x07\x0a\x05"
                                               "0.0.4"
                                               "\x09\x08\x01",
                                               11));
  r = run("train leafspine-8k --chakra " + bad.string(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("x.0.et: message 2: a Node is truncated"), std::string::npos) << r.out;
}

TEST(Cli, TrainWithJobsRefusesTraceAndLeavesNoFile) {
  // Several jobs on one fabric have no trace yet: the refusal comes before the file is created.
  const std::string trace = (temp_dir() / "jobs-trace.json").string();
  fs::remove(trace);
  const Result r = run("train two-jobs --trace " + trace, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--trace: not available with several jobs"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(trace));
}

TEST(Cli, AFailedTrainLeavesAPreviousTraceAsItWas) {
  // The trace path is checked before the run without truncating it and written only after the run: a run
  // that fails (here the job's batch does not divide, found after the scenario loads) leaves a previous
  // trace whole.
  const std::string trace = (temp_dir() / "kept-trace.json").string();
  write_file("kept-trace.json", "{\"previous\": true}\n");
  const Result r = run("train leafspine-8k --engine analytical --set workload.model=llama3-8b --set workload.tp=8 "
                       "--set workload.pp=1 --set workload.dp=3 --set workload.global_batch=8 --trace " +
                           trace,
                       true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(read_file(trace), "{\"previous\": true}\n");
}

TEST(Cli, ATraceThatCannotBeWrittenIsAnErrorNotAFile) {
  // /dev/full accepts the open and fails every write with ENOSPC, as a full disk does: the run ends with exit 2
  // naming --trace, not "wrote trace".
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const Result r = run("train leafspine-8k --engine analytical --set workload.model=llama3-8b --set workload.tp=8 "
                       "--set workload.pp=2 --set workload.dp=2 --set workload.global_batch=8 --trace /dev/full",
                       true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--trace /dev/full: writing failed (No space left on device)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("wrote trace"), std::string::npos) << r.out;
  // Every file option is checked on close the same way, e.g. design's priced bill.
  const Result d = run("design leafspine-8k --cost-csv /dev/full", true);
  EXPECT_EQ(d.status, 2) << d.out;
  EXPECT_NE(d.out.find("--cost-csv /dev/full: writing failed (No space left on device)"), std::string::npos) << d.out;
}

TEST(Cli, TrainTraceArrowsConnectSlicesAndLinkCountersAreWellFormed) {
  // A small PP2 job (Llama 3 8B, TP8 x PP2 x DP2, 4 microbatches) on the flow engine: every PP send of replica
  // 0 (4 activations + 4 gradients) is an arrow from its slice on the pp lane to the pass that waits for it on
  // the other stage; the 8 links that carried the most bytes are counter tracks with utilizations in [0, 1].
  const std::string trace = (temp_dir() / "pp2-trace.json").string();
  Result r = run("train leafspine-8k --engine flow --set workload.model=llama3-8b --set workload.tp=8 "
                 "--set workload.pp=2 --set workload.dp=2 --set workload.global_batch=8 --trace-links 8 --trace " +
                 trace);
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json doc = nlohmann::json::parse(read_file(trace));
  struct Slice {
    int64_t start, end;
    std::string cat;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<Slice>> tracks;
  std::map<int64_t, std::vector<nlohmann::json>> flows;  // id -> its events
  std::map<std::string, std::vector<nlohmann::json>> counters;
  std::set<int64_t> named;  // pids with a process_name
  auto ns = [](const nlohmann::json& v) { return static_cast<int64_t>(v.get<double>() * 1000.0); };
  for (const auto& e : doc["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "X") tracks[{e["pid"], e["tid"]}].push_back({ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["cat"]});
    else if (ph == "s" || ph == "f") flows[e["id"].get<int64_t>()].push_back(e);
    else if (ph == "C") counters[e["name"]].push_back(e);
    else if (ph == "M" && e["name"] == "process_name") named.insert(e["pid"].get<int64_t>());
  }
  // The slice on (pid, tid) that holds time t.
  auto holder = [&](const nlohmann::json& e) -> const Slice* {
    for (const Slice& x : tracks[{e["pid"], e["tid"]}])
      if (x.start <= ns(e["ts"]) && ns(e["ts"]) <= x.end) return &x;
    return nullptr;
  };
  ASSERT_EQ(flows.size(), 8u);
  for (const auto& [id, evs] : flows) {
    ASSERT_EQ(evs.size(), 2u) << id;
    const nlohmann::json& s = evs[0]["ph"] == "s" ? evs[0] : evs[1];
    const nlohmann::json& f = evs[0]["ph"] == "s" ? evs[1] : evs[0];
    ASSERT_EQ(s["ph"], "s");
    ASSERT_EQ(f["ph"], "f");
    EXPECT_EQ(f["bp"], "e");
    EXPECT_EQ(s["cat"], f["cat"]);
    EXPECT_NE(s["pid"], f["pid"]);  // from one stage to the other
    EXPECT_LE(ns(s["ts"]), ns(f["ts"]));
    const Slice* from = holder(s);
    const Slice* to = holder(f);
    ASSERT_NE(from, nullptr) << s.dump();
    ASSERT_NE(to, nullptr) << f.dump();
    EXPECT_EQ(from->cat, "pp");
    EXPECT_EQ(to->cat, "compute");
    EXPECT_GE(to->start, from->end);  // the pass starts once the send is done
  }
  ASSERT_EQ(counters.size(), 8u);
  for (const auto& [name, evs] : counters) {
    int64_t last = -1;
    for (const auto& e : evs) {
      EXPECT_TRUE(named.count(e["pid"].get<int64_t>())) << name;
      const double u = e["args"]["utilization"].get<double>();
      EXPECT_GE(u, 0.0) << name;
      EXPECT_LE(u, 1.0 + 1e-9) << name;
      EXPECT_GE(ns(e["ts"]), last) << name;
      last = ns(e["ts"]);
    }
  }
}

TEST(Cli, BenchWithRandomFailures) {
  // Two GPU failures drawn over the failure-free run: each stops the job, so the
  // job fails at the first one, inside the baseline time; the draw is seeded.
  const std::string args = "bench leafspine-8k --engine flow --gpus 0-63 --min 16MiB --max 16MiB --format json "
                           "--set 'failures=[{random: 2, parts: [gpu]}]'";
  Result a = run(args);
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_NE(a.out.find("\"scheduled\": 2"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("\"job_failed\": true"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("random GPU failure: gpu "), std::string::npos) << a.out;
  std::smatch base, failed;
  ASSERT_TRUE(std::regex_search(a.out, base, std::regex("\"baseline_time_us\": ([0-9.]+)")));
  ASSERT_TRUE(std::regex_search(a.out, failed, std::regex("\"failed_at_us\": ([0-9.]+)")));
  EXPECT_LT(std::stod(failed[1].str()), std::stod(base[1].str()));
  EXPECT_EQ(blank_sha(run(args).out), blank_sha(a.out));
}

TEST(Cli, BenchSaysWhatItCannotHonour) {
  // An empty --gpus ran every GPU of the fabric.
  Result r = run("bench aipod-16k --gpus '' --min 1MiB --max 1MiB", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--gpus '': expected GPU ranks"), std::string::npos) << r.out;
  // --channels inside one server changes nothing podnet models: said, and the time is indeed the same.
  const Result warned = run("bench aipod-16k --gpus 0-7 --algo ring --min 1GiB --max 1GiB --channels 1", true);
  EXPECT_NE(warned.out.find("--channels 1: inside one server the channels share the NVLink rate"), std::string::npos)
      << warned.out;
  r = run("bench aipod-16k --gpus 0-7 --algo ring --min 1GiB --max 1GiB --channels 1 --format json");
  ASSERT_EQ(r.status, 0) << r.out;
  const Result all = run("bench aipod-16k --gpus 0-7 --algo ring --min 1GiB --max 1GiB --channels 16 --format json");
  ASSERT_EQ(all.status, 0) << all.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["rows"][0]["time_us"], nlohmann::json::parse(all.out)["rows"][0]["time_us"]);
  // A permutation sends each pair's data as its own flows: --channels is said to change nothing, and does not.
  const std::string perm = "bench leafspine-8k --op permutation --gpus 0-1023:8 --min 4MiB --max 4MiB --format json";
  const Result one = run(perm + " --channels 1"), sixteen = run(perm + " --channels 16", true);
  EXPECT_NE(sixteen.out.find("warning: --channels 16: --op permutation sends each pair's data as its own flow"),
            std::string::npos)
      << sixteen.out;
  const auto time_of = [](const std::string& out) {
    return nlohmann::json::parse(out.substr(out.find('{')))["rows"][0]["time_us"];
  };
  EXPECT_EQ(time_of(one.out), time_of(sixteen.out));
}

TEST(Cli, PacketEngineOnATorusAgreesWithTheFlowEngine) {
  // A 16-chip all-to-all of 128 MiB on torus-3d-4k: chips queue without bound, and the packet engine's
  // RTO of 1 ms + switch drain (no switches here) resent packets that were only queued: 20,668 us against
  // the flow engine's 5,767 (3.6x; 165x at 256 MiB). With the RDMA transport's own timeout the engines
  // agree within 10 % for one large collective, as on switched fabrics (docs/contributing/validation/packet-engine.md).
  const std::string args = " torus-3d-4k --gpus 0-15 --op alltoall --min 128MiB --max 128MiB --format json";
  const Result flow = run("bench" + args + " --engine flow");
  const Result packet = run("bench" + args + " --engine packet");
  ASSERT_EQ(flow.status, 0) << flow.out;
  ASSERT_EQ(packet.status, 0) << packet.out;
  const double f = nlohmann::json::parse(flow.out)["rows"][0]["time_us"].get<double>();
  const double p = nlohmann::json::parse(packet.out)["rows"][0]["time_us"].get<double>();
  EXPECT_NEAR(p / f, 1.0, 0.1) << "flow " << f << " us, packet " << p << " us";
}

TEST(Cli, PartitionedPacketEngineWritesTheSameJsonOnOneTwoAndFourThreads) {
  // An all-reduce across servers (NCCL's tuner, its slice pipeline, dependent steps through the
  // coordinator) on the partitioned packet engine: the document is the same on 1, 2 and 4 threads but for
  // the echo of the --set that chose the count.
  const std::string args = "bench aipod-16k --gpus 0-127:8 --min 1MiB --max 1MiB --engine packet --set "
                           "network.partitioned=true --format json --set network.threads=";
  std::string first;
  for (const char* threads : {"1", "2", "4"}) {
    const Result r = run(args + threads);
    ASSERT_EQ(r.status, 0) << r.out;
    nlohmann::json d = nlohmann::json::parse(r.out);
    EXPECT_EQ(d["bench"]["packet_engine"], "partitioned");
    ASSERT_TRUE(d["run"].contains("overrides"));
    d["run"].erase("overrides");
    if (first.empty()) first = d.dump();
    else EXPECT_EQ(d.dump(), first) << threads << " threads";
  }
  const Result text = run("bench aipod-16k --gpus 0-127:8 --min 1MiB --max 1MiB --engine packet --set "
                          "network.partitioned=true");
  // aipod-16k's units: its 2 pods, and each of its 128 super-spines on its own (partition.hpp): 130.
  EXPECT_NE(flat(text.out).find("partitioned engine, 130 units (the same results on every thread and rank count)"),
            std::string::npos)
      << text.out;
  // A torus is one partition: said, since the threads cannot help there.
  const Result torus = run("bench torus-3d-4k --engine packet --op permutation --gpus 0-63 --min 64KiB --max 64KiB "
                           "--set network.partitioned=true",
                           true);
  ASSERT_EQ(torus.status, 0) << torus.out;
  EXPECT_NE(flat(torus.out).find("note: network.partitioned: this fabric is one partition"), std::string::npos)
      << torus.out;
}

// Packets a silent fault lost are drops too: the summary line names them and counts them in its total
// (a corrupting spine and a dropping uplink of the diagnose golden's fabric, under a permutation).
TEST(Cli, TelemetrySummaryCountsSilentFaultLossesAsDrops) {
  const Result r =
      run("bench " + (fs::path(PODNET_SOURCE_DIR) / "tests/golden/diagnose-faults/scenario.yaml").string() +
              " --engine packet --op permutation --gpus 0-127 --min 1MiB --max 1MiB --format json",
          true);
  ASSERT_EQ(r.status, 0) << r.out;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.out, m, std::regex(R"(drops (\d+) \(buffer (\d+), link down (\d+), silent faults (\d+)\))")))
      << r.out;
  EXPECT_GT(std::stoi(m[4]), 0);
  EXPECT_EQ(std::stoi(m[1]), std::stoi(m[2]) + std::stoi(m[3]) + std::stoi(m[4]));
  // The document names the scenario's faults, as the table's header does (they were on stderr only).
  EXPECT_NE(r.out.find("\"faults\": [\n      \"drop on link "), std::string::npos) << r.out.substr(0, 2000);
}

// The partitioned engine on Open MPI ranks (engine/packet/partition.hpp, "Ranks"): one process, 2 ranks
// and 3 ranks of 2 threads write the same document. The ring pipelines its slices through the coordinator
// (the receivers' progress crosses ranks every window); spray keeps counters per unit.
TEST(Cli, PartitionedPacketEngineWritesTheSameJsonOnOneTwoAndThreeRanks) {
  for (const std::string args :
       {"bench aipod-16k --gpus 0-127:8 --min 4MiB --max 4MiB --algo ring --engine packet --format json --set "
        "network.partitioned=true",
        "bench leafspine-8k --op permutation --gpus 0-1023:4 --min 256KiB --max 256KiB --engine packet --set "
        "network.routing=spray --format json --set network.partitioned=true"}) {
    std::string first;
    for (const std::string& launch : {std::string(PODNET_BINARY) + " ", mpirun(2), mpirun(3)}) {
      const Result r = run_shell(launch + args + (launch == mpirun(3) ? " --set network.threads=2" : ""));
      ASSERT_EQ(r.status, 0) << launch << r.out;
      nlohmann::json d = nlohmann::json::parse(r.out);  // rank 0's alone: a second document would not parse
      EXPECT_EQ(d["bench"]["packet_engine"], "partitioned");
      d["run"].erase("overrides");
      if (first.empty()) first = d.dump();
      else EXPECT_EQ(d.dump(), first) << launch << args;
    }
  }
  // What does not share a run says so; what ranks cannot run yet is refused with the way out.
  const Result flow = run_shell(mpirun(2) + "bench leafspine-8k --gpus 0-15 --min 1MiB --max 1MiB", true);
  ASSERT_EQ(flow.status, 0) << flow.out;
  EXPECT_NE(flow.out.find("note: mpirun: each of the 2 ranks ran this whole run"), std::string::npos) << flow.out;
  const Result failed =
      run_shell(mpirun(2) + "bench leafspine-8k --gpus 0-15 --min 1MiB --max 1MiB --engine packet --set "
                            "network.partitioned=true --fail-links leaf-spine=1",
                true);
  EXPECT_EQ(failed.status, 2) << failed.out;
  EXPECT_NE(failed.out.find("network.partitioned under mpirun does not run failures yet; run it in one process"),
            std::string::npos)
      << failed.out;
}

// Telemetry on ranks: each rank samples its own ports and its own end of each queue pair, and the halves are
// joined at the end. Every file of the telemetry folder is the same as one process writes, queue depths over
// time included (an incast at 1 us samples).
TEST(Cli, PartitionedTelemetryIsTheSameOnRanks) {
  const std::string args =
      "bench leafspine-8k --op incast --gpus 0-256:4 --senders 8 --min 256KiB --max 256KiB --engine "
      "packet --set network.partitioned=true --telemetry-interval 1us --telemetry ";
  const fs::path one = temp_dir() / "telemetry-one", three = temp_dir() / "telemetry-three";
  ASSERT_EQ(run(args + one.string()).status, 0);
  ASSERT_EQ(run_shell(mpirun(3) + args + three.string()).status, 0);
  size_t files = 0;
  for (const auto& f : fs::directory_iterator(one)) {
    ++files;
    EXPECT_EQ(read_file(f.path().string()), read_file((three / f.path().filename()).string())) << f.path();
  }
  EXPECT_GE(files, 6u);  // ports, QPs, rates, queue depths, two metrics texts
  EXPECT_TRUE(fs::exists(one / "queue_depth.csv"));
}

// A small ring on the packet engine pays NCCL's latency once, whatever the QPs and the routing: 128
// servers x 1 GPU, ring LL at 512 B. NCCL's model: 1,276.65 us. With the slices fitted to the whole hop,
// each of 8 QPs (a hop's bytes / 8) cut its stream into fewer, larger slices and sent several pipeline
// slices at once, and the chain of 254 steps fell apart: 1,072.7 us. On a dragonfly with UGAL, the
// routes looked up for the latency credit booked load that was never released, and later routes went
// the long way: 1,293.4 us against ECMP's 1,278.3.
TEST(Cli, PacketSmallRingPaysNcclsLatencyWithQpsAndUgal) {
  const auto time_us = [](const std::string& args) {
    const Result r = run("bench " + args + " --algo ring --engine packet -b 512 -e 512 --format json");
    EXPECT_EQ(r.status, 0) << r.out;
    const auto row = nlohmann::json::parse(r.out)["rows"][0];
    return std::make_pair(row["time_us"].get<double>(), row["nccl_model_us"].get<double>());
  };
  for (const char* qps : {"1", "8"}) {
    const auto [t, model] = time_us(std::string("aipod-16k --gpus 0-1023:8 --qps ") + qps);
    EXPECT_NEAR(t / model, 1.0, 0.02) << qps << " QPs: " << t << " us, NCCL's model " << model << " us";
  }
  const double ugal = time_us("dragonfly-16k --gpus 0-16383:128 --routing ugal").first;
  const double ecmp = time_us("dragonfly-16k --gpus 0-16383:128 --routing ecmp").first;
  EXPECT_NEAR(ugal, ecmp, 0.005 * ecmp) << "ugal " << ugal << " us, ecmp " << ecmp << " us";
}

TEST(Cli, BenchRowsAndBadSizes) {
  Result b = run("bench leafspine-8k --gpus 0-63:8 --min 1MiB --max 4MiB --format json");
  ASSERT_EQ(b.status, 0);
  expect_keys(b.out, {"rows", "bytes", "time_us", "algbw_gbyte_per_s", "busbw_gbyte_per_s", "hottest_links"},
              "podnet bench");
  // 1 MiB, 2 MiB, 4 MiB: three rows
  const std::regex row("\"time_us\": [0-9]");
  EXPECT_EQ(std::distance(std::sregex_iterator(b.out.begin(), b.out.end(), row), std::sregex_iterator()), 3);
  Result bad = run("bench leafspine-8k --min 1XB", true);
  EXPECT_EQ(bad.status, 2);
  bad = run("bench leafspine-8k --gpus 0-99999", true);
  EXPECT_EQ(bad.status, 2);
  // Options that do not apply are named, not silently dropped; NCCL's model column is '-' with fixed channels.
  Result w = run("bench leafspine-8k --gpus 0-15 --op alltoall --proto ll --senders 3 --min 1MiB --max 1MiB", true);
  EXPECT_EQ(w.status, 0) << w.out;
  EXPECT_NE(w.out.find("warning: --senders applies to --op incast; ignored for alltoall"), std::string::npos) << w.out;
  EXPECT_NE(w.out.find("warning: --proto ll: alltoall is not tuned"), std::string::npos) << w.out;
  const auto fixed =
      nlohmann::json::parse(run("bench leafspine-8k --gpus 0-15 --channels 1 --min 1MiB --max 1MiB --format json").out);
  EXPECT_FALSE(fixed["rows"][0].contains("nccl_model_us")) << fixed["rows"][0];
  const auto tuned =
      nlohmann::json::parse(run("bench leafspine-8k --gpus 0-15 --min 1MiB --max 1MiB --format json").out);
  EXPECT_TRUE(tuned["rows"][0].contains("nccl_model_us")) << tuned["rows"][0];
  bad = run("train leafspine-8k --trace-links 4", true);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("--trace-links 4: the link counters go into the trace; add --trace FILE.json"),
            std::string::npos)
      << bad.out;
}

// Golden runs (tests/golden/README.md). Each directory of tests/golden is one
// end-to-end run whose full JSON output is checked in:
//   - with a file `args`: `podnet ARGS --format json`, run inside the
//     directory (so a scenario.yaml beside it is named by a relative path and
//     the run context does not depend on where the repository is), compared
//     with expected.json;
//   - else a built-in example's name with design.json: `podnet design NAME`.
// Each run is made twice and must be byte-identical; then the output, with
// only the build's identity normalised (git_sha and podnet_version blanked),
// must equal the checked-in file byte for byte.
struct GoldenCase {
  std::string name;  // directory name
  fs::path dir;
  std::string args;   // podnet arguments, without --format
  fs::path expected;  // the checked-in output
};
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

// The `args` file: podnet's arguments, possibly on several lines (joined with
// spaces); lines starting with '#' are comments. Shell quoting applies.
std::string read_args(const fs::path& file) {
  std::istringstream in(read_file(file));
  std::string joined;
  for (std::string line; std::getline(in, line);) {
    const auto a = line.find_first_not_of(" \t");
    if (a == std::string::npos || line[a] == '#') continue;
    const auto b = line.find_last_not_of(" \t\r");
    if (!joined.empty()) joined += ' ';
    joined.append(line, a, b - a + 1);
  }
  return joined;
}

std::vector<GoldenCase> golden_cases() {
  const fs::path root = fs::path(PODNET_SOURCE_DIR) / "tests" / "golden";
  std::vector<GoldenCase> cases;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (!entry.is_directory()) continue;
    GoldenCase c{entry.path().filename().string(), entry.path(), "", {}};
    if (fs::exists(c.dir / "args")) {
      c.args = read_args(c.dir / "args");
      c.expected = c.dir / "expected.json";
    } else {
      c.args = "design " + c.name;
      c.expected = c.dir / "design.json";
    }
    cases.push_back(c);
  }
  // directory_iterator's order is unspecified: sort, so test names are stable.
  std::sort(cases.begin(), cases.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return cases;
}

// The only parts of an output that may differ between two builds of the same
// behaviour: the build's git sha and version (run context).
std::string normalise_build(std::string json) {
  json = blank_sha(std::move(json));
  return std::regex_replace(json, std::regex("\"podnet_version\": \"[^\"]*\""), "\"podnet_version\": \"\"");
}

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, RunTwiceMatchesExpected) {
  const GoldenCase& c = GetParam();
  ASSERT_FALSE(c.args.empty()) << c.dir / "args"
                               << " is empty";
  const std::string cmd = "cd '" + c.dir.string() + "' && " + PODNET_BINARY + " " + c.args + " --format json";
  const bool update = std::getenv("PODNET_UPDATE_GOLDEN") != nullptr;
  if (!update) {
    ASSERT_TRUE(fs::exists(c.expected)) << c.expected << " missing (PODNET_UPDATE_GOLDEN=1 writes it)";
  }
  const Result first = run_shell(cmd);
  ASSERT_EQ(first.status, 0) << c.name << ": podnet " << c.args << " failed: " << first.out;
  const Result second = run_shell(cmd);
  ASSERT_EQ(second.status, 0) << c.name;
  EXPECT_EQ(first.out, second.out) << c.name << ": two runs of podnet " << c.args << " differ";
  const std::string got = normalise_build(first.out);
  if (update && (!fs::exists(c.expected) || read_file(c.expected) != got))
    std::ofstream(c.expected, std::ios::binary) << got;
  EXPECT_EQ(got, read_file(c.expected)) << c.name << ": podnet " << c.args << " differs from " << c.expected
                                        << " (PODNET_UPDATE_GOLDEN=1 to regenerate, then review the diff)";
}

// Test names: the directory name with '-' as '_' (gtest allows [A-Za-z0-9_]).
INSTANTIATE_TEST_SUITE_P(Runs, Golden, ::testing::ValuesIn(golden_cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(GoldenSet, CoversEveryCommand) {
  // The golden set records design, bench (flow and packet engines), train,
  // failure injection and reliability; a missing kind would go unnoticed.
  std::string all;
  for (const auto& c : golden_cases()) {
    all += c.args + "\n";
    if (fs::exists(c.dir / "scenario.yaml")) all += read_file(c.dir / "scenario.yaml");
  }
  for (const char* what :
       {"design ", "bench ", "--engine packet", "train ", "failures", "reliability ", "diagnose ", "faults:"})
    EXPECT_NE(all.find(what), std::string::npos) << "no golden run with '" << what << "'";
}

}  // namespace

namespace {

// Inputs of a bad-input campaign that crashed podnet (double free, SIGSEGV, SIGFPE), ran until killed, or
// ended in an internal error: each is now refused up front with exit status 2 and a message naming the
// file and line (or the --set) and the key.
TEST(BadInput, SimaiFilesThatCrashedAreRefused) {
  const std::string rows = "1\nl -1 10 NONE 0 10 NONE 0 10 NONE 0 100\n";
  const std::string topo = write_file("dup.topo", "4 2 0 2 2 H20\n2 2\n0 2 400Gbps 1ns 0\n1 2 400Gbps 1ns 0\n");
  const std::string ok = write_file("ok.txt", "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2\n" + rows);
  Result r = run("train --simai-topology " + topo + " --simai-workload " + ok, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("dup.topo:2: switch id 2 is given twice"), std::string::npos) << r.out;
  const struct {
    const char* header;
    const char* message;
  } cases[] = {
      {"model_parallel_NPU_group: 8 ga: 1152921504606846976", "ga.txt:1: header: ga: 1152921504606846976 exceeds"},
      {"model_parallel_NPU_group: 4611686018427387904 pp: 4", "ga.txt:1: header: model_parallel_NPU_group: "},
      {"model_parallel_NPU_group: 2 ep: 1 pp: 2 vpp: 1 ga: 1000000 all_gpus: 8", "ga.txt:1: header: ga: 1000000"},
      {"model_parallel_NPU_group: 8 pp: -2", "ga.txt:1: header: pp: -2 must be >= 1"},
  };
  for (const auto& c : cases) {
    const std::string w =
        write_file("ga.txt", std::string("HYBRID_TRANSFORMER_FWD_IN_BCKWD ") + c.header + "\n" + rows);
    r = run("train --simai-workload " + w, true);
    EXPECT_EQ(r.status, 2) << c.header << ": " << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << r.out;
  }
}

TEST(BadInput, ScenarioValuesThatHungOrLiedAreRefused) {
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {"design aipod-16k --set topology.gpus=100000000 --set switch.radix=4096",
       "--set topology.gpus: '100000000' is not valid: expected an integer in [1, 1048576]"},
      {"train --set workload.global_batch=999999488", "--set workload.global_batch: pp x microbatches"},
      {"train --set workload.bucket_params=1", "--set workload.bucket_params: stage 0 chunk 0"},
      {"train --allow-oom --set workload.hidden=9600000", "workload.bucket_params (default): stage 0 chunk "},
      {"bench aipod-16k --set switch.latency=2000h", "--set switch.latency: '2000h' is not valid"},
      {"resolve aipod-16k --set switch.latency=1e308h", "--set switch.latency: '1e308h' is not valid"},
      {"bench aipod-16k --set server.nic_speed=1bps", "--set server.nic_speed: '1bps' is not valid"},
      {"design aipod-16k --set topology.oversubscription=1e308:1e-308", "--set topology.oversubscription: "},
      {"design aipod-16k --set foo.bar=1", "--set foo: unknown key"},
      {"bench fat-tree-k48 --set network.routing=ugal", "--set network.routing: policy 'ugal' applies to dragonfly"},
      // resolve refuses what no command can run (it printed it and exited 0), in every format.
      {"resolve aipod-16k --set topology.gpus=60", "is not a whole number of 8-GPU servers"},
      {"resolve aipod-16k --set topology.gpus=60 --format json", "is not a whole number of 8-GPU servers"},
      // A dashboard whose every study would stop at once, or never.
      {"serve --port 0 --time-limit -5", "--time-limit -5: expected seconds above 0"},
      {"serve --port 0 --time-limit nan", "--time-limit nan: expected seconds above 0"},
  };
  for (const auto& c : cases) {
    const Result r = run(c.args, true);
    EXPECT_EQ(r.status, 2) << c.args << ": " << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << ": " << r.out;
  }
  const std::string scalar = write_file("scalar.yaml", "42\n");
  Result r = run("design " + scalar + " --set topology.gpus=8", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("scalar.yaml:1: expected a YAML map"), std::string::npos) << r.out;
  const std::string twice =
      write_file("twice.yaml",
                 "schema_version: 1\ntopology:\n  family: rail_clos\n  gpus: 64\nswitch:\n  radix: 64\nswitch:\n"
                 "  radix: 128\n");
  r = run("resolve " + twice, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("twice.yaml:7: switch: given twice (first at line 5)"), std::string::npos) << r.out;
  const std::string late = write_file("late.yaml",
                                      "schema_version: 1\ntopology:\n  family: rail_clos\n  gpus: 64\nfailures:\n"
                                      "  - {at: 2600h, link: \"gpu-node-000/nic0\", action: down}\n");
  r = run("bench " + late + " --engine flow --max 1MiB", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("late.yaml:6: failures[0].at: '2600h' is not valid: expected the time of the event"),
            std::string::npos)
      << r.out;
}

TEST(BadInput, FailuresNamedAsATierOrWithTheWrongKeyAreExplainedByEveryCommand) {
  // "What does one failed spine do": --fail-links spine=1 suggested 'pcie'.
  Result r = run("train aipod-16k --fail-links spine=1", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("'spine' is a switch tier, not a link class: --fail-switches spine=N fails its switches; its "
                       "links are leaf-spine and spine-super_spine"),
            std::string::npos)
      << r.out;
  // link: (one link's name) with a share: the share's key is links:, not fraction's neighbour 'action'.
  const std::string head = "schema_version: 1\nname: t\ntopology: {family: rail_clos, gpus: 64}\nfailures:\n";
  r = run("train " + write_file("one.yaml", head + "  - {link: leaf-spine, fraction: 1%}\n"), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("one.yaml:5: failures[0].link: link takes one link's name; a share (fraction:) of a link "
                       "class takes links: write links: leaf-spine"),
            std::string::npos)
      << r.out;
  // A misspelt class is refused by every command that reads the scenario, not only by train.
  const std::string bad = write_file("spin.yaml", head + "  - {links: leaf-spin, fraction: 1%}\n");
  for (const char* c : {"design", "reliability", "resolve", "train"}) {
    r = run(std::string(c) + " " + bad, true);
    EXPECT_EQ(r.status, 2) << c << "\n" << r.out;
    EXPECT_NE(r.out.find("failures[0].links: 'leaf-spin' is not a link class of this fabric (did you mean "
                         "'leaf-spine'?)"),
              std::string::npos)
        << c << "\n"
        << r.out;
  }
}

TEST(Cli, OrdinaryOutputsAndHelpFitA120ColumnTerminal) {
  // Notes, limits and help descriptions wrap at 120 characters (they ran to 170-520); tables already did.
  for (const char* c :
       {"design aipod-16k", "run", "reliability aipod-16k",
        "train leafspine-8k --set workload.model=llama3-70b --set topology.gpus=1024 --engine analytical",
        "bench --help", "calibrate --help", "list --help", "train --help", "sweep --help", "design --help"}) {
    const Result r = run(c);
    ASSERT_EQ(r.status, 0) << c;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 120u) << c << "\n" << line;
  }
  // A long example command is continued as a shell continues it, before an option and its value (it broke
  // between "-j" and "2").
  const Result r = run("sweep --help");
  EXPECT_NE(r.out.find("--vary network.routing=ecmp,adaptive \\\n      -j 2\n"), std::string::npos) << r.out;
}

TEST(Cli, InferenceOnTheDefaultScenarioPicksStagesThatHoldTheWeights) {
  // Llama 3 405B in BF16: 811.7 GB of weights, 101.5 GB per GPU on TP8 x PP1, more than 90 % of an H100's 85.9 GB;
  // on TP8 x PP2 50.7 GB. Left to the defaults, the layout doubles PP until the weights fit and says so; given,
  // it is kept and refused as before.
  Result r = run("inference aipod-16k --requests 50 --format json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto layout = nlohmann::json::parse(r.out)["layout"];
  EXPECT_EQ(layout["tp"], 8);
  EXPECT_EQ(layout["pp"], 2);
  EXPECT_EQ(layout["pp_raised_from"], 1);
  r = run("inference aipod-16k --requests 50");
  EXPECT_NE(flat(r.out).find("(PP2, not the default PP1: the weights do not fit fewer stages of TP8;"),
            std::string::npos)
      << r.out;
  r = run("inference aipod-16k --requests 50 --set inference.pp=1", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("need 101.5 GB per GPU on TP8 x PP1"), std::string::npos) << r.out;
}

TEST(Cli, HelpShowsTheDefaultOfTheKeyAnOptionSets) {
  // An option that names the scenario key it sets shows that key's default (from the key's spec, as `podnet list
  // keys` shows it); an optional key without one adds nothing.
  Result r = run("inference --help");
  EXPECT_NE(r.out.find("requests per second (Poisson arrivals; inference.rate; default 1)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(p99; inference.target_tpot)"), std::string::npos) << r.out;
  r = run("plan-upgrade --help");
  EXPECT_NE(flat(r.out).find("(maintenance.tier; default spine)"), std::string::npos) << r.out;
  r = run("train --help");
  EXPECT_NE(r.out.find("(sets placement.policy; default topology_aware)"), std::string::npos) << r.out;
  // resolve offers only what it does (no --out, no --max-memory, yaml|json|csv); run and resolve have examples.
  r = run("resolve --help");
  EXPECT_EQ(r.out.find("-o,--out"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--max-memory"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-f,--format yaml|json|csv"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Examples:\n  podnet resolve aipod-16k"), std::string::npos) << r.out;
  r = run("run --help");
  EXPECT_NE(r.out.find("Examples:\n  podnet run "), std::string::npos) << r.out;
  EXPECT_EQ(run("resolve leafspine-8k --format yaml").out, run("resolve leafspine-8k").out);
}

TEST(BadInput, AnAddressPoolTooSmallPrintsNoReport) {
  // 8,192 GPUs' leaf-spine fabric needs 16,384 /31s; a /24 holds 128. The whole design report used to be printed
  // first (a script redirecting stdout kept a failed run's report), and the count had no separators.
  Result r = run("design leafspine-8k --set addressing.link_pool_v4=10.0.0.0/24 --config-plan " +
                 (temp_dir() / "pool").string() + " 2>/dev/null");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.out, "");
  r = run("design leafspine-8k --set addressing.link_pool_v4=10.0.0.0/24 --config-plan " +
              (temp_dir() / "pool").string(),
          true);
  EXPECT_NE(r.out.find("10.0.0.0/24 holds 128 point-to-point subnets, the fabric needs 16,384"), std::string::npos)
      << r.out;
}

TEST(BadInput, AKeyWithoutItsSectionAndASizeWithoutItsUnit) {
  // On the command line there is nothing to indent: the key is written with its section's name.
  Result r = run("sweep leafspine-8k --vary nic_speed=100Gbps", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--vary nic_speed: unknown key; it is a key of `server:`, `frontend:`: write server.nic_speed "
                       "or frontend.nic_speed"),
            std::string::npos)
      << r.out;
  // A bare number was bytes: "--max-memory 10" read as a limit of 0 MB.
  r = run("train leafspine-8k --max-memory 10", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--max-memory: '10' has no unit: expected a size such as 10GB or 10MB"), std::string::npos)
      << r.out;
}

TEST(BadInput, NoCommandMissingArgumentsAndFlagValuesAreExplained) {
  // CLI11 said "A subcommand is required", "b is required" and "The following argument was not expected: x.db".
  Result r = run("", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("a command is required: `podnet list` shows what is built in"), std::string::npos) << r.out;
  r = run("diff aipod-16k", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("`podnet diff` takes 2 arguments (a: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; for example: podnet diff aipod-16k aipod-16k --set-b"), std::string::npos) << r.out;
  // A yes/no option is a flag in every command: a value after it is named as such.
  for (const char* c : {"train leafspine-8k --allow-oom true", "sweep leafspine-8k --vary seed=1 --allow-oom yes"}) {
    r = run(c, true);
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("--allow-oom is a flag and takes no value"), std::string::npos) << c << "\n" << r.out;
  }
  // A value an option cannot take says what it takes (CLI11 said "Could not convert: --loss = 5%").
  r = run("diagnose leafspine-8k --evaluate 3 --loss 5x", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--loss 5x: expected a probability, such as 0.001 or 0.1% (--evaluate: drop probability of "
                       "each hidden fault; e.g. --loss 0.001)"),
            std::string::npos)
      << r.out;
  r = run("optimize --gpus 16k", true);
  EXPECT_NE(r.out.find("--gpus 16k: expected a whole number"), std::string::npos) << r.out;
  // An option and a --set that disagree on one key: refused, not settled by their order.
  r = run("train leafspine-8k --engine analytical --set network.engine=flow", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--engine and --set network.engine give network.engine different values (analytical and "
                       "flow): give one"),
            std::string::npos)
      << r.out;
  // --fail-links reads a bare number as a count: a decimal says how a share is written.
  r = run("train leafspine-8k --fail-links leaf-spine=0.02", true);
  EXPECT_NE(r.out.find("'0.02' is not a whole number of links; a share is written with % (e.g. --fail-links "
                       "leaf-spine=2%)"),
            std::string::npos)
      << r.out;
  // sweep's --allow-oom no longer swallows the option after it, and --failures=false turns a default-on flag off.
  const auto dir = temp_dir();
  r = run("sweep leafspine-8k --set network.engine=analytical --vary topology.gpus=64 --allow-oom --results " +
              (dir / "a.db").string() + " --failures=false",
          true);
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(BadInput, AMisspeltCommandIsNamedWithTheNearestOne) {
  // CLI11 said only "A subcommand is required" for a typo.
  Result r = run("desgin aipod-16k", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("unknown command 'desgin'; did you mean 'design'?"), std::string::npos) << r.out;
  r = run("frobnicate", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("unknown command 'frobnicate' (`podnet --help` lists the commands)"), std::string::npos)
      << r.out;
  // An option: podnet's prefix, the nearest option, or the key another command's option of that name sets.
  r = run("train aipod-16k --engin flow", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("podnet: error: `podnet train` has no option --engin; did you mean --engine? (`podnet train "
                       "--help` lists its options)"),
            std::string::npos)
      << r.out;
  r = run("sweep aipod-16k --vary seed=1,2 --placement random", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("`podnet train`'s --placement sets placement.policy: here, --set placement.policy=VALUE"),
            std::string::npos)
      << r.out;
  // An option other commands take is not a misspelling of this one's: design --gpus is not --out.
  r = run("design aipod-16k --gpus 0-63", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("`podnet design` has no option --gpus; `podnet bench`, "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("did you mean"), std::string::npos) << r.out;
  // The key alone, when the option's help says more after it ("(sets network.engine; default: ...)").
  r = run("reliability aipod-16k --engine analytical", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("`podnet bench`'s --engine sets network.engine: here, --set network.engine=VALUE (`podnet "
                       "reliability --help`"),
            std::string::npos)
      << r.out;
  // An option's own check while parsing: an error, not an abort (exit 134).
  r = run("train aipod-16k --fail-links 1", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("podnet: error: --fail-links 1: expected CLASS=AMOUNT[@TIME]"), std::string::npos) << r.out;
  r = run("train aipod-16k --format yaml", true);
  EXPECT_NE(r.out.find("podnet: error: --format: yaml not in {table,json,csv}"), std::string::npos) << r.out;
  // Two exports, or an export and --format, to stdout made one stream no consumer reads (DOT, then JSON).
  const std::string small = "design fat-tree-k48 --set topology.k=8 --set server.gpus=4 --set server.nics=4";
  r = run(small + " --export dot --export json", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--export dot --export json: several exports need --out DIR (one file each)"), std::string::npos)
      << r.out;
  r = run(small + " --export dot --format json", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--export dot and --format json: without --out the export is what goes to stdout"),
            std::string::npos)
      << r.out;
  // A directory where a scenario file is expected says so (it said "no such file").
  r = run("design " + temp_dir().string(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(": a directory; expected a scenario YAML file or a built-in scenario's name"), std::string::npos)
      << r.out;
  // A duration that parses but is not above 0 ends its message, instead of a dangling ", " or "()".
  r = run("diagnose aipod-16k --duration 0s", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--duration '0s': expected a duration above 0\n"), std::string::npos) << r.out;
  r = run("bench aipod-16k --telemetry-interval 0us", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--telemetry-interval 0us: expected a time above 0, e.g. 1us\n"), std::string::npos) << r.out;
  // A number without a unit is told what it lacks, not that it should be above 0.
  r = run("bench aipod-16k --telemetry-interval 5", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--telemetry-interval 5: expected a non-negative time with a unit"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("above 0"), std::string::npos) << r.out;
}

// The bench command's own checks, which the campaign saw run until killed (a zero size, billions of sizes,
// an 8,000,000 TiB message on the packet engine) or silently ignored (--channels 0 or -1).
TEST(BadInput, BenchSizesAndChannelsAreRefused) {
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {"bench aipod-16k --gpus 0-7 --min 0B", "--min 0 B: the smallest size must be at least 1 B"},
      // 8 B to 2^30 B by 1.0000001: ln(2^27) / ln(1.0000001) = 18.715 / 1.0e-7 = 1.87e8 sizes.
      {"bench aipod-16k --gpus 0-7 --factor 1.0000001", "by --factor 1.0000001 makes 1.87e+08 sizes; at most 4096"},
      {"bench aipod-16k --gpus 0-7 --engine packet --max 8000000TiB",
       "--max 8000000TiB: expected a whole number of bytes up to 1024TiB"},
      // The option the user typed is named, not the scenario key it sets.
      {"bench aipod-16k --gpus 0-7 --channels 0",
       "error: --channels: '0' is not valid: expected an integer in [1, 64]"},
      {"bench aipod-16k --gpus 0-7 --channels -1", "error: --channels: '-1' is not valid: expected an integer in"},
      {"bench aipod-16k --gpus 0-7 --qps 0", "error: --qps: '0' is not valid: expected an integer in [1, 128]"},
      {"bench aipod-16k --gpus 0-7 --op incast --senders 0", "error: --senders: '0' is not valid"},
      {"bench fat-tree-k48 --gpus 0-7 --routing ugal", "error: --routing: policy 'ugal' applies to dragonfly"},
      // A --set of the same key is still named as a --set (the option comes after it and wins).
      {"bench aipod-16k --gpus 0-7 --set collective.qps=0", "error: --set collective.qps: '0' is not valid"},
      {"train aipod-16k --engine fluid", "error: --engine: "},
  };
  for (const auto& c : cases) {
    const Result r = run(c.args, true);
    EXPECT_EQ(r.status, 2) << c.args << ": " << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << ": " << r.out;
  }
}

// --out with --compare-cc writes each transport's resolved scenario beside the first's, and each re-runs as that
// transport alone: the same row as the comparison's.
TEST(Cli, CompareCcOutWritesEachTransportsResolvedScenario) {
  namespace fs = std::filesystem;
  const fs::path dir = temp_dir() / "compare-out";
  fs::remove_all(dir);
  const std::string traffic = "bench leafspine-8k --op incast --gpus 0-32:8 --set network.pfc=false --min 256KiB "
                              "--max 256KiB";
  const Result c = run(traffic + " --compare-cc dctcp,uec --format json --out " + dir.string());
  ASSERT_EQ(c.status, 0) << c.out;
  const auto rows = nlohmann::json::parse(read_file(dir / "compare.json"))["rows"];
  ASSERT_EQ(rows.size(), 2u);
  for (const char* name : {"dctcp", "uec"}) {
    const fs::path path = dir / (std::string("scenario.") + name + ".resolved.yaml");
    ASSERT_TRUE(fs::exists(path)) << path;
    const Result one = run("bench " + path.string() +
                           " --op incast --gpus 0-32:8 --min 256KiB --max 256KiB --engine packet --format json");
    ASSERT_EQ(one.status, 0) << one.out;
    const auto& row = rows[std::string(name) == "dctcp" ? 0 : 1];
    EXPECT_EQ(row["transport"], name);
    EXPECT_EQ(row["time_us"], nlohmann::json::parse(one.out)["rows"][0]["time_us"]) << name;
  }
}

// A training iteration on the packet engine reports bench's packet counters and the transport it ran (a
// congestion-control study on training traffic printed only "rocev2 (nscc)" and the time).
TEST(Cli, TrainOnThePacketEngineReportsItsPacketCounters) {
  const std::string job = "train leafspine-8k --engine packet --set topology.gpus=16 --set workload.model=llama3-8b "
                          "--set workload.tp=8 --set workload.pp=1 --set workload.dp=2 --set workload.global_batch=16 "
                          "--set network.cc=nscc";
  const Result r = run(job);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(flat(r.out).find("rocev2 (nscc, PFC on, routing ecmp)"), std::string::npos) << r.out;
  EXPECT_NE(flat(r.out).find("packets, over 2 engine runs: 0 drops, 0 trimmed, "), std::string::npos) << r.out;
  const Result j = run(job + " --format json");
  ASSERT_EQ(j.status, 0) << j.out;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["packet_counters"]["runs"], 2);
  EXPECT_EQ(doc["packet_counters"]["drops"], 0);
  EXPECT_GT(doc["packet_counters"]["goodput_gbit_per_s"].get<double>(), 0);
  EXPECT_EQ(doc["network"]["pfc"], true);
  // The flow engine runs no packets: no such line.
  EXPECT_EQ(run("train leafspine-8k --set topology.gpus=16 --set workload.model=llama3-8b").out.find("packets, over"),
            std::string::npos);
}

// Transports whose runs agree in every figure are named together, with why when an ECN algorithm saw no mark: with
// a 2 MB buffer the incast drops before any queue reaches DCQCN's band, so dcqcn_nic runs as none does (the table
// printed one row twice and ranked it "2.9x; 2.9x").
TEST(Cli, CompareCcSaysWhichTransportsRanTheSameRun) {
  const Result c = run("bench leafspine-8k --op incast --gpus 0-64:8 --min 256KiB --max 256KiB --set network.pfc=false "
                       "--set network.switch_buffer=2MB --compare-cc dcqcn_nic,none,swift");
  ASSERT_EQ(c.status, 0) << c.out;
  EXPECT_NE(flat(c.out).find("dcqcn_nic and none: the same run, every figure to the last digit: their congestion "
                             "controls made no difference on this traffic (0 ECN marks: no queue reached the marking "
                             "band)"),
            std::string::npos)
      << c.out;
  EXPECT_EQ(flat(c.out).find("and swift: the same run"), std::string::npos) << c.out;
  // Presets that share a congestion control name what differs between them: roce_dcqcn and spectrum_x both run
  // dcqcn_nic with PFC; their routing (ecmp, adaptive) and ordering differ (it said "their congestion controls").
  const Result p = run("bench leafspine-8k --op incast --gpus 0-128:8 --min 1MiB --max 1MiB "
                       "--compare-cc roce_dcqcn,spectrum_x");
  ASSERT_EQ(p.status, 0) << p.out;
  EXPECT_NE(flat(p.out).find("roce_dcqcn and spectrum_x: the same run, every figure to the last digit: their routing "
                             "and delivery made no difference on this traffic"),
            std::string::npos)
      << p.out;
}

// Sizes as nccl-tests reads them: -b 8 is 8 bytes, -e 1K is 1,024 (8, 64, 512 by --factor 8).
TEST(Cli, CompareCcRunsEachTransportAsItsOwnBenchWould) {
  // --compare-cc runs the bench once per transport: each row is what `bench --set network.cc=NAME` (or the
  // preset's keys) gives on its own, and its counters are that run's.
  const std::string traffic = "bench leafspine-8k --op incast --gpus 0-32:8 --set network.pfc=false";
  const Result c = run(traffic + " --min 256KiB --max 512KiB --compare-cc dctcp,uec --format json");
  ASSERT_EQ(c.status, 0) << c.out;
  const auto doc = nlohmann::json::parse(c.out);
  ASSERT_EQ(doc["rows"].size(), 4u);  // 2 transports x 2 sizes
  EXPECT_EQ(doc["compare"]["transports"][1]["routing"], "reps");
  for (const auto& row : doc["rows"]) {
    const std::string name = row["transport"].get<std::string>();
    const std::string sets = name == "uec"
                                 ? " --set network.preset=uec --set network.cc=nscc --set network.routing=reps"
                                 : " --set network.cc=dctcp";
    const auto size = std::to_string(row["bytes"].get<int64_t>()) + "B";
    const auto one = nlohmann::json::parse(
        run(traffic + sets + " --engine packet --min " + size + " --max " + size + " --format json").out);
    EXPECT_EQ(row["time_us"], one["rows"][0]["time_us"]) << name << " " << size;
    EXPECT_EQ(row["fct_p99_us"], one["rows"][0]["fct"]["p99_us"]) << name << " " << size;
  }
  // Jain's fairness index of the QPs' rates lies in (0, 1].
  for (const auto& row : doc["rows"]) {
    ASSERT_TRUE(row.contains("fairness")) << row;
    EXPECT_GT(row["fairness"].get<double>(), 0.0);
    EXPECT_LE(row["fairness"].get<double>(), 1.0);
  }
  // Under trimming nothing is dropped: a full queue trims.
  for (const auto& row : doc["rows"]) {
    if (row["transport"] == "uec") {
      EXPECT_EQ(row["drops"], 0) << row;
    }
  }
  // Under each table, the transports by time: the first with its time, the others as a ratio to it.
  {
    const Result r = run(traffic + " --min 256KiB --max 256KiB --compare-cc dctcp,uec --format json");
    ASSERT_EQ(r.status, 0) << r.out;
    const auto rows = nlohmann::json::parse(r.out)["rows"];
    ASSERT_EQ(rows.size(), 2u);
    const bool dctcp_first = rows[0]["time_us"].get<double>() <= rows[1]["time_us"].get<double>();
    const auto& first = rows[dctcp_first ? 0 : 1];
    const auto& second = rows[dctcp_first ? 1 : 0];
    const Result text = run(traffic + " --min 256KiB --max 256KiB --compare-cc dctcp,uec");
    const std::string line = fmt::format("  by time: {} {:.2f} us; {} {:.3f}x", first["transport"].get<std::string>(),
                                         first["time_us"].get<double>(), second["transport"].get<std::string>(),
                                         second["time_us"].get<double>() / first["time_us"].get<double>());
    EXPECT_NE(text.out.find(line), std::string::npos) << line << "\n" << text.out;
    // Above the table, a line per transport says what it runs (uec: its preset's keys), the names aligned.
    EXPECT_NE(text.out.find(
                  "\n  dctcp: rocev2, cc dctcp, PFC off, routing ecmp, delivery reliable, ordered (go-back-N)\n"
                  "  uec:   rocev2, cc nscc, PFC off, routing reps, delivery reliable, unordered "
                  "(selective resend)\n"),
              std::string::npos)
        << text.out;
  }
  const Result csv = run(traffic + " --min 256KiB --max 256KiB --compare-cc dctcp,uec --format csv");
  EXPECT_EQ(csv.out.rfind("transport,", 0), 0u) << csv.out;
  // Each row says what its transport ran (uec is nscc over reps, PFC off): a row read alone had only "uec".
  const std::string head = csv.out.substr(0, csv.out.find('\n'));
  for (const char* col : {",cc,", ",pfc,", ",routing,", ",delivery,"})
    EXPECT_NE(("," + head + ",").find(col), std::string::npos) << head;
  const size_t uec = csv.out.find("\nuec,");
  ASSERT_NE(uec, std::string::npos) << csv.out;
  const std::string row = csv.out.substr(uec + 1, csv.out.find('\n', uec + 1) - uec - 1);
  EXPECT_NE(row.find(",nscc,"), std::string::npos) << row;
  EXPECT_NE(row.find(",reps,"), std::string::npos) << row;
  Result bad = run(traffic + " --compare-cc dctcp,quic", true);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("'quic' is neither a congestion control"), std::string::npos) << bad.out;
  // A family's stem names its members; another case, the name.
  bad = run(traffic + " --compare-cc dcqcn,DCTCP", true);
  EXPECT_NE(bad.out.find("'dcqcn' is neither a congestion control nor a network preset; did you mean 'dcqcn_paper' or "
                         "'dcqcn_nic'?"),
            std::string::npos)
      << bad.out;
  bad = run(traffic + " --compare-cc dcqcn_nic,DCTCP", true);
  EXPECT_NE(bad.out.find("did you mean 'dctcp'?"), std::string::npos) << bad.out;
  // TCP keeps podnet's lossless default only with a word: its fabrics usually run lossy. Said when PFC is the
  // default, not when the user set it.
  Result tcp =
      run("bench leafspine-8k --op incast --gpus 0-16:8 --min 64KiB --max 64KiB --transport tcp --engine packet", true);
  EXPECT_EQ(tcp.status, 0) << tcp.out;
  EXPECT_NE(tcp.out.find("note: network.transport tcp with PFC on"), std::string::npos) << tcp.out;
  tcp = run("bench leafspine-8k --op incast --gpus 0-16:8 --min 64KiB --max 64KiB --transport tcp --engine packet "
            "--set network.pfc=true",
            true);
  EXPECT_EQ(tcp.out.find("network.transport tcp with PFC on"), std::string::npos) << tcp.out;
  // A traffic pattern has no nccl-tests program to diff a log against: refused, not an "incast_perf" header.
  Result log = run("bench leafspine-8k --op incast --gpus 0-16:8 --min 1MiB --max 1MiB --format nccl-tests", true);
  EXPECT_EQ(log.status, 2) << log.out;
  EXPECT_NE(log.out.find("--format nccl-tests: nccl-tests has no incast test"), std::string::npos) << log.out;
  // A retransmission timeout under a microsecond fires before an ACK can cross the fabric: refused, not a
  // run of endless resends.
  bad = run(traffic + " --set network.rto=1ns", true);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("network.rto"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("1us"), std::string::npos) << bad.out;
  // One above a microsecond but under the fabric's round trip is refused too, naming the round trip (2 us on
  // leafspine-8k simulated 10 s of a 0.15 ms all-reduce, resending without end, before it was stopped).
  bad = run("bench leafspine-8k --engine packet --gpus 0-63:8 --min 1MiB --max 1MiB --set network.rto=2us", true);
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(flat(bad.out).find("network.rto = 2us is shorter than the fabric's unloaded round trip"), std::string::npos)
      << bad.out;
  // An RDMA packet carries at most 4,096 B: a 9,000 B MTU on rocev2 is refused (it ran), tcp takes it.
  bad = run(traffic + " --set network.mtu=9000", true);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("--set network.mtu: network.mtu = 9,000 on transport rocev2: an RDMA packet carries at most "
                         "4,096 bytes of payload"),
            std::string::npos)
      << bad.out;
  EXPECT_EQ(run(traffic + " --set network.mtu=4068").status, 0);
  EXPECT_EQ(run(traffic + " --set network.transport=tcp --set network.mtu=8948").status, 0);
  // The same stem given to --set network.cc names the same members (it named dctcp, the nearest by letters).
  bad = run(traffic + " --set network.cc=dcqcn", true);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("'dcqcn' is not valid (did you mean 'dcqcn_paper' or 'dcqcn_nic'?)"), std::string::npos)
      << bad.out;
  bad = run(traffic + " --compare-cc dctcp,,nscc", true);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("an empty item"), std::string::npos) << bad.out;
  bad = run(traffic + " --compare-cc nscc,dctcp,nscc", true);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("'nscc' is listed twice"), std::string::npos) << bad.out;
  bad = run(traffic + " --compare-cc '' ", true);
  EXPECT_EQ(bad.status, 2) << "an empty list is refused, not run as a plain bench";
  bad = run(traffic + " --set network.cc=dctcp --compare-cc nscc", true);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("--set network.cc: --compare-cc sets it for each run"), std::string::npos) << bad.out;
  // A preset's keys give way to the command line's: --routing adaptive stays under roce_dcqcn.
  const auto kept = nlohmann::json::parse(
      run(traffic + " --min 64KiB --max 64KiB --routing adaptive --compare-cc roce_dcqcn --format json").out);
  EXPECT_EQ(kept["compare"]["transports"][0]["routing"], "adaptive");
  bad = run(traffic + " --compare-cc dctcp --engine flow", true);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("--compare-cc runs the packet engine"), std::string::npos) << bad.out;
  // Naming the engine it runs anyway is no mistake (it was refused, as a --set the user never typed).
  const Result packet = run(traffic + " --min 64KiB --max 64KiB --compare-cc dctcp --engine packet", true);
  EXPECT_EQ(packet.status, 0) << packet.out;
}

TEST(Cli, BenchReadsSizesAsNcclTestsDoes) {
  const Result r = run("bench aipod-16k --gpus 0-7 --engine analytical -b 8 -e 1K --factor 8 --format csv");
  ASSERT_EQ(r.status, 0) << r.out;
  std::vector<std::string> sizes;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0])))
      sizes.push_back(line.substr(0, line.find(',')));
  EXPECT_EQ(sizes, (std::vector<std::string>{"8", "64", "512"})) << r.out;
  // Lower case too (nccl-tests reads -e 1k as 1,024): the same rows.
  EXPECT_EQ(run("bench aipod-16k --gpus 0-7 --engine analytical -b 8 -e 1k --factor 8 --format csv").out, r.out);
  EXPECT_EQ(run("bench aipod-16k --gpus 0-7 -b 8x", true).status, 2);
}

// A reliability run whose restarts (900 h) far outrun the MTBI (2.8 h here): goodput ~0 and days to train
// past 1e283, which once ended in "podnet: failed: stoll" and then printed as 284 grouped digits. It runs,
// prints the figure in e-notation, and no inf or nan, in the table and in JSON.
TEST(BadInput, ReliabilityWithRestartsBeyondTheMtbiRuns) {
  const std::string args =
      "reliability aipod-16k --set reliability.duration_days=1e6 --set reliability.training_days=1e6 --set "
      "reliability.checkpoint_cost=900h --set reliability.restart_cost=900h";
  Result r = run(args, true);
  ASSERT_EQ(r.status, 0) << r.out;
  // Past a hundred years the days are no forecast: said so, not printed in e-notation.
  EXPECT_TRUE(std::regex_search(r.out, std::regex("1,000,000 days of training take +more than 100 years"))) << r.out;
  EXPECT_FALSE(std::regex_search(r.out, std::regex("\\b(inf|nan)\\b|stoll"))) << r.out;
  r = run(args + " --format json");
  ASSERT_EQ(r.status, 0);
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_GT(doc["days_to_train_with_failures"].get<double>(), 1e9);
  EXPECT_FALSE(std::regex_search(r.out, std::regex("\\b(inf|nan|Infinity|NaN)\\b")));
}

// Every option that writes is checked before anything runs: the refusal (exit status 2, naming the option,
// the path and why) must come before the run. Each command line would run long, or write other outputs
// first: the bench is a 64 MiB all-to-all of 512 GPUs on the flow engine (512 x 511 = 261,632 flows, minutes
// exact) and writes --out before --html, so a check after the run would take minutes and leave bench.json.
const std::string kLongBench = "bench aipod-16k --engine flow --op alltoall --gpus 0-4095:8 --min 64MiB --max 64MiB";

struct OutputCase {
  std::string args, message;
};

void expect_refused(const std::vector<OutputCase>& cases) {
  for (const auto& c : cases) {
    const Result r = run(c.args, true);
    EXPECT_EQ(r.status, 2) << c.args << ": " << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << ": " << r.out;
  }
}

// A file option: a path that is a directory, or under a parent that is a file.
TEST(BadInput, OutputFilesAreCheckedBeforeTheRun) {
  const fs::path dir = temp_dir() / "output-files";
  fs::create_directories(dir / "a-directory");
  const std::string folder = (dir / "a-directory").string();
  const std::string file = podnet::cli::testing::write_file(dir, "a-file", "x\n");
  const std::string results = (dir / "results").string();
  const std::string is_dir = ": cannot write there: it is a directory; expected a file name";
  const std::string under_file = ": cannot write there: " + file + " is a file, not a directory";
  expect_refused({
      {kLongBench + " --out " + results + " --html " + file + "/x.html", "--html " + file + "/x.html" + under_file},
      {kLongBench + " --html " + folder, "--html " + folder + is_dir},
      {"train aipod-16k --engine flow --trace " + file + "/t.json", "--trace " + file + "/t.json" + under_file},
      {"train aipod-16k --engine flow --trace " + folder, "--trace " + folder + is_dir},
      {"train aipod-16k --engine flow --html " + folder, "--html " + folder + is_dir},
      {"design aipod-16k --cabling-plan " + file + "/c.csv", "--cabling-plan " + file + "/c.csv" + under_file},
      {"design aipod-16k --cost-csv " + folder, "--cost-csv " + folder + is_dir},
      {"design aipod-16k --html " + folder + "/", "--html " + folder + "/" + is_dir},
      {"reliability aipod-16k --html " + folder, "--html " + folder + is_dir},
      {"diagnose aipod-16k --probes-out " + folder, "--probes-out " + folder + is_dir},
      {"diagnose aipod-16k --html " + file + "/d.html", "--html " + file + "/d.html" + under_file},
      {"sweep aipod-16k --study train --vary workload.dp=64,128 --results " + file + "/s.db",
       "--results " + file + "/s.db" + under_file},
  });
  // --out was checked (and created) before --html was refused, and nothing ran: no bench.json.
  EXPECT_TRUE(fs::is_directory(results));
  EXPECT_FALSE(fs::exists(fs::path(results) / "bench.json"));
  // A missing parent is created; an existing file is overwritten (checked by opening it for appending).
  const std::string nested = (dir / "new" / "sub" / "cables.csv").string();
  Result r = run("design fat-tree-k48 --set topology.k=8 --set server.gpus=4 --set server.nics=4 --cabling-plan " +
                     nested + " --cost-csv " + file,
                 true);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(read_file(nested).rfind("side_a_device,", 0), 0u) << read_file(nested).substr(0, 200);
  EXPECT_NE(read_file(file), "x\n");
  fs::remove_all(dir);
}

// A directory option: a path that is a file, or under a parent that is a file.
TEST(BadInput, OutputDirectoriesAreCheckedBeforeTheRun) {
  const fs::path dir = temp_dir() / "output-dirs";
  fs::create_directories(dir);
  const std::string file = podnet::cli::testing::write_file(dir, "a-file", "x\n");
  const std::string is_file = ": cannot write there: " + file + " is a file, not a directory";
  const std::string log =
      (fs::path(PODNET_SOURCE_DIR) / "tests/data/nccl-tests/h100-2node-ring-allreduce.log").string();
  expect_refused({
      {kLongBench + " --out " + file, "--out " + file + is_file},
      // calibrate's --out is a directory too (DIR/fitted.yaml beside its reports); only a *.yaml path is a file
      {"calibrate aipod-16k --op allreduce --nccl-tests " + log + " --out " + file, "--out " + file + is_file},
      {kLongBench + " --telemetry " + file + "/telemetry", "--telemetry " + file + "/telemetry" + is_file},
      {"train aipod-16k --engine flow --out " + file + "/o", "--out " + file + "/o" + is_file},
      {"train aipod-16k --engine flow --telemetry " + file, "--telemetry " + file + is_file},
      {"run aipod-16k --out " + file, "--out " + file + is_file},
      {"reliability aipod-16k --out " + file, "--out " + file + is_file},
      {"design aipod-16k --netbox " + file, "--netbox " + file + is_file},
      {"design aipod-16k --config-plan " + file + "/cfg", "--config-plan " + file + "/cfg" + is_file},
      {"design aipod-16k --export dot --out " + file, "--out " + file + is_file},
      {"diagnose aipod-16k --out " + file, "--out " + file + is_file},
      {"optimize aipod-16k --gpus 1024 --dir " + file, "--dir " + file + is_file},
      {"optimize aipod-16k --gpus 1024 --out " + file + "/o", "--out " + file + "/o" + is_file},
      {"resolve aipod-16k --out " + (dir / "r").string(), "it writes no files, it prints the scenario"},
  });
  EXPECT_EQ(read_file(file), "x\n");  // left as it was
  fs::remove_all(dir);
}

}  // namespace

namespace {

// podnet diagnose end to end: the simulated probes written as CSV, read back and localized to the same
// suspect; a damaged probe file is refused at its line with exit status 2.
// A lossy NIC link hidden in both directions (`direction: both`): round-trip probes cannot tell the directions
// apart, so the suspect is the link "(either direction)", and it stands for both hidden directions. Before, the
// second counted as missed: recall 0.5 and "time to localize: never" for a fault found and marked hidden.
TEST(Cli, ConfigPlanRefusesAnInfiniBandFabric) {
  // ib-sharp-1k runs InfiniBand: no eBGP, no SONiC to write; refused before anything is written.
  const fs::path dir = temp_dir() / "ib-config-plan";
  fs::remove_all(dir);
  const Result r = run("design ib-sharp-1k --config-plan " + dir.string(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("network.transport is infiniband, whose fabric a subnet manager configures"), std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(dir / "frr"));
}

// A scenario file for diagnose's tests, in their own directory.
std::string diagnose_scenario(const std::string& name, const std::string& yaml) {
  const fs::path dir = temp_dir() / "diagnose";
  fs::create_directories(dir);
  return podnet::cli::testing::write_file(dir, name, yaml);
}

TEST(Diagnose, ALinkLossyBothWaysFoundAsTheLinkIsFoundBothWays) {
  const std::string scenario = diagnose_scenario(
      "both.yaml",
      "schema_version: 1\nseed: 3\ntopology: {family: fat_tree, gpus: 128, tiers: 2, rail_optimized: true}\n"
      "server: {gpus: 8, nics: 8, nic_speed: 400Gbps}\nswitch: {radix: 16, port_speed: 400Gbps}\n"
      "faults:\n  - {kind: drop, link: \"gpu-node-002/nic0\", direction: both, probability: 0.002}\n");
  const Result r = run("diagnose " + scenario + " --duration 60s --format json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto d = nlohmann::json::parse(r.out);
  ASSERT_EQ(d["suspects"].size(), 1u) << d["suspects"];
  EXPECT_EQ(d["score"]["false_negatives"], 0) << d["score"];
  EXPECT_DOUBLE_EQ(d["score"]["recall"].get<double>(), 1.0) << d["score"];
  EXPECT_DOUBLE_EQ(d["score"]["precision"].get<double>(), 1.0) << d["score"];
  EXPECT_FALSE(d["time_to_localize_seconds"].is_null());
}

TEST(Diagnose, AFaultNoProbeCrossesIsSaidToBeUnseen) {
  // 64 GPUs under one leaf: traffic never climbs to the spine, so no probe crosses a leaf uplink and a drop
  // there loses nothing. The report says so next to the fault (it read as a plain miss); the NIC's is seen.
  const std::string scenario =
      diagnose_scenario("unprobed.yaml",
                        "schema_version: 1\ntopology: {family: fat_tree, gpus: 64}\n"
                        "faults:\n  - {kind: drop, link: \"leaf-000:Ethernet1/99\", probability: 0.001}\n"
                        "  - {kind: drop, link: \"gpu-node-002/nic0\", probability: 0.001}\n");
  Result r = run("diagnose " + scenario + " --duration 20s --format json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["hidden_faults_no_probe_crosses"],
            nlohmann::json::array({"drop link leaf-000:Ethernet1/99 tx"}));
  r = run("diagnose " + scenario + " --duration 20s");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("  drop link leaf-000:Ethernet1/99 tx (no probe of this mesh crosses it, so it cannot be seen)\n"
                       "  drop link gpu-node-002/nic0 tx\n"),
            std::string::npos)
      << r.out;
  // A leaf mesh pairs NICs under different leaves: with one leaf there is none (it said "no pair is routable").
  r = run("diagnose " + scenario + " --probe leaf-mesh", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(flat(r.out).find("--probe leaf-mesh: it pairs NICs under different leaves, and every NIC of this fabric "
                             "is under one leaf, leaf-000; expected --probe rail or full-mesh"),
            std::string::npos)
      << r.out;
}

TEST(Faults, SilentFaultsRunOnThePacketEngineAndAreRefusedElsewhere) {
  // A fault that diagnose hides (here 10 ms added to one NIC's link both ways) used to be ignored by bench
  // and train on every engine. The packet engine now simulates it: one sendrecv of 64 KiB from GPU 0 to
  // GPU 8 crosses that link once, so it takes at least 10 ms longer; the flow engine refuses it by name.
  const fs::path dir = temp_dir() / "faults";
  fs::create_directories(dir);
  const std::string scenario = podnet::cli::testing::write_file(
      dir, "slow.yaml",
      "schema_version: 1\ntopology: {family: fat_tree, gpus: 16, tiers: 2, rail_optimized: true}\n"
      "server: {gpus: 8, nics: 8, nic_speed: 400Gbps}\nswitch: {radix: 16, port_speed: 400Gbps}\n"
      "faults:\n  - {kind: degrade, link: \"gpu-node-000/nic0\", direction: both, latency: 10ms}\n");
  const std::string bench = " --op sendrecv --gpus 0,8 --min 64KiB --max 64KiB --format json";
  Result r = run("bench " + scenario + " --engine flow" + bench, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("slow.yaml:5: faults: degrade link gpu-node-000/nic0 both (a silent fault"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--engine packet"), std::string::npos) << r.out;
  r = run("bench " + scenario + " --engine packet" + bench);
  ASSERT_EQ(r.status, 0) << r.out;
  const double slow = nlohmann::json::parse(r.out)["rows"][0]["time_us"].get<double>();
  r = run("bench " + scenario + " --engine packet --set 'faults=[]'" + bench);
  ASSERT_EQ(r.status, 0) << r.out;
  const double fast = nlohmann::json::parse(r.out)["rows"][0]["time_us"].get<double>();
  EXPECT_GE(slow, fast + 10000) << fast;
  // diagnose says which faults its probes cannot see, instead of leaving them out.
  r = run("diagnose aipod-16k --duration 10s --no-deadlock-check --set 'faults=[{kind: pfc_storm, link: "
          "gpu-node-0001/nic0, at: 20us, duration: 2ms}]' --format json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["faults_not_probed"],
            nlohmann::json::array({"pfc_storm link gpu-node-0001/nic0"}));
}

TEST(Diagnose, RefusesWhatItWouldIgnore) {
  // --evaluate's options without --evaluate were accepted and ignored.
  Result r = run("diagnose aipod-16k --loss 2", true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("--loss requires --evaluate"), std::string::npos) << r.out;
  // 25 s of 10 s rounds probed 20 s and said 25.
  r = run("diagnose aipod-16k --duration 25s --round 10s", true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--duration 25s is not a whole number of rounds of 10s (--round)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("expected 20s or 30s"), std::string::npos) << r.out;
  // A fault that starts after probing ends was scored as missed.
  r = run("diagnose aipod-16k --duration 20s --set 'faults=[{kind: drop, link: \"gpu-node-0001/nic0\", probability: "
          "0.01, at: 30s}]'",
          true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("starts at 30s, when probing has ended (--duration 20s)"), std::string::npos) << r.out;
}

// A fault on a link every probe crosses together with another (su001-leaf-r3's port 12 and the spine port above it, on
// the golden scenario's rail mesh): the suspect names its look-alike, and a hit on either counts as found. The lower
// id was named alone ("or 1 other"), and the hidden link scored as missed and the named one as a false alarm.
TEST(Diagnose, ALookAlikeIsNamedAndCountsAsFound) {
  const std::string scenario = (fs::path(PODNET_SOURCE_DIR) / "tests/golden/diagnose-faults/scenario.yaml").string();
  const Result r = run("diagnose " + scenario +
                       " --set 'faults=[{kind: drop, link: \"su001-leaf-r3:Ethernet1/12\", probability: 0.01}]' "
                       "--no-deadlock-check --format json");
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json d = nlohmann::json::parse(r.out);
  ASSERT_EQ(d["suspects"].size(), 1u) << r.out;
  const auto& s = d["suspects"][0];
  EXPECT_EQ(s["indistinguishable_from"], 1);
  ASSERT_EQ(s["alike"].size(), 1u);
  EXPECT_NE(s["alike"][0].get<std::string>().find("su001-leaf-r3:Ethernet1/12"), std::string::npos) << s.dump();
  EXPECT_TRUE(s["hidden_fault"].get<bool>());
  EXPECT_EQ(d["score"]["precision"], 1.0);
  EXPECT_EQ(d["score"]["recall"], 1.0);
  const Result t = run("diagnose " + scenario +
                       " --set 'faults=[{kind: drop, link: \"su001-leaf-r3:Ethernet1/12\", probability: 0.01}]' "
                       "--no-deadlock-check");
  EXPECT_NE(t.out.find("(or su001-leaf-r3:Ethernet1/12"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find(": no probe tells them apart)"), std::string::npos) << t.out;
}

// A fault's probability in a scenario takes a percentage as --loss does: 1% and 0.01 hide the same fault.
TEST(Diagnose, AFaultProbabilityTakesAPercentage) {
  const std::string scenario = (fs::path(PODNET_SOURCE_DIR) / "tests/golden/diagnose-faults/scenario.yaml").string();
  const auto with = [&](const std::string& p) {
    return run("diagnose " + scenario +
               " --set 'faults=[{kind: drop, link: \"su001-leaf-r3:Ethernet1/12\", probability: " + p +
               "}]' --no-deadlock-check --format json");
  };
  const Result pct = with("1%"), frac = with("0.01");
  ASSERT_EQ(pct.status, 0) << pct.out;
  ASSERT_EQ(frac.status, 0) << frac.out;
  EXPECT_EQ(nlohmann::json::parse(pct.out)["suspects"], nlohmann::json::parse(frac.out)["suspects"]);
  const Result bad = run("diagnose " + scenario +
                             " --set 'faults=[{kind: drop, link: \"su001-leaf-r3:Ethernet1/12\", probability: 200%}]'",
                         true);
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("1e-12 to 1 or a percentage (0.001 or 0.1%)"), std::string::npos) << bad.out;
}

TEST(Diagnose, ProbeFileRoundTripAndBadFiles) {
  const fs::path dir = temp_dir() / "diagnose";
  fs::create_directories(dir);
  const std::string scenario = (fs::path(PODNET_SOURCE_DIR) / "tests/golden/diagnose-faults/scenario.yaml").string();
  const std::string csv = (dir / "probes.csv").string();
  Result r =
      run("diagnose " + scenario + " --duration 30s --no-deadlock-check --probes-out " + csv + " --format json", true);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string text = read_file(csv);
  // The header, then one row per probe tuple: 128 NICs x 4 targets x 8 ports.
  EXPECT_NE(text.find("src,dst,sport,sent,lost,rtt_p50_us,rtt_p99_us,path,return_path\n"), std::string::npos);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2 + 128 * 4 * 8);
  r = run("diagnose " + scenario + " --deadlock-check=false --probes " + csv, true);  // as sweep and diff write it
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("pod000-spine-005"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("deadlock check"), std::string::npos) << r.out;  // the check was skipped
  r = run("diagnose " + scenario + " --probes " + csv, true);           // and runs by default
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("deadlock check (cyclic buffer dependencies under PFC)"), std::string::npos) << r.out;
  // Truncated inside line 12 (the comment, the header, 9 rows, then 3 fields of the 10th): refused there.
  size_t at = 0;
  for (int line = 0; line < 11; ++line) at = text.find('\n', at) + 1;
  at = text.find(',', text.find(',', text.find(',', at) + 1) + 1);
  const std::string cut = write_file("cut.csv", text.substr(0, at));
  r = run("diagnose " + scenario + " --probes " + cut, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("cut.csv:12: row: 3 fields, expected 9"), std::string::npos) << r.out;
  r = run("diagnose " + scenario + " --probes " + (dir / "missing.csv").string(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("cannot read the file"), std::string::npos) << r.out;
  r = run("diagnose " + scenario + " --probe ring", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("expected full-mesh, rail or leaf-mesh"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

// --mode packet: the probes on the packet engine (128 NICs x 5,000 probes/s x 2 s = 1.28 M probes) name the
// hidden spine and uplink; refused above its size limit (the default 300 s: 38.4 M probes), naming the
// statistical mode; an unknown mode is refused.
TEST(Diagnose, PacketModeRunsSmallAndRefusesLarge) {
  const std::string scenario = (fs::path(PODNET_SOURCE_DIR) / "tests/golden/diagnose-faults/scenario.yaml").string();
  Result r =
      run("diagnose " + scenario + " --mode packet --rate 5000 --duration 2s --round 1s --no-deadlock-check", true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("simulated probing, packet mode"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pod000-spine-005"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("su000-leaf-r0:Ethernet1/9 -> pod000-spine-000"), std::string::npos) << r.out;
  r = run("diagnose " + scenario + " --mode packet", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("use the statistical mode"), std::string::npos) << r.out;
  r = run("diagnose " + scenario + " --mode fluid", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("expected statistical or packet"), std::string::npos) << r.out;
}

}  // namespace

namespace {

// Reproducibility: the run context carries the --set overrides; resolve writes JSON and CSV as data; -g 8
// (nccl-tests' "8 GPUs") is refused instead of timing one GPU's collective as 0 us.
TEST(Cli, RunContextResolveFormatsAndOneGpuGroups) {
  Result r = run("design leafspine-8k --set topology.gpus=1024 --format json");
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("\"overrides\": [\n      \"topology.gpus=1024\"\n    ]"), std::string::npos)
      << r.out.substr(0, 600);
  r = run("resolve aipod-16k --set topology.gpus=1024 --format json");
  ASSERT_EQ(r.status, 0);
  // A plain number stays a number, a value with a unit stays its text.
  EXPECT_NE(r.out.find("\"gpus\": 1024"), std::string::npos) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find("\"nic_speed\": \"400Gbps\""), std::string::npos) << r.out.substr(0, 2000);
  // `auto` resolved in comments: Llama 3 405B's 126 layers over 16 stages, one fewer on the first and
  // last (7 + 14 x 8 + 7 = 126); roce -> DCQCN; 8 x 400G H100 servers -> 2 x 8 search channels = 16.
  r = run("resolve aipod-16k");
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("#   workload.stage_layers: [7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("#   network.cc: dcqcn_nic"), std::string::npos);
  EXPECT_NE(r.out.find("#   collective.channels: NCCL's execution channels, per communicator: 16 over all 16,384"),
            std::string::npos);
  r = run("resolve aipod-16k --format csv");
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("key,value\n", 0), 0u);
  EXPECT_NE(r.out.find("\ntopology.gpus,16384\n"), std::string::npos);
  // Tidy CSV: bench has one row per message size (8 B .. 1 KiB by 2: 8 sizes)
  // under a header row, the size first.
  r = run("bench aipod-16k -g 0-7 --min 8B --max 1KiB --format csv");
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("bytes,", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(",busbw_gbyte_per_s,"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1 + 8) << r.out;
  EXPECT_NE(r.out.find("\n1024,"), std::string::npos) << r.out;
  r = run("bench aipod-16k -g 8 --max 1MiB", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--gpus 8: a collective needs at least 2 GPUs"), std::string::npos) << r.out;
}

// The memory guard (scenario/estimate.hpp): M = 20 MiB + 512 B x GPUs before
// the fabric is built; a run adds engine state per GPU (flow: 1,280 B) and
// 768 B per point-to-point transfer of the plan on the flow engine.
TEST(MemoryGuard, RefusesOversizedRunsBeforeAllocating) {
  // 1,048,576 GPUs: 20,971,520 + 1,048,576 x 512 = 557,842,432 B = 558 MB > 100 MB. Refused before the
  // topology is built (building it takes ~0.56 GB).
  Result r = run("design aipod-16k --set topology.gpus=1048576 --set switch.radix=4096 --max-memory 100MB", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("a fabric of 1,048,576 GPUs needs an estimated 558 MB (process 21 MB + GPUs 1,048,576 x "
                       "512 B), more than the memory limit of 100 MB (--max-memory"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("shrink topology.gpus, or raise --max-memory"), std::string::npos) << r.out;
  // An all-to-all over 1,024 GPUs of aipod-16k (16,384 GPUs) on the flow engine, refused before its plan is
  // built: 1,024 x 1,023 = 1,047,552 transfers x 768 B = 804,519,936 B, + 16,384 x (512 + 1,280) = 29,360,128 B,
  // + 20,971,520 B = 854,851,584 B = 855 MB > 200 MB.
  r = run("bench aipod-16k --engine flow --op alltoall -b 1MiB -e 1MiB --gpus 0-1023 --max-memory 200MB", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("bench alltoall over 1024 GPUs needs an estimated 855 MB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("point-to-point transfers on the flow engine 1,047,552 x 768 B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("shrink --gpus (the group), or raise --max-memory"), std::string::npos) << r.out;
  // Just under and just over: 64 GPUs, 64 x 63 = 4,032 transfers x 768 B = 3,096,576 B, total
  // 3,096,576 + 29,360,128 + 20,971,520 = 53,428,224 B: runs under 54MB, refused under 53MB.
  r = run("bench aipod-16k --engine flow --op alltoall -b 1MiB -e 1MiB --gpus 0-63 --max-memory 54MB", true);
  EXPECT_EQ(r.status, 0) << r.out;
  r = run("bench aipod-16k --engine flow --op alltoall -b 1MiB -e 1MiB --gpus 0-63 --max-memory 53MB", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("needs an estimated 53 MB"), std::string::npos) << r.out;
  // A training iteration's plan is counted as it is built (its size is known only then) and refused when the
  // estimate with what is built so far passes the limit, not once built whole. The default job on the flow
  // engine: 20,971,520 + 16,384 x (512 + 1,280) = 50,331,648 B before its plan, so the refusal at 60 MB comes
  // once F x 768 + H x 64 > 9,668,352 B, with the counts it prints. (A list of hops that copies share, a stage
  // boundary's sends for every microbatch, counts once: the whole plan weighs under 15 MB that way.)
  r = run("train aipod-16k --max-memory 60MB", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("one iteration of this job ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("built so far, and more to come) needs at least"), std::string::npos) << r.out;
  // The plan's 9.7 MB is under a quarter of the 60 MB: the fabric's parts are what to shrink.
  EXPECT_NE(r.out.find("shrink topology.gpus, or raise --max-memory"), std::string::npos) << r.out;
  {
    const std::regex counts(R"re(\(([0-9,]+) point-to-point transfers and ([0-9,]+) hops built so far)re");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, counts)) << r.out;
    const auto number = [](std::string t) {
      t.erase(std::remove(t.begin(), t.end(), ','), t.end());
      return std::stod(t);
    };
    const double plan_bytes = number(m[1]) * 768 + number(m[2]) * 64;
    EXPECT_GT(plan_bytes, 9'668'352.0) << r.out;
    EXPECT_LT(plan_bytes, 2 * 9'668'352.0) << r.out;  // refused as it passed the limit, not long after
  }
  // A bad size names the option.
  r = run("design aipod-16k --max-memory lots", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--max-memory"), std::string::npos) << r.out;
}

}  // namespace

namespace {

// inference.lengths_file: a CSV next to the scenario (a relative path is the scenario file's), read in order.
TEST(Cli, InferenceTakesRequestLengthsFromAFileBesideTheScenario) {
  const fs::path dir = temp_dir() / "lengths";
  fs::create_directories(dir);
  podnet::cli::testing::write_file(dir, "trace.csv",
                                   "TIMESTAMP,ContextTokens,GeneratedTokens\n0,4808,10\n1,3180,8\n2,200,300\n");
  const std::string scenario = podnet::cli::testing::write_file(
      dir, "s.yaml",
      "schema_version: 1\ntopology:\n  family: rail_clos\n  gpus: 64\nworkload:\n  model: llama3-8b\ninference:\n"
      "  tp: 1\n  requests: 30\n  rate: 2\n  lengths_file: trace.csv\n");
  Result r = run("inference " + scenario + " --format json");  // from another working directory
  ASSERT_EQ(r.status, 0) << r.out;
  const auto doc = nlohmann::json::parse(r.out);
  const auto& s = doc["stream"];
  EXPECT_EQ(s["lengths_file"], "trace.csv");
  EXPECT_EQ(s["lengths_in_file"], 3);
  EXPECT_EQ(s["prompt_tokens"]["min"], 200);
  EXPECT_EQ(s["prompt_tokens"]["max"], 4808);
  // 30 requests take the 3 rows 10 times: the means are the rows' means.
  EXPECT_DOUBLE_EQ(s["prompt_tokens"]["mean"].get<double>(), 2729.33);  // (4,808 + 3,180 + 200) / 3, 2 decimals
  EXPECT_DOUBLE_EQ(s["output_tokens"]["mean"].get<double>(), 106);
  r = run("inference " + scenario);
  EXPECT_NE(
      flat(r.out).find(
          "lengths from trace.csv (3 rows, in order; prompt 200-4,808, mean 2,729; output 8-300, mean 106 tokens)"),
      std::string::npos)
      << r.out;
  // A missing file is named with the scenario's line; a bad cell with the file's.
  r = run("inference " + scenario + " --set inference.lengths_file=nope.csv", true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("inference.lengths_file"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nope.csv: cannot read the file"), std::string::npos) << r.out;
  // A path given with --set is the working directory's, as any path on a command line.
  podnet::cli::testing::write_file(dir, "bad.csv", "prompt,output\n5,x\n");
  r = run_shell("cd " + dir.string() + " && " + PODNET_BINARY +
                    " inference s.yaml --set inference.lengths_file=bad.csv",
                true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find((dir / "bad.csv").string() + ":2: output tokens 'x': expected a whole number"),
            std::string::npos)
      << r.out;
  r = run("inference " + scenario + " --set inference.lengths_file=trace.csv", true);  // not in this directory
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("trace.csv: cannot read the file"), std::string::npos) << r.out;
  // A fixed length beside the file is refused, naming the option that gave it (it was dropped in silence).
  r = run("inference " + scenario + " --prompt 4096", true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(flat(r.out).find("--prompt: inference.lengths_file (trace.csv) gives each request's prompt and output "
                             "tokens, so inference.prompt would be ignored: drop --prompt"),
            std::string::npos)
      << r.out;
}

}  // namespace

TEST(Cli, DesignSaysWhichTenantsShareALeaf) {
  // two-jobs: 8 servers, two per leaf. 24 + 24 GPUs: a holds servers 0-2, b 3-5; servers 2 and 3 share the
  // second leaf, so each tenant shares one leaf with the other. 16 + 16: a holds leaf 0, b leaf 1, none shared.
  Result split = run("design two-jobs --set 'tenants=[{name: a, gpus: 24}, {name: b, gpus: 24}]' --format json");
  ASSERT_EQ(split.status, 0) << split.out;
  const auto j = nlohmann::json::parse(split.out);
  ASSERT_EQ(j["tenants"].size(), 2u);
  EXPECT_EQ(j["tenants"][0]["shared_leaves"], 1);
  EXPECT_EQ(j["tenants"][0]["shares_leaves_with"], nlohmann::json::array({"b"}));
  EXPECT_EQ(j["tenants"][1]["shares_leaves_with"], nlohmann::json::array({"a"}));
  Result aligned = run("design two-jobs --set 'tenants=[{name: a, gpus: 16}, {name: b, gpus: 16}]' --format json");
  ASSERT_EQ(aligned.status, 0) << aligned.out;
  const auto k = nlohmann::json::parse(aligned.out);
  for (const auto& x : k["tenants"]) EXPECT_EQ(x["shared_leaves"], 0) << x.dump();
}

TEST(Cli, DesignTakesConvergedStorageSlotsOutOfTheGpuBill) {
  // two-jobs: 8 servers of 8 GPUs. Two storage nodes in the last two slots: 6 GPU servers, 48 GPUs, and
  // two servers' power (server.power) less; the NICs stay (the storage nodes use them).
  Result plain = run("design two-jobs --format json");
  Result conv = run("design two-jobs --set frontend.converged=true --set frontend.storage_nodes=2 --format json");
  ASSERT_EQ(plain.status, 0) << plain.out;
  ASSERT_EQ(conv.status, 0) << conv.out;
  const auto a = nlohmann::json::parse(plain.out);
  const auto b = nlohmann::json::parse(conv.out);
  EXPECT_EQ(b["bom"]["gpus"], a["bom"]["gpus"].get<int64_t>() - 16);
  EXPECT_EQ(b["bom"]["servers"], a["bom"]["servers"].get<int64_t>() - 2);
  EXPECT_EQ(b["bom"]["storage_nodes"], 2);
  EXPECT_EQ(b["bom"]["nics"], a["bom"]["nics"]);
  const double server_kw = a["bom"]["power"]["servers_kw"].get<double>() / a["bom"]["servers"].get<double>();
  EXPECT_NEAR(b["bom"]["power"]["servers_kw"].get<double>(),
              a["bom"]["power"]["servers_kw"].get<double>() - 2 * server_kw, 1e-3);
  EXPECT_EQ(b["storage_on_back_end"]["first_slot"], 6);
  EXPECT_EQ(b["cost"]["capex_usd"], a["cost"]["capex_usd"]);
  EXPECT_NEAR(b["cost"]["capex_per_gpu_usd"].get<double>(), b["cost"]["capex_usd"].get<double>() / 48, 0.01);
  Result table = run("design two-jobs --set frontend.converged=true --set frontend.storage_nodes=2");
  EXPECT_NE(table.out.find("storage nodes (in server slots)"), std::string::npos) << table.out;
}

TEST(Cli, TrainSaysWhenTheJobSpansTenants) {
  // 64 GPUs split into two tenants of 32: the one job takes all 64, across both VRFs. Within one tenant's
  // GPUs (32 of them) it spans none.
  Result across = run("train leafspine-8k --set topology.gpus=64 --set workload.model=llama3-8b "
                      "--set 'tenants=[{name: a, gpus: 32}, {name: b, gpus: 32}]' --format json");
  ASSERT_EQ(across.status, 0) << across.out;
  EXPECT_EQ(nlohmann::json::parse(across.out)["tenants_spanned"], nlohmann::json::array({"a", "b"}));
  Result within = run("train leafspine-8k --set topology.gpus=64 --set workload.model=llama3-8b --set workload.dp=4 "
                      "--set 'tenants=[{name: a, gpus: 32}, {name: b, gpus: 32}]' --format json");
  ASSERT_EQ(within.status, 0) << within.out;
  EXPECT_FALSE(nlohmann::json::parse(within.out).contains("tenants_spanned")) << within.out.substr(0, 400);
}

TEST(Cli, TenantsIsolatedOnTheFrontendNeedTenantsAndAFrontend) {
  const std::string dir = (podnet::cli::testing::temp_dir("podnet_cli_iso") / "plan").string();
  Result none = run("design leafspine-8k --set frontend.nics=2 --set frontend.storage_nodes=4 "
                    "--set frontend.tenants=isolated --config-plan " +
                        dir,
                    true);
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.out.find("frontend.tenants: there are no tenants to isolate"), std::string::npos) << none.out;
  Result no_frontend = run("design leafspine-8k --set 'tenants=[{name: a, gpus: 50%}]' --set frontend.tenants=isolated "
                           "--config-plan " +
                               dir,
                           true);
  EXPECT_EQ(no_frontend.status, 2);
  EXPECT_NE(no_frontend.out.find("isolated tenants on the frontend need an Ethernet frontend"), std::string::npos)
      << no_frontend.out;
  // With both: a frontend leaf holding a tenant's and the storage's NICs has both VRFs; the tenant imports the
  // storage's route target (VNI 10000), the storage every tenant's.
  Result ok = run("design leafspine-8k --set 'tenants=[{name: a, gpus: 50%}]' --set frontend.nics=2 "
                  "--set frontend.storage_nodes=4 --set frontend.tenants=isolated --config-plan " +
                  dir);
  ASSERT_EQ(ok.status, 0) << ok.out;
  bool found = false;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(dir) / "frr")) {
    std::ifstream f(e.path());
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (text.find("vrf Vrf-storage") == std::string::npos || text.find("vrf Vrf-a\n") == std::string::npos) continue;
    found = true;
    EXPECT_NE(text.find("route-target import 4200000000:10001\n  route-target import 4200000000:10000\n  "
                        "route-target export 4200000000:10001"),
              std::string::npos)
        << e.path();
    EXPECT_NE(text.find("route-target import 4200000000:10000\n  route-target import 4200000000:10001\n  "
                        "route-target export 4200000000:10000"),
              std::string::npos)
        << e.path();
  }
  EXPECT_TRUE(found) << "no frontend leaf holds both the tenant's and the storage's NICs";
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

TEST(Cli, NetboxNamesConvergedStorageSlotsStorageNodes) {
  // two-jobs: 8 servers; two storage nodes in the last two slots are storage-node devices of their own type.
  const std::string dir = (podnet::cli::testing::temp_dir("podnet_cli_nbconv") / "nb").string();
  Result r = run("design two-jobs --set frontend.converged=true --set frontend.storage_nodes=2 --netbox " + dir, true);
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream f(std::filesystem::path(dir) / "06-devices.csv");
  std::string line;
  int storage = 0, servers = 0;
  while (std::getline(f, line)) {
    storage += line.find(",storage-node,Generic,storage-node-") != std::string::npos ? 1 : 0;
    servers += line.find(",gpu-server,") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(storage, 2);
  EXPECT_EQ(servers, 6);
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

namespace {

// A packet training run's progress goes by its traffic: with none in the first third of the iteration and half
// in each of the others, half the time is a quarter of the traffic (1.5 thirds: none, then half of a half).
TEST(Cli, ProgressReadsTheTrafficCurveBetweenItsPoints) {
  const std::vector<double> work = {0, 0, 0.5, 1};
  EXPECT_DOUBLE_EQ(podnet::cli::traffic_share(work, 0.5), 0.25);
  EXPECT_DOUBLE_EQ(podnet::cli::traffic_share(work, 0.2), 0.0);
  EXPECT_DOUBLE_EQ(podnet::cli::traffic_share(work, 1.2), 1.0);  // a run longer than its estimate: all done
  EXPECT_DOUBLE_EQ(podnet::cli::traffic_share({}, 0.3), 0.3);    // no curve: the time itself
}

// A slow flow run's hint names the analytical engine, except where the command cannot take it (plan-upgrade
// drains switches under its runs): there it gives nothing, since network.flow_quantum barely speeds up the
// training iterations that command runs (the hint said so itself, beside an all-to-all's gain). It names the engine
// as a --set, which every command takes (podnet run has no --engine: the hint named a flag run refused).
TEST(Cli, ASlowRunsHintOffersOnlyWhatTheCommandTakes) {
  const podnet::engine::NetworkOptions o;  // an exact flow engine (no quantum)
  const std::string any = podnet::cli::slow_run_hint("flow", o);
  EXPECT_NE(any.find("--set network.engine=analytical"), std::string::npos) << any;
  EXPECT_EQ(any.find("--engine"), std::string::npos) << any;
  EXPECT_NE(podnet::cli::slow_run_hint("packet", o).find("--set network.engine=flow"), std::string::npos);
  EXPECT_NE(any.find("network.flow_quantum=100ns"), std::string::npos) << any;
  EXPECT_EQ(podnet::cli::slow_run_hint("flow", o, false), "");
}

}  // namespace

namespace {

// A misspelt op gets the nearest one, as other names do; a link class's parts in another order get that class.
TEST(Cli, MisspeltOpsAndLinkClassesGetTheNearestName) {
  Result r = run("bench leafspine-8k --op allreduse", true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--op allreduse: not a collective (did you mean allreduce?); expected one of allreduce, "
                       "allgather,"),
            std::string::npos)
      << r.out;
  r = run("bench leafspine-8k --op zzz", true);
  EXPECT_NE(r.out.find("--op zzz: not a collective; expected one of allreduce,"), std::string::npos) << r.out;
  // spine-leaf is leaf-spine's parts reversed: that class, not nic-leaf, which is nearer by letters alone.
  r = run("train leafspine-8k --fail-links spine-leaf=2%", true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("'spine-leaf' is not a link class of this fabric (did you mean 'leaf-spine'?)"),
            std::string::npos)
      << r.out;
}

}  // namespace

namespace {

// A job on part of the fabric: the capex per token/s is the whole fabric's, and the line says so and gives the
// job's GPUs' share (4,096 of 16,384: a quarter).
TEST(Cli, CapexPerTokenSaysWholeFabricAndTheJobsShare) {
  const std::string job =
      "train aipod-16k --set workload.model=llama3-70b --set workload.tp=8 --set workload.pp=4 --engine analytical";
  const Result text = run(job);
  ASSERT_EQ(text.status, 0) << text.out;
  const auto doc = nlohmann::json::parse(run(job + " --format json").out);
  const double per = doc["cost"]["network_capex_usd_per_token_per_second"].get<double>();
  ASSERT_EQ(doc["parallelism"]["gpus"], 4096);
  // The fabric's capex as the JSON gives it, not a figure copied from the output.
  const std::string capex = podnet::report::thousands(std::llround(doc["cost"]["network_capex_usd"].get<double>()));
  EXPECT_NE(text.out.find(fmt::format("${:.2f} (the whole fabric's ${}; this job's 4,096 of 16,384", per, capex)),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(fmt::format("GPUs: ${:.2f})", per / 4)), std::string::npos) << text.out;
}

}  // namespace
