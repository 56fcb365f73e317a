// Analytical engine: operations and levels -> concurrent sets -> per set,
// compile every flow, share links by the processor-sharing drain
// (analytical_backend.hpp) -> per transfer a duration -> start/finish in
// topological order.
#include "engine/analytical/analytical_backend.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "engine/flow/flow_backend.hpp"
#include "engine/plan_compiler.hpp"
#include "engine/report_util.hpp"
#include "plan/transfer_plan.hpp"
#include "routing/router.hpp"

namespace podnet::engine::analytical {

namespace {

int32_t find(std::vector<int32_t>& parent, int32_t x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

void unite(std::vector<int32_t>& parent, int32_t a, int32_t b) {
  a = find(parent, a);
  b = find(parent, b);
  if (a != b) parent[std::max(a, b)] = std::min(a, b);  // the smallest index is the root: deterministic
}

struct Term {  // one (directed link, flow) coefficient of a set
  routing::DirLink link;
  int32_t flow;
  double coef;
};

// Scratch of set_drains, kept between sets.
struct SetScratch {
  std::vector<Term> by_link, segment;
  std::vector<int32_t> slot;  // per link: its terms' count, then the next place
  std::vector<routing::DirLink> links;
  // Per link: the sum of the set's coefficients on it (flows of equal bytes) beside its capacity, so that a
  // part reads one place (the parts' links are far apart: each read a cache miss in a large fabric).
  struct LinkSum {
    double coef = 0, capacity = 0;
  };
  std::vector<LinkSum> sum;
};

// set_drains when every flow of the set moves the same bytes b (a collective's channels, a PAT step): a link's
// T_fd is 8 b sum_g c_gd / C_d for each of its flows, the sum taken in flow order as set_drains' general case
// takes it, so the drains are the same to the bit without grouping the terms by link.
void equal_drains(const std::vector<SharedFlow>& flows, SetScratch& w, std::vector<double>& drain) {
  std::vector<SetScratch::LinkSum>& sum = w.sum;
  std::vector<routing::DirLink>& links = w.links;
  links.clear();
  constexpr size_t kAhead = 16;  // parts whose link is requested before it is read
  for (const SharedFlow& f : flows) {
    const auto& parts = f.route().parts;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i + kAhead < parts.size()) __builtin_prefetch(&sum[static_cast<size_t>(parts[i + kAhead].link)]);
      double& c = sum[static_cast<size_t>(parts[i].link)].coef;
      if (c == 0) links.push_back(parts[i].link);
      c += parts[i].fraction;
    }
  }
  drain.assign(flows.size(), 0.0);
  const auto bytes = static_cast<double>(flows.front().bytes);
  for (size_t f = 0; f < flows.size(); ++f) {
    const auto& parts = flows[f].route().parts;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i + kAhead < parts.size()) __builtin_prefetch(&sum[static_cast<size_t>(parts[i + kAhead].link)]);
      const auto& p = parts[i];
      const SetScratch::LinkSum& s = sum[static_cast<size_t>(p.link)];
      const double t = s.capacity > 0 ? 8.0 * bytes * s.coef / s.capacity : std::numeric_limits<double>::infinity();
      drain[f] = std::max(drain[f], t);
    }
  }
  for (routing::DirLink d : links) sum[static_cast<size_t>(d)].coef = 0;
}

