#include "engine/plan_compiler.hpp"

#include <algorithm>
#include <functional>
#include <string_view>
#include <unordered_set>

#include "core/error.hpp"
#include "core/parallel.hpp"

namespace podnet::engine {

using routing::DirLink;
using routing::PathPart;
using topology::NodeKind;

PlanCompiler::PlanCompiler(const topology::Topology& topo, routing::Router& router, const Transport& transport,
                           const LinkClassOptions& links)
    : cache_limit_(cache_limit_for(topo.gpus.size())),
      topo_(topo),
      router_(router),
      transport_(transport),
      links_(links),
      coef_(routing::dir_link_count(topo), 0.0) {
  const size_t n = topo.links.size();
  factor_.resize(n);
  class_eff_.resize(n);
  class_latency_.resize(n);
  transport_link_.resize(n);
  for (size_t l = 0; l < n; ++l) {
    const LinkClass c = link_class_of(topo, static_cast<topology::LinkId>(l), transport.nic_links);
    const bool tr = engine::carries_transport(c);
    class_eff_[l] = links[c].efficiency;
    class_latency_[l] = links[c].latency;
    transport_link_[l] = tr ? 1 : 0;
    factor_[l] = links[c].efficiency * (tr ? transport.efficiency() : 1.0);
  }
  hop_terms_.resize(2 * n);
  for (routing::DirLink d = 0; d < static_cast<routing::DirLink>(2 * n); ++d) {
    const topology::LinkId li = routing::link_of(d);
    const topology::NodeId to = routing::dir_to(d, topo);
    const topology::NodeId from = routing::dir_from(d, topo);
    HopTerms& h = hop_terms_[static_cast<size_t>(d)];
    h.link_ps = static_cast<double>((topo.links[li].latency + class_latency_[static_cast<size_t>(li)]).ps);
    h.switch_ps = topo.nodes[to].kind == NodeKind::Switch ? static_cast<double>(topo.switch_latency.ps) : 0.0;
    h.nic = topo.nodes[to].kind == NodeKind::Nic || topo.nodes[from].kind == NodeKind::Nic;
  }
}

double PlanCompiler::payload_capacity_bps(DirLink d) const {
  const topology::LinkId l = routing::link_of(d);
  return topo_.links[l].capacity.bps * factor_[static_cast<size_t>(l)];
}

Time PlanCompiler::hop_latency(std::span<const PathPart> parts) const {
  // Expected latency over the route's paths: each part weighted by its fraction
  // (1 on single-path routes), so spraying gives the mean path latency.
  double ps = 0;
  bool crosses_nic = false;
  for (const auto& p : parts) {
    const HopTerms& h = hop_terms_[static_cast<size_t>(p.link)];
    ps += p.fraction * h.link_ps;
    if (h.switch_ps != 0) ps += p.fraction * h.switch_ps;
    crosses_nic = crosses_nic || h.nic;
  }
  // A chip-to-chip (torus) hop crosses no NIC: no endpoint stack latency.
  if (crosses_nic) ps += static_cast<double>(transport_.stack_latency.ps);
  return Time(static_cast<int64_t>(ps + 0.5));
}

// Sorts distinct non-negative link ids ascending: std::sort for a few, else an LSD radix sort of 11-bit digits
// (as many passes as the largest id needs; the order of distinct keys is the same either way). A coupled
// transfer over thousands of hops touches thousands of links.
void PlanCompiler::sort_links(std::vector<DirLink>& v, std::vector<DirLink>& scratch) {
  if (v.size() < 512) {
    std::sort(v.begin(), v.end());
    return;
  }
  constexpr int kBits = 11;
  constexpr uint32_t kBuckets = 1u << kBits;
  uint32_t top = 0;
  for (DirLink d : v) top = std::max(top, static_cast<uint32_t>(d));
  scratch.resize(v.size());
  std::vector<uint32_t> count(kBuckets);
  for (int shift = 0; shift == 0 || (top >> shift) != 0; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (DirLink d : v) ++count[(static_cast<uint32_t>(d) >> shift) & (kBuckets - 1)];
    uint32_t at = 0;
    for (uint32_t& c : count) {
      const uint32_t n = c;
      c = at;
      at += n;
    }
    for (DirLink d : v) scratch[count[(static_cast<uint32_t>(d) >> shift) & (kBuckets - 1)]++] = d;
    v.swap(scratch);
  }
}

void PlanCompiler::add_hops(int32_t qps, double* latency_sum) {
  routes_.clear();
  router_.route_batch(requests_, routes_, route_at_);
  // The links' coefficients and latency terms are requested kAhead parts before they are read (each a cache
  // miss in a large fabric: the parts' links are far apart).
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < std::min(kAhead, routes_.size()); ++i) {
    __builtin_prefetch(&coef_[static_cast<size_t>(routes_[i].link)]);
    if (latency_sum) __builtin_prefetch(&hop_terms_[static_cast<size_t>(routes_[i].link)]);
  }
  for (size_t k = 0; k < requests_.size(); ++k) {
    for (size_t i = route_at_[k] + kAhead; i < std::min(route_at_[k + 1] + kAhead, routes_.size()); ++i) {
      __builtin_prefetch(&coef_[static_cast<size_t>(routes_[i].link)]);
      if (left_out_) __builtin_prefetch(left_out_->data() + routes_[i].link);
      if (latency_sum) __builtin_prefetch(&hop_terms_[static_cast<size_t>(routes_[i].link)]);
    }
    const std::span<const PathPart> hop(routes_.data() + route_at_[k], route_at_[k + 1] - route_at_[k]);
    if (latency_sum) *latency_sum += static_cast<double>(hop_latency(hop).ps) / qps;
    for (const auto& p : hop) {
      if (left_out_ && (*left_out_)[static_cast<size_t>(p.link)]) continue;
      if (coef_[p.link] == 0) touched_.push_back(p.link);
      coef_[p.link] += p.fraction / qps;
    }
  }
}

