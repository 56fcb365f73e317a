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
//   permutation    what each rank sends to its one peer   1   (patterns.hpp)
//   incast         what each of N senders sends           1   (patterns.hpp)
//
// The topology is read only for ordering and hierarchy (servers, rails,
// aggregation groups, pods); algorithms never see an engine. The traffic
// patterns permutation and incast (patterns.hpp) are not NCCL collectives:
// independent flows for congestion-control studies, built the same way.
//
// Options (scenario keys, see option_params()):
// - channels: NCCL channels, `auto` (the default) or an integer. auto is
//   what NCCL runs for the group on this topology (nccl/tuner.hpp section
//   1): 16 on 8 x 400G H100 servers, 24 on one H100 NVLink server, 4 with
//   one GPU per node. Each channel is an independent copy of the algorithm
//   carrying S/channels (the remainder spread over the first channels), so
//   a ring all-reduce with 4 channels is 4 concurrent Rings. With
//   ring_order = topology_aware each channel's ring is built from a
//   different home rail (ring_order.hpp), so on 8-NIC servers different
//   channels leave and enter servers through different NICs. pairwise
//   (alltoall) and p2p (sendrecv) ignore channels: each peer pair is one
//   connection, and `qps` is what spreads it.
// - qps: QPs per connection, copied into every Transfer::qps (ECMP entropy,
//   NCCL_IB_QPS_PER_CONNECTION).
// - ring_order: naive (the group's order) or topology_aware (ring_order.hpp).
// - algorithms, protocols: NCCL_ALGO / NCCL_PROTO-style lists ("auto",
//   "ring,tree", "^nvls") restricting what the tuner may choose.
// - nccl_model: true (default) = Options::tuner below; false = plain algorithms.
// - gpu_arch: volta | ampere | hopper | blackwell, the column of NCCL's
//   tuning tables (default hopper).
//
// Algorithm "auto" (the default of `podnet bench`) is NCCL's tuner: for the
// size it picks the fastest enabled (algorithm, protocol) among ring, tree,
// nvls, nvls_tree, collnet_direct, collnet_chain and pat by NCCL's cost model
// (nccl/tuner.hpp; CollNet only where the fabric's switches reduce,
// topology::Topology::sharp, collnet.hpp); an op none of them implements
// (alltoall, sendrecv) gets its default algorithm. Naming one of them
// fixes the algorithm and lets the tuner pick the protocol
// (Options::tuner, set for every scenario; without it the plan is the plain
// algorithm: simple, no latency delay).
//
// How a protocol shows in the plan (so that every engine times it without
// knowing protocols): the chosen plan's network transfers carry their bytes
// divided by the protocol's efficiency -- NCCL's model's ratio of its
// bandwidth to Simple's for the same algorithm, at least the line format's
// (ll x 2, ll128 x 128/120): LL capped at NCCL's llMaxBws, LL128 at 0.92
// of Simple or its per-channel ceiling, tree LL at 1/3.8 -- and
// transfer 0 is a Compute delay over the group lasting NCCL's modelled
// latency of the op (base latency + per-step latencies, nccl/tuner.hpp
// section 2), on which every other root transfer depends; an NVLS
// all-reduce on one server has a second delay after it, its pipeline's
// fill and drain (nvls.hpp), on which the data transfers depend. NCCL's
// per-step figures already include the wire, so the data transfers pay no
// per-hop latency of their own (latency_steps = 0) and the delay is marked
// as holding it (plan::Transfer::holds_hop_latency): the packet engine,
// whose packets take their hops physically, shortens it by the part of
// them that shows (engine/packet/hop_latency_credit.hpp). These corrections
// are NCCL's plan transforms, each named with its model and source in
// nccl/transforms.hpp; make_plan is choose -> build -> apply them. plan.protocol and plan.channels say what was chosen
// (a ring or tree on fewer channels at small sizes, as NCCL runs it: size_channels, nccl/tuner.hpp). Ring and tree
// plans also carry NCCL's slice pipeline on their Ring / Coupled transfers (plan::Pipeline; slices, window and
// forwarding derived from NCCL's buffer, chunk and slice sizes per protocol in nccl/pipeline.hpp), which the packet
// engine runs step by step; the analytical and flow engines keep their one coupled rate. Plans made without the model
// (nccl_model: false) carry none.
//
// sendrecv (p2p, with Options::tuner): inside an NVSwitch server a transfer moves at most NCCL's p2p
// channels for its size x 20 GB/s a channel (pairwise.hpp).
//
// alltoall (pairwise) also starts with a Compute delay (with Options::tuner): NCCL posts every
// network send and receive from one proxy thread per GPU, one post costing
// NCCL_NET_OVERHEAD = 1 us on x86 (tuning.cc getNetOverhead), so a rank's
// n - ppn off-node peers cost 2 (n - ppn) us of posts before its last
// message leaves; peers on its own server cost a ring step on NVLink
// (0.6 us, LL) each. A 512-rank all-to-all of 8 B therefore takes about a
// millisecond, not one network latency. The delay also holds a launch of
// 36.5 us, and transfers inside one NVSwitch server carry 1/0.911 of their
// bytes: NCCL's all-to-all as measured on H100 servers (pairwise.hpp).
//
// Every algorithm returns an empty plan (time 0) for a group of one GPU.
// Per-transfer byte counts are rounded up to whole bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "collective/nccl/tuner.hpp"
#include "collective/types.hpp"
#include "core/params.hpp"
#include "core/units.hpp"
#include "plan/transfer_plan.hpp"
#include "topology/topology.hpp"

