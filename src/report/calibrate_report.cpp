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
           fixed(x["ratio"].get<double>(), 4),
           x["lo"].get<std::string>() + " .. " + x["hi"].get<std::string>()});
  k.write(out, "  ");
  const auto& logs = c["logs"];
  for (size_t i = 0; i < logs.size(); ++i) {
    const auto& l = logs[i];
    out << fmt::format("\n  {}: {} on {} host(s) x {} GPU(s)\n", l["source"].get<std::string>(),
                       l["op"].get<std::string>(), l["hosts"].get<int64_t>(), l["ranks_per_host"].get<int64_t>());
    Table t({"size (B)", "log time (us)", "log busbw (GB/s)", "podnet time (us)", "podnet busbw (GB/s)",
             "podnet / log"});
    for (const auto& r : c["rows"]) {
      if (r["log"].get<size_t>() != i) continue;
      t.add({thousands(r["bytes"].get<int64_t>()), fixed(r["log_time_us"].get<double>(), 2),
             fixed(r["log_busbw_gbps"].get<double>(), 2), fixed(r["fit_time_us"].get<double>(), 2),
             fixed(r["fit_busbw_gbps"].get<double>(), 2), fixed(r["ratio"].get<double>(), 3)});
    }
    t.write(out, "    ");
  }
  out << fmt::format("\n  residual (podnet busbw / log busbw - 1) over {} sizes: rms {}% at the fitted values "
                     "({}% at the start), max {}%\n",
                     c["rows"].size(), fixed(100 * c["rms_fit"].get<double>(), 2),
                     fixed(100 * c["rms_start"].get<double>(), 2), fixed(100 * c["max_abs_fit"].get<double>(), 2));
}

}  // namespace podnet::report
