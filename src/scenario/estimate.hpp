// Memory guard: before a run allocates anything large, estimate its peak
// resident memory from what the scenario resolves to, and refuse (InputError,
// exit 2) a run whose estimate exceeds the limit (`--max-memory`), naming the
// estimate, the limit and what to shrink. The goal is never to die by the OOM
// killer, nor to allocate gigabytes from a typo.
//
// Model (peak RSS, bytes):
//
//   M = M0 + c_gpu * G + c_e(engine) * G + c_x(engine) * F + c_h(engine) * H
//
//   M0        process (code, libraries, built-in scenarios):  20 MiB
//   G         GPUs of the fabric (nodes, links, adjacency grow linearly with
//             G for a fixed radix)
//   c_gpu     512 B per GPU (the built fabric)
//   c_e       engine state per GPU of the fabric once a run starts (routing
//             tables, per-link state; port queues and counters on the packet
//             engine): analytical 0, flow 1,280 B, packet 5,120 B
//   F         point-to-point transfers of the largest plan a run simulates
//             (each its own plan entry, with its ranks, label and flow)
//   c_x       per such transfer, plan + engine state: analytical 600 B, flow
//             768 B, packet 896 B
//   H         hops of that plan's grouped transfers: the edges of a coupled
//             transfer (NCCL's rings and trees are planned so), the n hops of
//             a ring transfer of n ranks
//   c_h       per hop: analytical and flow 64 B, packet 800 B (its packets
//             in flight)
//
// The coefficients are fits of peak RSS (`/usr/bin/time -f %M`, Release) at
// two sizes each, slope between them, c_e from the intercept
// (docs/contributing/validation/memory-guard.md): design aipod-16k with topology.gpus
// 65,536 and 262,144 (switch.radix 4096): 51.7 and 149.6 MB, 498 B/GPU;
// bench --op alltoall -b 1MiB -e 1MiB over 256 and 512 GPUs (65,280 and
// 261,632 transfers): flow 105.2 and 248.2 MB (745 B/flow, intercept 56.6 MB
// against 35.8 MB for design alone: 20.8 MB / 16,384 GPUs = 1.27 KB/GPU),
// analytical 70.5 and 182.7 MB (585 B/flow, intercept 29.6 MB: no engine
// state beyond the fabric); packet over 64 and 128 GPUs (4,032 and 16,256
// transfers): 122.4 and 132.7 MB (860 B/flow, intercept 119 MB: 5.1 KB/GPU);
// allreduce 64MiB (rings) over 2,048 and 16,384 GPUs (131,008 and 1,048,512
// hops): flow 65.8 and 124.3 MB, analytical 40.0 and 99.2 MB (64 B/hop);
// packet 1MiB over 2,048 GPUs: 223 MB (about 800 B/hop above its intercept).
// The estimate is meant to be within a factor of 2 of the measured peak above
// 100 MB (below that, M0 dominates).
//
// Assumptions: the simulator's own structures dominate (no large trace file is
// kept: --trace streams); a study runs its plans one after another, so the
// largest plan decides; the fabric estimate is taken before it is built; a
// training iteration's plan, whose size is known only once built, is checked
// as it grows (growing_plan_guard). The plan compiler's route cache
// (plan_compiler.hpp, at most 256 MB) is not in M: it fills only with
// repeated transfers (about 130 MiB for the 14,336 distinct PAT steps of a
// 16,384-GPU iteration at 800 Gb/s).
// The analytical engine's threads past the first (network.threads;
// analytical_backend.hpp, "Threads"), each with a router and a route compiler
// of its own, are a part of their own (add_threads): c_t = 1,536 B per GPU
// per extra thread, the larger of the two measured slopes (0.9 KB per GPU at
// 65,536 GPUs, 1.5 KB at 131,072: 60 and 200 MB a thread), so 8 threads add
// about 1.4 GB to a 131,072-GPU run; `--set network.threads=1` removes it.
// Nor the flow engine's record of every link-load step, kept
// only when a run is observed (`podnet train --trace-links`, `--telemetry`):
// 24 B per step, about 1.5 GB on the default 16,384-GPU iteration, a count
// known only once the run is over. It is guarded while it grows instead:
// the limit goes to the engine (engine::NetworkOptions::flow.memory_limit, set by
// scenario::resolve), and the record may take what the process does not
// hold when the run starts, at most half of it (a vector's capacity can
// reach twice its size); one step more stops the run with an InputError
// that names the steps, their bytes and --max-memory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "plan/transfer_plan.hpp"

namespace podnet::scenario {

class Scenario;

namespace estimate {

inline constexpr double kProcessBytes = 20.0 * 1024 * 1024;
inline constexpr double kBytesPerGpu = 512;
// Engine state per GPU of the fabric, by engine name (the engine registry's traits hold the figures).
double engine_bytes_per_gpu(const std::string& engine);
// Per point-to-point transfer and per hop of a grouped transfer of the plan, plan and engine state together, by engine
// name.
double bytes_per_flow(const std::string& engine);
double bytes_per_ring_hop(const std::string& engine);

// The limit: 50 % of the machine's physical memory (sysconf) unless set.
int64_t default_limit();
int64_t limit();
void set_limit(int64_t bytes);  // --max-memory; <= 0 restores the default

// One line of the estimate: "what" x count at bytes each, and the key/flag
// that shrinks it.
struct Part {
  std::string what;
  double count = 0;
  double each = 0;
  std::string shrink;
  double bytes() const { return count * each; }
};
struct Estimate {
  std::vector<Part> parts;
  double bytes() const;
};

// The point-to-point transfers (F) and grouped hops (H) of `plan` (see the model above).
using PlanSize = plan::PlanWeight;
inline PlanSize plan_size(const plan::TransferPlan& plan) { return plan::weight_of(plan); }

// Process + the fabric of `gpus` GPUs.
Estimate fabric(int64_t gpus);
// Adds the engine's threads past the first (engine::EngineTraits::bytes_per_gpu_per_thread: the analytical
// engine's 1,536 B) (threads: network.threads, 0 = the default count) on a
// fabric of `gpus` GPUs; nothing for the other engines or one thread.
void add_threads(Estimate& e, const std::string& engine, double gpus, int32_t threads);
// Adds `engine`'s state for `gpus` GPUs and a plan of `plan` to `e`; `shrink` names what shrinks the plan.
void add_run(Estimate& e, const std::string& engine, double gpus, PlanSize plan, const std::string& shrink);

// InputError when e.bytes() > limit(): "<what> needs an estimated X (parts),
// more than the memory limit of Y (--max-memory); shrink ... or raise
// --max-memory".
void check(const Estimate& e, const std::string& what);

// The guard of a plan while it is built, for a builder that cannot count its plan beforehand (a training
// iteration): called with the weight built so far, it throws check()'s InputError, `what` naming the transfers
// built, once `base` plus a run of that much plan on `engine` over `gpus` GPUs passes the limit. So a plan too
// large to run is refused at the limit, not built whole first (a training plan is heavier per hop than an
// engine's run of it: the 4,194,304 transfers of 128-GPU PAT steps took 8.8 GB of plan alone). The limit is
// read when the guard is made; below it a call costs a multiplication.
std::function<void(const plan::PlanWeight&)> growing_plan_guard(const Estimate& base, const std::string& engine,
                                                                double gpus, const std::string& shrink,
                                                                const std::string& what);

}  // namespace estimate
}  // namespace podnet::scenario
