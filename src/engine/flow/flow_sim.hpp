// Event-driven flow-level simulation on top of the incremental max-min solver.
//
// Model ("latency then bandwidth", α-β per flow)
// ----------------------------------------------
// A flow has `bytes` to move, a start time t0, a latency α (propagation +
// switching + software overhead along its path), a weight, an optional cap and
// the links it loads (see maxmin.hpp for weights, caps and coefficients). It
// waits α, then becomes active at t0 + α and competes for bandwidth: while
// active it runs at its weighted max-min fair rate r(t), recomputed whenever
// the set of active flows or a link capacity changes. It finishes at the first
// t_end with
//     integral_{t0+α}^{t_end} r(t) dt = 8 * bytes,
// so an uncontended flow takes α + 8 * bytes / r (the α-β model). The
// approximation: a real flow's bytes occupy links between its first bit
// leaving and its last bit arriving, pipelined along the path; here the whole
// path is loaded from t0 + α to t_end at once, and α is paid once per flow,
// not overlapped with transmission. Rates change instantly (no congestion-
// control transient). Both errors are small when bytes * 8 / r >> α.
//
// Mechanics
// ---------
// Time is podnet::Time (integer picoseconds). One EventQueue holds flow
// activations, predicted completions and scheduled capacity changes. step()
// takes the earliest event time t, processes every event at t, re-solves the
// max-min allocation once for the components those events touched (or
// applies the solver's departure/arrival shortcuts, see maxmin.hpp), and
// repeats while events at t remain (e.g. a flow whose residue rounds to zero).
// Between events rates are constant, so a flow's remaining bytes are settled
// lazily: it stores (last_update, rate, remaining) and on a rate change
// does remaining -= rate * (now - last_update) / 8. A flow's predicted
// completion now + ceil(8 * remaining / rate) (rounded up to the picosecond,
// less a 1e-12 relative slack so exact quotients do not round up by float
// noise) sits in the queue; a rate change replaces it in place. A flow whose
// completion event fires is complete, whatever float residue remains (it is
// about one picosecond's worth of its rate), so residue can never loop forever.
// Flows whose rate did not change in a re-solve keep their prediction.
//
// Queues: a flow's activation or predicted completion (a flow has at most
// one pending) sits in an IndexedEventQueue, one slot per flow id, moved in
// place when the prediction changes; capacity changes and wake-ups sit in an
// EventQueue. Both take their sequence numbers from the EventQueue's
// counter and are popped merged in (time, seq) order, so events are
// processed in exactly the order one queue with lazily cancelled (stale)
// predictions gave. Before, each re-prediction pushed a new event and left
// the old one stale: the 512-GPU all-to-all (docs/contributing/validation/speed.md)
// left 24 M stale events, compacted away in passes over up to 2x the live
// events, and the heap held twice as many entries as flows.
//
// DAG-driven workloads: add_flow() may be called at any time, including from
// a completion handler, with start >= now(). step() returns the completions
// at its time (ids ascending); run_until_idle(handler) calls the handler for
// each and keeps going until no event is left. A completed flow's id stays
// valid (phase Done) until the next step(), then may be reused: keep `tag`
// to map completions back to the caller's transfers.
//
// Link counters (per directed link): bytes carried (sum of coef * bytes of
// the flows through it; exact at completions: the picosecond rounding of the
// last interval is corrected out), busy time (time with load > 0), peak
// utilisation (max load / capacity) and mean utilisation over [0, now()].
//
// A flow whose rate is 0 (a zero-capacity link on its path) never completes:
// when the queue runs dry with such flows left, run_until_idle() returns,
// stalled_flows() counts them and stuck_report() names them and their
// zero-capacity links.
//
// Watchdog: simulated time must advance. If more than
// FlowSimOptions::max_events_per_instant events are processed at one
// simulated time (a livelock: e.g. a caller that keeps starting zero-byte,
// zero-latency flows from its completion handler, or a chain of capacity
// changes at one instant), step() throws podnet::Error naming the time, the
// count and the flows most recently processed there, with their links. The
// limit is counted in events, not wall-clock time, so a stuck run stops at the
// same point on any machine. A flow with no links and no cap has infinite
// rate and completes when it becomes active; a 0-byte flow likewise.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/event_queue.hpp"
#include "core/indexed_event_queue.hpp"
#include "core/units.hpp"
#include "engine/flow/maxmin.hpp"
#include "engine/link_step.hpp"

