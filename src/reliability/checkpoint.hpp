// Checkpoint interval and goodput of a job interrupted at rate 1/M.
//
// Symbols (all in hours): M = mean time between interruptions of the job
// (MTBI), δ = checkpoint cost (time to write one checkpoint, the job not
// progressing), R = restart cost (detect, reschedule, reload the last
// checkpoint), τ = compute time between checkpoints.
//
// Young (1974, CACM 17(9)), first order:   τ_Y = √(2δM).
// Daly (2006, FGCS 22), higher order:      τ_D = √(2δM)·[1 + ⅓√(δ/2M) + (1/9)(δ/2M)] − δ   for δ < 2M,
//                                          τ_D = M                                        for δ ≥ 2M.
// Paper examples (δ = 5 min): M = 24 h → 116.7 min, 6 h → 56.7 min,
// 15 min → 9.14 min (Daly 2006; unit tests recompute all three).
//
// Goodput (useful compute time / wall time). Daly's model (2006, §3):
// interruptions are a Poisson process of rate 1/M that can strike during
// computing, checkpointing or restarting; an interruption loses the work
// since the last completed checkpoint and costs a restart R (which may
// itself be interrupted). A segment of τ compute + δ checkpoint then takes,
// in expectation,
//     E(τ) = M·e^{R/M}·(e^{(τ+δ)/M} − 1)
// (solve E = (τ+δ) if no interruption else [time to it] + R' + E, with
// exponential interruption times), so
//     goodput = τ / E(τ),       wall time = useful time / goodput.
// Expanding to first order in (τ+δ)/M and R/M gives the familiar
//     goodput ≈ τ/(τ+δ) · [1 − (R + (τ+δ)/2)/M]
// ("each interruption costs the restart plus, on average, half a segment
// of lost work"); the exact form is used, and never goes negative.
// Goodput < 1 for every finite M and δ > 0; with τ = τ_D it tends to 1 as
// M → ∞ (τ_D/(τ_D+δ) → 1 and (τ_D+δ)/M → 0).
#pragma once

namespace podnet::reliability {

// All arguments and results in hours. M may be +infinity (no interruptions):
// intervals are then +infinity and goodput 1.
double young_interval(double checkpoint_cost, double mtbi);
double daly_interval(double checkpoint_cost, double mtbi);
// Expected wall time of one segment of `work` compute plus `checkpoint_cost`.
double expected_segment_time(double work, double checkpoint_cost, double restart_cost, double mtbi);
double goodput(double interval, double checkpoint_cost, double restart_cost, double mtbi);
// The first-order approximation above (for comparison; may be negative when M is small).
double goodput_first_order(double interval, double checkpoint_cost, double restart_cost, double mtbi);
// Whether M is shorter than a checkpoint and a restart take together: Young and Daly assume both short beside
// M, and past that their intervals and goodput only say how far out of range the job is (a million GPUs on
// podnet's defaults: M = 2.6 min against 5 + 10 min).
inline bool beyond_model(double checkpoint_cost, double restart_cost, double mtbi) {
  return mtbi < checkpoint_cost + restart_cost;  // false for M = +infinity
}

}  // namespace podnet::reliability
