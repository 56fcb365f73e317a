// The optimize study (`podnet optimize`): a design-space search for a GPU
// count and a workload, returning the Pareto front of network capex, power
// and iteration time, built on two sweeps (study/sweep.hpp), so it runs on
// threads or Open MPI ranks and resumes after a kill like any sweep.
//
// 1. Design sweep over the space (optimize_axes): topology family and shape
//    (tiers, leaf and spine oversubscription) as one `topology` axis,
//    switch.radix, NIC speed zipped with switch.port_speed, server.nics
//    (rails) and cost.aoc_max_length (cabling). A point the builders refuse
//    (radix too small for the tiers, a job that does not divide, ...) is an
//    error row: infeasible, pruned.
// 2. Pruning by design metrics (free): among feasible points with the same
//    NICs (count per server and injection bandwidth per GPU, so NIC speed),
//    keep those that no other point dominates on (capex min, power min,
//    bisection max, injection bandwidth per GPU max, diameter min). The
//    assumption: a fabric with the same NICs, cheaper, cooler, with at least
//    the bandwidth at every cut and no longer paths trains no slower. (Other
//    NICs change what NCCL runs: not compared on design metrics.) Points
//    equal on all five are one candidate (the lowest id).
// 3. Train sweep over the candidates only (one zipped dimension of all the
//    axes): iteration time and days to train on the scenario's workload.
// 4. The front: candidates no other candidate dominates on (capex, power,
//    iteration time), each with the overrides that make its design file.
//
// Dominance: a dominates b when a is no worse in every objective and better
// in at least one (Deb, "Multi-Objective Optimization using Evolutionary
// Algorithms", 2001, def. 2.5); the non-dominated set is the Pareto front.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "study/sweep.hpp"

