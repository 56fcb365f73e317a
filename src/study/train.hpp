// The train study (`podnet train`, and the training half of `podnet run`):
// one iteration of the scenario's `workload:` (or an imported SimAI
// workload, or Chakra execution traces) on the Setup's fabric, placed by placement.policy and timed on
// its engine; with the scenario's `failures:`, the same iteration again with
// them injected, and which stage, part, GPU or link made it slower
// (straggler detection: the timeline against the baseline's, then each
// failure left out in turn); days to train with failures; optionally the
// scaling-efficiency sweep.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cluster/placement.hpp"
#include "diagnose/straggler.hpp"
#include "scenario/setup.hpp"
#include "study/frontend_io.hpp"
#include "study/reliability.hpp"
#include "study/scaling.hpp"
#include "study/study.hpp"
#include "workload/chakra.hpp"
#include "workload/job.hpp"
#include "workload/simai.hpp"
#include "workload/training.hpp"

namespace podnet::study {

struct TrainRequest {
  bool allow_oom = false;  // time a job that does not fit in the GPU's memory
  bool trace = false;      // keep per-op timings (report::write_training_trace)
  // With `trace` on the flow engine: the N links that carried the most bytes as counter tracks of their
  // utilization (0 = none; every link-load step of the iteration is recorded, which costs memory: the
  // default aipod-16k run grew from about 0.4 GB to 4.6 GB).
  int32_t trace_links = 0;
  std::string simai_workload;  // a SimAI/AICB workload file instead of `workload:` ("" = none)
  std::string chakra;          // a directory of Chakra execution traces (PREFIX.<rank>.et) instead ("" = none)
  bool failures = true;        // also run the iteration with the scenario's `failures:` (when it has some)
  // The scaling sweep (scaling_sweep, study/scaling.hpp): when `sweep`, DP sizes (empty:
  // 1, 2, 4, ... up to the job's, multiples of EP; the job's own DP is always
  // added) at per-GPU NIC caps in bytes/s (empty: as built, 50, 20, 10, 5 GB/s).
  bool sweep = false;
  std::vector<int64_t> sweep_dps;
  std::vector<double> sweep_caps;
  TelemetryRequest telemetry;  // of the iteration (with the failures when there are any), not of the sweep
};

// What one injected failure costs: the iteration with every failure, minus
// the iteration with all but this one (the counterfactual that names the
// culprit GPU or link; negative when it happened to help).
struct FailureCost {
  std::string what;
  Time at;
  Time recovered;
};

// At most this many failure events get a counterfactual run each.
inline constexpr size_t kMaxCounterfactuals = 16;

struct IterationWithFailures {
  Time baseline;              // the failure-free iteration
  workload::TrainResult run;  // the same iteration (placement, per-op times) with the failures
  size_t scheduled = 0;       // events scheduled
  // Straggler detection (diagnose/straggler.hpp), when the job did not stop and the iteration took longer: the
  // slowed timeline against the baseline's, then each failure left out in turn (up to kMaxCounterfactuals
  // events), largest first.
  std::optional<diagnose::StragglerReport> straggler;
  std::vector<FailureCost> costs;
};

struct TrainStudy {
  workload::Job job;
  workload::TrainResult result;
  std::vector<int32_t> gpus;  // the placement: GPU rank of each job rank
  std::optional<IterationWithFailures> failures;
  // Days to train need a token budget, which an imported workload does not give.
  std::optional<TrainingReliability> reliability;
  // With storage nodes on the frontend (frontend.storage_nodes): one iteration's samples read from them.
  std::optional<DataLoading> data_loading;
  // With storage on the back end (frontend.converged) and asynchronous checkpoints: the write behind training.
  std::optional<WriteBehindTraining> write_behind;
  // With tenants: those whose servers the job's GPUs take, when more than one (their VRFs do not route to
  // each other, so the job could not run across them as configured).
  std::vector<std::string> tenants_spanned;
  std::string imported_source;  // the SimAI workload file, when imported
  std::vector<workload::simai::GroupTraffic> imported;
  std::optional<workload::chakra::Imported> chakra;  // when run from Chakra traces (imported_source: the directory)
  bool swept = false;
  std::vector<ScalingPoint> sweep;
  TelemetryResult telemetry;
};

// Refuses a scenario with `jobs:` (study/jobs.hpp runs those).
TrainStudy train(const scenario::Setup& s, const TrainRequest& r, const Progress& progress = {});

// How a training iteration's network work spreads over its time, on `backend` (the analytical engine): 257
// points, work[k] the share done by k / 256 of the iteration. A transfer's work is its bytes times the flows
// it runs (a ring's hops, a coupled step's edges), spread evenly from its start to its finish; compute costs
// none. What a packet run's progress lines go by: its compute passes cost nothing to simulate, its traffic
// does (Progress::expect). Empty when the iteration moves nothing over the network.
std::vector<double> network_work(const workload::Job& job, const std::vector<int32_t>& gpus,
                                 const topology::Topology& topo, engine::NetworkBackend& backend,
                                 const workload::TrainOptions& topt);

}  // namespace podnet::study
