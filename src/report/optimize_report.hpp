// The `podnet optimize` result: the search space, how many designs were
// infeasible or pruned, every candidate timed, the Pareto front with the
// design file of each point, and the reference design's verdict.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "study/optimize.hpp"

namespace podnet::report {

// `design_files[k]`: the file written for front point k (same order as r.front).
// `job`: the job every point times, in words (model, layout, batch), printed under the headline.
void add_optimize(nlohmann::json& doc, int64_t gpus, const std::string& job, const study::OptimizeResult& r,
                  const std::vector<std::string>& design_files, const std::optional<study::OptimizeReference>& ref);
void write_optimize_table(const nlohmann::json& doc, std::ostream& out);

}  // namespace podnet::report
