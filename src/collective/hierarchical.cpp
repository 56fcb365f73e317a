#include "collective/hierarchical.hpp"

#include <fmt/format.h>

#include "collective/plan_util.hpp"
#include "collective/ring_order.hpp"
#include "core/error.hpp"

namespace podnet::collective {

namespace {

plan::TransferPlan build(Op op, const Group& group, Bytes bytes, const Options& o, const topology::Topology& topo) {
  plan::TransferPlan plan;
  const std::vector<Group> servers = group_by_server(group, o.order, topo);
  const int64_t N = static_cast<int64_t>(servers.size());
  const int64_t L = static_cast<int64_t>(servers.front().size());
  for (const auto& s : servers)
    if (static_cast<int64_t>(s.size()) != L)
      throw InputError(
          fmt::format("hierarchical allreduce needs the same number of group GPUs on every server: server {} holds {}, "
                      "server {} holds {} (use ring or tree)",
                      topo.nodes[topo.gpus[servers.front()[0]]].server, L, topo.nodes[topo.gpus[s[0]]].server,
                      s.size()));
  if (group.size() <= 1 || bytes == 0) return plan;
  const auto shares = detail::split(bytes, o.channels);
  for (int32_t c = 0; c < static_cast<int32_t>(shares.size()); ++c) {
    const Bytes sc = shares[c];
    std::vector<int32_t> phase1, phase2;
    if (L > 1)
      for (const auto& s : servers) {
        const int32_t server = topo.nodes[topo.gpus[s[0]]].server;
        phase1.push_back(plan.add(detail::ring(s, detail::scale_up(sc, L - 1, L), static_cast<int32_t>(L - 1), o, c,
                                               fmt::format("rs/nvlink/server{}", server))));
      }
    if (N > 1)
      for (int64_t r = 0; r < L; ++r) {
        Group ring;
        ring.reserve(N);
        for (const auto& s : servers) ring.push_back(s[r]);
        auto t = detail::ring(std::move(ring), detail::scale_up(sc, 2 * (N - 1), N * L),
                              static_cast<int32_t>(2 * (N - 1)), o, c, fmt::format("ar/inter/local{}", r));
        t.deps = phase1;
        phase2.push_back(plan.add(std::move(t)));
      }
    if (L > 1)
      for (const auto& s : servers) {
        const int32_t server = topo.nodes[topo.gpus[s[0]]].server;
        auto t = detail::ring(s, detail::scale_up(sc, L - 1, L), static_cast<int32_t>(L - 1), o, c,
                              fmt::format("ag/nvlink/server{}", server));
        t.deps = N > 1 ? phase2 : phase1;
        plan.add(std::move(t));
      }
  }
  return plan;
}

}  // namespace

AlgorithmInfo hierarchical_algorithm() {
  return {"hierarchical",
          "NVLink reduce-scatter in each server, one inter-server ring all-reduce per local GPU index (rail), "
          "NVLink all-gather; needs the same GPU count on every server",
          {Op::AllReduce},
          build};
}

}  // namespace podnet::collective