namespace {

// A transfer's own bytes on flow q of n (compile_routes' split of a P2p transfer over its QPs).
Bytes flow_bytes(const plan::Transfer& t, int64_t q, int64_t n) {
  if (t.kind == plan::TransferKind::Compute) return 0;
  return t.kind == plan::TransferKind::P2p ? t.bytes / n + (q < t.bytes % n ? 1 : 0) : t.bytes;
}

}  // namespace

void PlanCompiler::compile(const plan::TransferPlan& plan, int32_t index, std::vector<CompiledFlow>& out) {
  const plan::Transfer& t = plan.transfers[index];
  const auto flows = routes_of(plan, index);
  const auto n = static_cast<int64_t>(flows->size());
  for (int64_t q = 0; q < n; ++q) {
    CompiledFlow f = (*flows)[static_cast<size_t>(q)];
    f.transfer = index;
    f.bytes = flow_bytes(t, q, n);
    out.push_back(std::move(f));
  }
}

void PlanCompiler::compile_shared(const plan::TransferPlan& plan, int32_t index, std::vector<SharedFlow>& out) {
  const plan::Transfer& t = plan.transfers[index];
  auto flows = routes_of(plan, index);
  const auto n = static_cast<int64_t>(flows->size());
  for (int64_t q = 0; q < n; ++q) out.push_back({flows, static_cast<uint32_t>(q), flow_bytes(t, q, n), index});
}

std::shared_ptr<std::vector<CompiledFlow>> PlanCompiler::fresh(const plan::Transfer& t, int32_t index) {
  auto v = std::make_shared<std::vector<CompiledFlow>>();
  if (t.kind == plan::TransferKind::Compute) {  // no links: a pure delay
    CompiledFlow f;
    f.transfer = index;
    f.latency = t.duration;
    v->push_back(std::move(f));
  } else {
    compile_routes(t, index, *v);
  }
  return v;
}

template <class T>
void PlanCompiler::put_list(const SharedVector<T>& v, Interned<T>& table) {
  const auto n = static_cast<int64_t>(v.size());
  key_.append(reinterpret_cast<const char*>(&n), sizeof n);
  const std::string_view bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  if (v.size() <= kInlineList) {  // the content itself
    key_.append(bytes);
    return;
  }
  auto [at, fresh] = table.by_buffer.try_emplace(v.storage(), 0);
  if (fresh) {  // a buffer not met before: its content's number, or a new one
    const uint64_t h = std::hash<std::string_view>{}(bytes);
    const auto [lo, hi] = table.by_content.equal_range(h);
    const auto same = std::find_if(lo, hi, [&](const auto& e) { return table.held[e.second - 1].vec() == v.vec(); });
    if (same != hi) {
      at->second = same->second;
      table.also.push_back(v);
    } else {
      table.held.push_back(v);
      at->second = table.held.size();
      table.by_content.emplace(h, at->second);
    }
  }
  key_.append(reinterpret_cast<const char*>(&at->second), sizeof at->second);
}

