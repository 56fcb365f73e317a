// Weighted max-min fair rate allocation over directed links, incremental.
//
// Model
// -----
// Resources are directed links l with capacity C_l (bits/s). Variables are
// flows f with a weight w_f > 0, an optional rate cap K_f (bits/s; +inf when
// absent) and a list of (link, coefficient) terms: a flow sending at rate r_f
// consumes a_fl * r_f of link l. A plain path has a_fl = 1 on each of its links.
// A pipelined ring (all hops move the same chunk at the same time) can be one
// variable whose rate is the per-hop rate and which consumes 1 on every link
// of every hop: a link that two hops cross gets a_fl = 2. A link listed twice
// in a flow's terms counts twice: add_flow merges repeats into one term with
// the summed coefficient (resources() returns the merged list).
//
// The allocation r is the weighted max-min fair one subject to
//     sum_f a_fl * r_f <= C_l   for every link l,     0 <= r_f <= K_f,
// i.e. the vector r/w is lexicographically maximal when sorted ascending: no
// flow's normalised rate r_f / w_f can grow without shrinking that of a flow
// whose normalised rate is already no larger. Equivalently (the bottleneck
// characterisation, which the shortcuts below rely on): r is feasible and
// every flow is at its cap or has a bottleneck, a saturated link on which no
// flow has a larger r/w; such an r exists and is unique. It is computed by
// progressive filling (water-filling; Bertsekas & Gallager, "Data Networks",
// 2nd ed., sec. 6.5):
//
//   all flows unfrozen; level lambda rises from 0; every unfrozen flow runs at
//   r_f = w_f * lambda. Link l saturates at
//       lambda_l = (C_l - sum_{frozen f} a_fl r_f) / sum_{unfrozen f} a_fl w_f
//   and flow f reaches its cap at lambda_f = K_f / w_f. Take the smallest of
//   these; freeze the capped flow at K_f, or every unfrozen flow of the
//   saturated link at w_f * lambda_l; update the sums; repeat until every flow
//   is frozen.
//
// A link's saturation level never decreases while filling (freezing a flow at
// lambda removes a_fl * w_f * lambda from the numerator and a_fl * w_f from
// the denominator of a ratio that was >= lambda). So every link sits once in
// a min-heap keyed by (level, link index) whose key is a lower bound of its
// current level: freezing does not touch the heap; when a link reaches the
// top its level is recomputed and, if it rose, the key is raised in place and
// sifted down. A link whose recomputed level equals its key is the true
// minimum. Caps sit in a list sorted by (K_f / w_f, flow index). One solve
// costs O(T + R log L) for T flow-link terms and L links in the part being
// solved and R re-keyings (R <= T), never O(F * L). Computed levels are
// clamped to the last level frozen, so rounding cannot make filling go back.
//
// Why max-min: it is the steady state that fair end-to-end congestion control
// (per-flow fair queueing, or TCP/DCQCN-like AIMD with equal RTTs in the
// fluid limit) converges to. Weights model unequal shares at the bottleneck
// (several QPs behind one variable, WFQ classes); caps model limits outside the
// fabric model (a NIC's line rate, a per-QP rate limit, a DMA engine). What it
// does not model: transients of congestion control, unfairness between flows
// of different RTT, queueing delay, packet loss, PFC head-of-line blocking;
// those are the packet engine's job.
//
// A flow with no terms gets its cap, or +inf when uncapped (the caller decides
// what an unconstrained flow means). A link of capacity 0 gives its flows rate 0.
//
// Incremental solving
// -------------------
// Flows may be added, removed, parked/unparked (set_active) and re-weighted,
// and link capacities changed, between solves. A flow's rate depends only on
// the connected component of the bipartite flow-link graph that contains it,
// so solve() re-runs water-filling only on the components that contain a
// changed link or a link of a changed flow (found by BFS from those links),
// and within them only above a threshold level (below). Rates elsewhere are
// kept. Before that, two shortcuts settle common changes without any
// water-filling.
//
// Departure shortcut: when flows only leave a link l (no arrival, capacity,
// weight or cap change touches it) and every flow still on l has a normalised
// rate r_g/w_g below (by > 1e-9 relative) that of each departed flow that
// crossed l (or l is left empty), nobody's rate changes: a remaining flow g is
// not bottlenecked at l (a departed flow had a higher r/w there), nor at any
// other link a departed flow crossed (same argument), so its bottleneck link
// keeps its load and g stays maximal on it; the old rates minus the departed
// flows still satisfy the bottleneck characterisation of max-min fairness,
// whose solution is unique. Such a link just has its load reduced. This is the
// common case when flows complete in order of rate (the fastest first), and
// makes a completion cost O(flows on its links) instead of a re-solve of the
// component. Links failing the test are re-solved as below.
//
// Arrival shortcut: a flow f activated since the last solve, on links no other
// change touches, is placed without a re-solve when it can run on spare
// capacity alone: r_f = min(K_f, min_l slack_l / a_fl) > 0, where
// slack_l = C_l - load_l, and either r_f = K_f (f sits at its cap) or some
// link that r_f saturates carries no flow with r_g/w_g > r_f/w_f (it is f's
// bottleneck). Every link of f had slack, so none was anybody's bottleneck;
// the others keep theirs, f gets one: the bottleneck characterisation holds
// again. Arrivals are placed one at a time (each sees the loads the previous
// ones left), after the departures. A flow starting on the path its
// predecessor just left typically passes, so a DAG of back-to-back transfers
// costs O(path length + flows on its bottleneck) per transfer. Arrivals that
// fail (e.g. they must take bandwidth from others) are re-solved with their
// components, as below.
//
// Partial re-solve above a threshold: what remains (failed shortcuts,
// capacity changes, weight or cap changes) is re-solved, but only above the
// level theta below which progressive filling of the new instance repeats the
// old one event for event; flows with r/w < theta keep their rates and count
// as fixed load. theta is the minimum over the re-solved links of:
//   - a link that lost flows: the smallest r/w among the flows that left it
//     (their links all saturated at or above their r/w, and without them
//     those links only have more room);
//   - a link that gained a flow or changed capacity: the lowest lambda with
//     sum_g a_g min(r_g, w_g lambda) = C_l, old flows freezing at their old
//     r/w and new ones unfrozen up to their cap (the first level at which it
//     could saturate now), and for a capacity change also the largest r/w on
//     it (a lower bound of where it saturated before);
//   - a weight or cap change: 0 (everything reached is re-solved).
// The BFS then starts at the changed links and crosses only flows with
// r/w >= theta (and new ones). A completion or a new transfer usually moves
// only the upper levels, so this re-solves a small part of a big component.
//
// Narrow re-solve: when every change since the last solve is a departure
// (links that only lost flows and failed the departure shortcut) and no
// arrival is pending, the BFS crosses fewer flows. By the bottleneck
// characterisation, a flow g keeps its rate if its bottleneck b keeps its
// load and flows: so from a link it is enough to cross the flows it may
// bottleneck, its top tier (r/w within 1e-9 of the largest on it, and at or
// above theta), and only from a seed or a saturated link (load within 1e-9
// of capacity; a link with slack bottlenecks nobody). Flows not crossed keep
// their rates and count as fixed load, wherever they sit in a link's list
// (a re-solved flow reached through another link may sit deep in it; see
// "Performance" for how its list is kept in order). Water-filling the
// crossed flows gives each a bottleneck among them; it is one for the
// whole allocation only if no fixed flow on it has a larger r/w, which is
// checked at every link that saturates (the first live entry of its list
// not re-solved is the largest fixed r/w; allowed 1e-10 above the level).
// A fixed flow whose bottleneck was re-solved was crossed (it is that
// link's top tier); one whose bottleneck was not keeps it, untouched. So
// when the check holds the allocation is feasible, every flow has a
// bottleneck, and it is the max-min one (unique). When it fails (a fixed
// flow sits above the level at which one of its links now saturates: it
// must give up bandwidth), the rates are restored and the same changes are
// re-solved by the threshold rule above. On the 512-GPU
// all-to-all below this re-solves 883 flows per re-solve on average instead
// of 2,887; 59 of its 28,413 re-solves fall back.
//
// solve_all() re-solves everything. Components solved in the same pass
// interleave in one heap, which does not change their arithmetic beyond
// rounding (the order of operations per link is the same), so incremental and
// full solves agree to rounding (tested to 1e-9 relative).
//
// Determinism: everything lives in flat arrays indexed by id; ties break by
// link or flow index; ids are recycled LIFO. The result depends only on the
// sequence of API calls.
//
// Performance: no maps, no per-flow allocation during solve (all scratch
// buffers are members and reused). Terms live in one pooled array that is
// compacted when more than half of it is garbage. Each link keeps its flows
// sorted by (r/w descending, flow id) as of the last solve, so that the BFS
// of a partial re-solve walks only the flows at or above the threshold (a
// prefix) and never the kept ones below it: their load is the link's load
// as of the last solve less what the re-solved flows carried there. After
// the solve only that prefix is re-sorted (the kept flows stay in order
// behind it), and only on links where a flow changed rate or arrived: a
// re-solved flow whose new rate equals its old one to the bit keeps its
// key, so a list whose re-solved flows all did is in order already (in the
// default training run 76 % of the flows re-solved get their old rate
// back: the filling repeats their old arithmetic); flows activated since
// the last solve wait, unsorted, in a per-link pending list until then. A
// flow leaving a link marks its entry dead (found by binary search on its
// key); dead entries are skipped and compacted away when they outnumber
// the live ones. The largest r/w on a link, which both shortcuts test, is
// its first live entry. Before this, a re-solve walked every flow of every
// link it reached: a 64 MiB ECMP all-to-all over 512 GPUs of aipod-16k
// (261,632 flows, 28,412 re-solves) spent 87 % of its time there
// (docs/contributing/validation/speed.md). The kept load is now a difference rather
// than a sum, so rates may differ from a full solve in the last bits (the
// tests' 1e-9 relative agreement holds; podnet's printed results did not
// change on the golden runs or the all-to-alls measured).
//
// A narrow re-solve never reads the lists below their top tiers. The flows
// it takes on each link are gathered into a per-link bucket (one array of
// segments, filled from the (link, entry) pairs recorded while taking
// flows; sizes from the links' unfrozen counts), sorted by old key, i.e. in
// list order. Water-filling freezes a saturated link's flows from its bucket
// in that order, which is the order the walk of the list did, so every sum
// is formed in the same order and the rates are the same to the bit. After
// the solve, a link's list is re-sorted from its bucket: only the entries
// whose rate changed move; the walk from the list's head down to the
// lowest of them drops them (met in bucket order) and the dead entries and
// copies the others with their keys unchanged, without reading any flow's
// state, then merges the moved entries back with their new keys (the same
// live entries in the same order as re-keying the whole prefix gives).
// Before this, the prefix walked reached down to the lowest re-solved flow
// (found by binary search) and every entry in it read its flow's state for
// its key: on the 512-GPU all-to-all 26,327 entries per re-solve, of which
// 11,700 were fillers at the head of the lists and most of the rest kept
// flows; now 15 entries per re-sorted list, 5 of them moved. Each list
// records how many leading entries are fillers (LinkList::head), so no walk
// steps over them. What is left is latency-bound (each link's state and
// list, each flow's state and terms are a memory access of their own): the
// narrow BFS requests a top tier's flows, then their terms, then their
// links before taking them, and the re-sort requests each link's list some
// links ahead, so that the accesses overlap (FlowSim does the same over
// the re-solved links and flows). 512-GPU all-to-all: 22.7-23.6 s -> 14.0-
// 14.6 s of CPU side by side (docs/contributing/validation/speed.md, "Re-sorting from the re-solved flows").
//
// Fewer bytes and branches per term (fifth step): each term's link also
// sits in an array of its own (term_links_, 4 bytes a term against 16 in
// terms_), and a flow whose coefficients are all 1 (the common case: a
// plain path) is re-solved reading only that array, since a * x with a = 1
// is x exactly. A flow of at most 8 terms has its links once more in 8
// slots at an address given by its id (link_slots_), so that the narrow
// BFS requests a tier's flows and their links together rather than the
// links after the flow's state arrives. Buckets are sorted when first
// needed: water-filling sorts the bucket of a link that saturates; the
// re-sort puts only the moved entries in list order (a few entries, often
// in order: insertion sort, std::sort for a long range in no order). The
// re-sort's walk down the list is branch-free (dead, moved or kept follows
// no pattern a predictor could learn). FlowSim keeps one completion slot
// per flow (core/indexed_event_queue.hpp) instead of leaving superseded
// predictions in its queue. 512-GPU all-to-all: 14.3-15.5 s -> 12.6-13.2 s
// of CPU side by side at load 4-5 (docs/contributing/validation/speed.md, "Fewer bytes per re-solved
// flow"); still above the 10 s target.
//
// Threads (seventh step): after a narrow re-solve, re-sorting the lists of
// the links whose flows moved is independent from list to list (each reads
// its bucket and the flows' rates and writes its own list). With
// set_threads(2) a second thread is woken to re-sort them in chunks of 32
// while the caller returns to its own work (FlowSim settles the re-solved
// links and flows and re-predicts their completions); the caller's next call
// that reads or changes the lists (an add, a removal, an activation, the
// next solve) first takes the chunks left and waits for the thread's last.
// Only re-solves that re-sort at least kParallelMinLinks lists are handed
// over (waking a thread costs microseconds). Which thread re-sorts a list
// changes nothing it computes: rates, lists and every later solve are the
// same to the bit (tested on random instances). 512-GPU all-to-all: 12.0-
// 12.5 s -> 10.0-10.8 s wall (median 10.2 s), 13-14 s of CPU, on the 2-core
// machine (docs/contributing/validation/speed.md, "A second thread re-sorts the lists").
//
// In place (eighth step): the narrow re-sort packs a list's kept entries
// at the front of its walked prefix in the list itself and merges the moved
// entries back from the prefix's end, where it copied the kept entries out,
// merged them into a third array and copied that back: two passes over the
// prefix instead of three, no scratch array of its size. 512-GPU
// all-to-all: 0.945x of the time on one thread, 0.97-0.98x on two (paired
// runs; docs/contributing/validation/speed.md, "The re-sort in place"). check_lists() verifies
// every list after each solve in the randomised tests.
//
// Links that carry one flow (ninth step, opt-in: set_fold_single): a link
// whose only active flow is f constrains nothing but f, and its constraint
// a_fl * r_f <= C_l is the cap r_f <= C_l / a_fl. So when a flow is
// activated, each of its links that no other active flow crosses is folded
// into the flow's cap: it gets no list entry, never joins a re-solve's BFS,
// heap or re-sort, and the flow's cap becomes min(K_f, min C_l / a_fl over
// its folded links). When a second flow arrives on a folded link (or its
// capacity changes) the link is unfolded first: the owner's entry joins
// the link's list with its current key and the link's load is set. That
// leaves the allocation as it was: the same problem, written as a link
// again. A folded link's load is not kept up to date as its flow's rate
// changes (link_load_bps computes it), and it is not listed in
// solved_links(). So FlowSim turns folding on only when nothing reads link
// counters (FlowSimOptions::link_counters). A flow keeps its unfolded terms
// first and FlowState::len counts them, so the hot loops are unchanged;
// resources() returns every term, the unfolded first. Rates equal those
// without folding up to the order in which equal levels freeze (a cap
// before a link at the same level), which can move the last bits of a sum.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/units.hpp"

