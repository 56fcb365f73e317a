#include "engine/report_util.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace podnet::engine {

std::vector<LinkReport> hottest_links(const std::vector<double>& bytes, const std::vector<double>* peak, Time makespan,
                                      int32_t count, const std::function<double(routing::DirLink)>& capacity_bps) {
  std::vector<LinkReport> all;
  const double seconds = makespan.seconds();
  for (size_t d = 0; d < bytes.size(); ++d) {
    if (bytes[d] <= 0) continue;
    LinkReport r;
    r.link = static_cast<routing::DirLink>(d);
    r.bytes = bytes[d];
    const double cap = capacity_bps(r.link);
    r.mean_utilization = seconds > 0 && cap > 0 ? bytes[d] * 8.0 / (cap * seconds) : 0;
    r.peak_utilization = peak ? (*peak)[d] : r.mean_utilization;
    all.push_back(r);
  }
  // Links that carried the same traffic differ in the last bits of their sums (the order bytes were added in),
  // so utilization is compared to 1e-9 and bytes to the byte: such links tie and go by link id.
  auto better = [](const LinkReport& a, const LinkReport& b) {
    const auto ua = std::llround(a.mean_utilization * 1e9), ub = std::llround(b.mean_utilization * 1e9);
    if (ua != ub) return ua > ub;
    const auto ba = std::llround(a.bytes), bb = std::llround(b.bytes);
    if (ba != bb) return ba > bb;
    return a.link < b.link;
  };
  const size_t k = std::min<size_t>(all.size(), static_cast<size_t>(std::max(0, count)));
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(), better);
  all.resize(k);
  return all;
}

std::vector<ClassLoad> class_loads(const topology::Topology& t, const std::vector<double>& bytes, Time makespan,
                                   const std::function<double(routing::DirLink)>& capacity_bps) {
  const double seconds = makespan.seconds();
  std::vector<ClassLoad> by(t.link_classes.size());
  std::vector<double> sum(t.link_classes.size(), 0);
  for (size_t d = 0; d < bytes.size(); ++d) {
    const auto dir = static_cast<routing::DirLink>(d);
    const size_t c = t.links[static_cast<size_t>(routing::link_of(dir))].cls;
    const double cap = capacity_bps(dir);
    if (c >= by.size() || cap <= 0) continue;
    const double u = seconds > 0 ? bytes[d] * 8.0 / (cap * seconds) : 0;
    ClassLoad& l = by[c];
    ++l.links;
    l.bytes += bytes[d];
    sum[c] += u;
    if (bytes[d] > 0) ++l.used_links;
    l.max_utilization = std::max(l.max_utilization, u);
  }
  std::vector<ClassLoad> out;
  for (size_t c = 0; c < by.size(); ++c) {
    if (by[c].links == 0) continue;
    by[c].link_class = t.link_classes[c];
    by[c].mean_utilization = sum[c] / static_cast<double>(by[c].links);
    // Idle links add nothing to the sum.
    by[c].used_mean_utilization = by[c].used_links > 0 ? sum[c] / static_cast<double>(by[c].used_links) : 0.0;
    out.push_back(by[c]);
  }
  return out;
}

Time nearest_rank(const std::vector<Time>& sorted, double pct) {
  if (sorted.empty()) throw Error("nearest_rank of no values");
  const auto n = static_cast<double>(sorted.size());
  // ceil(pct/100 x n), computed with a relative slack so that 99/100 x 100 is 99, not 99.00000000000001 -> 100.
  auto rank = static_cast<int64_t>(std::ceil(pct / 100.0 * n * (1 - 1e-12)));
  rank = std::clamp<int64_t>(rank, 1, static_cast<int64_t>(sorted.size()));
  return sorted[static_cast<size_t>(rank - 1)];
}

std::optional<FlowTimes> flow_times(const plan::TransferPlan& plan, const RunReport& run) {
  if (run.job_failed || run.transfers.size() != plan.transfers.size()) return std::nullopt;
  std::vector<Time> fct;
  for (size_t i = 0; i < plan.transfers.size(); ++i) {
    const plan::TransferKind k = plan.transfers[i].kind;
    if (k == plan::TransferKind::Ring || k == plan::TransferKind::Coupled) return std::nullopt;
    if (k == plan::TransferKind::P2p) fct.push_back(run.transfers[i].finish - run.transfers[i].start);
  }
  if (fct.empty()) return std::nullopt;
  std::sort(fct.begin(), fct.end());
  FlowTimes f;
  f.flows = static_cast<int64_t>(fct.size());
  f.min = fct.front();
  f.max = fct.back();
  f.p50 = nearest_rank(fct, 50);
  f.p99 = nearest_rank(fct, 99);
  f.cdf.reserve(101);
  f.cdf.push_back(f.min);
  for (int q = 1; q <= 100; ++q) f.cdf.push_back(nearest_rank(fct, q));
  __int128 sum = 0;
  for (Time t : fct) sum += t.ps;
  f.mean = Time{static_cast<int64_t>(sum / static_cast<__int128>(fct.size()))};
  return f;
}

}  // namespace podnet::engine
