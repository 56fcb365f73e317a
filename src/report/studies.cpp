#include "report/studies.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "collective/gpu_list.hpp"
#include "core/error.hpp"
#include "engine/packet/packet_options.hpp"
#include "engine/registry.hpp"
#include "report/bench_report.hpp"
#include "report/design_report.hpp"
#include "report/diagnose_report.hpp"
#include "report/html.hpp"
#include "report/inference_report.hpp"
#include "report/jobs_report.hpp"
#include "report/reliability_report.hpp"
#include "report/report.hpp"
#include "report/train_report.hpp"
#include "report/upgrade_report.hpp"
#include "study/bench.hpp"
#include "study/diagnose.hpp"
#include "study/inference.hpp"
#include "study/jobs.hpp"
#include "study/reliability.hpp"
#include "study/train.hpp"
#include "topology/bom.hpp"
#include "topology/frontend.hpp"
#include "workload/model.hpp"

namespace podnet::report {

namespace {

StudyParam param(std::string name, ParamType type, std::string def, std::string help, std::string flags = {},
                 unsigned fronts = kCli | kServe) {
  StudyParam p;
  p.spec.name = std::move(name);
  p.spec.type = type;
  p.spec.default_text = std::move(def);
  p.spec.help = std::move(help);
  p.spec.optional = p.spec.default_text.empty();
  p.flags = std::move(flags);
  p.fronts = fronts;
  return p;
}

StudyParam choice(std::string name, std::string def, std::vector<std::string> choices, std::string help,
                  unsigned fronts = kCli | kServe) {
  StudyParam p = param(std::move(name), ParamType::String, std::move(def), std::move(help), {}, fronts);
  p.spec.choices = std::move(choices);
  return p;
}

StudyParam at_least(StudyParam p, double min) {
  p.spec.min = min;
  return p;
}

// ---- the studies' requests, from their parameters -------------------------------------------------------------

bool compare_given(const StudyArgs& a) {
  return a.values.has("compare_cc") && !a.values.get_string("compare_cc").empty();
}

// The bench's collective; a misspelt one named with its field and the nearest op, as `podnet bench --op` does.
collective::Op op_of(const StudyArgs& a) {
  const std::string& name = a.values.get_string("op");
  try {
    return collective::parse_op(name);
  } catch (const InputError&) {
    throw InputError(fmt::format("{}: '{}' is not a collective{}", a.label("op"), name, op_hint(name)));
  }
}

void prepare_bench(StudyArgs& a) {
  const study::AlgoChoice c = study::algo_choice(a.values.get_string("algo"), a.label("algo"));
  if (!c.scenario_algorithms.empty()) {
    a.sets.push_back("collective.algorithms=" + c.scenario_algorithms);
    a.set_by["collective.algorithms"] = a.label("algo");
  }
  (void)op_of(a);
  // The sizes: checked now, before a scenario is loaded.
  (void)study::size_series(parse_size(a.values.get_string("min"), a.label("min")),
                           parse_size(a.values.get_string("max"), a.label("max")), a.values.get_real("factor"));
  if (compare_given(a)) {  // the transports, and the engine they need
    (void)study::transport_choices(a.values.get_string("compare_cc"), a.label("compare_cc"),
                                   [](const std::string&) { return false; });
    const std::string engine = a.values.has("engine") ? a.values.get_string("engine") : "";
    if (!engine.empty() && !engine::engine_info(engine).traits.packet_faults)
      throw InputError(fmt::format("{} {}: {} runs the {} engine (the transports are packet-level)", a.label("engine"),
                                   engine, a.label("compare_cc"),
                                   engine::engine_names_with(&engine::EngineTraits::packet_faults)));
  }
}

study::BenchRequest bench_request(const StudyArgs& a, const scenario::Setup& s);

// The bench study with compare_cc: the same traffic once per transport, on the packet engine, each from the
// resolved scenario with the transport's keys over the user's; the engines' hooks (progress, cancel) are the
// run's. The document is report::compare_document's.
nlohmann::json bench_compare(const StudyRun& r) {
  const scenario::Scenario& base = *r.scenario;
  const auto user_gave = [&](const std::string& key) {
    return std::any_of(base.overrides.begin(), base.overrides.end(),
                       [&](const std::string& s) { return s.rfind(key + "=", 0) == 0; });
  };
  const std::vector<study::TransportChoice> choices =
      study::transport_choices(r.args->values.get_string("compare_cc"), r.args->label("compare_cc"), user_gave);
  const std::string yaml = base.resolved_yaml();
  const std::string packet = engine::engine_names_with(&engine::EngineTraits::packet_faults);
  std::vector<TransportRun> runs;
  std::optional<scenario::Setup> first;
  for (const study::TransportChoice& choice : choices) {
    TransportRun t;
    t.name = choice.name;
    std::vector<std::string> sets = base.overrides;
    sets.push_back("network.engine=" + packet);
    for (const auto& [key, value] : choice.sets) {
      sets.push_back(key + "=" + value);
      t.sets.push_back(key + "=" + value);
    }
    scenario::Setup s = scenario::resolve(scenario::load_text(yaml, base.source, base.name, sets));
    if (r.setup) s.network.observers = r.setup->network.observers;
    const study::BenchRequest req = bench_request(*r.args, s);
    describe_transport(t, s);
    for (size_t k = 0; k < req.sizes.size(); ++k) {
      study::BenchRequest one = req;
      one.sizes = {req.sizes[k]};
      // The run's progress counts every transport's sizes, each named with its transport.
      const size_t before = runs.size() * req.sizes.size() + k, all = choices.size() * req.sizes.size();
      study::Progress progress = r.progress;
      if (r.progress.step)
        progress.step = [&](size_t done, size_t, const std::string& what) {
          r.progress.step(before + done, all, choice.name + ": " + what);
        };
      if (r.progress.run) progress.run = [&](const std::string& what) { r.progress.run(choice.name + ": " + what); };
      t.sizes.push_back(study::bench(s, one, progress));
    }
    if (!first) first.emplace(std::move(s));
    runs.push_back(std::move(t));
  }
  return compare_document(*first, runs);
}

study::BenchRequest bench_request(const StudyArgs& a, const scenario::Setup& s) {
  study::BenchRequest r;
  r.op = op_of(a);
  r.algo = study::algo_choice(a.values.get_string("algo"), a.label("algo")).algo;
  r.sizes = study::size_series(parse_size(a.values.get_string("min"), a.label("min")),
                               parse_size(a.values.get_string("max"), a.label("max")), a.values.get_real("factor"));
  const bool given = a.given.count("gpus") != 0;
  const std::string gpus = a.values.has("gpus") ? a.values.get_string("gpus") : "";
  if (given && gpus.find_first_not_of(" \t") == std::string::npos)
    throw InputError(a.label("gpus") +
                     ": expected GPU ranks such as 0-7, 0-4095:8 or 0,8,16 (leave it out for every GPU)");
  if (!gpus.empty()) {
    try {
      r.group = collective::parse_gpu_list(gpus, static_cast<int32_t>(s.fabric.gpus.size()));
    } catch (const InputError& e) {
      throw InputError(a.label("gpus") + ": " + e.what());
    }
    if (r.group.size() < 2)
      throw InputError(fmt::format("{}: '{}' is one GPU; a collective needs at least 2", a.label("gpus"), gpus));
  }
  return r;
}

study::DiagnoseRequest diagnose_request(const StudyArgs& a) {
  study::DiagnoseRequest r;
  r.probe.mesh = a.values.get_string("probe");
  r.probe.duration = a.values.get_time("duration");
  r.probe.round = a.values.get_time("round");
  r.probe.rate = a.values.get_real("rate");
  r.evaluate = static_cast<int>(a.values.get_int("evaluate"));
  r.faults = static_cast<int>(a.values.get_int("faults"));
  r.fault_kind = a.values.get_string("fault_kind");
  r.loss = a.values.get_real("loss");
  r.cbd = a.values.get_bool("deadlock_check");
  return r;
}

// ---- the registry ----------------------------------------------------------------------------------------------

ResultField field(std::string key, std::string label, std::string unit, int decimals, bool headline = false,
                  double scale = 1, std::string objective = {}) {
  return {std::move(key), std::move(label), std::move(unit), scale, decimals, headline, std::move(objective)};
}
ResultField percent(std::string key, std::string label, bool headline = false) {
  return field(std::move(key), std::move(label), "%", 1, headline, 100);
}
// Goodput with two decimals, as `podnet train` and `podnet reliability` print it (93.70 %).
ResultField goodput(std::string key, std::string label, bool headline = false) {
  ResultField f = percent(std::move(key), std::move(label), headline);
  f.decimals = 2;
  return f;
}
// A field some documents of the study lack (another mode, a run without a target).
ResultField optional(ResultField f) {
  f.optional = true;
  return f;
}
// Fields some documents of a study hold (a block of the result present only in one mode), appended.
void add_optional(StudyDef& d, std::initializer_list<ResultField> fields) {
  for (ResultField f : fields) d.fields.push_back(optional(std::move(f)));
}
// The packet engine's counters (report/bench_report.cpp, packet_counters_json), as bench and train hold them: the
// first four headline figures where `headline`, then `count` (what the counters add up over: sizes, engine runs).
void add_packet_counters(StudyDef& d, bool headline, ResultField count) {
  add_optional(d, {field("packet_counters.drops", "drops", "", 0, headline),
                   field("packet_counters.trimmed", "trimmed", "", 0, headline),
                   field("packet_counters.ecn_marks", "ECN marks", "", 0, headline),
                   field("packet_counters.pause_frames", "PAUSE frames", "", 0, headline),
                   field("packet_counters.paused_max_us", "most paused port", "us", 2),
                   field("packet_counters.retransmissions", "retransmissions", "", 0),
                   field("packet_counters.timeouts", "timeouts", "", 0),
                   field("packet_counters.lost_packets", "lost, never resent", "", 0),
                   field("packet_counters.goodput_gbit_per_s", "total goodput", "Gbps", 1),
                   field("packet_counters.fairness", "fairness (Jain)", "", 3), std::move(count)});
}
// A true/false result (yes or no in every table).
ResultField yes_no(std::string key, std::string label) {
  ResultField f = field(std::move(key), std::move(label), "", 0);
  f.yes_no = true;
  return f;
}
ResultField nullable(ResultField f, std::string when) {
  f.null_when = std::move(when);
  return f;
}

constexpr const char* kNoSecondToken = "no request has a second output token";
constexpr const char* kNoRateMet = "no rate tried met the target";

std::vector<StudyDef> builtin() {
  std::vector<StudyDef> out;
  {
    StudyDef d;
    d.name = "design";
    d.description = "the fabric's bill of materials, cost, power, bisection, diameter and limits";
    d.needs_setup = false;
    d.gpus_field = "bom.gpus";
    d.fields = {field("bom.gpus", "GPUs", "", 0), field("bom.switches.total", "switches", "", 0, true),
                field("bom.transceivers", "transceivers", "", 0, true),
                field("bom.power_kw", "IT power, servers included", "kW", 1, true),
                field("cost.capex_usd", "network capex", "USD", 0, true),
                field("cost.capex_per_gpu_usd", "network capex per GPU", "USD", 0),
                // part-filled pods: capex of the switches and uplinks their missing groups would use
                optional(field("cost.spare_usd", "of which spare in part-filled pods", "USD", 0)),
                field("cost.energy_usd_per_year", "energy per year", "USD", 0, true),
                field("bisection_bandwidth_gbps", "bisection bandwidth", "Gbps", 0, true),
                field("injection_bandwidth_per_gpu_gbps", "injection bandwidth per GPU", "Gbps", 0),
                // half the NICs' bandwidth over the bisection (a NIC-less torus has none)
                optional(field("bisection_oversubscription", "oversubscription, whole fabric", ":1", kRatioDecimals)),
                field("diameter_hops", "diameter", "hops", 0),
                field("limits.max_gpus", "largest GPU count this design reaches", "", 0, true),
                // with a frontend network (frontend.nics)
                optional(field("frontend.switches.total", "frontend switches", "", 0)),
                optional(field("frontend.cost.capex_usd", "frontend capex", "USD", 0)),
                optional(field("capex_with_frontend_usd", "capex with the frontend", "USD", 0))};
    d.run = [](const StudyRun& r) {
      const topology::Topology t = r.scenario->build_topology();
      r.scenario->check_failures(t);  // as `podnet design` does
      StudyOutput o;
      o.document = design_document(*r.scenario, t, "design");
      if (r.page) o.extras["drawing"] = fabric_drawing(t);
      return o;
    };
    out.push_back(std::move(d));
  }
  {
    StudyDef d;
    d.name = "bench";
    d.description = "nccl-tests for the fabric: one collective's time, algbw and busbw per size";
    d.params = {
        param("op", ParamType::String, "allreduce",
              "the collective: allreduce, allgather, reducescatter, alltoall, broadcast, reduce, sendrecv, "
              "permutation or incast"),
        param("algo", ParamType::String, "auto",
              "auto, one algorithm (one of NCCL's also sets collective.algorithms), or a list for the tuner "
              "(ring,tree or ^nvls: collective.algorithms)"),
        param("min", ParamType::String, "8B", "smallest size (as nccl-tests: K/M/G are powers of 1024)", "-b,--min"),
        param("max", ParamType::String, "1GiB", "largest size", "-e,--max"),
        at_least(param("factor", ParamType::Real, "2", "size multiplication factor between rows", "-F,--factor"), 1),
        param("gpus", ParamType::String, "", "GPU ranks: 0-511, 0-4095:8, 0,8,16 (default all)", "-g,--gpus"),
        param("engine", ParamType::String, "", "analytical | flow | packet (sets network.engine)", {}, kServe),
        param("routing", ParamType::String, "", "routing policy (sets network.routing)", {}, kServe),
        param("compare_cc", ParamType::String, "",
              "transports side by side on the packet engine: congestion controls or deployment presets, "
              "comma-separated (dcqcn_nic,nscc or roce_dcqcn,uec; podnet bench --compare-cc)",
              {}, kServe)};
    d.params[6].sets_key = "network.engine";
    d.params[7].sets_key = "network.routing";
    d.gpus_field = "bench.gpus";
    d.fields = {field("bench.gpus", "GPUs", "", 0),
                field("time_us@", "time", "us", 2, true),
                field("busbw_gbyte_per_s@", "bus bandwidth", "GB/s", 2, true),
                field("algbw_gbyte_per_s@", "algorithm bandwidth", "GB/s", 2),
                optional(field("fct.min_us@", "FCT min", "us", 2)),
                optional(field("fct.p50_us@", "FCT p50", "us", 2)),
                optional(field("fct.p99_us@", "FCT p99", "us", 2, true)),
                optional(field("fct.max_us@", "FCT max", "us", 2)),
                optional(field("fct.mean_us@", "FCT mean", "us", 2))};
    // The packet engine's counters over every size's run.
    add_packet_counters(d, true, field("packet_counters.sizes", "sizes counted", "", 0));
    d.prepare = prepare_bench;
    d.check = [](const StudyArgs& a, const scenario::Setup& s) {
      (void)bench_request(a, s);
      if (!compare_given(a)) return;
      // A comparison sets these per transport: the same keys given for all of them would be ignored.
      for (const char* key : {"network.cc", "network.preset"})
        if (s.scenario.from_set.count(key))
          throw InputError(fmt::format("{} sets {} for each transport; leave it out of the overrides (or name the "
                                       "transport in the list)",
                                       a.label("compare_cc"), key));
      if (!engine::engine_info(s.engine).traits.packet_faults && s.scenario.from_set.count("network.engine"))
        throw InputError(fmt::format("{} runs the {} engine; network.engine={} cannot apply", a.label("compare_cc"),
                                     engine::engine_names_with(&engine::EngineTraits::packet_faults), s.engine));
    };
    d.run = [](const StudyRun& r) {
      StudyOutput o;
      if (compare_given(*r.args)) o.document = bench_compare(r);
      else o.document = bench_document(*r.setup, study::bench(*r.setup, bench_request(*r.args, *r.setup), r.progress));
      return o;
    };
    out.push_back(std::move(d));
  }
  {
    StudyDef d;
    d.name = "train";
    d.description = "one training iteration of the scenario's workload: time, breakdown, MFU, days to train";
    d.params = {param("allow_oom", ParamType::Bool, "false", "time the job even when it does not fit in memory"),
                param("failures", ParamType::Bool, "true",
                      "also run the iteration with the scenario's failures (when it has some)"),
                param("sweep", ParamType::Bool, "false", "the scaling-efficiency sweep (DP and NIC caps)", {}, kServe),
                param("trace", ParamType::Bool, "false", "keep a Chrome/Perfetto trace of the iteration", {}, kServe)};
    d.gpus_field = "parallelism.gpus";
    // `podnet train` runs a scenario of several jobs as the jobs study; this study times one job.
    d.check = [](const StudyArgs&, const scenario::Setup& s) {
      if (!s.scenario.jobs.empty())
        throw InputError(s.scenario.where("jobs") +
                         ": this scenario runs several jobs on one fabric: open it on the jobs page, which times them "
                         "together (the train page times one job: a scenario without `jobs:`)");
    };
    // Labelled as `podnet train`'s table labels them.
    d.fields = {field("parallelism.gpus", "GPUs", "", 0),
                field("iteration_time_ms", "iteration time", "ms", 2, true, 1, "iteration"),
                percent("mfu", "MFU (model FLOPs)", true),
                percent("hfu", "HFU (with recompute)"),
                field("tokens_per_second", "tokens/s", "", 0, true),
                field("days_to_train", "days to train, failure-free", "days", 1, true, 1, "days"),
                field("reliability.days_to_train_with_failures", "days to train with random failures", "days", 1, false,
                      1, "days_with_failures"),
                field("tflops_per_gpu", "TFLOP/s per GPU (hardware)", "", 1)};
    // The interruptions behind days to train with random failures, labelled as the reliability study labels them.
    add_optional(d, {field("reliability.mtbi_hours", "mean time between interruptions", "h", 2),
                     goodput("reliability.goodput", "goodput")});
    // The breakdown, and the fixed costs outside the passes (workload/training.hpp, "Fixed costs").
    for (const char* p :
         {"compute", "tp", "pp", "dp", "ep", "cp", "bubble", "optimizer", "grad_norm", "loss", "step_overhead"})
      d.fields.push_back(field(std::string("breakdown_ms.") + p, breakdown_label(p), "ms", 2));
    // The fabric's network capex (design's) and per token/s of the job: the cost of throughput over a grid.
    add_optional(d, {field("cost.network_capex_usd", "network capex", "USD", 0),
                     field("cost.network_capex_usd_per_token_per_second", "network capex per token/s", "USD", 2)});
    // One collective of each kind as timed on the engine (workload/training.hpp); null where the job has none.
    add_optional(d, {field("timings.tp_collective_us", "one TP collective", "us", 1),
                     field("timings.ep_collective_us", "one EP all-to-all, every group at once", "us", 1),
                     field("timings.cp_step_us", "one CP ring-attention step", "us", 1)});
    // workload.variability measured (or speed_cv / jitter_cv): the compute the slowest GPUs add.
    d.fields.push_back(optional(field("variability.compute_added_ms", "compute added by variability", "ms", 2)));
    // The scenario's failures (study/train.hpp, TrainStudy::failed): the iteration they slowed.
    add_optional(d, {field("failures.iteration_ms", "iteration time with failures", "ms", 2),
                     field("failures.baseline_iteration_ms", "iteration time without failures", "ms", 2),
                     field("failures.slowdown", "slowdown from failures", "x", 3),
                     field("failures.scheduled", "failures scheduled", "", 0),
                     field("failures.straggler.slowdown_ms", "time the failures add", "ms", 2),
                     field("failures.straggler.critical_path_excess_ms", "excess on the critical path", "ms", 2),
                     field("failures.straggler.critical_path_ops", "critical-path operations slowed", "", 0)});
    // The packet engine's counters over the iteration's runs, labelled as bench's.
    add_packet_counters(d, false, field("packet_counters.runs", "engine runs counted", "", 0));
    // The rest of the result a sweep or a diff shows, labelled as train's report words them (no raw keys there).
    add_optional(d, {field("parallelism.tp", "TP", "", 0),
                     field("parallelism.cp", "CP", "", 0),
                     field("parallelism.pp", "PP (stages)", "", 0),
                     field("parallelism.dp", "DP (replicas)", "", 0),
                     field("parallelism.fabric_gpus", "GPUs in the fabric", "", 0),
                     field("groups.dp.size", "GPUs per DP group", "", 0),
                     field("groups.tp.count", "TP groups", "", 0),
                     field("groups.pp.count", "pipelines", "", 0),
                     field("batch.microbatches_per_pipeline", "microbatches per pipeline", "", 0),
                     percent("ideal_bubble_fraction", "ideal bubble, of compute"),
                     field("memory_gbyte.total", "memory per GPU", "GB", 1),
                     field("memory_gbyte.activations", "activations per GPU", "GB", 1),
                     field("memory_gbyte.inflight_microbatches", "microbatches in flight", "", 2),
                     field("volumes.tp_bytes_per_gpu", "TP traffic per GPU", "GB", 2, false, 1e-9),
                     field("volumes.pp_bytes_per_gpu", "PP traffic per GPU", "GB", 2, false, 1e-9),
                     field("volumes.dp_bytes_per_gpu", "DP traffic per GPU", "GB", 2, false, 1e-9),
                     field("volumes.ep_bytes_per_gpu", "EP traffic per GPU", "GB", 2, false, 1e-9),
                     field("volumes.cp_bytes_per_gpu", "CP traffic per GPU", "GB", 2, false, 1e-9),
                     percent("placement.cross_spine_fraction", "DP+PP bytes crossing the spine"),
                     percent("placement.cross_super_spine_fraction", "DP+PP bytes crossing the super-spine"),
                     percent("placement.dp_cross_spine_fraction", "DP bytes crossing the spine"),
                     percent("placement.pp_cross_spine_fraction", "PP bytes crossing the spine"),
                     field("placement.dp_bytes", "DP bytes, all groups", "GB", 1, false, 1e-9),
                     field("placement.groups_used", "aggregation groups used", "", 0),
                     field("placement.pods_used", "pods used", "", 0),
                     field("plan.transfers", "transfers simulated", "", 0),
                     field("plan.flows", "flows simulated", "", 0),
                     field("plan.p2p_transfers", "pipeline sends simulated", "", 0),
                     field("plan.dp_collectives", "DP collectives simulated", "", 0),
                     field("plan.dp_buckets_per_group", "DP buckets per group", "", 0),
                     field("plan.bucket_params", "parameters per DP bucket", "", 0),
                     field("reliability.checkpoint_interval_minutes", "checkpoint interval", "min", 1)});
    d.run = [](const StudyRun& r) {
      study::TrainRequest req;
      req.allow_oom = r.args->values.get_bool("allow_oom");
      req.failures = r.args->values.get_bool("failures");
      req.sweep = r.args->values.get_bool("sweep");
      req.trace = r.page && r.args->values.get_bool("trace");
      const study::TrainStudy t = study::train(*r.setup, req, r.progress);
      StudyOutput o;
      o.document = train_document(*r.setup, t);
      if (req.trace) {
        std::ostringstream out;
        write_training_trace(t.result, out);
        o.trace = out.str();
        o.extras["trace"] = {{"bytes", o.trace.size()}};
      }
      return o;
    };
    out.push_back(std::move(d));
  }
  {
    StudyDef d;
    d.name = "reliability";
    d.description = "interruptions, checkpoint interval and goodput of the job on the fabric's parts";
    d.gpus_field = "job.gpus";
    d.fields = {field("job.gpus", "GPUs", "", 0), field("mtbi_hours", "mean time between interruptions", "h", 2, true),
                // Daly's optimum and what it gives: a sweep over reliability.checkpoint_interval changes the "at your
                // interval" figures below, not these (a column "checkpoint interval" read 37.9 min whatever was set).
                field("checkpoint.interval_minutes", "Daly's checkpoint interval", "min", 1, true),
                goodput("checkpoint.goodput", "goodput at Daly's interval", true),
                // reliability.training_days (30 by default) stretched by the interruptions: not the job's token
                // budget, which train's "days to train with random failures" is.
                field("days_to_train_with_failures", "training window at Daly's interval", "days", 1, true),
                // with a storage network (storage.frontend_nics)
                optional(field("checkpoint.storage.write_minutes", "checkpoint write", "min", 1)),
                optional(field("checkpoint.storage.read_minutes", "checkpoint read", "min", 1)),
                // with reliability.checkpoint_interval: the job's own interval
                optional(goodput("checkpoint.yours.goodput", "goodput at your interval", true)),
                optional(field("checkpoint.yours.days_to_train_with_failures", "training window at your interval",
                               "days", 1, true))};
    d.run = [](const StudyRun& r) {
      StudyOutput o;
      o.document = reliability_document(*r.setup, study::reliability(*r.setup));
      if (r.page) o.extras["goodput_curve"] = goodput_curve(o.document);
      return o;
    };
    out.push_back(std::move(d));
  }
  {
    StudyDef d;
    d.name = "diagnose";
    d.description = "silent faults found by probing: suspects, time to localize, the deadlock check";
    d.params = {choice("probe", "rail", {"full-mesh", "rail", "leaf-mesh"},
                       "who probes whom: full-mesh, rail or leaf-mesh"),
                param("duration", ParamType::Time, "300s", "simulated probing time"),
                param("round", ParamType::Time, "10s", "localization runs after every round"),
                at_least(param("rate", ParamType::Real, "1000", "probes per second sent by each NIC"), 1e-9),
                at_least(param("evaluate", ParamType::Int, "0",
                               "seeded trials with random hidden faults, scored (0: the scenario's faults:)"),
                         0),
                at_least(param("faults", ParamType::Int, "1", "with evaluate: hidden faults per trial"), 1),
                choice("fault_kind", "link", {"link", "switch", "mixed"}, "with evaluate: link, switch or mixed"),
                at_least(param("loss", ParamType::Real, "0.001", "with evaluate: drop probability of a hidden fault"),
                         0),
                param("deadlock_check", ParamType::Bool, "true", "the cyclic buffer dependency check")};
    // --evaluate N scores seeded trials (evaluation.*); a run on the scenario's faults scores them (score.*).
    d.fields = {optional(percent("evaluation.precision", "precision", true)),
                optional(percent("evaluation.recall", "recall", true)),
                optional(
                    nullable(field("evaluation.time_to_localize_seconds.max", "time to localize (worst)", "s", 1, true),
                             "no trial localized a fault")),
                optional(percent("score.precision", "precision", true)),
                optional(percent("score.recall", "recall", true)),
                optional(field("time_to_localize_seconds", "time to localize", "s", 1, true)),
                // absent when the probes come from a file (--probes)
                optional(field("probing.overhead_bytes_per_second_per_nic", "probe traffic per NIC", "B/s", 0, true))};
    d.params[7].spec.max = 1;
    d.run = [](const StudyRun& r) {
      const study::DiagnoseResult res = study::diagnose(*r.setup, diagnose_request(*r.args), r.progress);
      StudyOutput o;
      o.document = diagnose_document(*r.setup, res);
      if (r.page) {
        o.extras["drawing"] = fabric_drawing(r.setup->fabric);
        o.extras["suspects"] = suspects_on_drawing(r.setup->fabric, res);
      }
      return o;
    };
    out.push_back(std::move(d));
  }
  {
    StudyDef d;
    d.name = "jobs";
    d.description = "several jobs (the scenario's jobs:) placed and run together on one fabric, and alone";
    d.params = {param("allow_oom", ParamType::Bool, "false", "time the job even when it does not fit in memory")};
    d.fields = {field("fabric_gpus", "fabric GPUs", "", 0, true),
                field("fragmentation.free_gpus", "free GPUs", "", 0, true),
                field("fragmentation.stranded_gpus", "stranded GPUs", "", 0, true)};
    d.run = [](const StudyRun& r) {
      study::JobsRequest req;
      req.allow_oom = r.args->values.get_bool("allow_oom");
      StudyOutput o;
      o.document = jobs_document(*r.setup, study::jobs(*r.setup, req, r.progress));
      std::ostringstream text;  // the dashboard shows the CLI's report (a page of its own is still to come)
      write_jobs_table(o.document, text);
      o.extras["report_text"] = wrap_prose(text.str());  // as the command prints it
      return o;
    };
    out.push_back(std::move(d));
  }
  {
    StudyDef d;
    d.name = "inference";
    d.description = "LLM serving (the scenario's inference:): time to first token, time per output token, "
                    "throughput";
    d.gpus_field = "layout.gpus";
    // The dashboard's form: each sets its scenario key (empty: the scenario's own). `podnet inference` has
    // flags of its own for the same keys.
    const auto key = [](std::string name, ParamType type, std::string help, std::vector<std::string> choices = {}) {
      const std::string sets = (name == "model" ? "workload." : "inference.") + name;
      StudyParam p = param(name, type, "", std::move(help) + " (sets " + sets + ")", {}, kServe);
      p.sets_key = sets;
      p.spec.choices = std::move(choices);
      return p;
    };
    d.params = {key("model", ParamType::String, "model preset", workload::model_names()),
                key("replicas", ParamType::Int, "co-located replicas"),
                key("tp", ParamType::Int, "tensor-parallel GPUs of a replica"),
                key("precision", ParamType::String, "weights and matmuls: bf16 or fp8", {"bf16", "fp8"}),
                key("kv_precision", ParamType::String, "the KV cache: bf16 or fp8", {"bf16", "fp8"}),
                key("scheduler", ParamType::String, "prefill_first or chunked (prefill chunks beside decode)",
                    {"prefill_first", "chunked"}),
                key("rate", ParamType::Real, "requests per second"),
                key("requests", ParamType::Int, "requests simulated"),
                key("prompt", ParamType::Int, "prompt tokens of each request"),
                key("output", ParamType::Int, "output tokens of each request"),
                key("target_ttft", ParamType::Time, "p99 time to first token to meet, e.g. 2s"),
                key("target_tpot", ParamType::Time, "p99 time per output token to meet, e.g. 50ms")};
    // The latencies at podnet inference's decimals (14.7 ms), in every front.
    d.fields = {
        field("layout.gpus", "GPUs", "", 0), field("latency.ttft_ms.p50", "TTFT p50", "ms", 1, true),
        field("latency.ttft_ms.p90", "TTFT p90", "ms", 1), field("latency.ttft_ms.p99", "TTFT p99", "ms", 1, true),
        nullable(field("latency.tpot_ms.p50", "TPOT p50", "ms", 1, true), kNoSecondToken),
        nullable(field("latency.tpot_ms.p90", "TPOT p90", "ms", 1), kNoSecondToken),
        nullable(field("latency.tpot_ms.p99", "TPOT p99", "ms", 1, true), kNoSecondToken),
        field("throughput.output_tokens_per_s_per_gpu", "output tokens/s per GPU", "", 1, true),
        field("throughput.output_tokens_per_s", "output tokens/s", "", 0),
        percent("utilization.network_share", "communication share"), percent("utilization.busy", "replicas busy"),
        optional(nullable(field("target.rate_per_s", "rate at target", "requests/s", 2, true), kNoRateMet)),
        optional(field("target.at_rate.output_tokens_per_s_per_gpu", "output tokens/s per GPU at target", "", 1)),
        field("latency.e2e_ms.p50", "end to end p50", "ms", 1), field("latency.e2e_ms.p90", "end to end p90", "ms", 1),
        field("latency.e2e_ms.p99", "end to end p99", "ms", 1),
        optional(field("latency.kv_transfer_ms.p50", "KV transfer p50", "ms", 2)),
        optional(field("latency.kv_transfer_ms.p90", "KV transfer p90", "ms", 2)),
        optional(field("latency.kv_transfer_ms.p99", "KV transfer p99", "ms", 2)),
        field("throughput.requests_per_s", "requests/s", "", 2),
        // The stream the run drew, and whether its latencies are a steady state's (inference_report.cpp).
        optional(field("stream.arrival_seconds", "arrivals over", "s", 1)),
        optional(field("stream.drawn_rate_per_s", "arrival rate drawn", "requests/s", 2)),
        optional(yes_no("stream.steady", "steady state (not a burst)")),
        optional(yes_no("stream.overloaded", "overloaded (the queue grows)")),
        field("throughput.input_tokens_per_s", "input tokens/s", "", 0),
        field("utilization.mean_decode_batch", "mean decode batch", "", 1),
        field("utilization.decode_passes", "decode passes", "", 0),
        field("utilization.prefill_passes", "prefill passes", "", 0),
        field("memory.weights_gb_per_gpu", "weights per GPU", "GB", 1),
        field("memory.kv_capacity_tokens_per_replica", "KV cache per replica (tokens)", "", 0),
        field("single_request.ttft_ms", "TTFT, one request alone", "ms", 2),
        field("single_request.tpot_ms", "TPOT, one request alone", "ms", 2),
        field("single_request.ttft_network_ms", "TTFT communication, one request alone", "ms", 2),
        field("single_request.tpot_network_ms", "TPOT communication, one request alone", "ms", 2),
        optional(field("single_request.kv_transfer_ms", "KV transfer, one request alone", "ms", 2)),
        field("single_request.prompt_tokens", "prompt of the request alone (tokens)", "", 0),
        optional(nullable(field("target.missed_rate_per_s", "rate missing the target", "requests/s", 2),
                          "every rate tried met the target")),
        optional(field("target.at_rate.ttft_ms", "TTFT at target rate", "ms", 1)),
        optional(nullable(field("target.at_rate.tpot_ms", "TPOT at target rate", "ms", 2), kNoSecondToken)),
        optional(field("target.at_rate.output_tokens_per_s", "output tokens/s at target", "", 0))};
    d.check = [](const StudyArgs&, const scenario::Setup& s) { study::check_inference(s); };
    d.run = [](const StudyRun& r) {
      StudyOutput o;
      o.document = inference_document(*r.setup, study::inference(*r.setup, r.progress));
      return o;
    };
    out.push_back(std::move(d));
  }
  {
    StudyDef d;
    d.name = "plan-upgrade";
    d.description = "a rolling upgrade of one switch tier (maintenance:) under the job: each step's slowdown, "
                    "the extra training time, the recommended plan";
    d.gpus_field = "job.gpus";
    // Sweep's and diff's options and the dashboard's form: each sets its maintenance key (empty: the scenario's
    // own), as `podnet plan-upgrade`'s flags of the same names do.
    const auto key = [](std::string name, ParamType type, std::string help) {
      StudyParam p = param(name, type, "", std::move(help) + " (sets maintenance." + name + ")");
      p.sets_key = "maintenance." + name;
      return p;
    };
    d.params = {key("tier", ParamType::String, "the switch tier to upgrade"),
                key("batches", ParamType::String, "switches drained together, one plan per size, e.g. 1,4,16"),
                key("step_time", ParamType::Time, "how long one step keeps its switches out, e.g. 30min"),
                key("negligible", ParamType::Time,
                    "extra training time that counts as none when plans are compared, e.g. 1min"),
                key("runs", ParamType::Int, "steps of each plan simulated (0: every step)")};
    d.fields = {field("job.gpus", "GPUs", "", 0),
                field("switches", "switches in the tier", "", 0),
                field("best.batch", "switches per step (recommended plan)", "", 0, true),
                field("best.steps", "steps", "", 0, true),
                field("best.window_hours", "upgrade window", "h", 1, true),
                nullable(field("best.worst_slowdown", "worst step slowdown", "x", 3, true), "a step stops the job"),
                field("best.stopping_steps", "steps that stop the job", "", 0),
                field("best.extra_hours", "extra training time", "h", 2, true, 1, "upgrade_hours"),
                field("job.iteration_ms", "iteration time, intact", "ms", 2)};
    d.check = [](const StudyArgs&, const scenario::Setup& s) { study::check_upgrade(s); };
    d.run = [](const StudyRun& r) {
      StudyOutput o;
      o.document = upgrade_document(*r.setup, study::plan_upgrade(*r.setup, r.progress));
      std::ostringstream text;
      write_upgrade_table(o.document, text);
      o.extras["report_text"] = wrap_prose(text.str());  // as the command prints it
      return o;
    };
    out.push_back(std::move(d));
  }
  return out;
}

std::mutex& registry_mutex() {
  static std::mutex mu;
  return mu;
}
std::deque<StudyDef>& registry() {
  static std::deque<StudyDef> r = [] {
    std::vector<StudyDef> b = builtin();
    return std::deque<StudyDef>(std::make_move_iterator(b.begin()), std::make_move_iterator(b.end()));
  }();
  return r;
}

// Digits before the point grouped by thousands ("17367040" -> "17,367,040"; "-1234.5" -> "-1,234.5").
std::string grouped(const std::string& s) {
  const size_t start = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  size_t end = s.find_first_not_of("0123456789", start);
  if (end == std::string::npos) end = s.size();
  if (end < s.size() && s[end] != '.') return s;  // e-notation and the like: as it is
  std::string out = s.substr(0, start);
  const std::string ip = s.substr(start, end - start);
  for (size_t i = 0; i < ip.size(); ++i) {
    if (i && (ip.size() - i) % 3 == 0) out += ',';
    out += ip[i];
  }
  return out + s.substr(end);
}

}  // namespace

std::string StudyParam::option() const {
  if (!flags.empty()) {
    const auto dd = flags.find("--");
    return dd == std::string::npos ? flags : flags.substr(dd);
  }
  std::string n = spec.name;
  std::replace(n.begin(), n.end(), '_', '-');
  return "--" + n;
}

std::string StudyArgs::label(const std::string& name) const {
  const auto it = labels.find(name);
  return it == labels.end() ? name : it->second;
}

std::vector<std::string> study_definition(const StudyDef& s, const StudyArgs& a, unsigned front) {
  std::vector<std::string> out;
  for (const auto& p : s.params) {
    if (!(p.fronts & front)) continue;
    const auto it = a.given.find(p.spec.name);
    out.push_back(p.spec.name + "=" + (it == a.given.end() ? p.spec.default_text : it->second));
  }
  return out;
}

const std::deque<StudyDef>& studies() {
  std::lock_guard lk(registry_mutex());
  return registry();
}

void register_study(StudyDef s) {
  std::lock_guard lk(registry_mutex());
  for (const auto& d : registry())
    if (d.name == s.name) throw InputError(fmt::format("study {}: registered twice", s.name));
  registry().push_back(std::move(s));
}

const StudyDef* find_study(const std::string& name) {
  for (const auto& s : studies())
    if (s.name == name) return &s;
  return nullptr;
}

std::string study_names(const std::string& last) {
  std::string out;
  const auto& all = studies();
  for (size_t i = 0; i < all.size(); ++i) out += (i == 0 ? "" : i + 1 == all.size() ? last : ", ") + all[i].name;
  return out;
}

const StudyDef& study_named(const std::string& name, const std::string& option) {
  if (const StudyDef* s = find_study(name)) return *s;
  throw InputError(fmt::format("{} {}: expected {}", option, name, study_names()));
}

const StudyParam* find_param(const StudyDef& s, const std::string& name) {
  for (const auto& p : s.params)
    if (p.spec.name == name) return &p;
  return nullptr;
}

StudyArgs study_args(const StudyDef& s, const std::map<std::string, std::string>& given,
                     const std::function<std::string(const StudyParam&)>& label_of) {
  StudyArgs a;
  for (const auto& p : s.params) a.labels[p.spec.name] = label_of(p);
  for (const auto& [name, text] : given)
    if (!find_param(s, name)) throw InputError(fmt::format("{}: not a parameter of the {} study", name, s.name));
  for (const auto& p : s.params) {
    const auto it = given.find(p.spec.name);
    const bool is_given = it != given.end();
    const std::string text = is_given ? it->second : p.spec.default_text;
    if (!is_given && p.spec.default_text.empty()) continue;  // optional, absent
    const std::string& label = a.labels[p.spec.name];
    std::string canonical, expected;
    const std::optional<ParamValue> v = parse_param(p.spec, text, canonical, expected);
    if (!v) {
      const char* what = p.spec.type == ParamType::Time ? "a duration" : "valid";
      throw InputError(
          fmt::format("{}: '{}' is not {}{}", label, text, what, expected.empty() ? "" : "; expected " + expected));
    }
    if (p.spec.type == ParamType::Time && std::get<Time>(*v).ps <= 0)
      throw InputError(fmt::format("{}: '{}' is not a duration above 0", label, text));
    a.values.set(p.spec.name, *v, is_given ? text : canonical);
    if (is_given) a.given[p.spec.name] = text;
    if (is_given && !p.sets_key.empty() && !text.empty()) {
      a.sets.push_back(p.sets_key + "=" + text);
      a.set_by[p.sets_key] = label;
    }
  }
  if (s.prepare) s.prepare(a);
  return a;
}

StudyOutput run_study(const StudyDef& s, const scenario::Scenario& sc, const StudyArgs& args,
                      const study::Progress& progress, const std::function<void(scenario::Setup&)>& adjust, bool page) {
  StudyRun r;
  r.scenario = &sc;
  r.args = &args;
  r.progress = progress;
  r.page = page;
  // The study's options as given (bench's --min and --max, diagnose's --duration): with the run block's --sets
  // they repeat the run, which the scenario and its --sets alone do not.
  // Only those that differ from their defaults (a page sends every field) and that no --set in the run block
  // already says (inference's --rate is inference.rate there).
  const auto with_options = [&args, &s](StudyOutput out) {
    std::set<std::string> as_sets;
    for (const auto& [key, label] : args.set_by) as_sets.insert(label);
    nlohmann::json options = nlohmann::json::object();
    for (const auto& [name, text] : args.given)
      if (const StudyParam* p = find_param(s, name);
          !text.empty() && !(p && text == p->spec.default_text) && !as_sets.count(args.label(name)))
        options[p ? p->option() : name] = text;  // as the command line takes it: {"--min": "1MiB"}
    if (!options.empty() && out.document.contains("run") && out.document["run"].is_object())
      out.document["run"]["options"] = options;
    return out;
  };
  if (!s.needs_setup) return with_options(s.run(r));
  scenario::Setup setup = scenario::resolve(scenario::Scenario(sc));
  if (adjust) adjust(setup);
  r.setup = &setup;
  r.scenario = &setup.scenario;
  return with_options(s.run(r));
}

const ResultField* find_field(const StudyDef& s, const std::string& key) {
  const auto at = key.find('@');
  const std::string k = at == std::string::npos ? key : key.substr(0, at + 1);
  for (const auto& f : s.fields)
    if (f.key == k) return &f;
  return nullptr;
}

std::string format_field(const ResultField* f, const nlohmann::json& v, bool with_unit) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (f && f->yes_no && (v.is_boolean() || v.is_number()))
    return (v.is_boolean() ? v.get<bool>() : v.get<double>() != 0) ? "yes" : "no";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (!v.is_number()) return v.dump();
  if (f) {
    const double x = v.get<double>() * f->scale;
    // Money as design and optimize print it: $1,234 (and $1,234/year).
    if (with_unit && f->unit.rfind("USD", 0) == 0)
      return (x < 0 ? "-$" : "$") + fixed_or_exp(std::fabs(x), f->decimals) + f->unit.substr(3);
    // A ratio reads 1.83:1, as design prints it.
    if (f->unit == ":1") return (with_unit ? format_number(x, f->decimals) : fixed_or_exp(x, f->decimals)) + ":1";
    const std::string unit = f->unit.empty() ? "" : f->unit == "%" ? "%" : with_unit ? " " + f->unit : "";
    return fixed_or_exp(x, f->decimals) + unit;
  }
  if (v.is_number_integer()) return thousands(v.get<int64_t>());
  const double x = v.get<double>();
  if (!std::isfinite(x)) return "-";
  if (std::fabs(x) >= 1e15) return fmt::format("{:.3e}", x);
  // A small figure keeps three significant digits (a GPU's 1.262e-5 failures an hour read "0" at four decimals).
  if (x != 0 && std::fabs(x) < 1e-3)
    return format_number(x, std::min(12, 2 - static_cast<int>(std::floor(std::log10(std::fabs(x))))));
  return grouped(format_number(x, 4));
}

