// PlanRunner: the dependency bookkeeping of a TransferPlan, one copy for the
// engines that simulate time (flow, packet). The analytical engine groups a
// plan into concurrent sets instead (analytical_backend.hpp) and applies the
// same start rule over plan::topological_order.
//
// Rule (plan/transfer_plan.hpp): a transfer starts when all its dependencies
// have completed, i.e. at
//     start(j) = max over d in deps(j) of finish(d)      (0 for no deps)
// and completes when the last of its parts (the flows or QP streams an engine
// made of it; a timer for a compute) is done. What a part is and when it
// finishes is the engine's; which transfers become ready when, and in what
// order they are handed to the engine, is this class's:
// - start() launches the transfers without dependencies at time 0, by index;
// - complete(i, t) records i's finish t (and the makespan), then launches each
//   dependent whose last dependency i was, by index, each at its start time
//   above (a dependency listed twice is counted twice).
// The engines complete transfers in time order, so each transfer is launched
// the moment its last dependency finishes. Launch callbacks are templates (no
// std::function per completion): this runs once per transfer of 10^5-10^6
// transfer plans.
//
// The plan is checked up front: a dependency index out of range or a cycle
// throws Error (an algorithm bug, not an input error).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/error.hpp"
#include "engine/backend.hpp"
#include "plan/transfer_plan.hpp"

namespace podnet::engine {

class PlanRunner {
 public:
  // Sizes report.transfers (one timing per transfer); the runner fills their
  // start and finish times and report.makespan.
  PlanRunner(const plan::TransferPlan& plan, RunReport& report) : report_(report) {
    n_ = static_cast<int32_t>(plan.transfers.size());
    report_.transfers.assign(n_, {});
    unmet_.assign(n_, 0);
    parts_left_.assign(n_, 0);
    ready_at_.assign(n_, Time());
    // Dependents in compressed rows: dependents of d are first_[d] .. first_[d + 1]
    // in dependents_, by dependent index (then by position in its deps).
    first_.assign(n_ + 1, 0);
    for (int32_t i = 0; i < n_; ++i)
      for (int32_t d : plan.transfers[i].deps) {
        if (d < 0 || d >= n_) throw Error("internal: transfer dependency out of range");
        ++first_[d + 1];
        ++unmet_[i];
      }
    for (int32_t d = 0; d < n_; ++d) first_[d + 1] += first_[d];
    dependents_.resize(first_[n_]);
    std::vector<int32_t> fill(first_.begin(), first_.end() - 1);
    for (int32_t i = 0; i < n_; ++i)
      for (int32_t d : plan.transfers[i].deps) dependents_[fill[d]++] = i;
    // Cycle check: Kahn's algorithm must reach every transfer.
    std::vector<int32_t> indeg = unmet_, stack;
    for (int32_t i = 0; i < n_; ++i)
      if (indeg[i] == 0) stack.push_back(i);
    int32_t reached = 0;
    while (!stack.empty()) {
      const int32_t d = stack.back();
      stack.pop_back();
      ++reached;
      for (int32_t k = first_[d]; k < first_[d + 1]; ++k)
        if (--indeg[dependents_[k]] == 0) stack.push_back(dependents_[k]);
    }
    if (reached != n_) throw Error("internal: transfer plan has a dependency cycle");
  }

  // progress(finished, total, at) every `every` completed transfers (a count,
  // so runs stay deterministic; see NetworkOptions::observers.progress).
  void report_progress(const std::function<void(int64_t, int64_t, Time)>* progress, int64_t every) {
    progress_ = progress && *progress && every > 0 ? progress : nullptr;
    progress_every_ = every;
  }

  int32_t size() const { return n_; }
  int32_t finished() const { return finished_; }
  bool done() const { return finished_ == n_; }
  // Every transfer has been launched (none is still waiting for a dependency).
  bool all_launched() const { return launched_ == n_; }

  // Launches the transfers without dependencies: launch(i, Time()) by index.
  template <class Launch>
  void start(Launch&& launch) {
    for (int32_t i = 0; i < n_; ++i)
      if (unmet_[i] == 0) launch_one(i, launch);
  }

  // Transfer i has `parts` more parts running; it completes with the last.
  void add_parts(int32_t i, int32_t parts) { parts_left_[i] += parts; }
  int32_t parts_left(int32_t i) const { return parts_left_[i]; }

  // One part of transfer i finished at `at`; when it was the last, i
  // completes (complete()). Returns whether it did.
  template <class Launch>
  bool part_done(int32_t i, Time at, Launch&& launch) {
    if (--parts_left_[i] > 0) return false;
    complete(i, at, launch);
    return true;
  }

  // Transfer i finished at `at`: recorded, then its ready dependents launched.
  template <class Launch>
  void complete(int32_t i, Time at, Launch&& launch) {
    report_.transfers[i].finish = at;
    report_.makespan = std::max(report_.makespan, at);
    ++finished_;
    if (progress_ && finished_ % progress_every_ == 0) (*progress_)(finished_, n_, at);
    for (int32_t k = first_[i]; k < first_[i + 1]; ++k) {
      const int32_t j = dependents_[k];
      ready_at_[j] = std::max(ready_at_[j], at);
      if (--unmet_[j] == 0) launch_one(j, launch);
    }
  }

 private:
  template <class Launch>
  void launch_one(int32_t i, Launch& launch) {
    ++launched_;
    report_.transfers[i].start = ready_at_[i];
    launch(i, ready_at_[i]);
  }

  RunReport& report_;
  int32_t n_ = 0;
  int32_t finished_ = 0;
  int32_t launched_ = 0;
  std::vector<int32_t> unmet_;       // dependencies not yet completed
  std::vector<int32_t> parts_left_;  // parts still running
  std::vector<Time> ready_at_;       // latest finish among completed dependencies
  std::vector<int32_t> first_;       // dependents of d: dependents_[first_[d] .. first_[d + 1])
  std::vector<int32_t> dependents_;
  const std::function<void(int64_t, int64_t, Time)>* progress_ = nullptr;
  int64_t progress_every_ = 0;
};

}  // namespace podnet::engine
