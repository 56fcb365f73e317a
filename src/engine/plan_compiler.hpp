// Turns the transfers of a TransferPlan into what engines simulate: per flow
// the directed links it loads (with coefficients), its payload bytes and the
// latency it pays first. Shared by the analytical and flow engines so that
// they differ only in how bandwidth is shared (backend.hpp states the model).
#pragma once

#include <algorithm>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/options.hpp"
#include "plan/transfer_plan.hpp"
#include "routing/router.hpp"

namespace podnet::engine {

struct CompiledFlow {
  // Directed link, coefficient; merged (each link once); sorted by link unless the compiler was told
  // set_sorted_parts(false), when a Ring / Coupled flow's links come in the order its hops first cross them.
  std::vector<routing::PathPart> parts;
  Bytes bytes = 0;            // payload bytes at the flow's rate (per hop for coupled ones)
  Time latency;               // paid before the bytes move
  int32_t transfer = 0;       // index in the plan
  double route_weight = 1.0;  // what to Router::release() when the flow ends
};

// A compiled flow whose routes the route cache may share with other transfers (no copy of its parts): the
// analytical engine's, which reads a set's flows once.
struct SharedFlow {
  std::shared_ptr<const std::vector<CompiledFlow>> routes;
  uint32_t k = 0;        // this flow's index in routes
  Bytes bytes = 0;       // this transfer's bytes on it
  int32_t transfer = 0;  // index in the plan
  const CompiledFlow& route() const { return (*routes)[k]; }
};

class PlanCompiler {
 public:
  PlanCompiler(const topology::Topology& topo, routing::Router& router, const Transport& transport,
               const LinkClassOptions& links = {});
  ~PlanCompiler();  // defined where Worker is complete
  // Appends the flows of transfer `index` (one per QP for P2p, one coupled
  // variable for Ring/Coupled). Adaptive routing sees the loads of the flows
  // compiled (and not released) so far.
  void compile(const plan::TransferPlan& plan, int32_t index, std::vector<CompiledFlow>& out);
  // The same flows, sharing the route cache's parts instead of copying them.
  void compile_shared(const plan::TransferPlan& plan, int32_t index, std::vector<SharedFlow>& out);
  // Payload capacity of a directed link: raw x payload_factor (link_classes.hpp).
  double payload_capacity_bps(routing::DirLink d) const;
  // Payload bits per raw bit of link l: class efficiency x header efficiency where a transport applies.
  double payload_factor(topology::LinkId l) const { return factor_[static_cast<size_t>(l)]; }
  // Whether link l carries the transport's packets (Ethernet/InfiniBand: header bytes on the wire).
  bool carries_transport(topology::LinkId l) const { return transport_link_[static_cast<size_t>(l)] != 0; }
  // Class efficiency of link l alone (the raw rate a packet engine serializes at is raw x this).
  double class_efficiency(topology::LinkId l) const { return class_eff_[static_cast<size_t>(l)]; }
  // Latency of one hop whose route is `parts` (fractions weight a sprayed route).
  Time hop_latency(std::span<const routing::PathPart> parts) const;
  // After kBypassAfter misses in a row (a plan of distinct transfers, such as a large all-to-all: the lookups
  // and insertions cost more than they save), only every kProbeEvery-th transfer is looked up until one hits.
  static constexpr uint32_t kBypassAfter = 16384, kProbeEvery = 64;
  // The route cache's lookups and hits so far (tests, benches).
  uint64_t cache_lookups() const { return lookups_; }
  uint64_t cache_hits() const { return hits_; }
  uint64_t cache_evictions() const { return evictions_; }
  size_t cache_bytes() const { return cached_bytes_; }
  // The route cache's entry the last compile() took its flows from or put them in (1, 2, ... never reused),
  // 0 when it went around the cache: two transfers with the same entry have the same flows but for their
  // bytes and index.
  uint64_t last_entry() const { return last_entry_; }
  // Whether a Ring / Coupled flow's parts are sorted by link (the default). An engine that only sums and
  // maximises over a flow's links, each link's terms taken in flow order, gets the same results either way
  // and may skip the sort: a coupled PAT step at 1,048,576 GPUs crosses 65,536 links, and sorting them took
  // a sixth of the analytical engine's time there.
  void set_sorted_parts(bool sorted) { sort_parts_ = sorted; }
  // Links left out of the compiled flows' parts: one byte a directed link, non-zero to leave it out (nullptr,
  // the default: none). For an engine whose results are the same without them: each such link carries the
  // same flows with the same coefficients as another of no more capacity (series links,
  // flow/flow_backend.hpp), and the engine only sums a link's coefficients and maximises over a flow's links.
  // A hop's latency still counts every link. Not while the router tracks load: release() must see every link
  // a route added load to. The vector must outlive the compiler's use of it.
  void set_left_out(const std::vector<uint8_t>* left_out) { left_out_ = left_out; }
  // Tests: a smaller bound for the cache (bytes).
  void set_cache_limit(size_t bytes) { cache_limit_ = bytes; }
  // Compiles the routes of the transfers `upcoming` (plan indices, in the order compile() will be asked for
  // them) that the route cache lacks, on `workers` threads, and keeps them in the cache in that order, so that
  // the compile() calls that follow find them there. The calling thread is one of the workers; each other
  // worker routes with a Router of its own, built over the same fabric with the same options (kept between
  // calls, so what it learns is learnt once). A route depends only on its ends, key and link state, so the
  // routes are those compile() would make, whatever the number of workers. Does nothing with workers < 2,
  // while the router tracks load, or once a link has changed state (epoch != 0). A transfer a worker cannot
  // route is left out: compile() then meets the same error itself. Returns the transfers compiled.
  size_t prefetch(const plan::TransferPlan& plan, const std::vector<int32_t>& upcoming, int workers);
  // What one transfer's routes cost the cache: its key and edges (prefetch windows stay well within the bound).
  static size_t transfer_weight(const plan::Transfer& t) { return t.ranks.size() + t.edges.size() + 1; }

