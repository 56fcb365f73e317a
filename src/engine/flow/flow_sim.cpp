#include "engine/flow/flow_sim.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"

namespace podnet::engine::flow {

namespace {

constexpr double kPsPerSecond = 1e12;
constexpr double kBitsPsPerByteSecond = 8.0 * kPsPerSecond;  // bytes * this / bps = ps

}  // namespace

FlowSim::FlowSim(FlowSimOptions options) : options_(options) {
  if (options_.quantum < Time(0)) throw Error("FlowSim: quantum must be >= 0");
  if (!options_.link_counters && options_.record_link_steps)
    throw Error("FlowSim: record_link_steps needs link_counters");
  solver_.set_threads(options_.threads, options_.parallel_min_links);
  solver_.set_fold_single(!options_.link_counters);
}

LinkId FlowSim::add_link(Bandwidth capacity) {
  LinkId l = solver_.add_link(capacity);
  LinkRec r;
  r.cap = capacity.bps;
  r.last = now_;
  links_.push_back(r);
  return l;
}

void FlowSim::schedule_link_capacity(Time at, LinkId l, Bandwidth capacity) {
  if (l >= links_.size()) throw Error("FlowSim::schedule_link_capacity: unknown link " + std::to_string(l));
  if (at < now_) throw Error("FlowSim::schedule_link_capacity: time is in the past");
  if (!(capacity.bps >= 0) || std::isinf(capacity.bps))
    throw Error("FlowSim::schedule_link_capacity: capacity must be finite and >= 0");
  queue_.push(at, kCapacity, l, std::bit_cast<uint64_t>(capacity.bps));
}

FlowId FlowSim::add_flow(const FlowSpec& spec) {
  if (spec.start < now_) throw Error("FlowSim::add_flow: start is before now()");
  if (spec.bytes < 0) throw Error("FlowSim::add_flow: bytes must be >= 0");
  if (spec.latency < Time(0)) throw Error("FlowSim::add_flow: latency must be >= 0");
  FlowId f = solver_.add_flow(spec.resources, spec.weight, spec.cap, /*active=*/false);
  if (f >= flows_.size()) flows_.resize(static_cast<size_t>(f) + 1);
  FlowRec& r = flows_[f];
  r.tag = spec.tag;
  r.start = spec.start;
  r.active_at = spec.start + spec.latency;
  r.last = r.active_at;
  r.remaining = static_cast<double>(spec.bytes);
  r.rate = 0;
  r.bytes = spec.bytes;
  r.phase = FlowPhase::Pending;
  ++flows_added_;
  // (A reused id's previous owner completed or was cancelled: it has no
  // event left.)
  flow_queue_.set(f, r.active_at, queue_.take_seq(), kActivate);
  return f;
}

void FlowSim::cancel_flow(FlowId f) {
  if (f >= flows_.size()) return;
  FlowRec& r = flows_[f];
  if (r.phase != FlowPhase::Pending && r.phase != FlowPhase::Active) return;
  invalidate(f);
  if (r.phase == FlowPhase::Active) {
    settle_flow(r);
    --active_;
    // The solver forgets the flow now; the links it leaves are settled with
    // their old load by the re-solve that the wake event triggers at now().
    queue_.push(now_, kWake);
  }
  solver_.remove_flow(f);
  r.phase = FlowPhase::Cancelled;
  r.rate = 0;
}

// ---------------------------------------------------------------- events

void FlowSim::invalidate(FlowId f) {
  if (flow_queue_.erase(f)) ++stats_.stale_dropped;
}

bool FlowSim::flow_event_first() const {
  if (flow_queue_.empty()) return false;
  if (queue_.empty()) return true;
  const IndexedEventQueue::Entry& x = flow_queue_.top();
  const Event& y = queue_.top();
  return x.time.ps < y.time.ps || (x.time.ps == y.time.ps && x.seq < y.seq);
}

// Pops the earliest event of the two queues. Precondition: one is not empty.
Event FlowSim::pop_event() {
  if (!flow_event_first()) return queue_.pop();
  const IndexedEventQueue::Entry x = flow_queue_.pop();
  Event e;
  e.time = x.time;
  e.seq = x.seq;
  e.kind = x.kind;
  e.a = x.id;
  return e;
}

Time FlowSim::next_event_time() { return std::min(queue_.next_time(), flow_queue_.next_time()); }

std::span<const Completion> FlowSim::step() {
  completions_.clear();
  for (FlowId f : release_) {
    solver_.remove_flow(f);
    flows_[f].phase = FlowPhase::Free;
  }
  release_.clear();

  const Time t = next_event_time();
  if (t == Time::max()) return {};
  now_ = t;
  ++stats_.steps;
  if (options_.heartbeat && stats_.steps % options_.heartbeat_every == 0) options_.heartbeat(now_);
  while (next_event_time() == t) {
    while (next_event_time() == t) {
      const Event e = pop_event();
      ++stats_.events;
      watchdog(e.kind == kActivate || e.kind == kComplete ? static_cast<FlowId>(e.a) : kInvalidId);
      process(e);
    }
    resolve();
  }
  std::sort(completions_.begin(), completions_.end(),
            [](const Completion& x, const Completion& y) { return x.id < y.id; });
  return completions_;
}

void FlowSim::process(const Event& e) {
  switch (e.kind) {
    case kActivate: {
      const FlowId f = static_cast<FlowId>(e.a);
      FlowRec& r = flows_[f];
      r.phase = FlowPhase::Active;
      r.last = now_;
      ++active_;
      if (r.bytes == 0) {
        complete(f);
      } else {
        solver_.set_active(f, true);
      }
      break;
    }
    case kComplete: {
      complete(static_cast<FlowId>(e.a));
      break;
    }
    case kCapacity: solver_.set_capacity(static_cast<LinkId>(e.a), Bandwidth(std::bit_cast<double>(e.b))); break;
    case kWake:
    default: break;
  }
}

void FlowSim::settle_flow(FlowRec& r) {
  if (now_ > r.last && r.rate > 0) {
    r.remaining -= r.rate * static_cast<double>((now_ - r.last).ps) / kBitsPsPerByteSecond;
  }
  r.last = now_;
}

void FlowSim::settle_link(LinkRec& L) {
  const int64_t dt = (now_ - L.last).ps;
  if (dt > 0) {
    const double d = static_cast<double>(dt);
    L.bytes += L.load * d / kBitsPsPerByteSecond;
    if (L.load > 0) L.busy_ps += dt;
    if (L.cap > 0) L.util_ps += L.load / L.cap * d;
  }
  L.last = now_;
}

void FlowSim::complete(FlowId f) {
  FlowRec& r = flows_[f];
  settle_flow(r);
  // Whatever residue is left (a fraction of a picosecond's worth of bytes, of
  // either sign) is what the links' integrals miss or overshoot: correct them
  // so a link carries exactly coef * bytes for every completed flow.
  if (options_.link_counters && r.remaining != 0 && std::isfinite(r.rate)) {
    for (const Resource& res : solver_.resources(f)) links_[res.link].bytes += res.coef * r.remaining;
  }
  flow_queue_.erase(f);  // (popped already when its completion fired)
  r.remaining = 0;
  r.rate = 0;
  r.phase = FlowPhase::Done;
  --active_;
  if (solver_.active(f)) solver_.set_active(f, false);
  release_.push_back(f);
  completions_.push_back(Completion{f, r.tag, r.start, r.active_at, now_, r.bytes});
}

void FlowSim::resolve() {
  solver_.solve();
  ++stats_.solves;
  stats_.flows_resolved += solver_.solved_flows().size();
  stats_.parallel_solves = solver_.parallel_reorders();
  // Request the records a few iterations ahead (each is a memory access of
  // its own; overlapping them is most of this loop's cost on large re-solves).
  constexpr size_t kAhead = 8;
  const std::span<const LinkId> solved_links = options_.link_counters ? solver_.solved_links()
                                                                      : std::span<const LinkId>();
  for (size_t i = 0; i < solved_links.size(); ++i) {
    if (i + kAhead < solved_links.size()) __builtin_prefetch(&links_[solved_links[i + kAhead]]);
    const LinkId l = solved_links[i];
    LinkRec& L = links_[l];
    settle_link(L);
    const double load = solver_.link_load_bps(l), cap = solver_.capacity(l).bps;
    if (options_.record_link_steps && (load != L.load || cap != L.cap)) {
      if (options_.max_link_steps > 0 && link_steps_.size() >= options_.max_link_steps) link_steps_full();
      link_steps_.push_back({now_, static_cast<int32_t>(l), cap > 0 ? load / cap : 0.0});
    }
    L.load = load;
    L.cap = cap;
    if (L.cap > 0) L.peak = std::max(L.peak, L.load / L.cap);
  }
  const std::span<const FlowId> solved_flows = solver_.solved_flows();
  for (size_t i = 0; i < solved_flows.size(); ++i) {
    if (i + 2 * kAhead < solved_flows.size()) flow_queue_.prefetch_slot(solved_flows[i + 2 * kAhead]);
    if (i + kAhead < solved_flows.size()) {
      __builtin_prefetch(&flows_[solved_flows[i + kAhead]]);
      flow_queue_.prefetch_entry(solved_flows[i + kAhead]);
    }
    const FlowId f = solved_flows[i];
    FlowRec& r = flows_[f];
    const double rate = solver_.rate_bps(f);
    if (rate == r.rate) continue;  // prediction still valid
    ++stats_.rate_changes;
    settle_flow(r);
    r.rate = rate;
    predict(f);
  }
}

void FlowSim::predict(FlowId f) {
  FlowRec& r = flows_[f];
  int64_t dt;
  if (r.remaining <= kEpsilonBytes || std::isinf(r.rate)) {
    dt = 0;
  } else if (r.rate > 0) {
    const double x = r.remaining * kBitsPsPerByteSecond / r.rate;
    const double horizon = static_cast<double>(Time::max().ps - now_.ps);
    if (!(x < horizon)) {  // never, as far as int64 picoseconds reach
      invalidate(f);
      return;
    }
    dt = static_cast<int64_t>(std::ceil(x * (1.0 - 1e-12)));
  } else {
    invalidate(f);  // stalled at rate 0: waits for a re-solve
    return;
  }
  Time at = now_ + Time(dt);
  const int64_t q = options_.quantum.ps;
  if (q > 0 && at.ps % q != 0) {
    if (at.ps > Time::max().ps - q) {
      invalidate(f);
      return;
    }
    at = Time((at.ps / q + 1) * q);
  }
  // Replaces its pending prediction in place (the old one counts as superseded).
  if (flow_queue_.contains(f)) ++stats_.stale_dropped;
  flow_queue_.set(f, at, queue_.take_seq(), kComplete);
}

void FlowSim::link_steps_full() const {
  throw InputError(fmt::format(
      "flow engine: the record of link-load steps that telemetry and --trace-links read reached {} steps ({:.1f} MB "
      "at {} B each) at simulated {:.6f} s, all that {}; observe a smaller run (fewer GPUs, a smaller job) or raise "
      "--max-memory",
      thousands(static_cast<int64_t>(link_steps_.size())),
      static_cast<double>(link_steps_.size() * sizeof(LinkStep)) / 1e6, sizeof(LinkStep), now_.seconds(),
      options_.link_steps_limit.empty() ? "its limit allows" : options_.link_steps_limit));
}

// ---------------------------------------------------------------- watchdog

void FlowSim::watchdog(FlowId f) {
  if (now_ != instant_ || instant_events_ == 0) {
    instant_ = now_;
    instant_events_ = 0;
  }
  ++instant_events_;
  if (f != kInvalidId) {
    constexpr size_t kRecent = 5;
    if (recent_.size() < kRecent) {
      recent_.push_back(f);
    } else {
      recent_[recent_at_] = f;
      recent_at_ = (recent_at_ + 1) % kRecent;
    }
  }
  const uint64_t limit = options_.max_events_per_instant > 0 ? options_.max_events_per_instant
                                                             : 10'000'000 + 8 * (flows_added_ + links_.size());
  if (instant_events_ <= limit) return;
  std::string what;
  for (size_t i = 0; i < recent_.size(); ++i) {
    const FlowId g = recent_[(recent_at_ + i) % recent_.size()];
    what += "\n  " + describe(g, false);
  }
  throw Error(fmt::format(
      "flow engine watchdog: simulated time stopped advancing at {} ps: {} events processed at this instant "
      "(limit {}) with {} active; a livelock (transfers that finish in zero time and start each other "
      "without end?). Flows most recently processed:{}",
      now_.ps, instant_events_, limit, plural(static_cast<int64_t>(active_), "flow", "flows"),
      what.empty() ? std::string(" none") : what));
}

std::string FlowSim::describe(FlowId f, bool zero_links_only) const {
  const FlowRec& r = flows_[f];
  std::string s = options_.flow_name ? options_.flow_name(r.tag) : fmt::format("flow tag {}", r.tag);
  const char* phase = r.phase == FlowPhase::Active ? "active" : r.phase == FlowPhase::Pending ? "pending" : "done";
  s += fmt::format(" ({}, {} of {} bytes left, rate {} bps)", phase, remaining_bytes(f), r.bytes,
                   r.phase == FlowPhase::Active ? r.rate : 0.0);
  if (!solver_.alive(f)) return s;
  std::string links;
  size_t n = 0;
  for (const Resource& res : solver_.resources(f)) {
    if (zero_links_only && solver_.capacity(res.link).bps > 0) continue;
    if (n++ == 8) {
      links += ", ...";
      break;
    }
    links += (links.empty() ? "" : ", ") +
             (options_.link_name ? options_.link_name(res.link) : fmt::format("link {}", res.link)) +
             fmt::format(" ({} bps)", solver_.capacity(res.link).bps);
  }
  return s + (zero_links_only ? " on zero-capacity links: " : " on ") + (links.empty() ? "no link" : links);
}

std::string FlowSim::stuck_report(size_t max) const {
  std::string out;
  size_t n = 0, total = 0;
  for (FlowId f = 0; f < flows_.size(); ++f) {
    const FlowRec& r = flows_[f];
    if (r.phase != FlowPhase::Active || r.rate > 0) continue;
    ++total;
    if (n < max) {
      out += (out.empty() ? "" : "; ") + describe(f, true);
      ++n;
    }
  }
  if (total > n) out += fmt::format("; and {} more", total - n);
  return out;
}

// ---------------------------------------------------------------- queries

double FlowSim::remaining_bytes(FlowId f) const {
  const FlowRec& r = flows_[f];
  switch (r.phase) {
    case FlowPhase::Pending: return static_cast<double>(r.bytes);
    case FlowPhase::Active: {
      double rem = r.remaining;
      if (now_ > r.last && r.rate > 0) rem -= r.rate * static_cast<double>((now_ - r.last).ps) / kBitsPsPerByteSecond;
      return std::max(0.0, rem);
    }
    case FlowPhase::Cancelled: return std::max(0.0, r.remaining);
    default: return 0.0;
  }
}

uint32_t FlowSim::stalled_flows() const {
  uint32_t n = 0;
  for (const FlowRec& r : flows_)
    if (r.phase == FlowPhase::Active && !(r.rate > 0)) ++n;
  return n;
}

LinkStats FlowSim::link_stats(LinkId l) const {
  LinkRec L = links_[l];
  const int64_t dt = (now_ - L.last).ps;
  if (dt > 0) {
    const double d = static_cast<double>(dt);
    L.bytes += L.load * d / kBitsPsPerByteSecond;
    if (L.load > 0) L.busy_ps += dt;
    if (L.cap > 0) L.util_ps += L.load / L.cap * d;
  }
  LinkStats s;
  s.bytes = L.bytes;
  s.busy = Time(L.busy_ps);
  s.peak_utilization = L.peak;
  s.mean_utilization = now_.ps > 0 ? L.util_ps / static_cast<double>(now_.ps) : 0.0;
  return s;
}

}  // namespace podnet::engine::flow
