#include "collective/collective.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "collective/halving_doubling.hpp"
#include "collective/hierarchical.hpp"
#include "collective/pairwise.hpp"
#include "collective/plan_util.hpp"
#include "collective/ring.hpp"
#include "collective/tree.hpp"
#include "core/error.hpp"

namespace podnet::collective {

namespace {
constexpr int32_t kMaxChannels = 64;   // NCCL MAXCHANNELS
constexpr int32_t kMaxQps = 128;       // NCCL_IB_QPS_PER_CONNECTION range
}  // namespace

const std::vector<Op>& all_ops() {
  static const std::vector<Op> k = {Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::AllToAll,
                                    Op::Broadcast, Op::Reduce,    Op::SendRecv};
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
    case Op::SendRecv: return 1.0;
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
      {"channels", ParamType::Int, "1",
       "NCCL channels: parallel copies of the algorithm, each carrying S/channels (rings start on different rails)",
       1, kMaxChannels},
      {"qps", ParamType::Int, "1", "QPs per connection (NCCL_IB_QPS_PER_CONNECTION): ECMP entropy", 1, kMaxQps},
      {"ring_order", ParamType::String, "topology_aware",
       "naive = the group's order; topology_aware = servers by pod/group, each server's GPUs contiguous, "
       "inter-server hops on one rail",
       -1e300, 1e300, {"naive", "topology_aware"}},
  };
}

Options options_from(const Params& params) {
  Options o;
  if (params.has("channels")) o.channels = static_cast<int32_t>(params.get_int("channels"));
  if (params.has("qps")) o.qps = static_cast<int32_t>(params.get_int("qps"));
  if (params.has("ring_order")) o.order = parse_ring_order(params.get_string("ring_order"));
  return o;
}

const std::vector<AlgorithmInfo>& algorithms() {
  static const std::vector<AlgorithmInfo> k = {
      ring_algorithm(),         tree_algorithm(),     halving_doubling_algorithm(),
      hierarchical_algorithm(), pairwise_algorithm(), p2p_algorithm(),
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
    default: return "ring";
  }
}

plan::TransferPlan make_plan(std::string_view algorithm, Op op, const Group& group, Bytes bytes,
                               const Options& options, const topology::Topology& topo) {
  const AlgorithmInfo* a = find_algorithm(algorithm);
  if (!a) {
    std::string list;
    for (const auto& x : algorithms()) list += (list.empty() ? "" : ", ") + std::string(x.name);
    throw InputError(fmt::format("unknown collective algorithm '{}': expected one of {}", algorithm, list));
  }
  if (!supports(*a, op)) {
    std::string list;
    for (const auto& x : algorithms())
      if (supports(x, op)) list += (list.empty() ? "" : ", ") + std::string(x.name);
    throw InputError(fmt::format("algorithm '{}' does not implement {}: algorithms that do: {}", a->name,
                                 op_name(op), list));
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
    if (dup != sorted.end())
      throw InputError(fmt::format("{}: GPU {} appears twice in the group", op_name(op), *dup));
  }
  if (bytes < 0) throw InputError(fmt::format("{}: negative size {} B", op_name(op), bytes));
  if (options.channels < 1 || options.channels > kMaxChannels)
    throw InputError(fmt::format("channels = {}: expected an integer in [1, {}]", options.channels, kMaxChannels));
  if (options.qps < 1 || options.qps > kMaxQps)
    throw InputError(fmt::format("qps = {}: expected an integer in [1, {}]", options.qps, kMaxQps));

  plan::TransferPlan plan = a->build(op, group, bytes, options, topo);
  plan.op = op_name(op);
  plan.algorithm = a->name;
  plan.bytes = bytes;
  plan.ranks = static_cast<int32_t>(group.size());
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
  }
  return "?";
}
}  // namespace detail

}  // namespace podnet::collective
