// `podnet bench SCENARIO`: flags -> --set -> study::bench -> report.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <iostream>

#include "cli/common.hpp"
#include "cli/telemetry_options.hpp"
#include "collective/collective.hpp"
#include "collective/gpu_list.hpp"
#include "core/error.hpp"
#include "engine/network_presets.hpp"
#include "engine/packet/packet_options.hpp"
#include "engine/registry.hpp"
#include "report/bench_report.hpp"
#include "report/html.hpp"
#include "report/studies.hpp"
#include "report/web_assets.hpp"
#include "scenario/scenario.hpp"
#include "study/bench.hpp"

namespace podnet::cli {

namespace {

// bench's defaults: the study registry's, the one set every front end uses (report/studies.hpp).
std::string bench_default(const char* name) {
  return report::find_param(*report::find_study("bench"), name)->spec.default_text;
}

struct BenchOptions {
  std::string op = bench_default("op");
  std::string algo = bench_default("algo");  // auto, an algorithm name, or an NCCL_ALGO-style list
  std::string proto;                         // NCCL_PROTO-style list (sets collective.protocols)
  std::string min_size = bench_default("min");
  std::string max_size = bench_default("max");
  double factor = std::stod(bench_default("factor"));
  std::string gpus;
  std::string engine, routing, order, transport;
  std::string html;
  std::string telemetry, telemetry_interval = "10us";
  bool telemetry_all = false;  // --telemetry-all: every port in the metrics files
  std::string compare_cc;      // --compare-cc: congestion controls or network presets, side by side
  bool compare_given = false;
  int channels = 0, qps = 0, senders = 0;
  bool channels_given = false, qps_given = false, senders_given = false, gpus_given = false;
};

// --gpus into the request's group (the fabric's GPU count bounds it).
void set_group(const BenchOptions& b, const scenario::Setup& s, study::BenchRequest& req) {
  if (b.gpus_given && b.gpus.find_first_not_of(" \t") == std::string::npos)
    throw InputError("--gpus '': expected GPU ranks such as 0-7, 0-4095:8 or 0,8,16 (leave --gpus out for every GPU)");
  if (b.gpus.empty()) return;
  req.group = collective::parse_gpu_list(b.gpus, static_cast<int32_t>(s.fabric.gpus.size()));
  // nccl-tests' -g N means N GPUs per process; here --gpus (-g) lists GPU ranks, so "-g 8" is GPU 8 alone.
  if (req.group.size() < 2)
    throw InputError(fmt::format("--gpus {}: a collective needs at least 2 GPUs, and '{}' is the single GPU of "
                                 "rank {} (-g lists GPU ranks, unlike nccl-tests' GPUs per process: for 8 GPUs "
                                 "write -g 0-7)",
                                 b.gpus, b.gpus, req.group.empty() ? 0 : req.group.front()));
}

// --compare-cc A,B,...: the same bench once per transport (a congestion control, network.cc, or a deployment
// preset, network.preset with its keys) and size, on the packet engine; one table side by side.
int cmd_compare(const Common& c0, const BenchOptions& b, const study::BenchRequest& req0) {
  if (!b.telemetry.empty())
    throw InputError("--telemetry: not with --compare-cc (run one transport with --set network.cc=NAME to record it)");
  if (c0.format == "nccl-tests") throw InputError("--format nccl-tests: not with --compare-cc (one transport per log)");
  // The packet-level engine: the one that models congestion control (its PFC, ECN and fault traits).
  const std::string packet = engine::engine_names_with(&engine::EngineTraits::packet_faults);
  if (!b.engine.empty() && !engine::engine_info(b.engine).traits.packet_faults)
    throw InputError(fmt::format("--engine {}: --compare-cc runs the {} engine (the transports are packet-level)",
                                 b.engine, packet));
  // The keys --compare-cc sets per run cannot also be set for all of them.
  const auto given = [&](const std::string& key) {
    return std::any_of(c0.sets.begin(), c0.sets.end(),
                       [&](const std::string& s) { return s.rfind(key + "=", 0) == 0; });
  };
  // (The packet engine itself, from --engine or --set, is what --compare-cc runs anyway.)
  for (const std::string& s : c0.sets)
    if (s.rfind("network.engine=", 0) == 0 && s != "network.engine=" + packet)
      throw InputError(
          fmt::format("--set {}: --compare-cc runs the {} engine (the transports are packet-level)", s, packet));
  for (const char* key : {"network.cc", "network.preset"})
    if (given(key))
      throw InputError(
          fmt::format("--set {}: --compare-cc sets it for each run; leave it out (or name the transport in the list)",
                      key));
  const std::vector<study::TransportChoice> choices = study::transport_choices(b.compare_cc, "--compare-cc", given);
  std::vector<report::TransportRun> runs;
  std::optional<scenario::Setup> first;
  std::vector<std::pair<std::string, std::string>> resolved;  // each transport's resolved scenario (for --out)
  for (const study::TransportChoice& choice : choices) {
    const std::string& name = choice.name;
    Common c = c0;
    report::TransportRun t;
    t.name = name;
    set_by(c, "--compare-cc", "network.engine", packet);
    for (const auto& [key, value] : choice.sets) {  // a preset's keys yield to the command line's (--routing, --set)
      set_by(c, "--compare-cc", key, value);
      t.sets.push_back(key + "=" + value);
    }
    RunLabel label;
    try {
      // Progress lines name the transport and how far the comparison is.
      const std::string which = fmt::format("bench {} ({} of {})", name, runs.size() + 1, choices.size());
      scenario::Setup s = load_setup(c, which, label);
      study::BenchRequest req = req0;
      set_group(b, s, req);
      report::describe_transport(t, s);
      // Each size is a bench of its own; the progress counts the sizes of this transport ([2/5], not [1/1]) and
      // its time from the transport's start.
      const study::Progress all = study_progress(which, label);
      for (size_t k = 0; k < req0.sizes.size(); ++k) {
        study::BenchRequest one = req;
        one.sizes = {req0.sizes[k]};
        study::Progress each = all;
        each.step = [&all, k, n = req0.sizes.size()](size_t, size_t, const std::string& what) {
          all.step(k + 1, n, what);
        };
        t.sizes.push_back(study::bench(s, one, each));
      }
      if (!c0.out_dir.empty()) resolved.emplace_back(name, s.scenario.resolved_yaml(true));
      if (!first) first.emplace(std::move(s));
    } catch (const InputError& e) {
      // The error names the option at fault; say which transport of the comparison was being set up.
      throw InputError(fmt::format("{} (while setting up {} for --compare-cc)", e.what(), name));
    }
    runs.push_back(std::move(t));
  }
  const nlohmann::json doc = report::compare_document(*first, runs);
  emit(c0, first->scenario, doc, "compare", report::write_compare_table);
  // scenario.resolved.yaml is the first transport's; each transport's own, to run it alone, beside it.
  for (const auto& [name, yaml] : resolved) {
    const std::string path = (std::filesystem::path(c0.out_dir) / ("scenario." + name + ".resolved.yaml")).string();
    write_out("--out", path, yaml);
    std::cerr << "podnet: wrote " << path << " (" << name << "'s resolved scenario)\n";
  }
  if (!b.html.empty()) {  // the dashboard's bench page: the flows' completion times as CDFs, the table
    write_out("--html", b.html,
              report::html_page({{"kind", "bench"}, {"document", doc}},
                                "podnet bench --compare-cc " + b.compare_cc + " " + first->scenario.name));
    std::cerr << "podnet: wrote " << b.html << "\n";
  }
  return kExitOk;
}

int cmd_bench(Common c, const BenchOptions& b) {
  if (!b.html.empty() && !report::dashboard_installed())
    throw InputError(std::string("--html: ") + report::kDashboardMissing);
  // Refused before any output directory is made (a refused run leaves nothing behind).
  if (b.compare_given && !b.telemetry.empty())
    throw InputError("--telemetry: not with --compare-cc (run one transport with --set network.cc=NAME to record it)");
  check_output_dir("--out", c.out_dir);
  check_output_file("--html", b.html);
  check_output_dir("--telemetry", b.telemetry);
  // CLI sugar for scenario keys, applied after the user's own --set.
  if (!b.engine.empty()) set_by(c, "--engine", "network.engine", b.engine);
  if (!b.routing.empty()) set_by(c, "--routing", "network.routing", b.routing);
  if (!b.transport.empty()) set_by(c, "--transport", "network.transport", b.transport);
  if (!b.order.empty()) set_by(c, "--order", "collective.ring_order", b.order);
  if (b.channels_given) set_by(c, "--channels", "collective.channels", std::to_string(b.channels));
  if (b.qps_given) set_by(c, "--qps", "collective.qps", std::to_string(b.qps));
  if (b.senders_given) set_by(c, "--senders", "collective.incast_senders", std::to_string(b.senders));
  if (!b.proto.empty()) set_by(c, "--proto", "collective.protocols", b.proto);
  // --algo: "auto", one algorithm's name (fixed), or a list for the tuner ("ring,tree", "^nvls").
  // (The rule every front end applies: study::algo_choice.)
  study::BenchRequest req;
  const study::AlgoChoice algo = study::algo_choice(b.algo, "--algo");
  req.algo = algo.algo;
  if (!algo.scenario_algorithms.empty()) set_by(c, "--algo", "collective.algorithms", algo.scenario_algorithms);
  try {
    req.op = collective::parse_op(b.op);
  } catch (const InputError&) {  // the nearest op, as other misspelt names get it
    throw InputError(fmt::format("--op {}: not a collective{}", b.op, report::op_hint(b.op)));
  }
  // nccl-tests has a program per NCCL collective; podnet's traffic patterns have none to diff against.
  if (c.format == "nccl-tests" && (req.op == collective::Op::Incast || req.op == collective::Op::Permutation))
    throw InputError(fmt::format("--format nccl-tests: nccl-tests has no {} test ({} is podnet's traffic pattern, not "
                                 "an NCCL collective); expected --format table, json or csv",
                                 b.op, b.op));
  // Options that do not apply to the op would be silently ignored: say so.
  if (b.senders_given && req.op != collective::Op::Incast)
    std::cerr << fmt::format("podnet: warning: --senders applies to --op incast; ignored for {}\n", b.op);
  if (!b.proto.empty() && (req.op == collective::Op::AllToAll || req.op == collective::Op::SendRecv ||
                           req.op == collective::Op::Permutation || req.op == collective::Op::Incast))
    std::cerr << fmt::format(
        "podnet: warning: --proto {}: {} is not tuned by NCCL's model (point-to-point transfers, no protocol "
        "choice); ignored\n",
        b.proto, b.op);
  req.sizes = bench_sizes(b.min_size, b.max_size, b.factor);
  req.telemetry = telemetry_request(b.telemetry, b.telemetry_interval);
  if (b.compare_given) return cmd_compare(c, b, req);
  RunLabel label;
  const scenario::Setup s = load_setup(c, "bench", label);
  set_group(b, s, req);
  // All-to-all (pairwise), sendrecv and the traffic patterns send each pair's data as its own flows, over --qps
  // QPs: no channels to split it over (collective/collective.hpp).
  using collective::Op;
  if (b.channels_given &&
      (req.op == Op::AllToAll || req.op == Op::SendRecv || req.op == Op::Permutation || req.op == Op::Incast))
    std::cerr << fmt::format(
        "podnet: warning: --channels {}: --op {} sends each pair's data as its own flow, on --qps QPs, so channels "
        "do not change it (the table's channels column shows the value given)\n",
        b.channels, b.op);
  else if (b.channels_given && req.group.size() >= 2 && s.fabric.torus_dims.empty()) {
    const auto server = [&](int32_t r) { return s.fabric.nodes[s.fabric.gpus[r]].server; };
    bool one_server = true;
    for (int32_t r : req.group) one_server = one_server && server(r) == server(req.group.front());
    if (one_server)
      std::cerr << fmt::format(
          "podnet: warning: --channels {}: inside one server the channels share the NVLink rate whatever their "
          "number (podnet does not cap a channel at one thread block's copy rate), so the time does not change "
          "with it here\n",
          b.channels);
  }
  const study::BenchResult r = study::bench(s, req, study_progress("bench", label));
  const nlohmann::json doc = report::bench_document(s, r);
  emit(c, s.scenario, doc, "bench", report::write_bench_table,
       [&](const nlohmann::json& d, std::ostream& out) { report::write_bench_nccl_tests(d, s, r, out); });
  if (!b.html.empty()) {
    const std::string page =
        report::html_page({{"kind", "bench"}, {"document", doc}}, "podnet bench " + s.scenario.name);
    write_out("--html", b.html, page);
    std::cerr << "podnet: wrote " << b.html << "\n";
  }
  report_telemetry(r.telemetry, b.telemetry, b.telemetry_all);
  return kExitOk;
}

}  // namespace

void add_bench_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto b = std::make_shared<BenchOptions>();
  auto* bench =
      app.add_subcommand("bench", "nccl-tests for a fabric that does not exist yet: time, algbw, busbw per size");
  add_common(bench, *c, true, {"nccl-tests"});
  add_failure_options(bench, *c);
  bench
      ->add_option("--op", b->op,
                   "allreduce, allgather, reducescatter, alltoall, broadcast, reduce, sendrecv, or a traffic pattern: "
                   "permutation (each GPU to one other, a random derangement drawn from the scenario's seed), incast "
                   "(--senders N GPUs to the first GPU of --gpus)")
      ->capture_default_str();
  bench
      ->add_option("--senders", b->senders,
                   "incast: how many senders, the GPUs after the receiver in --gpus (sets collective.incast_senders; "
                   "default all of them)")
      ->each([b](const std::string&) { b->senders_given = true; });
  bench
      ->add_option("--algo", b->algo,
                   "auto (NCCL's tuner picks per size among ring, tree, nvls, nvls_tree, collnet_direct, "
                   "collnet_chain, pat; on a NIC-less torus the torus's own collective where it is no slower), one "
                   "algorithm (see `podnet list`: also torus, torus_dimorder, torus_astra; one of NCCL's also sets "
                   "collective.algorithms), or an NCCL_ALGO-style list for the tuner: ring,tree or ^nvls (sets "
                   "collective.algorithms)")
      ->capture_default_str();
  bench->add_option(
      "--proto", b->proto,
      "protocols the tuner may use, NCCL_PROTO-style: ll,ll128,simple or ^ll (sets collective.protocols)");
  bench
      ->add_option("-b,--min", b->min_size,
                   "smallest size (8B, 64KiB, 1G; as nccl-tests, K/M/G are powers of 1024 and a bare 8 is bytes; "
                   "KB/MB/GB are powers of 1000, as in scenario files)")
      ->capture_default_str();
  bench->add_option("-e,--max", b->max_size, "largest size")->capture_default_str();
  bench->add_option("-F,--factor", b->factor, "size multiplication factor between rows")->capture_default_str();
  bench->add_option("-g,--gpus", b->gpus, "GPU ranks: 0-511, 0-4095:8 (stride), 0,8,16, combinations; default all")
      ->each([b](const std::string&) { b->gpus_given = true; });
  bench
      ->add_option("--html", b->html,
                   "also write a self-contained HTML report: busbw against size, the rows, flow completion times as "
                   "CDFs (with --compare-cc: one line per transport)")
      ->type_name("FILE.html");
  add_telemetry_options(bench, b->telemetry, b->telemetry_interval);
  add_telemetry_all_option(bench, b->telemetry_all);
  bench->add_option("--engine", b->engine,
                    "analytical | flow | packet (sets network.engine; default: the scenario's, else flow)");
  bench->add_option("--routing", b->routing,
                    "routing policy, e.g. ecmp, adaptive, spray, static (sets network.routing)");
  bench->add_option("--transport", b->transport, "rocev2 | infiniband | tcp (sets network.transport)");
  bench->add_option("--channels", b->channels, "NCCL channels (sets collective.channels; default auto, as NCCL)")
      ->each([b](const std::string&) { b->channels_given = true; });
  bench->add_option("--qps", b->qps, "QPs per connection (sets collective.qps)")->each([b](const std::string&) {
    b->qps_given = true;
  });
  bench->add_option("--order", b->order, "ring order: naive | topology_aware (sets collective.ring_order)");
  bench
      ->add_option(
          "--compare-cc", b->compare_cc,
          "run the same traffic under several transports on the packet engine and print them side by side "
          "(time, flow completion times, fairness, goodput, drops, trims, ECN marks, PAUSE frames, retransmissions, "
          "timeouts): congestion controls (network.cc: dcqcn_nic, dctcp, nscc, ...) or deployment presets "
          "(network.preset: roce_dcqcn, uec, uec_rccc, mrc, spectrum_x, infiniband_ar), comma-separated")
      ->type_name("LIST")
      ->each([b](const std::string&) { b->compare_given = true; });
  bench->footer("Examples:\n  podnet bench aipod-16k --op allreduce --min 8B --max 8GiB --gpus 0-1023\n"
                "  podnet bench leafspine-8k --gpus 0-8191:8 --routing adaptive --qps 4 --format json\n"
                "  podnet bench aipod-16k --gpus 0-15 --format nccl-tests > sim.log   # diff against a real "
                "all_reduce_perf log\n"
                "  podnet bench leafspine-8k --op incast --gpus 0-1024:8 --senders 16 --min 1MiB --max 1MiB --engine "
                "packet\n"
                "  podnet bench leafspine-8k --op permutation --gpus 0-1023:8 --set seed=7 --min 4MiB --max 4MiB\n"
                "  podnet bench leafspine-8k --op incast --gpus 0-64:8 --min 1MiB --max 1MiB --set network.pfc=false "
                "--compare-cc dcqcn_nic,dctcp,nscc\n"
                "  # the packet engine on every core, then on 4 processes (the same results):\n"
                "  podnet bench leafspine-8k --op permutation --gpus 0-8191:4 --engine packet --set "
                "network.partitioned=true\n"
                "  mpirun -n 4 podnet bench leafspine-8k --op permutation --gpus 0-8191:4 --engine packet --set "
                "network.partitioned=true");

  bench->callback([&action, c, b] { action = [c, b] { return cmd_bench(*c, *b); }; });
}

}  // namespace podnet::cli
