#include "report/nccl_tests.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <ostream>
#include <regex>
#include <sstream>

#include "core/error.hpp"
#include "core/version.hpp"

namespace podnet::report {

std::string nccl_tests_number(double value, int width) {
  for (int decimals : {2, 1, 0}) {
    std::string s = fmt::format("{:>{}.{}f}", value, width, decimals);
    if (static_cast<int>(s.size()) <= width) return s;
  }
  std::string s = fmt::format("{:>{}.{}e}", value, width, width >= 7 ? 1 : 0);
  return s;
}

void write_nccl_tests(const nlohmann::json& doc, const std::vector<NcclTestsRank>& ranks, std::ostream& out) {
  const auto& b = doc["bench"];
  const std::string op = b["op"].get<std::string>();
  static const std::map<std::string, std::string> kProgram = {
      {"allreduce", "all_reduce"}, {"allgather", "all_gather"}, {"reducescatter", "reduce_scatter"},
      {"alltoall", "alltoall"},    {"broadcast", "broadcast"},  {"reduce", "reduce"},
      {"sendrecv", "sendrecv"}};
  const auto p = kProgram.find(op);
  const std::string program = (p == kProgram.end() ? op : p->second) + "_perf";
  const bool reduces = op == "allreduce" || op == "reducescatter" || op == "reduce";
  const bool rooted = op == "broadcast" || op == "reduce";
  const bool per_rank_count = op == "allgather" || op == "reducescatter" || op == "alltoall";
  const int64_t n = std::max<int64_t>(1, b["gpus"].get<int64_t>());
  const auto& rows = doc["rows"];
  const int64_t lo = rows.empty() ? 0 : rows.front()["bytes"].get<int64_t>();
  const int64_t hi = rows.empty() ? 0 : rows.back()["bytes"].get<int64_t>();
  const int64_t step =
      rows.size() > 1 && lo > 0
          ? std::llround(static_cast<double>(rows[1]["bytes"].get<int64_t>()) / static_cast<double>(lo))
          : 2;
  out << fmt::format("# podnet {} ({}): simulated, not measured: scenario {}, {} engine, {} {}\n", version(), git_sha(),
                     doc["run"]["scenario"].get<std::string>(), b["engine"].get<std::string>(), op,
                     b["algorithm"].get<std::string>());
  out << "# Collective test starting: " << program << "\n";
  out << fmt::format("# nThread 1 nGpus 1 minBytes {} maxBytes {} step: {}(factor) warmup iters: 0 iters: 1 agg iters: "
                     "1 validation: 0 graph: 0\n#\n# Using devices\n",
                     lo, hi, step);
  for (const auto& r : ranks)
    out << fmt::format("#  Rank {:2d} Group {:2d} Pid {:6d} on {:>10} device {:2d} [{:04x}:{:02x}:{:02x}] {}\n", r.rank,
                       r.group, r.pid, r.host, r.device, 0, r.device, 0, r.device_name);
  out << "#\n";
  out << fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       in-place          \n", "", "",
      "", "", "");
  out << fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6} \n",
                     "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
                     "busbw", "#wrong");
  out << fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6} \n",
                     "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  double sum_busbw = 0;
  int counted = 0;
  for (const auto& r : rows) {
    const int64_t bytes = r["bytes"].get<int64_t>();
    const int64_t count = bytes / 4 / (per_rank_count ? n : 1);  // float elements
    out << fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", bytes, count, "float", reduces ? "sum" : "none",
                       rooted ? 0 : -1);
    std::string block;
    if (r["algbw_gbyte_per_s"].is_null()) {  // the job stopped (failures): no bandwidth
      block = fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", "failed", "-", "-", "N/A");
    } else {
      const double busbw = r["busbw_gbyte_per_s"].get<double>();
      block = fmt::format("  {}  {}  {}  {:>6}", nccl_tests_number(r["time_us"].get<double>(), 7),
                          nccl_tests_number(r["algbw_gbyte_per_s"].get<double>(), 6), nccl_tests_number(busbw, 6),
                          "N/A");
      sum_busbw += 2 * busbw;  // nccl-tests averages over both blocks
      counted += 2;
    }
    out << block << block << "\n";
  }
  out << "# Out of bounds values : 0 OK\n";
  out << fmt::format("# Avg bus bandwidth    : {:g} \n", counted ? sum_busbw / counted : 0.0);
  out << "#\n# Collective test concluded: " << program << "\n";
}

}  // namespace podnet::report
