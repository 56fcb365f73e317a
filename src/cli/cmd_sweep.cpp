// `podnet sweep SCENARIO --study S --vary KEY=V1,V2 ...`: one study at every
// point of the cartesian product of the --vary axes, on -j threads, each
// point stored in an SQLite database as it finishes (study/sweep.hpp);
// `podnet sweep --results DB` reads one back.
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <thread>
#include <unistd.h>

#include "cli/common.hpp"
#include "collective/gpu_list.hpp"
#include "core/error.hpp"
#include "report/bench_report.hpp"
#include "report/diagnose_report.hpp"
#include "report/html.hpp"
#include "report/reliability_report.hpp"
#include "report/sweep_report.hpp"
#include "report/train_report.hpp"
#include "report/web_assets.hpp"
#include "study/bench.hpp"
#include "study/diagnose.hpp"
#include "study/reliability.hpp"
#include "study/sweep.hpp"
#include "study/train.hpp"

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
  std::string html;  // the results as a dashboard page
  // bench's own options
  std::string op = "allreduce", algo = "auto", min_size = "1MiB", max_size = "1GiB", gpus;
  double factor = 4;
  // diagnose's own options
  int evaluate = 10, faults = 1;
  std::string fault_kind = "link", probe = "rail", duration = "300s";
  double rate = 1000, loss = 1e-3;
};