// Each flow's drain time (analytical_backend.hpp: max over its links of T_fd, in seconds) for one set.
void set_drains(const std::vector<SharedFlow>& flows, const std::vector<double>& capacity, SetScratch& w,
                std::vector<double>& drain) {
  std::vector<Term>& by_link = w.by_link;
  std::vector<int32_t>& slot = w.slot;
  std::vector<routing::DirLink>& links = w.links;
  std::vector<Term>& segment = w.segment;
  // Terms grouped by link, each link's in flow order (a counting sort: O(T) per set, nothing proportional to
  // the fabric's size, since a training plan has many small sets). The links come in the order the set
  // first touches them; each link's drain and each flow's maximum do not depend on that order.
  links.clear();
  size_t total = 0;
  for (size_t f = 0; f < flows.size(); ++f)
    for (const auto& p : flows[f].route().parts) {
      int32_t& c = slot[static_cast<size_t>(p.link)];
      if (c == 0) links.push_back(p.link);
      ++c;
      ++total;
    }
  {
    int32_t at = 0;  // slot[d]: first the count of d's terms, then where the next one goes
    for (routing::DirLink d : links) {
      const int32_t c = slot[static_cast<size_t>(d)];
      slot[static_cast<size_t>(d)] = at;
      at += c;
    }
  }
  by_link.resize(total);
  for (size_t f = 0; f < flows.size(); ++f)
    for (const auto& p : flows[f].route().parts)
      by_link[static_cast<size_t>(slot[static_cast<size_t>(p.link)]++)] = {p.link, static_cast<int32_t>(f), p.fraction};
  for (routing::DirLink d : links) slot[static_cast<size_t>(d)] = 0;
  drain.assign(flows.size(), 0.0);
  for (size_t a = 0; a < by_link.size();) {
    size_t b = a;
    const routing::DirLink d = by_link[a].link;
    while (b < by_link.size() && by_link[b].link == d) ++b;
    const double cap = capacity[static_cast<size_t>(d)];
    auto bytes_of = [&](const Term& t) { return static_cast<double>(flows[static_cast<size_t>(t.flow)].bytes); };
    bool equal = true;
    for (size_t k = a + 1; k < b && equal; ++k) equal = bytes_of(by_link[k]) == bytes_of(by_link[a]);
    if (equal) {  // sum_g c_g min(b_g, b_f) = b x sum_g c_g
      double coef = 0;
      for (size_t k = a; k < b; ++k) coef += by_link[k].coef;
      const double t = cap > 0 ? 8.0 * bytes_of(by_link[a]) * coef / cap : std::numeric_limits<double>::infinity();
      for (size_t k = a; k < b; ++k) {
        double& dr = drain[static_cast<size_t>(by_link[k].flow)];
        dr = std::max(dr, t);
      }
    } else {  // ascending sizes: flows before f count b_g, f and after count b_f
      segment.assign(by_link.begin() + static_cast<std::ptrdiff_t>(a),
                     by_link.begin() + static_cast<std::ptrdiff_t>(b));
      std::stable_sort(segment.begin(), segment.end(),
                       [&](const Term& x, const Term& y) { return bytes_of(x) < bytes_of(y); });
      double suffix_coef = 0;
      for (const Term& t : segment) suffix_coef += t.coef;
      double prefix = 0;  // sum of c_g b_g over the smaller flows
      for (const Term& t : segment) {
        const double w = prefix + bytes_of(t) * suffix_coef;
        const double tt = cap > 0 ? 8.0 * w / cap : std::numeric_limits<double>::infinity();
        double& dr = drain[static_cast<size_t>(t.flow)];
        dr = std::max(dr, tt);
        prefix += t.coef * bytes_of(t);
        suffix_coef -= t.coef;
      }
    }
    a = b;
  }
}

}  // namespace

int analytical_threads(int32_t threads, double gpus) {
  if (threads > 0) return threads;
  const int cores = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, kDefaultMaxThreads));
  if (gpus <= 0) return cores;
  const double extra = std::floor(kAutoThreadBytes / (gpus * kBytesPerGpuPerThread));
  return extra >= cores - 1 ? cores : 1 + static_cast<int>(extra);
}

