#include "report/bench_report.hpp"

#include <fmt/format.h>
#include <ostream>

#include "report/report.hpp"

namespace podnet::report {

void write_bench_table(const nlohmann::json& d, std::ostream& out) {
  const auto& b = d["bench"];
  out << fmt::format("podnet bench: {} {} on {} GPUs of {} ({} engine, {} routing, {} channel(s), {} QP(s), {} ring "
                     "order)\n",
                     b["op"].get<std::string>(), b["algorithm"].get<std::string>(), b["gpus"].get<int64_t>(),
                     d["run"]["scenario"].get<std::string>(), b["engine"].get<std::string>(),
                     b["routing"].get<std::string>(), b["channels"].get<std::string>(), b["qps"].get<int>(),
                     b["ring_order"].get<std::string>());
  if (b.contains("algorithms"))
    out << fmt::format("  tuner: algorithms {}, protocols {}, {} tables (NCCL's cost model)\n",
                       b["algorithms"].get<std::string>(), b["protocols"].get<std::string>(),
                       b["gpu_arch"].get<std::string>());
  out << "  algbw = size / time, busbw = algbw x " << b["bus_factor_formula"].get<std::string>()
      << " (nccl-tests definitions); GB/s = 1e9 bytes/s\n\n";
  Table t({"size (B)", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "algo", "proto", "channels", "NCCL model (us)"});
  for (const auto& r : d["rows"]) {
    const std::string algo = r.value("algorithm", std::string("-"));
    const std::string proto = r.value("protocol", std::string(""));
    const std::string ch = r.contains("channels") ? std::to_string(r["channels"].get<int>()) : "-";
    const std::string model = r.contains("nccl_model_us") ? fixed(r["nccl_model_us"].get<double>(), 2) : "-";
    if (r["algbw_gbps"].is_null()) {  // the job stopped: no bandwidth to report
      t.add({thousands(r["bytes"].get<int64_t>()), "job failed", "-", "-", algo, proto.empty() ? "-" : proto, ch,
             model});
      continue;
    }
    t.add({thousands(r["bytes"].get<int64_t>()), fixed(r["time_us"].get<double>(), 2),
           fixed(r["algbw_gbps"].get<double>(), 2), fixed(r["busbw_gbps"].get<double>(), 2), algo,
           proto.empty() ? "-" : proto, ch, model});
  }
  t.write(out, "  ");
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
    for (const auto& e : last["failures"]) {
      std::string outcome;
      if (e["flows_rerouted"].get<int64_t>() > 0)
        outcome = fmt::format(" -> {} flow(s) rerouted at {} us", e["flows_rerouted"].get<int64_t>(),
                              fixed(e["repaired_at_us"].get<double>(), 1));
      out << fmt::format("    {} us  {}{}\n", fixed(e["at_us"].get<double>(), 1), e["what"].get<std::string>(),
                         outcome);
    }
    if (last["job_failed"].get<bool>())
      out << "  JOB FAILED at " << fixed(last["failed_at_us"].get<double>(), 1)
          << " us: " << last["failure"].get<std::string>() << "\n";
  }
  if (!d["hottest_links"].empty()) {
    out << "\n  hottest links at " << thousands(d["rows"].back()["bytes"].get<int64_t>()) << " B:\n";
    Table h({"link", "mean util", "peak util", "bytes"});
    for (const auto& l : d["hottest_links"])
      h.add({l["link"].get<std::string>(), fixed(100 * l["mean_utilization"].get<double>(), 1) + "%",
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