int read_back(const Common& c, const SweepOptions& o) {
  const study::ResultTable t = study::read_results(o.results, o.timing);
  if (!o.html.empty()) {
    // The document --format json prints, drawn by the dashboard (web/podnet.js, kind "sweep").
    nlohmann::json pts = nlohmann::json::array();
    for (const auto& r : t.rows) {
      nlohmann::json p = nlohmann::json::object();
      for (size_t i = 0; i < r.size(); ++i) p[t.columns[i]] = report::json_of(r[i]);
      pts.push_back(p);
    }
    const nlohmann::json doc = {{"study", t.study}, {"axes", t.axes}, {"points", pts}};
    write_out("--html", o.html, report::html_page({{"kind", "sweep"}, {"document", doc}}, "podnet sweep " + o.results));
    std::cerr << "podnet: wrote " << o.html << "\n";
  }
  if (c.format == "json") report::write_sweep_results_json(t, std::cout);
  else if (c.format == "csv") report::write_sweep_results_csv(t, std::cout);
  else report::write_sweep_results_table(t, split_list(o.columns), std::cout);
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
  if (!c.out_dir.empty()) throw InputError("--out: a sweep writes its results to --results DB");
  check_output_file("--results", o.results);
  study::SweepSpec spec;
  spec.study = o.study;
  if (!o.sweep_file.empty()) {
    study::SweepFile f = study::load_sweep_file(o.sweep_file);
    if (!f.study.empty()) {
      if (f.study != "design" && f.study != "bench" && f.study != "train" && f.study != "reliability" &&
          f.study != "diagnose")
        throw InputError(fmt::format("{}: study: {}: expected design, bench, train, reliability or diagnose",
                                     o.sweep_file, f.study));
      if (o.study_given && f.study != o.study)
        throw InputError(
            fmt::format("--study {} and {}'s study: {} disagree; give one of them", o.study, o.sweep_file, f.study));
      spec.study = f.study;
    }
    spec.axes = std::move(f.axes);
  }
  spec.scenario = c.scenario;
  spec.sets = c.sets;
  spec.fragments = c.adds;
  for (const auto& v : o.vary) spec.axes.push_back(study::parse_axis(v));
  // Errors about an axis's values name where it was given, not --set.
  std::map<std::string, std::string> axis_flags = c.set_flags;
  for (const auto& a : spec.axes) axis_flags[a.key] = a.label();
  const std::string study_name = spec.study;
  for (size_t i = 0; i < spec.axes.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (spec.axes[i].key == spec.axes[j].key)
        throw InputError(fmt::format("--vary {}: the key is varied twice", spec.axes[i].key));

  study::BenchRequest bench;
  if (study_name == "bench") {
    spec.study_args = {
        "op=" + o.op,    "algo=" + o.algo, "min=" + o.min_size, "max=" + o.max_size, fmt::format("factor={}", o.factor),
        "gpus=" + o.gpus};
    bench.op = collective::parse_op(o.op);
    bench.algo = o.algo;
    bench.sizes = bench_sizes(o.min_size, o.max_size, o.factor);
  }
  study::DiagnoseRequest diag;
  if (study_name == "diagnose") {
    spec.study_args = {fmt::format("evaluate={}", o.evaluate), fmt::format("faults={}", o.faults),
                       "fault-kind=" + o.fault_kind,           "probe=" + o.probe,
                       fmt::format("rate={}", o.rate),         "duration=" + o.duration,
                       fmt::format("loss={}", o.loss)};
    diag.evaluate = o.evaluate;
    diag.faults = o.faults;
    diag.fault_kind = o.fault_kind;
    diag.probe.mesh = o.probe;
    diag.probe.rate = o.rate;
    diag.loss = o.loss;
    diag.cbd = false;
    std::string expected;
    if (!parse_time(o.duration, diag.probe.duration, expected) || diag.probe.duration.ps <= 0)
      throw InputError(fmt::format("--duration '{}': expected a duration above 0{}", o.duration,
                                   expected.empty() ? "" : ", " + expected));
    if (o.evaluate < 1) throw InputError("--evaluate: a diagnose sweep scores at least 1 trial per point");
  }
  // Keys and values are checked on the first point before anything runs.
  const std::vector<study::SweepPoint> points = study::cartesian(spec.axes);
  apply_limits(c);
  // Each axis value (the first kCheckedValues of an axis) is checked on a point that holds it before anything
  // runs: a typo in a later value used to become a stored error row, which the stored definition then kept.
  constexpr size_t kCheckedValues = 1000;
  for (const auto& axis_sets : study::value_check_overrides(spec.axes, kCheckedValues)) {
    std::vector<std::string> sets = c.sets;
    sets.insert(sets.end(), axis_sets.begin(), axis_sets.end());
    (void)scenario::load(c.scenario, sets, c.adds, axis_flags);
  }

  const study::Evaluate evaluate = [&](const study::SweepPoint& p) {
    const std::vector<std::string> sets = spec.overrides(p);
    nlohmann::json doc;
    if (study_name == "design") {
      const scenario::Scenario sc = scenario::load(c.scenario, sets, c.adds, axis_flags);
      doc = design_document(sc, sc.build_topology(), "design");
    } else {
      scenario::Setup s = scenario::resolve(scenario::load(c.scenario, sets, c.adds, axis_flags));
      if (study::points_share_cores(o.jobs)) s.network.threads = 1;
      if (study_name == "bench") {
        study::BenchRequest r = bench;
        if (!o.gpus.empty()) r.group = collective::parse_gpu_list(o.gpus, static_cast<int32_t>(s.fabric.gpus.size()));
        if (r.algo != "auto" && !collective::find_algorithm(r.algo))
          throw InputError(fmt::format("--algo {}: not an algorithm (see `podnet list`)", r.algo));
        doc = report::bench_document(s, study::bench(s, r));
      } else if (study_name == "train") {
        doc = report::train_document(s, study::train(s, {}));
      } else if (study_name == "diagnose") {
        doc = report::diagnose_document(s, study::diagnose(s, diag));
      } else {
        doc = report::reliability_document(s, study::reliability(s));
      }
    }
    return study::Outcome{true, {}, report::sweep_fields(doc)};
  };
  study::SweepProgress progress;
  const bool tty = isatty(STDERR_FILENO) != 0;
  progress.point = [tty](int64_t done, int64_t total, int64_t failed, double elapsed) {
    if (!tty && elapsed < 2.0 && done < total) return;
    const double eta = done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(total - done) : 0;
    std::cerr << fmt::format("podnet sweep: [{}/{}] points done, {} failed ({:.1f} s elapsed, ETA {:.0f} s)\n", done,
                             total, failed, elapsed, eta);
  };
  const study::SweepStats st = study::run_sweep(spec, o.results, evaluate, o.jobs, progress);
  if (!st.reporter) return kExitOk;  // an MPI worker: rank 0 reports
  std::cerr << fmt::format("podnet sweep: {} point(s): {} already in {}, {} run now, {} with an error{}\n", st.points,
                           st.already, o.results, st.ran, st.failed,
                           st.ranks > 1
                               ? fmt::format(" ({} MPI ranks: 1 coordinator, {} workers)", st.ranks, st.ranks - 1)
                               : "");
  return read_back(c, o);
}

}  // namespace

