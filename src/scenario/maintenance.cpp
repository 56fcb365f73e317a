#include "scenario/maintenance.hpp"

namespace podnet::scenario {

std::vector<ParamSpec> maintenance_params() {
  return {
      {"network",
       ParamType::String,
       "backend",
       "the network whose switches are upgraded: backend (the GPUs' fabric) or frontend (the `frontend:` section's, "
       "costed through the job's data loading and checkpoints)",
       -1e300,
       1e300,
       {"backend", "frontend"}},
      {"tier", ParamType::String, "spine",
       "the switch tier to upgrade, as the design names it (leaf, spine, super_spine, ...)"},
      {"batches", ParamType::IntList, "[1, 4, 16, 64]",
       "switches drained together in one step, one plan per size (sizes at or above the tier's count are left out)", 1,
       1e9},
      {"step_time", ParamType::Time, "30min",
       "how long one step keeps its switches out of service: drain, upgrade, reboot, checks"},
      {"negligible", ParamType::Time, "1min",
       "extra training time that counts as none when plans are compared: among the plans within it of the least "
       "costly, the shortest window is recommended (0: the least extra time, whatever the window)"},
      {"runs", ParamType::Int, "4",
       "steps of each plan simulated (evenly spaced); the others take their mean slowdown (0: simulate every step)", 0,
       100000},
      {"threads", ParamType::Int, "0",
       "steps simulated at once (0: the machine's cores, at most 8); each needs the memory of one iteration", 0, 256},
  };
}

}  // namespace podnet::scenario