// A run's router, route compiler and per-link arrays, kept for the backend's next run. A route depends only
// on its ends, its key and the link state, which the runs of one backend share (its options are fixed, and
// this engine changes no link), so a route the cache gives back is the one a fresh compiler would make: the
// results are the same to the bit. A training iteration runs the engine three times at least (the TP
// collectives alone, then the iteration): at 131,072 GPUs each run built the same fabric-sized router, link
// arrays and cache afresh.
//
// Series links (flow/flow_backend.hpp): of a NIC's two links in each direction, the one of more capacity
// carries the same flows with the same coefficients as the other, so its T_fd is never the larger (the same
// sum over a larger capacity) and no drain changes without it. The routes leave it out (a GPU-to-GPU route
// across a spine keeps 6 of its 8 links: a quarter fewer parts to sum and maximise), and its bytes are its
// representative's, the same sum in the same order. Not when routes follow load.
struct AnalyticalBackend::Kept {
  routing::Router router;
  PlanCompiler compiler;
  std::vector<double> capacity;  // payload capacity per directed link
  std::vector<double> link_bytes;
  std::vector<SetScratch> scratch;  // per worker
  std::vector<uint8_t> left_out;    // per directed link: 1 for a series link left out of the routes
  std::vector<std::pair<routing::DirLink, routing::DirLink>> series;  // (left out, its representative)
  Kept(const topology::Topology& topo, const NetworkOptions& o)
      : router(topo, o.routing), compiler(topo, router, o.transport, o.links) {
    // The drains sum each link's coefficients in flow order and take maxima: a flow's part order changes nothing.
    compiler.set_sorted_parts(false);
    const int32_t dir_links = routing::dir_link_count(topo);
    capacity.resize(static_cast<size_t>(dir_links));
    for (int32_t d = 0; d < dir_links; ++d) capacity[static_cast<size_t>(d)] = compiler.payload_capacity_bps(d);
    if (router.tracks_load()) return;
    const std::vector<routing::DirLink> rep = flow::series_representatives(topo, capacity);
    left_out.assign(static_cast<size_t>(dir_links), 0);
    for (int32_t d = 0; d < dir_links; ++d)
      if (rep[static_cast<size_t>(d)] != d) {
        left_out[static_cast<size_t>(d)] = 1;
        series.emplace_back(d, rep[static_cast<size_t>(d)]);
      }
    if (!series.empty()) compiler.set_left_out(&left_out);
  }
};

AnalyticalBackend::AnalyticalBackend(const topology::Topology& topo, NetworkOptions options)
    : topo_(topo), options_(std::move(options)) {}

AnalyticalBackend::~AnalyticalBackend() = default;

RunReport AnalyticalBackend::run(const plan::TransferPlan& plan) {
  if (!kept_) kept_ = std::make_unique<Kept>(topo_, options_);
  // Routes that follow load see the flows routed so far: a run starts from an idle network, with its own router.
  const std::unique_ptr<Kept> own = kept_->router.tracks_load() ? std::move(kept_) : nullptr;
  try {
    return run_on(own ? *own : *kept_, plan);
  } catch (...) {
    kept_.reset();  // a run cut short may leave the compiler's scratch half used
    throw;
  }
}

