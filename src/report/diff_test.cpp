#include "report/diff.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>

#include "core/error.hpp"

namespace podnet::report {
namespace {

TEST(Diff, ResolvedScenarioFlattensToSectionKeys) {
  const auto f = flatten_resolved("# resolved\nschema_version: 1\nname: t\ntopology:\n  family: fat_tree\n  gpus: 64\n"
                                  "failures:\n  - {at: 0s, gpu: 1, action: slow, factor: 2}\n  - {random: 2}\n");
  const std::vector<std::pair<std::string, std::string>> want = {
      {"schema_version", "1"},
      {"name", "t"},
      {"topology.family", "fat_tree"},
      {"topology.gpus", "64"},
      {"failures", "- {at: 0s, gpu: 1, action: slow, factor: 2} - {random: 2}"}};
  EXPECT_EQ(f, want);
}

TEST(Diff, AKeyLeftToItsDefaultIsAutoAndProseIsNotAnInput) {
  // resolve prints a key left to its default as a comment; diff reads it as the value "auto", so a scenario that
  // sets it and one that does not differ by "8" against "auto" (not by a key named "# pods_per_zone").
  const auto f = flatten_resolved("topology:\n  gpus: 64\n  # pods_per_zone: auto (pods per zone (4 tiers: ...))\n");
  const std::vector<std::pair<std::string, std::string>> want = {{"topology.gpus", "64"},
                                                                 {"topology.pods_per_zone", "auto"}};
  EXPECT_EQ(f, want);
  DiffSide a{"A", "name: a\ndescription: one fabric\ntopology:\n  gpus: 64\n  pods_per_zone: 8\n", {}};
  DiffSide b{"B",
             "name: b\ndescription: another\ntopology:\n  gpus: 64\n  # pods_per_zone: auto (pods per zone)\n",
             {}};
  const nlohmann::json d = diff_document(a, b);
  ASSERT_EQ(d["inputs"].size(), 1u) << d.dump();
  EXPECT_EQ(d["inputs"][0]["key"], "topology.pods_per_zone");
  EXPECT_EQ(d["inputs"][0]["a"], "8");
  EXPECT_EQ(d["inputs"][0]["b"], "auto");
}

nlohmann::json train_doc(double compute, double tp, double bubble, const std::string& engine) {
  // The breakdown adds up to the iteration time.
  return {{"iteration_time_ms", compute + tp + bubble},
          {"breakdown_ms", {{"compute", compute}, {"tp", tp}, {"bubble", bubble}}},
          {"engine", engine},
          {"stages", {1, 2, 3}},  // arrays are not compared
          {"run", {{"command", "train"}}}};
}

TEST(Diff, ChangedFieldsAndTheIterationSplitOverItsBreakdown) {
  DiffSide a{"A", "topology:\n  gpus: 64\n", {{"train", train_doc(100, 20, 30, "flow")}}};
  DiffSide b{"B", "topology:\n  gpus: 128\n", {{"train", train_doc(100, 25, 45, "flow")}}};
  const nlohmann::json d = diff_document(a, b);
  ASSERT_EQ(d["inputs"].size(), 1u);
  EXPECT_EQ(d["inputs"][0]["key"], "topology.gpus");
  const auto& s = d["studies"]["train"];
  // iteration 150 -> 170, tp 20 -> 25, bubble 30 -> 45 changed; compute and engine the same.
  EXPECT_EQ(s["changed"].size(), 3u);
  EXPECT_EQ(s["same"], 2);
  const auto& at = d["attribution"]["train"];
  EXPECT_DOUBLE_EQ(at["iteration_time_ms_delta"].get<double>(), 20.0);  // 170 - 150
  EXPECT_DOUBLE_EQ(at["by_breakdown_ms"]["tp"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(at["by_breakdown_ms"]["bubble"].get<double>(), 15.0);
  EXPECT_DOUBLE_EQ(at["by_breakdown_ms"]["compute"].get<double>(), 0.0);
  // 5 + 15 + 0 = 20: the parts add up to the change.
  for (const auto& c : s["changed"])
    if (c["field"] == "breakdown_ms.bubble") {
      EXPECT_DOUBLE_EQ(c["ratio"].get<double>(), 1.5);  // 45 / 30
    }
  std::ostringstream out;
  write_diff_table(d, out);
  // In milliseconds with 2 decimals, as train's table prints them (report/studies.cpp declares the fields).
  EXPECT_NE(out.str().find("iteration time +20.00 ms: bubble +15.00 ms, TP (exposed) +5.00 ms"), std::string::npos)
      << out.str();
}

TEST(Diff, TheHeadlinesPartsReadAsTheTablesRows) {
  // compute 100.004 -> 200.006 ms: the table shows 100.00 and 200.01, a change of +100.01 ms; the headline's part
  // said the exact +100.00 ms.
  const nlohmann::json d = diff_document(DiffSide{"A", "", {{"train", train_doc(100.004, 20, 30, "flow")}}},
                                         DiffSide{"B", "", {{"train", train_doc(200.006, 20, 30, "flow")}}});
  std::ostringstream out;
  write_diff_table(d, out);
  EXPECT_NE(out.str().find("iteration time +100.01 ms: compute +100.01 ms"), std::string::npos) << out.str();
}

TEST(Diff, JobsOfDifferentSizesAreAWarningOfItsOwn) {
  // 64 GPUs against 128 on the flow engine: the engine on its own line, then the warning (", flow engine" was
  // appended to the warning's sentence).
  nlohmann::json ta = train_doc(100, 20, 30, "flow"), tb = train_doc(100, 25, 45, "flow");
  ta["parallelism"] = {{"gpus", 64}};
  tb["parallelism"] = {{"gpus", 128}};
  const nlohmann::json d = diff_document(DiffSide{"A", "", {{"train", ta}}}, DiffSide{"B", "", {{"train", tb}}});
  std::ostringstream out;
  write_diff_table(d, out);
  EXPECT_NE(out.str().find("    on the flow engine\n    warning: A runs on 64 GPUs, B on 128: the results compare jobs "
                           "of different sizes, not only the inputs that differ\n"),
            std::string::npos)
      << out.str();
  tb["parallelism"]["gpus"] = 64;
  std::ostringstream same;
  write_diff_table(diff_document(DiffSide{"A", "", {{"train", ta}}}, DiffSide{"B", "", {{"train", tb}}}), same);
  EXPECT_NE(same.str().find("    on 64 GPUs, flow engine\n"), std::string::npos) << same.str();
}

TEST(Diff, SidesWhoseTunerChoseOtherDpCollectivesAreNamed) {
  const auto with = [](const std::string& algorithm, int channels, int collectives) {
    nlohmann::json d = train_doc(100, 20, 30, "flow");
    d["plan"]["dp_choices"] = nlohmann::json::array({{{"op", "reducescatter"},
                                                      {"algorithm", algorithm},
                                                      {"protocol", "simple"},
                                                      {"channels", channels},
                                                      {"collectives", collectives}}});
    return d;
  };
  // A ring on 4 channels against PAT on 8 (what 800G NICs do to the default job): named, with the key that
  // holds one choice on both sides (PAT, the algorithm only B used, left out).
  nlohmann::json d = diff_document(DiffSide{"A", "", {{"train", with("ring", 4, 10)}}},
                                   DiffSide{"B", "", {{"train", with("pat", 8, 10)}}});
  const auto& dc = d["attribution"]["train"]["dp_collectives"];
  EXPECT_EQ(dc["a"], "10 reducescatter ring/simple on 4 channels");
  EXPECT_EQ(dc["b"], "10 reducescatter pat/simple on 8 channels");
  EXPECT_EQ(dc["hold"], "collective.algorithms=^pat");
  std::ostringstream out;
  write_diff_table(d, out);
  EXPECT_NE(out.str().find("To compare the fabrics under one choice: --set 'collective.algorithms=^pat'"),
            std::string::npos)
      << out.str();
  // With the sides run again under one choice (cmd_diff adds "held"), that change comes first, then the tuner's.
  d["attribution"]["train"]["dp_collectives"]["held"] = {{"iteration_time_ms_delta", -3.0},
                                                         {"by_breakdown_ms", {{"bubble", -3.0}}}};
  out.str("");
  write_diff_table(d, out);
  EXPECT_NE(out.str().find("    with the same DP algorithm on both sides (--set 'collective.algorithms=^pat'):\n"
                           "      iteration time -3.00 ms: bubble -3.00 ms\n"
                           "    with NCCL's tuner's choice on each side (the table below):\n"
                           "      iteration time "),
            std::string::npos)
      << out.str();
  // A tree on A against a ring on B (a one-server TP all-gather needs ring): the hold leaves out A's tree, never
  // the ring, which would leave B's TP collectives nothing to run.
  d = diff_document(DiffSide{"A", "", {{"train", with("tree", 4, 10)}}},
                    DiffSide{"B", "", {{"train", with("ring", 4, 10)}}});
  EXPECT_EQ(d["attribution"]["train"]["dp_collectives"]["hold"], "collective.algorithms=^tree");
  // When the held runs fail all the same (cmd_diff records why), the comparison stands and says so.
  d["attribution"]["train"]["dp_collectives"]["hold_failed"] = "no enabled algorithm is available";
  out.str("");
  write_diff_table(d, out);
  EXPECT_NE(out.str().find("One choice on both sides (--set 'collective.algorithms=^tree') could not run: no enabled "
                           "algorithm is available"),
            std::string::npos)
      << out.str();
  // Only the channels differ: named, no algorithm to leave out.
  d = diff_document(DiffSide{"A", "", {{"train", with("ring", 4, 10)}}},
                    DiffSide{"B", "", {{"train", with("ring", 8, 10)}}});
  EXPECT_FALSE(d["attribution"]["train"]["dp_collectives"].contains("hold"));
  // The same choices for more collectives (a larger job): nothing to say.
  d = diff_document(DiffSide{"A", "", {{"train", with("ring", 4, 10)}}},
                    DiffSide{"B", "", {{"train", with("ring", 4, 20)}}});
  EXPECT_FALSE(d["attribution"]["train"].contains("dp_collectives"));
}

TEST(Diff, NetworkCapexPerTokenPerSecondNeedsBothStudies) {
  // A: 1,000,000 USD for 250,000 tokens/s = 4 USD per token/s; B: 1,200,000 USD for 400,000 = 3; B / A 0.75.
  const auto side = [](const char* label, double capex, double tokens) {
    return DiffSide{label,
                    "",
                    {{"design", nlohmann::json{{"cost", {{"capex_usd", capex}}}, {"run", {{"command", "design"}}}}},
                     {"train", nlohmann::json{{"tokens_per_second", tokens}, {"run", {{"command", "train"}}}}}}};
  };
  const nlohmann::json d = diff_document(side("A", 1e6, 2.5e5), side("B", 1.2e6, 4e5));
  const auto& c = d["derived"]["network_capex_usd_per_token_per_second"];
  EXPECT_DOUBLE_EQ(c["a"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(c["b"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(c["ratio"].get<double>(), 0.75);
  std::ostringstream out;
  write_diff_table(d, out);
  EXPECT_NE(out.str().find("network capex per token/s of training: A $4.00, B $3.00 (B / A 0.750x)"), std::string::npos)
      << out.str();
  // Design alone: nothing derived.
  DiffSide a{"A", "", {{"design", nlohmann::json{{"cost", {{"capex_usd", 1e6}}}, {"run", {{"command", "design"}}}}}}};
  EXPECT_FALSE(diff_document(a, a).contains("derived"));
}

TEST(Diff, HeadlineFiguresAreShownPastTheRowLimit) {
  // Capex per GPU moves 1 % (the smallest change); three undeclared fields move 2x, 3x and 4x. With room for
  // two rows the declared figure is shown and the largest of the others fills the second row.
  const auto design = [](double per_gpu, double k) {
    return nlohmann::json{{"cost", {{"capex_per_gpu_usd", per_gpu}}},
                          {"x", {{"a", 1 * k}, {"b", 1 * k * k}, {"c", 1 * k * k * k}}},
                          {"run", {{"command", "design"}}}};
  };
  DiffSide a{"A", "", {{"design", design(10000, 1)}}};
  DiffSide b{"B", "", {{"design", design(10100, 2)}}};
  const nlohmann::json d = diff_document(a, b);
  ASSERT_EQ(d["studies"]["design"]["changed"].size(), 4u);
  std::ostringstream out;
  write_diff_table(d, out, 2);
  EXPECT_NE(out.str().find("network capex per GPU"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("x, c "), std::string::npos) << out.str();  // 8x: the largest change, labelled from its key
  EXPECT_EQ(out.str().find("x, b "), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("... 2 more"), std::string::npos) << out.str();
}

TEST(Diff, ASmallChangeGetsTheDecimalsItNeedsAndAYesNoStaysOne) {
  // 30.50 to 30.47 days (a field of 1 decimal) is -0.03 days, not -0.0; a yes/no reads false and true, not 0 and 1.
  const auto doc = [](double days, bool spare) {
    return nlohmann::json{{"days_to_train_with_failures", days},
                          {"settings", {{"spare_rail", spare}}},
                          {"run", {{"command", "reliability"}}}};
  };
  DiffSide a{"A", "", {{"reliability", doc(30.50, false)}}};
  DiffSide b{"B", "", {{"reliability", doc(30.47, true)}}};
  const nlohmann::json d = diff_document(a, b);
  std::ostringstream out;
  write_diff_table(d, out, 10);
  EXPECT_NE(out.str().find("30.5 days  -0.03 days"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("settings, spare rail                false      true\n"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("+1"), std::string::npos) << out.str();
}

TEST(Diff, AChangeIsTheDifferenceOfTheValuesAsShown) {
  // 3.72 and 3.86 days (1 decimal) show as 3.7 and 3.9: their change reads +0.2 days, not the +0.1 that 0.14
  // rounds to; B / A stays the ratio of the values themselves (3.86 / 3.72 = 1.038).
  const auto doc = [](double days) {
    return nlohmann::json{{"days_to_train_with_failures", days}, {"run", {{"command", "reliability"}}}};
  };
  DiffSide a{"A", "", {{"reliability", doc(3.72)}}};
  DiffSide b{"B", "", {{"reliability", doc(3.86)}}};
  std::ostringstream out;
  write_diff_table(diff_document(a, b), out, 10);
  EXPECT_NE(out.str().find("3.7 days  3.9 days  +0.2 days  1.038x"), std::string::npos) << out.str();
}

TEST(Diff, ASwitchOfAnotherCapacityIsNoted) {
  // 128 x 800G is 102.4 Tb/s, 128 x 400G 51.2 Tb/s: another chip. 256 x 400G is 102.4 Tb/s again: no note.
  const auto side = [](const char* label, const char* radix, const char* port) {
    return DiffSide{label, fmt::format("switch:\n  radix: {}\n  port_speed: {}\n", radix, port), {}};
  };
  std::ostringstream out;
  write_diff_table(diff_document(side("A", "128", "800Gbps"), side("B", "128", "400Gbps")), out, 10);
  EXPECT_NE(out.str().find("note: the switch is another chip: A 128 x 800Gbps (102.4 Tbps), B 128 x 400Gbps (51.2 "
                           "Tbps)"),
            std::string::npos)
      << out.str();
  EXPECT_FALSE(diff_document(side("A", "128", "800Gbps"), side("B", "256", "400Gbps")).contains("switch_capacity"));
}

TEST(Diff, TwoResultDocumentsShowTheInputsTheirRunBlocksRecord) {
  // Two saved train results: the same scenario and seed, B run with --set server.nic_speed=200Gbps, both with
  // topology.gpus=64. Only the NIC speed differs; A's value is the scenario's own, which the document lacks.
  const auto doc = [](std::vector<std::string> overrides) {
    return nlohmann::json{
        {"run", {{"command", "train"}, {"scenario", "leafspine-8k"}, {"seed", 1}, {"overrides", overrides}}}};
  };
  const nlohmann::json d =
      diff_document(document_side("a.json", doc({"topology.gpus=64"})),
                    document_side("b.json", doc({"topology.gpus=64", "server.nic_speed=200Gbps"})));
  ASSERT_EQ(d["inputs"].size(), 1u) << d["inputs"].dump();
  EXPECT_EQ(d["inputs"][0]["key"], "server.nic_speed");
  EXPECT_EQ(d["inputs"][0]["a"], "(scenario's)");
  EXPECT_EQ(d["inputs"][0]["b"], "200Gbps");
  std::ostringstream out;
  write_diff_table(d, out);
  EXPECT_NE(out.str().find(
                "inputs that differ (1), as the documents' run blocks record them (scenario, seed, --set, options):"),
            std::string::npos)
      << out.str();
}

TEST(Diff, TwoResultDocumentsShowTheOptionsTheirRunsWereGiven) {
  // Two bench results: the same scenario and --set, A run with -e 2MiB, B with -e 4MiB and a flag (--sweep);
  // an option one side left out took its default.
  const auto doc = [](nlohmann::json options) {
    return nlohmann::json{{"run",
                           {{"command", "bench"},
                            {"scenario", "leafspine-8k"},
                            {"seed", 1},
                            {"overrides", {"network.engine=analytical"}},
                            {"options", options}}}};
  };
  const nlohmann::json d =
      diff_document(document_side("a.json", doc({{"--max", "2MiB"}, {"--gpus", "0-63"}})),
                    document_side("b.json", doc({{"--max", "4MiB"}, {"--gpus", "0-63"}, {"--sweep", true}})));
  ASSERT_EQ(d["inputs"].size(), 2u) << d["inputs"].dump();
  EXPECT_EQ(d["inputs"][0], (nlohmann::json{{"key", "--max"}, {"a", "2MiB"}, {"b", "4MiB"}, {"from", "run"}}));
  EXPECT_EQ(d["inputs"][1], (nlohmann::json{{"key", "--sweep"}, {"a", "(default)"}, {"b", "true"}, {"from", "run"}}));
}

TEST(Diff, FieldsOnOneSideShowTheirValues) {
  // A 4-tier design has a core tier a 3-tier one has not: its switch count is printed, not only counted.
  DiffSide a{"A",
             "",
             {{"design", nlohmann::json{{"bom", {{"switches", {{"spine", 8}}}}}, {"run", {{"command", "design"}}}}}}};
  DiffSide b{"B",
             "",
             {{"design", nlohmann::json{{"bom", {{"switches", {{"spine", 8}, {"core", 1024}}}}},
                                        {"run", {{"command", "design"}}}}}}};
  const nlohmann::json d = diff_document(a, b);
  EXPECT_EQ(d["studies"]["design"]["only_b_values"]["bom.switches.core"], 1024);
  std::ostringstream out;
  write_diff_table(d, out);
  // Labelled from its key as every undeclared field is (it read "bom.switches.core"), one row a figure: widths
  // 14 ("switches, core") and 5 ("1,024"), the value right-aligned under "B".
  EXPECT_NE(out.str().find("  design: only in B (1):\n"
                           "    figure              B\n"
                           "    ---------------------\n"
                           "    switches, core  1,024\n"),
            std::string::npos)
      << out.str();
}

TEST(Diff, TextFieldsAndFieldsOnOneSide) {
  DiffSide a{"A", "", {{"design", {{"topology", {{"family", "fat_tree"}}}, {"x", 1}}}}};
  DiffSide b{"B", "", {{"design", {{"topology", {{"family", "torus"}}}, {"y", 1}}}}};
  const auto d = diff_document(a, b);
  const auto& s = d["studies"]["design"];
  ASSERT_EQ(s["changed"].size(), 1u);
  EXPECT_EQ(s["changed"][0]["b"], "torus");
  EXPECT_EQ(s["only_a"], nlohmann::json::array({"x"}));
  EXPECT_EQ(s["only_b"], nlohmann::json::array({"y"}));
  EXPECT_TRUE(d["inputs"].empty());
}

TEST(Diff, DocumentSideTakesItsStudyFromRunCommand) {
  const DiffSide s = document_side("#3 aipod-16k", train_doc(1, 2, 3, "flow"));
  EXPECT_EQ(s.label, "#3 aipod-16k");
  EXPECT_TRUE(s.resolved_yaml.empty());
  ASSERT_EQ(s.documents.size(), 1u);
  EXPECT_EQ(s.documents[0].first, "train");
  // Not a result document: the label and what is missing are named.
  try {
    document_side("upload.json", {{"rows", 1}});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("upload.json: not a podnet result document (no run.command"),
              std::string::npos);
  }
  EXPECT_THROW(document_side("x", nlohmann::json::array()), InputError);
  EXPECT_THROW(document_side("x", {{"run", {{"command", 3}}}}), InputError);
}

TEST(Diff, AnInputAPresetSetSaysWhichPreset) {
  // B's GPU preset set its server's NVLink (the scenario left it out): the row says so.
  DiffSide a{"A", "server:\n  nvlink_bandwidth: 3.6Tbps\nworkload:\n  gpu: h100\n", {}};
  DiffSide b{"B", "server:\n  nvlink_bandwidth: 7.2Tbps\nworkload:\n  gpu: b200\n", {}};
  b.set_by_preset["server.nvlink_bandwidth"] = "workload.gpu";
  const nlohmann::json d = diff_document(a, b);
  ASSERT_EQ(d["inputs"].size(), 2u);
  EXPECT_EQ(d["inputs"][0]["key"], "server.nvlink_bandwidth");
  EXPECT_EQ(d["inputs"][0]["set_by"], "workload.gpu");
  EXPECT_FALSE(d["inputs"][1].contains("set_by"));
  std::ostringstream out;
  write_diff_table(d, out);
  EXPECT_NE(out.str().find("server.nvlink_bandwidth (from workload.gpu)"), std::string::npos) << out.str();
}

TEST(Diff, AnOversubscriptionRoundedToWholePortsIsSaid) {
  // B asked 2:1 at the leaf and got 42 down / 22 up ports (1.9091:1): a sentence, not a raw "only in B" row.
  const nlohmann::json da = {{"run", {{"command", "design"}}}, {"oversubscription", {{"leaf", 1.0}}}};
  nlohmann::json db = {{"run", {{"command", "design"}}}, {"oversubscription", {{"leaf", 1.9091}}}};
  db["oversubscription_asked"] = {{"leaf", "asked 2:1: leaf: 42 down / 22 up ports"}};
  const nlohmann::json d = diff_document(DiffSide{"A", "", {{"design", da}}}, DiffSide{"B", "", {{"design", db}}});
  std::ostringstream out;
  write_diff_table(d, out);
  EXPECT_NE(out.str().find("design: B asked 2:1 at the leaf; its ports give the ratio shown (42 down / 22 up ports)"),
            std::string::npos)
      << out.str();
  EXPECT_EQ(out.str().find("only in B: "), std::string::npos) << out.str();
  // The summary counts what the "only in" tables list: the asked ratio is the sentence, not a figure only in B.
  EXPECT_EQ(out.str().find("only in B"), std::string::npos) << out.str();
}

TEST(Diff, FailuresOnOneSideCountInTheIterationTime) {
  // B ran the same job with a failure: its iteration without failures is A's (150 ms), with them 350 ms. The
  // headline is 350 - 150 = +200 ms, all of it the failures' part (the breakdown, without failures, is the same).
  nlohmann::json with = train_doc(100, 20, 30, "flow");
  with["failures"] = {{"iteration_ms", 350.0}, {"baseline_iteration_ms", 150.0}, {"failure", ""}};
  DiffSide a{"A", "", {{"train", train_doc(100, 20, 30, "flow")}}};
  DiffSide b{"B", "", {{"train", with}}};
  const nlohmann::json d = diff_document(a, b);
  const auto& at = d["attribution"]["train"];
  EXPECT_DOUBLE_EQ(at["iteration_time_ms_delta"].get<double>(), 200.0);
  EXPECT_DOUBLE_EQ(at["by_breakdown_ms"]["failures"].get<double>(), 200.0);
  std::ostringstream out;
  write_diff_table(d, out);
  EXPECT_NE(out.str().find("iteration time +200.00 ms: failures +200.00 ms"), std::string::npos) << out.str();
  // The failure block's fields by their labels; its empty "failure" text is not listed.
  EXPECT_NE(out.str().find("  train: only in B (2):\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("    iteration time without failures  150.00 ms\n"
                           "    iteration time with failures     350.00 ms\n"),
            std::string::npos)
      << out.str();
}

// A bench's figures per size read as their label at the size ("bus bandwidth at 4 MiB"), not as the key the
// comparison is made on ("busbw_gbyte_per_s@0000000004194304"), declared or not (the algorithm it chose).
TEST(Diff, ABenchFigurePerSizeNamesItsSize) {
  const auto doc = [](double busbw, const char* algo) {
    return nlohmann::json{{"bench", {{"op", "allreduce"}, {"gpus", 64}}},
                          {"rows", {{{"bytes", 4194304}, {"busbw_gbyte_per_s", busbw}, {"algorithm", algo}}}},
                          {"run", {{"command", "bench"}}}};
  };
  DiffSide a{"A", "", {{"bench", doc(60, "tree")}}};
  DiffSide b{"B", "", {{"bench", doc(30, "ring")}}};
  std::ostringstream out;
  write_diff_table(diff_document(a, b), out, 10);
  EXPECT_NE(out.str().find("bus bandwidth at 4 MiB"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("algorithm at 4 MiB"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find('@'), std::string::npos) << out.str();
}

}  // namespace
}  // namespace podnet::report