namespace podnet::engine::flow {

using LinkId = uint32_t;
using FlowId = uint32_t;
inline constexpr uint32_t kInvalidId = std::numeric_limits<uint32_t>::max();
inline constexpr double kInf = std::numeric_limits<double>::infinity();
// "No cap".
inline constexpr Bandwidth kUnlimited{kInf};

// One term of a flow: it consumes coef * rate on `link`.
struct Resource {
  LinkId link = 0;
  double coef = 1.0;
};

struct SolveStats {
  uint32_t flows = 0;        // flows re-solved
  uint32_t links = 0;        // links re-solved by water-filling
  uint32_t bottlenecks = 0;  // freezing steps (saturated links + caps)
  uint32_t fast_links = 0;   // links updated by a shortcut, not re-solved
  uint32_t fast_flows = 0;   // arrivals placed by the arrival shortcut
  uint32_t narrow = 0;       // 1 when the re-solve used the narrow rule (and its check held)
  uint32_t retries = 0;      // narrow re-solves whose check failed (redone by the threshold rule)
  uint32_t reordered = 0;    // re-solved links whose list was re-sorted (a flow on it changed rate, or arrived)
};

class MaxMinSolver {
 public:
  MaxMinSolver();
  ~MaxMinSolver();
  MaxMinSolver(const MaxMinSolver&) = delete;
  MaxMinSolver& operator=(const MaxMinSolver&) = delete;

