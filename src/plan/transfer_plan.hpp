// TransferPlan: the only thing collectives and engines share (the `plan`
// layer: below both, so neither sees the other).
//
// A plan is a DAG of transfers between GPU ranks (global GPU ids of the
// topology). A transfer starts when all its dependencies have completed.
//
// Four kinds of transfer:
// - P2p: `bytes` from ranks[0] to ranks[1] (one flow; `qps` parallel QPs
//   split it, each QP a distinct UDP source port for ECMP entropy).
// - Ring: a pipelined ring over `ranks` (in ring order, closing back to
//   ranks[0]): every rank sends `bytes` to its successor, chunk by chunk, and
//   a rank can forward only what it has received, so all hops move at the
//   pace of the slowest hop. Engines model it as coupled flows: one rate for
//   every hop of the ring. `latency_steps` is the number of sequential
//   per-hop latencies the algorithm pays (2(n-1) for a ring all-reduce).
//   A Ring with `open` = true is a chain (no hop from the last rank back to
//   the first), used for pipelined broadcast/reduce.
// - Coupled: a pipelined graph given by an explicit edge list `edges` of
//   (src, dst) rank pairs: every edge carries `bytes`, and as in a Ring all
//   edges move at one rate (the slowest edge's pace), because data flows
//   through the graph chunk by chunk. Used for pipelined trees (a tree
//   all-reduce is every child->parent edge plus every parent->child edge).
//   `ranks` lists the participating ranks (sorted; informational, engines
//   use `edges`); `latency_steps` as for a Ring (2*ceil(log2 n) for a tree
//   all-reduce).
// - Compute: no network traffic; `duration` of work done in lockstep by every
//   rank in `ranks` (a stage's forward/backward pass on all its GPUs, an
//   optimizer step), so a straggler among them slows it. Lets a training iteration be
//   one plan: compute and communication ops in one DAG, timed by any engine.
//   A Compute is also how a plan states a pure delay that is no traffic: a
//   collective's software latency (NCCL's base + per-step latency of the
//   chosen algorithm and protocol, labelled "latency/<algo>/<proto>"), on
//   which the collective's first transfers depend.
// A protocol (NCCL's LL, LL128, Simple) is not a field engines read: the
// collective layer inflates the bytes of the transfers it makes by the
// protocol's efficiency (LL sends 8 B per 4 B of data, and NCCL's model
// caps its rate further; collective.hpp) and adds the
// latency delay above, so every engine times it unchanged. That delay is
// NCCL's whole latency term (every step, the wire included), so the data
// transfers of such a plan have latency_steps = 0: engines add no per-hop
// latency of their own (the packet engine's packets still take their
// physical propagation and switch time).
// Bytes are payload bytes; engines add wire overhead.
// A rate limit outside the links (max_rate_bps > 0, P2p / Ring / Coupled):
// the transfer moves at most that many payload bits per second, a P2p in
// total over its QPs, a Ring or Coupled on each hop or edge, whatever its
// links leave free; what it does not use stays for the transfers sharing its
// links. The collective layer sets it where NCCL's p2p channels, not a link,
// bound the rate (collective/pairwise.hpp). Engines: the analytical one
// takes the longer of its link-sharing time and bytes / limit; the flow
// engine caps the flow's max-min rate; the packet engine paces the QPs.
//
// Pipeline (Ring and Coupled only): how NCCL moves the transfer, slice by
// slice through a bounded buffer per connection (NVIDIA/nccl
// src/device/prims_simple.h: a sender waits while it is NCCL_STEPS steps
// ahead of its receiver). `slices` = 0 (the default) leaves the transfer
// as described above. With slices = U > 0, every hop (edge) cuts its
// `bytes` into U equal slices (the first bytes % U one byte larger) sent in
// order, and
//   - window: a hop may have released at most `window` slices that its
//     receiver has not yet consumed (NCCL's buffer slots, in slices);
//     window > lag, else a closed ring waits for itself;
//   - a slice is a forwarded one or the source's own: slice u of hop h
//     forwards slice u - lag of every upstream hop, which must have been
//     delivered before it is released; with period P > 0 the slices with
//     (u mod P) < lag are the source's own data (a ring rank starting a
//     loop with its own chunk), with P = 0 every slice is forwarded;
//   - upstream hops: a Ring's hop k (ranks[k] -> ranks[k+1]) has hop k-1
//     (the closing hop for k = 0; none for the first hop of an open chain);
//     a Coupled edge a -> b has every edge x -> a with x != b, and b -> a
//     if it is listed before a -> b (a tree all-reduce lists its reduce
//     edges first: a reduce edge waits for the children, a broadcast edge
//     for the parent, and the root's for every child);
//   - a receiver consumes slice u when every hop forwarding it has released
//     the slice that forwards it (then its slot is free again), or on
//     delivery when nothing forwards it.
// The collective sets it (nccl/pipeline.hpp derives NCCL's slice, chunk and
// window per protocol); engines that model a pipelined transfer as one
// coupled rate (analytical, flow) may ignore it, the packet engine runs it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/shared_vector.hpp"
#include "core/units.hpp"

