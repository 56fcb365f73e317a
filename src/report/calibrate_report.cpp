#include "report/calibrate_report.hpp"

#include <fmt/format.h>
#include <ostream>

#include "report/report.hpp"

namespace podnet::report {

void write_calibrate_table(const nlohmann::json& d, std::ostream& out) {
  const auto& c = d["calibrate"];
  out << fmt::format("podnet calibrate: {} on the {} engine, {} simulations in {} sweep(s)\n",
                     d["run"]["scenario"].get<std::string>(), c["engine"].get<std::string>(),
                     c["evaluations"].get<int64_t>(), c["sweeps"].get<int64_t>());
  out << "  optimizer: " << c["optimizer"].get<std::string>() << "\n\n";
  Table k({"key", "start", "fitted", "fitted / start", "bounds"});
  for (const auto& x : c["keys"])
    k.add({x["key"].get<std::string>(), x["start"].get<std::string>(), x["fitted"].get<std::string>(),
           fixed(x["ratio"].get<double>(), 4), x["lo"].get<std::string>() + " .. " + x["hi"].get<std::string>()});
  k.write(out, "  ");
  const auto& logs = c["logs"];
  for (size_t i = 0; i < logs.size(); ++i) {
    const auto& l = logs[i];
    out << fmt::format("\n  {}: {} on {} host(s) x {} GPU(s)\n", l["source"].get<std::string>(),
                       l["op"].get<std::string>(), l["hosts"].get<int64_t>(), l["ranks_per_host"].get<int64_t>());
    const std::string log_algo = l["log_algo"].get<std::string>();
    const std::string log_proto = l["log_proto"].get<std::string>();
    if (log_algo.empty())
      out << "    the log does not say which algorithm NCCL ran (no NCCL_ALGO in it): podnet timed its own choice\n";
    else
      out << fmt::format(
          "    the log ran NCCL_ALGO={}{}: {}\n", log_algo, log_proto.empty() ? "" : " NCCL_PROTO=" + log_proto,
          l["log_algo_applied"].get<bool>()
              ? "podnet timed the same"
              : "not applied (the scenario or --set chose collective.algorithms, or NCCL's model is off)");
    const std::string log_ran = log_algo.empty() ? "not in log" : log_algo;
    Table t({"size (B)", "log time (us)", "log busbw (GB/s)", "podnet time (us)", "podnet busbw (GB/s)", "podnet / log",
             "podnet timed", "log ran"});
    for (const auto& r : c["rows"]) {
      if (r["log"].get<size_t>() != i) continue;
      const std::string proto = r["protocol"].get<std::string>();
      t.add({thousands(r["bytes"].get<int64_t>()), fixed(r["log_time_us"].get<double>(), 2),
             fixed(r["log_busbw_gbyte_per_s"].get<double>(), 2), fixed(r["fit_time_us"].get<double>(), 2),
             fixed(r["fit_busbw_gbyte_per_s"].get<double>(), 2), fixed(r["ratio"].get<double>(), 3),
             r["algorithm"].get<std::string>() + (proto.empty() ? "" : " / " + proto), log_ran});
    }
    t.write(out, "    ");
  }
  out << fmt::format("\n  residual (podnet busbw / log busbw - 1) over {} sizes: rms {}% at the fitted values "
                     "({}% at the start), max {}%\n",
                     c["rows"].size(), fixed(100 * c["rms_fit"].get<double>(), 2),
                     fixed(100 * c["rms_start"].get<double>(), 2), fixed(100 * c["max_abs_fit"].get<double>(), 2));
  for (const auto& n : c["notes"]) out << "  note: " << n.get<std::string>() << "\n";
  for (const auto& n : c["doubts"]) out << "  not trusted: " << n.get<std::string>() << "\n";
}

nlohmann::json calibrate_json(const study::Calibration& c) {
  nlohmann::json keys = nlohmann::json::array();
  for (const auto& k : c.keys)
    keys.push_back({{"key", k.key},
                    {"start", k.start_text},
                    {"fitted", k.text},
                    {"lo", k.lo_text},
                    {"hi", k.hi_text},
                    {"ratio", round_to(k.start != 0 ? k.value / k.start : 0, 6)}});
  nlohmann::json logs = nlohmann::json::array();
  for (const auto& l : c.logs)
    logs.push_back({{"source", l.source},
                    {"op", l.op},
                    {"hosts", l.hosts},
                    {"ranks_per_host", l.ranks_per_host},
                    {"log_algo", l.log_algo},
                    {"log_proto", l.log_proto},
                    {"log_algo_applied", l.log_algo_applied},
                    {"log_proto_applied", l.log_proto_applied}});
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : c.rows)
    rows.push_back({{"log", r.log},
                    {"line", r.line},
                    {"bytes", r.bytes},
                    {"log_time_us", round_to(r.log_time_us, 3)},
                    {"log_busbw_gbyte_per_s", round_to(r.log_busbw, 4)},
                    {"start_time_us", round_to(r.start_time_us, 3)},
                    {"fit_time_us", round_to(r.fit_time_us, 3)},
                    {"fit_busbw_gbyte_per_s", round_to(r.fit_busbw, 4)},
                    {"ratio", round_to(r.ratio, 4)},
                    {"algorithm", r.algorithm},
                    {"protocol", r.protocol}});
  return {{"engine", c.engine},
          {"keys", keys},
          {"logs", logs},
          {"rows", rows},
          {"rms_start", round_to(c.rms_start, 6)},
          {"rms_fit", round_to(c.rms_fit, 6)},
          {"max_abs_fit", round_to(c.max_abs_fit, 6)},
          {"evaluations", c.evaluations},
          {"refused", c.refused},
          {"sweeps", c.sweeps},
          {"notes", c.notes},
          {"trusted", c.doubts.empty()},
          {"doubts", c.doubts},
          {"max_trusted_rms", study::kMaxTrustedRms},
          {"optimizer", "cyclic coordinate descent, golden-section line search per key (24 steps, log space for "
                        "positive bounds), sweeps until no key moves by 1e-4 of its range (at most 8)"},
          {"residual", "busbw_podnet / busbw_log - 1 = time_log / time_podnet - 1, per size"}};
}

}  // namespace podnet::report
