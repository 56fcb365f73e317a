#include "report/bench_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <ostream>
#include <set>

#include "collective/ring_order.hpp"
#include "engine/backend.hpp"
#include "engine/packet/packet_options.hpp"
#include "engine/registry.hpp"
#include "report/nccl_tests.hpp"
#include "report/report.hpp"
#include "routing/policies.hpp"
#include "telemetry/export.hpp"

namespace podnet::report {

namespace {

const char* factor_formula(collective::Op op) {
  switch (op) {
    case collective::Op::AllReduce: return "2(n-1)/n";
    case collective::Op::AllGather:
    case collective::Op::ReduceScatter:
    case collective::Op::AllToAll: return "(n-1)/n";
    case collective::Op::Incast: return "senders";
    default: return "1";
  }
}

nlohmann::json cdf_json(const engine::FlowTimes& f) {
  nlohmann::json a = nlohmann::json::array();
  for (Time t : f.cdf) a.push_back(round_to(t.seconds() * 1e6, 3));
  return a;
}

nlohmann::json fct_json(const engine::FlowTimes& f) {
  const auto us = [](Time t) { return round_to(t.seconds() * 1e6, 3); };
  return {{"flows", f.flows},    {"min_us", us(f.min)},   {"p50_us", us(f.p50)},  {"p99_us", us(f.p99)},
          {"max_us", us(f.max)}, {"mean_us", us(f.mean)}, {"cdf_us", cdf_json(f)}};
}

// The packet engine's counters over a recorder's runs: drops, trims, ECN marks, PAUSE frames sent, the longest
// any port was paused, retransmissions and timeouts, packets lost for good (unreliable delivery); the payload
// the QPs delivered over the observed time;
// Jain's fairness index over the QPs' rates (bytes / (finish - first send): 1 = all equal, 1/n = one QP has it
// all), none without a QP that moved bytes.
struct PacketCounters {
  uint64_t drops = 0, trims = 0, marks = 0, pauses = 0, retx = 0, timeouts = 0, lost = 0;
  double paused_max_s = 0, delivered = 0, seconds = 0;
  std::optional<double> fairness;
};

PacketCounters packet_counters(const telemetry::Recorder& rec) {
  PacketCounters k;
  const telemetry::PortCounters c = telemetry::port_totals(rec);
  k.drops = telemetry::drops(c);
  k.trims = c.trims;
  k.marks = c.ecn_marks;
  k.pauses = c.pause_tx;
  k.retx = c.retransmits;
  for (const auto& port : rec.ports()) k.paused_max_s = std::max(k.paused_max_s, port.paused_s);
  double sum = 0, sum2 = 0;
  int64_t n = 0;
  for (const auto& q : rec.qps()) {
    k.timeouts += q.timeouts;
    k.lost += q.lost;
    k.delivered += static_cast<double>(q.bytes - q.lost_bytes);
    const double t = q.finish_s - q.first_send_s;
    if (q.bytes > 0 && t > 0) {
      const double x = static_cast<double>(q.bytes) / t;
      sum += x;
      sum2 += x * x;
      ++n;
    }
  }
  k.seconds = rec.observed_s();
  if (n > 0 && sum2 > 0) k.fairness = sum * sum / (static_cast<double>(n) * sum2);
  return k;
}

// The counters as a result's fields (bench --compare-cc's row, bench's packet_counters).
void add_counters(nlohmann::json& o, const PacketCounters& k) {
  if (k.fairness) o["fairness"] = round_to(*k.fairness, 3);
  o["goodput_gbit_per_s"] = k.seconds > 0 ? round_to(k.delivered * 8 / k.seconds / 1e9, 3) : 0.0;
  o["drops"] = k.drops;
  o["trimmed"] = k.trims;
  o["ecn_marks"] = k.marks;
  o["pause_frames"] = k.pauses;
  o["paused_max_us"] = round_to(k.paused_max_s * 1e6, 3);
  o["retransmissions"] = k.retx;
  o["timeouts"] = k.timeouts;
  o["lost_packets"] = k.lost;
}

}  // namespace

nlohmann::json packet_counters_json(const telemetry::Recorder& rec) {
  nlohmann::json o = nlohmann::json::object();
  add_counters(o, packet_counters(rec));
  return o;
}

nlohmann::json bench_document(const scenario::Setup& s, const study::BenchResult& r) {
  const scenario::Scenario& sc = s.scenario;
  const Params& coll = sc.section("collective");
  nlohmann::json doc = new_document(context_of(sc, "bench"));
  doc["bench"] = {{"op", collective::op_name(r.op)},
                  {"algorithm", r.algo},
                  {"gpus", r.group.size()},
                  {"engine", s.engine},
                  {"routing", s.network.routing.policy},
                  {"transport", s.network.transport.name},
                  {"channels", coll.text("channels")},
                  {"qps", s.collective.qps},
                  {"algorithms", coll.text("algorithms")},
                  {"protocols", coll.text("protocols")},
                  {"gpu_arch", coll.text("gpu_arch")},
                  {"ring_order", collective::ring_order_name(s.collective.order)},
                  {"bus_factor", round_to(r.bus_factor, 6)},
                  {"bus_factor_formula", factor_formula(r.op)},
                  {"units",
                   {{"time_us", "microseconds"},
                    {"algbw_gbyte_per_s", "GB/s = 1e9 bytes/s (nccl-tests)"},
                    {"busbw_gbyte_per_s", "GB/s = 1e9 bytes/s (nccl-tests)"}}}};
  // The scenario's hidden faults (its faults: section): a run they slow must say they were there (a PFC storm
  // made a 1 MiB all-reduce 12x slower, and only stderr said so).
  if (!sc.faults.empty()) {
    nlohmann::json faults = nlohmann::json::array();
    for (const auto& f : sc.faults) {
      std::string what = fmt::format("{} on {} {}", f.kind, f.target_kind, f.target);
      if (f.at.ps > 0) what += " from " + format_time(f.at);
      if (f.duration.ps > 0) what += " for " + format_time(f.duration);
      faults.push_back(what);
    }
    doc["bench"]["faults"] = faults;
  }
  // The packet engine: the congestion control and flow control that ran (a preset's keys yield to the
  // scenario's, so the preset's name alone does not say).
  if (engine::engine_info(s.engine).traits.packet_faults) {
    TransportRun t;
    describe_transport(t, s);
    doc["bench"]["cc"] = t.cc;
    doc["bench"]["flow_control"] = t.flow_control;
    doc["bench"]["delivery"] = t.delivery;
    doc["bench"]["packet_engine"] = s.network.packet.partitioned ? "partitioned" : "sequential";
    // The units the fabric is cut into: at most this many threads (or ranks) share the run.
    if (s.network.packet.partitioned) doc["bench"]["partition_units"] = engine::packet::partition_unit_count(s.fabric);
  }
  // The traffic patterns (collective/patterns.hpp): what drew or chose their flows.
  if (r.op == collective::Op::Permutation) doc["bench"]["permutation_seed"] = s.collective.seed;
  if (r.op == collective::Op::Incast && !r.group.empty()) {
    const auto n = static_cast<int64_t>(r.group.size());
    doc["bench"]["incast_receiver"] = r.group.front();
    doc["bench"]["incast_senders"] = s.collective.incast_senders > 0 ? s.collective.incast_senders : n - 1;
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& b : r.rows) {
    const engine::RunReport& run = b.run;
    const double seconds = run.makespan.seconds();
    const double algbw = seconds > 0 ? static_cast<double>(b.bytes) / seconds / 1e9 : 0;
    nlohmann::json row = {{"bytes", b.bytes},
                          {"time_us", round_to(seconds * 1e6, 3)},
                          {"algbw_gbyte_per_s", round_to(algbw, 4)},
                          {"busbw_gbyte_per_s", round_to(algbw * r.bus_factor, 4)},
                          {"algorithm", b.algorithm},
                          {"protocol", b.protocol},
                          {"channels", b.channels}};
    if (run.job_failed) row["algbw_gbyte_per_s"] = row["busbw_gbyte_per_s"] = nullptr;  // stopped: time_us is when
    if (b.baseline) {
      const Time base = b.baseline->makespan;
      row["baseline_time_us"] = round_to(base.seconds() * 1e6, 3);
      // no slowdown for a job that stopped (time_us is then when it stopped)
      row["slowdown"] = run.job_failed ? nlohmann::json(nullptr)
                                       : nlohmann::json(round_to(base.ps > 0 ? seconds / base.seconds() : 1.0, 4));
      row["scheduled"] = b.scheduled;
      row["job_failed"] = run.job_failed;
      if (run.job_failed) {
        row["failure"] = run.failure;
        row["failed_at_us"] = round_to(run.failed_at.seconds() * 1e6, 3);
      }
      nlohmann::json evs = nlohmann::json::array();
      for (const auto& f : run.failures)
        evs.push_back({{"at_us", round_to(f.at.seconds() * 1e6, 3)},
                       {"what", f.what},
                       {"flows_rerouted", f.flows_rerouted},
                       {"repaired_at_us", round_to(f.repaired.seconds() * 1e6, 3)}});
      row["failures"] = evs;
    }
    if (b.nccl_model_us) row["nccl_model_us"] = round_to(*b.nccl_model_us, 3);
    if (b.fct) row["fct"] = fct_json(*b.fct);
    if (b.baseline_fct) row["baseline_fct"] = fct_json(*b.baseline_fct);
    rows.push_back(row);
  }
  doc["rows"] = rows;
  // The packet engine's counters, over every size's run (the runs with failures when there are any): what a
  // sweep or a diff of congestion controls compares beside the times.
  if (r.telemetry.recorder && r.telemetry.recorder->packet_level()) {
    nlohmann::json c = {{"sizes", r.rows.size()}};
    add_counters(c, packet_counters(*r.telemetry.recorder));
    doc["packet_counters"] = c;
  }
  if (!engine::engine_info(s.engine).traits.contention)
    doc["notes"] = {s.engine +
                    " engine: a collective's own concurrent transfers share the links they use (one "
                    "collective alone agrees with the flow engine; docs/contributing/validation/links-analytical.md), "
                    "but a collective does not "
                    "contend with other traffic"};
  // The torus's own collectives (collective/torus.hpp) are not NCCL's: say what ran and why.
  for (const auto& b : r.rows)
    if (const collective::AlgorithmInfo* a = collective::find_algorithm(b.algorithm); a && a->own_parts) {
      if (!doc.contains("notes")) doc["notes"] = nlohmann::json::array();
      doc["notes"].push_back(
          "torus collectives (not NCCL's): each phase runs rings along the lines of one dimension; torus splits "
          "the data so that every dimension works at once, torus_dimorder and torus_astra do not; no NCCL "
          "protocol, each step costs its link's latency. On a NIC-less torus auto runs torus where its estimate "
          "(its busiest link's bytes, plus its steps' latency) is no slower than NCCL's ring's, size by size "
          "(--algo ring or torus forces one)");
      break;
    }
  nlohmann::json hot = nlohmann::json::array();
  static const engine::RunReport kNoRun;
  const engine::RunReport& last = r.rows.empty() ? kNoRun : r.rows.back().run;
  for (const auto& l : last.hottest)
    hot.push_back({{"link", engine::dir_link_name(s.fabric, l.link)},
                   {"bytes", static_cast<int64_t>(l.bytes + 0.5)},
                   // over a failed run (stalled until the collective's timeout) a mean is no load: null
                   {"mean_utilization",
                    last.job_failed ? nlohmann::json(nullptr) : nlohmann::json(round_to(l.mean_utilization, 4))},
                   {"peak_utilization", round_to(l.peak_utilization, 4)}});
  doc["hottest_links"] = hot;
  doc["engine_stats"] = {{"flows", last.flows}, {"solves", last.solves}};  // of the last size
  // Per link class (the fabric's tiers of links), per size in row order: the mean and the highest of its
  // directed links' mean utilizations, and how many carried bytes and their mean (engine::ClassLoad).
  std::vector<std::string> classes;
  std::map<std::string, int64_t> class_links;
  for (const auto& b : r.rows)
    for (const auto& c : b.run.by_class)
      if (class_links.emplace(c.link_class, c.links).second) classes.push_back(c.link_class);
  nlohmann::json util = nlohmann::json::array();
  for (const auto& name : classes) {
    nlohmann::json mean = nlohmann::json::array(), max = nlohmann::json::array();
    nlohmann::json used = nlohmann::json::array(), used_mean = nlohmann::json::array();
    for (const auto& b : r.rows) {
      const auto it = std::find_if(b.run.by_class.begin(), b.run.by_class.end(),
                                   [&](const engine::ClassLoad& c) { return c.link_class == name; });
      const bool has = it != b.run.by_class.end();
      mean.push_back(has ? round_to(it->mean_utilization, 4) : 0.0);
      max.push_back(has ? round_to(it->max_utilization, 4) : 0.0);
      used.push_back(has ? it->used_links : 0);
      used_mean.push_back(has ? round_to(it->used_mean_utilization, 4) : 0.0);
    }
    util.push_back({{"link_class", name},
                    {"links", class_links[name]},
                    {"mean_utilization", mean},
                    {"max_utilization", max},
                    {"used_links", used},
                    {"used_mean_utilization", used_mean}});
  }
  doc["link_class_utilization"] = util;
  if (r.ring) {
    const collective::RingStats& rs = *r.ring;
    doc["ring"] = {{"hops", rs.hops},
                   {"intra_server", rs.intra_server},
                   {"intra_group", rs.cross_server},
                   {"inter_group", rs.cross_group},
                   {"inter_pod", rs.cross_pod},
                   {"cross_rail", rs.cross_rail_hops},
                   {"label", r.ring_label}};
  }
  return doc;
}

void write_bench_nccl_tests(const nlohmann::json& doc, const scenario::Setup& s, const study::BenchResult& r,
                            std::ostream& out) {
  const topology::Topology& topo = s.fabric;
  std::vector<study::NcclTestsRank> ranks;
  for (size_t k = 0; k < r.group.size(); ++k) {
    const topology::Node& g = topo.nodes[topo.gpus[r.group[k]]];
    ranks.push_back({static_cast<int>(k), 0, static_cast<int>(k), topology::server_name(g.server, topo.servers),
                     g.local, "podnet simulated GPU"});
  }
  write_nccl_tests(doc, ranks, out);
}

void write_bench_table(const nlohmann::json& d, std::ostream& out) {
  const auto& b = d["bench"];
  // A traffic pattern is its own algorithm ("incast incast"): name it once.
  const std::string algo = b["algorithm"].get<std::string>() == b["op"].get<std::string>()
                               ? std::string()
                               : fmt::format(" {}", b["algorithm"].get<std::string>());  // (GCC 12 warns on " " + s)
  // The ring order only when the plan has rings, the tuner only for what it chooses: a traffic pattern, an
  // all-to-all or a send/recv is not NCCL-tuned (their lines said 'topology_aware ring order' and 'tuner:
  // algorithms auto' over an incast).
  const std::string op = b["op"].get<std::string>();
  // Nor the torus's own collectives (collective/torus.hpp), which NCCL's tuner does not pick.
  const collective::AlgorithmInfo* named = collective::find_algorithm(b["algorithm"].get<std::string>());
  // "auto" on a torus picks the torus's own collectives at every size: no row is NCCL's then.
  bool any_nccl_row = d["rows"].empty();
  for (const auto& r : d["rows"]) {
    const collective::AlgorithmInfo* a = collective::find_algorithm(r.value("algorithm", std::string()));
    any_nccl_row = any_nccl_row || !(a && a->own_parts);
  }
  const bool tuned = algo.size() > 0 && op != "alltoall" && op != "sendrecv" && !(named && named->own_parts) &&
                     any_nccl_row;
  // Channels left to NCCL's tuner vary with the size: the table gives each row's.
  const std::string channels = b["channels"].get<std::string>();
  const int qps = b["qps"].get<int>();
  // The transport (its headers' share of the wire) on every engine; the packet engine's line below names it
  // with its congestion control.
  const std::string transport = b.contains("cc") || !b.contains("transport") ? std::string()
                                                                             : b["transport"].get<std::string>() + ", ";
  // An incast's GPUs are its senders and the receiver, not every GPU of --gpus (the pattern line below says which).
  const int64_t gpus = b.contains("incast_senders") ? b["incast_senders"].get<int64_t>() + 1 : b["gpus"].get<int64_t>();
  out << fmt::format("podnet bench: {}{} on {} GPUs of {} ({} engine, {} routing, {}{}{}{})\n", op, algo,
                     thousands(gpus), d["run"]["scenario"].get<std::string>(), b["engine"].get<std::string>(),
                     b["routing"].get<std::string>(), transport,
                     channels == "auto"
                         ? (tuned ? "channels as NCCL picks them" : "channels as the algorithm picks them")
                     : channels == "1" ? "1 channel"
                                       : channels + " channels",
                     qps == 1 ? std::string() : ", " + plural(qps, "queue pair", "queue pairs") + " per connection",
                     d.contains("ring") ? ", " + b["ring_order"].get<std::string>() + " ring order" : "");
  if (b.contains("cc"))
    out << fmt::format("  transport {}, congestion control {}, flow control {}, delivery {}{}\n",
                       b["transport"].get<std::string>(), b["cc"].get<std::string>(),
                       b["flow_control"].get<std::string>(), b.value("delivery", std::string("-")),
                       b.value("packet_engine", "") == "partitioned"
                           ? fmt::format("; partitioned engine, {} units (the same results on every thread and rank "
                                         "count)",
                                         thousands(b.value("partition_units", 0)))
                           : "");
  if (b.contains("faults")) {
    std::string list;
    for (const auto& f : b["faults"]) list += (list.empty() ? "" : "; ") + f.get<std::string>();
    out << fmt::format("  faults (the scenario's faults: section): {}{}\n", list,
                       engine::engine_info(b["engine"].get<std::string>()).traits.packet_faults
                           ? ""
                           : " (only the packet engine simulates PFC storms and drifted thresholds)");
  }
  if (tuned && b.contains("algorithms"))
    out << fmt::format("  tuner: algorithms {}, protocols {}, {} tables (NCCL's cost model)\n",
                       b["algorithms"].get<std::string>(), b["protocols"].get<std::string>(),
                       b["gpu_arch"].get<std::string>());
  if (b.contains("permutation_seed"))
    out << fmt::format("  pattern: each GPU sends the size to one other, a uniformly random derangement drawn from "
                       "seed {}\n",
                       b["permutation_seed"].get<uint64_t>());
  if (b.contains("incast_receiver")) {
    const int64_t senders = b["incast_senders"].get<int64_t>();
    out << fmt::format("  pattern: {} senders ({} after the first of --gpus) each send the size to GPU {}\n", senders,
                       senders + 1 == b["gpus"].get<int64_t>() ? std::string("the GPUs")
                                                               : fmt::format("the {} GPUs", senders),
                       b["incast_receiver"].get<int64_t>());
  }
  if (b.contains("incast_receiver"))
    out << "  algbw = size / time, busbw = algbw x senders: what the receiver's link takes in (nccl-tests has no "
           "incast); GB/s = 1e9 bytes/s\n";
  else
    out << "  algbw = size / time, busbw = algbw x " << b["bus_factor_formula"].get<std::string>()
        << " (nccl-tests definitions); GB/s = 1e9 bytes/s\n";
  if (tuned && b.contains("algorithms"))
    out << "  NCCL model: NCCL's own cost model for the chosen algorithm and protocol on NCCL's channels ('-' when "
           "--channels fixes them)\n";
  if (!d["rows"].empty() && d["rows"][0].contains("slowdown"))
    out << "  times and bandwidths are with the injected failures; the failure-free baseline is below\n";
  out << "\n";
  // The protocol and NCCL's model only for NCCL's algorithms.
  std::vector<std::string> head = {"size (B)", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "algo"};
  if (tuned) head.insert(head.end(), {"proto", "channels", "NCCL model (us)"});
  else head.emplace_back("channels");
  Table t(head);
  const auto add = [&](std::vector<std::string> row) {
    if (!tuned) row = {row[0], row[1], row[2], row[3], row[4], row[6]};
    t.add(row);
  };
  for (const auto& r : d["rows"]) {
    const std::string algo = r.value("algorithm", std::string("-"));
    const std::string proto = r.value("protocol", std::string(""));
    const std::string ch = r.contains("channels") ? std::to_string(r["channels"].get<int>()) : "-";
    const std::string model = r.contains("nccl_model_us") ? fixed(r["nccl_model_us"].get<double>(), 2) : "-";
    if (r["algbw_gbyte_per_s"].is_null()) {  // the job stopped: no bandwidth to report
      add({thousands(r["bytes"].get<int64_t>()), "job failed", "-", "-", algo, proto.empty() ? "-" : proto, ch, model});
      continue;
    }
    add({thousands(r["bytes"].get<int64_t>()), fixed(r["time_us"].get<double>(), 2),
         fixed(r["algbw_gbyte_per_s"].get<double>(), 2), fixed(r["busbw_gbyte_per_s"].get<double>(), 2), algo,
         proto.empty() ? "-" : proto, ch, model});
  }
  t.write(out, "  ");
  if (!d["rows"].empty() && d["rows"][0].contains("fct")) {
    out << "\n  flow completion times (us; from when a flow may send to its last byte; nearest-rank percentiles):\n";
    const bool base = d["rows"][0].contains("baseline_fct");
    std::vector<std::string> head = {"size (B)", "flows", "min", "p50", "p99", "max", "mean"};
    if (base) head.emplace_back("baseline p99");
    Table f(head);
    for (const auto& r : d["rows"]) {
      if (!r.contains("fct")) continue;  // a size whose job stopped
      const auto& x = r["fct"];
      std::vector<std::string> cells = {thousands(r["bytes"].get<int64_t>()), thousands(x["flows"].get<int64_t>()),
                                        fixed(x["min_us"].get<double>(), 2),  fixed(x["p50_us"].get<double>(), 2),
                                        fixed(x["p99_us"].get<double>(), 2),  fixed(x["max_us"].get<double>(), 2),
                                        fixed(x["mean_us"].get<double>(), 2)};
      if (base) cells.push_back(r.contains("baseline_fct") ? fixed(r["baseline_fct"]["p99_us"].get<double>(), 2) : "-");
      f.add(cells);
    }
    f.write(out, "  ");
    // The time above the slowest flow: what the flows waited for before they could send (an all-to-all's posting).
    const auto& last = d["rows"].back();
    if (last.contains("fct") && d["bench"]["op"] == "alltoall" &&
        last["time_us"].get<double>() > last["fct"]["max_us"].get<double>() + 1.0)
      out << fmt::format("  the time is {} us above the slowest flow: NCCL's proxy posts each peer's send and receive "
                         "before the flows go (1 us a post, 2 us a peer across servers, and a launch), and podnet "
                         "runs the posts before every flow, not beside them\n",
                         fixed(last["time_us"].get<double>() - last["fct"]["max_us"].get<double>(), 2));
  }
  if (!d["rows"].empty() && d["rows"][0].contains("slowdown")) {
    out << "\n  with failures (the same plan without them as the baseline):\n";
    Table f({"size (B)", "baseline (us)", "with failures (us)", "slowdown", "outcome"});
    for (const auto& r : d["rows"])
      f.add({thousands(r["bytes"].get<int64_t>()), fixed(r["baseline_time_us"].get<double>(), 2),
             fixed(r["time_us"].get<double>(), 2),
             r["slowdown"].is_null() ? "-" : fixed(r["slowdown"].get<double>(), 3) + "x",
             r["job_failed"].get<bool>()
                 ? "JOB FAILED at " + fixed(r["failed_at_us"].get<double>(), 1) + " us (see below)"
                 : "completed"});
    f.write(out, "  ");
    const auto& last = d["rows"].back();
    out << fmt::format("  events at {} B: {} scheduled, {} applied before the run ended\n",
                       thousands(last["bytes"].get<int64_t>()), last["scheduled"].get<int64_t>(),
                       last["failures"].size());
    size_t shown = 0;
    std::string before;
    for (const auto& e : last["failures"]) {
      if (++shown > kEventsShown) {
        out << fmt::format("    ... and {} more (--format json lists every event)\n",
                           thousands(static_cast<int64_t>(last["failures"].size() - kEventsShown)));
        break;
      }
      std::string outcome;
      // A link down before the run is routed around from the start: its flows never met it (each such event
      // counted every flow the drain re-routed: "967 flows rerouted at 0.0 us" sixteen times over).
      const bool before_run = e["at_us"].get<double>() == 0 && e["repaired_at_us"].get<double>() == 0;
      if (e["flows_rerouted"].get<int64_t>() > 0 && !before_run)
        outcome = fmt::format(" -> {} rerouted at {} us", plural(e["flows_rerouted"].get<int64_t>(), "flow", "flows"),
                              fixed(e["repaired_at_us"].get<double>(), 1));
      out << fmt::format("    {} us  {}{}\n", fixed(e["at_us"].get<double>(), 1),
                         event_text(e["what"].get<std::string>(), before), outcome);
      before = e["what"].get<std::string>();
    }
    if (last["job_failed"].get<bool>())
      out << "  JOB FAILED at " << fixed(last["failed_at_us"].get<double>(), 1)
          << " us: " << last["failure"].get<std::string>() << "\n";
    // Every size took exactly its failure-free time: say why a failure can cost nothing here.
    bool unchanged = true;
    for (const auto& r : d["rows"])
      unchanged = unchanged && !r["job_failed"].get<bool>() &&
                  r["time_us"].get<double>() == r["baseline_time_us"].get<double>();
    if (unchanged && !last["failures"].empty())
      out << "  note: the runs took exactly their failure-free time: the failed parts carried none of this traffic "
             "(--gpus may leave rails or pods out), or routing moved it to paths with room; the parts are drawn from "
             "the seed, so another seed or --gpus over every rail draws others\n";
  }
  if (!d["hottest_links"].empty()) {
    // A job that failed ran until it was declared failed (a collective's timeout after its traffic stalled): a
    // mean over that time is no link's load (it printed 0.0 %), so the links are shown by peak and bytes.
    const auto& lr = d["rows"].back();
    const bool failed = lr.value("job_failed", false);
    out << "\n  hottest links at " << thousands(lr["bytes"].get<int64_t>()) << " B"
        << (failed ? fmt::format(" (the job failed at {} us: mean utilization over a stalled run is not shown; peak "
                                 "and bytes up to the failure)",
                                 fixed(lr["failed_at_us"].get<double>(), 1))
                   : std::string())
        << ":\n";
    // The packet engine's peak is over 20 us windows from time 0 (packet_options.hpp: util_window): a transfer
    // shorter than a window, or straddling two, reads below its rate. The flow engine's is the rate itself.
    const std::string engine = d["bench"].value("engine", "");
    const bool windows = !engine.empty() && engine::engine_info(engine).traits.packet_faults;
    const std::string peak =
        windows
            ? fmt::format("peak util ({} us)", fixed(engine::packet::PacketOptions{}.util_window.seconds() * 1e6, 0))
            : "peak util";
    Table h({"link", "mean util", peak, "bytes"});
    for (const auto& l : d["hottest_links"])
      h.add({l["link"].get<std::string>(),
             failed || l["mean_utilization"].is_null() ? std::string("-")
                                                       : fixed(100 * l["mean_utilization"].get<double>(), 1) + "%",
             fixed(100 * l["peak_utilization"].get<double>(), 1) + "%", thousands(l["bytes"].get<int64_t>())});
    h.write(out, "    ");
  }
  if (d.contains("notes"))
    for (const auto& n : d["notes"]) out << "\n  note: " << n.get<std::string>() << "\n";
  if (d.contains("ring")) {
    const auto& r = d["ring"];
    out << fmt::format("\n  ring hops (channel 0): {} inside servers, {} across servers in a group, {} across groups, "
                       "{} across pods; {} cross rails\n",
                       r["intra_server"].get<int64_t>(), r["intra_group"].get<int64_t>(),
                       r["inter_group"].get<int64_t>(), r["inter_pod"].get<int64_t>(), r["cross_rail"].get<int64_t>());
  }
}

}  // namespace podnet::report

