// The engine registry: every fidelity under its name, with a description
// (`podnet list`) and a factory (make_backend). An explicit table in
// registry.cpp, not self-registration from static initializers: those are
// dropped by the linker when nothing else references their object file in a
// static library. Adding an engine: its backend class, one row in the table.
//
// The layers above ask an engine what it can do (EngineTraits), never its
// name: a test (scripts/check-names.py) keeps names from being compared
// outside the registries.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/backend.hpp"
#include "engine/options.hpp"
#include "topology/topology.hpp"

namespace podnet::engine {

// What an engine can do, and what it costs in memory (scenario/estimate.hpp's model, measured per engine).
struct EngineTraits {
  bool contention = false;     // separate operations share links (jobs, a collective beside other traffic)
  bool failures = false;       // failures: change the fabric during a run (links, switches, NICs down)
  bool slow_gpus = false;      // failures that only slow GPUs' compute (gpu: ..., action: slow)
  bool packet_faults = false;  // PFC storms, silent faults and drifted ECN/PFC thresholds
  bool port_counters = false;  // per-port queue, PFC and ECN counters for telemetry (and sampled series)
  bool link_series = false;    // link-load steps: a trace's link counters, telemetry's link series
  bool rate_quantum = false;   // re-solves rates at every completion: network.flow_quantum applies
  bool many_runs = false;      // cheap enough for studies of hundreds of runs (calibrate)
  double bytes_per_flow = 0;   // memory per compiled flow
  double bytes_per_ring_hop = 0;
  double bytes_per_gpu = 0;  // per-endpoint state
  // Threads past the first (network.threads) each keep state of their own: bytes per GPU of the fabric per
  // extra thread, and the thread count a run uses for network.threads (nullptr: one).
  double bytes_per_gpu_per_thread = 0;
  int (*threads)(int32_t requested, double gpus) = nullptr;  // gpus: the fabric's
};

struct EngineInfo {
  const char* name;
  const char* description;
  EngineTraits traits;
  std::unique_ptr<NetworkBackend> (*make)(const topology::Topology& topo, const NetworkOptions& options);
};
const std::vector<EngineInfo>& engines();
// The engine named `name`; InputError listing the engines for an unknown one.
const EngineInfo& engine_info(std::string_view name);
// "flow or packet": the engines with a trait, for messages and choices.
std::string engine_names_with(bool EngineTraits::*trait, const char* last = " or ");
// Throws InputError for an unknown engine (listing them) and Error for a
// routing policy that does not apply to the topology.
std::unique_ptr<NetworkBackend> make_backend(std::string_view engine, const topology::Topology& topo,
                                             const NetworkOptions& options);
// With default options (ECMP, rocev2, no failures).
std::unique_ptr<NetworkBackend> make_backend(std::string_view engine, const topology::Topology& topo);

}  // namespace podnet::engine