namespace podnet::engine::flow {

struct FlowSpec {
  Bytes bytes = 0;
  Time start;                           // absolute; must be >= FlowSim::now()
  Time latency;                         // α, paid before the flow competes for bandwidth
  double weight = 1.0;                  // > 0
  Bandwidth cap = kUnlimited;           // rate limit (NIC rate, QP share), or kUnlimited
  std::span<const Resource> resources;  // links loaded (copied by add_flow)
  uint64_t tag = 0;                     // caller's id, echoed in Completion
};

struct Completion {
  FlowId id = kInvalidId;
  uint64_t tag = 0;
  Time start;      // as given
  Time active_at;  // start + latency
  Time finish;
  Bytes bytes = 0;
};

enum class FlowPhase : uint8_t { Free, Pending, Active, Done, Cancelled };

struct LinkStats {
  double bytes = 0;             // carried, as of now()
  Time busy;                    // time with load > 0
  double peak_utilization = 0;  // max over time of load / capacity
  double mean_utilization = 0;  // (integral of load / capacity dt) / now()
};

struct SimStats {
  uint64_t steps = 0;            // distinct event times processed
  uint64_t solves = 0;           // max-min (re)solves
  uint64_t events = 0;           // events processed (stale ones excluded)
  uint64_t stale_dropped = 0;    // predictions or activations superseded (replaced in place or cancelled)
  uint64_t flows_resolved = 0;   // sum over solves of flows re-solved or placed (solved_flows())
  uint64_t rate_changes = 0;     // flows whose rate changed in a solve
  uint64_t parallel_solves = 0;  // solves whose lists the solver's second thread helped re-sort
};

struct FlowSimOptions {
  // 0: completions are exact to the picosecond (rounded up). > 0: each
  // predicted completion is rounded up to a multiple of `quantum`, so flows
  // finishing within one quantum finish together and share one re-solve. A
  // flow then keeps its bandwidth until that boundary: every completion is
  // late by less than one quantum and the others see that bandwidth taken a
  // little longer (bytes carried stay exact). Trades accuracy for fewer
  // solves in workloads whose completions are spread thinly in time.
  Time quantum;
  // Watchdog (see the file comment): events allowed at one simulated time;
  // 0 = automatic: 10^7 + 8 x (flows ever added + links), above any
  // legitimate burst (every flow activating and completing at one instant).
  uint64_t max_events_per_instant = 0;
  // Optional names for reports (watchdog, stuck_report): a flow by its tag,
  // a link by its id. Without them, tags and ids are printed.
  std::function<std::string(uint64_t tag)> flow_name;
  std::function<std::string(LinkId link)> link_name;
  // Keep per-link counters (link_stats(), link_load_bps()). Off: the
  // solver folds links that carry one flow into that flow's cap
  // (MaxMinSolver::set_fold_single) and re-solves skip every link update;
  // link_stats() and link_load_bps() then read 0. For callers that read no
  // link figures (a training iteration's time). Needs record_link_steps off.
  bool link_counters = true;
  // Record every change of a link's load (link_steps()): telemetry's
  // utilization over time. Off: nothing is recorded.
  bool record_link_steps = false;
  // > 0: at most this many link-load steps are recorded; one more stops the
  // run with an InputError that names the count, its bytes and
  // `link_steps_limit`, the caller's words for where the cap comes from.
  uint64_t max_link_steps = 0;
  std::string link_steps_limit;
  // Threads of the max-min solver (MaxMinSolver::set_threads: 2 re-sorts
  // its lists beside the caller after re-solves that re-sort at least
  // parallel_min_links lists); results do not depend on either.
  int threads = 1;
  uint32_t parallel_min_links = MaxMinSolver::kParallelMinLinks;
  // Called with now() every `heartbeat_every` steps (NetworkOptions::observers.heartbeat).
  std::function<void(Time)> heartbeat;
  uint64_t heartbeat_every = 256;
};

class FlowSim {
 public:
  explicit FlowSim(FlowSimOptions options = {});

  // ---- links ----
  LinkId add_link(Bandwidth capacity);
  // Room for n links in all (adding a fabric's links at once moves nothing; no effect on results).
  void reserve_links(uint32_t n) {
    solver_.reserve_links(n);
    links_.reserve(n);
  }
  uint32_t link_count() const { return solver_.link_count(); }
  Bandwidth link_capacity(LinkId l) const { return Bandwidth(links_[l].cap); }  // as applied so far
  // Changes a capacity at now() (applied by the next step(), which runs at now()).
  void set_link_capacity(LinkId l, Bandwidth capacity) { schedule_link_capacity(now_, l, capacity); }
  // Changes a capacity at a future time (a failure, a repair, a degraded port).
  void schedule_link_capacity(Time at, LinkId l, Bandwidth capacity);

  // ---- flows ----
  // Throws podnet::Error when start < now(), bytes < 0, latency < 0 or the
  // resources/weight/cap are invalid (see MaxMinSolver::add_flow).
  FlowId add_flow(const FlowSpec& spec);
  // Drops a pending or active flow without a completion (its id is freed).
  void cancel_flow(FlowId f);

