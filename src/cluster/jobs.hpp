// Several training jobs on one fabric: a cluster scheduler gives each job its
// GPUs, every job's iteration runs together on the shared fabric and again
// alone, and what sharing the fabric cost each job is measured.
//
// Scheduler policies (scenario `scheduler.policy`, per job `jobs[i].placement`)
// place the jobs in list order, each on GPUs no earlier job holds:
// - first-fit: the first N free GPUs in the fabric's numbering (servers in
//   order, GPUs of a server in local order). A scheduler that sees the
//   nodes as a one-dimensional array and ignores the fabric.
// - topology-aware: the job in as few aggregation groups as possible. If one
//   group's free GPUs hold it, the group with the fewest free GPUs that does
//   (best fit: emptier groups stay whole for larger jobs; ties to the lowest
//   group); otherwise groups by most free GPUs first (ties to the lowest
//   group) until the job fits, the last of them re-chosen best fit for what is
//   left. Slurm's topology/tree plugin works the same way: the lowest switch
//   that can hold the job, then its leaf switches best fit
//   (https://slurm.schedmd.com/topology.html, "Tree Topology").
// - random: the servers with free GPUs in a seeded random order (Fisher-Yates
//   on the Rng stream "scheduler/<job index>" of the scenario seed), their
//   free GPUs in local order.
// Inside its allocation, job rank r runs on the r-th GPU in (pod, group,
// server, local) order, so a TP group stays inside a server when the job got
// whole servers and t divides the GPUs per server.
//
// Fragmentation (after every job is placed): the aggregation groups each job
// spans, and the free GPUs stranded in partially used groups (groups where
// some GPUs are taken and some are free: a later job needing a whole group
// cannot use them). Fabrics without group labels count as one group.
//
// Together vs alone. Each job's iteration is one plan::TransferPlan
// (workload::build_iteration on its GPUs). run_jobs merges them into one plan:
// job j's transfers, dependency indices shifted, behind a Compute op of
// length start_j on its GPUs (label "start/<name>"; absent when start_j = 0)
// on which its root transfers depend. The merged plan runs once on the
// engine: job j's iteration together is the latest finish among its
// transfers minus start_j. Each job's own plan then runs alone on the idle
// fabric. Interference ratio = together / alone: 1 when the job's flows never
// share a link with another job's flow, since a flow's max-min rate depends
// only on the flows it shares links with (flow engine: maxmin.hpp; packet
// engine: different jobs' packets never meet in a queue); above 1 when they
// contend.
//
// Link sharing: every flow's routed payload (engine::NetworkOptions::observers.on_route,
// bytes x coefficient per directed link) is added to its job's bytes on that
// link in the together run; a link carrying bytes of two or more jobs is
// shared. Adaptive routing chooses routes by the load present when a flow
// starts, so its routes (and which links are shared) come from the together
// run, not from the runs alone.
//
// ASSUMPTIONS: the jobs' TP/EP/CP collectives are timed alone when each job's
// op times are derived (training.hpp: one collective timed per job, then
// delays); only the traffic in the iteration plan (PP p2p, DP collectives)
// meets the other jobs' traffic. One iteration per job: a job starting after
// another's iteration ended sees an idle fabric.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/params.hpp"
#include "core/units.hpp"
#include "engine/options.hpp"
#include "plan/transfer_plan.hpp"
#include "topology/topology.hpp"

namespace podnet::cluster {

enum class Scheduler : uint8_t { FirstFit, TopologyAware, Random };

struct SchedulerInfo {
  const char* name;
  const char* description;
  Scheduler policy;
};
const std::vector<SchedulerInfo>& schedulers();
const char* scheduler_name(Scheduler s);
// Throws InputError listing the policies.
Scheduler parse_scheduler(std::string_view name);

// Scenario section `scheduler:` (policy).
std::vector<ParamSpec> scheduler_params();

// The fabric's GPUs in (pod, group, server, local, rank) order.
std::vector<int32_t> gpus_in_fabric_order(const topology::Topology& topo);

// Places jobs of `sizes[j]` GPUs in order with `policies[j]`: the GPUs of
// each job, rank order (header). Throws InputError naming the job (`names[j]`)
// when the free GPUs are too few.
std::vector<std::vector<int32_t>> schedule(const topology::Topology& topo, const std::vector<int64_t>& sizes,
                                           const std::vector<Scheduler>& policies,
                                           const std::vector<std::string>& names, uint64_t seed);

struct Fragmentation {
  std::vector<int32_t> groups_spanned;  // per job: aggregation groups holding its GPUs
  int32_t groups = 0;                   // groups in the fabric
  int32_t groups_full = 0;              // every GPU taken
  int32_t groups_partial = 0;           // some taken, some free
  int32_t groups_empty = 0;             // none taken
  int64_t free_gpus = 0;
  int64_t stranded_gpus = 0;  // free GPUs in partially used groups
};
Fragmentation fragmentation(const topology::Topology& topo, const std::vector<std::vector<int32_t>>& allocations);

// One job's iteration as run_jobs takes it.
struct JobPlan {
  std::string name;
  plan::TransferPlan plan;
  std::vector<int32_t> gpus;  // its GPUs (the start delay runs on them)
  Time start;
};

// A link that carried bytes of two or more jobs in the together run.
struct SharedLink {
  int32_t link = 0;           // routing::DirLink
  std::vector<double> bytes;  // payload bytes per job
  double total() const {
    double t = 0;
    for (double b : bytes) t += b;
    return t;
  }
};

struct JobOutcome {
  Time together, alone;      // iteration time (together: from its start)
  Time finish;               // together: absolute end of its last transfer
  double ratio = 1.0;        // together / alone
  double network_bytes = 0;  // payload bytes it put on links (sum over links), together
  double shared_bytes = 0;   // of which on links shared with another job
  int64_t links = 0;         // directed links it used
  int64_t shared_links = 0;  // of which shared with another job
};

struct JobsRun {
  std::string engine;
  Time makespan;  // the together run's
  std::vector<JobOutcome> jobs;
  int64_t links_used = 0;          // directed links with bytes of some job
  std::vector<SharedLink> shared;  // every shared link, most bytes first (ties by link)
  uint64_t flows = 0;              // together run
};

// Merges the jobs' plans (header) into one; `owner` receives the job of each transfer of the merged plan.
plan::TransferPlan merge_plans(const std::vector<JobPlan>& jobs, std::vector<int32_t>& owner);

// Throws InputError unless `engine` has contention between operations (flow, packet).
void check_jobs_engine(std::string_view engine);

// Runs the jobs together and each alone on `engine` ("flow" or "packet"; the
// analytical engine has no contention between operations and is refused)
// with `options` (its on_route is replaced). `phase`, when set, is told which of the n + 1 runs starts ("the 2
// jobs together (run 1 of 3)", "job a alone (run 2 of 3)"): progress lines name it.
JobsRun run_jobs(const std::vector<JobPlan>& jobs, const topology::Topology& topo, std::string_view engine,
                 const engine::NetworkOptions& options, const std::function<void(const std::string&)>& phase = {});

}  // namespace podnet::cluster
