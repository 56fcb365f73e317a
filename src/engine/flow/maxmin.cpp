#include "engine/flow/maxmin.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <string>
#include <thread>

#include "core/error.hpp"

namespace podnet::engine::flow {

namespace {
constexpr uint8_t kHard = 1;  // link_seeded_: re-solve
constexpr uint8_t kSoft = 2;  // link_seeded_: only lost flows, try the departure shortcut
// seed_why_: the link's threshold also depends on its new saturation level.
constexpr uint8_t kWhyCapacity = 1;
constexpr uint8_t kWhyArrival = 2;

// Order of a link's sorted list: r/w descending, then flow id ascending.
bool use_before(double rho_a, uint32_t fa, double rho_b, uint32_t fb) {
  return rho_a > rho_b || (rho_a == rho_b && fa < fb);
}

// Sorts [b, e) by use_before. The ranges sorted here (a link's re-solved or
// moved flows) are mostly short or nearly in order, where insertion sort
// (linear in the entries plus the moves) beats std::sort; when the moves
// pass 8 per entry (a re-solve of a whole large component can put
// thousands of flows in one link's bucket, in no order) the rest goes to
// std::sort, as insertion sort is quadratic there. Two entries of one flow
// never share a range (a flow's terms are on distinct links), so the order
// is total and both give the same result.
template <class U>
void sort_uses(U* b, U* e) {
  size_t budget = 8 * static_cast<size_t>(e - b) + 64;
  for (U* i = b + (b != e); i < e; ++i) {
    if (!use_before(i->rho, i->flow, (i - 1)->rho, (i - 1)->flow)) continue;
    const U x = *i;
    U* j = i;
    do {
      *j = *(j - 1);
      --j;
    } while (j > b && use_before(x.rho, x.flow, (j - 1)->rho, (j - 1)->flow) && --budget > 0);
    *j = x;
    if (budget == 0) {
      std::sort(b, e, [](const U& p, const U& q) { return use_before(p.rho, p.flow, q.rho, q.flow); });
      return;
    }
  }
}
}  // namespace

// ---------------------------------------------------------------- threads

// The second thread: sleeps until a narrow re-solve hands it lists to
// re-sort (state kPosted), takes chunks of them beside the caller, and
// says it is done (kIdle). The caller takes the job back (kPosted ->
// kIdle) when it has done every chunk before the thread woke up.
struct MaxMinSolver::Worker {
  static constexpr uint32_t kIdle = 0, kPosted = 1, kRunning = 2, kStop = 3;
  std::atomic<uint32_t> state{kIdle};
  std::atomic<uint32_t> next{0};  // the next chunk of reorder_links_ to take
  Scratch scratch;
  std::exception_ptr error;
  std::thread thread;
};

namespace {
constexpr uint32_t kReorderChunk = 32;  // lists a thread takes at once
}  // namespace

MaxMinSolver::MaxMinSolver() = default;

MaxMinSolver::~MaxMinSolver() {
  if (!worker_) return;
  try {
    finish_reorder();
  } catch (...) {  // (a destructor does not throw; the error was the caller's to see)
  }
  stop_worker();
}

void MaxMinSolver::stop_worker() {
  worker_->state.store(Worker::kStop, std::memory_order_release);
  worker_->state.notify_one();
  worker_->thread.join();
  worker_.reset();
}

void MaxMinSolver::set_threads(int threads, uint32_t min_links) {
  finish_reorder();
  parallel_min_links_ = std::max<uint32_t>(min_links, 1);
  threads_ = threads >= 2 ? 2 : 1;
  if (threads_ < 2 && worker_) stop_worker();
}

// The second thread is started by the first re-solve that hands it lists
// (a run of small re-solves never starts it).
void MaxMinSolver::start_worker() {
  worker_ = std::make_unique<Worker>();
  worker_->thread = std::thread([this] {
    Worker& w = *worker_;
    for (;;) {
      uint32_t st = w.state.load(std::memory_order_acquire);
      if (st == Worker::kIdle) {
        w.state.wait(Worker::kIdle, std::memory_order_acquire);
        continue;
      }
      if (st == Worker::kStop) return;
      if (st != Worker::kPosted || !w.state.compare_exchange_strong(st, Worker::kRunning, std::memory_order_acquire))
        continue;  // taken back by the caller
      try {
        reorder_chunks(w.scratch);
      } catch (...) {
        w.error = std::current_exception();
      }
      w.state.store(Worker::kIdle, std::memory_order_release);
      w.state.notify_one();  // the caller may be waiting in join_reorder
    }
  });
}

void MaxMinSolver::reorder_chunks(Scratch& x) {
  const uint32_t n = static_cast<uint32_t>(reorder_links_.size());
  for (;;) {
    const uint32_t b = worker_->next.fetch_add(1, std::memory_order_relaxed) * kReorderChunk;
    if (b >= n) return;
    reorder_range(b, std::min(n, b + kReorderChunk), x);
  }
}

void MaxMinSolver::join_reorder() {
  reorder_posted_ = false;
  Worker& w = *worker_;
  reorder_chunks(scratch_);
  uint32_t st = Worker::kPosted;
  if (!w.state.compare_exchange_strong(st, Worker::kIdle, std::memory_order_acquire)) {
    // The second thread is on its last chunk (at most kReorderChunk lists):
    // spin a little, then sleep until it says it is done (it may have been
    // preempted on a busy machine).
    for (int spin = 0; spin < 4096 && st != Worker::kIdle; ++spin) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      st = w.state.load(std::memory_order_acquire);
    }
    while (st != Worker::kIdle) {
      w.state.wait(st, std::memory_order_acquire);
      st = w.state.load(std::memory_order_acquire);
    }
  }
  if (w.error) {
    std::exception_ptr e = w.error;
    w.error = nullptr;
    std::rethrow_exception(e);
  }
}

// Narrow re-solve: re-sorts the lists reorder_links_[begin, end). Each
// link's state and list are memory accesses of their own: request them
// some links ahead (see collect_component) so that they overlap.
void MaxMinSolver::reorder_range(uint32_t begin, uint32_t end, Scratch& x) {
  constexpr uint32_t kAhead = 8;
  auto request_state = [&](LinkId a) {
    __builtin_prefetch(&lists_[a].uses);
    __builtin_prefetch(&lists_[a].head);
    __builtin_prefetch(&links_[a]);
  };
  for (uint32_t i = begin; i < std::min(end, begin + 2 * kAhead); ++i) request_state(reorder_links_[i]);
  for (uint32_t i = begin; i < end; ++i) {
    if (i + 2 * kAhead < end) request_state(reorder_links_[i + 2 * kAhead]);
    if (i + kAhead < end) request_entries(reorder_links_[i + kAhead], 4);  // the first 16 entries
    reorder_moved(reorder_links_[i], x);
  }
}

// ---------------------------------------------------------------- links

