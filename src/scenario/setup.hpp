// scenario::Setup: a scenario resolved once into the typed settings every
// study runs on - one struct per concern, each parsed here and nowhere else:
//
//   fabric       topology: + server: + switch: + cabling:  (the built topology)
//   engine       network.engine ("analytical" | "flow" | "packet")
//   network      network: + links:  (engine::NetworkOptions; routing seeded by
//                the scenario's seed; `progress` left empty for the caller)
//   collective   collective:        (collective::Options; the permutation
//                pattern seeded by the scenario's seed)
//   placement    placement.policy   (cluster::Policy)
//   reliability  reliability: + network.collective_timeout / local_repair /
//                convergence        (reliability::Config)
//   faults       faults:            (diagnose::Fault, resolved on the fabric)
//   job(gpus)    workload:          (workload::Job, checked against the fabric)
//   jobs_entry   jobs: + workload:  (one job of several on the fabric, on its GPU count)
//   scheduler    scheduler.policy   (cluster::Scheduler, placing the jobs:)
//
// The recovery times of `network:` are read once, into
// network.failures (engine::FailureOptions, what the engines inject); the risk
// model's Config takes its copies from there, so both always agree.
//
// A value the section schemas cannot check (a failure rate's syntax, a job
// that does not fit the fabric) raises InputError located at the key's line
// ("FILE:LINE: workload.tp: ..."), as the scenario loader does.
#pragma once

#include <optional>
#include <string>

#include "cluster/jobs.hpp"
#include "cluster/placement.hpp"
#include "collective/collective.hpp"
#include "diagnose/probe.hpp"
#include "engine/options.hpp"
#include "reliability/risk.hpp"
#include "reliability/storage.hpp"
#include "scenario/scenario.hpp"
#include "topology/topology.hpp"
#include "workload/job.hpp"

namespace podnet::scenario {

struct Setup {
  Scenario scenario;
  topology::Topology fabric;
  std::string engine;
  engine::NetworkOptions network;
  collective::Options collective;
  cluster::Policy placement = cluster::Policy::TopologyAware;
  reliability::Config reliability;
  reliability::StorageConfig storage;   // the scenario's `storage:`: checkpoint write and read times
  topology::FrontendConfig frontend;    // the scenario's `frontend:` (its fabric: scenario.build_frontend)
  std::vector<diagnose::Fault> faults;  // faults: (silent faults for `podnet diagnose`)

  // The scenario's `workload:` as a job on this fabric. With check_memory,
  // a job that does not fit in the GPU's memory is an InputError too
  // (workload::check_memory). InputError at the key's line.
  workload::Job job(bool check_memory = true) const;
  // The GPUs a job may use: the fabric's, less those of the server slots that hold storage nodes
  // (frontend.converged). They are the first ones by rank.
  int64_t training_gpus() const;
  // Job `i` of the scenario's `jobs:` (its workload on top of `workload:`) on
  // its GPU count; dp = gpus / (tp cp pp) unless the workload gives it.
  // InputError at the key's line ("FILE:LINE: jobs[1].workload.tp: ...").
  workload::Job jobs_entry(size_t i, bool check_memory = true) const;
  cluster::Scheduler scheduler = cluster::Scheduler::FirstFit;  // scheduler.policy
  // The scheduler policy of job i (its placement:, else scheduler.policy).
  cluster::Scheduler job_scheduler(size_t i) const;
};

// Resolves `sc`. `fabric`, when given, replaces the scenario's topology (a
// SimAI .topo file); otherwise the scenario's is built.
Setup resolve(Scenario sc, std::optional<topology::Topology> fabric = std::nullopt);

}  // namespace podnet::scenario
