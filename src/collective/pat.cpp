#include "collective/pat.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "collective/plan_util.hpp"
#include "collective/ring_order.hpp"
#include "core/error.hpp"

namespace podnet::collective {

int64_t pat_blocks(int64_t n, int32_t p) { return (((n - 1) >> p) + 1) / 2; }

namespace {

plan::TransferPlan build(Op op, const Group& group, Bytes bytes, const Options& o, const topology::Topology& topo) {
  plan::TransferPlan plan;
  const int64_t n = static_cast<int64_t>(group.size());
  if (n <= 1 || bytes == 0) return plan;
  int32_t steps = 0;
  while ((int64_t{1} << steps) < n) ++steps;
  if (!o.coupled_steps && static_cast<int64_t>(o.channels) * n * steps > kMaxP2pTransfers)
    throw InputError(fmt::format("pat over {} GPUs with {} needs {} transfers (limit {}): use fewer GPUs "
                                 "or channels, or the ring",
                                 n, plural(o.channels, "channel", "channels"),
                                 static_cast<int64_t>(o.channels) * n * steps, kMaxP2pTransfers));
  const bool gather = op == Op::AllGather;
  const auto shares = detail::split(bytes, o.channels);
  // Position i's peer at distance d: ahead for an all-gather, behind for a reduce-scatter.
  const auto peer = [&](int64_t i, int64_t d) { return gather ? (i + d) % n : (i - d % n + n) % n; };
  if (o.coupled_steps) {
    // One transfer a step: every channel's n sends, channel c's the c-th lane of n edges (its own ring order
    // and ECMP entropy), all at one rate. A lane carries the first channel's bytes, the largest share (the
    // others are at most one byte less before scaling to the step's blocks).
    std::vector<Group> orders;
    for (int32_t c = 0; c < static_cast<int32_t>(shares.size()); ++c)
      orders.push_back(ring_order(group, o.order, c, topo));
    // Every GPU sends at every step: one sorted list, shared by the steps' copies.
    std::vector<int32_t> sorted(group.begin(), group.end());
    std::sort(sorted.begin(), sorted.end());
    const SharedVector<int32_t> ranks(std::move(sorted));
    int32_t previous_step = -1;
    for (int32_t k = 0; k < steps; ++k) {
      const int32_t p = gather ? steps - 1 - k : k;
      const int64_t d = int64_t{1} << p;
      plan::Transfer t;
      t.kind = plan::TransferKind::Coupled;
      t.bytes = detail::scale_up(shares[0], pat_blocks(n, p), n);
      t.latency_steps = 1;
      t.qps = o.qps;
      t.channel = 0;
      t.lanes = static_cast<int32_t>(orders.size());
      t.edges.reserve(orders.size() * static_cast<size_t>(n));
      for (const Group& order : orders)
        for (int64_t i = 0; i < n; ++i) t.edges.emplace_back(order[i], order[peer(i, d)]);
      t.ranks = ranks;
      t.label = fmt::format("{}/pat/d{}", detail::op_code(op), static_cast<int64_t>(d));
      if (previous_step >= 0) t.deps.push_back(previous_step);
      previous_step = plan.add(std::move(t));
    }
    return plan;
  }
  for (int32_t c = 0; c < static_cast<int32_t>(shares.size()); ++c) {
    const Group order = ring_order(group, o.order, c, topo);
    std::vector<int32_t> received(n, -1);  // per position: the transfer it received at the previous step
    for (int32_t k = 0; k < steps; ++k) {
      const int32_t p = gather ? steps - 1 - k : k;
      const int64_t d = int64_t{1} << p;
      const Bytes b = detail::scale_up(shares[c], pat_blocks(n, p), n);
      std::vector<int32_t> now(n, -1);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t to = peer(i, d);
        plan::Transfer t = detail::p2p(order[i], order[to], b, o, c,
                                       fmt::format("{}/pat/d{}", detail::op_code(op), static_cast<int64_t>(d)));
        if (received[i] >= 0) t.deps.push_back(received[i]);
        now[to] = plan.add(std::move(t));
      }
      received = now;
    }
  }
  return plan;
}

}  // namespace

AlgorithmInfo pat_algorithm() {
  return {"pat",
          "NCCL's PAT (one GPU per node): binomial trees, log2 n steps, the farthest hop carrying the least data "
          "(all-gather; reduce-scatter the reverse)",
          {Op::AllGather, Op::ReduceScatter},
          build};
}

}  // namespace podnet::collective