  // ---- threads ----
  // threads = 2: after a narrow re-solve that re-sorts at least min_links
  // lists, a second thread re-sorts them beside the caller (see "Threads"
  // in the file comment); 1 (the default): all on the caller's thread.
  // Results are the same to the bit either way.
  static constexpr uint32_t kParallelMinLinks = 256;
  void set_threads(int threads, uint32_t min_links = kParallelMinLinks);
  // Re-sorts handed to the second thread so far (for tests and benches).
  uint64_t parallel_reorders() const { return parallel_reorders_; }
  // For tests, after a solve: checks every link's sorted list (keys in
  // order, dead entries included, as the binary searches need; each live
  // entry keyed by its flow's current r/w and naming a term of that flow on
  // this link; the dead and live counts) in O(entries). Returns what is
  // wrong, or "" when nothing is.
  std::string check_lists();
  // Folds links that carry one flow into that flow's cap (see "Links that
  // carry one flow" above). Call before the first add_flow.
  void set_fold_single(bool on);
  // Links folded now (for tests).
  uint32_t folded_links() const { return folded_count_; }

  // ---- links ----
  LinkId add_link(Bandwidth capacity);
  // Room for n links in all, so that adding them moves nothing (no effect on results).
  void reserve_links(uint32_t n);
  // Takes effect at the next solve (the link's component is re-solved).
  void set_capacity(LinkId link, Bandwidth capacity);
  Bandwidth capacity(LinkId link) const { return Bandwidth(links_[link].cap); }
  uint32_t link_count() const { return static_cast<uint32_t>(links_.size()); }
  // Sum of coef * rate over the link's active flows, as of the last solve.
  double link_load_bps(LinkId link) const {
    return fold_ && fold_owner_[link] != kInvalidId ? folded_load(link) : loads_[link];
  }
  // Active flows crossing the link (each once: repeats are merged).
  uint32_t link_flow_count(LinkId link) const { return live_[link]; }

