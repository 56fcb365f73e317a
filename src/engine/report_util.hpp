// Helpers shared by the engines: the hottest-link list.
#pragma once

#include <functional>
#include <vector>

#include "engine/backend.hpp"

namespace podnet::engine {

// The `count` directed links with the highest mean utilization (bytes x 8 /
// (capacity x makespan)), ties by bytes then link id. `peak` (optional) gives
// each link's peak utilization.
std::vector<LinkReport> hottest_links(const std::vector<double>& bytes, const std::vector<double>* peak, Time makespan,
                                      int32_t count, const std::function<double(routing::DirLink)>& capacity_bps);

}  // namespace podnet::engine
