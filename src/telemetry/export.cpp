#include "telemetry/export.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/mpi_world.hpp"
#include "core/units.hpp"
#include "engine/backend.hpp"
#include "telemetry/metrics.hpp"

namespace podnet::telemetry {

namespace {

// A port among the worst: it paused, dropped, trimmed or marked (one that only carried CNPs or sent PAUSE is not
// worse by these keys).
bool notable(const PortCounters& c) {
  return c.paused_s > 0 || c.drops_buffer || c.drops_link || c.drops_silent || c.trims || c.ecn_marks;
}

std::string si_time(double s) {
  if (s >= 1) return fmt::format("{:.2f} s", s);
  if (s >= 1e-3) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.2f} us", s * 1e6);
}

std::string si_bytes(double b) {
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.2f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} KB", b / 1e3);
  return fmt::format("{:.0f} B", b);
}

std::string cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::ofstream open(const std::string& path) {
  std::ofstream f(mpi::output_path(path), std::ios::binary);  // (under mpirun, rank 0 writes)
  if (!f) throw InputError(fmt::format("--telemetry: cannot write {}", path));
  return f;
}

}  // namespace

std::vector<int32_t> worst_ports(const Recorder& r, size_t count) {
  std::vector<int32_t> ids;
  for (const auto& c : r.ports())
    if (notable(c)) ids.push_back(c.link);
  const auto& P = r.ports();
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    const PortCounters &x = P[a], &y = P[b];
    if (x.paused_s != y.paused_s) return x.paused_s > y.paused_s;
    const uint64_t dx = drops(x), dy = drops(y);
    if (dx != dy) return dx > dy;
    if (x.ecn_marks != y.ecn_marks) return x.ecn_marks > y.ecn_marks;
    return a < b;
  });
  if (ids.size() > count) ids.resize(count);
  return ids;
}

PortCounters port_totals(const Recorder& r) {
  PortCounters t;
  for (const auto& c : r.ports()) {
    t.data_packets += c.data_packets;
    t.drops_buffer += c.drops_buffer;
    t.drops_link += c.drops_link;
    t.drops_silent += c.drops_silent;
    t.trims += c.trims;
    t.ecn_marks += c.ecn_marks;
    t.cnp_packets += c.cnp_packets;
    t.pause_tx += c.pause_tx;
    t.pause_rx += c.pause_rx;
    t.paused_s += c.paused_s;
    t.retransmits += c.retransmits;
    t.out_of_order += c.out_of_order;
  }
  return t;
}

void write_summary(const Recorder& r, std::ostream& out, size_t worst) {
  if (!r.any_events()) return;
  const PortCounters t = port_totals(r);
  // CNPs as the senders received them (one per CNP; the ports count a CNP on every link it crosses).
  uint64_t cnps = 0;
  for (const auto& q : r.qps()) cnps += q.cnps;
  const auto n = [](uint64_t v) { return thousands(static_cast<int64_t>(v)); };
  out << fmt::format(
      "telemetry ({} engine, {} run{}, {} simulated): drops {} (buffer {}, link down {}{}){}, ECN marks {}, CNPs {} "
      "({} link crossings), PAUSE frames {} sent / {} received, {} paused in all, retransmissions {}, out-of-order "
      "arrivals {}\n",
      r.engine(), n(r.runs()), r.runs() == 1 ? "" : "s", si_time(r.observed_s()), n(drops(t)), n(t.drops_buffer),
      n(t.drops_link), t.drops_silent ? fmt::format(", silent faults {}", n(t.drops_silent)) : std::string(),
      t.trims ? fmt::format(", trimmed {}", n(t.trims)) : std::string(), n(t.ecn_marks), n(cnps), n(t.cnp_packets),
      n(t.pause_tx), n(t.pause_rx), si_time(t.paused_s), n(t.retransmits), n(t.out_of_order));
  const auto ids = worst_ports(r, worst);
  if (ids.empty()) return;
  out << "worst ports (time paused, then drops, then ECN marks):\n";
  for (int32_t d : ids) {
    const PortCounters& c = r.ports()[d];
    out << fmt::format("  {}: paused {} ({:.1f}%), PAUSE rx {}, drops {}{}, ECN {}, queue max {} p99 {}\n",
                       engine::dir_link_name(r.topology(), d), si_time(c.paused_s),
                       r.observed_s() > 0 ? 100.0 * c.paused_s / r.observed_s() : 0.0, n(c.pause_rx), n(drops(c)),
                       c.trims ? fmt::format(", trimmed {}", n(c.trims)) : std::string(), n(c.ecn_marks),
                       si_bytes(static_cast<double>(c.queue_max_bytes)),
                       si_bytes(static_cast<double>(c.queue_p99_bytes)));
  }
}

