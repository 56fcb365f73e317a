#include "study/study.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "engine/registry.hpp"

namespace podnet::study {

FailingEngine with_failures(const scenario::Setup& s, Time baseline, const std::vector<int32_t>& gpus) {
  engine::NetworkOptions o = s.network;
  o.failures.events = s.scenario.failure_events(s.fabric, baseline, gpus);
  FailingEngine f;
  f.scheduled = o.failures.events.size();
  f.backend = engine::make_backend(s.engine, s.fabric, o);
  return f;
}

void require_failure_engine(const scenario::Setup& s) {
  if (s.engine == "analytical")
    throw InputError(fmt::format("failures are injected by the flow and packet engines (the analytical engine "
                                 "times each transfer in closed form and cannot change the fabric under it); "
                                 "this run uses network.engine = {} (use --engine flow or --engine packet)",
                                 s.engine));
  s.scenario.check_failures(s.fabric);
}

}  // namespace podnet::study