std::string MaxMinSolver::check_lists() {
  finish_reorder();
  for (LinkId l = 0; l < links_.size(); ++l) {
    const std::vector<Use>& list = lists_[l].uses;
    const std::string at = "link " + std::to_string(l) + ": ";
    uint32_t dead = 0, live = 0;
    for (uint32_t j = 0; j < list.size(); ++j) {
      const Use& u = list[j];
      if (j > 0 && use_before(u.rho, u.flow, list[j - 1].rho, list[j - 1].flow))
        return at + "entry " + std::to_string(j) + " sorts before entry " + std::to_string(j - 1);
      if (u.k == kDeadUse) {
        ++dead;
        continue;
      }
      if (j < lists_[l].head) return at + "live entry " + std::to_string(j) + " before the head";
      const FlowState& g = flows_[u.flow];
      if (!g.alive || !g.active || g.pend || u.k >= g.len || term_links_[g.off + u.k] != l)
        return at + "entry " + std::to_string(j) + " is no term of a live flow on this link";
      if (u.rho != g.rate / g.weight) return at + "entry " + std::to_string(j) + " has a stale key";
      ++live;
    }
    if (dead != lists_[l].dead)
      return at + "counts " + std::to_string(lists_[l].dead) + " dead entries, holds " + std::to_string(dead);
    uint32_t folded = 0;
    if (fold_ && fold_owner_[l] != kInvalidId) {
      const FlowId f = fold_owner_[l];
      const FlowState& g = flows_[f];
      if (!g.alive || !g.active || fold_k_[l] < g.len || fold_k_[l] >= all_len_[f] ||
          term_links_[g.off + fold_k_[l]] != l)
        return at + "folded into flow " + std::to_string(f) + ", which has no folded term on it";
      if (live > 0 || !pending_[l].empty()) return at + "folded, yet it has entries";
      folded = 1;
    }
    if (live + pending_[l].size() + folded != live_[l])
      return at + "counts " + std::to_string(live_[l]) + " live terms, holds " +
             std::to_string(live + pending_[l].size() + folded);
  }
  // A flow's cap is its own cap and its folded links' least C / a.
  for (FlowId f = 0; fold_ && f < flows_.size(); ++f) {
    const FlowState& g = flows_[f];
    if (!g.alive || !g.active) continue;
    double m = user_cap_[f];
    for (uint32_t k = g.len; k < all_len_[f]; ++k) {
      const Resource& t = terms_[g.off + k];
      if (fold_owner_[t.link] != f) return "flow " + std::to_string(f) + ": a folded term's link names another owner";
      m = std::min(m, links_[t.link].cap / t.coef);
    }
    if (m != g.cap) return "flow " + std::to_string(f) + ": its cap is not its folded links' least";
  }
  return "";
}

void MaxMinSolver::reserve_links(uint32_t n) {
  finish_reorder();
  links_.reserve(n);
  loads_.reserve(n);
  link_seeded_.reserve(n);
  seed_theta_.reserve(n);
  seed_why_.reserve(n);
  soft_rho_.reserve(n);
  gone_load_.reserve(n);
  gone_listed_.reserve(n);
  merge_seen_.reserve(n);
  merge_at_.reserve(n);
  lists_.reserve(n);
  pending_.reserve(n);
  live_.reserve(n);
  prefix_.reserve(n);
  pend_max_.reserve(n);
  taken_load_.reserve(n);
  link_moved_.reserve(n);
  fold_owner_.reserve(n);
  fold_k_.reserve(n);
}

LinkId MaxMinSolver::add_link(Bandwidth capacity) {
  finish_reorder();
  if (!(capacity.bps >= 0) || std::isinf(capacity.bps))
    throw Error("MaxMinSolver::add_link: capacity must be finite and >= 0, got " + std::to_string(capacity.bps));
  LinkState s;
  s.cap = capacity.bps;
  links_.push_back(s);
  loads_.push_back(0.0);
  link_seeded_.push_back(0);
  seed_theta_.push_back(0.0);
  seed_why_.push_back(0);
  soft_rho_.push_back(0.0);
  gone_load_.push_back(0.0);
  gone_listed_.push_back(0);
  merge_seen_.push_back(0);
  merge_at_.push_back(0);
  lists_.emplace_back();
  pending_.emplace_back();
  live_.push_back(0);
  prefix_.push_back(0);
  pend_max_.push_back(0.0);
  taken_load_.push_back(0.0);
  link_moved_.push_back(0);
  fold_owner_.push_back(kInvalidId);
  fold_k_.push_back(0);
  return static_cast<LinkId>(links_.size() - 1);
}

void MaxMinSolver::set_capacity(LinkId link, Bandwidth capacity) {
  finish_reorder();
  if (link >= links_.size()) throw Error("MaxMinSolver::set_capacity: unknown link " + std::to_string(link));
  if (!(capacity.bps >= 0) || std::isinf(capacity.bps))
    throw Error("MaxMinSolver::set_capacity: capacity must be finite and >= 0, got " + std::to_string(capacity.bps));
  if (fold_ && fold_owner_[link] != kInvalidId) unfold(link);  // (with its old capacity in the flow's cap)
  links_[link].cap = capacity.bps;
  seed_link(link, kInf, kWhyCapacity);
}

// ---------------------------------------------------------------- flows

MaxMinSolver::FlowState& MaxMinSolver::checked(FlowId f, const char* what) {
  if (!alive(f)) throw Error(std::string("MaxMinSolver::") + what + ": unknown flow " + std::to_string(f));
  return flows_[f];
}

FlowId MaxMinSolver::add_flow(std::span<const Resource> resources, double weight, Bandwidth cap, bool active) {
  finish_reorder();
  if (!(weight > 0) || std::isinf(weight))
    throw Error("MaxMinSolver::add_flow: weight must be finite and > 0, got " + std::to_string(weight));
  if (!(cap.bps >= 0)) throw Error("MaxMinSolver::add_flow: cap must be >= 0, got " + std::to_string(cap.bps));
  for (const Resource& r : resources) {
    if (r.link >= links_.size()) throw Error("MaxMinSolver::add_flow: unknown link " + std::to_string(r.link));
    if (!(r.coef > 0) || std::isinf(r.coef))
      throw Error("MaxMinSolver::add_flow: coefficient must be finite and > 0, got " + std::to_string(r.coef));
  }
  maybe_compact();

  FlowId f;
  if (!free_ids_.empty()) {
    f = free_ids_.back();
    free_ids_.pop_back();
  } else {
    f = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
    link_slots_.resize(flows_.size() * kSlots);
    all_len_.push_back(0);
    user_cap_.push_back(kInf);
    fold_min_.push_back(kInf);
    fold_cnt_.push_back(0);
  }
  FlowState& s = flows_[f];
  s.weight = weight;
  s.cap = cap.bps;
  s.rate = 0;
  s.off = static_cast<uint32_t>(terms_.size());
  // Store the terms with repeated links merged (coefficients summed), in
  // order of first occurrence.
  if (++merge_stamp_ == 0) {
    std::fill(merge_seen_.begin(), merge_seen_.end(), 0u);
    merge_stamp_ = 1;
  }
  for (const Resource& r : resources) {
    if (merge_seen_[r.link] == merge_stamp_) {
      terms_[merge_at_[r.link]].coef += r.coef;
    } else {
      merge_seen_[r.link] = merge_stamp_;
      merge_at_[r.link] = static_cast<uint32_t>(terms_.size());
      terms_.push_back(r);
      term_links_.push_back(r.link);
    }
  }
  s.len = static_cast<uint32_t>(terms_.size()) - s.off;
  all_len_[f] = s.len;
  user_cap_[f] = cap.bps;
  fold_min_[f] = kInf;
  fold_cnt_[f] = 0;
  s.unit = std::all_of(terms_.begin() + s.off, terms_.end(), [](const Resource& t) { return t.coef == 1.0; });
  if (s.len <= kSlots)
    std::copy(term_links_.begin() + s.off, term_links_.end(), link_slots_.begin() + static_cast<size_t>(f) * kSlots);
  s.alive = true;
  s.active = false;
  s.frozen = false;
  s.arriving = false;
  s.fresh = false;
  // s.mark and s.seeded survive reuse of the id on purpose (see seed_flow).
  pos_.resize(terms_.size(), 0);
  ++live_flows_;
  if (active) set_active(f, true);
  return f;
}