RunReport AnalyticalBackend::run_on(Kept& kept, const plan::TransferPlan& plan) {
  routing::Router& router = kept.router;
  PlanCompiler& compiler = kept.compiler;
  RunReport report;
  report.engine = name();
  const auto n = static_cast<int32_t>(plan.transfers.size());
  report.transfers.assign(static_cast<size_t>(n), {});
  const std::vector<int32_t> order = plan::topological_order(plan);
  auto is_comm = [&](int32_t i) { return plan.transfers[static_cast<size_t>(i)].kind != plan::TransferKind::Compute; };

  // --- operations (union-find) and levels
  std::vector<int32_t> parent(static_cast<size_t>(n)), level(static_cast<size_t>(n), 0);
  for (int32_t i = 0; i < n; ++i) parent[static_cast<size_t>(i)] = i;
  std::map<std::vector<int32_t>, int32_t> starters;  // compute deps -> first transfer starting an operation there
  std::vector<int32_t> compute_deps;
  for (int32_t i : order) {
    if (!is_comm(i)) continue;
    bool has_comm_dep = false;
    compute_deps.clear();
    for (int32_t d : plan.transfers[static_cast<size_t>(i)].deps) {
      if (is_comm(d)) {
        has_comm_dep = true;
        unite(parent, i, d);
        level[static_cast<size_t>(i)] = std::max(level[static_cast<size_t>(i)], level[static_cast<size_t>(d)] + 1);
      } else {
        compute_deps.push_back(d);
      }
    }
    if (has_comm_dep) continue;
    std::sort(compute_deps.begin(), compute_deps.end());
    auto [it, inserted] = starters.emplace(compute_deps, i);
    if (!inserted) unite(parent, i, it->second);
  }
  // Sets in (operation root, level, index) order.
  std::vector<int32_t> comm;
  comm.reserve(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i)
    if (is_comm(i)) comm.push_back(i);
  std::vector<int32_t> root(static_cast<size_t>(n), 0);
  for (int32_t i : comm) root[static_cast<size_t>(i)] = find(parent, i);
  std::sort(comm.begin(), comm.end(), [&](int32_t a, int32_t b) {
    const auto ka = std::make_tuple(root[static_cast<size_t>(a)], level[static_cast<size_t>(a)], a);
    const auto kb = std::make_tuple(root[static_cast<size_t>(b)], level[static_cast<size_t>(b)], b);
    return ka < kb;
  });

  // --- per set: durations
  const int32_t dir_links = routing::dir_link_count(topo_);
  std::vector<double>& link_bytes = kept.link_bytes;
  link_bytes.assign(options_.link_loads ? static_cast<size_t>(dir_links) : 0, 0.0);
  const std::vector<double>& capacity = kept.capacity;
  std::vector<Time> duration(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i)
    if (!is_comm(i)) {
      duration[static_cast<size_t>(i)] = plan.transfers[static_cast<size_t>(i)].duration;
      ++report.flows;
    }

  // Sets: comm[bounds[k], bounds[k + 1]) is the k-th, in (operation root, level) order.
  std::vector<size_t> bounds;
  for (size_t s = 0; s < comm.size();) {
    bounds.push_back(s);
    const auto key = std::make_pair(root[static_cast<size_t>(comm[s])], level[static_cast<size_t>(comm[s])]);
    while (s < comm.size() &&
           std::make_pair(root[static_cast<size_t>(comm[s])], level[static_cast<size_t>(comm[s])]) == key)
      ++s;
  }
  bounds.push_back(comm.size());
  const size_t sets = bounds.size() - 1;

  // A window of whole sets at a time (about window_weight_ ranks and edges: well within the route cache's
  // bound): their routes compiled ahead on the run's threads (plan_compiler.hpp: prefetch), their flows taken in
  // order on this thread, the drains of the sets not met before on the run's threads, then each set's times in
  // order. Routing that follows load keeps to this thread: each set's routes see the set's earlier flows only.
  const int workers =
      router.tracks_load() ? 1 : analytical_threads(options_.flow.threads, static_cast<double>(topo_.gpus.size()));
  struct SetWork {
    std::vector<SharedFlow> flows;  // the set's flows (their routes the route cache's, not copies)
    std::vector<double> drain;      // per flow: max_d T_fd in seconds
    std::string memo_key;           // (route cache entry, bytes) of each transfer
    bool memoizable = true, known = false;
  };
  std::vector<SetWork> work;
  std::vector<SetScratch>& scratch = kept.scratch;
  if (scratch.size() < static_cast<size_t>(workers)) scratch.resize(static_cast<size_t>(workers));
  std::vector<int32_t> window;
  // Sets already drained, by (route cache entry, bytes) of each transfer: a set whose transfers all came from the
  // route cache (the same routes) with the same bytes as an earlier set drains as it did, bit for bit (a stage's
  // gradient buckets of equal size repeat their collectives).
  constexpr size_t kMaxMemo = 1 << 16;
  std::unordered_map<std::string, std::vector<double>> memo;
  const auto every = static_cast<size_t>(std::max<int64_t>(1, options_.observers.progress_every));
  for (size_t w0 = 0; w0 < sets;) {
    size_t w1 = w0, weight = 0;
    window.clear();
    for (; w1 < sets && (w1 == w0 || weight < window_weight_); ++w1)
      for (size_t k = bounds[w1]; k < bounds[w1 + 1]; ++k) {
        window.push_back(comm[k]);
        weight += PlanCompiler::transfer_weight(plan.transfers[static_cast<size_t>(comm[k])]);
      }
    const int threads = weight >= parallel_weight_ ? workers : 1;
    if (threads > 1) compiler.prefetch(plan, window, threads);
    work.resize(std::max(work.size(), w1 - w0));
    for (size_t k = w0; k < w1; ++k) {
      const size_t s = bounds[k], e = bounds[k + 1];
      if (options_.observers.heartbeat)
        options_.observers.heartbeat(Time(0));  // no clock here: a stop point per set of transfers
      // Progress by transfers timed (no clock here either: time 0), each time a multiple of progress_every passes.
      // Counted over the plan's transfers, as the other engines count them: its compute delays take no time here.
      if (options_.observers.progress && s / every != e / every)
        options_.observers.progress(static_cast<int64_t>(plan.transfers.size() - comm.size() + s),
                                    static_cast<int64_t>(plan.transfers.size()), Time(0));
      SetWork& sw = work[k - w0];
      sw.flows.clear();
      sw.memo_key.clear();
      sw.memoizable = true;
      sw.known = false;
      // Compile every flow of the set (adaptive routing sees the set's earlier flows), then release them.
      for (size_t i = s; i < e; ++i) {
        compiler.compile_shared(plan, comm[i], sw.flows);
        const uint64_t entry = compiler.last_entry();
        const Bytes bytes = plan.transfers[static_cast<size_t>(comm[i])].bytes;
        sw.memoizable = sw.memoizable && entry != 0;
        sw.memo_key.append(reinterpret_cast<const char*>(&entry), sizeof entry);
        sw.memo_key.append(reinterpret_cast<const char*>(&bytes), sizeof bytes);
      }
      for (const SharedFlow& f : sw.flows) router.release(f.route().parts, f.route().route_weight);
      if (sw.memoizable) {
        auto it = memo.find(sw.memo_key);
        if (it != memo.end()) {
          sw.drain = it->second;
          sw.known = true;
        }
      }
    }
    parallel_for_workers(w1 - w0, static_cast<size_t>(threads), [&](size_t k, size_t t) {
      SetWork& sw = work[k];
      if (sw.known) return;
      SetScratch& w = scratch[t];
      if (w.slot.empty()) {
        w.slot.assign(static_cast<size_t>(dir_links), 0);
        w.sum.resize(static_cast<size_t>(dir_links));
        for (size_t d = 0; d < w.sum.size(); ++d) w.sum[d].capacity = capacity[d];
      }
      const auto& f = sw.flows;
      const bool equal =
          std::all_of(f.begin(), f.end(), [&](const SharedFlow& x) { return x.bytes == f.front().bytes; });
      if (equal && !f.empty()) equal_drains(f, w, sw.drain);
      else set_drains(f, capacity, w, sw.drain);
    });
    for (size_t k = w0; k < w1; ++k) {
      SetWork& sw = work[k - w0];
      if (!sw.known && sw.memoizable) {
        if (memo.size() >= kMaxMemo) memo.clear();
        memo.emplace(sw.memo_key, sw.drain);
      }
      // Every flow's bytes on its links, in flow and part order (unless the caller reads no link loads).
      if (options_.link_loads)
        for (const SharedFlow& f : sw.flows)
          for (const auto& p : f.route().parts)
            link_bytes[static_cast<size_t>(p.link)] += p.fraction * static_cast<double>(f.bytes);
      for (size_t f = 0; f < sw.flows.size(); ++f) {
        const SharedFlow& cf = sw.flows[f];
        const plan::Transfer& tr = plan.transfers[static_cast<size_t>(cf.transfer)];
        double& drain = sw.drain[f];
        if (tr.max_rate_bps > 0 && cf.bytes > 0)  // a rate limit outside the links (transfer_plan.hpp)
          drain = std::max(drain, 8.0 * static_cast<double>(cf.bytes) / plan::part_rate_cap_bps(tr, cf.bytes));
        const Time tx = cf.bytes == 0 ? Time() : Time::from_seconds(drain);
        Time& dur = duration[static_cast<size_t>(cf.transfer)];
        dur = std::max(dur, cf.route().latency + tx);
        ++report.flows;
      }
    }
    w0 = w1;
  }

  // --- timing (slow GPUs: analytical_backend.hpp)
  const std::vector<FailureEvent>& events = options_.faults.failures.events;
  std::vector<int32_t> slow_of(events.empty() ? 0 : topo_.gpus.size(), -1);  // GPU -> its first Slow event
  for (size_t k = 0; k < events.size(); ++k) {
    const FailureEvent& ev = events[k];
    if (ev.action != FailureAction::Slow)
      throw Error(fmt::format("the analytical engine takes slow GPUs only, not {} (the flow and packet engines "
                              "change the fabric under a run)",
                              ev.what));
    if (ev.gpu >= 0 && ev.gpu < static_cast<int32_t>(slow_of.size()) && slow_of[static_cast<size_t>(ev.gpu)] < 0)
      slow_of[static_cast<size_t>(ev.gpu)] = static_cast<int32_t>(k);
  }
  // GPU g's factor for a compute starting at `start`: its last event before start, or at time 0.
  const auto factor_at = [&](int32_t g, Time start) {
    double f = 1.0;
    if (g < 0 || g >= static_cast<int32_t>(slow_of.size())) return f;
    for (int32_t k = slow_of[static_cast<size_t>(g)]; k >= 0 && k < static_cast<int32_t>(events.size()); ++k) {
      const FailureEvent& ev = events[static_cast<size_t>(k)];
      if (ev.at >= start && ev.at != Time()) break;  // events are in time order
      if (ev.gpu == g) f = ev.factor;
    }
    return f;
  };
  for (int32_t i : order) {
    const plan::Transfer& t = plan.transfers[static_cast<size_t>(i)];
    Time start;
    for (int32_t d : t.deps) start = std::max(start, report.transfers[static_cast<size_t>(d)].finish);
    Time dur = duration[static_cast<size_t>(i)];
    if (!events.empty() && t.kind == plan::TransferKind::Compute) {
      double factor = 1.0;
      for (int32_t g : t.ranks) factor = std::max(factor, factor_at(g, start));
      dur = slowed_duration(dur, factor);
    }
    report.transfers[static_cast<size_t>(i)] = {start, start + dur};
    report.makespan = std::max(report.makespan, start + dur);
  }
  for (const FailureEvent& ev : events)
    if (ev.at < report.makespan) report.failures.push_back({ev.at, ev.what, 0, Time()});
  if (!options_.link_loads) return report;
  for (const auto& [d, rep] : kept.series) link_bytes[static_cast<size_t>(d)] = link_bytes[static_cast<size_t>(rep)];
  report.hottest = hottest_links(link_bytes, nullptr, report.makespan, options_.hottest_links,
                                 [&](routing::DirLink d) { return compiler.payload_capacity_bps(d); });
  report.by_class = class_loads(topo_, link_bytes, report.makespan,
                                [&](routing::DirLink d) { return compiler.payload_capacity_bps(d); });
  return report;
}

}  // namespace podnet::engine::analytical
