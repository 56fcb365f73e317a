// The `podnet plan-upgrade` result (study::plan_upgrade): its JSON document, and a console summary: the
// plans side by side, the recommended one, and its steps.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

#include "scenario/setup.hpp"
#include "study/upgrade.hpp"

namespace podnet::report {

// {tier, switches, step_time_minutes, job: {gpus, iteration_ms}, runs, steps_simulated_per_plan,
//  plans: [{batch, grouping, steps, simulated_steps, worst_slowdown, mean_slowdown, stopping_steps,
//  extra_hours, window_hours, step_list: [{switches, slowdown (null: stops the job), simulated, failure}]}],
//  best: {the recommended plan's batch, grouping, steps, worst_slowdown, extra_hours, window_hours},
//  least_extra: {the same of the plan with the least extra time}, negligible_minutes}
nlohmann::json upgrade_document(const scenario::Setup& s, const study::UpgradeResult& r);
void write_upgrade_table(const nlohmann::json& doc, std::ostream& out);

}  // namespace podnet::report
