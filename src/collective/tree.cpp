#include "collective/tree.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "collective/plan_util.hpp"
#include "collective/ring_order.hpp"

namespace podnet::collective {

std::vector<int32_t> btree_parents(int32_t n) {
  std::vector<int32_t> p(std::max(n, 0), -1);
  for (int32_t i = 1; i < n; ++i) {
    const int32_t bit = i & -i;
    int64_t up = (i ^ bit) | (static_cast<int64_t>(bit) << 1);
    if (up >= n) up = i ^ bit;
    p[i] = static_cast<int32_t>(up);
  }
  return p;
}

std::array<std::vector<int32_t>, 2> dtree_parents(int32_t n) {
  std::array<std::vector<int32_t>, 2> t;
  t[0] = btree_parents(n);
  t[1].assign(std::max(n, 0), -1);
  for (int32_t i = 0; i < n; ++i) {
    if (n % 2 == 0) {  // mirror
      const int32_t u = t[0][n - 1 - i];
      t[1][i] = u < 0 ? -1 : n - 1 - u;
    } else {  // shift by one
      const int32_t u = t[0][(i - 1 + n) % n];
      t[1][i] = u < 0 ? -1 : (u + 1) % n;
    }
  }
  return t;
}

int32_t tree_depth(const std::vector<int32_t>& parents) {
  // Parents have a higher lowest set bit than their children in a btree, but
  // compute generally: memoized depth by walking up.
  const int32_t n = static_cast<int32_t>(parents.size());
  std::vector<int32_t> depth(n, -1);
  int32_t best = 0;
  for (int32_t i = 0; i < n; ++i) {
    std::vector<int32_t> path;
    int32_t j = i;
    while (j >= 0 && depth[j] < 0) path.push_back(j), j = parents[j];
    int32_t d = j < 0 ? -1 : depth[j];
    for (auto it = path.rbegin(); it != path.rend(); ++it) depth[*it] = ++d;
    best = std::max(best, depth[i]);
  }
  return best;
}

namespace {

plan::Transfer coupled(std::vector<std::pair<int32_t, int32_t>> edges, const Group& group, Bytes bytes,
                       int32_t latency_steps, const Options& o, int32_t channel, std::string label) {
  plan::Transfer t;
  t.kind = plan::TransferKind::Coupled;
  t.ranks = group;
  std::sort(t.ranks.begin(), t.ranks.end());
  t.edges = std::move(edges);
  t.bytes = bytes;
  t.latency_steps = latency_steps;
  t.qps = o.qps;
  t.channel = channel;
  t.label = std::move(label);
  return t;
}

plan::TransferPlan build(Op op, const Group& group, Bytes bytes, const Options& o, const topology::Topology& topo) {
  plan::TransferPlan plan;
  const int32_t n = static_cast<int32_t>(group.size());
  if (n <= 1 || bytes == 0) return plan;
  const auto shares = detail::split(bytes, o.channels);
  for (int32_t c = 0; c < static_cast<int32_t>(shares.size()); ++c) {
    const Group order = ring_order(group, o.order, c, topo);
    const auto halves = detail::split(shares[c], 2);
    if (op == Op::AllReduce) {
      const auto trees = dtree_parents(n);
      const int32_t steps = 2 * std::max(tree_depth(trees[0]), tree_depth(trees[1]));
      for (size_t k = 0; k < halves.size(); ++k) {
        std::vector<std::pair<int32_t, int32_t>> edges;
        edges.reserve(2 * static_cast<size_t>(n - 1));
        for (int32_t i = 0; i < n; ++i)
          if (trees[k][i] >= 0) edges.emplace_back(order[i], order[trees[k][i]]);  // up: reduce
        for (int32_t i = 0; i < n; ++i)
          if (trees[k][i] >= 0) edges.emplace_back(order[trees[k][i]], order[i]);  // down: broadcast
        plan.add(coupled(std::move(edges), group, halves[k], steps, o, c, fmt::format("ar/tree{}", k)));
      }
      continue;
    }
    // broadcast / reduce: trees over the other n-1 ranks, the root above both tree roots.
    const int32_t root = group[0];
    Group others;
    others.reserve(n - 1);
    for (int32_t r : order)
      if (r != root) others.push_back(r);
    const int32_t m = n - 1;
    const auto trees = dtree_parents(m);
    const int32_t steps = 1 + std::max(tree_depth(trees[0]), tree_depth(trees[1]));
    for (size_t k = 0; k < halves.size(); ++k) {
      std::vector<std::pair<int32_t, int32_t>> down;  // parent -> child
      down.reserve(n - 1);
      for (int32_t i = 0; i < m; ++i) down.emplace_back(trees[k][i] < 0 ? root : others[trees[k][i]], others[i]);
      if (op == Op::Reduce)
        for (auto& e : down) std::swap(e.first, e.second);
      plan.add(
          coupled(std::move(down), group, halves[k], steps, o, c, fmt::format("{}/tree{}", detail::op_code(op), k)));
    }
  }
  return plan;
}

}  // namespace

AlgorithmInfo tree_algorithm() {
  return {"tree",
          "NCCL double binary tree: two complementary pipelined trees each carrying S/2 (allreduce: reduce up + "
          "broadcast down; broadcast/reduce: the root above both trees)",
          {Op::AllReduce, Op::Broadcast, Op::Reduce},
          build};
}

}  // namespace podnet::collective
