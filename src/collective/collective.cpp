#include "collective/collective.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <limits>

#include "collective/collnet.hpp"
#include "collective/halving_doubling.hpp"
#include "collective/hierarchical.hpp"
#include "collective/nccl/transforms.hpp"
#include "collective/nvls.hpp"
#include "collective/pairwise.hpp"
#include "collective/pat.hpp"
#include "collective/patterns.hpp"
#include "collective/plan_util.hpp"
#include "collective/ring.hpp"
#include "collective/torus.hpp"
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
  // NCCL's and nccl-tests' spellings name the same ops: AllReduce, all_reduce, all-reduce, reduce_scatter.
  std::string plain;
  for (char c : name)
    if (c != '-' && c != '_' && c != ' ') plain += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string list;
  for (Op op : all_ops()) {
    if (name == op_name(op) || plain == op_name(op)) return op;
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
    case Op::Permutation: return 1.0;
    // nccl-tests has no incast: n - 1 senders each send the size to one receiver, so algbw x (n - 1) is what the
    // receiver's link takes in, comparable with its speed as busbw is meant to be.
    case Op::Incast: return n <= 1 ? 0.0 : d - 1.0;
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
      torus_algorithm(),
      torus_dimorder_algorithm(),
      torus_astra_algorithm(),
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

}  // namespace

std::array<bool, kNumAlgos> tuner_candidates(Op op, std::string_view algorithm) {
  std::array<bool, kNumAlgos> candidates{};
  for (int i = 0; i < kNumAlgos; ++i) {
    const char* name = algo_name(static_cast<Algo>(i));  // NCCL's algorithms carry their registry names
    const AlgorithmInfo* x = find_algorithm(name);
    candidates[static_cast<size_t>(i)] = x && supports(*x, op) && (algorithm == "auto" || algorithm == name);
  }
  return candidates;
}

namespace {

// Choose: the tuner's (algorithm, protocol) for an NCCL algorithm the request allows, or nothing (podnet's
// own plan). Throws InputError, saying why, when the request names NCCL algorithms none of which can run.
std::optional<Choice> choose(std::string_view algorithm, Op op, const Group& group, Bytes bytes, const Options& o,
                             const CommShape& shape) {
  const std::array<bool, kNumAlgos> candidates = tuner_candidates(op, algorithm);
  const bool any = std::find(candidates.begin(), candidates.end(), true) != candidates.end();
  if (!any || group.size() <= 1 || bytes <= 0 || !(o.tuner || algorithm == "auto")) return std::nullopt;
  const Choice c = tune(op, shape, bytes, o.selection, candidates);
  if (c.time_us >= 0) return c;
  if (!shape.sharp && only_collnet(algorithm, o.selection))
    throw InputError(fmt::format(
        "{} {} over {} GPUs: CollNet reduces in the switches, but this fabric's switches do not: set "
        "switch.in_network_reduction: sharp (InfiniBand switches with SHARP, network.transport: infiniband), or "
        "choose another algorithm",
        algorithm, op_name(op), group.size()));
  const int32_t ppn = shape.ranks / std::max(1, shape.nodes);
  if (shape.sharp && algorithm == "collnet_direct" && (op == Op::AllGather || op == Op::ReduceScatter) &&
      shape.nodes > 1 && ppn > shape.nics)
    throw InputError(fmt::format("collnet_direct {} over {} GPUs needs one NIC per GPU (NCCL: all-gather and "
                                 "reduce-scatter over CollNet require 1:1 GPU:NIC): {} GPUs per server share {} "
                                 "NICs (server.nics; use ring, or collnet_direct for an all-reduce)",
                                 op_name(op), group.size(), ppn, shape.nics));
  if (algorithm != "auto")
    for (int i = 0; i < kNumAlgos; ++i)
      if (candidates[i])
        if (const std::string why = why_not(static_cast<Algo>(i), shape); !why.empty())
          throw InputError(fmt::format("{} {} over {} GPUs on {}: {}", algorithm, op_name(op), group.size(),
                                       plural(shape.nodes, "server", "servers"), why));
  throw InputError(fmt::format(
      "{} {} over {} GPUs on {}: no enabled {} is available (nvls needs an NVSwitch, hopper or "
      "later and one server; nvls_tree the same on several servers with a NIC per head; collnet_direct and "
      "collnet_chain SHARP switches, several servers of at most 8 GPUs, simple, and for collnet_direct an "
      "NVSwitch, and one NIC per GPU for all-gather / reduce-scatter; check collective.algorithms / "
      "collective.protocols){}",
      algorithm, op_name(op), group.size(), plural(shape.nodes, "server", "servers"),
      algorithm == "auto" ? "algorithm" : "protocol",
      algorithm == "auto"
          ? ""
          : fmt::format(". NCCL's model has no {} {} here (NCCL runs broadcast and reduce as rings only, tree as "
                        "an all-reduce only); --set collective.nccl_model=false runs podnet's own {} plan",
                        algorithm, op_name(op), algorithm)));
}

}  // namespace