  // ---- flows ----
  // Throws podnet::Error on a weight <= 0, a negative cap, a coefficient <= 0
  // or an unknown link. An inactive flow is stored but does not compete (rate 0)
  // until set_active(f, true).
  FlowId add_flow(std::span<const Resource> resources, double weight = 1.0, Bandwidth cap = kUnlimited,
                  bool active = true);
  // Frees the id (it may be returned by a later add_flow).
  void remove_flow(FlowId f);
  void set_active(FlowId f, bool active);
  void set_weight(FlowId f, double weight);
  void set_cap(FlowId f, Bandwidth cap);

  bool alive(FlowId f) const { return f < flows_.size() && flows_[f].alive; }
  bool active(FlowId f) const { return alive(f) && flows_[f].active; }
  double weight(FlowId f) const { return flows_[f].weight; }
  Bandwidth cap(FlowId f) const { return Bandwidth(user_cap_[f]); }  // as set (FlowState::cap adds folded links)
  // Valid until the next add_flow (the pool may move).
  std::span<const Resource> resources(FlowId f) const;
  // Live flows, and one past the largest id ever handed out.
  uint32_t flow_count() const { return live_flows_; }
  uint32_t flow_id_bound() const { return static_cast<uint32_t>(flows_.size()); }

  // ---- solving ----
  // Re-solves the components touched since the last solve. No-op when clean.
  void solve();
  // Re-solves every component.
  void solve_all();
  bool dirty() const {
    return !seed_links_.empty() || !seed_flows_.empty() || !soft_links_.empty() || !arrivals_.empty();
  }

