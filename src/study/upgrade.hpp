// Rolling upgrades (`podnet plan-upgrade`, the scenario's `maintenance:`): one tier's switches drained a
// batch at a time under the running training job, each batch upgraded and restored before the next.
// What each step costs the job, what the whole upgrade costs, and which plan costs the least.
//
// Plans. For each batch size b of maintenance.batches (below the tier's N switches), the N switches in the
// builder's order (pod, then rail or plane, then index) make S = ceil(N / b) steps:
//   - packed: step j drains switches j b .. j b + b - 1, neighbours in one pod and rail (one plane loses b);
//   - spread: the switches taken in the order 0, S, 2 S, ..., 1, 1 + S, ... and cut into steps of b, so a
//     step takes one switch from each stretch of S (when b divides N: step j drains j, j + S, j + 2 S, ...).
// b = 1 has one plan (one switch at a time).
// A step: the job's iteration (its placement and per-op times, as `podnet train` runs it) with the step's
// switches drained before the run (routing avoids them, as a failure at t = 0), on the scenario's engine.
// slowdown = that iteration / the intact one. A step that strands GPUs (a leaf that is their only link)
// stops the job.
// Cost. While a step lasts (maintenance.step_time: drain, upgrade, reboot, checks), the job runs at
// 1 / slowdown of its speed, so it finishes step_time (1 - 1 / slowdown) later; a step that stops the job
// costs the whole step_time, a checkpoint written before it and a restart after it, as `podnet train` prices
// them (the storage network's times when the scenario has one, else reliability.checkpoint_cost and
// restart_cost: 5 and 10 min by default). A plan's extra time is the sum over its steps; its
// window is S x step_time.
// The recommended plan: the shortest window among the plans whose extra time is within
// maintenance.negligible (1 min) of the least, then the least extra time. A plan that saves the job
// seconds but keeps the tier in maintenance for days longer is not worth it.
// Sampling. At most maintenance.runs steps of a plan are simulated (evenly spaced, the first and the last
// among them; 0: every step); the others are estimated as the mean slowdown of the simulated ones and
// marked so. A switch set simulated once is not simulated again (b = 1's steps serve every plan).
// Threads. The steps run at once on maintenance.threads threads (each engine on one); every step is its own
// run, so the results do not depend on the thread count.
// The frontend (maintenance.network: frontend). The tier is the frontend's (`frontend:`, its storage nodes
// there). The job trains on the back end, which the upgrade leaves alone; a step costs it through its
// storage traffic, simulated on the frontend with the step's switches drained (study/frontend_io.hpp):
//   - data loading: one iteration's samples read in R (R0 intact); the loader prefetches during the
//     iteration T, so the GPUs wait max(0, R - T) per iteration: slowdown = (T + max(0, R - T)) /
//     (T + max(0, R0 - T));
//   - checkpoints (synchronous): the job stops for each write, W instead of W0 intact; a step of
//     step_time holds step_time / I of them (I: the checkpoint interval `podnet train` advises), each
//     (W - W0) longer. Asynchronous checkpoints run behind training and cost a step nothing here.
// A step costs step_time (1 - 1 / slowdown) + (step_time / I) (W - W0). A step whose drained switches cut
// servers off the storage (a leaf, when the frontend NICs attach to one leaf) stops the job.
// ASSUMPTIONS: a step that does not stop the job runs it throughout (no checkpoint and restart around it); a
// drained switch carries
// nothing, and the rest of its tier takes its traffic through routing (ECMP or the scenario's policy);
// steps follow one another with no gap; the upgrade itself (its duration) is the user's figure. Frontend:
// the data loading and the checkpoint each have the frontend to themselves, as `podnet train` times them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "scenario/setup.hpp"
#include "study/study.hpp"
#include "workload/job.hpp"

namespace podnet::study {

struct UpgradeRequest {
  std::string network = "backend";  // or "frontend": the frontend's tiers (`frontend:`)
  std::string tier = "spine";
  std::vector<int64_t> batches = {1, 4, 16, 64};
  Time step_time = Time(1800LL * 1000000000000LL);  // 30 min
  Time negligible = Time(60LL * 1000000000000LL);   // extra time that counts as none when plans are compared
  int32_t runs = 4;                                 // simulated steps per plan; 0 = all
  int32_t threads = 0;                              // steps simulated at once; 0 = the machine's cores, at most 8
};

// From the scenario's `maintenance:` section.
UpgradeRequest upgrade_request(const scenario::Setup& s);

struct UpgradeStep {
  std::vector<std::string> switches;
  double slowdown = 1;  // the iteration with them drained / the intact one (the job stopped: 0)
  bool simulated = true;
  bool stops_job = false;
  std::string failure;  // why the job stopped (the engine's words), when it did
  // Frontend: one iteration's data read and one checkpoint's write with the step's switches drained.
  double data_read_s = 0;
  double checkpoint_write_s = 0;
  double extra_hours = 0;  // what the step costs the job
};

struct UpgradePlan {
  int64_t batch = 1;
  std::string grouping;  // "one at a time", "packed" or "spread"
  std::vector<UpgradeStep> steps;
  int64_t simulated = 0;
  double worst_slowdown = 1;  // over the steps that run (a step that stops the job is worse: the report says so)
  double worst_write_s = 0;   // frontend: the longest checkpoint write of a step that runs
  double mean_slowdown = 1;   // over the steps that run
  int64_t stopping_steps = 0;
  double extra_hours = 0;   // the job's extra time over the whole upgrade
  double window_hours = 0;  // the upgrade's duration: steps x step_time
};

struct UpgradeResult {
  UpgradeRequest request;
  workload::Job job;
  int64_t gpus = 0;
  int64_t switches = 0;  // in the tier
  Time baseline;         // the intact iteration
  // Frontend: the intact fabric's data read and checkpoint write, and the checkpoint interval and mode.
  double data_read_s = 0;
  double checkpoint_write_s = 0;
  double checkpoint_interval_hours = 0;  // +inf when nothing interrupts the job
  bool async_checkpoints = false;
  std::vector<UpgradePlan> plans;
  size_t best = 0;                // the recommended plan (above)
  size_t least = 0;               // the plan with the least extra time
  int64_t runs = 0;               // iterations simulated, the intact one included
  std::vector<int64_t> left_out;  // batch sizes at or above the tier's switch count
  int32_t threads = 1;            // steps simulated at once
  double stop_hours = 0;          // what a step that stops the job costs it: step, checkpoint and restart
};

// InputError naming maintenance.tier for a tier the fabric does not have (with the tiers it has), and
// the engine's error for one that cannot drain switches.
UpgradeResult plan_upgrade(const scenario::Setup& s, const Progress& progress = {});
// Its inputs checked, nothing run (the tier, the batches, the network, the engine): a web request's check, so that
// a bad one is answered at once rather than failing after it was accepted.
void check_upgrade(const scenario::Setup& s);

// The plan with the least extra time (then the shortest window), and the recommended one: the shortest window
// among the plans within `negligible_hours` of that least (then the least extra time). Both 0 when empty.
size_t least_extra_plan(const std::vector<UpgradePlan>& plans);
size_t recommended_plan(const std::vector<UpgradePlan>& plans, double negligible_hours);

}  // namespace podnet::study
