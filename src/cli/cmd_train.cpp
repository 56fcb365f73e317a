// `podnet train SCENARIO`: one training iteration of the scenario's
// `workload:` on its fabric (placement by `placement.policy`), at the
// `network.engine` fidelity: iteration time, breakdown, MFU, days to train;
// optionally a Chrome trace and a scaling-efficiency sweep. A scenario with
// `jobs:` runs several jobs on the fabric instead (study::jobs).
// Flags -> --set -> study::train -> report.
#include <fmt/format.h>
#include <iostream>
#include <sstream>

#include "cli/common.hpp"
#include "cli/telemetry_options.hpp"
#include "core/error.hpp"
#include "core/params.hpp"
#include "engine/registry.hpp"
#include "report/html.hpp"
#include "report/jobs_report.hpp"
#include "report/train_report.hpp"
#include "report/web_assets.hpp"
#include "study/jobs.hpp"
#include "study/train.hpp"
#include "workload/simai.hpp"

namespace podnet::cli {

namespace {

struct TrainCliOptions {
  std::string trace;
  int32_t trace_links = 0;
  std::string html;
  std::string engine;
  std::string placement;
  bool sweep = false;
  std::string sweep_dp;
  std::string sweep_bw;
  std::string simai_workload;
  std::string simai_topology;
  std::string chakra;
  bool allow_oom = false;
  std::string telemetry, telemetry_interval = "10us";
  bool telemetry_all = false;  // --telemetry-all: every port in the metrics files
};

std::vector<int64_t> parse_dps(const std::string& text) {
  std::vector<int64_t> dps;
  for (const auto& s : split_list(text)) {
    int64_t v = 0;
    if (!parse_int(s, v)) throw InputError(fmt::format("--sweep-dp {}: '{}' is not an integer", text, s));
    dps.push_back(v);
  }
  return dps;
}

std::vector<double> parse_caps(const std::string& text) {
  std::vector<double> caps;
  for (const auto& s : split_list(text)) {
    if (s == "0" || s == "none") {
      caps.push_back(0);
      continue;
    }
    Bandwidth bw;
    std::string expected;
    std::string t = s;
    if (t.find_first_not_of("0123456789.") == std::string::npos) t += "GB/s";  // bare numbers are GB/s
    if (!parse_bandwidth(t, bw, expected))
      throw InputError(fmt::format("--sweep-bw {}: '{}' is not a bandwidth; expected {}", text, s, expected));
    caps.push_back(bw.bytes_per_second());
  }
  return caps;
}

int cmd_train(Common c, const TrainCliOptions& o) {
  if (c.scenario.empty()) c.scenario = kDefaultScenario;
  if (!o.engine.empty()) set_by(c, "--engine", "network.engine", o.engine);
  if (!o.placement.empty()) set_by(c, "--placement", "placement.policy", o.placement);
  if (!o.html.empty() && !report::dashboard_installed())
    throw InputError(std::string("--html: ") + report::kDashboardMissing);
  check_output_dir("--out", c.out_dir);
  check_output_file("--trace", o.trace);
  check_output_file("--html", o.html);
  check_output_dir("--telemetry", o.telemetry);
  study::TrainRequest req;
  req.allow_oom = o.allow_oom;
  req.trace = !o.trace.empty();
  req.trace_links = o.trace_links;
  if (o.trace_links < 0) throw InputError(fmt::format("--trace-links {}: expected a count >= 0", o.trace_links));
  if (o.trace_links > 0 && o.trace.empty())
    throw InputError(
        fmt::format("--trace-links {}: the link counters go into the trace; add --trace FILE.json", o.trace_links));
  req.simai_workload = o.simai_workload;
  req.chakra = o.chakra;
  req.sweep = o.sweep || !o.sweep_dp.empty() || !o.sweep_bw.empty();
  req.sweep_dps = parse_dps(o.sweep_dp);
  req.sweep_caps = parse_caps(o.sweep_bw);
  req.telemetry = telemetry_request(o.telemetry, o.telemetry_interval);
  std::optional<topology::Topology> fabric;
  if (!o.simai_topology.empty()) fabric = workload::simai::load_topology(o.simai_topology);
  RunLabel label{"iteration", Time(0)};
  const scenario::Setup s = load_setup(c, "train", label, std::move(fabric));
  // The output paths were checked above without touching an existing file; they are written only once the
  // run has succeeded, so a failed run leaves a previous trace or page as it was.
  if (!s.scenario.jobs.empty()) {  // several jobs on one fabric (study/jobs.hpp)
    for (const auto& [flag, given] : {std::pair<const char*, bool>{"--trace", !o.trace.empty()},
                                      {"--html", !o.html.empty()},
                                      {"--sweep", req.sweep},
                                      {"--simai-workload", !o.simai_workload.empty()},
                                      {"--chakra", !o.chakra.empty()},
                                      {"--telemetry", !o.telemetry.empty()}})
      if (given)
        throw InputError(fmt::format("{}: not available with several jobs yet (the scenario has `jobs:`); expected "
                                     "a scenario with one `workload:` for it",
                                     flag));
    study::JobsRequest jr;
    jr.allow_oom = o.allow_oom;
    const study::JobsStudy j = study::jobs(s, jr, study_progress("train", label));
    emit(c, s.scenario, report::jobs_document(s, j), "train", report::write_jobs_table);
    return kExitOk;
  }
  const study::TrainStudy t = study::train(s, req, study_progress("train", label));
  const nlohmann::json doc = report::train_document(s, t);
  emit(c, s.scenario, doc, "train", report::write_train_table);
  if (!o.html.empty()) {
    write_out("--html", o.html,
              report::html_page({{"kind", "train"}, {"document", doc}}, "podnet train " + s.scenario.name));
    std::cerr << "podnet: wrote " << o.html << "\n";
  }
  if (!o.trace.empty()) {
    std::ofstream trace = open_out(o.trace);
    report::write_training_trace(t.result, trace);
    close_out(trace, "--trace", o.trace);
    if (o.trace_links > 0 && !engine::engine_info(s.engine).traits.link_series)
      std::cerr << "podnet: --trace-links: link counters come from the "
                << engine::engine_names_with(&engine::EngineTraits::link_series) << " engine; this run is " << s.engine
                << ": the trace has none\n";
    std::cerr << "podnet: wrote trace " << o.trace << " (open in ui.perfetto.dev or chrome://tracing)\n";
  }
  report_telemetry(t.telemetry, o.telemetry, o.telemetry_all);
  return kExitOk;
}

}  // namespace

void add_train_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto o = std::make_shared<TrainCliOptions>();
  auto* cmd = app.add_subcommand(
      "train", "simulate one training iteration of the scenario's workload: iteration time, breakdown, MFU, days to "
               "train (default scenario: aipod-16k)");
  add_common(cmd, *c, false);
  add_failure_options(cmd, *c);
  cmd->add_option("--trace", o->trace, "write a Chrome/Perfetto trace of the iteration (one process per stage)")
      ->type_name("FILE.json");
  cmd->add_option("--trace-links", o->trace_links,
                  "with --trace on the flow engine: the N links that carried the most bytes as counter tracks of "
                  "their utilization (records every link-load step: memory grows with the run)")
      ->type_name("N");
  cmd->add_option("--html", o->html, "also write a self-contained HTML report: the iteration breakdown, every figure")
      ->type_name("FILE.html");
  cmd->add_option("--engine", o->engine,
                  "analytical | flow | packet (sets network.engine; default: the scenario's, else flow). analytical: "
                  "seconds at 131,072 GPUs, each operation alone; flow: links shared over time, about a minute there; "
                  "packet: congestion control and queues, for up to a few thousand GPUs");
  add_telemetry_options(cmd, o->telemetry, o->telemetry_interval);
  add_telemetry_all_option(cmd, o->telemetry_all);
  cmd->add_option("--placement", o->placement, "topology_aware | packed | random (sets placement.policy)");
  cmd->add_flag(
      "--sweep", o->sweep,
      "scaling-efficiency sweep: DP 1, 2, 4, ... up to the job's, at NIC caps as built, 50, 20, 10, 5 GB/s (those "
      "below the NICs' own speed)");
  cmd->add_option("--sweep-dp", o->sweep_dp, "DP sizes of the sweep, e.g. 1,8,64 (the job's own DP is added)");
  cmd->add_option("--sweep-bw", o->sweep_bw, "per-GPU NIC caps of the sweep, e.g. 5,10,20,50 (GB/s) or 0 = as built");
  cmd->add_option("--simai-workload", o->simai_workload,
                  "run a SimAI/AICB workload file instead of the scenario's workload (GPUs: its all_gpus, else the "
                  "fabric's)")
      ->type_name("FILE.txt");
  cmd->add_option("--chakra", o->chakra,
                  "run MLCommons Chakra execution traces instead of the scenario's workload: a directory of "
                  "PREFIX.<rank>.et files, rank r on the r-th GPU of the placement")
      ->type_name("DIR");
  cmd->add_flag("--allow-oom", o->allow_oom,
                "time the job even when it does not fit in the GPU's memory (the report still shows what it needs)");
  cmd->add_option("--simai-topology", o->simai_topology,
                  "use a SimAI .topo file as the fabric instead of the scenario's")
      ->type_name("FILE.topo");
  cmd->footer("Every what-if is a scenario key (--set KEY=VALUE; `podnet list keys` lists them all):\n"
              "  the model      workload.model (`podnet list models`), workload.gpu (`podnet list gpus`)\n"
              "  the cluster    topology.gpus, server.nic_speed with switch.port_speed\n"
              "  the layout     workload.tp, workload.pp, workload.dp, workload.cp, workload.ep\n"
              "  the job        workload.global_batch, workload.microbatch, workload.tokens\n"
              "  podnet diff compares two runs (e.g. --set-b server.nic_speed=800Gbps); podnet sweep runs a grid.\n"
              "\nExamples:\n  podnet train aipod-16k\n"
              "  podnet train aipod-16k --set workload.model=llama3-70b --set workload.tp=8 --set workload.pp=4 "
              "--format json\n"
              "  podnet train aipod-16k --set topology.gpus=4096 --set workload.dp=32 --set workload.global_batch=512\n"
              "  podnet train leafspine-8k --placement random --trace iteration.json --trace-links 8\n"
              "  podnet train leafspine-8k --set topology.gpus=1024 --sweep --sweep-dp 2,4,8 --engine analytical\n"
              "  podnet train aipod-16k --simai-workload workload.txt --simai-topology fabric.topo\n"
              "  podnet train leafspine-8k --chakra traces/ --engine flow --trace chakra.json");
  cmd->callback([&action, c, o] { action = [c, o] { return cmd_train(*c, *o); }; });
}

}  // namespace podnet::cli