  // Rate in bits/s as of the last solve (0 for an inactive flow or one
  // activated since).
  double rate_bps(FlowId f) const { return flows_[f].rate; }
  Bandwidth rate(FlowId f) const { return Bandwidth(flows_[f].rate); }

  // What the last solve recomputed or placed by a shortcut (rates of other
  // flows and loads of other links did not change). Valid until the next solve.
  std::span<const FlowId> solved_flows() const { return comp_flows_; }
  std::span<const LinkId> solved_links() const { return comp_links_; }
  const SolveStats& last_stats() const { return stats_; }

 private:
  static constexpr uint32_t kDeadUse = std::numeric_limits<uint32_t>::max();
  struct Use {    // one entry of a link's list: flow f's k-th term
    double rho;   // sorted lists: the flow's r/w when the entry was placed (the sort key)
    FlowId flow;  // with rho, the sort key: (rho descending, flow ascending)
    uint32_t k;   // kDead: a removed entry or a filler, skipped
  };
  struct LinkState {  // hot fields of water-filling (40 bytes)
    double cap = 0;
    double used = 0;  // scratch: capacity taken by frozen flows
    double wsum = 0;  // scratch: sum of coef * w over unfrozen flows
    uint32_t unfrozen = 0;
    uint32_t mark = 0;  // == epoch_ when in the current component
    uint32_t slot = 0;  // scratch: its index in comp_links_ (when marked)
  };
  struct FlowState {
    double weight = 1;
    double cap = kInf;
    double rate = 0;
    double prev = 0;   // scratch: the rate before the current re-solve
    uint32_t off = 0;  // terms_[off, off + len)
    uint32_t len = 0;
    uint32_t mark = 0;  // == epoch_ when in the current component
    bool alive = false;
    bool active = false;
    bool frozen = false;
    bool seeded = false;    // in seed_flows_
    bool arriving = false;  // activated since the last solve, in arrivals_
    bool fresh = false;     // failed the arrival shortcut, not solved yet
    bool pend = false;      // its terms sit in pending_ (activated since the last solve)
    bool unit = false;      // every coefficient is 1: the hot loops read term_links_ only
  };
  // A re-sort's scratch arrays: the caller's own, and the second thread's.
  struct Scratch {
    std::vector<Use> sort, moved, merge;
  };
  struct HeapItem {
    double level;  // a lower bound of the link's current level (exact when popped)
    LinkId link;
  };

