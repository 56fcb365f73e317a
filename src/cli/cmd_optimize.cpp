// `podnet optimize [SCENARIO] --gpus N [--workload MODEL]`: the Pareto front of
// network capex, power and iteration time over a design space (families,
// tiers, oversubscription per tier, radix, NIC speed, rails, cabling), built
// on two sweeps (study/optimize.hpp): designs first, pruned on design
// metrics, then training time for the candidates only. Each front point's
// scenario is written as a design file.
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <unistd.h>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "report/optimize_report.hpp"
#include "report/studies.hpp"
#include "report/sweep_report.hpp"
#include "scenario/scenario.hpp"
#include "study/optimize.hpp"
#include "study/sweep.hpp"
#include "study/train.hpp"
#include "workload/job.hpp"
#include "workload/model.hpp"

namespace podnet::cli {

namespace {

// The file's contents, or nothing when it cannot be read.
std::optional<std::string> read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Writes `text` to `path` unless it holds it already: whole under another name, then renamed, since under
// mpirun every rank writes it and a rank reading it (the sweeps hash it) must never see another's half-written
// file.
void write_whole(const std::string& option, const std::string& path, const std::string& text) {
  if (read_text(path) == text) return;
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  write_out(option, tmp, text);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw InputError(fmt::format("{} {}: cannot write it: {}", option, path, ec.message()));
}

struct OptimizeOptions {
  int64_t gpus = 0;
  std::string workload;
  std::string dir = "optimize";
  std::string stage = "all";
  std::string reference;
  std::string objective = "iteration";
  int jobs = 1;
  std::string families = "rail_clos,fat_tree", tiers = "2,3", over = "1:1,2:1", spine_over = "1:1,2:1",
              radix = "64,128", speeds = "400Gbps,800Gbps", nics = "4,8", aoc = "0m,30m";
};

std::vector<int> ints(const std::string& text, const char* option) {
  std::vector<int> out;
  for (const auto& s : split_list(text)) {
    int64_t v = 0;
    if (!parse_int(s, v) || v < 1 || v > 100000)
      throw InputError(fmt::format("{} {}: '{}' is not a positive integer", option, text, s));
    out.push_back(static_cast<int>(v));
  }
  return out;
}

// A point of the registry's study `name` (report/studies.hpp) on `base` with `sets`: its result fields, as
// `podnet sweep --study NAME` stores them. jobs: the sweep's -j (study::points_share_cores).
study::Outcome study_point(const std::string& name, const std::string& base, const std::vector<std::string>& sets,
                           const std::map<std::string, std::string>& params = {}, int jobs = 1) {
  const report::StudyDef& st = report::study_named(name, "optimize:");
  const report::StudyArgs args =
      report::study_args(st, params, [](const report::StudyParam& p) { return p.spec.name; });
  const report::StudyOutput out = report::run_study(st, scenario::load(base, sets), args, {}, [&](scenario::Setup& s) {
    if (study::points_share_cores(jobs)) s.network.flow.threads = 1;
  });
  return {true, {}, report::sweep_fields(out.document)};
}
study::Outcome design_point(const std::string& base, const std::vector<std::string>& sets) {
  return study_point("design", base, sets);
}
study::Outcome train_point(const std::string& base, const std::vector<std::string>& sets, int jobs = 1) {
  return study_point("train", base, sets, {{"failures", "false"}}, jobs);
}

// The objectives --objective may choose: the train study's fields declared as one (report/studies.hpp).
std::vector<std::pair<std::string, std::string>> objectives() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : report::study_named("train", "optimize:").fields)
    if (!f.objective.empty()) out.push_back({f.objective, f.key});
  return out;
}

double field(const std::vector<study::Field>& fs, const char* name) {
  for (const auto& f : fs) {
    if (f.name != name) continue;
    if (const auto* i = std::get_if<int64_t>(&f.value)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&f.value)) return *d;
  }
  throw Error(fmt::format("optimize: the reference's result has no {}", name));
}