void MaxMinSolver::remove_flow(FlowId f) {
  finish_reorder();
  FlowState& s = checked(f, "remove_flow");
  if (s.active) set_active(f, false);
  s.alive = false;
  garbage_terms_ += all_len_[f];
  all_len_[f] = 0;
  s.len = 0;
  free_ids_.push_back(f);
  --live_flows_;
}

void MaxMinSolver::set_active(FlowId f, bool active) {
  finish_reorder();
  FlowState& s = checked(f, "set_active");
  if (s.active == active) return;
  s.active = active;
  if (active) {
    link_in(f);
    if (all_len_[f] == 0) {
      seed_flow(f);
    } else {
      s.arriving = true;  // settle_arrivals() decides: shortcut or re-solve
      arrivals_.push_back(f);
    }
  } else {
    if (s.arriving) {
      s.arriving = false;  // never solved: it took nothing from anyone
    } else {
      soft_seed_links_of(f);  // the flows left behind on these links may get more
    }
    link_out(f);
    s.rate = 0;
  }
}

void MaxMinSolver::set_weight(FlowId f, double weight) {
  finish_reorder();
  if (!(weight > 0) || std::isinf(weight))
    throw Error("MaxMinSolver::set_weight: weight must be finite and > 0, got " + std::to_string(weight));
  FlowState& s = checked(f, "set_weight");
  if (s.active && !s.pend) {
    // Its entries are keyed by r/w: move them to the pending lists, which
    // the next solve sorts in again.
    link_out(f);
    s.weight = weight;
    link_in(f);
  }
  s.weight = weight;
  if (s.active) {
    seed_links_of(f);
    if (s.len == 0) seed_flow(f);
  }
}

void MaxMinSolver::set_cap(FlowId f, Bandwidth cap) {
  finish_reorder();
  if (!(cap.bps >= 0)) throw Error("MaxMinSolver::set_cap: cap must be >= 0, got " + std::to_string(cap.bps));
  FlowState& s = checked(f, "set_cap");
  user_cap_[f] = cap.bps;
  s.cap = std::min(cap.bps, fold_min_[f]);
  if (s.active) {
    seed_links_of(f);
    if (s.len == 0) seed_flow(f);
  }
}

std::span<const Resource> MaxMinSolver::resources(FlowId f) const {
  const FlowState& s = flows_[f];
  return {terms_.data() + s.off, all_len_[f]};
}

void MaxMinSolver::link_in(FlowId f) {
  FlowState& s = flows_[f];
  if (fold_) {
    // A link another flow holds alone is unfolded; one no active flow
    // crosses is folded into this flow's cap. The unfolded terms go first.
    const uint32_t n = all_len_[f];
    uint32_t act = 0;
    for (uint32_t k = 0; k < n; ++k) {
      const LinkId l = term_links_[s.off + k];
      if (fold_owner_[l] != kInvalidId) unfold(l);
      if (live_[l] > 0 || link_seeded_[l] == kHard) {
        if (k != act) swap_terms(f, k, act);
        ++act;
      }
    }
    for (uint32_t k = act; k < n; ++k) {
      const LinkId l = term_links_[s.off + k];
      fold_owner_[l] = f;
      fold_k_[l] = k;
      ++live_[l];
    }
    folded_count_ += n - act;
    s.len = act;
    refold_cap(f);
    fill_slots(f);
  }
  s.pend = s.len > 0;
  for (uint32_t k = 0; k < s.len; ++k) {
    LinkId l = term_links_[s.off + k];
    if (pending_[l].empty()) pending_links_.push_back(l);
    pos_[s.off + k] = static_cast<uint32_t>(pending_[l].size());
    pending_[l].push_back(Use{0.0, f, k});
    ++live_[l];
  }
}

void MaxMinSolver::link_out(FlowId f) {
  FlowState& s = flows_[f];
  const double rho = s.rate / s.weight;
  if (fold_) {
    for (uint32_t k = s.len; k < all_len_[f]; ++k) {
      const LinkId l = term_links_[s.off + k];
      fold_owner_[l] = kInvalidId;
      --live_[l];
      loads_[l] = 0;
    }
    folded_count_ -= all_len_[f] - s.len;
  }
  for (uint32_t k = 0; k < s.len; ++k) {
    LinkId l = term_links_[s.off + k];
    --live_[l];
    if (s.pend) {
      std::vector<Use>& list = pending_[l];
      uint32_t p = pos_[s.off + k];
      Use last = list.back();
      list[p] = last;
      pos_[flows_[last.flow].off + last.k] = p;
      list.pop_back();
    } else {
      remove_sorted(l, f, k, rho);
    }
  }
  s.pend = false;
  if (fold_) {
    s.len = all_len_[f];
    fold_min_[f] = kInf;
    fold_cnt_[f] = 0;
    s.cap = user_cap_[f];
    fill_slots(f);
  }
}

void MaxMinSolver::set_fold_single(bool on) {
  finish_reorder();
  if (!flows_.empty()) throw Error("MaxMinSolver::set_fold_single: call it before the first add_flow");
  fold_ = on;
}

double MaxMinSolver::folded_load(LinkId l) const {
  const FlowState& s = flows_[fold_owner_[l]];
  return terms_[s.off + fold_k_[l]].coef * s.rate;
}

void MaxMinSolver::swap_terms(FlowId f, uint32_t i, uint32_t j) {
  const FlowState& s = flows_[f];
  std::swap(terms_[s.off + i], terms_[s.off + j]);
  std::swap(term_links_[s.off + i], term_links_[s.off + j]);
  std::swap(pos_[s.off + i], pos_[s.off + j]);
  for (const uint32_t k : {i, j}) {
    const LinkId l = term_links_[s.off + k];
    if (fold_owner_[l] == f) fold_k_[l] = k;
  }
}

void MaxMinSolver::fill_slots(FlowId f) {
  const FlowState& s = flows_[f];
  if (s.len <= kSlots)
    std::copy(term_links_.begin() + s.off, term_links_.begin() + s.off + s.len,
              link_slots_.begin() + static_cast<size_t>(f) * kSlots);
}

void MaxMinSolver::refold_cap(FlowId f) {
  FlowState& s = flows_[f];
  double m = kInf;
  uint32_t c = 0;
  for (uint32_t k = s.len; k < all_len_[f]; ++k) {
    const Resource& t = terms_[s.off + k];
    const double v = links_[t.link].cap / t.coef;
    if (v < m) {
      m = v;
      c = 1;
    } else if (v == m) {
      ++c;
    }
  }
  fold_min_[f] = m;
  fold_cnt_[f] = c;
  s.cap = std::min(user_cap_[f], m);
}

// Link l's owner gets back its term there as a list entry (see "Links that
// carry one flow"): its rate stays what the last solve gave it, so its
// entry is keyed by it and the link carries it; a flow activated since the
// last solve waits in the pending list, as its other terms do.
void MaxMinSolver::unfold(LinkId l) {
  const FlowId f = fold_owner_[l];
  FlowState& s = flows_[f];
  // The term moves to the end of the unfolded ones; the term there is
  // folded too, so neither has an entry to fix.
  if (fold_k_[l] != s.len) swap_terms(f, fold_k_[l], s.len);
  const uint32_t k = s.len++;
  fold_owner_[l] = kInvalidId;
  --folded_count_;
  const double a = terms_[s.off + k].coef;
  if (s.pend || s.arriving) {
    if (pending_[l].empty()) pending_links_.push_back(l);
    pos_[s.off + k] = static_cast<uint32_t>(pending_[l].size());
    pending_[l].push_back(Use{0.0, f, k});
    s.pend = true;
  } else {
    LinkList& list = lists_[l];
    list.uses.clear();
    list.head = 0;
    list.dead = 0;
    list.uses.push_back(Use{s.rate / s.weight, f, k});
    loads_[l] = a * s.rate;
  }
  fill_slots(f);
  if (links_[l].cap / a == fold_min_[f] && --fold_cnt_[f] == 0) refold_cap(f);
}

