// `podnet sweep SCENARIO --study S --vary KEY=V1,V2 ...`: one study at every
// point of the cartesian product of the --vary axes, on -j threads, each
// point stored in an SQLite database as it finishes (study/sweep.hpp);
// `podnet sweep --results DB` reads one back.
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "report/html.hpp"
#include "report/report.hpp"
#include "report/studies.hpp"
#include "report/sweep_report.hpp"
#include "report/web_assets.hpp"
#include "study/sweep.hpp"

namespace podnet::cli {

namespace {

struct SweepOptions {
  std::string study = "train";
  bool study_given = false;  // --study on the command line (a sweep file's study: must then agree)
  std::vector<std::string> vary;
  std::string sweep_file;
  std::string results = "sweep.db";
  int jobs = 1;
  std::string columns;
  bool timing = false;
  std::string html;            // the results as a dashboard page
  StudyOptions study_options;  // each study's own options (report/studies.hpp)
};

// Prints the stored points; `failed`, when given, gets how many of them hold an error.
int read_back(const Common& c, const SweepOptions& o, int64_t* failed = nullptr) {
  const study::ResultTable t = study::read_results(o.results, o.timing);
  if (failed) *failed = report::failed_points(t);
  if (!o.html.empty()) {
    // The document --format json prints, drawn by the dashboard (web/podnet.js, kind "sweep").
    nlohmann::json pts = nlohmann::json::array();
    for (const auto& r : t.rows) {
      nlohmann::json p = nlohmann::json::object();
      for (size_t i = 0; i < r.size(); ++i) p[t.columns[i]] = report::json_of(r[i]);
      pts.push_back(p);
    }
    // columns: the table's, as the CLI prints it (the page shows the same, then its headline figures).
    const nlohmann::json doc = {{"study", t.study},
                                {"axes", t.axes},
                                {"columns", report::default_columns(t)},
                                {"points", pts}};
    write_out("--html", o.html, report::html_page({{"kind", "sweep"}, {"document", doc}}, "podnet sweep " + o.results));
    std::cerr << "podnet: wrote " << o.html << "\n";
  }
  if (c.format == "json") report::write_sweep_results_json(t, std::cout);
  else if (c.format == "csv") report::write_sweep_results_csv(t, std::cout);
  else {
    std::ostringstream table;
    report::write_sweep_results_table(t, split_list(o.columns), table);
    std::cout << report::wrap_prose(table.str());
  }
  return kExitOk;
}

int cmd_sweep(const Common& c, const SweepOptions& o) {
  if (!o.html.empty() && !report::dashboard_installed())
    throw InputError(std::string("--html: ") + report::kDashboardMissing);
  check_output_file("--html", o.html);
  if (c.scenario.empty()) {
    if (!o.vary.empty() || !o.sweep_file.empty())
      throw InputError("--vary and --sweep-file need a scenario to sweep (podnet sweep SCENARIO --vary ...)");
    return read_back(c, o);
  }
  if (o.vary.empty() && o.sweep_file.empty())
    throw InputError("podnet sweep SCENARIO needs at least one --vary KEY=V1,V2,... (or a --sweep-file)");
  check_output_file("--results", o.results);
  study::SweepSpec spec;
  spec.study = o.study;
  if (!o.sweep_file.empty()) {
    study::SweepFile f = study::load_sweep_file(o.sweep_file);
    if (!f.study.empty()) {
      if (!report::find_study(f.study))
        throw InputError(fmt::format("{}: study: {}: expected {}", o.sweep_file, f.study, report::study_names()));
      if (o.study_given && f.study != o.study)
        throw InputError(
            fmt::format("--study {} and {}'s study: {} disagree; give one of them", o.study, o.sweep_file, f.study));
      spec.study = f.study;
    }
    spec.axes = std::move(f.axes);
  }
  const report::StudyDef& def = report::study_named(spec.study, "--study");
  // The study's own options, checked now; the scenario overrides they imply (bench's --algo NAME:
  // collective.algorithms) follow the user's --set.
  const report::StudyArgs args = study_args_from(def, o.study_options);
  spec.study_args = report::study_definition(def, args, report::kCli);
  spec.scenario = c.scenario;
  spec.sets = c.sets;
  spec.sets.insert(spec.sets.end(), args.sets.begin(), args.sets.end());
  spec.fragments = c.adds;
  for (const auto& v : o.vary) spec.axes.push_back(study::parse_axis(v));
  // Errors about an axis's values name where it was given, not --set.
  std::map<std::string, std::string> axis_flags = c.set_flags;
  for (const auto& [key, label] : args.set_by) axis_flags[key] = label;
  for (const auto& a : spec.axes) axis_flags[a.key] = a.label();
  for (size_t i = 0; i < spec.axes.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (spec.axes[i].key == spec.axes[j].key)
        throw InputError(fmt::format("--vary {}: the key is varied twice", spec.axes[i].key));

  // Keys and values are checked on the first point before anything runs.
  const std::vector<study::SweepPoint> points = study::cartesian(spec.axes);
  apply_limits(c);
  // Each axis value (the first kCheckedValues of an axis) is checked on a point that holds it before anything
  // runs: a typo in a later value used to become a stored error row, which the stored definition then kept.
  constexpr size_t kCheckedValues = 1000;
  for (const auto& axis_sets : study::value_check_overrides(spec.axes, kCheckedValues)) {
    std::vector<std::string> sets = spec.sets;
    sets.insert(sets.end(), axis_sets.begin(), axis_sets.end());
    (void)scenario::load(c.scenario, sets, c.adds, axis_flags);
  }

  // --columns too: a name no result can match is refused now, not after the whole sweep has run. One the study
  // does not declare is looked for in the first point's results.
  std::vector<std::string> axis_keys;
  for (const auto& a : spec.axes) axis_keys.push_back(a.key);
  const std::vector<std::string> undeclared = report::check_sweep_columns(def, axis_keys, split_list(o.columns));
  std::once_flag first_point;

  const study::Evaluate evaluate = [&](const study::SweepPoint& p) {
    const scenario::Scenario sc = scenario::load(c.scenario, spec.overrides(p), c.adds, axis_flags);
    const report::StudyOutput out = report::run_study(def, sc, args, {}, [&](scenario::Setup& s) {
      if (study::points_share_cores(o.jobs)) s.network.flow.threads = 1;
    });
    study::Outcome done{true, {}, report::sweep_fields(out.document)};
    if (!undeclared.empty())
      std::call_once(first_point, [&] {
        const std::string w = report::columns_missing_from_point(undeclared, done.fields);
        if (!w.empty()) std::cerr << "podnet sweep: " << w << "\n";
      });
    return done;
  };
  study::SweepProgress progress;
  const bool tty = isatty(STDERR_FILENO) != 0;
  progress.point = [tty](int64_t done, int64_t total, int64_t failed, double elapsed) {
    if (!tty && elapsed < 2.0 && done < total) return;
    std::cerr << fmt::format("podnet sweep: point {}/{} done, {} failed ({})\n", done, total, failed,
                             report::elapsed_and_eta(done, total, elapsed));
  };
  const study::SweepStats st = study::run_sweep(spec, o.results, evaluate, o.jobs, progress);
  if (!st.reporter) return kExitOk;  // an MPI worker: rank 0 reports
  std::cerr << fmt::format("podnet sweep: {}: {} already in {}, {} run now, {} with an error{}\n",
                           plural(st.points, "point", "points"), st.already, o.results, st.ran, st.failed,
                           st.ranks > 1
                               ? fmt::format(" ({} MPI ranks: 1 coordinator, {} workers)", st.ranks, st.ranks - 1)
                               : "");
  try {
    // A sweep with failed points is a run that failed in part: scripts see exit status 1, after the table.
    int64_t failed = 0;
    const int rc = read_back(c, o, &failed);
    if (rc == kExitOk && failed > 0) {
      std::cerr << fmt::format("podnet: failed: {} of {} with an error; the table's status column and the errors "
                               "under it say why (every point is stored in {})\n",
                               failed, plural(st.points, "point", "points"), o.results);
      return kExitFailure;
    }
    return rc;
  } catch (const InputError& e) {
    // Nothing is lost: the points are stored, and the table can be asked for again. A column that the run did not
    // produce still leaves the table of the default columns, then the error (exit 2: the input was wrong).
    if (!o.columns.empty() && c.format == "table") {
      SweepOptions plain = o;
      plain.columns.clear();
      plain.html.clear();  // written above, if asked
      try {
        (void)read_back(c, plain);
      } catch (const InputError&) {  // the table itself failed: the error alone
      }
    }
    std::cerr << "podnet: error: "
              << fmt::format("{}; the points are stored in {}: `podnet sweep --results {} --columns ...` shows them",
                             e.what(), o.results, o.results)
              << "\n";
    return kExitBadInput;
  }
}

}  // namespace

void add_sweep_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto o = std::make_shared<SweepOptions>();
  auto* cmd = app.add_subcommand(
      "sweep", "run a study over a grid of scenario values on N threads, results in an SQLite database (resumable)");
  add_common(cmd, *c, false);
  // A sweep's results go to its database (--results) and the table or --format on stdout; no --out directory.
  cmd->remove_option(cmd->get_option("--out"));
  std::vector<std::string> names;
  std::string choices;
  for (const auto& st : report::studies()) {
    names.push_back(st.name);
    choices += (choices.empty() ? "" : " | ") + st.name;
  }
  // One study a sweep; several (diff's --study design,train) are refused with what gives their joint figure.
  const CLI::Validator one_study(
      [names](std::string& s) -> std::string {
        if (std::find(names.begin(), names.end(), s) != names.end()) return {};
        if (s.find(',') != std::string::npos)
          return s + ": a sweep runs one study; the train study also gives the fabric's network capex and its capex "
                     "per token/s (--columns AXES,tokens_per_second,cost.network_capex_usd,"
                     "cost.network_capex_usd_per_token_per_second)";
        const std::string near = scenario::closest(s, names);
        return fmt::format("{} not in {{{}}}{}", s, fmt::join(names, ","),
                           near.empty() ? "" : fmt::format("; did you mean {}?", near));
      },
      "STUDY");
  auto* study_opt = cmd->add_option("--study", o->study, choices)->check(one_study)->capture_default_str();
  cmd->add_option("--vary", o->vary,
                  "an axis: KEY=V1,V2,... or an integer range KEY=LO..HI, LO..HI+STEP, LO..HI*FACTOR (repeatable; "
                  "the grid is their cartesian product)")
      ->type_name("KEY=VALUES");
  cmd->add_option(
         "--sweep-file", o->sweep_file,
         "axes from a YAML file: vary: {KEY: [V1, V2] or \"LO..HI\"}, zip: [{KEY: [...], KEY2: [...]}] (zipped "
         "keys advance together), optional study: (docs/commands/sweep.md); --vary adds to them")
      ->type_name("FILE.yaml");
  cmd->add_option("--results", o->results,
                  "the SQLite database: created, or resumed when it holds the same sweep (only missing points run); "
                  "without a scenario, read back")
      ->capture_default_str();
  cmd->add_option("-j,--jobs", o->jobs,
                  "points run at once (threads); results do not depend on it. Under mpirun -n N, rank 0 keeps the "
                  "database and ranks 1..N-1 run one point at a time each")
      ->capture_default_str();
  cmd->add_option(
      "--columns", o->columns,
      "table columns, comma-separated: keys (cost.capex_usd) or the headers the table shows ('network capex "
      "(USD)'); default: the axes and the study's headline");
  cmd->add_flag("--timing", o->timing, "also show each point's wall_seconds (the only column that varies run to run)");
  cmd->add_option("--html", o->html,
                  "also write the results as a self-contained dashboard page (the study's headline figures against "
                  "the axes, and the table)")
      ->type_name("FILE.html");
  add_study_options(cmd, o->study_options);
  cmd->footer(
      "Every point runs the same study function as its command (podnet design, bench, train, reliability,\n"
      "diagnose, ...), on the scenario with --set, then KEY=VALUE per axis. The database's table `points`\n"
      "has one row per point: id, the axes, status, error, wall_seconds and every result field\n"
      "(docs/commands/sweep.md); query it with sqlite3.\n\n"
      "Examples:\n"
      "  podnet sweep leafspine-8k --study design --vary topology.oversubscription=1,2,3 --vary switch.radix=128,256\n"
      "  podnet sweep aipod-16k --study train --vary topology.oversubscription=1:1,2:1 --vary "
      "network.routing=ecmp,adaptive -j 2\n"
      "  podnet sweep leafspine-8k --study bench --gpus 0-63 --vary server.nic_speed=200Gbps,400Gbps --results b.db\n"
      "  podnet sweep leafspine-8k --vary topology.oversubscription=1,2,4 --columns topology.oversubscription,"
      "tokens_per_second,cost.network_capex_usd_per_token_per_second\n"
      "  mpirun -n 64 --hostfile hosts podnet sweep aipod-16k --study train --vary workload.dp=8..128*2 --results "
      "dp.db\n"
      "  podnet sweep aipod-16k --study diagnose --evaluate 20 --faults 3 --vary network.routing=ecmp,adaptive\n"
      "  podnet sweep --results b.db --format csv > b.csv");
  cmd->callback([&action, c, o, study_opt] {
    o->study_given = study_opt->count() > 0;
    action = [c, o] { return cmd_sweep(*c, *o); };
  });
}

}  // namespace podnet::cli
