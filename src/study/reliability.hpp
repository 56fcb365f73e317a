// The reliability study (`podnet reliability`): the interruption risk of a
// training job on the fabric and checkpoint advice (model: src/reliability/),
// with a Monte-Carlo check of both; and the short form every training study
// adds (days to train with failures).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "reliability/inventory.hpp"
#include "reliability/monte_carlo.hpp"
#include "reliability/risk.hpp"
#include "reliability/storage.hpp"
#include "scenario/setup.hpp"
#include "study/frontend_io.hpp"

namespace podnet::study {

struct ReliabilityResult {
  reliability::Config config;  // the Setup's
  reliability::Inventory inventory;
  reliability::Risk risk;
  reliability::CheckpointAdvice advice;
  reliability::InterruptionEstimate interruptions;  // Monte Carlo, seeded by the scenario's seed
  reliability::TrainingEstimate training;
  // With a storage network (storage.frontend_nics): the checkpoint's write and read times, which set
  // config.checkpoint_cost_hours and restart_cost_hours unless the scenario gives those keys.
  std::optional<reliability::CheckpointIo> checkpoint_io;
  // Why `podnet train` refuses the scenario's job (it does not fit in GPU memory, ...), empty when it takes it. The
  // figures count the job's GPUs, servers and fabric all the same; the report says so beside the reason.
  std::string job_refused;
};

// The job is reliability.job_gpus (the first N GPUs by rank; 0 = all).
// InputError at the key's line for a job the fabric cannot hold.
ReliabilityResult reliability(const scenario::Setup& s);

// Days to train with failures for a job on `gpus` (its placement) whose
// failure-free training takes `days`: the risk model on the job's
// components with Daly's checkpoint interval.
struct TrainingReliability {
  double mtbi_hours = 0;  // +inf when nothing interrupts the job
  double checkpoint_interval_hours = 0;
  double checkpoint_cost_hours = 0;
  double restart_cost_hours = 0;
  double goodput = 0;
  double days_to_train = 0;                                // with failures; +inf when nothing interrupts
  std::optional<reliability::CheckpointIo> checkpoint_io;  // as ReliabilityResult's
};

// The checkpoint a training job writes: BF16 weights (2 B), FP32 master weights and Adam's two moments
// (12 B) per parameter, 14 B in all: the mixed-precision Adam states of Rajbhandari et al. (ZeRO, SC'20,
// §3.1) without the gradients, which a checkpoint does not keep.
inline constexpr double kCheckpointBytesPerParam = 14;

// The servers that write a checkpoint of a job on `gpus` GPUs: the first ceil(gpus / GPUs a server) of the
// back end's (at least one).
inline int64_t checkpoint_writers(const topology::Topology& backend, int64_t gpus) {
  const int64_t per_server = std::max<int64_t>(1, backend.gpus_per_server);
  return std::min<int64_t>((gpus + per_server - 1) / per_server, std::max(1, backend.servers));
}

// The storage network's times for a checkpoint of the scenario's workload written by the servers of `gpus`
// GPUs, applied to `rc` (checkpoint cost = write time, restart = storage.restart_overhead + read time) where
// the scenario does not give reliability.checkpoint_cost or restart_cost. Nothing without storage.frontend_nics.
// `behind`: an asynchronous write timed beside the job's iteration (frontend.converged, `podnet train`); its
// time behind training and the training it costs replace the write's time alone (reliability/storage.hpp).
std::optional<reliability::CheckpointIo> apply_storage(const scenario::Setup& s, int64_t gpus, reliability::Config& rc,
                                                       const WriteBehindTraining* behind = nullptr);
TrainingReliability training_reliability(const scenario::Setup& s, const std::vector<int32_t>& gpus, double days,
                                         const WriteBehindTraining* behind = nullptr);

}  // namespace podnet::study
