// `podnet diff A B`: two scenarios (or two result documents) side by side -
// the inputs that differ, then each study's results that differ, with the
// iteration's change attributed to its breakdown (report/diff.hpp).
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "report/diff.hpp"
#include "report/json_intake.hpp"
#include "report/report.hpp"
#include "report/studies.hpp"

namespace podnet::cli {

namespace {

constexpr const char* kDefaultDiffStudies = "design,train";

struct DiffOptions {
  std::string a, b;
  std::vector<std::string> sets, sets_a, sets_b, adds;
  std::string studies = kDefaultDiffStudies;
  std::string format = "table";
  bool all = false;
  std::string engine;          // --engine: network.engine on both sides
  StudyOptions study_options;  // each study's own options (report/studies.hpp)
};

// A podnet result document (a .json file with schema_version and run.command), or null.
nlohmann::json result_document(const std::string& path) {
  if (path.size() < 5 || path.substr(path.size() - 5) != ".json") return nullptr;
  const nlohmann::json d =
      report::parse_json(read_input_file(path, path, "a result document (--format json of a podnet command)"), path);
  report::document_side(path, d);  // checks it is a result document
  return d;
}

report::DiffSide side(const std::string& what, const std::vector<std::string>& sets, const DiffOptions& o,
                      const std::vector<std::string>& studies, const std::vector<std::string>& own_sets,
                      const char* own_option) {
  // A key set by --set-a or --set-b is blamed on that option, not on --set.
  std::map<std::string, std::string> by;
  for (const auto& s : own_sets)
    if (const auto eq = s.find('='); eq != std::string::npos && eq > 0)
      by[s.substr(0, eq)] = fmt::format("{} {}", own_option, s.substr(0, eq));
  if (!o.engine.empty()) by["network.engine"] = "--engine";
  const nlohmann::json doc = result_document(what);
  if (!doc.is_null()) return report::document_side(what, doc);
  std::vector<const report::StudyDef*> chosen;
  for (const auto& st : studies) chosen.push_back(&report::study_named(st, "--study"));
  report::DiffSide s;
  s.label = what;
  const scenario::Scenario base = scenario::load(what, sets, o.adds, by);
  s.resolved_yaml = scenario::resolve(scenario::Scenario(base)).scenario.resolved_yaml();
  for (const auto& [key, by] : base.gpu_keys) s.set_by_preset[key] = by;
  for (const auto& [key, preset] : base.preset_keys) s.set_by_preset[key] = "network.preset " + preset;
  for (const report::StudyDef* st : chosen) {
    const report::StudyArgs args = study_args_from(*st, o.study_options, chosen);
    std::vector<std::string> all = sets;
    all.insert(all.end(), args.sets.begin(), args.sets.end());
    std::map<std::string, std::string> all_by = by;
    all_by.insert(args.set_by.begin(), args.set_by.end());
    const scenario::Scenario sc = args.sets.empty() ? base : scenario::load(what, all, o.adds, all_by);
    // Progress on stderr as the study's own command prints it, each line naming the side ("podnet diff: B, train:
    // iteration: 40% of 34,057 transfers done (10 s elapsed)"): a flow-engine diff takes minutes.
    const std::string prefix = fmt::format("{}, {}", std::string(own_option) == "--set-a" ? "A" : "B", st->name);
    RunLabel label;
    study::Progress progress = study_progress("diff", label);
    progress.run = [run = progress.run, prefix](const std::string& w) { run(prefix + ": " + w); };
    progress.step = [step = progress.step, prefix](size_t done, size_t total, const std::string& w) {
      step(done, total, prefix + ": " + w);
    };
    label.what = prefix;
    const auto printers = [&label](scenario::Setup& setup) {
      add_progress_printers(setup.network, "podnet diff", label, slow_run_hint(setup.engine, setup.network));
    };
    s.documents.push_back({st->name, report::run_study(*st, sc, args, progress, printers).document});
  }
  return s;
}

int cmd_diff(const DiffOptions& o) {
  std::vector<std::string> studies = split_list(o.studies);
  // A result document decides the study of the other side; two documents must be of one study, and what
  // runs studies (--study, --set, --set-a/-b, --config-add) does not apply to a document.
  std::string first_doc, first_study;
  int docs = 0;
  for (const auto& path : {o.a, o.b}) {
    const nlohmann::json d = result_document(path);
    if (d.is_null()) continue;
    ++docs;
    const std::string st = d["run"]["command"].get<std::string>();
    if (!first_study.empty() && st != first_study)
      throw InputError(fmt::format("cannot compare the {} result ({}) with the {} result ({}): diff two results of one "
                                   "study, or two scenarios with --study",
                                   first_study, first_doc, st, path));
    first_doc = path;
    first_study = st;
    studies = {st};
  }
  if (docs == 2) {
    for (const auto& [given, option] : {std::pair{!o.sets.empty(), "--set"},
                                        {!o.engine.empty(), "--engine"},
                                        {!o.sets_a.empty(), "--set-a"},
                                        {!o.sets_b.empty(), "--set-b"},
                                        {!o.adds.empty(), "--config-add"},
                                        {o.studies != kDefaultDiffStudies, "--study"},
                                        {!o.study_options.given.empty(), "a study's option"}})
      if (given)
        throw InputError(fmt::format("{}: A and B are result documents, whose studies have run; {} applies to "
                                     "scenarios only",
                                     option, option));
  }
  std::vector<std::string> both = o.sets;
  if (!o.engine.empty()) both.push_back("network.engine=" + o.engine);
  std::vector<std::string> sa = both, sb = both;
  sa.insert(sa.end(), o.sets_a.begin(), o.sets_a.end());
  sb.insert(sb.end(), o.sets_b.begin(), o.sets_b.end());
  const report::DiffSide a = side(o.a, sa, o, studies, o.sets_a, "--set-a"),
                         b = side(o.b, sb, o, studies, o.sets_b, "--set-b");
  nlohmann::json doc = report::diff_document(a, b);
  // The tuner chose other DP collectives on each side (ring at 400G, PAT at 800G): the change then mixes the
  // fabric's with the algorithm's. Both scenarios run the train study again under one choice, so the reader sees
  // what the fabric alone changes beside what the tuner's choices do.
  if (doc.contains("attribution") && doc["attribution"].contains("train") &&
      doc["attribution"]["train"].contains("dp_collectives") &&
      doc["attribution"]["train"]["dp_collectives"].contains("hold") && docs == 0) {
    nlohmann::json& dc = doc["attribution"]["train"]["dp_collectives"];
    const std::string hold = dc["hold"].get<std::string>();
    std::vector<std::string> ha = sa, hb = sb;
    ha.push_back(hold);
    hb.push_back(hold);
    const std::vector<std::string> train = {"train"};
    // An extra view, not the comparison asked for: when one choice cannot run on both sides, the diff above
    // stands and says why there is no held view.
    try {
      const nlohmann::json held = report::diff_document(side(o.a, ha, o, train, o.sets_a, "--set-a"),
                                                        side(o.b, hb, o, train, o.sets_b, "--set-b"));
      if (held.contains("attribution") && held["attribution"].contains("train"))
        dc["held"] = {{"iteration_time_ms_delta", held["attribution"]["train"]["iteration_time_ms_delta"]},
                      {"by_breakdown_ms", held["attribution"]["train"]["by_breakdown_ms"]}};
    } catch (const Error& e) {
      dc["hold_failed"] = e.what();
    }
  }
  if (o.format == "json") report::write_json(doc, std::cout);
  else {
    std::ostringstream table;
    report::write_diff_table(doc, table, o.all ? 0 : 25);
    std::cout << report::wrap_prose(table.str());
  }
  return kExitOk;
}

}  // namespace

void add_diff_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<DiffOptions>();
  auto* cmd = app.add_subcommand("diff", "two scenarios (or two result documents) side by side: inputs and results "
                                         "that differ, the iteration's change split over its breakdown");
  cmd->add_option("a", o->a, "scenario file, built-in name, or a result document (.json from --format json)")
      ->required();
  cmd->add_option("b", o->b, "the other one (the same scenario with --set-b compares a what-if)")->required();
  cmd->add_option("--study", o->studies, "studies to run on both, comma-separated: " + report::study_names(", "))
      ->capture_default_str();
  cmd->add_option("--set", o->sets, "override a key on both sides (repeatable)")->type_name("KEY=VALUE");
  cmd->add_option("--set-a", o->sets_a, "override a key on A only (repeatable)")->type_name("KEY=VALUE");
  cmd->add_option("--set-b", o->sets_b, "override a key on B only (repeatable)")->type_name("KEY=VALUE");
  cmd->add_option("--config-add", o->adds, "merge a scenario fragment on both sides (repeatable)")->type_name("FILE");
  cmd->add_option("-f,--format", o->format, "table (default) or json")->check(CLI::IsMember({"table", "json"}));
  cmd->add_flag("--all", o->all, "show every changed field (default: the 25 largest relative changes per study)");
  cmd->add_option(
      "--engine", o->engine,
      "the engine on both sides, as train's --engine (sets network.engine; default: each scenario's, else flow)");
  add_study_options(cmd, o->study_options);
  cmd->footer("Examples:\n"
              "  podnet diff aipod-16k aipod-16k --set-b topology.oversubscription=2:1     # what-if on one key\n"
              "  podnet diff leafspine-8k fat-tree-k48 --study design\n"
              "  podnet diff aipod-16k aipod-16k --study bench --gpus 0-1023:8 --set-b network.routing=adaptive\n"
              "  podnet diff before.json after.json                                          # two saved results");
  cmd->callback([&action, o] { action = [o] { return cmd_diff(*o); }; });
}

}  // namespace podnet::cli
