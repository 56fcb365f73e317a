// The report of several jobs on one fabric (study::jobs; `podnet train` on a
// scenario with `jobs:`):
//   jobs[]          per job, in the scenario's order: name, model, gpus, tp/cp/pp/dp/ep, scheduler policy,
//                   start_ms, groups_spanned, cross_spine_fraction (of its DP + PP bytes, cluster::summarize),
//                   iteration_alone_ms, iteration_together_ms, interference_ratio (together / alone),
//                   network_gbyte (payload it put on links, summed over links), shared_gbyte (of which on
//                   links another job used too), links, shared_links
//   fabric          makespan_ms (the together run), links_used, shared_links, flows
//   shared_links[]  the most loaded shared links (up to network.hottest_links): link name, total_gbyte,
//                   gbyte_per_job {name: bytes}
//   fragmentation   groups, groups_full, groups_partial, groups_empty, free_gpus, stranded_gpus
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

#include "scenario/setup.hpp"
#include "study/jobs.hpp"

namespace podnet::report {

nlohmann::json jobs_document(const scenario::Setup& s, const study::JobsStudy& j);
void write_jobs_table(const nlohmann::json& doc, std::ostream& out);

}  // namespace podnet::report