// Marks flow f's entry for term k dead in link l's sorted list, found by
// binary search on its key (its r/w has not changed since it was placed).
void MaxMinSolver::remove_sorted(LinkId l, FlowId f, uint32_t k, double rho) {
  std::vector<Use>& list = lists_[l].uses;
  auto it = std::lower_bound(list.begin(), list.end(), Use{rho, f, 0},
                             [](const Use& a, const Use& b) { return use_before(a.rho, a.flow, b.rho, b.flow); });
  for (; it != list.end() && it->rho == rho && it->flow == f; ++it) {
    if (it->k == k) {
      it->k = kDeadUse;
      ++lists_[l].dead;
      if (lists_[l].dead > 64 && lists_[l].dead * 2 > list.size()) compact_link(l);
      return;
    }
  }
  throw Error("MaxMinSolver: internal error: flow " + std::to_string(f) + " missing from link " + std::to_string(l));
}

void MaxMinSolver::compact_link(LinkId l) {
  std::vector<Use>& list = lists_[l].uses;
  list.erase(std::remove_if(list.begin(), list.end(), [](const Use& u) { return u.k == kDeadUse; }), list.end());
  lists_[l].dead = 0;
  lists_[l].head = 0;
}

// Restores the order of link l's list after a solve: the prefix [0,
// prefix_end) that the solve walked (its flows have new rates) and the
// pending flows join the sorted list. When they all sort before the rest
// (the common case: a re-solve above a threshold leaves the flows below it
// alone) they are written into the prefix, right-aligned, fillers before
// them; otherwise the list is merged anew.
void MaxMinSolver::reorder(LinkId l, uint32_t prefix_end) {
  std::vector<Use>& list = lists_[l].uses;
  std::vector<Use>& t = scratch_.sort;
  t.clear();
  const uint32_t h = std::min(lists_[l].head, prefix_end);
  uint32_t dead_before = h;
  for (uint32_t j = h; j < prefix_end; ++j) {
    const Use& u = list[j];
    if (u.k == kDeadUse) {
      ++dead_before;
      continue;
    }
    const FlowState& g = flows_[u.flow];
    t.push_back(Use{g.rate / g.weight, u.flow, u.k});
  }
  for (const Use& u : pending_[l]) {
    FlowState& g = flows_[u.flow];
    g.pend = false;
    t.push_back(Use{g.rate / g.weight, u.flow, u.k});
  }
  pending_[l].clear();
  pend_max_[l] = 0;
  auto before = [](const Use& a, const Use& b) { return use_before(a.rho, a.flow, b.rho, b.flow); };
  if (!std::is_sorted(t.begin(), t.end(), before)) std::sort(t.begin(), t.end(), before);
  write_prefix(l, prefix_end, dead_before, scratch_);
}

// Narrow re-solve: re-sorts link l's list, whose re-solved flows are its
// bucket (in list order). Only those whose rate changed move; the others
// keep their key, so the walk down to the lowest moved entry never reads a
// flow's state: it drops the moved entries (met in bucket order) and the
// dead ones, keeps the rest as they are, and merges the moved entries back
// with their new keys. The result is the one reorder() computes (the same
// live entries in the same order). Both passes work in the list itself: the
// walk packs the kept entries at the front of the walked prefix (a write
// never passes the read), and the merge fills the prefix from its end (a
// write never passes the kept entry it reads: the gap between them is the
// number of dead and not yet written moved entries).
void MaxMinSolver::reorder_moved(LinkId l, Scratch& x) {
  std::vector<Use>& moved = x.moved;
  moved.clear();
  const uint32_t s = links_[l].slot;
  for (uint32_t b = bucket_at_[s]; b < bucket_at_[s + 1]; ++b) {
    const FlowState& g = flows_[bucket_[b].flow];
    if (g.rate != g.prev) moved.push_back(bucket_[b]);
  }
  if (moved.empty()) return;
  if (!bucket_sorted_[s]) sort_uses(moved.data(), moved.data() + moved.size());  // in list order
  std::vector<Use>& list = lists_[l].uses;
  Use* ls = list.data();
  const uint32_t n = static_cast<uint32_t>(list.size());
  const uint32_t h = lists_[l].head;
  uint32_t j = h, dead_before = h;
  // Branch-free: whether an entry is dead, moved or kept follows no pattern
  // a predictor could learn. A kept entry is written at ls[h + nk] and
  // counted; the others are written there too and overwritten.
  const uint32_t m = static_cast<uint32_t>(moved.size());
  const Use* mv = moved.data();
  uint32_t mi = 0, nk = 0;
  for (; j < n && mi < m; ++j) {
    const Use u = ls[j];
    const bool dead = u.k == kDeadUse;
    const bool hit = !dead && u.flow == mv[mi].flow;
    ls[h + nk] = u;
    nk += !dead && !hit;
    mi += hit;
    dead_before += dead;
  }
  if (mi != m)
    throw Error("MaxMinSolver: internal error: re-solved flow " + std::to_string(moved[mi].flow) +
                " missing from link " + std::to_string(l));
  auto before = [](const Use& a, const Use& b) { return use_before(a.rho, a.flow, b.rho, b.flow); };
  for (Use& u : moved) {
    const FlowState& g = flows_[u.flow];
    u.rho = g.rate / g.weight;
  }
  sort_uses(moved.data(), moved.data() + moved.size());  // by new key
  // The merged prefix's last entry (std::merge's: a kept entry goes first
  // on a tie) must sort before the next live entry, as in write_prefix;
  // otherwise the general merge there.
  uint32_t next = j;
  while (next < n && ls[next].k == kDeadUse) ++next;
  const Use& last = nk > 0 && before(moved.back(), ls[h + nk - 1]) ? ls[h + nk - 1] : moved.back();
  if (next < n && !before(last, ls[next])) {
    std::vector<Use>& t = x.sort;
    t.resize(nk + m);
    std::merge(ls + h, ls + h + nk, moved.begin(), moved.end(), t.begin(), before);
    write_prefix(l, j, dead_before, x);
    return;
  }
  // Merge from the end: the last of what remains of the kept entries ls[h,
  // h + r) and the moved ones mv[0, q) goes to ls[o - 1].
  uint32_t o = j, r = nk, q = m;
  while (q > 0) {
    if (r > 0 && before(mv[q - 1], ls[h + r - 1])) {
      ls[--o] = ls[h + --r];
    } else {
      ls[--o] = mv[--q];
    }
  }
  if (o != h + r)
    while (r > 0) ls[--o] = ls[h + --r];
  close_prefix(l, j, next, j - nk - m, dead_before);
}