std::vector<std::string> write_dir(const Recorder& r, const std::string& dir, bool all_ports) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("--telemetry {}: cannot create the directory ({})", dir, ec.message()));
  const topology::Topology& t = r.topology();
  std::vector<std::string> files;
  const auto path = [&](const char* name) {
    files.push_back(name);
    return (std::filesystem::path(dir) / name).string();
  };
  if (!r.ports().empty()) {  // the packet engine's counters (the flow engine has link bytes only)
    auto f = open(path("ports.csv"));
    f << "link_id,link,tx_packets,tx_bytes,rx_packets,rx_bytes,data_packets,payload_bytes,drops_buffer,drops_link_down,"
         "drops_silent,ecn_marks,cnp_packets,pause_tx,pause_rx,paused_s,retransmits,out_of_order,queue_max_bytes,"
         "queue_mean_bytes,queue_p99_bytes,peak_utilization\n";
    for (const auto& c : r.ports()) {
      if (c.tx_packets == 0 && c.rx_packets == 0 && c.pause_tx == 0 && c.pause_rx == 0 && c.drops_link == 0 &&
          c.drops_silent == 0)
        continue;
      f << fmt::format("{},{},{},{:.0f},{},{:.0f},{},{:.0f},{},{},{},{},{},{},{},{:.9f},{},{},{},{:.1f},{},{:.6f}\n",
                       c.link, cell(engine::dir_link_name(t, c.link)), c.tx_packets, c.tx_bytes, c.rx_packets,
                       c.rx_bytes, c.data_packets, c.payload_bytes, c.drops_buffer, c.drops_link, c.drops_silent,
                       c.ecn_marks, c.cnp_packets, c.pause_tx, c.pause_rx, c.paused_s, c.retransmits, c.out_of_order,
                       c.queue_max_bytes, r.observed_s() > 0 ? c.queue_byte_s / r.observed_s() : 0.0, c.queue_p99_bytes,
                       c.peak_utilization);
    }
  }
  if (r.packet_level()) {
    auto f = open(path("qps.csv"));
    f << "run,qp,src,dst,bytes,start_s,finish_s,fct_s,retransmits,out_of_order,cnps,final_rate_bps,lost_packets\n";
    for (const auto& q : r.qps())
      f << fmt::format("{},{},{},{},{},{:.12f},{:.12f},{:.12f},{},{},{},{:.0f},{}\n", q.run, q.qp, q.src, q.dst,
                       q.bytes, q.start_s, q.finish_s, q.fct_s(), q.retransmits, q.out_of_order, q.cnps,
                       q.final_rate_bps, q.lost);
  }
  if (!r.queue_series().empty()) {
    auto f = open(path("queue_depth.csv"));
    f << "run,time_s,link_id,link,bytes\n";
    for (const auto& s : r.queue_series())
      f << fmt::format("{},{:.12f},{},{},{}\n", s.run, s.t_s, s.link, cell(engine::dir_link_name(t, s.link)), s.bytes);
  }
  if (!r.rate_series().empty()) {
    auto f = open(path("qp_rates.csv"));
    // window_packets: empty for a rate-based congestion control (DCQCN, TIMELY, HPCC's rate), which paces at rate_bps.
    f << "run,time_s,qp,rate_bps,delivered_bytes,window_packets\n";
    for (const auto& s : r.rate_series())
      f << fmt::format("{},{:.12f},{},{:.0f},{},{}\n", s.run, s.t_s, s.qp, s.rate_bps, s.delivered,
                       s.window > 0 ? std::to_string(s.window) : std::string());
  }
  if (!r.util_series().empty()) {
    auto f = open(path("link_utilization.csv"));
    f << "run,time_s,link_id,link,utilization\n";
    for (const auto& s : r.util_series())
      f << fmt::format("{},{:.12f},{},{},{:.6f}\n", s.run, s.t_s, s.link, cell(engine::dir_link_name(t, s.link)),
                       s.utilization);
  }
  {
    auto f = open(path("metrics.prom"));
    write_metrics(r, Flavour::Prometheus, f, all_ports);
  }
  {
    auto f = open(path("metrics.om"));
    write_metrics(r, Flavour::OpenMetrics, f, all_ports);
  }
  return files;
}

}  // namespace podnet::telemetry
