// One training job placed and simulated on the fabric (simulate_job), and the scaling-efficiency sweep over
// DP and per-NIC bandwidth caps (scaling_sweep): studies built on placement (cluster/placement.hpp) and the
// training simulation (workload/training.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cluster/placement.hpp"
#include "engine/backend.hpp"
#include "topology/topology.hpp"
#include "workload/job.hpp"
#include "workload/training.hpp"

namespace podnet::study {

// Places the job, simulates one iteration and fills result.placement; the
// placement itself (GPU rank of each job rank) goes to `gpus` when given.
workload::TrainResult simulate_job(const workload::Job& job, const topology::Topology& topo,
                                   engine::NetworkBackend& backend, const workload::TrainOptions& options,
                                   cluster::Policy policy, uint64_t seed, std::vector<int32_t>* gpus = nullptr);

// Scaling efficiency (weak scaling: the per-replica work is fixed, so the
// global batch grows with d). For each per-GPU network bandwidth cap (bytes/s;
// 0 = the fabric as built; a cap lowers every link of every NIC, the GPU's
// PCIe link and its network port, to at most the cap) and each d in `dps`,
// one iteration is simulated; speed-up = tokens/s over the smallest d's
// tokens/s at the same cap, ideal = d / d_min, efficiency = speed-up / ideal.
struct ScalingPoint {
  double cap_bytes_per_second = 0;
  int64_t dp = 0;
  int64_t gpus = 0;
  int64_t global_batch = 0;
  Time iteration;
  double tokens_per_second = 0;
  double speedup = 0;
  double ideal = 0;
  double efficiency = 0;
  double mfu = 0;
  workload::Breakdown breakdown;
  double memory_bytes = 0;  // the stage needing the most, per GPU (workload::peak_memory)
  bool fits = true;         // within the GPU's HBM: a point that does not fit is a what-if no cluster could run
};
using BackendFactory = std::function<std::unique_ptr<engine::NetworkBackend>(const topology::Topology&)>;
std::vector<ScalingPoint> scaling_sweep(const workload::Job& base, const topology::Topology& topo,
                                        const BackendFactory& make_backend, const workload::TrainOptions& options,
                                        cluster::Policy policy, uint64_t seed, const std::vector<int64_t>& dps,
                                        const std::vector<double>& caps);

// A copy of `topo` with every NIC's network port (its link to a switch) capped at `bytes_per_second`.
topology::Topology cap_nic_bandwidth(const topology::Topology& topo, double bytes_per_second);
// A NIC's speed as the fabric has it: the first NIC's links other than PCIe and NVLink, its planes' ports together
// (a SimAI .topo gives its own, not the scenario's); 0 without NICs.
Bandwidth nic_speed(const topology::Topology& topo);
// Its PCIe link's rate, the same way (0 without NICs or PCIe).
Bandwidth nic_pcie_speed(const topology::Topology& topo);

// Told before (finished false) and after (finished true) point `index` of `total` runs, with what it is
// ("dp 4, NIC cap 50 GB/s").
using ScalingHook = std::function<void(size_t index, size_t total, const std::string& what, bool finished)>;

std::vector<ScalingPoint> scaling_sweep(const workload::Job& base, const topology::Topology& topo,
                                        const BackendFactory& make_backend, const workload::TrainOptions& options,
                                        cluster::Policy policy, uint64_t seed, const std::vector<int64_t>& dps,
                                        const std::vector<double>& caps, const ScalingHook& hook);

}  // namespace podnet::study