namespace podnet::report {

void describe_transport(TransportRun& t, const scenario::Setup& s) {
  t.routing = s.network.routing.policy;
  t.transport = s.network.transport.name;
  t.cc = s.network.packet.cc != "auto" ? s.network.packet.cc : s.network.transport.default_cc;
  t.pfc = s.network.packet.pfc;
  t.flow_control = engine::packet::flow_control_name(t.cc, s.network.packet.pfc, s.network.packet.link_credits);
  const routing::PolicyInfo* policy = routing::find_policy(t.routing);
  t.delivery = engine::packet::delivery_name(t.cc, engine::packet::delivery_from(s.network.packet.delivery),
                                             policy && policy->per_packet != routing::PerPacket::None);
}

nlohmann::json compare_document(const scenario::Setup& first, const std::vector<TransportRun>& runs) {
  nlohmann::json doc = new_document(context_of(first.scenario, "bench"));
  // run.overrides: the user's; what each transport set is in compare.transports[].sets.
  {
    nlohmann::json own = nlohmann::json::array();
    for (const auto& o : doc["run"]["overrides"]) {
      const std::string s = o.get<std::string>();
      if (s.rfind("network.engine=", 0) == 0) continue;
      if (std::find(runs.front().sets.begin(), runs.front().sets.end(), s) != runs.front().sets.end()) continue;
      own.push_back(s);
    }
    doc["run"]["overrides"] = own;
  }
  const study::BenchResult& any = runs.front().sizes.front();
  nlohmann::json transports = nlohmann::json::array();
  for (const auto& t : runs)
    transports.push_back({{"name", t.name},
                          {"sets", t.sets},
                          {"transport", t.transport},
                          {"cc", t.cc},
                          {"pfc", t.pfc},
                          {"link_credits", t.flow_control == "link credits"},
                          {"delivery", t.delivery},
                          {"routing", t.routing}});
  // The size is each flow's for the traffic patterns and sendrecv, each rank's for the collectives.
  const bool per_flow = any.op == collective::Op::Incast || any.op == collective::Op::Permutation ||
                        any.op == collective::Op::SendRecv;
  doc["compare"] = {{"op", collective::op_name(any.op)},
                    {"per", per_flow ? "flow" : "rank"},
                    {"gpus", any.group.size()},
                    {"engine", first.engine},
                    {"packet_engine", first.network.packet.partitioned ? "partitioned" : "sequential"},
                    {"transports", transports},
                    {"units",
                     {{"time_us", "microseconds"},
                      {"fct", "microseconds, from when a flow may send to its last byte; nearest-rank percentiles"},
                      {"fct_cdf_us", "101 points: the time by which 0, 1, ..., 100 % of the flows had finished"},
                      {"goodput_gbit_per_s", "payload delivered by every QP / simulated time, Gbps = 1e9 bit/s"}}}};
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& t : runs) {
    for (const auto& r : t.sizes) {
      if (r.rows.empty()) continue;
      const study::BenchRow& b = r.rows.front();
      // What the transport ran, on each row too: a CSV row read alone says it (it had the entry's name only).
      nlohmann::json row = {{"transport", t.name},
                            {"cc", t.cc},
                            {"pfc", t.pfc},
                            {"routing", t.routing},
                            {"delivery", t.delivery},
                            {"bytes", b.bytes},
                            {"time_us", round_to(b.run.makespan.seconds() * 1e6, 3)}};
      if (b.run.job_failed) {  // time_us is when it was declared failed
        row["job_failed"] = true;
        row["failure"] = b.run.failure;
        row["failed_at_us"] = round_to(b.run.failed_at.seconds() * 1e6, 3);
      }
      if (b.fct) {
        row["fct_flows"] = b.fct->flows;
        row["fct_min_us"] = round_to(b.fct->min.us(), 3);
        row["fct_p50_us"] = round_to(b.fct->p50.us(), 3);
        row["fct_p99_us"] = round_to(b.fct->p99.us(), 3);
        row["fct_max_us"] = round_to(b.fct->max.us(), 3);
        row["fct_mean_us"] = round_to(b.fct->mean.us(), 3);
        row["fct_cdf_us"] = cdf_json(*b.fct);
      }
      add_counters(row, r.telemetry.recorder ? packet_counters(*r.telemetry.recorder) : PacketCounters{});
      rows.push_back(row);
    }
  }
  doc["rows"] = rows;
  for (const auto& t : runs)
    if (std::any_of(t.sizes.begin(), t.sizes.end(), [](const study::BenchResult& r) {
          return std::any_of(r.rows.begin(), r.rows.end(),
                             [](const study::BenchRow& b) { return b.baseline.has_value(); });
        })) {
      doc["notes"] = nlohmann::json::array(
          {"every transport ran with the scenario's failures; their failure-free runs and the slowdown are not shown "
           "here (bench one transport without --compare-cc for them)"});
      break;
    }
  return doc;
}

