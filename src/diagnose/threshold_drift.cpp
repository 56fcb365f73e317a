#include "diagnose/threshold_drift.hpp"

#include <cmath>
#include <map>

#include "engine/depth_histogram.hpp"
#include "routing/route.hpp"

namespace podnet::diagnose {

namespace {

double mark_probability(const PortThresholds& p, double q) {
  if (q <= static_cast<double>(p.kmin)) return 0;
  if (q > static_cast<double>(p.kmax)) return 1;
  return p.pmax * (q - static_cast<double>(p.kmin)) / std::max(1.0, static_cast<double>(p.kmax - p.kmin));
}

}  // namespace

std::pair<double, double> expected_marks(const PortThresholds& p, int64_t wire_bytes) {
  namespace depth = engine::depth;
  double lo = 0, hi = 0;
  const double per_s = p.bps / (8.0 * static_cast<double>(wire_bytes));  // packets per second, back to back
  for (size_t b = 0; b < p.queue_hist_s.size(); ++b) {
    const double n = p.queue_hist_s[b] * per_s;
    if (n <= 0) continue;
    lo += n * mark_probability(p, static_cast<double>(depth::lower(static_cast<int32_t>(b))));
    hi += n * mark_probability(p, static_cast<double>(depth::lower(static_cast<int32_t>(b + 1))));
  }
  return {lo, hi};
}

std::vector<ThresholdDrift> find_threshold_drifts(const topology::Topology& t, const std::vector<PortThresholds>& ports,
                                                  int64_t wire_bytes, double observed_s, const DriftOptions& o) {
  std::map<topology::NodeId, ThresholdDrift> by_switch;
  const auto is_switch = [&](topology::NodeId n) { return t.nodes[n].kind == topology::NodeKind::Switch; };
  for (size_t d = 0; d < ports.size(); ++d) {
    const PortThresholds& p = ports[d];
    const auto link = static_cast<routing::DirLink>(d);
    const topology::NodeId from = routing::dir_from(link, t), to = routing::dir_to(link, t);
    if (is_switch(from) && p.kmax > 0 && p.bps > 0 && p.paused_s <= o.max_paused_share * observed_s) {
      const auto [lo, hi] = expected_marks(p, wire_bytes);
      const auto m = static_cast<double>(p.ecn_marks);
      std::string what;
      if (m > 2 * hi + 3 * std::sqrt(hi) + o.min_marks) what = "ecn_early";
      else if (lo >= o.min_marks && m < (lo - 3 * std::sqrt(lo)) / 2) what = "ecn_late";
      if (!what.empty()) {
        ThresholdDrift& s = by_switch[from];
        s.node = from;
        s.ports.push_back({link, what, m, lo, hi});
      }
    }
    if (is_switch(to) && p.xoff_limit > 0 && p.pg_shared_max > p.xoff_limit + wire_bytes) {
      ThresholdDrift& s = by_switch[to];
      s.node = to;
      s.ports.push_back({link, "xoff_high", static_cast<double>(p.pg_shared_max), static_cast<double>(p.xoff_limit),
                         static_cast<double>(p.xoff_limit + wire_bytes)});
    }
  }
  std::vector<ThresholdDrift> out;
  for (auto& [n, s] : by_switch) out.push_back(std::move(s));
  return out;
}

}  // namespace podnet::diagnose