int64_t gpus_of(const StudyDef& s, const nlohmann::json& doc) {
  if (s.gpus_field.empty()) return -1;
  const nlohmann::json* at = &doc;
  std::stringstream ss(s.gpus_field);
  for (std::string part; std::getline(ss, part, '.');) {
    if (!at->is_object() || !at->contains(part)) return -1;
    at = &(*at)[part];
  }
  return at->is_number() ? at->get<int64_t>() : -1;
}

nlohmann::json studies_json(unsigned front) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& s : studies()) {
    nlohmann::json params = nlohmann::json::array();
    for (const auto& p : s.params) {
      if (!(p.fronts & front)) continue;
      params.push_back({{"name", p.spec.name},
                        {"type", param_type_name(p.spec.type)},
                        {"default", p.spec.default_text},
                        {"help", p.spec.help},
                        {"choices", p.spec.choices},
                        {"option", p.option()}});
      if (!p.sets_key.empty()) {
        params.back()["sets"] = p.sets_key;
        // The key's own default, which a scenario that leaves the key out runs with (the page's hint shows it).
        if (const std::string d = scenario::key_default(p.sets_key); !d.empty()) params.back()["key_default"] = d;
      }
    }
    nlohmann::json fields = nlohmann::json::array();
    for (const auto& f : s.fields)
      fields.push_back({{"key", f.key},
                        {"label", f.label},
                        {"unit", f.unit},
                        {"scale", f.scale},
                        {"decimals", f.decimals},
                        {"headline", f.headline}});
    list.push_back({{"name", s.name},
                    {"description", s.description},
                    {"params", params},
                    {"fields", fields},
                    {"gpus_field", s.gpus_field}});
  }
  return {{"studies", list}};
}