// Transports whose runs agree in every figure (time, FCTs, every counter) are said to: their algorithms made no
// difference on this traffic (dcqcn_nic, timely and none printed one row three times, and the ranking line read
// "+0.0%"). Where no queue reached an ECN algorithm's band, that is why.
static void same_runs(const nlohmann::json& transports, const std::vector<const nlohmann::json*>& rows,
                      std::ostream& out) {
  std::map<std::string, std::vector<const nlohmann::json*>> groups;
  std::vector<std::string> order;
  for (const auto* r : rows) {
    if (r->value("job_failed", false)) continue;
    nlohmann::json figures = *r;
    for (const char* k : {"transport", "cc", "pfc", "routing", "delivery"}) figures.erase(k);
    const std::string key = figures.dump();
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(r);
  }
  for (const auto& key : order) {
    const auto& g = groups[key];
    if (g.size() < 2) continue;
    std::vector<std::string> names;
    bool ecn = false;
    for (const auto* r : g) {
      names.push_back((*r)["transport"].get<std::string>());
      for (const auto& t : transports)
        if (t["name"] == (*r)["transport"] && t["cc"].is_string())
          ecn = ecn || engine::packet::cc_preset(t["cc"].get<std::string>()).ecn;
    }
    // What differs between them (roce_dcqcn and spectrum_x share dcqcn_nic: their routing and ordering differ).
    std::vector<std::string> differ;
    for (const auto& [k, words] : {std::pair<const char*, const char*>{"cc", "congestion controls"},
                                   {"pfc", "PFC settings"},
                                   {"routing", "routing"},
                                   {"delivery", "delivery"}})
      if (std::any_of(g.begin(), g.end(), [&](const nlohmann::json* r) {
            return r->value(k, nlohmann::json()) != g.front()->value(k, nlohmann::json());
          }))
        differ.push_back(words);
    std::string what = "their settings";
    if (!differ.empty()) {
      const std::string tail = differ.back();
      differ.pop_back();
      what = "their " + (differ.empty() ? tail : fmt::format("{} and {}", fmt::join(differ, ", "), tail));
    }
    const std::string last = names.back();
    names.pop_back();
    out << fmt::format("  {} and {}: the same run, every figure to the last digit: {} made no difference on this "
                       "traffic{}\n",
                       fmt::join(names, ", "), last, what,
                       ecn && (*g.front())["ecn_marks"].get<int64_t>() == 0
                           ? " (0 ECN marks: no queue reached the marking band)"
                           : "");
  }
}

