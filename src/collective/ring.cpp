#include "collective/ring.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "collective/plan_util.hpp"
#include "collective/ring_order.hpp"

namespace podnet::collective {

namespace {

plan::TransferPlan build(Op op, const Group& group, Bytes bytes, const Options& o, const topology::Topology& topo) {
  plan::TransferPlan plan;
  const int64_t n = static_cast<int64_t>(group.size());
  if (n <= 1 || bytes == 0) return plan;
  const auto shares = detail::split(bytes, o.channels);
  for (int32_t c = 0; c < static_cast<int32_t>(shares.size()); ++c) {
    const Bytes sc = shares[c];
    Group order = ring_order(group, o.order, c, topo);
    const std::string label = fmt::format("{}/ring", detail::op_code(op));
    switch (op) {
      case Op::AllReduce:
        plan.add(detail::ring(std::move(order), detail::scale_up(sc, 2 * (n - 1), n), static_cast<int32_t>(2 * (n - 1)),
                              o, c, label));
        break;
      case Op::AllGather:
      case Op::ReduceScatter:
        plan.add(
            detail::ring(std::move(order), detail::scale_up(sc, n - 1, n), static_cast<int32_t>(n - 1), o, c, label));
        break;
      case Op::Broadcast:
      case Op::Reduce: {
        // Rotate so the root comes first; a reduce flows the other way, ending at the root.
        auto root = std::find(order.begin(), order.end(), group[0]);
        std::rotate(order.begin(), root, order.end());
        if (op == Op::Reduce) std::reverse(order.begin(), order.end());
        plan.add(detail::ring(std::move(order), sc, static_cast<int32_t>(n - 1), o, c, label, /*open=*/true));
        break;
      }
      default: break;  // not registered for other ops
    }
  }
  return plan;
}

}  // namespace

AlgorithmInfo ring_algorithm() {
  return {"ring",
          "NCCL ring: one pipelined ring per channel; allreduce moves 2(n-1)/n*S per hop, allgather/reducescatter "
          "(n-1)/n*S; broadcast/reduce as an open chain from/to the root",
          {Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::Broadcast, Op::Reduce},
          build};
}

}  // namespace podnet::collective
