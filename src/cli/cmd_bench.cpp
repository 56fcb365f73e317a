#include <chrono>
#include <fmt/format.h>
#include <iostream>
#include <unistd.h>

#include "cli/common.hpp"
#include "collective/collective.hpp"
#include "collective/gpu_list.hpp"
#include "collective/ring_order.hpp"
#include "core/error.hpp"
#include "engine/network_params.hpp"
#include "engine/registry.hpp"
#include "report/bench_report.hpp"
#include "report/nccl_tests.hpp"

namespace podnet::cli {

namespace {

struct BenchOptions {
  std::string op = "allreduce";
  std::string algo = "auto";  // auto, an algorithm name, or an NCCL_ALGO-style list
  std::string proto;          // NCCL_PROTO-style list (sets collective.protocols)
  std::string min_size = "8B";
  std::string max_size = "1GiB";
  double factor = 2;
  std::string gpus;
  std::string engine, routing, order, transport;
  int channels = 0, qps = 0;
};

// Sizes as nccl-tests takes them: a number with B/KB/MB/GB/KiB/... , or K/M/G meaning powers of 1024.
Bytes parse_size(const std::string& text, const char* option) {
  std::string t = text;
  if (!t.empty() && (t.back() == 'K' || t.back() == 'M' || t.back() == 'G' || t.back() == 'T')) t += "iB";
  Bytes b = 0;
  std::string expected;
  if (!parse_bytes(t, b, expected))
    throw InputError(fmt::format("{} {}: expected {} (or K/M/G/T for powers of 1024, as nccl-tests)", option, text,
                                 expected));
  return b;
}

const char* factor_formula(collective::Op op) {
  switch (op) {
    case collective::Op::AllReduce: return "2(n-1)/n";
    case collective::Op::AllGather:
    case collective::Op::ReduceScatter:
    case collective::Op::AllToAll: return "(n-1)/n";
    default: return "1";
  }
}

int cmd_bench(Common c, const BenchOptions& b) {
  // CLI sugar for scenario keys, applied after the user's own --set.
  if (!b.engine.empty()) c.sets.push_back("network.engine=" + b.engine);
  if (!b.routing.empty()) c.sets.push_back("network.routing=" + b.routing);
  if (!b.transport.empty()) c.sets.push_back("network.transport=" + b.transport);
  if (!b.order.empty()) c.sets.push_back("collective.ring_order=" + b.order);
  if (b.channels > 0) c.sets.push_back("collective.channels=" + std::to_string(b.channels));
  if (b.qps > 0) c.sets.push_back("collective.qps=" + std::to_string(b.qps));
  if (!b.proto.empty()) c.sets.push_back("collective.protocols=" + b.proto);
  // --algo: "auto", one algorithm's name (fixed), or a list for the tuner ("ring,tree", "^nvls").
  std::string algo = b.algo.empty() ? "auto" : b.algo;
  if (algo != "auto" && !collective::find_algorithm(algo)) {
    c.sets.push_back("collective.algorithms=" + algo);
    algo = "auto";
  }
  scenario::Scenario sc = load_scenario(c);
  topology::Topology topo = sc.build_topology();
  const collective::Op op = collective::parse_op(b.op);
  const int32_t total = static_cast<int32_t>(topo.gpus.size());
  collective::Group group;
  if (b.gpus.empty()) {
    for (int32_t i = 0; i < total; ++i) group.push_back(i);
  } else {
    group = collective::parse_gpu_list(b.gpus, total);
  }
  const collective::Options copt = collective::options_from(sc.section("collective"));
  if (algo == "auto" && !copt.tuner) algo = collective::default_algorithm(op);  // collective.nccl_model = false
  engine::NetworkOptions nopt = engine::network_options_from(sc.section("network"), sc.seed);
  nopt.links = engine::link_classes_from(sc.section("links"));
  std::string progress_label;  // the size being simulated
  nopt.progress = progress_printer("podnet bench", progress_label,
                                   flow_quantum_hint(sc.section("network").get_string("engine"), nopt));
  const std::string engine_name = sc.section("network").get_string("engine");
  // With `failures:`, every size runs twice: as scheduled, and on the same fabric without failures.
  std::unique_ptr<engine::NetworkBackend> baseline;
  if (!sc.failures.empty()) {
    if (engine_name == "analytical")
      throw InputError(fmt::format("failures are injected by the flow and packet engines (the analytical engine "
                                   "times each transfer in closed form and cannot change the fabric under it); "
                                   "this run uses network.engine = {} (use --engine flow or --engine packet)",
                                   engine_name));
    baseline = engine::make_backend(engine_name, topo, nopt);
    sc.check_failures(topo);  // names checked before any run
  }
  auto backend = engine::make_backend(engine_name, topo, nopt);

  const Bytes lo = parse_size(b.min_size, "--min"), hi = parse_size(b.max_size, "--max");
  if (lo > hi) throw InputError(fmt::format("--min {} is larger than --max {}", b.min_size, b.max_size));
  if (!(b.factor > 1.0) && lo != hi) throw InputError("--factor must be greater than 1");
  std::vector<Bytes> sizes;
  for (double s = static_cast<double>(lo); s <= static_cast<double>(hi) * (1 + 1e-12); s *= b.factor) {
    sizes.push_back(static_cast<Bytes>(s));
    if (lo == hi) break;
  }

  nlohmann::json doc = report::new_document(context_of(sc, "bench"));
  const double factor = collective::bus_factor(op, static_cast<int64_t>(group.size()));
  doc["bench"] = {{"op", collective::op_name(op)}, {"algorithm", algo}, {"gpus", group.size()},
                  {"engine", engine_name}, {"routing", nopt.routing.policy}, {"transport", nopt.transport.name},
                  {"channels", sc.section("collective").text("channels")}, {"qps", copt.qps},
                  {"algorithms", sc.section("collective").text("algorithms")},
                  {"protocols", sc.section("collective").text("protocols")},
                  {"gpu_arch", sc.section("collective").text("gpu_arch")},
                  {"ring_order", collective::ring_order_name(copt.order)}, {"bus_factor", report::round_to(factor, 6)},
                  {"bus_factor_formula", factor_formula(op)},
                  {"units", {{"time_us", "microseconds"}, {"algbw_gbps", "GB/s = 1e9 bytes/s (nccl-tests)"},
                             {"busbw_gbps", "GB/s = 1e9 bytes/s (nccl-tests)"}}}};
  nlohmann::json rows = nlohmann::json::array();
  engine::RunReport last;
  plan::TransferPlan last_plan;
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto wall0 = std::chrono::steady_clock::now();
  for (size_t k = 0; k < sizes.size(); ++k) {
    progress_label = report::thousands(sizes[k]) + " B";
    plan::TransferPlan plan = collective::make_plan(algo, op, group, sizes[k], copt, topo);
    engine::RunReport base;
    size_t scheduled = 0;
    if (baseline) {
      // The failures on the same plan; random ones are drawn over this size's failure-free run.
      base = baseline->run(plan);
      engine::NetworkOptions fopt = nopt;
      fopt.failures.events = sc.failure_events(topo, base.makespan, group);
      scheduled = fopt.failures.events.size();
      last = engine::make_backend(engine_name, topo, fopt)->run(plan);
    } else {
      last = backend->run(plan);
    }
    const double seconds = last.makespan.seconds();
    const double algbw = seconds > 0 ? static_cast<double>(sizes[k]) / seconds / 1e9 : 0;
    nlohmann::json row = {{"bytes", sizes[k]}, {"time_us", report::round_to(seconds * 1e6, 3)},
                          {"algbw_gbps", report::round_to(algbw, 4)}, {"busbw_gbps", report::round_to(algbw * factor, 4)},
                          {"algorithm", plan.algorithm}, {"protocol", plan.protocol}, {"channels", plan.channels}};
    if (last.job_failed) row["algbw_gbps"] = row["busbw_gbps"] = nullptr;  // stopped: time_us is when
    if (baseline) {
      row["baseline_time_us"] = report::round_to(base.makespan.seconds() * 1e6, 3);
      // no slowdown for a job that stopped (time_us is then when it stopped)
      row["slowdown"] = last.job_failed ? nlohmann::json(nullptr)
                                        : nlohmann::json(report::round_to(
                                              base.makespan.ps > 0 ? seconds / base.makespan.seconds() : 1.0, 4));
      row["scheduled"] = scheduled;
      row["job_failed"] = last.job_failed;
      if (last.job_failed) {
        row["failure"] = last.failure;
        row["failed_at_us"] = report::round_to(last.failed_at.seconds() * 1e6, 3);
      }
      nlohmann::json evs = nlohmann::json::array();
      for (const auto& f : last.failures)
        evs.push_back({{"at_us", report::round_to(f.at.seconds() * 1e6, 3)}, {"what", f.what},
                       {"flows_rerouted", f.flows_rerouted},
                       {"repaired_at_us", report::round_to(f.repaired.seconds() * 1e6, 3)}});
      row["failures"] = evs;
    }
    // NCCL's own cost model for the chosen algorithm and protocol, beside the simulated time.
    collective::Algo ma;
    collective::Proto mp;
    if (collective::find_algo(plan.algorithm, ma) && collective::find_proto(plan.protocol, mp))
      row["nccl_model_us"] = report::round_to(
          collective::model_time_us(op, ma, mp, collective::comm_shape(group, topo, copt.arch), sizes[k]), 3);
    rows.push_back(row);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    if (tty || wall > 2.0)
      std::cerr << fmt::format("podnet bench: [{}/{}] {} B done ({:.1f} s elapsed)\n", k + 1, sizes.size(),
                               report::thousands(sizes[k]), wall);
    if (k + 1 == sizes.size()) last_plan = std::move(plan);
  }
  doc["rows"] = rows;
  if (engine_name == "analytical")
    doc["notes"] = {"analytical engine: each transfer alone on the fabric (no contention between transfers), so a "
                    "time is exact for one transfer and a lower bound otherwise"};
  nlohmann::json hot = nlohmann::json::array();
  for (const auto& l : last.hottest)
    hot.push_back({{"link", engine::dir_link_name(topo, l.link)}, {"bytes", static_cast<int64_t>(l.bytes + 0.5)},
                   {"mean_utilization", report::round_to(l.mean_utilization, 4)},
                   {"peak_utilization", report::round_to(l.peak_utilization, 4)}});
  doc["hottest_links"] = hot;
  doc["engine_stats"] = {{"flows", last.flows}, {"solves", last.solves}};  // of the last size
  for (const auto& t : last_plan.transfers) {
    if (t.kind != plan::TransferKind::Ring || t.ranks.size() < 2) continue;
    const collective::RingStats rs = collective::ring_stats(t.ranks, topo, t.open);
    doc["ring"] = {{"hops", rs.hops}, {"intra_server", rs.intra_server}, {"intra_group", rs.cross_server},
                   {"inter_group", rs.cross_group}, {"inter_pod", rs.cross_pod}, {"cross_rail", rs.cross_rail_hops},
                   {"label", t.label}};
    break;
  }
  // --format nccl-tests: one rank line per GPU of the group, named by its server (nccl-tests' host).
  auto nccl_tests = [&](const nlohmann::json& d, std::ostream& out) {
    std::vector<report::NcclTestsRank> ranks;
    for (size_t r = 0; r < group.size(); ++r) {
      const topology::Node& g = topo.nodes[topo.gpus[group[r]]];
      ranks.push_back({static_cast<int>(r), 0, static_cast<int>(r), topology::server_name(g.server, topo.servers),
                       g.local, "podnet simulated GPU"});
    }
    report::write_nccl_tests(d, ranks, out);
  };
  emit(c, sc, doc, "bench", report::write_bench_table, nccl_tests);
  return kExitOk;
}

}  // namespace

void add_bench_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto b = std::make_shared<BenchOptions>();
  auto* bench = app.add_subcommand("bench", "nccl-tests for a fabric that does not exist yet: time, algbw, busbw per size");
  add_common(bench, *c, true, {"nccl-tests"});
  bench->add_option("--op", b->op, "allreduce, allgather, reducescatter, alltoall, broadcast, reduce, sendrecv")
      ->capture_default_str();
  bench->add_option("--algo", b->algo,
                    "auto (NCCL's tuner picks per size among ring, tree, nvls), one algorithm (see `podnet list`), or "
                    "an NCCL_ALGO-style list for the tuner: ring,tree or ^nvls (sets collective.algorithms)")
      ->capture_default_str();
  bench->add_option("--proto", b->proto,
                    "protocols the tuner may use, NCCL_PROTO-style: ll,ll128,simple or ^ll (sets collective.protocols)");
  bench->add_option("-b,--min", b->min_size, "smallest size (8B, 64KiB, 1G: K/M/G are powers of 1024)")->capture_default_str();
  bench->add_option("-e,--max", b->max_size, "largest size")->capture_default_str();
  bench->add_option("-F,--factor", b->factor, "size multiplication factor between rows")->capture_default_str();
  bench->add_option("-g,--gpus", b->gpus, "GPU ranks: 0-511, 0-4095:8 (stride), 0,8,16, combinations; default all");
  bench->add_option("--engine", b->engine, "analytical | flow | packet (sets network.engine)");
  bench->add_option("--routing", b->routing, "routing policy, e.g. ecmp, adaptive, spray, static (sets network.routing)");
  bench->add_option("--transport", b->transport, "rocev2 | infiniband | tcp (sets network.transport)");
  bench->add_option("--channels", b->channels, "NCCL channels (sets collective.channels; default auto, as NCCL)");
  bench->add_option("--qps", b->qps, "QPs per connection (sets collective.qps)");
  bench->add_option("--order", b->order, "ring order: naive | topology_aware (sets collective.ring_order)");
  bench->footer("Examples:\n  podnet bench aipod-16k --op allreduce --min 8B --max 8GB --gpus 0-1023\n"
                "  podnet bench leafspine-8k --gpus 0-8191:8 --routing adaptive --qps 4 --format json\n"
                "  podnet bench aipod-16k --gpus 0-15 --format nccl-tests > sim.log   # diff against a real "
                "all_reduce_perf log");

  bench->callback([&action, c, b] { action = [c, b] { return cmd_bench(*c, *b); }; });
}

}  // namespace podnet::cli
