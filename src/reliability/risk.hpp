// The risk model: which failures interrupt a training job, how often, and
// what checkpointing makes of it. Scenario section `reliability:`.
//
// Each component class i of the job's inventory (inventory.hpp) has n_i
// components failing at λ_i per hour each (rates.hpp). A failure either
// stops the job (an interruption: restart from the last checkpoint) or is
// absorbed (the traffic through it stalls for a recovery time, then flows
// on). It stops the job when
//   - it is a GPU, its software, its server (host), or a leaf switch (every
//     GPU behind the leaf loses its path; with a rail-optimized fabric each
//     server sits behind `rails` leaves);
//   - it is a NIC or a part of a NIC-to-leaf link (cable, transceiver) and
//     the fabric has no spare rail; with `spare_rail: true` the NIC's traffic
//     fails over to a spare rail in `rail_failover`;
//   - it is a GPU-to-GPU network link (torus: dimension-order routes cannot
//     avoid it);
//   - its recovery takes longer than `network.collective_timeout`: a stalled
//     collective is aborted after the transport gives up. For InfiniBand
//     verbs (NCCL defaults NCCL_IB_TIMEOUT 20, NCCL_IB_RETRY_CNT 7) that is
//     7 × 4.096 µs × 2^20 ≈ 30 s (NCCL environment-variable docs), the default.
//   Links, optics and cables above the leaf are routed around by adaptive
//   routing / dynamic load balancing in `network.local_repair` (milliseconds);
//   spine and super-spine switches by routing re-convergence in
//   `network.convergence` (seconds). Both are below the timeout by default, so
//   they are absorbed.
//
// Closed form (components renewed on failure, so the interrupting failures
// of the job form a Poisson process):
//   Λ = Σ_{i interrupting} n_i·λ_i                         interruptions per hour
//   P(at least one interruption in T) = 1 − exp(−Λ·T)
//   expected interruptions in T = Λ·T;  MTBI = 1/Λ;  share of class i = n_i·λ_i / Λ
//   absorbed failures in T = Σ_{i absorbed} n_i·λ_i·T, stalling Σ n_i·λ_i·T·recovery_i
// Checks (unit tests): 1,000 GPUs at 99.9 % monthly availability, T = 1
// month: Λ·T = 1000·(−ln 0.999) = 1.0005, P = 1 − 0.999^1000 = 0.632;
// 100,000 optics at 1e7 h MTBF: Λ = 1e5/1e7 = 0.01 /h, MTBI = 100 h = 4.17 days.
//
// Checkpointing (checkpoint.hpp) uses M = MTBI: Daly's interval, Young's
// for comparison, goodput, and days to train = training_days / goodput.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "reliability/inventory.hpp"
#include "reliability/rates.hpp"

namespace podnet::reliability {

// Scenario section `reliability:`.
std::vector<ParamSpec> reliability_params();

struct Config {
  double rate_per_hour[kParts] = {};  // by Part
  int64_t job_gpus = 0;               // 0 = all
  double duration_hours = 720;
  double training_hours = 720;
  double checkpoint_cost_hours = 5.0 / 60;
  double restart_cost_hours = 10.0 / 60;
  // Checkpoints no closer than this (an asynchronous checkpoint is written behind training: the next cannot
  // start before it is on storage); 0 = no floor.
  double min_interval_hours = 0;
  // > 0: the interval the job checkpoints at today (reliability.checkpoint_interval): goodput and days to train
  // at it, beside Daly's.
  double checkpoint_interval_hours = 0;
  // The next three come from the scenario's `network:` section
  // (collective_timeout, local_repair, convergence): the same knobs the flow
  // engine's failure injection uses. Defaults equal network's.
  double collective_timeout_s = 30;
  double link_recovery_s = 0.001;  // network.local_repair: a fabric part the switch next to it routes around
  double switch_recovery_s = 2;    // network.convergence: one the routing protocol must route around
  double rail_failover_s = 2;
  bool spare_rail = false;
  int64_t trials = 10000;

  double rate(Part p) const { return rate_per_hour[static_cast<int>(p)]; }
  void set_rate(Part p, double per_hour) { rate_per_hour[static_cast<int>(p)] = per_hour; }
};

// Defaults of every key (the preset rates).
Config default_config();
// From a validated `reliability:` section. Throws ParamError naming the key
// ("reliability.gpu_mtbf") for a value the section's types cannot check
// (failure-rate syntax, a zero checkpoint cost).
Config config_from(const Params& p);

struct ClassRisk {
  ComponentClass component;
  double rate_per_hour = 0;  // λ per component
  bool interrupts = false;
  bool always = false;           // stops the job whatever the recovery times (GPU, host, leaf, ...)
  double recovery_s = 0;         // for failures that can be absorbed (0 for ones that always stop the job)
  double class_rate = 0;         // n·λ per hour
  double share = 0;              // n·λ/Λ of the interruptions (0 when absorbed)
  double expected_failures = 0;  // n·λ·T
  double expected_interruptions = 0;
};

struct Risk {
  std::vector<ClassRisk> classes;
  double duration_hours = 0;
  double interrupt_rate = 0;          // Λ per hour
  double absorbed_rate = 0;           // absorbed failures per hour
  double expected_interruptions = 0;  // Λ·T
  double probability = 0;             // 1 − exp(−Λ·T)
  double mtbi_hours = 0;              // 1/Λ (+inf when Λ = 0)
  double absorbed_failures = 0;       // over T
  double stall_hours = 0;             // over T, from absorbed failures
};

Risk assess(const Inventory& inv, const Config& cfg);

struct CheckpointAdvice {
  double interval_hours = 0;        // Daly (+inf when nothing interrupts)
  double young_interval_hours = 0;  // Young
  double goodput = 1;               // at the Daly interval
  double goodput_young = 1;         // at the Young interval
  double days_to_train = 0;         // training time / goodput
  // With Config::checkpoint_interval_hours: the same at the user's interval (0 when not given).
  double chosen_interval_hours = 0, goodput_chosen = 1, days_to_train_chosen = 0;
};

CheckpointAdvice advise(const Risk& risk, const Config& cfg);

}  // namespace podnet::reliability
