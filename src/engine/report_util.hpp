// Helpers shared by the engines: the hottest-link list, the per-flow
// completion-time distribution.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "engine/backend.hpp"

namespace podnet::engine {

// The `count` directed links with the highest mean utilization (bytes x 8 /
// (capacity x makespan), compared to 1e-9), ties by bytes (to the byte) then
// link id, so links that carried the same traffic list in link order whatever
// the rounding of their sums. `peak` (optional) gives
// each link's peak utilization.
std::vector<LinkReport> hottest_links(const std::vector<double>& bytes, const std::vector<double>* peak, Time makespan,
                                      int32_t count, const std::function<double(routing::DirLink)>& capacity_bps);

// The load per link class (ClassLoad) of a run: every directed link d with
// capacity_bps(d) > 0 counts in the class of its link (topology::Link::cls),
// classes with no such link are left out; used_links counts those with
// bytes[d] > 0.
std::vector<ClassLoad> class_loads(const topology::Topology& t, const std::vector<double>& bytes, Time makespan,
                                   const std::function<double(routing::DirLink)>& capacity_bps);

// Flow completion times (FCT) of a run: for each P2p transfer of the plan,
// finish - start, where start is when its dependencies were met (when it may
// send) and finish when its last byte arrived, as congestion-control studies
// measure FCT (DCTCP, HPCC). Percentiles are nearest-rank: pX is the
// ceil(X/100 x n)-th smallest of the n flows (p50 of 4 flows is the 2nd, p99
// of 100 is the 99th, of 10 the 10th). A transfer with q QPs is one flow (its
// q QPs finish when the last does).
struct FlowTimes {
  int64_t flows = 0;
  Time min, p50, p99, max, mean;  // mean rounded down to a picosecond
  // The distribution, 101 points: cdf[q] = the time by which q % of the flows had finished (nearest rank;
  // cdf[0] = min, cdf[100] = max).
  std::vector<Time> cdf;
};
// Nothing when the plan has a Ring or Coupled transfer (pipelined
// collectives are not independent flows), has no P2p transfer, the report
// holds no per-transfer timings, or the job stopped (run.job_failed).
std::optional<FlowTimes> flow_times(const plan::TransferPlan& plan, const RunReport& run);
// Nearest-rank percentile (0 < pct <= 100) of values sorted ascending (not empty).
Time nearest_rank(const std::vector<Time>& sorted, double pct);

}  // namespace podnet::engine
