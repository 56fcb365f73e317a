// Helpers shared by the workload and cluster tests (header-only, tests only).
#pragma once

#include <map>
#include <string>

#include "topology/builders.hpp"

namespace podnet::workload::testing {

// A default-hardware rail_clos of `gpus` GPUs, built once per size.
inline const topology::Topology& rail(int32_t gpus) {
  static std::map<int32_t, topology::Topology> cache;
  auto it = cache.find(gpus);
  if (it == cache.end())
    it = cache
             .emplace(gpus,
                      topology::build_with("rail_clos", {{"gpus", std::to_string(gpus)}}, topology::default_hardware()))
             .first;
  return it->second;
}

}  // namespace podnet::workload::testing