  // ---- running ----
  Time now() const { return now_; }
  // Time of the next event, Time::max() when none is left.
  Time next_event_time();
  bool idle() { return next_event_time() == Time::max(); }
  // Advances to the next event time, processes everything there, returns the
  // completions at that time (valid until the next call). Empty when idle or
  // when only activations/capacity changes happened.
  std::span<const Completion> step();
  // Runs until no event is left, calling on_complete(const Completion&) for
  // each completion (it may add flows). Returns now().
  template <class F>
  Time run_until_idle(F&& on_complete) {
    while (!idle()) {
      for (const Completion& c : step()) on_complete(c);
    }
    return now_;
  }
  Time run_until_idle() {
    return run_until_idle([](const Completion&) {});
  }
  // Processes every event at or before `limit`, then sets now() = limit.
  template <class F>
  void run_until(Time limit, F&& on_complete) {
    while (next_event_time() <= limit) {
      for (const Completion& c : step()) on_complete(c);
    }
    if (limit > now_) now_ = limit;
  }

  // ---- queries ----
  FlowPhase phase(FlowId f) const { return f < flows_.size() ? flows_[f].phase : FlowPhase::Free; }
  double rate_bps(FlowId f) const { return flows_[f].phase == FlowPhase::Active ? flows_[f].rate : 0.0; }
  // Bytes still to send as of now() (all of them while pending, 0 when done).
  double remaining_bytes(FlowId f) const;
  // When the flow starts competing for bandwidth (start + latency).
  Time active_at(FlowId f) const { return flows_[f].active_at; }
  uint64_t tag(FlowId f) const { return flows_[f].tag; }
  uint32_t active_flows() const { return active_; }
  // Active flows with rate 0: they wait for a capacity change.
  uint32_t stalled_flows() const;
  // Names up to `max` stalled flows (ids ascending), each with the links on
  // its path that have zero capacity; empty when nothing is stalled.
  std::string stuck_report(size_t max = 5) const;
  LinkStats link_stats(LinkId l) const;
  // (time, link, load / capacity) at every change of a link's load, in time
  // order (FlowSimOptions::record_link_steps).
  using LinkStep = LinkLoadStep;
  const std::vector<LinkStep>& link_steps() const { return link_steps_; }
  double link_load_bps(LinkId l) const { return links_[l].load; }
  const SimStats& stats() const { return stats_; }
  const MaxMinSolver& solver() const { return solver_; }

  // Residue below which a flow counts as finished when its rate is re-set.
  static constexpr double kEpsilonBytes = 1e-6;

 private:
  enum Kind : uint32_t { kActivate = 0, kComplete = 1, kCapacity = 2, kWake = 3 };
  struct FlowRec {
    uint64_t tag = 0;
    Time start;
    Time active_at;
    Time last;             // remaining is exact as of this time
    double remaining = 0;  // bytes
    double rate = 0;       // bits/s, as last applied
    Bytes bytes = 0;
    FlowPhase phase = FlowPhase::Free;
  };
  struct LinkRec {
    double cap = 0;
    double load = 0;  // bits/s since `last`
    Time last;
    double bytes = 0;
    int64_t busy_ps = 0;
    double util_ps = 0;  // integral of load / cap over ps
    double peak = 0;
  };

  // Removes flow f's queued event, if any.
  void invalidate(FlowId f);
  // Whether flow_queue_'s top pops before queue_'s (both non-empty or not).
  bool flow_event_first() const;
  Event pop_event();
  void process(const Event& e);
  void complete(FlowId f);
  void resolve();
  void settle_flow(FlowRec& r);
  void settle_link(LinkRec& L);
  void predict(FlowId f);
  [[noreturn]] void link_steps_full() const;
  void watchdog(FlowId f);
  std::string describe(FlowId f, bool zero_links_only) const;

  FlowSimOptions options_;
  MaxMinSolver solver_;
  EventQueue queue_;              // capacity changes and wake-ups; the sequence numbers of both queues
  IndexedEventQueue flow_queue_;  // per flow: its activation or predicted completion
  std::vector<FlowRec> flows_;
  std::vector<LinkRec> links_;
  std::vector<LinkStep> link_steps_;
  std::vector<Completion> completions_;
  std::vector<FlowId> release_;  // completed last step: removed from the solver at the next step
  Time now_;
  uint32_t active_ = 0;
  // watchdog
  Time instant_;                 // the simulated time the count below is for
  uint64_t instant_events_ = 0;  // events processed at instant_
  uint64_t flows_added_ = 0;
  std::vector<FlowId> recent_;  // ring of the last flows processed (watchdog report)
  size_t recent_at_ = 0;
  SimStats stats_;
};

}  // namespace podnet::engine::flow
