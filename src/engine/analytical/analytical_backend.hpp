// The analytical engine: closed-form α-β per transfer, with the concurrent
// transfers of one operation sharing the links they use.
//
// Flows. Each transfer compiles to flows (plan_compiler.hpp): a flow f moves
// b_f payload bytes at one rate r_f and loads directed link d with c_fd r_f
// (c = 1 on a plain path, 2 where two hops of one ring cross d, 1/k on a
// route sprayed over k paths). C_d is d's payload capacity (backend.hpp).
//
// Concurrent sets. Transfers are grouped into operations: a communication
// transfer belongs to the operation of each communication transfer it
// depends on, and communication transfers with no communication dependency
// and the same set of compute dependencies (none, for a collective run
// alone) start one operation together (union-find). Inside an operation the
// level of a transfer is 0 without a communication dependency, else 1 + the
// highest level of those. A concurrent set is (operation, level): the
// channels of a ring all-reduce, every pair of an all-to-all, one phase of a
// hierarchical collective. Compute transfers are pure delays.
//
// Sharing inside a set: processor sharing on each link, in one shot. If the
// flows crossing d were bottlenecked there alone, equal rates (as the flow
// engine's max-min gives flows sharing one bottleneck) would let every other
// flow g move min(b_g, b_f) while f moves b_f, so d is busy until f is done
// for
//     T_fd = 8 / C_d x sum_{g on d} c_gd min(b_g, b_f)
// and f takes
//     T_f = α_f + max_{d in f} T_fd
// (α_f: latency_steps x the hop latency, paid first). A transfer finishes
// when its slowest flow does; it starts when its last dependency finishes.
// A flow alone gives T_fd = 8 c_fd b_f / C_d: the plain α-β time.
//
// Why this and not a one-shot max-min: it needs no solver (a sort of the
// set's (link, flow) terms, a sort by size only on links whose flows differ
// in size), and unlike one-shot rates it lets a flow reclaim
// what finished flows leave (the min(b_g, b_f) term), so unequal flows on one
// bottleneck finish exactly when the flow engine finishes them. Where flows
// have different bottlenecks it is pessimistic for a flow whose link-mates
// are slowed elsewhere (they leave it more than its fair share) and takes
// each link alone (a flow's bottleneck moving from link to link is not
// followed); for the collectives podnet generates (equal flows per set) the
// busiest link drains exactly as in the flow engine
// (workload/collective_engines_test.cpp and, on every row of the nccl-tests
// validation tables, study/engine_agreement_test.cpp measure the agreement).
//
// Not modelled (the flow engine's job): sharing between separate operations
// (two collectives running at once, a collective and pipeline p2p), and a
// set whose transfers start at different times (a level starts when each
// transfer's own dependencies finish; the engine still shares as if they
// overlapped), hence no sharing between a level's late transfers and the
// next level's early ones (PAT all-gather across spines under ECMP: 0.946
// of the flow engine at 32 MiB). Link report: bytes per link and
// utilization = bytes / (C x makespan); none when NetworkOptions::link_loads
// is off (the training study reads none: it saves adding every flow's bytes
// to its links).
//
// Slow GPUs (FailureAction::Slow, the only failure this engine takes: it
// cannot change the fabric under a run). A compute transfer starting at t
// takes its duration x the largest factor among its GPUs, a GPU's factor
// being that of its last Slow event before t (or at 0), rounded to the
// picosecond: as the flow engine's failure driver applies it (a compute
// starting at an event's very time still runs at the old factor). An event
// is reported (RunReport::failures) when it comes before the run's end.
//
// Threads (network.threads; 0 = the machine's cores, at most
// kDefaultMaxThreads). The sets are taken a window of about 2^19 ranks and
// edges at a time. The routes the window lacks are compiled on every thread
// (PlanCompiler::prefetch); each set's flows are then taken in order on one
// thread; the drains of the sets not met before are worked out on every
// thread; last, each set's times are set in order. A route and a set's
// drains depend only on their inputs, not on the thread that made them, so
// results are the same to the bit for every thread count. A window under
// 2^14 ranks and edges (a small plan) stays on one thread. Each thread beyond the
// first routes with a Router and a route compiler of its own (about 180 MB
// more at 131,072 GPUs). Load-tracking routing (adaptive, ugal) routes on
// one thread.
//
// Kept between runs: a backend's router, route cache and per-link arrays
// serve its next run (a training iteration runs the engine three times), and
// routes leave out the NICs' series links, whose drains never bind and whose
// bytes are their representative's (analytical_backend.cpp). Both give the
// same results to the bit; neither applies while routes follow load.
#pragma once

#include <memory>

#include "engine/backend.hpp"
#include "engine/options.hpp"

namespace podnet::engine::analytical {

// Threads a run uses for `network.threads` = threads (0: the machine's cores, at most kDefaultMaxThreads).
constexpr unsigned kDefaultMaxThreads = 8;
// A thread past the first keeps a Router and a route compiler of its own: about this much per GPU of the fabric
// (1.44 GB at 1,048,576 GPUs, measured as the peak of `podnet train clos-1m` on two threads less on one).
constexpr double kBytesPerGpuPerThread = 1536;
// With network.threads = 0, the threads past the first take at most this much together: a 1,048,576-GPU run keeps
// to one thread (6.6 GB at its peak, against 8.0 GB on two and about 17 GB on eight), a 524,288-GPU run takes two,
// a 131,072-GPU run eight. A number given is taken as it is (the memory guard counts it).
constexpr double kAutoThreadBytes = 1.5e9;
// The threads of a run on a fabric of `gpus` GPUs for `network.threads` = threads.
int analytical_threads(int32_t threads, double gpus);

class AnalyticalBackend final : public NetworkBackend {
 public:
  AnalyticalBackend(const topology::Topology& topo, NetworkOptions options);
  ~AnalyticalBackend() override;
  const char* name() const override { return "analytical"; }
  RunReport run(const plan::TransferPlan& plan) override;
  // Tests: the ranks and edges of one window of sets (default 2^19), and of the smallest window whose routes and
  // drains go to the run's threads (default 2^14: a smaller one runs on the calling thread alone).
  void set_windows(size_t window, size_t parallel_from) {
    window_weight_ = window;
    parallel_weight_ = parallel_from;
  }

 private:
  const topology::Topology& topo_;
  NetworkOptions options_;
  size_t window_weight_ = size_t{1} << 19;  // about 50 MB of routes on a Clos
  size_t parallel_weight_ = size_t{1} << 14;
  // What one run builds that the next can use as it is: the router, the route compiler (its route cache) and
  // the per-link arrays (analytical_backend.cpp). Not kept when routes follow load.
  struct Kept;
  std::unique_ptr<Kept> kept_;
  RunReport run_on(Kept& kept, const plan::TransferPlan& plan);
};

}  // namespace podnet::engine::analytical
