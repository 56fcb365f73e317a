#include "collective/patterns.hpp"

#include <fmt/format.h>
#include <utility>

#include "collective/plan_util.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"

namespace podnet::collective {

std::vector<int32_t> draw_derangement(int32_t n, uint64_t seed) {
  std::vector<int32_t> p(static_cast<size_t>(std::max(0, n)));
  for (int32_t i = 0; i < n; ++i) p[i] = i;
  if (n <= 1) return p;
  Rng rng = Rng(seed).stream("collective.permutation");
  for (;;) {
    for (int32_t i = 0; i < n; ++i) p[i] = i;
    for (int32_t i = n - 1; i > 0; --i)
      std::swap(p[i], p[static_cast<int32_t>(rng.below(static_cast<uint64_t>(i) + 1))]);
    bool fixed = false;
    for (int32_t i = 0; i < n && !fixed; ++i) fixed = p[i] == i;
    if (!fixed) return p;
  }
}

namespace {

plan::TransferPlan build_permutation(Op, const Group& group, Bytes bytes, const Options& o, const topology::Topology&) {
  plan::TransferPlan plan;
  const auto n = static_cast<int32_t>(group.size());
  if (n <= 1 || bytes == 0) return plan;
  const std::vector<int32_t> peer = draw_derangement(n, o.seed);
  plan.transfers.reserve(group.size());
  for (int32_t i = 0; i < n; ++i) plan.add(detail::p2p(group[i], group[peer[i]], bytes, o, 0, "perm"));
  return plan;
}

plan::TransferPlan build_incast(Op, const Group& group, Bytes bytes, const Options& o, const topology::Topology&) {
  plan::TransferPlan plan;
  const auto n = static_cast<int64_t>(group.size());
  const int64_t senders = o.incast_senders > 0 ? o.incast_senders : n - 1;
  if (senders > n - 1)
    throw InputError(fmt::format("incast: collective.incast_senders = {} needs {} GPUs (the receiver, then the "
                                 "senders), but the group has {}: list more GPUs with --gpus or lower --senders",
                                 senders, senders + 1, n));
  if (n <= 1 || bytes == 0) return plan;
  plan.transfers.reserve(static_cast<size_t>(senders));
  for (int64_t i = 1; i <= senders; ++i) plan.add(detail::p2p(group[i], group[0], bytes, o, 0, "incast"));
  return plan;
}

}  // namespace

AlgorithmInfo permutation_algorithm() {
  return {"permutation",
          "pattern: every rank sends S to one other rank, a seeded uniformly random derangement (n flows)",
          {Op::Permutation},
          build_permutation};
}

AlgorithmInfo incast_algorithm() {
  return {"incast",
          "pattern: N senders (collective.incast_senders) each send S to one receiver, the group's first GPU",
          {Op::Incast},
          build_incast};
}

}  // namespace podnet::collective
