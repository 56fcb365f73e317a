// Straggler detection from an iteration's timeline: which pipeline stage and
// which part of it (compute, TP/PP/DP/EP/CP communication, optimizer) made a
// training step slower than the same step without faults, by how much, and on
// which GPUs.
//
// Data. One iteration plan (workload::IterationPlan: every compute, collective
// and pipeline send of the step, with its stage and category) run twice on the
// same placement and op durations: the no-fault baseline and the slowed run
// (the scenario's `failures:`, or a measured step). For transfer i let
// d_i = finish_i - start_i, its own duration (start is when its dependencies
// were met, so waiting is not in d_i), and e_i = d_i(slowed) - d_i(baseline)
// its excess: a straggler GPU stretches the computes of its stage (they run
// in lockstep over the stage's GPUs), a degraded or failed link the transfers
// that cross it.
//
// Critical path. From the slowed run's last transfer to finish (ties: lowest
// index), step to the dependency that finished last (ties: lowest index)
// until a transfer with none. Every transfer on it started when its
// predecessor finished, so T(slowed) = sum of d_i(slowed) over the path
// (the first starts at 0), and the same path took at most T(baseline)
// without the faults: sum of e_i over the path >= T(slowed) - T(baseline).
// The excess is summed per (stage, category) on that path; the largest group
// is the culprit, named with the GPUs of its slowest op. Equality holds when
// the faults did not move the critical path; when they did (a stage that had
// slack becomes critical), the excesses add up to more than the slowdown, and
// the report shows both figures. This is the what-if reasoning of straggler
// analyses of production training (Lin et al., "Understanding Stragglers in
// Large Model Training Using What-if Analysis", OSDI 2025; Wu et al.,
// "FALCON: Pinpointing and Mitigating Stragglers for Large-Scale
// Hybrid-Parallel Training", 2024), applied to podnet's own op graph.
//
// What the timeline cannot say: which GPU of a stage is slow (a stage's
// computes are one lockstep op over all its GPUs, so the GPUs named are the
// stage's; likewise a pipeline send is one transfer holding every replica's
// edges of its stage boundary, so it names both stages' GPUs), and which link
// slowed a collective (the transfers name GPUs, not routes). The train study completes it by counterfactual
// (study/train.hpp): the slowed run again without each injected failure in turn.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "engine/backend.hpp"
#include "workload/training.hpp"

namespace podnet::diagnose {

struct SlowPart {
  int32_t stage = 0;
  workload::Category category = workload::Category::Compute;
  Time excess;                      // sum of e_i over this part's transfers on the critical path
  int32_t ops = 0;                  // transfers of this part on the critical path
  std::string worst;                // label of the op with the largest excess
  Time worst_excess;                // its e_i
  std::vector<int32_t> worst_gpus;  // its GPUs (plan::Transfer::ranks, sorted)
};

struct StragglerReport {
  Time baseline, slowed;        // iteration times
  Time path_excess;             // sum of e_i over the critical path (>= slowed - baseline)
  std::vector<SlowPart> parts;  // parts with excess != 0, largest first (ties: stage, then category); a
                                // part can run faster (traffic moved off it): its excess is negative
  int32_t path_length = 0;      // transfers on the slowed run's critical path
};

// Throws Error when either run's timings do not match the plan.
StragglerReport locate_slowdown(const workload::IterationPlan& ip, const engine::RunReport& baseline,
                                const engine::RunReport& slowed);

}  // namespace podnet::diagnose