// choose -> build -> apply NCCL's transforms (nccl/transforms.hpp).
plan::TransferPlan make_plan(std::string_view algorithm, Op op, const Group& group, Bytes bytes, const Options& options,
                             const topology::Topology& topo) {
  const AlgorithmInfo* a = find_algorithm(algorithm);
  validate(a, algorithm, op, group, bytes, options, topo);

  Options o = options;
  const CommShape shape = comm_shape(group, topo, o.arch);
  const bool auto_channels = o.channels == kAutoChannels;
  if (auto_channels) o.channels = execution_channels(shape);

  std::optional<Choice> choice = choose(algorithm, op, group, bytes, o, shape);
  // A box of chips on a NIC-less torus runs the torus's own collectives, not NCCL's (torus.hpp), where they are
  // no slower than NCCL's choice, unless the user restricted NCCL's algorithms (collective.algorithms).
  bool torus_auto = false;
  if (algorithm == "auto" && shape.chip_links && !o.selection.algos_given &&
      (op == Op::AllReduce || op == Op::AllGather || op == Op::ReduceScatter) && group.size() > 1 && bytes > 0 &&
      torus_box_problem(group, topo).empty()) {
    const TorusEstimate e = torus_estimate(op, group, bytes, topo);
    const double nccl_s = choice ? model_latency_us(op, choice->algo, choice->proto, shape, bytes) * 1e-6 +
                                       e.snake_busiest_bytes / proto_efficiency(choice->proto) / e.link_bytes_per_s
                                 : std::numeric_limits<double>::infinity();
    if (e.torus_s <= nccl_s) {
      torus_auto = true;
      choice.reset();
    }
  }
  const AlgorithmInfo* built = nullptr;
  int32_t model_channels = 0;  // the channels NCCL's model counts
  if (choice) {
    built = find_algorithm(algo_name(choice->algo));
    // NCCL runs NVLS and NVLS tree on its NVLS channels, not the ring's (nvls.hpp).
    if (auto_channels && (choice->algo == Algo::Nvls || choice->algo == Algo::NvlsTree))
      o.channels = nvls_channels(shape.arch);
    model_channels = o.channels;
    // Small sizes: fewer channels, as NCCL runs them (nccl/tuner.hpp section 4).
    if (auto_channels) o.channels = size_channels(choice->algo, choice->proto, bytes, shape.ranks, o.channels);
  } else if (torus_auto) {
    built = find_algorithm("torus");
  } else {
    built = a ? a : find_algorithm(default_algorithm(op));
    if (!a && !supports(*built, op)) throw InputError(fmt::format("no algorithm implements {}", op_name(op)));
    if (auto_channels && built->runs_on_nvls_channels) o.channels = nvls_channels(shape.arch);
  }
  plan::TransferPlan plan = built->build(op, group, bytes, o, topo);
  apply_nccl_transforms(NcclContext{op, group, bytes, o, shape, topo, choice, model_channels}, plan);
  plan.algorithm = built->name;
  if (choice) plan.protocol = proto_name(choice->proto);
  plan.op = op_name(op);
  plan.bytes = bytes;
  plan.ranks = static_cast<int32_t>(group.size());
  plan.channels = o.channels;
  if (built->own_parts) {
    plan.channels = 0;
    for (const auto& t : plan.transfers) plan.channels = std::max(plan.channels, t.channel + t.lanes);
  }
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
