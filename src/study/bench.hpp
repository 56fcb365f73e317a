// The bench study (`podnet bench`): nccl-tests for a fabric that does not
// exist yet. One collective on a group of GPUs, timed at each size on the
// Setup's engine; with the scenario's `failures:`, each size runs twice, on
// the fabric as built (the baseline) and with the failures injected. Plans
// made of point-to-point flows (the permutation and incast patterns of
// collective/patterns.hpp, alltoall, sendrecv) also report the distribution
// of their flows' completion times.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collective/collective.hpp"
#include "collective/ring_order.hpp"
#include "engine/backend.hpp"
#include "engine/report_util.hpp"
#include "scenario/setup.hpp"
#include "study/study.hpp"

namespace podnet::study {

struct BenchRequest {
  collective::Op op = collective::Op::AllReduce;
  // "auto" (NCCL's tuner picks per size; with collective.nccl_model = false,
  // the op's default algorithm) or one algorithm's name.
  std::string algo = "auto";
  collective::Group group;  // GPU ranks; empty = every GPU of the fabric
  std::vector<Bytes> sizes;
  TelemetryRequest telemetry;
};

struct BenchRow {
  Bytes bytes = 0;
  engine::RunReport run;                      // with the failures when there are any
  std::optional<engine::RunReport> baseline;  // the failure-free run, when the scenario has failures
  size_t scheduled = 0;                       // failure events scheduled for this size
  std::string algorithm, protocol;            // as chosen for this size
  int channels = 0;
  std::optional<double> nccl_model_us;  // NCCL's own cost model for that algorithm and protocol (channels auto only)
  // Per-flow completion times (engine::flow_times) when the plan is independent P2p flows: the
  // permutation and incast patterns, alltoall, sendrecv. baseline_fct: of the failure-free run.
  std::optional<engine::FlowTimes> fct, baseline_fct;
};

struct BenchResult {
  collective::Op op = collective::Op::AllReduce;
  std::string algo;  // as requested, after resolving "auto" without the tuner
  collective::Group group;
  double bus_factor = 0;  // nccl-tests' busbw / algbw
  std::vector<BenchRow> rows;
  // The first ring of the largest size's plan (rings only), with its label.
  std::optional<collective::RingStats> ring;
  std::string ring_label;
  // Counters of every size's run (with the failures when there are any), and the PFC storms in them.
  TelemetryResult telemetry;
};

// InputError for a bad group, algorithm or size.
BenchResult bench(const scenario::Setup& s, const BenchRequest& r, const Progress& progress = {});

// Sizes lo, lo*factor, ... up to hi (inclusive; a 1e-12 relative slack), as
// nccl-tests' -b/-e/-f. InputError for lo = 0, lo > hi, factor <= 1 with
// lo != hi, or more than kMaxSizes sizes.
inline constexpr size_t kMaxSizes = 4096;
std::vector<Bytes> size_series(Bytes lo, Bytes hi, double factor);

// What a bench request's algorithm text means, the one rule every front end (podnet bench, sweep, diff,
// serve) applies: "auto"; one algorithm's name, fixed for every size (one of NCCL's is also the tuner's
// list, collective.algorithms, so that the resolved scenario and the tuner line say it and reproduce the
// run); or an NCCL_ALGO-style list for the tuner ("ring,tree", "^nvls": collective.algorithms, and the
// request's algo "auto"). InputError "LABEL: 'TEXT' is not an algorithm ..." for one word that names none.
struct AlgoChoice {
  std::string algo = "auto";        // BenchRequest::algo
  std::string scenario_algorithms;  // collective.algorithms to set ("" = none)
};
AlgoChoice algo_choice(const std::string& text, const std::string& label);

// One transport of a comparison (podnet bench --compare-cc, the dashboard's bench): a congestion control
// (network.cc) or a deployment preset (network.preset and each of its keys but those the user gave), run
// on the packet engine (the caller sets network.engine).
struct TransportChoice {
  std::string name;
  std::vector<std::pair<std::string, std::string>> sets;  // scenario keys and values, in order
};
// The comma-separated list's transports, in order. InputError "LABEL 'LIST': ..." for an empty, repeated or
// unknown item, naming the congestion controls and presets. `user_gave(key)`: the user set that key.
std::vector<TransportChoice> transport_choices(const std::string& list, const std::string& label,
                                               const std::function<bool(const std::string&)>& user_gave);

}  // namespace podnet::study
