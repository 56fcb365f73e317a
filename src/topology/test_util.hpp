// Helpers shared by the topology tests (header-only, tests only).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "topology/builders.hpp"

namespace podnet::topology::testing {

// Default hardware with a given server shape and switch radix.
inline Hardware hw_with(int gpus, int nics, int radix) {
  Hardware hw = default_hardware();
  hw.gpus_per_server = gpus;
  hw.nics_per_server = nics;
  hw.nvlink_domain = gpus;
  hw.radix = radix;
  return hw;
}

inline int64_t count_class(const Topology& t, const std::string& cls) {
  int64_t n = 0;
  for (const auto& l : t.links) n += t.link_classes[l.cls] == cls;
  return n;
}

inline std::vector<NodeId> tier(const Topology& t, int tr) {
  std::vector<NodeId> out;
  for (NodeId n = 0; n < static_cast<NodeId>(t.nodes.size()); ++n)
    if (t.nodes[n].kind == NodeKind::Switch && t.nodes[n].tier == tr) out.push_back(n);
  return out;
}

inline int64_t count_tier(const Topology& t, int tr) { return static_cast<int64_t>(tier(t, tr).size()); }

// Longest shortest path, in links between nodes of kind `through`, from each
// of `ends` to every other one (BFS from each; every end must be reachable).
inline int bfs_diameter(const Topology& t, const std::vector<NodeId>& ends, NodeKind through) {
  int best = 0;
  for (NodeId s : ends) {
    std::vector<int> dist(t.nodes.size(), -1);
    std::deque<NodeId> q{s};
    dist[s] = 0;
    while (!q.empty()) {
      NodeId u = q.front();
      q.pop_front();
      auto [b, e] = t.incident(u);
      for (auto it = b; it != e; ++it) {
        NodeId v = t.other_end(*it, u);
        if (t.nodes[v].kind != through || dist[v] >= 0) continue;
        dist[v] = dist[u] + 1;
        q.push_back(v);
      }
    }
    for (NodeId v : ends) {
      EXPECT_GE(dist[v], 0) << t.nodes[v].name << " unreachable";
      best = std::max(best, dist[v]);
    }
  }
  return best;
}

// The key of the ParamError `f` throws ("" if none).
template <class F>
std::string param_error_key(F&& f) {
  try {
    f();
  } catch (const ParamError& e) {
    return e.key();
  }
  return "";
}

}  // namespace podnet::topology::testing