// A re-sorted prefix [0, prefix_end) of link l's list whose live entries
// now sit right-aligned at [fill, prefix_end), all sorting before the next
// live entry at next_live (or the end): fillers before them, and the dead
// entries between the prefix and next_live keep the key of the flow they
// held, which may now sort before the prefix's new last key: they take the
// next live key (or -inf at the end), so that keys stay monotone for the
// binary searches on the list. dead_before counts the prefix's dead entries.
void MaxMinSolver::close_prefix(LinkId l, uint32_t prefix_end, uint32_t next_live, uint32_t fill,
                                uint32_t dead_before) {
  std::vector<Use>& list = lists_[l].uses;
  const uint32_t n = static_cast<uint32_t>(list.size());
  for (uint32_t i = prefix_end; i < next_live; ++i)
    list[i] = next_live < n ? Use{list[next_live].rho, list[next_live].flow, kDeadUse} : Use{-kInf, 0, kDeadUse};
  for (uint32_t i = lists_[l].head; i < fill; ++i) list[i] = Use{kInf, 0, kDeadUse};
  lists_[l].head = fill;
  lists_[l].dead = lists_[l].dead - dead_before + fill;
  if (lists_[l].dead > 64 && lists_[l].dead * 2 > n) compact_link(l);
}

// Writes x.sort (sorted, the live entries of the prefix [0,
// prefix_end) of link l's list with their new keys, and its pending flows)
// back into the list; dead_before counts the dead entries of the prefix.
void MaxMinSolver::write_prefix(LinkId l, uint32_t prefix_end, uint32_t dead_before, Scratch& x) {
  std::vector<Use>& list = lists_[l].uses;
  const std::vector<Use>& t = x.sort;
  auto before = [](const Use& a, const Use& b) { return use_before(a.rho, a.flow, b.rho, b.flow); };
  uint32_t j = prefix_end;
  while (j < list.size() && list[j].k == kDeadUse) ++j;
  const bool fits = t.size() <= prefix_end && (t.empty() || j == list.size() || before(t.back(), list[j]));
  if (fits) {
    const uint32_t fill = prefix_end - static_cast<uint32_t>(t.size());
    std::copy(t.begin(), t.end(), list.begin() + fill);
    close_prefix(l, prefix_end, j, fill, dead_before);
  } else {
    std::vector<Use>& m = x.merge;
    m.clear();
    m.reserve(t.size() + list.size() - prefix_end);
    auto rest = list.begin() + prefix_end;
    size_t a = 0;
    for (; rest != list.end(); ++rest) {
      if (rest->k == kDeadUse) continue;
      while (a < t.size() && before(t[a], *rest)) m.push_back(t[a++]);
      m.push_back(*rest);
    }
    while (a < t.size()) m.push_back(t[a++]);
    list.assign(m.begin(), m.end());
    lists_[l].dead = 0;
    lists_[l].head = 0;
  }
}

void MaxMinSolver::seed_link(LinkId l, double theta, uint8_t why) {
  if (link_seeded_[l] != kHard) {
    link_seeded_[l] = kHard;  // (may stay listed in soft_links_: skipped there)
    seed_links_.push_back(l);
    seed_theta_[l] = theta;
    seed_why_[l] = why;
  } else {
    seed_theta_[l] = std::min(seed_theta_[l], theta);
    seed_why_[l] |= why;
  }
}

void MaxMinSolver::soft_seed_links_of(FlowId f) {
  const FlowState& s = flows_[f];
  const double rho = s.rate / s.weight;
  for (uint32_t k = 0; k < s.len; ++k) {
    const LinkId l = links_of(f, s)[k];
    if (!gone_listed_[l]) {
      gone_listed_[l] = 1;
      gone_links_.push_back(l);
      gone_load_[l] = 0;
    }
    gone_load_[l] += coef(s, k) * s.rate;
    if (link_seeded_[l] == kHard) continue;
    if (link_seeded_[l] == 0) {
      link_seeded_[l] = kSoft;
      soft_links_.push_back(l);
      soft_rho_[l] = rho;
    } else {
      soft_rho_[l] = std::min(soft_rho_[l], rho);
    }
  }
}

// Applies the departure shortcut (see the header) to links that only lost
// flows; the others become hard seeds for the BFS.
void MaxMinSolver::settle_departures() {
  // The departed flows' load leaves every link they crossed, whether the
  // link is then settled by the shortcut or re-solved (a re-solve starts
  // from these loads less those of the flows it re-solves).
  for (LinkId l : gone_links_) {
    gone_listed_[l] = 0;
    loads_[l] = live_[l] == 0 ? 0.0 : std::max(0.0, loads_[l] - gone_load_[l]);
  }
  gone_links_.clear();
  for (LinkId l : soft_links_) {
    if (link_seeded_[l] != kSoft) continue;  // hard meanwhile: re-solved anyway
    link_seeded_[l] = 0;
    // The largest r/w on the link: its first live sorted entry (pending
    // arrivals are not placed yet: rate 0).
    double max_rho = 0;
    const std::vector<Use>& list = lists_[l].uses;
    for (uint32_t j = lists_[l].head; j < list.size(); ++j) {
      if (list[j].k != kDeadUse) {
        max_rho = list[j].rho;
        break;
      }
    }
    if (live_[l] == 0) {
      fast_links_.push_back(l);
    } else if (max_rho <= soft_rho_[l] * (1 - 1e-9)) {
      fast_links_.push_back(l);
    } else {
      seed_link(l, soft_rho_[l], 0);  // below the departed flows' r/w nothing changes
    }
  }
  soft_links_.clear();
}

// Applies the arrival shortcut (see the header) to flows activated since the
// last solve, one at a time in activation order; the others hard-seed their
// links for the BFS.
void MaxMinSolver::settle_arrivals() {
  for (FlowId f : arrivals_) {
    FlowState& s = flows_[f];
    if (!s.arriving) continue;  // handled already, deactivated, or a reused id
    s.arriving = false;
    if (!s.alive || !s.active) continue;
    const Resource* t = terms_.data() + s.off;
    bool ok = true;
    double r = s.cap;  // min(cap, slack_l / coef_l)
    for (uint32_t k = 0; k < s.len && ok; ++k) {
      const LinkId l = t[k].link;
      if (link_seeded_[l] == kHard) ok = false;
      r = std::min(r, std::max(0.0, links_[l].cap - loads_[l]) / t[k].coef);
    }
    ok = ok && r > 0 && r < kInf;
    if (ok && r < s.cap) {
      // Link-limited: some link that r saturates must have no flow with a
      // larger r/w than this one, so that it is this flow's bottleneck.
      const double rho = r / s.weight;
      bool bottleneck = false;
      for (uint32_t k = 0; k < s.len && !bottleneck; ++k) {
        const LinkId l = t[k].link;
        const double slack = std::max(0.0, links_[l].cap - loads_[l]);
        if (slack > t[k].coef * r * (1 + 1e-12)) continue;  // not saturated by r
        // The largest r/w on l among others: the first live sorted entry, or
        // an arrival placed earlier in this loop (f itself has rate 0 yet).
        double max_rho = pend_max_[l];
        const std::vector<Use>& list = lists_[l].uses;
        for (uint32_t j = lists_[l].head; j < list.size(); ++j) {
          if (list[j].k != kDeadUse) {
            max_rho = std::max(max_rho, list[j].rho);
            break;
          }
        }
        bottleneck = !(max_rho > rho * (1 + 1e-12));
      }
      ok = bottleneck;
    }
    if (ok) {
      s.rate = r;
      s.frozen = true;
      for (uint32_t k = 0; k < s.len; ++k) {
        loads_[t[k].link] += t[k].coef * r;
        pend_max_[t[k].link] = std::max(pend_max_[t[k].link], r / s.weight);
        fast_links_.push_back(t[k].link);
      }
      fast_flows_.push_back(f);
    } else {
      s.fresh = true;
      for (uint32_t k = 0; k < s.len; ++k) seed_link(t[k].link, kInf, kWhyArrival);
      if (s.len == 0) seed_flow(f);  // every link folded (a zero capacity)
    }
  }
  arrivals_.clear();
}