  FlowState& checked(FlowId f, const char* what);
  // Folding (see "Links that carry one flow"): the load of folded link l;
  // unfolds l (its owner's term joins the list or the pending list);
  // recomputes a flow's folded cap.
  double folded_load(LinkId l) const;
  void unfold(LinkId l);
  void refold_cap(FlowId f);
  void swap_terms(FlowId f, uint32_t i, uint32_t j);
  // Copies flow f's unfolded links into its slots when they fit (links_of).
  void fill_slots(FlowId f);
  void link_in(FlowId f);   // insert f's terms into link lists
  void link_out(FlowId f);  // remove f's terms from link lists
  void seed_links_of(FlowId f);
  void seed_link(LinkId l, double theta, uint8_t why);
  void seed_flow(FlowId f);
  void soft_seed_links_of(FlowId f);
  void settle_departures();
  void settle_arrivals();
  void maybe_compact();
  double change_threshold();
  double saturation_level(LinkId l);
  void collect_component(double theta, bool narrow);
  // Returns false when the narrow re-solve's check fails (see the header).
  bool water_fill(bool check);
  void freeze(FlowId f, double rate);
  double level_of(LinkId l, double floor_level);
  void next_epoch();
  void remove_sorted(LinkId l, FlowId f, uint32_t k, double rho);
  void reorder(LinkId l, uint32_t prefix_end);
  void write_prefix(LinkId l, uint32_t prefix_end, uint32_t dead_before, Scratch& x);
  void close_prefix(LinkId l, uint32_t prefix_end, uint32_t next_live, uint32_t fill, uint32_t dead_before);
  void reorder_moved(LinkId l, Scratch& x);
  // Re-sorts reorder_links_[begin, end) (narrow re-solve), requesting lists ahead.
  void reorder_range(uint32_t begin, uint32_t end, Scratch& x);
  // Requests the first `lines` cache lines of link l's live list entries (from its head): a walk some links
  // behind then finds them loaded.
  [[gnu::always_inline]] void request_entries(LinkId l, int lines) const {
    const Use* u = lists_[l].uses.data() + lists_[l].head;
    for (int c = 0; c < lines; ++c) __builtin_prefetch(u + 4 * c);
  }
  // Takes chunks of reorder_links_ until none is left (either thread).
  void reorder_chunks(Scratch& x);
  // Waits for (and helps with) the re-sort handed to the second thread, if
  // any; every call that reads or changes the lists calls it first.
  void finish_reorder() {
    if (reorder_posted_) join_reorder();
  }
  void join_reorder();
  void start_worker();
  void stop_worker();  // precondition: no re-sort in flight (finish_reorder first)
  void build_buckets();
  void sort_bucket(uint32_t slot);
  void compact_link(LinkId l);
  // Calls fn(use) for every active flow on link l.
  template <class F>
  void for_each_live(LinkId l, F&& fn) const {
    for (const Use& u : lists_[l].uses)
      if (u.k != kDeadUse) fn(u);
    for (const Use& u : pending_[l]) fn(u);
  }
  // Calls fn(use) for every flow on link l that the current solve re-solves
  // (among others: it visits the walked prefix and the pending flows).
  template <class F>
  void for_each_solved(LinkId l, F&& fn) {
    if (bucketed_) {  // narrow re-solve: exactly its re-solved flows, in list order
      const uint32_t s = links_[l].slot;
      sort_bucket(s);
      for (uint32_t j = bucket_at_[s]; j < bucket_at_[s + 1]; ++j) fn(bucket_[j]);
      return;
    }
    const std::vector<Use>& list = lists_[l].uses;
    for (uint32_t j = 0; j < prefix_[l]; ++j)
      if (list[j].k != kDeadUse) fn(list[j]);
    for (const Use& u : pending_[l]) fn(u);
  }