int cmd_optimize(Common& c, const OptimizeOptions& o) {
  if (c.scenario.empty()) c.scenario = kDefaultScenario;
  if (o.gpus <= 0) throw InputError("--gpus: expected the fabric's GPU count (above 0)");
  check_output_dir("--out", c.out_dir);
  check_output_dir("--dir", o.dir);
  if (!o.workload.empty() && !workload::find_model(o.workload)) {  // before base.yaml is written, naming the option
    const std::vector<std::string> names = workload::model_names();
    const std::string near = scenario::closest(o.workload, names);
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw InputError(fmt::format("--workload {}: not a model preset{}; expected one of {}", o.workload,
                                 near.empty() ? "" : "; did you mean '" + near + "'?", list));
  }
  // --workload is the scenario's workload.model, set before the scenario resolves, so the model's recipe fills
  // the keys the scenario leaves out (tp, pp, cp, recompute...) as `podnet train --set workload.model=` does.
  Common src = c;
  if (!o.workload.empty()) {
    // The model's own recipe (tp, pp, interleave...): the scenario's layout was written for its own model (aipod-16k's
    // PP16 x v8 cannot hold llama3-70b's 80 layers).
    set_by(src, "--workload", "workload.model", o.workload);
    set_by(src, "--workload", "workload.recipe", "preset");
  }
  const scenario::Scenario source = load_scenario(src);
  study::OptimizeSpace space;
  space.gpus = o.gpus;
  space.families = split_list(o.families);
  space.tiers = ints(o.tiers, "--tiers");
  space.oversubscription = split_list(o.over);
  space.spine_oversubscription = split_list(o.spine_over);
  space.radix = ints(o.radix, "--radix");
  space.speeds = split_list(o.speeds);
  space.nics = ints(o.nics, "--nics");
  space.aoc = split_list(o.aoc);

  if (!o.reference.empty()) {
    // A reference of another size is not comparable: its capex and power count another number of GPUs' fabric.
    const scenario::Scenario sc = scenario::load(o.reference, c.sets);
    const int64_t ref_gpus = static_cast<int64_t>(sc.build_topology().gpus.size());
    if (ref_gpus != o.gpus)
      throw InputError(fmt::format(
          "--reference {}: it has {} GPUs, the designs {} (--gpus): compare fabrics of one size (--gpus {}, or a "
          "reference with --set topology.gpus={})",
          o.reference, thousands(ref_gpus), thousands(o.gpus), ref_gpus, o.gpus));
  }
  std::error_code ec;
  std::filesystem::create_directories(o.dir, ec);
  if (ec) throw InputError("--dir " + o.dir + ": cannot create the directory: " + ec.message());
  const std::filesystem::path dir(o.dir);
  const std::string base = (dir / "base.yaml").string();
  const std::string base_text = study::optimize_base(source.resolved_yaml(), o.gpus, o.workload);
  {
    const std::string& text = base_text;
    // A working directory with results keeps the base they were made from: another base is refused here,
    // before it is overwritten (the sweeps would refuse it too, their definition recording base.yaml's hash).
    const std::optional<std::string> old_text = read_text(base);
    if (old_text && *old_text != text && std::filesystem::exists(dir / "design.db"))
      throw InputError(fmt::format(
          "--dir {}: holds the results of another optimize run (its base.yaml differs from this run's scenario, "
          "--gpus, --workload or --set); use another --dir, or remove this one to start again",
          o.dir));
    write_whole("--dir", base, text);
  }
  study::OptimizeRequest req;
  req.base = base;
  req.axes = study::optimize_axes(space);
  req.design_db = (dir / "design.db").string();
  req.train_db = (dir / "train.db").string();
  req.jobs = o.jobs;
  req.stage = o.stage;
  for (const auto& [name, column] : objectives())
    if (name == o.objective) req.objective = column;
  // Every value of every axis is checked before anything runs (a typo in a later one used to fail mid-run),
  // and an error names the optimize option that gave it (--speeds ...), not --set.
  std::map<std::string, std::string> flags;
  for (const auto& a : req.axes) flags[a.key] = a.label();
  constexpr size_t kCheckedValues = 1000;
  for (const auto& sets : study::value_check_overrides(req.axes, kCheckedValues))
    (void)scenario::load(base, sets, {}, flags);
  // The job every point times (base.yaml's workload: dp and global batch filling --gpus, --workload). Its memory
  // depends on the job alone (its model, layout and GPUs), not on the fabric: one that does not fit would fail at
  // every design point, after the whole design sweep. Said now, with what to change.
  const workload::Job job = workload::job_from(scenario::load(base).section("workload"), o.gpus);
  try {
    workload::check_memory(job, false);
  } catch (const ParamError& e) {
    throw InputError(fmt::format(
        "--gpus {}, whatever the fabric: {}; or give it more GPUs (--gpus), or a smaller model (--workload, e.g. "
        "llama3-70b or llama3-8b)",
        thousands(o.gpus), e.what()));
  }

  study::SweepProgress progress;
  const bool tty = isatty(STDERR_FILENO) != 0;
  progress.point = [tty](int64_t done, int64_t total, int64_t failed, double elapsed) {
    if (!tty && elapsed < 2.0 && done < total) return;
    std::cerr << fmt::format("podnet optimize: point {}/{} done, {} failed ({})\n", done, total, failed,
                             report::elapsed_and_eta(done, total, elapsed));
  };
  const study::OptimizeResult r = study::optimize(
      req,
      [&](const study::SweepPoint& p) {
        return design_point(base, study::SweepSpec{"", "", {}, {}, {}, req.axes}.overrides(p));
      },
      [&](const study::SweepPoint& p) {
        // The train sweep's axes are the candidates' zipped values, keyed like the design axes.
        std::vector<std::string> sets;
        for (size_t a = 0; a < req.axes.size(); ++a) sets.push_back(req.axes[a].key + "=" + p.values[a]);
        return train_point(base, sets, req.jobs);
      },
      progress);
  if (!r.design_stats.reporter || !r.train_stats.reporter) return kExitOk;  // an MPI worker

  std::vector<std::string> files;
  for (size_t f : r.front) {
    const auto& p = r.candidates[f];
    std::vector<std::string> sets = study::point_overrides(r, p);
    sets.push_back(fmt::format("name=optimize-{}", p.id));
    const std::string path = (dir / fmt::format("design-{:04d}.yaml", p.id)).string();
    // Its own description: the base scenario's describes another fabric.
    scenario::Scenario point = scenario::load(base, sets);
    point.description =
        fmt::format("podnet optimize front point #{} for {} GPUs: {}", p.id, thousands(o.gpus), p.label);
    write_out("--dir", path,
              fmt::format("# podnet optimize: front point #{}: {}\n{}", p.id, p.label, point.resolved_yaml()));
    files.push_back(path);
  }
  std::optional<study::OptimizeReference> ref;
  if (!o.reference.empty()) {
    ref.emplace();
    ref->name = o.reference;
    // Its fabric as it is, its job the points' (base.yaml's workload: dp and global batch filling --gpus,
    // --workload).
    const std::string ref_file = (dir / "reference.yaml").string();
    write_whole("--dir", ref_file,
                study::optimize_reference(scenario::load(o.reference, c.sets).resolved_yaml(), base_text));
    // Priced as the points are: their cost: section (in reference.yaml) and, for each combination of the
    // cost: axes' values, once more; each point is compared with the reference priced by its own values.
    for (const auto& sets : study::cost_axis_overrides(req.axes)) {
      const auto design = design_point(ref_file, sets).fields;
      ref->pricings.push_back({sets, field(design, study::kCapexColumn), field(design, study::kPowerColumn)});
    }
    ref->capex_usd = ref->pricings.front().capex_usd;
    ref->power_kw = ref->pricings.front().power_kw;
    if (o.stage != "design") {
      const auto train = train_point(ref_file, {}).fields;
      ref->iteration_ms = field(train, study::kTimeColumn);
      ref->days = field(train, study::kDaysColumn);
      ref->objective = field(train, req.objective.c_str());
      ref->timed = true;
    }
    study::compare_reference(r, *ref);
  }
  nlohmann::json doc = report::new_document(context_of(source, "optimize"));
  std::string job_text = fmt::format("{} on {} x {}: TP{} x CP{} x PP{} x DP{}, global batch {} x seq {}",
                                     job.model.name, thousands(job.gpus()), job.gpu.name, job.tp, job.cp, job.pp,
                                     job.dp, thousands(job.global_batch), thousands(job.model.seq));
  // A batch scaled with DP (weak scaling: --gpus keeps the batch per replica) is not the scenario's: said, as
  // `podnet train` at another topology.gpus keeps the scenario's global batch.
  if (const Params& w = source.section("workload");
      w.has("global_batch") && w.get_int("global_batch") != job.global_batch)
    job_text += fmt::format(" (the scenario's {} scaled with DP: the batch per replica is kept)",
                            thousands(w.get_int("global_batch")));
  // Which engine timed the points: the analytical one leaves out links shared between operations running at once.
  job_text += fmt::format(", timed on the {} engine", source.section("network").get_string("engine"));
  report::add_optimize(doc, o.gpus, job_text, r, files, ref);
  emit(c, source, doc, "optimize", report::write_optimize_table);
  // Timing was asked for and nothing could be timed (a job that fits no design: the reasons are in the output):
  // there is no front, and a script must see it.
  if (o.stage == "all" && !r.candidates.empty() &&
      std::none_of(r.candidates.begin(), r.candidates.end(), [](const study::OptimizePoint& p) { return p.timed; })) {
    std::cerr << fmt::format(
        "podnet: error: no design kept ({}) could be timed (the reasons are above), so there is no front\n",
        r.candidates.size());
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace

void add_optimize_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto o = std::make_shared<OptimizeOptions>();
  auto* cmd = app.add_subcommand(
      "optimize",
      "search fabric designs for N GPUs: the Pareto front of network capex, power and iteration time, with the "
      "design file of each point");
  add_common(cmd, *c, false);
  cmd->add_option("--gpus", o->gpus, "GPUs of the fabric to design")->required();
  cmd->add_option("--workload", o->workload,
                  "the model to train (workload.model; default the scenario's); dp follows --gpus");
  cmd->add_option("--dir", o->dir,
                  "working directory: base.yaml, design.db and train.db (the two sweeps: resumable), "
                  "design-NNNN.yaml per front point")
      ->capture_default_str();
  cmd->add_option("--reference", o->reference,
                  "a scenario to compare with the front (e.g. aipod-16k): contained, dominated (and by how much), "
                  "or not dominated");
  cmd->add_option("-j,--jobs", o->jobs, "points run at once (threads)")->capture_default_str();
  cmd->add_option("--objective", o->objective,
                  "the third objective beside capex and power: iteration (time), days (to train, failure-free) or "
                  "days_with_failures (with the interruptions the fabric's parts cause: docs/commands/reliability.md)")
      ->check(CLI::IsMember([] {
        std::vector<std::string> names;
        for (const auto& [name, column] : objectives()) names.push_back(name);
        return names;
      }()))
      ->capture_default_str();
  cmd->add_option("--stage", o->stage,
                  "all, or under mpirun one sweep per run: design, then train (then without mpirun to print)")
      ->check(CLI::IsMember({"all", "design", "train"}))
      ->capture_default_str();
  cmd->add_option("--families", o->families, "topology families searched: rail_clos, fat_tree or both")
      ->capture_default_str();
  cmd->add_option("--tiers", o->tiers, "switch tiers searched")->capture_default_str();
  cmd->add_option("--oversubscription", o->over, "leaf oversubscription ratios searched")->capture_default_str();
  cmd->add_option("--spine-oversubscription", o->spine_over, "spine ratios searched (3 and 4 tiers)")
      ->capture_default_str();
  cmd->add_option("--radix", o->radix, "switch radixes searched")->capture_default_str();
  cmd->add_option("--speeds", o->speeds, "NIC = switch port speeds searched")->capture_default_str();
  cmd->add_option("--nics", o->nics, "NICs (rails) per server searched")->capture_default_str();
  cmd->add_option("--aoc", o->aoc, "cost.aoc_max_length values searched (0m: transceivers and fibre only)")
      ->capture_default_str();
  cmd->footer(
      "Designs are swept first (podnet sweep --study design), pruned to those no other design with the same NICs\n"
      "(count and speed) beats on capex, power, bisection, injection bandwidth per GPU and diameter at once, then\n"
      "trained (--study train); the front is on capex, power and iteration time "
      "(docs/commands/optimize.md).\n\nExamples:\n"
      "  podnet optimize --gpus 16384 --reference aipod-16k -j 2\n"
      "  podnet optimize leafspine-8k --gpus 1024 --workload llama3-70b --families fat_tree --dir opt-1k\n"
      "  mpirun -n 8 podnet optimize --gpus 16384 --stage design && mpirun -n 8 podnet optimize --gpus 16384 "
      "--stage train");
  cmd->callback([&action, c, o] { action = [c, o] { return cmd_optimize(*c, *o); }; });
}

}  // namespace podnet::cli
