#include "diagnose/straggler.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <utility>

#include "core/error.hpp"

namespace podnet::diagnose {

StragglerReport locate_slowdown(const workload::IterationPlan& ip, const engine::RunReport& baseline,
                                const engine::RunReport& slowed) {
  const auto& tr = ip.plan.transfers;
  if (baseline.transfers.size() != tr.size() || slowed.transfers.size() != tr.size() ||
      ip.category.size() != tr.size() || ip.stage.size() != tr.size())
    throw Error(fmt::format("straggler analysis: the plan has {} transfers, the runs {} and {}", tr.size(),
                            baseline.transfers.size(), slowed.transfers.size()));
  StragglerReport r;
  r.baseline = baseline.makespan;
  r.slowed = slowed.makespan;
  if (tr.empty()) return r;
  const auto dur = [](const engine::RunReport& run, size_t i) {
    return run.transfers[i].finish - run.transfers[i].start;
  };
  // The slowed run's last transfer to finish, then back along the latest-finishing dependency.
  size_t at = 0;
  for (size_t i = 1; i < tr.size(); ++i)
    if (slowed.transfers[i].finish > slowed.transfers[at].finish) at = i;
  std::map<std::pair<int32_t, int>, SlowPart> parts;
  for (;;) {
    ++r.path_length;
    const Time e = dur(slowed, at) - dur(baseline, at);
    r.path_excess += e;
    const auto key = std::make_pair(static_cast<int32_t>(ip.stage[at]), static_cast<int>(ip.category[at]));
    SlowPart& p = parts[key];
    p.stage = key.first;
    p.category = ip.category[at];
    p.excess += e;
    ++p.ops;
    if (p.worst.empty() || e > p.worst_excess) {
      p.worst = tr[at].label;
      p.worst_excess = e;
      p.worst_gpus = tr[at].ranks;
      std::sort(p.worst_gpus.begin(), p.worst_gpus.end());
    }
    const auto& deps = tr[at].deps;
    if (deps.empty()) break;
    int32_t next = deps.front();
    for (int32_t d : deps) {
      const auto dn = static_cast<size_t>(d), nn = static_cast<size_t>(next);
      if (slowed.transfers[dn].finish > slowed.transfers[nn].finish ||
          (slowed.transfers[dn].finish == slowed.transfers[nn].finish && d < next))
        next = d;
    }
    at = static_cast<size_t>(next);
  }
  for (auto& [key, p] : parts)
    if (p.excess.ps != 0) r.parts.push_back(std::move(p));  // they add up to path_excess
  std::stable_sort(r.parts.begin(), r.parts.end(),
                   [](const SlowPart& a, const SlowPart& b) { return a.excess > b.excess; });
  return r;
}

}  // namespace podnet::diagnose
