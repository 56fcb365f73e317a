#include "study/jobs.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "engine/registry.hpp"
#include "scenario/estimate.hpp"

namespace podnet::study {

JobsStudy jobs(const scenario::Setup& s, const JobsRequest& r, const Progress& progress) {
  const auto& specs = s.scenario.jobs;
  if (specs.empty()) throw InputError(s.scenario.source + ": jobs: the scenario has no jobs");
  cluster::check_jobs_engine(s.engine);
  if (!s.scenario.failures.empty())
    throw InputError(s.scenario.where("failures") +
                     ": failures during several jobs are not simulated yet; expected a scenario with either `jobs:` "
                     "or `failures:`");
  const topology::Topology& topo = s.fabric;
  JobsStudy out;
  std::vector<int64_t> sizes;
  std::vector<cluster::Scheduler> policies;
  std::vector<std::string> names;
  for (size_t i = 0; i < specs.size(); ++i) {
    JobResult j;
    j.name = specs[i].name;
    j.job = s.jobs_entry(i, !r.allow_oom);
    j.start = specs[i].start;
    policies.push_back(s.job_scheduler(i));
    j.policy = cluster::scheduler_name(policies.back());
    sizes.push_back(j.job.gpus());
    names.push_back(j.name);
    out.jobs.push_back(std::move(j));
  }
  const std::vector<std::vector<int32_t>> alloc = cluster::schedule(topo, sizes, policies, names, s.scenario.seed);
  out.fragmentation = cluster::fragmentation(topo, alloc);
  workload::TrainOptions topt;
  topt.collective = s.collective;
  // The memory guard as the jobs' plans grow, the jobs built before this one's included (and all of them
  // again below, with the links' bytes per job, before they run).
  scenario::estimate::PlanSize built;  // by the jobs before
  topt.plan_guard = [&built, grows = scenario::estimate::growing_plan_guard(
                                 scenario::estimate::fabric(static_cast<int64_t>(topo.gpus.size())), s.engine,
                                 static_cast<double>(topo.gpus.size()), "jobs (fewer or smaller)",
                                 fmt::format("{} jobs together", out.jobs.size()))](const plan::PlanWeight& w) {
    grows({built.flows + w.flows, built.hops + w.hops});
  };
  require_fault_engine(s);
  auto backend = engine::make_backend(s.engine, topo, s.network);
  std::vector<cluster::JobPlan> plans;
  for (size_t i = 0; i < out.jobs.size(); ++i) {
    JobResult& j = out.jobs[i];
    // Each job's operations are timed alone first; then every job runs together (below).
    if (progress.run)
      progress.run(fmt::format("job {} ({} of {}), its operations alone", j.name, i + 1, out.jobs.size()));
    j.gpus = alloc[i];
    j.groups_spanned = out.fragmentation.groups_spanned[i];
    j.placement = cluster::summarize(j.job, j.gpus, topo, topt.collective, j.policy);
    const workload::IterationTimes times = workload::iteration_times(j.job, j.gpus, topo, *backend, topt);
    plans.push_back({j.name, workload::build_iteration(j.job, j.gpus, topo, times, topt).plan, j.gpus, j.start});
    const scenario::estimate::PlanSize one = scenario::estimate::plan_size(plans.back().plan);
    built.flows += one.flows;
    built.hops += one.hops;
    if (progress.step) progress.step(i + 1, out.jobs.size(), "job");
  }
  // The memory guard (scenario/estimate.hpp): the merged plan (every job's transfers) on the engine, plus the
  // bytes-per-job table of every directed link.
  scenario::estimate::Estimate e = scenario::estimate::fabric(static_cast<int64_t>(topo.gpus.size()));
  scenario::estimate::add_run(e, s.engine, static_cast<double>(topo.gpus.size()), built, "jobs (fewer or smaller)");
  e.parts.push_back({"link bytes per job",
                     2.0 * static_cast<double>(topo.links.size()) * static_cast<double>(plans.size()), 8.0,
                     "jobs (fewer)"});
  scenario::estimate::check(e, fmt::format("{} jobs together", plans.size()));
  out.run = cluster::run_jobs(plans, topo, s.engine, s.network, progress.run);  // names each of its runs
  for (size_t i = 0; i < out.jobs.size(); ++i) out.jobs[i].outcome = out.run.jobs[i];
  return out;
}

}  // namespace podnet::study
