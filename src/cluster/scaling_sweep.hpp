// The scaling sweep (placement.hpp's scaling_sweep) with a hook told about each point as it runs, so that
// a study can name the point under way in its progress ("sweep point 3/20 (dp 4, NICs as built)").
#pragma once

#include <functional>
#include <string>

#include "cluster/placement.hpp"

namespace podnet::cluster {

// Told before (finished false) and after (finished true) point `index` of `total` runs, with what it is
// ("dp 4, NIC cap 50 GB/s").
using SweepHook = std::function<void(size_t index, size_t total, const std::string& what, bool finished)>;

std::vector<SweepPoint> scaling_sweep(const workload::Job& base, const topology::Topology& topo,
                                      const BackendFactory& make_backend, const workload::TrainOptions& options,
                                      Policy policy, uint64_t seed, const std::vector<int64_t>& dps,
                                      const std::vector<double>& caps, const SweepHook& hook);

}  // namespace podnet::cluster
