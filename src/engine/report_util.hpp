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

// The load per link class (ClassLoad) of a run: every directed link d with
// capacity_bps(d) > 0 counts in the class of its link (topology::Link::cls),
// classes with no such link are left out.
std::vector<ClassLoad> class_loads(const topology::Topology& t, const std::vector<double>& bytes, Time makespan,
                                   const std::function<double(routing::DirLink)>& capacity_bps);

}  // namespace podnet::engine