void MaxMinSolver::seed_links_of(FlowId f) {
  const FlowState& s = flows_[f];
  for (uint32_t k = 0; k < s.len; ++k) seed_link(term_links_[s.off + k], 0, 0);
}

void MaxMinSolver::seed_flow(FlowId f) {
  // A reused id may already sit in seed_flows_ from its previous life; the
  // flag is kept across reuse so it is not queued twice (and collect checks
  // alive/active anyway).
  if (!flows_[f].seeded) {
    flows_[f].seeded = true;
    seed_flows_.push_back(f);
  }
}

void MaxMinSolver::maybe_compact() {
  if (garbage_terms_ < 4096 || garbage_terms_ * 2 < terms_.size()) return;
  std::vector<Resource> terms;
  std::vector<LinkId> term_links;
  std::vector<uint32_t> pos;
  terms.reserve(terms_.size() - garbage_terms_ + 1024);
  term_links.reserve(terms.capacity());
  pos.reserve(terms.capacity());
  for (FlowId f = 0; f < flows_.size(); ++f) {
    FlowState& s = flows_[f];
    if (!s.alive) continue;
    const uint32_t off = static_cast<uint32_t>(terms.size()), n = all_len_[f];
    terms.insert(terms.end(), terms_.begin() + s.off, terms_.begin() + s.off + n);
    term_links.insert(term_links.end(), term_links_.begin() + s.off, term_links_.begin() + s.off + n);
    pos.insert(pos.end(), pos_.begin() + s.off, pos_.begin() + s.off + n);
    s.off = off;
  }
  terms_.swap(terms);
  term_links_.swap(term_links);
  pos_.swap(pos);
  garbage_terms_ = 0;
}

// ---------------------------------------------------------------- solving

void MaxMinSolver::next_epoch() {
  if (++epoch_ == 0) {
    for (LinkState& l : links_) l.mark = 0;
    std::fill(link_moved_.begin(), link_moved_.end(), 0u);
    for (FlowState& f : flows_) f.mark = 0;
    epoch_ = 1;
  }
}

void MaxMinSolver::solve() {
  finish_reorder();
  comp_flows_.clear();
  comp_links_.clear();
  stats_ = {};
  if (!dirty()) return;
  fast_links_.clear();
  fast_flows_.clear();
  settle_departures();
  settle_arrivals();
  if (!seed_links_.empty() || !seed_flows_.empty()) {
    const double theta = change_threshold();
    // Departures only (every seed is a link that lost flows, with a
    // threshold above 0), nothing unsorted: try the narrow re-solve (see
    // "Narrow re-solve" in the header), and the threshold rule if its check
    // fails.
    bool narrow = theta > 0 && seed_flows_.empty() && pending_links_.empty();
    for (size_t i = 0; narrow && i < seed_links_.size(); ++i)
      narrow = seed_why_[seed_links_[i]] == 0 && seed_theta_[seed_links_[i]] > 0;
    if (narrow) narrow_seeds_.assign(seed_links_.begin(), seed_links_.end());
    collect_component(theta, narrow);
    if (!water_fill(narrow)) {
      // A kept flow sits above the level at which one of its links now
      // saturates: it must be re-solved too. Undo and use the threshold rule.
      for (FlowId f : comp_flows_) {
        FlowState& g = flows_[f];
        g.rate = g.prev;
        g.frozen = true;
      }
      comp_flows_.clear();
      comp_links_.clear();
      for (LinkId l : narrow_seeds_) {
        link_seeded_[l] = kHard;
        seed_links_.push_back(l);
      }
      ++stats_.retries;
      collect_component(theta, false);
      water_fill(false);
    } else if (narrow) {
      stats_.narrow = 1;
    }
  } else {
    next_epoch();  // nothing is marked as re-solved in this epoch
  }
  // Put the re-solved prefixes and the arrivals back in order. A list none
  // of whose flows changed rate, with no arrival, is in order already.
  if (bucketed_) {
    // (A narrow re-solve has no pending flow.) The lists whose flows moved;
    // with a second thread and enough of them, both threads re-sort them
    // while the caller goes on (see "Threads" in the header).
    reorder_links_.clear();
    for (LinkId l : comp_links_)
      if (link_moved_[l] == epoch_) reorder_links_.push_back(l);
    stats_.reordered = static_cast<uint32_t>(reorder_links_.size());
    if (threads_ >= 2 && reorder_links_.size() >= parallel_min_links_) {
      if (!worker_) start_worker();
      worker_->next.store(0, std::memory_order_relaxed);
      worker_->state.store(Worker::kPosted, std::memory_order_release);
      worker_->state.notify_one();
      reorder_posted_ = true;
      ++parallel_reorders_;
    } else {
      reorder_range(0, static_cast<uint32_t>(reorder_links_.size()), scratch_);
    }
  } else {
    // Each link's list, pending list and marks are memory accesses of their own: requested some links ahead (as
    // reorder_range does), so that they overlap.
    constexpr size_t kAhead = 8;
    const size_t n = comp_links_.size();
    auto request_state = [&](LinkId a) {
      __builtin_prefetch(&lists_[a]);
      __builtin_prefetch(&pending_[a]);
      __builtin_prefetch(&link_moved_[a]);
      __builtin_prefetch(&prefix_[a]);
    };
    for (size_t i = 0; i < std::min(n, 2 * kAhead); ++i) request_state(comp_links_[i]);
    for (size_t i = 0; i < n; ++i) {
      if (i + 2 * kAhead < n) request_state(comp_links_[i + 2 * kAhead]);
      if (i + kAhead < n) request_entries(comp_links_[i + kAhead], 1);
      const LinkId l = comp_links_[i];
      if (link_moved_[l] == epoch_ || !pending_[l].empty()) {
        reorder(l, prefix_[l]);
        ++stats_.reordered;
      }
    }
  }
  if (!pending_links_.empty()) finish_reorder();
  for (LinkId l : pending_links_)
    if (!pending_[l].empty()) reorder(l, 0);
  pending_links_.clear();
  // Report what the shortcuts changed too, unless it was re-solved anyway.
  for (LinkId l : fast_links_) {
    if (links_[l].mark != epoch_) {
      links_[l].mark = epoch_;
      comp_links_.push_back(l);
      ++stats_.fast_links;
    }
  }
  for (FlowId f : fast_flows_) {
    if (flows_[f].mark != epoch_) {
      flows_[f].mark = epoch_;
      comp_flows_.push_back(f);
      ++stats_.fast_flows;
    }
  }
}

void MaxMinSolver::solve_all() {
  finish_reorder();
  for (LinkId l = 0; l < links_.size(); ++l)
    if (live_[l] > 0) seed_link(l, 0, 0);
  for (FlowId f = 0; f < flows_.size(); ++f)
    if (flows_[f].alive && flows_[f].active && flows_[f].len == 0) seed_flow(f);
  solve();
}

// The level below which the new filling repeats the last one (see the
// header): the minimum over re-solved links of their fixed threshold and, for
// a capacity change or a failed arrival, the level at which the link would
// now saturate (and, for a capacity change, the largest r/w on it, a lower
// bound of its old saturation level). 0 means "re-solve everything reached".
double MaxMinSolver::change_threshold() {
  double theta = kInf;
  for (LinkId l : seed_links_) {
    double t = seed_theta_[l];
    if (seed_why_[l] != 0 && std::min(t, theta) > 0) {
      // Cheap lower bound first: sum_g a_g min(r_g, w_g x) <= x sum_g a_g w_g,
      // so the link cannot saturate below C_l / sum_g a_g w_g.
      double aw = 0;
      for_each_live(l, [&](const Use& u) { aw += terms_[flows_[u.flow].off + u.k].coef * flows_[u.flow].weight; });
      if (aw > 0 && links_[l].cap < std::min(t, theta) * aw) t = std::min(t, saturation_level(l));
    }
    if (seed_why_[l] & kWhyCapacity) {
      // The old saturation level of l, if it was saturated, is the largest
      // r/w on it; if it was not, that is still a lower bound.
      double old_level = 0;
      for_each_live(l, [&](const Use& u) {
        const FlowState& g = flows_[u.flow];
        if (!g.fresh) old_level = std::max(old_level, g.rate / g.weight);
      });
      t = std::min(t, old_level);
    }
    theta = std::min(theta, t);
    if (theta <= 0) return 0;
  }
  return theta;
}

