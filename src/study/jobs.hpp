// The jobs study (`podnet train` on a scenario with `jobs:`): several
// training jobs on one fabric. The cluster scheduler (scheduler.policy, or a
// job's placement:) gives each job its GPUs (cluster/jobs.hpp); each job's
// iteration is built on them (workload/training.hpp, TP/EP/CP collectives
// timed alone), the iterations run together on the shared fabric (each from
// its start time) and each alone; per job: iteration together vs alone (the
// interference ratio), bytes on links shared with other jobs; over the
// fabric: the shared links (bytes per job) and the fragmentation of
// aggregation groups.
//
// Runs on the flow engine, and the packet engine for small fabrics; refuses
// the analytical engine (no contention between operations) and `failures:`
// (not simulated with several jobs yet).
#pragma once

#include <string>
#include <vector>

#include "cluster/jobs.hpp"
#include "scenario/setup.hpp"
#include "study/study.hpp"
#include "workload/job.hpp"
#include "workload/training.hpp"

namespace podnet::study {

struct JobsRequest {
  bool allow_oom = false;  // time jobs that do not fit in the GPU's memory
};

struct JobResult {
  std::string name;
  workload::Job job;
  Time start;
  std::string policy;                    // the scheduler policy that placed it
  std::vector<int32_t> gpus;             // GPU of each job rank
  workload::PlacementSummary placement;  // its cross-spine traffic (cluster::summarize)
  cluster::JobOutcome outcome;
  int32_t groups_spanned = 0;
};

struct JobsStudy {
  std::vector<JobResult> jobs;
  cluster::JobsRun run;
  cluster::Fragmentation fragmentation;
};

JobsStudy jobs(const scenario::Setup& s, const JobsRequest& r, const Progress& progress = {});

}  // namespace podnet::study