void add_sweep_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto o = std::make_shared<SweepOptions>();
  auto* cmd = app.add_subcommand(
      "sweep", "run a study over a grid of scenario values on N threads, results in an SQLite database (resumable)");
  add_common(cmd, *c, false);
  auto* study_opt = cmd->add_option("--study", o->study, "design | bench | train | reliability | diagnose")
                        ->check(CLI::IsMember({"design", "bench", "train", "reliability", "diagnose"}))
                        ->capture_default_str();
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
  cmd->add_option("--columns", o->columns,
                  "table columns, comma-separated (default: the axes and the study's headline)");
  cmd->add_flag("--timing", o->timing, "also show each point's wall_seconds (the only column that varies run to run)");
  cmd->add_option("--html", o->html,
                  "also write the results as a self-contained dashboard page (the study's headline figures against "
                  "the axes, and the table)")
      ->type_name("FILE.html");
  cmd->add_option("--op", o->op, "bench: the collective")->capture_default_str();
  cmd->add_option("--algo", o->algo, "bench: auto or one algorithm")->capture_default_str();
  cmd->add_option("-b,--min", o->min_size, "bench: smallest size")->capture_default_str();
  cmd->add_option("-e,--max", o->max_size, "bench: largest size")->capture_default_str();
  cmd->add_option("-F,--factor", o->factor, "bench: size factor")->capture_default_str();
  cmd->add_option("-g,--gpus", o->gpus, "bench: GPU ranks (default all)");
  cmd->add_option("--evaluate", o->evaluate, "diagnose: seeded trials per point")->capture_default_str();
  cmd->add_option("--faults", o->faults, "diagnose: hidden faults per trial")->capture_default_str();
  cmd->add_option("--fault-kind", o->fault_kind, "diagnose: link, switch or mixed")->capture_default_str();
  cmd->add_option("--loss", o->loss, "diagnose: drop probability of a hidden fault")->capture_default_str();
  cmd->add_option("--probe", o->probe, "diagnose: full-mesh, rail or leaf-mesh")->capture_default_str();
  cmd->add_option("--rate", o->rate, "diagnose: probes per second per NIC")->capture_default_str();
  cmd->add_option("--duration", o->duration, "diagnose: simulated probing time")->capture_default_str();
  cmd->footer(
      "Every point runs the same study function as its command (podnet design, bench, train, reliability or\n"
      "diagnose --evaluate), on the scenario with --set, then KEY=VALUE per axis. The database's table `points` has "
      "one row per point: id,\n"
      "the axes, status, error, wall_seconds and every result field (docs/commands/sweep.md); query it with "
      "sqlite3.\n\n"
      "Examples:\n"
      "  podnet sweep leafspine-8k --study design --vary topology.oversubscription=1,2,3 --vary switch.radix=128,256\n"
      "  podnet sweep aipod-16k --study train --vary workload.tp=4,8 --vary network.routing=ecmp,adaptive -j 2\n"
      "  podnet sweep leafspine-8k --study bench --gpus 0-63 --vary server.nic_speed=200Gbps,400Gbps --results b.db\n"
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