// Smallest lambda at which link l saturates if every flow on it keeps its
// old rate once lambda passes its r/w (fresh arrivals: their cap), i.e. the
// root of sum_g a_g * min(r_g, w_g * lambda) = C_l; +inf when the link never
// saturates.
double MaxMinSolver::saturation_level(LinkId l) {
  breakpoints_.clear();
  double slope = 0;  // sum of a_g * w_g over flows not yet at their breakpoint
  for_each_live(l, [&](const Use& u) {
    const FlowState& g = flows_[u.flow];
    const double a = terms_[g.off + u.k].coef;
    const double bp = g.fresh ? g.cap / g.weight : g.rate / g.weight;
    breakpoints_.emplace_back(bp, a * g.weight);
    slope += a * g.weight;
  });
  std::sort(breakpoints_.begin(), breakpoints_.end());
  const double cap = links_[l].cap;
  double fixed = 0;  // sum of a_g * r_g over flows past their breakpoint
  for (const auto& [bp, aw] : breakpoints_) {
    if (slope <= 0) break;
    const double lambda = std::max(0.0, cap - fixed) / slope;
    if (lambda <= bp) return lambda;
    fixed += aw * bp;
    slope -= aw;
  }
  return kInf;
}

// Collects the components to re-solve and, in the same pass, resets their
// water-filling state: links get used = 0 and the weight sums / unfrozen
// counts of their flows; flows become unfrozen (caps are listed for sorting).
void MaxMinSolver::collect_component(double theta, bool narrow) {
  // Flows whose r/w is below the threshold keep their rates; they are not
  // re-solved and are not traversed, only their load is counted.
  const double keep_below = theta * (1 - 1e-9);
  keep_below_ = keep_below;
  bucketed_ = false;
  next_epoch();
  const uint32_t epoch = epoch_;
  capped_.clear();
  taken_terms_.clear();
  unfrozen_flows_ = 0;
  auto take_link = [&](LinkId l) {
    LinkState& L = links_[l];
    L.mark = epoch;
    L.slot = static_cast<uint32_t>(comp_links_.size());
    L.used = 0;
    L.wsum = 0;
    L.unfrozen = 0;
    taken_load_[l] = 0;
    comp_links_.push_back(l);
  };
  auto take_flow = [&](FlowId f) {
    FlowState& s = flows_[f];
    s.mark = epoch;
    s.frozen = false;
    s.fresh = false;
    s.prev = s.rate;
    s.rate = 0;
    ++unfrozen_flows_;
    comp_flows_.push_back(f);
    const LinkId* t = links_of(f, s);
    const double rho = s.prev / s.weight;  // its key in the sorted lists
    for (uint32_t k = 0; k < s.len; ++k) {
      const LinkId l = t[k];
      const double a = coef(s, k);
      if (links_[l].mark != epoch) take_link(l);
      LinkState& L = links_[l];
      L.wsum += a * s.weight;
      ++L.unfrozen;
      if (narrow) {
        taken_load_[l] += a * s.prev;
        taken_terms_.push_back(TakenTerm{L.slot, Use{rho, f, k}});
      }
    }
    if (s.cap < kInf) {
      capped_.emplace_back(s.cap / s.weight, f);
    } else if (s.len == 0) {
      s.frozen = true;  // unconstrained
      --unfrozen_flows_;
      s.rate = kInf;
    }
  };
  for (LinkId l : seed_links_) {
    if (link_seeded_[l] == kHard) link_seeded_[l] = 0;
    if (links_[l].mark != epoch) take_link(l);
  }
  seed_links_.clear();
  for (FlowId f : seed_flows_) {
    FlowState& s = flows_[f];
    s.seeded = false;
    if (s.alive && s.active && s.mark != epoch) take_flow(f);
  }
  seed_flows_.clear();
  if (narrow) {
    // Narrow BFS: from a seed, or a reached link that is saturated, cross
    // only its top tier (the flows whose r/w is the link's largest, within
    // 1e-9: those it may bottleneck), at or above the threshold. A flow
    // taken through another link may sit anywhere in a link's list: the
    // walked prefix is extended past the lowest r/w taken there, and the
    // kept load is the link's load less what the taken flows carried.
    const size_t seeds = comp_links_.size();
    for (size_t i = 0; i < comp_links_.size(); ++i) {
      const LinkId l = comp_links_[i];
      if (i >= seeds && loads_[l] < links_[l].cap * (1 - 1e-9)) continue;  // bottleneck of none
      const std::vector<Use>& list = lists_[l].uses;
      const uint32_t n = static_cast<uint32_t>(list.size());
      uint32_t j = lists_[l].head;
      while (j < n && list[j].k == kDeadUse) ++j;
      if (j == n) continue;
      const double cut = std::max(keep_below, list[j].rho * (1 - 1e-9));
      // The tier's flows and their links (found from the flow's id, or
      // for a long path from its state) are one memory access away, and
      // those links' state one more: request each level for the whole
      // tier before using it, so the loads overlap instead of queueing.
      uint32_t end = j;
      for (; end < n && list[end].rho >= cut; ++end) {
        __builtin_prefetch(&flows_[list[end].flow]);
        __builtin_prefetch(link_slots_.data() + static_cast<size_t>(list[end].flow) * kSlots);
      }
      for (uint32_t p = j; p < end; ++p) {
        if (list[p].k == kDeadUse) continue;
        const FlowState& g = flows_[list[p].flow];
        if (g.mark == epoch) continue;
        const LinkId* t = links_of(list[p].flow, g);
        for (uint32_t k = 0; k < g.len; ++k) __builtin_prefetch(&links_[t[k]]);
      }
      for (; j < end; ++j) {
        const Use& u = list[j];
        if (u.k != kDeadUse && flows_[u.flow].mark != epoch) take_flow(u.flow);
      }
    }
    for (const LinkId l : comp_links_)
      links_[l].used = links_[l].unfrozen == live_[l] ? 0.0 : std::max(0.0, loads_[l] - taken_load_[l]);
    build_buckets();
    return;
  }
  // BFS over the bipartite graph: link -> its flows -> their links. A
  // link's flows with r/w >= keep_below are the prefix of its sorted list
  // (and fresh or re-placed arrivals sit in pending_): only those are
  // walked. The kept flows (below) are a fixed load that water-filling must
  // not touch: the link's load as of the last solve less what the re-solved
  // flows carried (exactly 0 when every flow on it is re-solved).
  constexpr size_t kAhead = 8;  // links whose list is requested before it is walked (as reorder_range does)
  for (size_t i = 0; i < comp_links_.size(); ++i) {
    if (i + 2 * kAhead < comp_links_.size()) {
      const LinkId a = comp_links_[i + 2 * kAhead];
      __builtin_prefetch(&lists_[a]);
      __builtin_prefetch(&pending_[a]);
      __builtin_prefetch(&loads_[a]);
      __builtin_prefetch(&live_[a]);
    }
    if (i + kAhead < comp_links_.size()) request_entries(comp_links_[i + kAhead], 1);
    const LinkId l = comp_links_[i];
    double taken_load = 0;
    uint32_t taken = 0;
    const std::vector<Use>& list = lists_[l].uses;
    uint32_t j = lists_[l].head;
    for (const uint32_t n = static_cast<uint32_t>(list.size()); j < n; ++j) {
      const Use& u = list[j];
      if (u.rho < keep_below) break;
      if (u.k == kDeadUse) continue;
      FlowState& g = flows_[u.flow];
      if (g.mark != epoch) take_flow(u.flow);
      taken_load += coef(g, u.k) * g.prev;
      ++taken;
    }
    prefix_[l] = j;
    for (const Use& u : pending_[l]) {
      FlowState& g = flows_[u.flow];
      if (g.mark != epoch) {
        if (!g.fresh && g.rate / g.weight < keep_below) continue;  // kept (placed by the arrival shortcut)
        take_flow(u.flow);
      }
      taken_load += coef(g, u.k) * g.prev;
      ++taken;
    }
    links_[l].used = taken == live_[l] ? 0.0 : std::max(0.0, loads_[l] - taken_load);
  }
}