namespace podnet::collective {

// Algorithms made of P2p transfers (pairwise alltoall, halving_doubling)
// refuse plans with more transfers than this: the flow and packet engines
// would not finish, and the plan alone would take gigabytes.
inline constexpr int64_t kMaxP2pTransfers = 4'000'000;

enum class RingOrder : uint8_t { Naive, TopologyAware };
const char* ring_order_name(RingOrder o);           // "naive", "topology_aware"
RingOrder parse_ring_order(std::string_view name);  // throws InputError

inline constexpr int32_t kAutoChannels = 0;  // Options::channels: as NCCL would (nccl/tuner.hpp)

struct Options {
  int32_t channels = 1;  // kAutoChannels: NCCL's execution channels for the group (the scenario default)
  int32_t qps = 1;
  RingOrder order = RingOrder::TopologyAware;
  Arch arch = Arch::Hopper;  // GPU generation NCCL's tables are read for
  Selection selection;       // algorithms / protocols the tuner may use (NCCL_ALGO / NCCL_PROTO)
  // NCCL's protocols and latencies for ring/tree/nvls named explicitly (always on for "auto").
  // options_from() (every scenario) sets it; a default-constructed Options builds the plain
  // algorithm (simple, no latency delay, 1 channel), which the structural unit tests pin.
  bool tuner = false;
  // Traffic patterns (patterns.hpp): the scenario's seed draws the permutation (scenario::resolve
  // sets it); incast_senders = 0 means every GPU of the group but the receiver.
  uint64_t seed = 1;
  int32_t incast_senders = 0;
  // The payload share of an NVLink (links.nvlink_efficiency; scenario::resolve sets it): a plan whose NCCL
  // limit is an absolute rate (sendrecv's rate per channel, pairwise.hpp) states it against that payload.
  double nvlink_efficiency = 0.824;
  // The payload share of a NIC's port rate (links.<ethernet|infiniband>_efficiency x the transport's payload
  // per packet; scenario::resolve sets it): NCCL's p2p rate per network channel is stated against it. The
  // default is RoCEv2's 4,096 B of payload per 4,178 B packet.
  double network_efficiency = 4096.0 / 4178.0;
  // A tuned plan's latency (NCCL's model) was measured on RDMA NICs; a transport whose stack is slower (TCP
  // sockets: network.stack_latency 50 us) pays the excess at each network step, one after another
  // (nccl/tuner.hpp, network_steps). scenario::resolve sets it: the stack latency above engine::kRdmaStackLatency.
  double stack_latency_excess_us = 0;
  // PAT only (pat.hpp): one Coupled transfer per step, every channel's send from every position an edge of it
  // (a lane per channel), instead of one P2p per position: log2 n transfers where there were channels x n x
  // log2 n, at the price of a barrier per step (a position's next send waits for the whole step of every
  // channel, not only for what it received). Not a scenario key: the training planner sets it for the data-parallel
  // collectives of an iteration plan (workload/training.hpp) and for a Chakra replay's collectives
  // (workload/chakra.hpp), `podnet bench` keeps one transfer per position.
  bool coupled_steps = false;
};

// Parameter schema of Options (scenario keys channels, qps, ring_order,
// algorithms, protocols, gpu_arch, incast_senders) and
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
  // With channels auto, runs on NCCL's NVLS channels, not the ring's (nvls.hpp).
  bool runs_on_nvls_channels = false;
  // Splits the data into parts of its own, each transfer's channel its part (torus.hpp), not NCCL's channels:
  // plan.channels counts the parts.
  bool own_parts = false;
};

const std::vector<AlgorithmInfo>& algorithms();
const AlgorithmInfo* find_algorithm(std::string_view name);
bool supports(const AlgorithmInfo& algorithm, Op op);
// The tuner's candidates for `op`: NCCL's algorithms podnet builds that support it; `algorithm` other than "auto"
// keeps that one only.
std::array<bool, kNumAlgos> tuner_candidates(Op op, std::string_view algorithm = "auto");
// The algorithm used when a scenario names none: ring for allreduce,
// allgather, reducescatter, broadcast, reduce; pairwise for alltoall; p2p
// for sendrecv; permutation and incast for the patterns of those names.
const char* default_algorithm(Op op);

// Validates and builds. Throws InputError for: an unknown algorithm (listing
// the names), an op the algorithm does not support (listing those that do),
// an empty group, a rank outside [0, topo.gpus.size()), a duplicate rank,
// negative bytes, channels or qps < 1, and whatever the algorithm itself
// refuses (halving_doubling: n not a power of two; hierarchical: uneven
// servers; pairwise: too many transfers). Fills plan.op, algorithm, bytes,
// ranks.
// `algorithm` may also be "auto" (see above). channels = kAutoChannels is
// resolved here.
plan::TransferPlan make_plan(std::string_view algorithm, Op op, const Group& group, Bytes bytes, const Options& options,
                             const topology::Topology& topo);

}  // namespace podnet::collective