namespace podnet::plan {

enum class TransferKind : uint8_t { P2p, Ring, Coupled, Compute };

// NCCL's slice pipeline of a Ring / Coupled transfer (see above); slices = 0: none.
struct Pipeline {
  int64_t slices = 0;  // U: slices per hop
  int32_t window = 0;  // slices a hop may have released and its receiver not yet consumed (>= 1)
  int32_t lag = 0;     // slice u forwards slice u - lag of the upstream hops
  int64_t period = 0;  // slices per loop: (u mod period) < lag are the source's own (0: every slice forwards)
  bool operator==(const Pipeline&) const = default;
};

struct Transfer {
  TransferKind kind = TransferKind::P2p;
  // ranks and edges are shared by the copies of a transfer until one is changed (a plan repeats the same lists
  // for every microbatch and gradient bucket; core/shared_vector.hpp).
  SharedVector<int32_t> ranks;  // P2p: {src, dst}; Ring: ring order; Coupled: participants
  Bytes bytes = 0;              // P2p: total; Ring: bytes each hop carries; Coupled: each edge
  int32_t latency_steps = 1;    // sequential per-hop latencies paid (0: none; the plan's leading delay holds them)
  int32_t qps = 1;              // QPs per connection (ECMP entropy)
  int32_t channel = 0;          // NCCL channel (for reporting)
  bool open = false;            // Ring only: a chain, no closing hop
  double max_rate_bps = 0;      // > 0: payload bits/s it moves at most (P2p: over its QPs; else per hop), above
  SharedVector<std::pair<int32_t, int32_t>> edges;  // Coupled only: (src, dst) edges, each carrying `bytes`
  // Coupled only: the edges are `lanes` groups of equal size, group k the sends of NCCL channel channel + k (its
  // QPs' ECMP entropy). One transfer then moves a step of several channels at one rate (collective/pat.hpp,
  // Options::coupled_steps). 1: every edge is channel's. Not with a pipeline (check_pipelines).
  int32_t lanes = 1;
  Time duration;  // Compute only: how long the work takes
  // Compute only: the delay holds the per-hop latency of the transfers after it that pay none of their
  // own (latency_steps = 0; NCCL's latency term, collective.hpp). An engine whose packets take their hops
  // physically shortens it by the part of those hops that shows (packet_backend.hpp), not to count them twice.
  bool holds_hop_latency = false;
  Pipeline pipeline;          // Ring / Coupled: NCCL's slice pipeline (slices = 0: none)
  std::vector<int32_t> deps;  // indices of transfers that must complete first
  std::string label;          // e.g. "rs/nvlink", "ar/rail3"

  // The NCCL channel of hop h (a Ring's h-th hop, a Coupled's h-th edge): channel, or its lane's for a Coupled
  // of several lanes.
  int32_t hop_channel(size_t h) const {
    if (lanes <= 1 || edges.empty()) return channel;
    return channel + static_cast<int32_t>(h / (edges.size() / static_cast<size_t>(lanes)));
  }
};

struct TransferPlan {
  std::string op;         // "allreduce", "allgather", ...
  std::string algorithm;  // "ring", "tree", ...
  std::string protocol;   // "ll", "ll128", "simple" (NCCL algorithms), "" otherwise; informational
  int32_t channels = 0;   // channels the algorithm ran on; informational
  Bytes bytes = 0;        // the collective's size S (nccl-tests' definition for the op)
  int32_t ranks = 0;      // n
  std::vector<Transfer> transfers;

  int32_t add(Transfer t) {
    transfers.push_back(std::move(t));
    return static_cast<int32_t>(transfers.size() - 1);
  }
};

// The rate limit (bits/s) of the part of transfer t (t.max_rate_bps > 0) that carries `bytes`: a P2p's limit
// holds for its QPs together, so a QP gets its share of the bytes' share; a Ring's or Coupled's holds for each
// hop or edge whole.
inline double part_rate_cap_bps(const Transfer& t, Bytes bytes) {
  if (t.kind == TransferKind::P2p && t.bytes > 0)
    return t.max_rate_bps * static_cast<double>(bytes) / static_cast<double>(t.bytes);
  return t.max_rate_bps;
}

// What a plan weighs in an engine's memory (scenario/estimate.hpp): its point-to-point transfers, and the hops of
// its grouped ones (a Ring's ranks, a Coupled's edges), a list that copies share counted once; compute transfers
// weigh nothing there.
struct PlanWeight {
  int64_t flows = 0;
  int64_t hops = 0;
  void add(const Transfer& t) {
    switch (t.kind) {
      case TransferKind::P2p: flows += 1; break;
      case TransferKind::Ring: add_hops(t.ranks.storage(), t.ranks.size()); break;
      case TransferKind::Coupled: add_hops(t.edges.storage(), t.edges.size()); break;
      case TransferKind::Compute: break;
    }
  }
  std::unordered_set<const void*> seen;  // the lists counted (add)

 private:
  void add_hops(const void* list, size_t n) {
    if (n > 0 && seen.insert(list).second) hops += static_cast<int64_t>(n);
  }
};
inline PlanWeight weight_of(const TransferPlan& plan) {
  PlanWeight w;
  for (const auto& t : plan.transfers) w.add(t);
  return w;
}

// Transfer indices in an order where every dependency comes before its
// dependents (Kahn's algorithm, ties by index). Throws Error on a cycle or a
// dependency index out of range.
std::vector<int32_t> topological_order(const TransferPlan& plan);

// Payload bytes each rank puts on the wire (Ring: every rank of the ring
// sends `bytes`, an open chain all but its last; Coupled: the source of each
// edge; P2p: the source). Sorted by rank.
std::map<int32_t, Bytes> bytes_sent_by_rank(const TransferPlan& plan);

// Throws Error when a transfer's pipeline is inconsistent (slices < 0; with
// slices > 0: window < 1, lag < 0, period < 0, lag > period when period >
// 0, lag > 0 with period = 0, window <= lag, or a P2p / Compute transfer), or
// its lanes are (lanes != 1 on a transfer that is not Coupled, edges that do
// not split into equal lanes, or several lanes with a pipeline).
void check_pipelines(const TransferPlan& plan);

}  // namespace podnet::plan
