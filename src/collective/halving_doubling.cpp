#include "collective/halving_doubling.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "collective/plan_util.hpp"
#include "collective/ring_order.hpp"
#include "core/error.hpp"

namespace podnet::collective {

namespace {

plan::TransferPlan build(Op op, const Group& group, Bytes bytes, const Options& o, const topology::Topology& topo) {
  plan::TransferPlan plan;
  const int32_t n = static_cast<int32_t>(group.size());
  if ((n & (n - 1)) != 0)
    throw InputError(fmt::format("halving_doubling needs a power-of-two number of GPUs, got {} (use ring or tree)", n));
  if (n <= 1 || bytes == 0) return plan;
  int32_t p = 0;
  while ((1 << p) < n) ++p;
  struct Phase {
    int32_t distance;
    int32_t halvings;  // bytes = S_c / 2^halvings
    const char* code;
  };
  std::vector<Phase> phases;
  if (op == Op::AllReduce || op == Op::ReduceScatter)
    for (int32_t k = 0; k < p; ++k) phases.push_back({n >> (k + 1), k + 1, "rs"});
  if (op == Op::AllReduce || op == Op::AllGather)
    for (int32_t j = 0; j < p; ++j) phases.push_back({1 << j, p - j, "ag"});

  const auto shares = detail::split(bytes, o.channels);
  const int64_t count = static_cast<int64_t>(shares.size()) * n * static_cast<int64_t>(phases.size());
  if (count > kMaxP2pTransfers)
    throw InputError(fmt::format("halving_doubling {} over {} GPUs with {} needs {} point-to-point "
                                 "transfers, more than {}: use the analytical engine, ring, or fewer channels/GPUs",
                                 op_name(op), n, plural(static_cast<int64_t>(shares.size()), "channel", "channels"),
                                 count, kMaxP2pTransfers));
  plan.transfers.reserve(static_cast<size_t>(count));
  for (int32_t c = 0; c < static_cast<int32_t>(shares.size()); ++c) {
    const Group order = ring_order(group, o.order, c, topo);
    // Transfers of the previous phase each position sent / received.
    std::vector<int32_t> sent(n, -1), received(n, -1);
    for (size_t ph = 0; ph < phases.size(); ++ph) {
      const Phase& f = phases[ph];
      const Bytes b = detail::scale_up(shares[c], 1, int64_t{1} << f.halvings);
      std::vector<int32_t> now_sent(n), now_received(n);
      for (int32_t i = 0; i < n; ++i) {
        const int32_t j = i ^ f.distance;
        auto t = detail::p2p(order[i], order[j], b, o, c, fmt::format("{}/hd/step{}", f.code, ph));
        for (int32_t d : {sent[i], received[i], sent[j], received[j]})
          if (d >= 0) t.deps.push_back(d);
        std::sort(t.deps.begin(), t.deps.end());
        t.deps.erase(std::unique(t.deps.begin(), t.deps.end()), t.deps.end());
        const int32_t id = plan.add(std::move(t));
        now_sent[i] = id;
        now_received[j] = id;
      }
      sent.swap(now_sent);
      received.swap(now_received);
    }
  }
  return plan;
}

}  // namespace

AlgorithmInfo halving_doubling_algorithm() {
  return {"halving_doubling",
          "Rabenseifner: reduce-scatter by recursive halving then all-gather by recursive doubling, 2 log2(n) "
          "phases of pairwise exchanges (n a power of two)",
          {Op::AllReduce, Op::ReduceScatter, Op::AllGather},
          build};
}

}  // namespace podnet::collective
