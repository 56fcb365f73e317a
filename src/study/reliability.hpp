// The reliability study (`podnet reliability`): the interruption risk of a
// training job on the fabric and checkpoint advice (model: src/reliability/),
// with a Monte-Carlo check of both; and the short form every training study
// adds (days to train with failures).
#pragma once

#include <cstdint>
#include <vector>

#include "reliability/inventory.hpp"
#include "reliability/monte_carlo.hpp"
#include "reliability/risk.hpp"
#include "scenario/setup.hpp"

namespace podnet::study {

struct ReliabilityResult {
  reliability::Config config;  // the Setup's
  reliability::Inventory inventory;
  reliability::Risk risk;
  reliability::CheckpointAdvice advice;
  reliability::InterruptionEstimate interruptions;  // Monte Carlo, seeded by the scenario's seed
  reliability::TrainingEstimate training;
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
  double days_to_train = 0;  // with failures; +inf when nothing interrupts
};
TrainingReliability training_reliability(const scenario::Setup& s, const std::vector<int32_t>& gpus, double days);

}  // namespace podnet::study
