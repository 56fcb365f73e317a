// Collective operations and the registry of algorithms that turn them into
// TransferPlans.
//
// An algorithm is a pure function
//     (op, communicator group, size S, Options, Topology) -> plan::TransferPlan
// where the group is a list of global GPU ranks (topology.gpus[rank]) and S
// follows nccl-tests' definition for the op (NVIDIA/nccl-tests doc/PERFORMANCE.md):
//
//   op             S is                                   busbw factor
//   allreduce      the buffer                             2(n-1)/n
//   allgather      the whole output array (n x chunk)     (n-1)/n
//   reducescatter  the whole input array (n x chunk)      (n-1)/n
//   alltoall       the per-rank send buffer (S/n a peer)  (n-1)/n
//   broadcast      the buffer (root = group[0])           1
//   reduce         the buffer (root = group[0])           1
//   sendrecv       what each rank sends to (i+1) mod n    1
//
// The topology is read only for ordering and hierarchy (servers, rails,
// aggregation groups, pods); algorithms never see an engine.
//
// Options (scenario keys, see option_params()):
// - channels: NCCL channels. Each channel is an independent copy of the
//   algorithm carrying S/channels (the remainder spread over the first
//   channels), so a ring all-reduce with 4 channels is 4 concurrent Rings.
//   With ring_order = topology_aware each channel's ring is built from a
//   different home rail (ring_order.hpp), so on 8-NIC servers different
//   channels leave and enter servers through different NICs. pairwise
//   (alltoall) and p2p (sendrecv) ignore channels: each peer pair is one
//   connection, and `qps` is what spreads it.
// - qps: QPs per connection, copied into every Transfer::qps (ECMP entropy,
//   NCCL_IB_QPS_PER_CONNECTION).
// - ring_order: naive (the group's order) or topology_aware (ring_order.hpp).
//
// Every algorithm returns an empty plan (time 0) for a group of one GPU.
// Per-transfer byte counts are rounded up to whole bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/params.hpp"
#include "core/units.hpp"
#include "plan/transfer_plan.hpp"
#include "topology/topology.hpp"

namespace podnet::collective {

using Group = std::vector<int32_t>;  // global GPU ranks

// Algorithms made of P2p transfers (pairwise alltoall, halving_doubling)
// refuse plans with more transfers than this: the flow and packet engines
// would not finish, and the plan alone would take gigabytes.
inline constexpr int64_t kMaxP2pTransfers = 4'000'000;

enum class Op : uint8_t { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, Reduce, SendRecv };

const std::vector<Op>& all_ops();
const char* op_name(Op op);  // "allreduce", "allgather", ...
// Parses an op name; throws InputError listing the valid names.
Op parse_op(std::string_view name);

// nccl-tests' busbw = algbw x bus_factor(op, n). n = 1 gives 0 for the
// (n-1)/n family (no data moves) and 1 for broadcast/reduce/sendrecv.
double bus_factor(Op op, int64_t n);

enum class RingOrder : uint8_t { Naive, TopologyAware };
const char* ring_order_name(RingOrder o);  // "naive", "topology_aware"
RingOrder parse_ring_order(std::string_view name);  // throws InputError

struct Options {
  int32_t channels = 1;
  int32_t qps = 1;
  RingOrder order = RingOrder::TopologyAware;
};

// Parameter schema of Options (scenario keys channels, qps, ring_order) and
// the conversion from validated Params.
std::vector<ParamSpec> option_params();
Options options_from(const Params& params);

using BuildFn = plan::TransferPlan (*)(Op op, const Group& group, Bytes bytes, const Options& options,
                                         const topology::Topology& topo);

struct AlgorithmInfo {
  const char* name;
  const char* description;
  std::vector<Op> ops;  // supported ops
  BuildFn build;        // called through make_plan (which validates the group and options)
};

const std::vector<AlgorithmInfo>& algorithms();
const AlgorithmInfo* find_algorithm(std::string_view name);
bool supports(const AlgorithmInfo& algorithm, Op op);
// The algorithm used when a scenario names none: ring for allreduce,
// allgather, reducescatter, broadcast, reduce; pairwise for alltoall; p2p
// for sendrecv.
const char* default_algorithm(Op op);

// Validates and builds. Throws InputError for: an unknown algorithm (listing
// the names), an op the algorithm does not support (listing those that do),
// an empty group, a rank outside [0, topo.gpus.size()), a duplicate rank,
// negative bytes, channels or qps < 1, and whatever the algorithm itself
// refuses (halving_doubling: n not a power of two; hierarchical: uneven
// servers; pairwise: too many transfers). Fills plan.op, algorithm, bytes,
// ranks.
plan::TransferPlan make_plan(std::string_view algorithm, Op op, const Group& group, Bytes bytes,
                               const Options& options, const topology::Topology& topo);

}  // namespace podnet::collective
