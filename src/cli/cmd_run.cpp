// `podnet run [SCENARIO]`: the whole story of one scenario on one page - the
// fabric's design summary (bill of materials, limits) and one simulated
// training iteration of its workload (breakdown, MFU, days to train the token
// budget). With no argument it runs the built-in default, aipod-16k: Llama 3
// 405B as Meta trained it on 16,384 H100s (TP8 x PP16 x DP128, Llama 3 paper
// Table 4).
#include "cli/common.hpp"
#include "core/error.hpp"
#include "report/design_report.hpp"
#include "report/train_report.hpp"
#include "study/train.hpp"

namespace podnet::cli {

namespace {

int cmd_run(Common c, bool allow_oom) {
  if (c.scenario.empty()) c.scenario = kDefaultScenario;
  check_output_dir("--out", c.out_dir);
  RunLabel label{"iteration", Time(0)};
  const scenario::Setup s = load_setup(c, "run", label);
  nlohmann::json doc = design_document(s.scenario, s.fabric, "run");
  study::TrainRequest req;
  req.allow_oom = allow_oom;
  // The scenario's failures (its failures: and --fail-links / --fail-switches): the iteration again with them,
  // as train runs it; the headline stays the fabric as built.
  req.failures = true;
  const study::TrainStudy t = study::train(s, req, study_progress("run", label));
  nlohmann::json training;
  report::add_training(training, t.result);
  // What `podnet train` says of the same job: where its recipe came from, the fabric's tiers, its notes.
  const nlohmann::json full = report::train_document(s, t);
  for (const char* k : {"recipe", "no_recipe", "network", "notes", "failures", "parallelism", "cost"})
    if (full.contains(k)) training[k] = full[k];
  doc["training"] = training;
  doc["reliability"] = report::training_reliability_json(*t.reliability);
  if (t.data_loading) doc["data_loading"] = report::data_loading_json(*t.data_loading, t.result.iteration);
  emit(c, s.scenario, doc, "run", [](const nlohmann::json& d, std::ostream& out) {
    report::write_design_table(d, out);
    out << "\n";
    // The table's rows as train prints them: days to train with random failures too (the document keeps the
    // reliability once, beside the training).
    nlohmann::json training = d["training"];
    if (d.contains("reliability")) training["reliability"] = d["reliability"];
    report::write_training_table(training, out);
    report::write_training_reliability(d["reliability"], out,
                                       d["training"].contains("parallelism") ? &d["training"]["parallelism"] : nullptr);
    if (d.contains("data_loading")) report::write_data_loading(d["data_loading"], out);
    report::write_injected_failures(d["training"], out);
  });
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto* runc = app.add_subcommand("run", "run a scenario end to end: design summary and one training iteration with "
                                         "days to train (default: the built-in aipod-16k)");
  auto allow_oom = std::make_shared<bool>(false);
  add_common(runc, *c, false);
  add_failure_options(runc, *c);
  runc->add_flag("--allow-oom", *allow_oom,
                 "time the job even when it does not fit in the GPU's memory (the report still shows what it needs)");
  runc->footer("Examples:\n"
               "  podnet run                                          # the 16,384-GPU default job, in about a second\n"
               "  podnet run leafspine-8k --set topology.gpus=1024    # another scenario, resized\n"
               "  podnet run aipod-16k --fail-switches spine=1        # the same job with one spine down\n"
               "  podnet run my.yaml -o out/                          # your scenario; every format into out/");
  runc->callback([&action, c, allow_oom] { action = [c, allow_oom] { return cmd_run(*c, *allow_oom); }; });
}

}  // namespace podnet::cli