namespace podnet::study {

// Indices of the rows no other row dominates, in row order. `maximize[j]`
// says objective j is better larger. A row equal to an earlier one in every
// objective is not on the front: `dominated_by[i]` (when given) is the
// first row found dominating or equal to i, -1 for rows on the front.
std::vector<size_t> pareto_front(const std::vector<std::vector<double>>& rows, const std::vector<bool>& maximize,
                                 std::vector<int64_t>* dominated_by = nullptr);

struct OptimizeSpace {
  int64_t gpus = 0;
  std::vector<std::string> families = {"rail_clos", "fat_tree"};
  std::vector<int> tiers = {2, 3};
  std::vector<std::string> oversubscription = {"1:1", "2:1"};        // leaf
  std::vector<std::string> spine_oversubscription = {"1:1", "2:1"};  // 3 tiers only
  std::vector<int> radix = {64, 128};
  std::vector<std::string> speeds = {"400Gbps", "800Gbps"};  // server.nic_speed = switch.port_speed
  std::vector<int> nics = {4, 8};
  std::vector<std::string> aoc = {"0m", "30m"};  // cost.aoc_max_length
};

// The space as sweep axes: `topology` (a YAML map per family and shape),
// switch.radix, server.nic_speed + switch.port_speed (zipped), server.nics,
// cost.aoc_max_length; axes with one value are kept (they are part of each
// design file).
std::vector<Axis> optimize_axes(const OptimizeSpace& space);

// The columns the study reads from the design and train sweeps.
inline constexpr const char* kCapexColumn = "cost.capex_usd";
inline constexpr const char* kPowerColumn = "bom.power_kw";
inline constexpr const char* kBisectionColumn = "bisection_bandwidth_gbps";
inline constexpr const char* kInjectionColumn = "injection_bandwidth_per_gpu_gbps";
inline constexpr const char* kDiameterColumn = "diameter_hops";
inline constexpr const char* kNicsColumn = "topology.nics_per_server";
inline constexpr const char* kTimeColumn = "iteration_time_ms";
inline constexpr const char* kDaysColumn = "days_to_train";
inline constexpr const char* kDaysWithFailuresColumn = "reliability.days_to_train_with_failures";

// The scenario every point of an optimize run starts from, as YAML: `sc`
// resolved (every default filled in), its topology replaced by {family:
// the same, gpus: `gpus`} (each point's `topology` axis replaces it again),
// without failures: or faults:, workload.model set to `model` when not
// empty, and dp = gpus / (tp x pp x cp) with global_batch scaled by the
// same factor (the batch per replica kept), except with `model`: the
// scenario is then resolved with that model already (its recipe), and its
// global batch stays, as `podnet train` keeps it at any size. dp auto counts as what it is on
// the scenario's own fabric (topology.gpus / (tp x pp x cp)): until 2026-11
// it kept the global batch whatever --gpus was. InputError when gpus is not
// a multiple of tp x pp x cp, or the batch does not divide.
std::string optimize_base(const std::string& resolved_yaml, int64_t gpus, const std::string& model);
// The reference scenario (`--reference`, resolved) with its fabric as it is and the design points' job: the
// `workload:` section of `base_yaml` (optimize_base's output) whole, so that the verdict compares fabrics
// running one job; and the points' prices: base_yaml's `cost:` section whole (the cost: axes, such as
// cost.aoc_max_length, are set per comparison: cost_axis_overrides). Until 2026-12 the reference kept its own
// cost: section: aipod-16k's pluggable optics and fibre against points priced with AOCs up to 30 m, a quarter
// of the -42.8 % capex headline. A reference with an explicit dp used to run another job size than the points, and one
// whose own workload had another batch (ib-sharp-1k's 1,536 against the 192 the points of leafspine-8k's
// job at 1,024 GPUs ran) another job: its iteration was 5.4x the points' and a slower point "dominated" it.
std::string optimize_reference(const std::string& resolved_yaml, const std::string& base_yaml);

struct OptimizeRequest {
  std::string base;  // the scenario every point starts from (server, switch, cabling, workload, ...)
  std::vector<Axis> axes;
  std::string design_db, train_db;
  int jobs = 1;
  // "all": both sweeps; "design": the design sweep only (front on capex and power);
  // "train": the design database must be complete, then the train sweep. Under
  // mpirun (one sweep per MPI job) run "design", then "train", each its own mpirun.
  std::string stage = "all";
  // The third objective, a column of the train study: kTimeColumn (iteration time), kDaysColumn (days to
  // train, failure-free) or kDaysWithFailuresColumn (with the interruptions the fabric's parts cause).
  std::string objective = kTimeColumn;
};

struct OptimizePoint {
  int64_t id = 0;                   // in the design sweep
  std::vector<std::string> values;  // one per axis
  std::string label;                // short: "rail_clos 3 tiers 1:1/1:1, radix 128, 400Gbps, 8 NICs, AOC 0m"
  double capex_usd = 0, power_kw = 0, bisection_gbps = 0, injection_gbps = 0, diameter = 0, nics_per_server = 0;
  bool timed = false;
  std::string train_error;  // the train point's error (a job that does not fit), if any
  double iteration_ms = 0, days = 0;
  double objective = 0;       // the third objective's value
  int64_t dominated_by = -1;  // design id of a point that dominates it (stage 2 or 4), -1 if none
};

struct OptimizeResult {
  std::vector<Axis> axes;
  std::string objective = kTimeColumn;
  int64_t points = 0, infeasible = 0;
  std::vector<std::string> infeasible_examples;  // up to 5 distinct reasons
  std::vector<OptimizePoint> candidates;         // after design pruning, design id order
  std::vector<size_t> front;                     // indices into candidates
  SweepStats design_stats, train_stats;
};

// Runs the two sweeps with `evaluate_design` and `evaluate_train` (a point's
// study, as `podnet sweep --study design|train` runs it) and builds the front.
OptimizeResult optimize(const OptimizeRequest& r, const Evaluate& evaluate_design, const Evaluate& evaluate_train,
                        const SweepProgress& progress = {});

// A design to compare with the front (`podnet optimize --reference`), its
// objectives computed by the same design and train studies.
// Every combination of the values of `axes`' cost: keys (cost.aoc_max_length, ...) as "KEY=VALUE" overrides,
// in axis order; one empty combination when no axis is a cost: key.
std::vector<std::vector<std::string>> cost_axis_overrides(const std::vector<Axis>& axes);

struct OptimizeReference {
  std::string name;
  // The figures of the comparison the verdict makes (the matched point's pricing, below), else the first
  // pricing's.
  double capex_usd = 0, power_kw = 0, iteration_ms = 0, days = 0;
  bool timed = false;
  double objective = 0;  // the value of the result's objective column
  int64_t match = -1;    // index into candidates: the front point (lowest capex, then id) no worse in every objective
  bool equal = false;    // that point equals the reference in every objective
  std::string verdict;   // one sentence: contained, dominated by #id and why, or not dominated
  // The reference priced with each combination of the cost: axes' values (cost_axis_overrides), as the points
  // are: a point is compared with the reference priced by its own values. Empty: capex_usd and power_kw hold
  // for every point.
  struct Pricing {
    std::vector<std::string> sets;
    double capex_usd = 0, power_kw = 0;
  };
  std::vector<Pricing> pricings;
  std::string priced_as;  // the verdict's pricing's overrides, "cost.aoc_max_length=30m" ("" without cost: axes)
};
void compare_reference(const OptimizeResult& r, OptimizeReference& ref);

// A short label for a point of `axes` (the topology map's family, tiers and ratios, then the other values).
std::string point_label(const std::vector<Axis>& axes, const std::vector<std::string>& values);

// The overrides of candidate `p` (KEY=VALUE per axis) for its design file.
std::vector<std::string> point_overrides(const OptimizeResult& r, const OptimizePoint& p);

}  // namespace podnet::study
