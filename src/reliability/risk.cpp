#include "reliability/risk.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

#include "core/error.hpp"
#include "reliability/checkpoint.hpp"

namespace podnet::reliability {

std::vector<ParamSpec> reliability_params() {
  std::vector<ParamSpec> v = {
      {"job_gpus", ParamType::Int, "0",
       "GPUs of the job: the first N by rank, with the servers, NICs, leaves and fabric they use; 0 = every GPU", 0,
       1e9},
      {"duration_days", ParamType::Real, "30", "window for the interruption probability and expected counts, in days",
       1e-6, 1e6},
      {"training_days", ParamType::Real, "30",
       "failure-free training time, in days; the report adds checkpoints, restarts and lost work", 1e-6, 1e6},
      {"checkpoint_cost", ParamType::Time, "5min", "time to write one checkpoint (the job does not progress)"},
      {"checkpoint_interval",
       ParamType::Time,
       "",
       "the interval the job checkpoints at now: the report gives goodput and days to train at it beside Daly's "
       "optimum (default: only Daly's)",
       1e-3,
       1e9,
       {},
       true},
      {"restart_cost", ParamType::Time, "10min",
       "time from an interruption to training again: detect, reschedule, reload the last checkpoint"},
      {"rail_failover", ParamType::Time, "2s", "stall when a NIC or NIC link fails over to the spare rail"},
      {"spare_rail", ParamType::Bool, "false",
       "servers have a spare rail: NIC and NIC-to-leaf link failures fail over instead of stopping the job"},
      {"monte_carlo_trials", ParamType::Int, "10000", "Monte-Carlo trials (0 = closed form only; else at least 100)", 0,
       1e6},
  };
  for (const auto& p : presets())
    v.push_back({std::string(p.name) + "_mtbf", ParamType::String, mtbf_text(p.mtbf_hours),
                 fmt::format("failure rate per {} as MTBF, FIT, annualized failure rate or monthly availability "
                             "(\"50000h\", \"1000FIT\", \"2%/y\", \"99.9%\"); default: {}",
                             p.per, p.source)});
  return v;
}

Config default_config() {
  Config c;
  for (const auto& p : presets()) c.set_rate(p.part, 1.0 / p.mtbf_hours);
  return c;
}

Config config_from(const Params& p) {
  Config c;
  for (const auto& pr : presets()) {
    const std::string key = std::string(pr.name) + "_mtbf";
    std::string expected;
    auto rate = parse_rate(p.get_string(key), expected);
    if (!rate)
      throw ParamError("reliability." + key,
                       fmt::format("'{}' is not valid: expected {}", p.get_string(key), expected));
    c.set_rate(pr.part, *rate);
  }
  auto hours = [&](const char* k) { return p.get_time(k).seconds() / 3600.0; };
  c.job_gpus = p.get_int("job_gpus");
  c.duration_hours = p.get_real("duration_days") * 24.0;
  c.training_hours = p.get_real("training_days") * 24.0;
  c.checkpoint_cost_hours = hours("checkpoint_cost");
  c.restart_cost_hours = hours("restart_cost");
  if (p.has("checkpoint_interval")) c.checkpoint_interval_hours = hours("checkpoint_interval");
  c.rail_failover_s = p.get_time("rail_failover").seconds();
  c.spare_rail = p.get_bool("spare_rail");
  c.trials = p.get_int("monte_carlo_trials");
  // Under 100 trials the simulation was skipped with an empty reason ("Monte Carlo skipped: "): refused here.
  if (c.trials > 0 && c.trials < 100)
    throw ParamError("reliability.monte_carlo_trials",
                     fmt::format("{} trials are too few for a 95 % interval; expected 0 (the closed form alone) or "
                                 "at least 100",
                                 c.trials));
  // An interval of 0 checkpoints without end: the section it asks for vanished without a word.
  if (p.has("checkpoint_interval") && !(c.checkpoint_interval_hours > 0))
    throw ParamError("reliability.checkpoint_interval",
                     fmt::format("'{}' is not valid: expected a positive interval, e.g. \"2h\" (leave the key out "
                                 "for Daly's optimum alone)",
                                 p.text("checkpoint_interval")));
  if (!(c.checkpoint_cost_hours > 0))
    throw ParamError("reliability.checkpoint_cost",
                     fmt::format("'{}' is not valid: expected a positive time (writing a checkpoint takes time, "
                                 "e.g. \"5min\")",
                                 p.text("checkpoint_cost")));
  return c;
}

Risk assess(const Inventory& inv, const Config& cfg) {
  Risk r;
  r.duration_hours = cfg.duration_hours;
  const double T = cfg.duration_hours;
  for (const auto& comp : inv.classes) {
    ClassRisk c;
    c.component = comp;
    c.rate_per_hour = cfg.rate(comp.part);
    switch (comp.role) {
      case Role::Compute:
      case Role::DirectLink:
      case Role::Leaf: c.always = true; break;
      case Role::Rail:
        if (cfg.spare_rail) {
          c.recovery_s = cfg.rail_failover_s;
          c.interrupts = c.recovery_s > cfg.collective_timeout_s;
        } else {
          c.always = true;
        }
        break;
      case Role::FabricLink:
      case Role::FabricSwitch:
        // The failure injection's rule (inventory.hpp, ComponentClass::local): repaired where it happens
        // (network.local_repair) or after the routing protocol converges (network.convergence).
        c.recovery_s = comp.local ? cfg.link_recovery_s : cfg.switch_recovery_s;
        c.interrupts = c.recovery_s > cfg.collective_timeout_s;
        break;
    }
    c.interrupts = c.interrupts || c.always;
    c.class_rate = static_cast<double>(comp.count) * c.rate_per_hour;
    c.expected_failures = c.class_rate * T;
    if (c.interrupts) {
      c.expected_interruptions = c.expected_failures;
      r.interrupt_rate += c.class_rate;
    } else {
      r.absorbed_rate += c.class_rate;
      r.stall_hours += c.expected_failures * c.recovery_s / 3600.0;
    }
    r.classes.push_back(c);
  }
  for (auto& c : r.classes) c.share = c.interrupts && r.interrupt_rate > 0 ? c.class_rate / r.interrupt_rate : 0.0;
  r.expected_interruptions = r.interrupt_rate * T;
  r.probability = -std::expm1(-r.expected_interruptions);
  r.mtbi_hours = r.interrupt_rate > 0 ? 1.0 / r.interrupt_rate : std::numeric_limits<double>::infinity();
  r.absorbed_failures = r.absorbed_rate * T;
  return r;
}

CheckpointAdvice advise(const Risk& risk, const Config& cfg) {
  CheckpointAdvice a;
  const double M = risk.mtbi_hours, d = cfg.checkpoint_cost_hours, R = cfg.restart_cost_hours;
  a.interval_hours = std::max(daly_interval(d, M), cfg.min_interval_hours);
  a.young_interval_hours = std::max(young_interval(d, M), cfg.min_interval_hours);
  a.goodput = goodput(a.interval_hours, d, R, M);
  a.goodput_young = goodput(a.young_interval_hours, d, R, M);
  a.days_to_train = a.goodput > 0 ? cfg.training_hours / a.goodput / 24.0 : std::numeric_limits<double>::infinity();
  if (cfg.checkpoint_interval_hours > 0) {
    a.chosen_interval_hours = cfg.checkpoint_interval_hours;
    a.goodput_chosen = goodput(a.chosen_interval_hours, d, R, M);
    a.days_to_train_chosen = a.goodput_chosen > 0 ? cfg.training_hours / a.goodput_chosen / 24.0
                                                  : std::numeric_limits<double>::infinity();
  }
  return a;
}

}  // namespace podnet::reliability
