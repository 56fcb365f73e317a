#include "collective/collective.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "collective/collnet.hpp"
#include "collective/halving_doubling.hpp"
#include "collective/hierarchical.hpp"
#include "collective/nccl_pipeline.hpp"
#include "collective/nvls.hpp"
#include "collective/pairwise.hpp"
#include "collective/pat.hpp"
#include "collective/patterns.hpp"
#include "collective/plan_util.hpp"
#include "collective/ring.hpp"
#include "collective/tree.hpp"
#include "core/error.hpp"

namespace podnet::collective {

namespace {
constexpr int32_t kMaxChannels = 64;  // NCCL MAXCHANNELS
constexpr int32_t kMaxQps = 128;      // NCCL_IB_QPS_PER_CONNECTION range
}  // namespace

const std::vector<Op>& all_ops() {
  static const std::vector<Op> k = {Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::AllToAll, Op::Broadcast,
                                    Op::Reduce,    Op::SendRecv,  Op::Permutation,   Op::Incast};
  return k;
}

const char* op_name(Op op) {
  switch (op) {
    case Op::AllReduce: return "allreduce";
    case Op::AllGather: return "allgather";
    case Op::ReduceScatter: return "reducescatter";
    case Op::AllToAll: return "alltoall";
    case Op::Broadcast: return "broadcast";
    case Op::Reduce: return "reduce";
    case Op::SendRecv: return "sendrecv";
    case Op::Permutation: return "permutation";
    case Op::Incast: return "incast";
  }
  return "?";
}

Op parse_op(std::string_view name) {
  std::string list;
  for (Op op : all_ops()) {
    if (name == op_name(op)) return op;
    list += (list.empty() ? "" : ", ") + std::string(op_name(op));
  }
  throw InputError(fmt::format("unknown collective '{}': expected one of {}", name, list));
}

double bus_factor(Op op, int64_t n) {
  const double d = static_cast<double>(n);
  switch (op) {
    case Op::AllReduce: return n <= 0 ? 0.0 : 2.0 * (d - 1.0) / d;
    case Op::AllGather:
    case Op::ReduceScatter:
    case Op::AllToAll: return n <= 0 ? 0.0 : (d - 1.0) / d;
    case Op::Broadcast:
    case Op::Reduce:
    case Op::SendRecv:
    case Op::Permutation:
    case Op::Incast: return 1.0;
  }
  return 0.0;
}

const char* ring_order_name(RingOrder o) { return o == RingOrder::Naive ? "naive" : "topology_aware"; }

RingOrder parse_ring_order(std::string_view name) {
  if (name == "naive") return RingOrder::Naive;
  if (name == "topology_aware") return RingOrder::TopologyAware;
  throw InputError(fmt::format("unknown ring order '{}': expected naive or topology_aware", name));
}

std::vector<ParamSpec> option_params() {
  return {
      {"channels",
       ParamType::Int,
       "auto",
       "NCCL channels: parallel copies of the algorithm, each carrying S/channels (rings start on different rails); "
       "auto = what NCCL runs for the group (16 on 8 x 400G H100 servers)",
       1,
       kMaxChannels,
       {"auto"}},
      {"qps", ParamType::Int, "1", "QPs per connection (NCCL_IB_QPS_PER_CONNECTION): ECMP entropy", 1, kMaxQps},
      {"ring_order",
       ParamType::String,
       "topology_aware",
       "naive = the group's order; topology_aware = servers by pod/group, each server's GPUs contiguous, "
       "inter-server hops on one rail",
       -1e300,
       1e300,
       {"naive", "topology_aware"}},
      {"algorithms", ParamType::String, "auto",
       "algorithms the tuner may choose (NCCL_ALGO syntax): auto, or a list of ring, tree, nvls, nvls_tree, "
       "collnet_direct, collnet_chain, pat ('^' excludes)"},
      {"protocols", ParamType::String, "auto",
       "protocols the tuner may choose (NCCL_PROTO syntax): auto, or a list of ll, ll128, simple ('^' excludes)"},
      {"nccl_model", ParamType::Bool, "true",
       "NCCL's protocols, latencies and tuner (false: the plain algorithm, simple, no latency delay)"},
      {"gpu_arch",
       ParamType::String,
       "hopper",
       "GPU generation whose NCCL tuning tables apply",
       -1e300,
       1e300,
       {"volta", "ampere", "hopper", "blackwell"}},
      {"incast_senders",
       ParamType::Int,
       "auto",
       "op incast: senders N, the N GPUs after the receiver (the group's first GPU) in the group's order; auto = "
       "every other GPU of the group",
       1,
       1e9,
       {"auto"}},
  };
}

Options options_from(const Params& params) {
  Options o;
  o.tuner = !params.has("nccl_model") || params.get_bool("nccl_model");
  if (params.has("channels"))
    o.channels = params.text("channels") == "auto" ? kAutoChannels : static_cast<int32_t>(params.get_int("channels"));
  if (params.has("qps")) o.qps = static_cast<int32_t>(params.get_int("qps"));
  if (params.has("ring_order")) o.order = parse_ring_order(params.get_string("ring_order"));
  // A bad list is the key's: a ParamError, so the scenario layer names its file and line (or its --set).
  const auto selection = [&](const char* name, bool algos) {
    const std::string key = std::string("collective.") + name, value = params.get_string(name);
    try {
      o.selection = algos ? parse_algorithms(value, o.selection, key) : parse_protocols(value, o.selection, key);
    } catch (const ParamError&) {
      throw;
    } catch (const InputError& e) {
      std::string why = e.what();
      if (why.rfind(key + " = ", 0) == 0 && why.find(": ") != std::string::npos) why = why.substr(why.find(": ") + 2);
      throw ParamError(key, fmt::format("'{}' is not valid: {}", value, why));
    }
  };
  if (params.has("algorithms")) selection("algorithms", true);
  if (params.has("protocols")) selection("protocols", false);
  if (params.has("gpu_arch")) o.arch = parse_arch(params.get_string("gpu_arch"));
  if (params.has("incast_senders"))
    o.incast_senders = params.text("incast_senders") == "auto" ? 0
                                                               : static_cast<int32_t>(params.get_int("incast_senders"));
  return o;
}

const std::vector<AlgorithmInfo>& algorithms() {
  static const std::vector<AlgorithmInfo> k = {
      ring_algorithm(),
      tree_algorithm(),
      nvls_algorithm(),
      nvls_tree_algorithm(),
      collnet_direct_algorithm(),
      collnet_chain_algorithm(),
      halving_doubling_algorithm(),
      hierarchical_algorithm(),
      pairwise_algorithm(),
      p2p_algorithm(),
      pat_algorithm(),
      permutation_algorithm(),
      incast_algorithm(),
  };
  return k;
}

const AlgorithmInfo* find_algorithm(std::string_view name) {
  for (const auto& a : algorithms())
    if (name == a.name) return &a;
  return nullptr;
}

bool supports(const AlgorithmInfo& algorithm, Op op) {
  return std::find(algorithm.ops.begin(), algorithm.ops.end(), op) != algorithm.ops.end();
}

const char* default_algorithm(Op op) {
  switch (op) {
    case Op::AllToAll: return "pairwise";
    case Op::SendRecv: return "p2p";
    case Op::Permutation: return "permutation";
    case Op::Incast: return "incast";
    default: return "ring";
  }
}

namespace {

// The NCCL algorithms podnet builds, by registry name.
const char* nccl_algorithm_name(Algo a) {
  switch (a) {
    case Algo::Ring: return "ring";
    case Algo::Tree: return "tree";
    case Algo::Nvls: return "nvls";
    case Algo::NvlsTree: return "nvls_tree";
    case Algo::CollnetDirect: return "collnet_direct";
    case Algo::CollnetChain: return "collnet_chain";
    case Algo::Pat: return "pat";
  }
  return nullptr;
}

// Bytes on the wire for `b` payload bytes under protocol p (ceil b / efficiency).
Bytes wire_bytes(Bytes b, Proto p) {
  switch (p) {
    case Proto::LL: return 2 * b;                             // 4 B data per 8 B line
    case Proto::LL128: return detail::scale_up(b, 128, 120);  // 120 B data per 128 B line
    case Proto::Simple: return b;
  }
  return b;
}

// The line format's own overhead: LL sends 8 B per 4 B of data, LL128 128 B per 120 B.
double line_factor(Proto p) { return p == Proto::LL ? 2.0 : p == Proto::LL128 ? 128.0 / 120.0 : 1.0; }

// How much slower NCCL's model runs protocol p than Simple for the same algorithm and op (nccl_tuner.hpp
// section 3: LL at half of Simple's bandwidth but at most NCCL's LL ceiling, llMaxBws; LL128 at 0.92 of it
// but at most its per-channel ceiling; tree LL at 1/3.8), and at least the line format's own overhead
// (LL 2, LL128 128/120). 1 for Simple, or where the model has no Simple figure.
double protocol_slowdown(Op op, Algo a, Proto p, const CommShape& s) {
  if (p == Proto::Simple) return 1.0;
  const double line = line_factor(p);
  const double simple = model_entry(op, a, Proto::Simple, s).bw_gbs;
  const double proto = model_entry(op, a, p, s).bw_gbs;
  if (!(simple > 0) || !(proto > 0)) return line;
  return std::max(line, simple / proto);
}

// Wire bytes for b payload bytes at a slowdown of `factor` (>= the line format's): the line format's
// exact count when the ceiling does not bind, else ceil(b x factor).
Bytes wire_bytes(Bytes b, Proto p, double factor) {
  const Bytes exact = wire_bytes(b, p);
  if (factor <= line_factor(p) * (1 + 1e-12)) return exact;
  return std::max(exact, static_cast<Bytes>(std::ceil(static_cast<double>(b) * factor)));
}

// Puts a Compute delay of `latency` over the group first: every transfer
// that had no dependency now waits for it. `hop_latency`: the delay holds
// the transfers' per-hop latency (plan::Transfer::holds_hop_latency).
plan::TransferPlan with_leading_delay(plan::TransferPlan plan, const Group& group, Time latency, std::string label,
                                      bool hop_latency = false) {
  if (plan.transfers.empty() || latency.ps <= 0) return plan;
  plan::TransferPlan out;
  out.transfers.reserve(plan.transfers.size() + 1);
  plan::Transfer d;
  d.kind = plan::TransferKind::Compute;
  d.ranks = group;
  std::sort(d.ranks.begin(), d.ranks.end());
  d.duration = latency;
  d.holds_hop_latency = hop_latency;
  d.bytes = 0;
  d.label = std::move(label);
  out.add(std::move(d));
  for (auto& t : plan.transfers) {
    for (auto& dep : t.deps) ++dep;
    if (t.deps.empty()) t.deps.push_back(0);
    out.add(std::move(t));
  }
  return out;
}

void validate(const AlgorithmInfo* a, std::string_view algorithm, Op op, const Group& group, Bytes bytes,
              const Options& options, const topology::Topology& topo) {
  if (!a && algorithm != "auto") {
    std::string list = "auto";
    for (const auto& x : algorithms()) list += ", " + std::string(x.name);
    throw InputError(fmt::format("unknown collective algorithm '{}': expected one of {}", algorithm, list));
  }
  if (a && !supports(*a, op)) {
    std::string list;
    for (const auto& x : algorithms())
      if (supports(x, op)) list += (list.empty() ? "" : ", ") + std::string(x.name);
    throw InputError(
        fmt::format("algorithm '{}' does not implement {}: algorithms that do: {}", a->name, op_name(op), list));
  }
  if (group.empty()) throw InputError(fmt::format("{} over an empty group of GPUs", op_name(op)));
  const int64_t total = static_cast<int64_t>(topo.gpus.size());
  for (int32_t r : group)
    if (r < 0 || r >= total)
      throw InputError(fmt::format("{}: GPU {} is not in the topology (GPUs 0-{})", op_name(op), r, total - 1));
  {
    Group sorted = group;
    std::sort(sorted.begin(), sorted.end());
    auto dup = std::adjacent_find(sorted.begin(), sorted.end());
    if (dup != sorted.end()) throw InputError(fmt::format("{}: GPU {} appears twice in the group", op_name(op), *dup));
  }
  if (bytes < 0) throw InputError(fmt::format("{}: negative size {} B", op_name(op), bytes));
  if (options.channels != kAutoChannels && (options.channels < 1 || options.channels > kMaxChannels))
    throw InputError(
        fmt::format("channels = {}: expected auto or an integer in [1, {}]", options.channels, kMaxChannels));
  if (options.qps < 1 || options.qps > kMaxQps)
    throw InputError(fmt::format("qps = {}: expected an integer in [1, {}]", options.qps, kMaxQps));
}

// Whether the request names CollNet algorithms only: the algorithm itself, or "auto" with a
// selection (NCCL_ALGO list) that enables nothing else.
bool only_collnet(std::string_view algorithm, const Selection& sel) {
  const auto collnet = [](int i) {
    return static_cast<Algo>(i) == Algo::CollnetDirect || static_cast<Algo>(i) == Algo::CollnetChain;
  };
  if (algorithm != "auto") return algorithm == "collnet_direct" || algorithm == "collnet_chain";
  bool any = false;
  for (int i = 0; i < kNumAlgos; ++i) {
    if (sel.algos[i] && !collnet(i)) return false;
    any = any || sel.algos[i];
  }
  return any;
}

// Per-rank cost of posting an all-to-all's messages (collective.hpp).
Time alltoall_post_latency(const CommShape& s) {
  if (s.ranks <= 1) return Time();
  const int64_t ppn = s.ranks / std::max(1, s.nodes);
  const double us = 2.0 * static_cast<double>(s.ranks - ppn) * 1.0 + static_cast<double>(ppn - 1) * 0.6;
  return Time::from_seconds(us * 1e-6);
}

}  // namespace

plan::TransferPlan make_plan(std::string_view algorithm, Op op, const Group& group, Bytes bytes, const Options& options,
                             const topology::Topology& topo) {
  const AlgorithmInfo* a = find_algorithm(algorithm);
  validate(a, algorithm, op, group, bytes, options, topo);

  Options o = options;
  const CommShape shape = comm_shape(group, topo, o.arch);
  const bool auto_channels = o.channels == kAutoChannels;
  if (auto_channels) o.channels = execution_channels(shape);

  // NCCL's algorithms go through the tuner (which picks the protocol, and the algorithm for "auto").
  std::array<bool, kNumAlgos> candidates{};
  bool any = false;
  for (int i = 0; i < kNumAlgos; ++i) {
    const char* name = nccl_algorithm_name(static_cast<Algo>(i));
    if (!name) continue;
    const AlgorithmInfo* x = find_algorithm(name);
    candidates[i] = x && supports(*x, op) && (algorithm == "auto" || algorithm == name);
    any = any || candidates[i];
  }
  plan::TransferPlan plan;
  if (any && group.size() > 1 && bytes > 0 && (o.tuner || algorithm == "auto")) {
    const Choice c = tune(op, shape, bytes, o.selection, candidates);
    if (c.time_us < 0 && !shape.sharp && only_collnet(algorithm, o.selection))
      throw InputError(fmt::format(
          "{} {} over {} GPUs: CollNet reduces in the switches, but this fabric's switches do not: set "
          "switch.in_network_reduction: sharp (InfiniBand switches with SHARP, network.transport: infiniband), or "
          "choose another algorithm",
          algorithm, op_name(op), group.size()));
    const int32_t ppn = shape.ranks / std::max(1, shape.nodes);
    if (c.time_us < 0 && shape.sharp && algorithm == "collnet_direct" &&
        (op == Op::AllGather || op == Op::ReduceScatter) && shape.nodes > 1 && ppn > shape.nics)
      throw InputError(fmt::format("collnet_direct {} over {} GPUs needs one NIC per GPU (NCCL: all-gather and "
                                   "reduce-scatter over CollNet require 1:1 GPU:NIC): {} GPUs per server share {} "
                                   "NICs (server.nics; use ring, or collnet_direct for an all-reduce)",
                                   op_name(op), group.size(), ppn, shape.nics));
    if (c.time_us < 0 && algorithm != "auto")
      for (int i = 0; i < kNumAlgos; ++i)
        if (candidates[i])
          if (const std::string why = why_not(static_cast<Algo>(i), shape); !why.empty())
            throw InputError(fmt::format("{} {} over {} GPUs on {} server(s): {}", algorithm, op_name(op), group.size(),
                                         shape.nodes, why));
    if (c.time_us < 0)
      throw InputError(fmt::format(
          "{} {} over {} GPUs on {} server(s): no enabled {} is available (nvls needs an NVSwitch, hopper or "
          "later and one server; nvls_tree the same on several servers with a NIC per head; collnet_direct and "
          "collnet_chain SHARP switches, several servers of at most 8 GPUs, simple, and for collnet_direct an "
          "NVSwitch, and one NIC per GPU for all-gather / reduce-scatter; check collective.algorithms / "
          "collective.protocols){}",
          algorithm, op_name(op), group.size(), shape.nodes, algorithm == "auto" ? "algorithm" : "protocol",
          algorithm == "auto"
              ? ""
              : fmt::format(". NCCL's model has no {} {} here (NCCL runs broadcast and reduce as rings only, tree as "
                            "an all-reduce only); --set collective.nccl_model=false runs podnet's own {} plan",
                            algorithm, op_name(op), algorithm)));
    const AlgorithmInfo* chosen = find_algorithm(nccl_algorithm_name(c.algo));
    // NCCL runs NVLS and NVLS tree on its NVLS channels, not the ring's (nvls.hpp).
    if (auto_channels && (c.algo == Algo::Nvls || c.algo == Algo::NvlsTree)) o.channels = nvls_channels(shape.arch);
    // Small sizes: fewer channels, as NCCL runs them (nccl_tuner.hpp section 4).
    const int32_t model_channels = o.channels;  // the channels NCCL's model counts
    if (auto_channels) o.channels = size_channels(c.algo, c.proto, bytes, shape.ranks, o.channels);
    plan = chosen->build(op, group, bytes, o, topo);
    // NCCL's slice pipeline (nccl_pipeline.hpp) on ring and tree transfers, from their payload bytes.
    set_nccl_pipelines(plan, op, c.algo, c.proto, static_cast<int32_t>(group.size()), bytes, o.channels, shape);
    // NCCL's latency term (the leading delay below: base + every step's latency, the wire included, as
    // NCCL's tuner counts it) replaces the engines' per-hop latency: the data transfers pay none
    // (latency_steps = 0), so a step's latency is not counted twice.
    // LL and LL128 move at NCCL's modelled rate for them: the line format's overhead, or more where NCCL's
    // model caps the protocol's bandwidth (protocol_slowdown).
    // The slowdown's bytes give the modelled rate on the channels the model counts, whose rings carry about
    // Simple's modelled bandwidth. On fewer (small sizes, which NCCL runs on fewer channels while keeping the
    // model's time: nccl_tuner.hpp section 4) they do not: ring LL over 16 servers of 8 GPUs at 1 to 2 MiB,
    // on 2 to 4 of 16 channels, took 1.4-1.7x the model's time, more than the LL128 the tuner had set aside.
    // There a ring whose protocol the model caps (LL's llMaxBw, LL128's per-channel ceiling) carries the line
    // format's bytes at most at its channel's share of the modelled rate, so that each channel's ring takes
    // at least S / algBw, the model's bandwidth time, however few channels run it.
    const double slowdown = protocol_slowdown(op, c.algo, c.proto, shape);
    const double line = line_factor(c.proto);
    const bool capped_ring = c.algo == Algo::Ring && o.channels < model_channels && slowdown > line * (1 + 1e-12) &&
                             bytes > 0;
    const double alg_bytes_per_s = capped_ring ? model_entry(op, c.algo, c.proto, shape).bw_gbs * 1e9 : 0;
    for (auto& t : plan.transfers)
      if (t.kind != plan::TransferKind::Compute) {
        if (capped_ring && t.kind == plan::TransferKind::Ring) {
          t.bytes = wire_bytes(t.bytes, c.proto);
          const double cap = static_cast<double>(t.bytes) * 8 * alg_bytes_per_s / static_cast<double>(bytes);
          t.max_rate_bps = t.max_rate_bps > 0 ? std::min(t.max_rate_bps, cap) : cap;
        } else {
          t.bytes = wire_bytes(t.bytes, c.proto, slowdown);
        }
        t.latency_steps = 0;
      }
    // NVLS on one server: the pipeline's fill and drain and its cost per stage, which NCCL's model does not
    // price, after a launch that replaces NCCL's model latency (nvls.hpp).
    double lat_us = model_latency_us(op, c.algo, c.proto, shape, bytes);
    if (c.algo == Algo::Nvls && op == Op::AllReduce) {
      const NvlsPipeline fill = nvls_pipeline(shape, bytes);
      if (fill.loops > 0) {
        plan = with_leading_delay(std::move(plan), group,
                                  Time::from_seconds((fill.fill_us + fill.stage_cost_us) * 1e-6),
                                  fmt::format("pipeline-fill/nvls/chunk-{}", fill.chunk));
        lat_us = fill.launch_us;
      }
    }
    const Time lat = Time::from_seconds(lat_us * 1e-6);
    plan = with_leading_delay(std::move(plan), group, lat,
                              fmt::format("latency/{}/{}", algo_name(c.algo), proto_name(c.proto)), true);
    plan.algorithm = chosen->name;
    plan.protocol = proto_name(c.proto);
  } else {
    const AlgorithmInfo* b = a ? a : find_algorithm(default_algorithm(op));
    if (!a && !supports(*b, op)) throw InputError(fmt::format("no algorithm implements {}", op_name(op)));
    if (auto_channels && (std::string_view(b->name) == "nvls" || std::string_view(b->name) == "nvls_tree"))
      o.channels = nvls_channels(shape.arch);
    plan = b->build(op, group, bytes, o, topo);
    // NCCL's sendrecv: a rate per p2p channel, channels by size and communicator (pairwise.hpp).
    if (op == Op::SendRecv && o.tuner && !plan.transfers.empty())
      cap_sendrecv_channels(plan, topo, bytes, shape, execution_channels(shape), o);
    if (op == Op::AllToAll && o.tuner && !plan.transfers.empty()) {
      // NCCL's all-to-all as measured on NVSwitch servers (pairwise.hpp): a launch, and NVLink below the ring's rate.
      scale_alltoall_nvlink(plan, topo);
      plan = with_leading_delay(std::move(plan), group,
                                alltoall_post_latency(shape) + Time::from_seconds(kAlltoallLaunchUs * 1e-6),
                                "latency/alltoall-launch-and-posts");
    }
    plan.algorithm = b->name;
  }
  plan.op = op_name(op);
  plan.bytes = bytes;
  plan.ranks = static_cast<int32_t>(group.size());
  plan.channels = o.channels;
  return plan;
}

namespace detail {
const char* op_code(Op op) {
  switch (op) {
    case Op::AllReduce: return "ar";
    case Op::AllGather: return "ag";
    case Op::ReduceScatter: return "rs";
    case Op::AllToAll: return "a2a";
    case Op::Broadcast: return "bc";
    case Op::Reduce: return "rd";
    case Op::SendRecv: return "sr";
    case Op::Permutation: return "perm";
    case Op::Incast: return "incast";
  }
  return "?";
}
}  // namespace detail

}  // namespace podnet::collective