// Narrow re-solve: lists each re-solved link's re-solved flows (see
// bucket_), sorted as in the link's list (their old keys).
void MaxMinSolver::build_buckets() {
  // Every re-solved flow on a link is unfrozen yet: the link's unfrozen
  // count is the size of its bucket.
  const uint32_t nl = static_cast<uint32_t>(comp_links_.size());
  bucket_at_.resize(nl + 1);
  bucket_at_[0] = 0;
  for (uint32_t i = 0; i < nl; ++i) bucket_at_[i + 1] = bucket_at_[i] + links_[comp_links_[i]].unfrozen;
  bucket_.resize(bucket_at_[nl]);
  bucket_fill_.assign(bucket_at_.begin(), bucket_at_.end() - 1);
  for (const TakenTerm& t : taken_terms_) bucket_[bucket_fill_[t.slot]++] = t.use;
  // Sorted on first use (sort_bucket): only the links that saturate need
  // their bucket in list order for water-filling; reorder_moved puts just
  // the moved entries in that order.
  bucket_sorted_.assign(nl, 0);
  bucketed_ = true;
}

void MaxMinSolver::sort_bucket(uint32_t slot) {
  if (bucket_sorted_[slot]) return;
  bucket_sorted_[slot] = 1;
  sort_uses(bucket_.data() + bucket_at_[slot], bucket_.data() + bucket_at_[slot + 1]);
}

void MaxMinSolver::freeze(FlowId f, double rate) {
  FlowState& s = flows_[f];
  s.frozen = true;
  s.rate = rate;
  --unfrozen_flows_;
  const double w = s.weight;
  const LinkId* t = links_of(f, s);
  for (uint32_t k = 0; k < s.len; ++k) {
    LinkState& L = links_[t[k]];
    const double a = coef(s, k);
    L.used += a * rate;
    L.wsum -= a * w;
    --L.unfrozen;
  }
  // Its key in its links' lists changes unless its rate is the old one to
  // the bit (common: a re-solve reaches many flows whose bottleneck kept its
  // load, and their filling repeats the old arithmetic).
  if (rate != s.prev)
    for (uint32_t k = 0; k < s.len; ++k) link_moved_[t[k]] = epoch_;
}

double MaxMinSolver::level_of(LinkId l, double floor_level) {
  LinkState& L = links_[l];
  if (!(L.wsum > 0)) {
    // Cancellation left no weight although flows remain unfrozen: recompute.
    double w = 0;
    for_each_solved(l, [&](const Use& u) {
      const FlowState& fs = flows_[u.flow];
      if (!fs.frozen) w += coef(fs, u.k) * fs.weight;
    });
    L.wsum = w;
  }
  const double level = std::max(0.0, L.cap - L.used) / L.wsum;
  // Exact arithmetic gives level >= floor_level; clamp away rounding.
  return level < floor_level ? floor_level : level;
}

namespace {

// Binary min-heap on (level, link) with hole-based sifting.
template <class H>
bool heap_before(const H& x, const H& y) {
  return x.level < y.level || (x.level == y.level && x.link < y.link);
}

template <class H>
void heap_sift_down(std::vector<H>& h, size_t i) {
  const size_t n = h.size();
  const H e = h[i];
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && heap_before(h[c + 1], h[c])) ++c;
    if (!heap_before(h[c], e)) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = e;
}

template <class H>
void heap_pop(std::vector<H>& h) {
  h.front() = h.back();
  h.pop_back();
  if (!h.empty()) heap_sift_down(h, 0);
}

}  // namespace

bool MaxMinSolver::water_fill(bool check) {
  stats_.flows = static_cast<uint32_t>(comp_flows_.size());
  stats_.links = static_cast<uint32_t>(comp_links_.size());

  std::sort(capped_.begin(), capped_.end());

  heap_.clear();
  for (LinkId l : comp_links_) {
    const LinkState& L = links_[l];
    if (L.unfrozen > 0) heap_.push_back(HeapItem{std::max(0.0, L.cap - L.used) / L.wsum, l});
  }
  for (size_t i = heap_.size() / 2; i-- > 0;) heap_sift_down(heap_, i);

  double floor_level = 0;
  size_t ci = 0;
  // Links still in the heap once every flow is frozen are simply dropped.
  while (unfrozen_flows_ > 0) {
    // Bring the link with the smallest current level to the top.
    while (!heap_.empty()) {
      HeapItem& top = heap_.front();
      if (links_[top.link].unfrozen == 0) {
        heap_pop(heap_);
        continue;
      }
      const double level = level_of(top.link, floor_level);
      if (level > top.level) {
        top.level = level;
        heap_sift_down(heap_, 0);
        continue;
      }
      break;
    }
    while (ci < capped_.size() && flows_[capped_[ci].second].frozen) ++ci;
    const bool have_link = !heap_.empty();
    const bool have_cap = ci < capped_.size();
    if (!have_link && !have_cap) break;

    ++stats_.bottlenecks;
    if (have_cap && (!have_link || capped_[ci].first <= heap_.front().level)) {
      // A flow reaches its cap before any of its links saturates.
      const FlowId f = capped_[ci++].second;
      floor_level = std::max(floor_level, flows_[f].cap / flows_[f].weight);
      freeze(f, flows_[f].cap);
    } else {
      // The link saturates: every unfrozen flow on it stops at w * level.
      const LinkId l = heap_.front().link;
      const double level = heap_.front().level;
      if (check) {
        // Narrow re-solve: no kept flow on l may have a larger r/w than the
        // level at which l saturates (else l is not a bottleneck of the
        // flows it freezes, and that kept flow must give up bandwidth). The
        // largest kept r/w is the first live entry not re-solved.
        const std::vector<Use>& list = lists_[l].uses;
        for (uint32_t j = lists_[l].head; j < list.size(); ++j) {
          const Use& u = list[j];
          if (u.k == kDeadUse || flows_[u.flow].mark == epoch_) continue;
          if (u.rho > level * (1 + 1e-10)) return false;
          break;
        }
      }
      floor_level = level;
      heap_pop(heap_);
      for_each_solved(l, [&](const Use& u) {
        FlowState& fs = flows_[u.flow];
        if (!fs.frozen) freeze(u.flow, fs.weight * level);
      });
    }
  }

  for (LinkId l : comp_links_) loads_[l] = links_[l].used;
  return true;
}

}  // namespace podnet::engine::flow
