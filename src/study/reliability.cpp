#include "study/reliability.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace podnet::study {

ReliabilityResult reliability(const scenario::Setup& s) {
  ReliabilityResult r;
  r.config = s.reliability;
  try {
    r.inventory = reliability::count_inventory(s.fabric, r.config.job_gpus);
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {}", s.scenario.where(e.key()), e.what()));
  }
  r.risk = reliability::assess(r.inventory, r.config);
  r.advice = reliability::advise(r.risk, r.config);
  const Rng rng(s.scenario.seed);
  r.interruptions = reliability::simulate_interruptions(r.risk.classes, r.config.duration_hours, r.config.trials,
                                                        rng.stream("reliability.interruptions"));
  r.training = reliability::simulate_training(r.config.training_hours, r.advice.interval_hours,
                                              r.config.checkpoint_cost_hours, r.config.restart_cost_hours,
                                              r.risk.mtbi_hours, r.config.trials, rng.stream("reliability.training"));
  return r;
}

TrainingReliability training_reliability(const scenario::Setup& s, const std::vector<int32_t>& gpus, double days) {
  reliability::Config rc = s.reliability;
  rc.training_hours = days * 24.0;
  const reliability::Risk risk = reliability::assess(reliability::count_inventory_of(s.fabric, gpus), rc);
  const reliability::CheckpointAdvice adv = reliability::advise(risk, rc);
  return {risk.mtbi_hours,       adv.interval_hours, rc.checkpoint_cost_hours,
          rc.restart_cost_hours, adv.goodput,        adv.days_to_train};
}

}  // namespace podnet::study