  std::vector<LinkState> links_;
  std::vector<double> loads_;         // per link: sum of coef * rate as of the last solve
  std::vector<uint8_t> link_seeded_;  // per link: kHard (in seed_links_), kSoft (in soft_links_ only) or 0
  std::vector<double> seed_theta_;    // per hard link: level below which its change is invisible
  std::vector<uint8_t> seed_why_;     // per hard link: kWhyCapacity | kWhyArrival
  std::vector<double> soft_rho_;      // per soft link: min r/w of the flows that left it
  std::vector<double> gone_load_;     // per link: sum of coef * r of the flows that left it since the last solve
  std::vector<LinkId> gone_links_;    // links with gone_load_ > 0 (or that lost a flow)
  std::vector<uint8_t> gone_listed_;  // per link: in gone_links_
  std::vector<uint32_t> merge_seen_;  // per link: == merge_stamp_ when seen by the add_flow in progress
  std::vector<uint32_t> merge_at_;    // per link: its term's index in terms_ during that add_flow
  uint32_t merge_stamp_ = 0;
  // Per link: == epoch_ when a flow on it got a new rate in the current
  // solve (its list must be re-sorted).
  std::vector<uint32_t> link_moved_;
  // Per link, its active flows: lists_[l].uses sorted by (r/w descending,
  // flow id ascending) as of the last solve, with dead entries (removed
  // flows, and fillers with rho = +inf at the front) skipped; pending_
  // holds, unsorted, the flows activated since the last solve. A re-solve
  // above a threshold level walks only the prefix of the list at or above
  // it (see "Partial re-solve" in the file comment) and re-sorts only that
  // prefix afterwards; a narrow re-solve moves only its flows whose rate
  // changed (see "Performance").
  struct alignas(32) LinkList {  // one half cache line per link
    std::vector<Use> uses;
    uint32_t head = 0;  // the entries before it are all dead (fillers)
    uint32_t dead = 0;  // dead entries in uses
  };
  std::vector<LinkList> lists_;  // per link
  std::vector<std::vector<Use>> pending_;
  // Narrow re-solve: the re-solved flows of each re-solved link, in the
  // order of its list (old key), as one array of per-link segments: link l's
  // are bucket_[bucket_at_[s], bucket_at_[s + 1]), s = links_[l].slot, its
  // index in comp_links_. Water-filling and re-sorting use them instead
  // of walking the list down to its lowest re-solved flow.
  bool bucketed_ = false;
  std::vector<uint32_t> bucket_at_;
  std::vector<Use> bucket_;
  std::vector<uint8_t> bucket_sorted_;  // per segment: sorted yet (sort_bucket)
  std::vector<uint32_t> live_;          // per link: live entries in lists_[l].uses and pending_
  std::vector<uint32_t> prefix_;        // per link, scratch: end of the prefix the current solve walked
  std::vector<double> taken_load_;     // per link, scratch of a narrow re-solve: coef * old rate of its re-solved flows
  std::vector<double> pend_max_;       // per link: max r/w among pending_ flows placed by the arrival shortcut
  std::vector<LinkId> narrow_seeds_;   // the seeds of a narrow re-solve, kept for its fallback
  std::vector<LinkId> pending_links_;  // links whose pending_ is not empty
  Scratch scratch_;
  std::vector<uint32_t> bucket_fill_;
  struct TakenTerm {  // a narrow re-solve's flow-link term, as taken: bucket slot and entry
    uint32_t slot;
    Use use;
  };
  std::vector<TakenTerm> taken_terms_;
  double keep_below_ = 0;  // of the current solve
  std::vector<FlowState> flows_;
  std::vector<Resource> terms_;  // pooled terms of all flows
  // Parallel to terms_: the terms' links alone (4 bytes a term instead of
  // 16), which is all a flow with unit coefficients needs read while
  // re-solving (x * 1.0 is x exactly).
  std::vector<LinkId> term_links_;
  // Per flow id, kSlots slots: the links of a flow with at most kSlots
  // terms again, at an address known from its id alone, so that the narrow
  // BFS requests a flow's state and its links at once instead of one after
  // the other (its terms' offset is in its state).
  static constexpr uint32_t kSlots = 8;
  std::vector<LinkId> link_slots_;
  // Threads: the lists a narrow re-solve re-sorts, taken in chunks by both
  // threads; the second thread and its state live in the .cpp.
  struct Worker;
  std::unique_ptr<Worker> worker_;
  uint32_t parallel_min_links_ = kParallelMinLinks;
  int threads_ = 1;
  bool reorder_posted_ = false;
  uint64_t parallel_reorders_ = 0;
  std::vector<LinkId> reorder_links_;
  const LinkId* links_of(FlowId f, const FlowState& s) const {
    return s.len <= kSlots ? link_slots_.data() + static_cast<size_t>(f) * kSlots : term_links_.data() + s.off;
  }
  // Coefficient of flow s's k-th term.
  double coef(const FlowState& s, uint32_t k) const { return s.unit ? 1.0 : terms_[s.off + k].coef; }
  std::vector<uint32_t> pos_;  // parallel to terms_: index of the term's entry in pending_[link] (when pend)
  // Folding (set_fold_single). Per flow: every term (FlowState::len counts
  // the unfolded ones while the flow is active), its cap as set, and the
  // least C_l / a_fl over its folded links with how many links reach it.
  // Per link: the flow folded into it (kInvalidId: none) and that term's
  // index among the flow's terms.
  bool fold_ = false;
  uint32_t folded_count_ = 0;
  std::vector<uint32_t> all_len_;
  std::vector<double> user_cap_;
  std::vector<double> fold_min_;
  std::vector<uint32_t> fold_cnt_;
  std::vector<FlowId> fold_owner_;
  std::vector<uint32_t> fold_k_;
  std::vector<FlowId> free_ids_;
  uint32_t live_flows_ = 0;
  size_t garbage_terms_ = 0;

  std::vector<LinkId> seed_links_;
  std::vector<FlowId> seed_flows_;  // flows with no terms whose rate must be recomputed
  std::vector<LinkId> soft_links_;  // links that only lost flows since the last solve
  std::vector<FlowId> arrivals_;    // flows activated since the last solve

  // scratch, reused across solves
  std::vector<FlowId> comp_flows_;
  std::vector<LinkId> comp_links_;
  std::vector<LinkId> fast_links_;
  std::vector<FlowId> fast_flows_;
  std::vector<HeapItem> heap_;
  std::vector<std::pair<double, FlowId>> capped_;
  std::vector<std::pair<double, double>> breakpoints_;
  uint32_t epoch_ = 0;
  uint32_t unfrozen_flows_ = 0;  // flows of the current solve not yet frozen
  SolveStats stats_;
};

}  // namespace podnet::engine::flow
