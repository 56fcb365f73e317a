#include "collective/nvls.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "collective/plan_util.hpp"
#include "collective/ring_order.hpp"
#include "core/error.hpp"

namespace podnet::collective {

namespace {

// The NVSwitch a GPU hangs off (kNone if none).
topology::NodeId nvswitch_of(const topology::Topology& topo, topology::NodeId gpu) {
  for (auto [l, end] = topo.incident(gpu); l != end; ++l)
    if (topo.links[*l].media == topology::Media::NvLink &&
        topo.nodes[topo.other_end(*l, gpu)].kind == topology::NodeKind::NvSwitch)
      return topo.other_end(*l, gpu);
  return topology::kNone;
}

plan::TransferPlan build(Op op, const Group& group, Bytes bytes, const Options& o, const topology::Topology& topo) {
  plan::TransferPlan plan;
  const int64_t n = static_cast<int64_t>(group.size());
  const topology::NodeId sw = nvswitch_of(topo, topo.gpus[group[0]]);
  for (int32_t r : group) {
    const auto& g = topo.nodes[topo.gpus[r]];
    const topology::NodeId mine = nvswitch_of(topo, topo.gpus[r]);
    if (mine == topology::kNone) throw InputError(fmt::format("nvls needs GPUs on an NVSwitch: {} has none", g.name));
    if (mine != sw)
      throw InputError(fmt::format("nvls over one NVSwitch domain only (multi-node NVLS needs CollNet): {} and {} are "
                                   "on different NVSwitches",
                                   topo.nodes[topo.gpus[group[0]]].name, g.name));
  }
  if (n <= 1 || bytes == 0 || op != Op::AllReduce) return plan;
  const auto shares = detail::split(bytes, o.channels);
  // eff = 0.85 (Hopper) = 17/20; 0.74 (Blackwell) = 37/50.
  const int64_t eff_num = o.arch == Arch::Blackwell ? 37 : 17, eff_den = o.arch == Arch::Blackwell ? 50 : 20;
  for (int32_t c = 0; c < static_cast<int32_t>(shares.size()); ++c) {
    const Group order = ring_order(group, o.order, c, topo);
    plan::Transfer t;
    t.kind = plan::TransferKind::Coupled;
    t.ranks = group;
    std::sort(t.ranks.begin(), t.ranks.end());
    for (int64_t i = 0; i < n; ++i) t.edges.emplace_back(order[i], order[(i + 1) % n]);
    t.bytes = detail::scale_up(shares[c], (n + 1) * eff_den, n * eff_num);
    t.latency_steps = 2;
    t.qps = o.qps;
    t.channel = c;
    t.label = "ar/nvls";
    plan.add(std::move(t));
  }
  return plan;
}

}  // namespace

AlgorithmInfo nvls_algorithm() {
  return {"nvls",
          "NVLink SHARP (one NVSwitch server): the switch reduces and multicasts, each GPU link carries (n+1)/n*S "
          "per direction at NCCL's NVLS efficiency (0.85 Hopper)",
          {Op::AllReduce},
          build};
}

}  // namespace podnet::collective
