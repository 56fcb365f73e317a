#include <chrono>
#include <fmt/format.h>
#include <iostream>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "report/calibrate_report.hpp"
#include "study/calibrate.hpp"
#include "study/nccl_tests_log.hpp"

namespace podnet::cli {

namespace {

struct CalibrateOptions {
  std::vector<std::string> logs;
  std::vector<std::string> fit;
  std::string engine, op, fragment;
};

int cmd_calibrate(const Common& c, const CalibrateOptions& o) {
  check_output_file("--out", o.fragment);  // before the fit's simulations
  study::CalibrationInput in{c.scenario, c.sets, c.adds, {}, o.fit, o.engine, o.op, {}};
  for (const auto& path : o.logs)
    for (auto& l : study::read_nccl_tests(path)) in.logs.push_back(std::move(l));
  // Progress on stderr every 5 s once the fit has taken 5 s.
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto last = start;
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
  if (!o.fragment.empty()) {
    write_out("--out", o.fragment, study::fragment_yaml(cal, in));
    std::cerr << fmt::format("podnet calibrate: wrote {} (use it with --config-add {})\n", o.fragment, o.fragment);
  }
  return kExitOk;
}

}  // namespace

void add_calibrate_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto o = std::make_shared<CalibrateOptions>();
  auto* cmd =
      app.add_subcommand("calibrate",
                         "fit scenario knobs (link speeds, latencies, efficiencies) to measured nccl-tests logs");
  cmd->add_option("scenario", c->scenario, "scenario file (YAML) or built-in scenario name (see `podnet list`)")
      ->required();
  cmd->add_option("--nccl-tests", o->logs,
                  "nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, "
                  "sendrecv_perf, ...) as printed, one or more files")
      ->required()
      ->type_name("LOG");
  cmd->add_option("--fit", o->fit,
                  "a bandwidth, time or real scenario key to fit, with optional bounds (repeatable); default "
                  "under NCCL's model (collective.nccl_model, the default): links.nvlink_efficiency, after the NIC "
                  "class's links.ethernet_efficiency (or links.infiniband_efficiency) for logs across servers, "
                  "and network.stack_latency for all-to-all and sendrecv logs; with collective.nccl_model=false: "
                  "server.nic_speed and network.stack_latency across servers, server.nvlink_bandwidth and "
                  "server.nvlink_latency inside one")
      ->type_name("KEY[=LO:HI]");
  cmd->add_option("--engine", o->engine, "analytical | flow (sets network.engine)")
      ->check(CLI::IsMember({"analytical", "flow"}));
  cmd->add_option("--op", o->op, "the collective of logs that do not say which test ran (allreduce, allgather, ...)");
  cmd->add_option("--set", c->sets, "override a scenario key, e.g. --set server.gpus=4 (repeatable)")
      ->type_name("KEY=VALUE");
  cmd->add_option("--config-add", c->adds, "merge a scenario fragment on top of the scenario before --set (repeatable)")
      ->type_name("FILE");
  cmd->add_option("-f,--format", c->format, "output on stdout: table (default), json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("-o,--out", o->fragment,
                  "write the fitted keys as a scenario fragment (YAML) that bench and train take with --config-add")
      ->type_name("FRAGMENT.yaml");
  cmd->footer(
      "How it works:\n"
      "  Each log's test runs in podnet on a group laid out like the log's ranks (H hosts x G GPUs -> the first\n"
      "  G GPUs of servers 0..H-1), at every size of the log, as bench runs it (NCCL's tuner, channels auto,\n"
      "  unless the scenario or --set says otherwise: match the log's NCCL_ALGO / NCCL_PROTO with\n"
      "  --set collective.algorithms=ring etc.). The fit minimises the sum over sizes of\n"
      "  (podnet busbw / log busbw - 1)^2 by cyclic coordinate descent with a golden-section search per key\n"
      "  (deterministic). Printed: the fitted values, and per size the log's and podnet's busbw and their\n"
      "  ratio. Keys that trade off (an efficiency and the speed it scales) cannot both be fitted: pick one.\n"
      "  Every simulation builds the whole fabric: on a large scenario, shrink it to what the log needs\n"
      "  (--set topology.gpus=64 for a 2-node log) or the fit takes minutes.\n\n"
      "Examples:\n"
      "  podnet calibrate leafspine-8k --set topology.gpus=64 --nccl-tests all_reduce_2nodes.log \\\n"
      "      --out fitted.yaml\n"
      "  podnet bench aipod-16k --config-add fitted.yaml --gpus 0-1023\n"
      "  podnet calibrate aipod-16k --nccl-tests a.log --fit server.nic_speed=100Gbps:800Gbps \\\n"
      "      --fit network.stack_latency=0us:50us --engine analytical\n"
      "  podnet bench aipod-16k --gpus 0-15 --format nccl-tests > sim.log   # a log podnet wrote fits back");
  cmd->callback([&action, c, o] { action = [c, o] { return cmd_calibrate(*c, *o); }; });
}

}  // namespace podnet::cli
