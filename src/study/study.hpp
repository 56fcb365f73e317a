// The study layer: each study is a function from a resolved scenario
// (scenario::Setup) and a typed request to a typed result, callable from the
// CLI, a test, a sweep worker or a web request alike. Studies print nothing;
// report/ renders their results and cli/ turns flags into requests.
//
// This header holds what studies share: progress hooks, and the
// baseline-then-with-failures step that bench and train both run.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "diagnose/pfc_storm.hpp"
#include "diagnose/threshold_drift.hpp"
#include "engine/backend.hpp"
#include "scenario/setup.hpp"
#include "telemetry/recorder.hpp"

namespace podnet::study {

// What a long study reports while it runs; every hook may be empty. Engine
// progress (transfers done in one run) is the Setup's network.progress.
struct Progress {
  // A new run starts; `what` names it ("1,048,576 B", "iteration", "sweep point").
  std::function<void(const std::string& what)> run;
  // Step `done` of `total` finished; `what` names it.
  std::function<void(size_t done, size_t total, const std::string& what)> step;
  // The run just named should simulate about `expected` (a model's estimate; 0 unknown). `work`, when not
  // empty, is how the network's work spreads over that time: work[k] is the share done by k / (size - 1) of it
  // (a training iteration's compute costs an engine nothing to simulate; its traffic does).
  std::function<void(Time expected, std::vector<double> work)> expect;
};

// The scenario's `failures:` injected into a run on `gpus` whose
// failure-free length is `baseline` (random entries are drawn over it): an
// engine of the Setup's kind with those events, and how many were scheduled.
struct FailingEngine {
  std::unique_ptr<engine::NetworkBackend> backend;
  size_t scheduled = 0;
};
FailingEngine with_failures(const scenario::Setup& s, Time baseline, const std::vector<int32_t>& gpus);
// The same on network options other than the Setup's (telemetry-instrumented ones).
FailingEngine with_failures(const scenario::Setup& s, const engine::NetworkOptions& network, Time baseline,
                            const std::vector<int32_t>& gpus);

// Telemetry of a bench or train study (telemetry/recorder.hpp): recorded
// on the packet engine always (the counters are kept anyway; the summary
// needs them), on the flow engine when `series` is asked for.
struct TelemetryRequest {
  bool series = false;                      // time series too (--telemetry DIR)
  Time sample_interval = Time(10'000'000);  // packet engine sampling when `series` (10 us)
};
struct TelemetryResult {
  std::shared_ptr<telemetry::Recorder> recorder;  // null when nothing was recorded
  std::vector<diagnose::PfcStorm> storms;         // found in the packet engine's counters (diagnose/pfc_storm.hpp)
  std::vector<diagnose::ThresholdDrift> drifts;   // switches off their ECN/PFC configuration (threshold_drift.hpp)
};
// A recorder for the Setup's engine per the request, or null.
std::shared_ptr<telemetry::Recorder> make_recorder(const scenario::Setup& s, const TelemetryRequest& r);
// PFC storms in a recorder's counters.
std::vector<diagnose::PfcStorm> find_storms(const telemetry::Recorder& r);
// Switches whose ports mark or pause off the configured thresholds, from a recorder's counters.
std::vector<diagnose::ThresholdDrift> find_drifts(const telemetry::Recorder& r);

// InputError unless the Setup's engine can inject failures (flow, packet).
// Called before any run, so a bad scenario fails at once (the named failure
// targets were checked against the fabric when the Setup was resolved).
void require_failure_engine(const scenario::Setup& s);
// InputError, naming the `faults:` and the engine's key, unless the Setup's engine simulates its faults (PFC
// storms, silent faults, drifted thresholds: the packet engine). Called by bench, train and jobs before any run.
void require_fault_engine(const scenario::Setup& s);

}  // namespace podnet::study