void write_compare_table(const nlohmann::json& doc, std::ostream& out) {
  const auto& c = doc["compare"];
  const size_t n = c["transports"].size();
  out << fmt::format("podnet bench: {} transport{} compared on {}, {} GPUs, {}{} engine ({})\n", n, n == 1 ? "" : "s",
                     c["op"].get<std::string>(), thousands(c["gpus"].get<int64_t>()), c["engine"].get<std::string>(),
                     c.value("packet_engine", "") == "partitioned" ? " (partitioned)" : "",
                     doc["run"]["scenario"].get<std::string>());
  // One line per transport: what it runs. The keys its entry set are in the JSON (compare.transports[].sets); a
  // key the line does not show already (none of a built-in preset's) follows it.
  size_t width = 0;
  for (const auto& t : c["transports"]) width = std::max(width, t["name"].get<std::string>().size() + 1);
  for (const auto& t : c["transports"]) {
    std::vector<std::string> other;
    for (const auto& s : t["sets"]) {
      const std::string kv = s.get<std::string>();
      const std::string key = kv.substr(0, kv.find('='));
      static const std::set<std::string> shown = {"network.preset", "network.transport", "network.cc",
                                                  "network.pfc",    "network.routing",   "network.delivery"};
      if (!shown.count(key)) other.push_back(kv);
    }
    const bool credits = t.contains("link_credits") && t["link_credits"].get<bool>();
    out << fmt::format("  {:<{}} {}, cc {}, {}, routing {}, delivery {}{}\n", t["name"].get<std::string>() + ":", width,
                       t["transport"].get<std::string>(), t["cc"].get<std::string>(),
                       credits                ? "link credits"
                       : t["pfc"].get<bool>() ? "PFC on"
                                              : "PFC off",
                       t["routing"].get<std::string>(), t.value("delivery", std::string("-")),
                       other.empty() ? "" : fmt::format("; also {}", fmt::join(other, ", ")));
  }
  std::map<int64_t, std::vector<const nlohmann::json*>> by_size;
  for (const auto& r : doc["rows"]) by_size[r["bytes"].get<int64_t>()].push_back(&r);
  const auto us = [](const nlohmann::json& r, const char* k) {
    return r.contains(k) ? fixed(r[k].get<double>(), 2) : std::string("-");
  };
  for (const auto& [bytes, rows] : by_size) {
    out << fmt::format("\n  {} B per {}:\n", thousands(bytes), c["per"].get<std::string>());
    // Packets lost for good (unreliable delivery) get a column where a transport lost some.
    const bool lost = std::any_of(rows.begin(), rows.end(),
                                  [](const nlohmann::json* r) { return r->value("lost_packets", int64_t{0}) > 0; });
    std::vector<std::string> head = {
        "transport",    "time (us)",    "FCT min (us)",          "FCT p50 (us)",    "FCT p99 (us)",
        "FCT max (us)", "fairness",     "total goodput (Gbps)",  "drops",           "trimmed",
        "ECN marks",    "PAUSE frames", "most paused port (us)", "retransmissions", "timeouts"};
    if (lost) head.push_back("lost, never resent");
    Table t(head);
    const auto failed = [](const nlohmann::json& r) { return r.value("job_failed", false); };
    for (const auto* r : rows) {
      std::vector<std::string> cells = {
          (*r)["transport"].get<std::string>(),
          failed(*r) ? std::string("job failed") : fixed((*r)["time_us"].get<double>(), 2), us(*r, "fct_min_us"),
          us(*r, "fct_p50_us"), us(*r, "fct_p99_us"), us(*r, "fct_max_us"),
          // (a collective's QPs do different work by design: no fairness)
          r->contains("fairness") && r->contains("fct_p50_us") ? fixed((*r)["fairness"].get<double>(), 3)
                                                               : std::string("-"),
          fixed((*r)["goodput_gbit_per_s"].get<double>(), 1), thousands((*r)["drops"].get<int64_t>()),
          thousands((*r)["trimmed"].get<int64_t>()), thousands((*r)["ecn_marks"].get<int64_t>()),
          thousands((*r)["pause_frames"].get<int64_t>()), us(*r, "paused_max_us"),
          thousands((*r)["retransmissions"].get<int64_t>()), thousands((*r)["timeouts"].get<int64_t>())};
      if (lost) cells.push_back(thousands(r->value("lost_packets", int64_t{0})));
      t.add(cells);
    }
    t.write(out, "  ");
    for (const auto* r : rows)
      if (failed(*r))
        out << fmt::format("  {}: JOB FAILED at {} us: {}\n", (*r)["transport"].get<std::string>(),
                           fixed((*r)["failed_at_us"].get<double>(), 1), r->value("failure", std::string("-")));
    // The order a comparison asks for first: by time, and by the slowest flows (FCT p99), each after the first
    // as how much later it is.
    const auto rank = [&](const char* key, const char* what) {
      std::vector<const nlohmann::json*> by(rows.begin(), rows.end());
      // A failed run has no time to rank; one that lost packets for good is marked.
      by.erase(std::remove_if(by.begin(), by.end(),
                              [&](const nlohmann::json* r) { return !r->contains(key) || failed(*r); }),
               by.end());
      const auto lost = [](const nlohmann::json& r) {
        const int64_t n = r.value("lost_packets", int64_t{0});
        return n > 0 ? fmt::format(" ({} packets lost)", thousands(n)) : std::string();
      };
      if (by.size() < 2) return;
      std::stable_sort(by.begin(), by.end(), [&](const nlohmann::json* a, const nlohmann::json* b) {
        return (*a)[key].get<double>() < (*b)[key].get<double>();
      });
      const double best = (*by[0])[key].get<double>();
      std::string line = fmt::format("  by {}: {} {} us{}", what, (*by[0])["transport"].get<std::string>(),
                                     fixed(best, 2), lost(*by[0]));
      // How much later, as a ratio to the first, the same way for every one ("1.013x; 4.903x", as diff's B / A; a
      // line read "+1.3%; 4.9x").
      const auto later = [&](double v) {
        if (!(best > 0)) return fixed(v, 2) + " us";
        return fmt::format("{}x", fixed(v / best, 3));
      };
      for (size_t k = 1; k < by.size(); ++k)
        line += fmt::format("; {} {}{}", (*by[k])["transport"].get<std::string>(), later((*by[k])[key].get<double>()),
                            lost(*by[k]));
      out << line << "\n";
    };
    rank("time_us", "time");
    same_runs(c["transports"], rows, out);
    // (Where the slowest flow ends the run, the FCT order is the time's: said once.)
    if (std::any_of(rows.begin(), rows.end(), [](const nlohmann::json* r) {
          return r->contains("fct_p99_us") && (*r)["fct_p99_us"].get<double>() != (*r)["time_us"].get<double>();
        }))
      rank("fct_p99_us", "FCT p99");
    // An all-to-all's time holds NCCL's posts before its flows: the same for every transport, so say how much.
    double above = 0;
    for (const auto* r : rows)
      if (r->contains("fct_max_us"))
        above = std::max(above, (*r)["time_us"].get<double>() - (*r)["fct_max_us"].get<double>());
    if (c["op"] == "alltoall" && above > 1.0)
      out << fmt::format("  the time is up to {} us above the slowest flow: NCCL's proxy posts every peer's send and "
                         "receive before the flows go, the same for every transport (compare the FCT columns; "
                         "`podnet bench` without --compare-cc says more)\n",
                         fixed(above, 2));
  }
  out << "\n  FCT: from when a flow may send to its last byte (nearest-rank percentiles); fairness: Jain's index of "
         "the "
         "QPs' rates (1 = equal shares); total goodput: the payload all QPs delivered together / the simulated time "
         "(in bits; bench's algbw is per rank, in GB/s); most paused "
         "port: the longest any port spent paused by PFC; counters: every port and QP of that run.\n";
  bool no_fct = true, all_failed = true;
  for (const auto& r : doc["rows"]) {
    no_fct = no_fct && !r.contains("fct_p50_us");
    all_failed = all_failed && r.value("job_failed", false);
  }
  if (no_fct && !all_failed && !doc["rows"].empty() && c["per"] == "rank")
    out << "  FCT and fairness '-': a collective's transfers wait for each other and do different work by design, so "
           "no flow has a completion time or a fair share of its own; its time is the operation's (permutation, "
           "incast and all-to-all give both)\n";
  if (doc.contains("notes"))
    for (const auto& note : doc["notes"]) out << "  note: " << note.get<std::string>() << "\n";
}

}  // namespace podnet::report
