#include "study/study.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/error.hpp"
#include "engine/registry.hpp"

namespace podnet::study {

FailingEngine with_failures(const scenario::Setup& s, Time baseline, const std::vector<int32_t>& gpus) {
  return with_failures(s, s.network, baseline, gpus);
}

FailingEngine with_failures(const scenario::Setup& s, const engine::NetworkOptions& network, Time baseline,
                            const std::vector<int32_t>& gpus) {
  engine::NetworkOptions o = network;
  o.faults.failures.events = s.scenario.failure_events(s.fabric, baseline, gpus);
  FailingEngine f;
  f.scheduled = o.faults.failures.events.size();
  f.backend = engine::make_backend(s.engine, s.fabric, o);
  return f;
}

std::shared_ptr<telemetry::Recorder> make_recorder(const scenario::Setup& s, const TelemetryRequest& r) {
  const engine::EngineTraits& e = engine::engine_info(s.engine).traits;
  if (!e.port_counters && !(r.series && e.link_series)) return nullptr;
  telemetry::Options o;
  if (r.series && e.port_counters) o.sample_interval = r.sample_interval;
  return std::make_shared<telemetry::Recorder>(s.fabric, o);
}

std::vector<diagnose::PfcStorm> find_storms(const telemetry::Recorder& r) {
  std::vector<diagnose::PortPause> p(r.ports().size());
  for (size_t d = 0; d < p.size(); ++d) p[d] = {r.ports()[d].pause_rx, r.ports()[d].paused_s};
  return diagnose::find_pfc_storms(r.topology(), p, r.observed_s());
}

std::vector<diagnose::ThresholdDrift> find_drifts(const telemetry::Recorder& r) {
  if (!r.packet_level()) return {};
  std::vector<diagnose::PortThresholds> p(r.ports().size());
  for (size_t d = 0; d < p.size(); ++d) {
    const auto& c = r.ports()[d];
    p[d].ecn_marks = c.ecn_marks;
    p[d].queue_hist_s = c.queue_hist_s;
    p[d].bps = c.bps;
    p[d].kmin = c.ecn_kmin;
    p[d].kmax = c.ecn_kmax;
    p[d].pmax = c.ecn_pmax;
    p[d].paused_s = c.paused_s;
    p[d].pg_shared_max = c.pg_shared_max;
    p[d].xoff_limit = c.xoff_limit;
  }
  return diagnose::find_threshold_drifts(r.topology(), p, r.data_wire_bytes(), r.observed_s());
}

void require_failure_engine(const scenario::Setup& s) {
  using engine::EngineTraits;
  const EngineTraits& e = engine::engine_info(s.engine).traits;
  const bool only_slow_gpus = std::all_of(s.scenario.failures.begin(), s.scenario.failures.end(),
                                          [](const scenario::FailureSpec& f) { return f.target_kind == "gpu"; });
  if (e.failures || (e.slow_gpus && only_slow_gpus)) return;
  // On a large fabric the engines that take failures are slow: say so before the user switches to one.
  const auto gpus = static_cast<int64_t>(s.fabric.gpus.size());
  const std::string size_note =
      gpus >= 65536 ? fmt::format("; at {} GPUs the flow engine takes minutes a run, and the packet engine is for "
                                  "fabrics of a few thousand GPUs",
                                  thousands(gpus))
                    : "";
  throw InputError(fmt::format("{}: {} are injected by the {} engines (the {} engine cannot change the "
                               "fabric under a run{}); this run's engine is {} ({}; use --engine {}{})",
                               s.scenario.where("failures"), e.slow_gpus ? "failures other than slow GPUs" : "failures",
                               engine::engine_names_with(&EngineTraits::failures, " and "), s.engine,
                               e.slow_gpus ? "; it takes slow GPUs only: gpu: N, action: slow" : "", s.engine,
                               s.scenario.where("network.engine"),
                               engine::engine_names_with(&EngineTraits::failures, " or --engine "), size_note));
}

void require_fault_engine(const scenario::Setup& s) {
  if (engine::engine_info(s.engine).traits.packet_faults) return;
  const engine::NetworkOptions& o = s.network;
  if (o.faults.pause_storms.empty() && o.faults.silent_faults.empty() && o.faults.threshold_drifts.empty()) return;
  const std::string what = !o.faults.pause_storms.empty() ? o.faults.pause_storms.front().what + " (a PFC storm)"
                           : !o.faults.silent_faults.empty()
                               ? o.faults.silent_faults.front().what +
                                     " (a silent fault: lost, corrupted or delayed packets, a "
                                     "flapping link)"
                               : o.faults.threshold_drifts.front().what + " (drifted ECN/PFC thresholds)";
  throw InputError(fmt::format("{}: {} is simulated by the {} engine only; this run's engine is {} ({}; run "
                               "with --engine {}; `podnet diagnose` probes faults on any engine)",
                               s.scenario.where("faults"), what,
                               engine::engine_names_with(&engine::EngineTraits::packet_faults), s.engine,
                               s.scenario.where("network.engine"),
                               engine::engine_names_with(&engine::EngineTraits::packet_faults, " or --engine ")));
}

}  // namespace podnet::study