void PlanCompiler::make_key(const plan::Transfer& t) {
  key_.clear();
  auto put = [&](int64_t v) { key_.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(static_cast<int64_t>(t.kind));
  put(t.open ? 1 : 0);
  put(t.qps);
  put(t.channel);
  put(t.lanes);
  put(t.latency_steps);
  // A Coupled transfer's routes are its edges' (compile_routes); its ranks only list who takes part, and leaving
  // them out of the key copies half as much (a 1,048,576-GPU plan's stage boundaries: 0.5 MB of ranks apiece).
  if (t.kind != plan::TransferKind::Coupled) put_list(t.ranks, interned_ranks_);
  put_list(t.edges, interned_edges_);
}

void PlanCompiler::keep(std::shared_ptr<const std::vector<CompiledFlow>> flows) {
  size_t bytes = key_.size() + sizeof(CompiledFlow) * flows->size();
  for (const CompiledFlow& f : *flows) bytes += f.parts.size() * sizeof(routing::PathPart);
  if (bytes > cache_limit_) return;
  // Full: the oldest entries leave first (a plan repeats a collective close to where it first ran: the gradient
  // buckets of one stage). An entry a caller still holds lives on with it.
  while (cached_bytes_ + bytes > cache_limit_) {
    const auto& [oldest, size] = order_.front();
    cache_.erase(cache_.find(*oldest));
    cached_bytes_ -= size;
    order_.pop_front();
    ++evictions_;
  }
  cached_bytes_ += bytes;
  last_entry_ = ++entries_;
  const auto it = cache_.emplace(key_, Entry{last_entry_, std::move(flows)}).first;
  order_.emplace_back(&it->first, bytes);  // a node's key stays where it is while the node lives
}

std::shared_ptr<const std::vector<CompiledFlow>> PlanCompiler::routes_of(const plan::TransferPlan& plan,
                                                                         int32_t index) {
  const plan::Transfer& t = plan.transfers[index];
  last_entry_ = 0;
  if (t.kind == plan::TransferKind::Compute || router_.tracks_load()) return fresh(t, index);
  if (cache_epoch_ != router_.epoch()) {
    cache_.clear();
    order_.clear();
    cached_bytes_ = 0;
    cache_epoch_ = router_.epoch();
    miss_run_ = 0;
  }
  // A long run of misses (a plan of distinct transfers): look up only every
  // kProbeEvery-th transfer until one hits again (the others compile as a
  // miss would; the cache only saves work, it never changes a route).
  if (miss_run_ >= kBypassAfter && miss_run_++ % kProbeEvery != 0) return fresh(t, index);
  make_key(t);
  ++lookups_;
  auto hit = cache_.find(key_);
  if (hit == cache_.end()) {
    if (miss_run_ < kBypassAfter) ++miss_run_;
    auto flows = fresh(t, index);
    keep(flows);
    return flows;
  }
  miss_run_ = 0;
  ++hits_;
  // The same routes and latencies; the caller sets this transfer's own index and bytes.
  last_entry_ = hit->second.serial;
  return hit->second.flows;
}

struct PlanCompiler::Worker {
  routing::Router router;
  PlanCompiler compiler;
  explicit Worker(const PlanCompiler& main)
      : router(main.topo_, main.router_.options()), compiler(main.topo_, router, main.transport_, main.links_) {}
};

PlanCompiler::~PlanCompiler() = default;

size_t PlanCompiler::prefetch(const plan::TransferPlan& plan, const std::vector<int32_t>& upcoming, int workers) {
  if (workers < 2 || router_.tracks_load() || router_.epoch() != 0) return 0;
  if (cache_epoch_ != router_.epoch()) return 0;  // routes_of clears the cache first
  // The transfers to compile: not cached, not compute, each key once, in the order given.
  std::vector<int32_t> todo;
  std::vector<std::string> keys;
  std::unordered_set<std::string_view> seen;
  keys.reserve(upcoming.size());
  for (int32_t i : upcoming) {
    const plan::Transfer& t = plan.transfers[static_cast<size_t>(i)];
    if (t.kind == plan::TransferKind::Compute) continue;
    make_key(t);
    if (cache_.count(key_) || seen.count(key_)) continue;
    keys.push_back(key_);
    seen.insert(keys.back());  // keys reserved: no reallocation moves a string seen holds
    todo.push_back(i);
  }
  if (todo.size() < 2) return 0;
  const auto n = static_cast<int>(std::min<size_t>(static_cast<size_t>(workers), todo.size()));
  while (static_cast<int>(workers_.size()) < n - 1) workers_.push_back(std::make_unique<Worker>(*this));
  for (auto& w : workers_) {
    w->compiler.sort_parts_ = sort_parts_;
    w->compiler.left_out_ = left_out_;
  }
  std::vector<std::shared_ptr<std::vector<CompiledFlow>>> done(todo.size());
  parallel_for_workers(todo.size(), static_cast<size_t>(n), [&](size_t k, size_t w) {
    PlanCompiler& c = w == 0 ? *this : workers_[w - 1]->compiler;  // worker 0 routes with this compiler's router
    try {
      done[k] = c.fresh(plan.transfers[static_cast<size_t>(todo[k])], todo[k]);
    } catch (...) {  // left out: compile() meets the error itself, as it would have without prefetch
      done[k] = nullptr;
    }
  });
  size_t compiled = 0;
  for (size_t k = 0; k < todo.size(); ++k) {
    if (!done[k]) continue;
    key_ = keys[k];
    keep(std::move(done[k]));
    ++compiled;
  }
  miss_run_ = 0;  // what follows hits: no bypass
  return compiled;
}

void PlanCompiler::compile_routes(const plan::Transfer& t, int32_t index, std::vector<CompiledFlow>& out) {
  const uint64_t entropy_base = static_cast<uint64_t>(t.channel) * 1024;
  if (t.kind == plan::TransferKind::P2p) {
    if (t.ranks.size() != 2) throw Error("internal: a P2p transfer needs two ranks");
    const int32_t qps = std::max(1, t.qps);
    for (int32_t q = 0; q < qps; ++q) {
      CompiledFlow f;
      f.transfer = index;
      f.bytes = t.bytes / qps + (q < t.bytes % qps ? 1 : 0);
      router_.route(t.ranks[0], t.ranks[1], entropy_base + static_cast<uint64_t>(q), 1.0, f.parts);
      std::sort(f.parts.begin(), f.parts.end(), [](const PathPart& a, const PathPart& b) { return a.link < b.link; });
      // latency_steps = 0 (a tuned plan: NCCL's latency is its leading delay): no latency to work out.
      if (t.latency_steps > 0) f.latency = hop_latency(f.parts) * t.latency_steps;
      if (left_out_)
        std::erase_if(f.parts, [&](const PathPart& p) { return (*left_out_)[static_cast<size_t>(p.link)] != 0; });
      out.push_back(std::move(f));
    }
    return;
  }
  // Ring / Coupled: one variable over every hop. A chunk crosses every hop in
  // turn, so the latency_steps sequential steps cost the mean hop latency each
  // (a ring all-reduce: 2(n-1)/n x the sum of hop latencies, as NCCL's model
  // sums intra- and inter-node step latencies).
  double latency_sum = 0;
  double* const sum = t.latency_steps > 0 ? &latency_sum : nullptr;  // latency_steps = 0: none to work out
  size_t hop_count = 0;
  const int32_t qps = std::max(1, t.qps);
  requests_.clear();
  // A hop's QPs, on its channel's ECMP entropy (a Coupled lane's edges: its lane's channel).
  const auto request = [&](int32_t a, int32_t b, uint64_t base) {
    for (int32_t q = 0; q < qps; ++q) requests_.push_back({a, b, base + static_cast<uint64_t>(q)});
  };
  if (t.kind == plan::TransferKind::Ring) {
    const size_t n = t.ranks.size();
    const size_t hops = t.open ? n - 1 : (n > 1 ? n : 0);
    for (size_t i = 0; i < hops; ++i) request(t.ranks[i], t.ranks[(i + 1) % n], entropy_base);
    hop_count = hops;
  } else {
    for (size_t e = 0; e < t.edges.size(); ++e)
      request(t.edges[e].first, t.edges[e].second, static_cast<uint64_t>(t.hop_channel(e)) * 1024);
    hop_count = t.edges.size();
  }
  add_hops(qps, sum);
  CompiledFlow f;
  f.transfer = index;
  f.bytes = t.bytes;
  const double mean = hop_count ? latency_sum / static_cast<double>(hop_count) : 0.0;
  f.latency = Time(static_cast<int64_t>(mean * std::max(0, t.latency_steps) + 0.5));
  f.route_weight = qps;  // each QP route added 1 x fraction; coef = sum of fraction / qps
  if (sort_parts_) sort_links(touched_, scratch_);
  f.parts.reserve(touched_.size());
  for (size_t i = 0; i < touched_.size(); ++i) {
    if (i + 16 < touched_.size()) __builtin_prefetch(&coef_[static_cast<size_t>(touched_[i + 16])]);
    const DirLink d = touched_[i];
    f.parts.push_back({d, coef_[d]});
    coef_[d] = 0;
  }
  touched_.clear();
  out.push_back(std::move(f));
}

}  // namespace podnet::engine
