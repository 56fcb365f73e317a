#include "engine/report_util.hpp"

#include <algorithm>

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
  auto better = [](const LinkReport& a, const LinkReport& b) {
    if (a.mean_utilization != b.mean_utilization) return a.mean_utilization > b.mean_utilization;
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return a.link < b.link;
  };
  const size_t k = std::min<size_t>(all.size(), static_cast<size_t>(std::max(0, count)));
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(), better);
  all.resize(k);
  return all;
}

}  // namespace podnet::engine
