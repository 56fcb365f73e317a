// LinkLoadStep: one step of a directed link's load over time, as the flow
// engine records it (FlowSim::link_steps) and hands it to observers
// (RunObservation::link_steps) without a copy.
#pragma once

#include <cstdint>

#include "core/units.hpp"

namespace podnet::engine {

// From `at` on, directed link `link` carries payload at `utilization` x its
// payload capacity (a step function; recorded only when
// NetworkOptions::observers.observe is set).
struct LinkLoadStep {
  Time at;
  int32_t link = 0;  // routing::DirLink
  double utilization = 0;
};

}  // namespace podnet::engine
