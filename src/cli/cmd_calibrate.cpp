#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <iostream>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "engine/registry.hpp"
#include "report/calibrate_report.hpp"
#include "study/calibrate.hpp"
#include "study/calibrate_training.hpp"
#include "study/nccl_tests_log.hpp"

namespace podnet::cli {

namespace {

struct CalibrateOptions {
  std::vector<std::string> logs;
  std::string training;
  std::vector<std::string> fit;
  std::string engine, op, out;
  bool force = false;
};

bool names_a_yaml_file(const std::string& path) {
  namespace fs = std::filesystem;
  const std::string ext = fs::path(path).extension().string();
  std::error_code ec;
  return (ext == ".yaml" || ext == ".yml") && !fs::is_directory(path, ec);
}

// After a fit: refuses one that is not trusted unless --force (exit 2, no fragment), else writes the
// fragment when --out asked for one. `train` says which command takes it.
int finish(const std::vector<std::string>& doubts, const CalibrateOptions& o, const std::string& fragment,
           bool file_out, const std::function<std::string()>& yaml, const char* takes) {
  const bool trusted = doubts.empty();
  if (!trusted && !o.force) {
    std::cerr << "podnet: error: calibrate: this fit is not a calibration, so "
              << (fragment.empty() ? "its values should not be used" : "no fragment was written (" + fragment + ")")
              << "; --force " << (fragment.empty() ? "accepts" : "writes") << " it anyway:\n";
    for (const auto& d : doubts) std::cerr << "  " << d << "\n";
    return kExitBadInput;
  }
  if (!fragment.empty()) {
    write_out("--out", fragment, yaml());
    std::cerr << fmt::format("podnet calibrate: wrote {} (use it with {}--config-add {}){}\n", fragment, takes,
                             fragment, trusted ? "" : ", not trusted (--force): its comments say why");
    if (file_out)
      std::cerr << "podnet calibrate: note: --out named the fragment file; as for every other command, --out DIR "
                   "also works (DIR/fitted.yaml beside calibrate.json, .csv, .txt and the resolved scenario)\n";
  }
  return kExitOk;
}

int cmd_calibrate(const Common& common, const CalibrateOptions& o) {
  // --out DIR, as every command's --out: DIR/fitted.yaml beside calibrate.json, .csv, .txt and the resolved
  // scenario. A path ending in .yaml or .yml (not a directory) is the fragment itself, as before.
  Common c = common;
  std::string fragment;
  const bool file_out = !o.out.empty() && names_a_yaml_file(o.out);
  if (file_out) {
    fragment = o.out;
    check_output_file("--out", fragment);  // before the fit's simulations
  } else if (!o.out.empty()) {
    check_output_dir("--out", o.out);
    c.out_dir = o.out;
    fragment = (std::filesystem::path(o.out) / "fitted.yaml").string();
  }
  // Progress on stderr every 5 s once the fit has taken 5 s.
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto last = start;
  if (!o.training.empty()) {
    if (!o.logs.empty())
      throw InputError("calibrate: give --nccl-tests or --training, not both (a fit is of collectives or of a job)");
    if (o.fit.size() > 1)
      throw InputError(fmt::format("calibrate --training fits one key; --fit was given {} times", o.fit.size()));
    if (!o.op.empty()) throw InputError("calibrate --training: --op is for nccl-tests logs");
    study::TrainingCalibrationInput in{
        c.scenario, c.sets, c.adds, study::read_training_log(o.training), o.fit.empty() ? "" : o.fit.front(),
        o.engine,   {}};
    in.progress = [&](int evaluations, double gap, const std::string& key) {
      const auto now = clock::now();
      if (now - start < std::chrono::seconds(5) || now - last < std::chrono::seconds(5)) return;
      last = now;
      // The jitter's search times steps of the job (no step-time gap yet); the compute key's, one iteration.
      const std::string where = key == "workload.jitter_cv"
                                    ? std::string()
                                    : fmt::format(", step time within {:.2f}% of the log", 100 * (std::exp(gap) - 1));
      std::cerr << fmt::format("podnet calibrate: {} simulations{}, searching {} ({:.0f} s elapsed)\n", evaluations,
                               where, key, std::chrono::duration<double>(now - start).count());
    };
    const study::TrainingCalibration cal = study::calibrate_training(in);
    const scenario::Scenario sc = load_scenario(c);
    nlohmann::json doc = report::new_document(context_of(sc, "calibrate"));
    doc["calibrate_training"] = report::calibrate_training_json(cal);
    emit(c, sc, doc, "calibrate", report::write_calibrate_training_table);
    return finish(
        cal.doubts, o, fragment, file_out, [&] { return study::training_fragment_yaml(cal); }, "podnet train ");
  }
  if (o.logs.empty())
    throw InputError("calibrate: give --nccl-tests LOG (collectives) or --training LOG (a job's step times)");
  study::CalibrationInput in{c.scenario, c.sets, c.adds, {}, o.fit, o.engine, o.op, {}};
  for (const auto& path : o.logs)
    for (auto& l : study::read_nccl_tests(path)) in.logs.push_back(std::move(l));
  in.progress = [&](int evaluations, double rms, const std::string& key) {
    const auto now = clock::now();
    if (now - start < std::chrono::seconds(5) || now - last < std::chrono::seconds(5)) return;
    last = now;
    std::cerr << fmt::format(
        "podnet calibrate: {} simulations, rms residual {:.2f}%, searching {} ({:.0f} s elapsed)\n", evaluations,
        100 * rms, key, std::chrono::duration<double>(now - start).count());
  };
  const study::Calibration cal = study::calibrate(in);
  const scenario::Scenario sc = load_scenario(c);
  nlohmann::json doc = report::new_document(context_of(sc, "calibrate"));
  doc["calibrate"] = report::calibrate_json(cal);
  emit(c, sc, doc, "calibrate", report::write_calibrate_table);
  return finish(
      cal.doubts, o, fragment, file_out, [&] { return study::fragment_yaml(cal, in); }, "");
}

}  // namespace

void add_calibrate_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto o = std::make_shared<CalibrateOptions>();
  auto* cmd =
      app.add_subcommand("calibrate",
                         "fit scenario knobs to measured logs: link speeds, latencies and efficiencies to nccl-tests "
                         "logs, or a job's compute to its training log (Megatron-LM, NeMo)");
  cmd->add_option("scenario", c->scenario, "scenario file (YAML) or built-in scenario name (see `podnet list`)")
      ->required();
  cmd->add_option("--nccl-tests", o->logs,
                  "nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, "
                  "sendrecv_perf, ...) as printed, one or more files")
      ->type_name("LOG");
  cmd->add_option("--training", o->training,
                  "a training run's log: Megatron-LM's or Megatron-Bridge's 'iteration N/M | ... elapsed time per "
                  "iteration (ms): T |' lines, or NeMo's 'train_step_timing in s' (NeMo 2's progress printer, NeMo "
                  "1's progress bar); the scenario describes its job (model, GPUs, parallelism, batch), and "
                  "workload.sustained_fraction (or --fit KEY) is fitted so that podnet's iteration takes the "
                  "log's median steady step")
      ->type_name("LOG");
  cmd->add_option("--fit", o->fit,
                  "a bandwidth, time or real scenario key to fit, with optional bounds (repeatable); default "
                  "under NCCL's model (collective.nccl_model, the default): links.nvlink_efficiency, after the NIC "
                  "class's links.ethernet_efficiency (or links.infiniband_efficiency) for logs across servers, "
                  "and network.stack_latency for all-to-all and sendrecv logs; with collective.nccl_model=false: "
                  "server.nic_speed and network.stack_latency across servers, server.nvlink_bandwidth and "
                  "server.nvlink_latency inside one")
      ->type_name("KEY[=LO:HI]");
  std::vector<std::string> engines;
  for (const auto& e : engine::engines())
    if (e.traits.many_runs) engines.emplace_back(e.name);
  cmd->add_option("--engine", o->engine,
                  engine::engine_names_with(&engine::EngineTraits::many_runs, " | ") + " (sets network.engine)")
      ->check(CLI::IsMember(engines));
  cmd->add_option("--op", o->op, "the collective of logs that do not say which test ran (allreduce, allgather, ...)");
  cmd->add_option("--set", c->sets, "override a scenario key, e.g. --set server.gpus=4 (repeatable)")
      ->type_name("KEY=VALUE");
  cmd->add_option("--config-add", c->adds, "merge a scenario fragment on top of the scenario before --set (repeatable)")
      ->type_name("FILE");
  cmd->add_option("-f,--format", c->format, "output on stdout: table (default), json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("-o,--out", o->out,
                  "a directory (created when missing): DIR/fitted.yaml, the fitted keys as a scenario fragment that "
                  "bench and train take with --config-add, beside calibrate.json, .csv, .txt and the resolved "
                  "scenario, as every command's --out; a path ending in .yaml or .yml is the fragment file alone")
      ->type_name("DIR");
  cmd->add_flag("--force", o->force,
                "write the fragment (and exit 0) even when the fit is not trusted: every key on a bound, or an rms "
                "residual above 25 %");
  cmd->footer(
      "How it works:\n"
      "  Each log's test runs in podnet on a group laid out like the log's ranks (H hosts x G GPUs -> the first\n"
      "  G GPUs of servers 0..H-1), at every size of the log, as bench runs it (NCCL's tuner, channels auto,\n"
      "  unless the scenario or --set says otherwise; a log that does not say its NCCL_ALGO / NCCL_PROTO is\n"
      "  matched with --set collective.algorithms=ring etc.). The fit minimises the sum over sizes of\n"
      "  (podnet busbw / log busbw - 1)^2 by cyclic coordinate descent with a golden-section search per key\n"
      "  (deterministic). Printed: the fitted values, and per size the log's and podnet's busbw and their\n"
      "  ratio. Keys that trade off (an efficiency and the speed it scales) cannot both be fitted: pick one.\n"
      "  A log that says NCCL_ALGO / NCCL_PROTO (an `export NCCL_ALGO=RING` line, mpirun's -x, NCCL_DEBUG=INFO's\n"
      "  'set by environment') is timed with them; each size shows what podnet timed beside what the log ran.\n"
      "  A fit whose keys all end on their bounds, or whose rms residual exceeds 25 %, is not trusted: it is\n"
      "  printed with the likely causes, no fragment is written and the exit status is 2 (--force writes it).\n"
      "  Every simulation builds the whole fabric: on a large scenario, shrink it to what the log needs\n"
      "  (--set topology.gpus=64 for a 2-node log) or the fit takes minutes.\n\n"
      "With --training LOG:\n"
      "  The scenario must describe the log's job: model, GPU, tp/pp/dp, microbatch, global batch, precision\n"
      "  and recompute (a log at another global batch is refused). Every run's first line and the 10\n"
      "  iterations after it are warm-up and left out; the median of the rest is the step time. A log that\n"
      "  times every step first fits workload.jitter_cv: 32 steps of the job, each GPU's jitter redrawn, until\n"
      "  their spread (1.4826 MAD / median) is the log's. Then one key is fitted (workload.sustained_fraction\n"
      "  unless --fit names another, which also skips the jitter) by false position on the log of the\n"
      "  iteration time, a few simulations. Printed: the log's steady steps, the fitted values, podnet's step\n"
      "  time and MFU before and after. Not trusted (exit 2, no fragment unless --force): a key on a bound,\n"
      "  MFU below 10 % at the fitted value, or steps that vary by more than 10 % (robust CV). A key that\n"
      "  does not change the job's step time is refused.\n\n"
      "Examples:\n"
      "  podnet calibrate leafspine-8k --set topology.gpus=64 --nccl-tests all_reduce_2nodes.log \\\n"
      "      --out calib/   # writes calib/fitted.yaml\n"
      "  podnet bench aipod-16k --config-add calib/fitted.yaml --gpus 0-1023\n"
      "  podnet calibrate aipod-16k --nccl-tests a.log --fit server.nic_speed=100Gbps:800Gbps \\\n"
      "      --fit network.stack_latency=0us:50us --engine analytical\n"
      "  podnet bench aipod-16k --gpus 0-15 --format nccl-tests > sim.log   # a log podnet wrote fits back\n"
      "  podnet calibrate aipod-16k --training megatron.log --set topology.gpus=1024 --set workload.dp=8 \\\n"
      "      --engine analytical --out calib/   # then: podnet train ... --config-add calib/fitted.yaml");
  cmd->callback([&action, c, o] { action = [c, o] { return cmd_calibrate(*c, *o); }; });
}

}  // namespace podnet::cli
