#include "collective/pairwise.hpp"

#include <fmt/format.h>

#include <cmath>

#include "collective/plan_util.hpp"
#include "core/error.hpp"

namespace podnet::collective {

namespace {

plan::TransferPlan build_alltoall(Op, const Group& group, Bytes bytes, const Options& o, const topology::Topology&) {
  plan::TransferPlan plan;
  const int64_t n = static_cast<int64_t>(group.size());
  const int64_t count = n * (n - 1);
  if (count > kMaxP2pTransfers)
    throw InputError(fmt::format("alltoall over {} GPUs needs {} point-to-point transfers, more than {}: use the "
                                 "analytical engine or fewer GPUs",
                                 n, count, kMaxP2pTransfers));
  if (n <= 1 || bytes == 0) return plan;
  const Bytes chunk = detail::scale_up(bytes, 1, n);
  plan.transfers.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t d = 1; d < n; ++d) plan.add(detail::p2p(group[i], group[(i + d) % n], chunk, o, 0, "a2a"));
  return plan;
}

plan::TransferPlan build_sendrecv(Op, const Group& group, Bytes bytes, const Options& o, const topology::Topology&) {
  plan::TransferPlan plan;
  const size_t n = group.size();
  if (n <= 1 || bytes == 0) return plan;
  for (size_t i = 0; i < n; ++i) plan.add(detail::p2p(group[i], group[(i + 1) % n], bytes, o, 0, "sr"));
  return plan;
}

}  // namespace

void scale_alltoall_nvlink(plan::TransferPlan& plan, const topology::Topology& topo) {
  // An NVSwitch server: its GPUs' NVLinks end at an NVSwitch (a torus's chip-to-chip links are not).
  const auto nvswitch_server = [&](int32_t rank) {
    const topology::NodeId g = topo.gpus[static_cast<size_t>(rank)];
    if (topo.nodes[g].server == topology::kNone) return topology::kNone;
    for (auto [l, end] = topo.incident(g); l != end; ++l)
      if (topo.links[*l].media == topology::Media::NvLink &&
          topo.nodes[topo.other_end(*l, g)].kind == topology::NodeKind::NvSwitch)
        return topo.nodes[g].server;
    return topology::kNone;
  };
  for (auto& t : plan.transfers) {
    if (t.kind != plan::TransferKind::P2p || t.bytes <= 0) continue;
    const auto a = nvswitch_server(t.ranks[0]);
    if (a == topology::kNone || a != nvswitch_server(t.ranks[1])) continue;
    t.bytes = static_cast<Bytes>(std::ceil(static_cast<double>(t.bytes) / kAlltoallNvlinkEfficiency));
  }
}

AlgorithmInfo pairwise_algorithm() {
  return {"pairwise",
          "alltoall: every rank sends S/n to every other rank, n(n-1) concurrent transfers",
          {Op::AllToAll},
          build_alltoall};
}

AlgorithmInfo p2p_algorithm() {
  return {"p2p",
          "sendrecv: rank i sends S to rank (i+1) mod n, n concurrent transfers",
          {Op::SendRecv},
          build_sendrecv};
}

}  // namespace podnet::collective