nlohmann::json result_schema(const StudyDef& s) {
  using json = nlohmann::json;
  const auto object = [] { return json{{"type", "object"}, {"properties", json::object()}}; };
  json doc = object();
  doc["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  doc["title"] = fmt::format("podnet {} result (schema_version {})", s.name, kSchemaVersion);
  doc["description"] = s.description;
  doc["properties"]["schema_version"] = {{"const", kSchemaVersion}, {"description", "result format version"}};
  doc["properties"]["run"] = {{"type", "object"},
                              {"description", "what ran: command, scenario, overrides (--set), options (the other "
                                              "options that change the result), seed, podnet version"},
                              {"required", json::array({"command", "scenario", "seed"})}};
  doc["required"] = json::array({"schema_version", "run"});
  const auto require = [](json& node, const std::string& key) {
    json& req = node["required"];
    if (!req.is_array()) req = json::array();
    if (std::find(req.begin(), req.end(), key) == req.end()) req.push_back(key);
  };
  for (const auto& f : s.fields) {
    std::string description = f.label;
    if (f.scale != 1 && f.unit == "%") description += " (a fraction; shown x 100 as %)";
    else if (!f.unit.empty()) description += " (" + f.unit + ")";
    if (!f.null_when.empty()) description += "; null when " + f.null_when;
    const json type = f.yes_no ? json("boolean") : json("number");
    const json leaf = {{"type", f.null_when.empty() ? type : json::array({type, "null"})},
                       {"description", description}};
    json* node = &doc;
    std::string path = f.key;
    if (path.back() == '@') {  // one per size of a bench: a number in each row, beside its size
      path.pop_back();
      json& rows = doc["properties"]["rows"];
      if (rows.is_null()) {
        rows = {{"type", "array"}, {"description", "one row per message size"}, {"items", object()}};
        rows["items"]["properties"]["bytes"] = {{"type", "integer"}, {"description", "message size (B)"}};
        require(rows["items"], "bytes");
        require(doc, "rows");
      }
      node = &rows["items"];
    }
    bool all_required = !f.optional;
    size_t at = 0;
    while (true) {
      const size_t dot = path.find('.', at);
      const std::string part = path.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
      if (all_required) require(*node, part);
      json& child = (*node)["properties"][part];
      if (dot == std::string::npos) {
        child = leaf;
        break;
      }
      if (child.is_null()) child = object();
      node = &child;
      at = dot + 1;
    }
  }
  return doc;
}

nlohmann::json result_schemas() {
  nlohmann::json out = {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                        {"title", fmt::format("podnet result documents (schema_version {})", kSchemaVersion)},
                        {"$defs", nlohmann::json::object()}};
  for (const auto& s : studies()) out["$defs"][s.name] = result_schema(s);
  return out;
}

std::string elapsed_and_eta(int64_t done, int64_t total, double elapsed) {
  std::string s = fmt::format("{:.1f} s elapsed", elapsed);
  if (elapsed < 3 || done <= 0 || done >= total) return s;
  const double left = elapsed / static_cast<double>(done) * static_cast<double>(total - done);
  return s + (left < 120    ? fmt::format(", ETA {:.0f} s", left)
              : left < 7200 ? fmt::format(", ETA {:.0f} min", left / 60)
                            : fmt::format(", ETA {:.1f} h", left / 3600));
}

std::string op_hint(const std::string& name) {
  std::vector<std::string> ops;
  for (collective::Op op : collective::all_ops()) ops.emplace_back(collective::op_name(op));
  const std::string near = scenario::closest(name, ops);
  return fmt::format("{}; expected one of {}", near.empty() ? "" : " (did you mean " + near + "?)",
                     fmt::join(ops, ", "));
}

Bytes parse_size(const std::string& text, const std::string& label) {
  std::string t = text;
  // As nccl-tests: K/M/G (either case, and T) are powers of 1024.
  if (!t.empty() && std::string_view("KMGTkmgt").find(t.back()) != std::string_view::npos)
    t.back() = static_cast<char>(std::toupper(static_cast<unsigned char>(t.back()))), t += "iB";
  // A bare number is bytes, as nccl-tests reads -b 8.
  if (!t.empty() && std::all_of(t.begin(), t.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) t += "B";
  Bytes b = 0;
  std::string expected;
  if (!parse_bytes(t, b, expected))
    throw InputError(
        fmt::format("{} {}: expected {} (or, as nccl-tests, K/M/G/T for powers of 1024 and a bare number for bytes)",
                    label, text, expected));
  return b;
}

nlohmann::json design_document(const scenario::Scenario& sc, const topology::Topology& t, const std::string& cmd) {
  nlohmann::json doc = new_document(context_of(sc, cmd));
  const topology::Hardware hw = sc.hardware();
  topology::Bom bom = topology::compute_bom(t, hw);
  // Storage on the back end (frontend.converged): the last server slots hold storage nodes, not GPU servers.
  // Their GPUs, server power and (one per server) NVLink domains leave the bill; their NICs, cables and slots
  // in the racks stay. A storage node's own price and power are not counted, as on the frontend.
  const int32_t first_slot = sc.frontend().first_storage_slot(t.servers);
  const int64_t slots = first_slot < 0 ? 0 : t.servers - first_slot;
  if (slots > 0) {
    if (bom.nvlink_domains == bom.servers) bom.nvlink_domains -= slots;
    bom.gpus -= slots * t.gpus_per_server;
    bom.servers -= slots;
    bom.power_servers_w -= static_cast<double>(slots) * hw.server_power_w;
    bom.power_total_w -= static_cast<double>(slots) * hw.server_power_w;
  }
  const topology::CostModel model = sc.cost_model();
  add_design(doc, t, bom, topology::compute_cost(t, hw, bom, model), model);
  if (slots > 0) {
    doc["bom"]["storage_nodes"] = slots;
    doc["storage_on_back_end"] = {{"storage_nodes", slots},
                                  {"first_slot", first_slot},
                                  {"nics_per_storage_node", t.nics_per_server},
                                  {"storage_nics_bandwidth_gbps",
                                   round_to(static_cast<double>(slots * t.nics_per_server) * hw.nic_speed.gbps(), 3)}};
  }
  if (const topology::FrontendFabric fe = sc.build_frontend(t.servers); fe.config.present()) {
    add_frontend(doc, fe, model);
    // The frontend's switches go into network racks after the back end's, as the site exports place them
    // (topology::network_racks over the site): the racks they add.
    int32_t last = t.racks - 1;
    for (const int32_t r : topology::network_racks(topology::site_topology(t, fe), hw)) last = std::max(last, r);
    doc["frontend"]["network_racks"] = std::max<int64_t>(0, last + 1 - bom.racks);
    doc["racks_with_frontend"] = std::max<int64_t>(bom.racks, last + 1);
  }
  // The ratio asked, beside the one built when whole ports made another (2:1 on radix-128 leaves is 85 down /
  // 43 up ports, 40 of them cabled: 2.125:1, said only in the notes): the key's text and the builder's note on
  // that tier's ports.
  const Params& tp = sc.topology;
  for (const auto& keys : {std::pair<const char*, const char*>{"oversubscription", "spine_oversubscription"},
                           {"access_oversubscription", "aggregation_oversubscription"}}) {
    if (!tp.has(keys.first)) continue;
    nlohmann::json asked = nlohmann::json::object();
    for (size_t i = 0; i < t.facts.oversubscription.size() && i < 3; ++i) {
      // The third: a 4-tier Clos's super-spines (fat_tree and rail_clos only).
      const char* key = i == 0 ? keys.first : i == 1 ? keys.second : "super_spine_oversubscription";
      const auto& [tier, got] = t.facts.oversubscription[i];
      if (!tp.has(key) || std::abs(got - tp.get_real(key)) <= 1e-9 * got) continue;
      std::string why = "asked " + tp.text(key);
      for (const auto& n : t.facts.notes)
        if (n.rfind(tier + ": ", 0) == 0) why += ": " + n.substr(0, n.find(';'));
      asked[tier] = why;
    }
    if (!asked.empty()) doc["oversubscription_asked"] = asked;
    break;
  }
  // Tenants (tenants:): their servers and what isolates them.
  const std::vector<topology::Tenant> tenants = sc.plan_tenants(t);
  // The switches each tenant's NICs reach, and the tenants each switch serves: a leaf serving two tenants
  // carries both on its uplinks (VRFs separate routes, not bandwidth).
  std::map<topology::NodeId, std::set<const topology::Tenant*>> served;
  if (!tenants.empty())
    for (const auto& l : t.links) {
      for (auto [nic, sw] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}}) {
        if (t.nodes[nic].kind != topology::NodeKind::Nic || t.nodes[sw].kind != topology::NodeKind::Switch) continue;
        if (const auto* x = topology::tenant_of(tenants, t.nodes[nic].server)) served[sw].insert(x);
      }
    }
  std::map<const topology::Tenant*, int64_t> shared;  // leaves each tenant shares, and with whom
  std::map<const topology::Tenant*, std::set<std::string>> with_of;
  for (const auto& [sw, who] : served) {
    if (who.size() < 2) continue;
    for (const auto* x : who) {
      ++shared[x];
      for (const auto* y : who)
        if (y != x) with_of[x].insert(y->name);
    }
  }
  for (const auto& x : tenants) {
    const std::set<std::string>& with = with_of[&x];
    doc["tenants"].push_back({{"name", x.name},
                              {"vrf", x.vrf},
                              {"vni", x.vni},
                              {"route_target", x.route_target},
                              {"first_server", x.first_server},
                              {"servers", x.servers},
                              {"asked_gpus", x.asked_gpus},
                              {"gpus", static_cast<int64_t>(x.servers) * t.gpus_per_server},
                              {"shared_leaves", shared[&x]},
                              {"shares_leaves_with", std::vector<std::string>(with.begin(), with.end())}});
  }
  return doc;
}

}  // namespace podnet::report