 private:
  // The route cache's key of transfer t (what decides its routes) into key_.
  void make_key(const plan::Transfer& t);
  // Lists of more than kInlineList elements enter a key as a number: the same number for the same content,
  // found from the list's buffer (core/shared_vector.hpp: a plan's repeats share one) and, for a buffer not
  // met before, from its content, read once. A key then costs a few words instead of the list (a
  // 1,048,576-GPU plan's PAT steps: 8,192 edges, 64 KiB apiece, copied and hashed at every lookup). Exact:
  // equal numbers mean equal contents. The table holds a copy of each list, so no buffer it names is freed
  // and its address reused while the compiler lives; a list changed in the plan gets a buffer of its own.
  static constexpr size_t kInlineList = 32;
  template <class T>
  struct Interned {
    std::unordered_map<const void*, uint64_t> by_buffer;
    std::unordered_multimap<uint64_t, uint64_t> by_content;  // content hash -> number (its list: held[number - 1])
    std::vector<SharedVector<T>> held;                       // the first list of each number
    std::vector<SharedVector<T>> also;                       // later buffers of a content already numbered
  };
  template <class T>
  void put_list(const SharedVector<T>& v, Interned<T>& table);
  Interned<int32_t> interned_ranks_;
  Interned<std::pair<int32_t, int32_t>> interned_edges_;
  // Keeps flows under key_ (evicting the oldest entries past the bound); sets last_entry_.
  void keep(std::shared_ptr<const std::vector<CompiledFlow>> flows);
  // Routes of transfer t compiled afresh (no cache).
  std::shared_ptr<std::vector<CompiledFlow>> fresh(const plan::Transfer& t, int32_t index);
  // prefetch()'s other workers: a Router and a PlanCompiler each.
  struct Worker;
  std::vector<std::unique_ptr<Worker>> workers_;
  // Adds the routes of the hops src -> dst (requests_, each over qps QPs: qps requests in a row) to
  // coef_/touched_, hop by hop and QP by QP; each hop's mean latency to *latency_sum if given.
  void add_hops(int32_t qps, double* latency_sum);
  std::vector<routing::Router::Request> requests_;
  std::vector<routing::PathPart> routes_;
  std::vector<size_t> route_at_;
  void compile_routes(const plan::Transfer& t, int32_t index, std::vector<CompiledFlow>& out);
  // Transfer index's flows: the route cache's entry (a hit, or a miss it keeps) or compiled for this call
  // alone; their transfer index and bytes are those of the transfer that compiled them.
  std::shared_ptr<const std::vector<CompiledFlow>> routes_of(const plan::TransferPlan& plan, int32_t index);
  // Routes already compiled, by what decides them (kind, ranks (not a Coupled's) or edges in order, QPs, channel, open,
  // latency steps; not the bytes): a plan repeats the same collective on the same group many times. Used only while the
  // router does not track load (a route is then a function of its ends and key) and its link state has not changed
  // (epoch); bounded to kMaxCachedBytes of keys and path parts in all, the oldest entries leaving first when it is
  // full. 256 MB holds the 14,336 distinct PAT steps (about 130 MiB) of a 16,384-GPU iteration whose 128-GPU DP groups
  // run PAT (docs/contributing/validation/speed.md, "The route cache holds a training plan's PAT steps"); at 98,304
  // GPUs the distinct steps take about 850 MB, but a stage's gradient buckets repeat the same steps one after another,
  // so the newest 256 MB hold what comes next. Past 262,144 GPUs the bound grows with the fabric, kCachedBytesPerGpu a
  // GPU (1 GiB at 1,048,576): there one stage's DP groups' PAT steps take about 340 MB, and a bound below that made
  // every bucket route them afresh.
  static constexpr size_t kMaxCachedBytes = size_t{256} << 20;
  static constexpr size_t kCachedBytesPerGpu = 1024;
  static size_t cache_limit_for(size_t gpus) { return std::max(kMaxCachedBytes, kCachedBytesPerGpu * gpus); }
  size_t cache_limit_ = kMaxCachedBytes;
  bool sort_parts_ = true;
  const std::vector<uint8_t>* left_out_ = nullptr;
  uint32_t miss_run_ = 0;  // misses in a row, then (from kBypassAfter) transfers since
  uint64_t lookups_ = 0, hits_ = 0, evictions_ = 0;
  struct Entry {
    uint64_t serial;  // 1, 2, ... in the order entries were made (never reused)
    std::shared_ptr<const std::vector<CompiledFlow>> flows;
  };
  std::unordered_map<std::string, Entry> cache_;
  uint64_t entries_ = 0, last_entry_ = 0;
  std::deque<std::pair<const std::string*, size_t>> order_;  // the cache's keys in insertion order, their bytes
  uint64_t cache_epoch_ = 0;
  size_t cached_bytes_ = 0;
  std::string key_;
  const topology::Topology& topo_;
  routing::Router& router_;
  Transport transport_;
  LinkClassOptions links_;
  std::vector<double> factor_, class_eff_;  // by link
  std::vector<Time> class_latency_;         // by link
  std::vector<uint8_t> transport_link_;     // by link
  std::vector<double> coef_;                // scratch, by directed link
  // hop_latency's terms by directed link, read once per link: the link's latency (its own and its class's), the
  // switch latency where it enters a switch, and whether it leaves or enters a NIC.
  struct HopTerms {
    double link_ps = 0, switch_ps = 0;
    bool nic = false;
  };
  std::vector<HopTerms> hop_terms_;
  std::vector<routing::DirLink> touched_, scratch_;
  static void sort_links(std::vector<routing::DirLink>& v, std::vector<routing::DirLink>& scratch);
};

}  // namespace podnet::engine
