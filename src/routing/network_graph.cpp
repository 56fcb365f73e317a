#include "routing/network_graph.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"

namespace podnet::routing {

using topology::LinkId;
using topology::NodeId;
using topology::NodeKind;

NetworkGraph::NetworkGraph(const topology::Topology& t) {
  const size_t nn = t.nodes.size();
  up_.assign(t.links.size(), 1);
  dir_up_.assign(2 * t.links.size(), 1);
  net_of_.assign(nn, -1);
  if (!t.torus_dims.empty()) {
    node_of_ = t.gpus;  // network index = rank
  } else {
    for (size_t n = 0; n < nn; ++n)
      if (t.nodes[n].kind == NodeKind::Switch) node_of_.push_back(static_cast<NodeId>(n));
  }
  const auto net = static_cast<int32_t>(node_of_.size());
  group_.resize(net);
  for (int32_t i = 0; i < net; ++i) {
    net_of_[node_of_[i]] = i;
    group_[i] = t.nodes[node_of_[i]].group;
  }
  off_.assign(net + 1, 0);
  for (int32_t i = 0; i < net; ++i) {
    const NodeId u = node_of_[i];
    auto [b, e] = t.incident(u);
    for (const LinkId* l = b; l != e; ++l) {
      const int32_t v = net_of_[t.other_end(*l, u)];
      if (v >= 0) edges_.push_back({*l, dir_link(*l, u, t), v});
    }
    off_[i + 1] = static_cast<int32_t>(edges_.size());
  }
  tables_.resize(4 * (static_cast<size_t>(net) + static_cast<size_t>(std::max(t.groups, 0))));
  // Twins: nodes grouped by their sorted, distinct neighbours (a hash finds the candidates, the lists decide).
  twin_.resize(net);
  std::vector<std::vector<int32_t>> nbrs(net);
  std::unordered_map<uint64_t, std::vector<int32_t>> by_hash;
  for (int32_t i = 0; i < net; ++i) {
    std::vector<int32_t>& n = nbrs[i];
    for (int32_t e = off_[i]; e < off_[i + 1]; ++e) n.push_back(edges_[e].to);
    std::sort(n.begin(), n.end());
    n.erase(std::unique(n.begin(), n.end()), n.end());
    uint64_t h = n.size();
    for (int32_t v : n) h = (h ^ static_cast<uint64_t>(v)) * 0x100000001b3ULL;
    twin_[i] = i;
    std::vector<int32_t>& same = by_hash[h];
    for (int32_t j : same)
      if (nbrs[j] == n) {
        twin_[i] = j;
        break;
      }
    if (twin_[i] == i) same.push_back(i);
  }
}

bool NetworkGraph::set_dir_up(DirLink d, bool up) {
  if ((dir_up_[d] != 0) == up) return false;
  dir_up_[d] = up ? 1 : 0;
  down_dirs_ += up ? -1 : 1;
  const LinkId l = link_of(d);
  const bool both = dir_up_[2 * l] && dir_up_[2 * l + 1];
  if ((up_[l] != 0) != both) {
    up_[l] = both ? 1 : 0;
    down_links_ += both ? -1 : 1;
  }
  for (size_t i = 0; i < tables_.size(); i += 4) {  // the live tables; the `all` ones do not change
    tables_[i].clear();
    tables_[i + 1].clear();
  }
  return true;
}

const int16_t* NetworkGraph::table(int32_t key, bool restricted, bool all) {
  all = all || down_dirs_ == 0;  // without failures both views are one
  std::vector<int16_t>& tab = tables_[4 * static_cast<size_t>(key) + (all ? 2 : 0) + (restricted ? 1 : 0)];
  if (!tab.empty()) return tab.data();
  const int32_t net = size();
  if (key < net && !restricted && down_dirs_ == 0 && twin_[key] != key) {  // a twin's table, two entries swapped
    const int32_t first = twin_[key];
    const int16_t* of = table(first, false, all);  // tables_ never grows: `tab` stays where it is
    tab.assign(of, of + net);
    std::swap(tab[first], tab[key]);
    return tab.data();
  }
  tab.assign(net, -1);
  bfs_.clear();
  int32_t group = -1;
  if (key < net) {
    tab[key] = 0;
    bfs_.push_back(key);
    group = group_[key];
  } else {
    group = key - net;
    for (int32_t u = 0; u < net; ++u)
      if (group_[u] == group) {
        tab[u] = 0;
        bfs_.push_back(u);
      }
  }
  // Reverse search: u is one hop from v when the link u -> v is usable (and, in
  // the restricted dragonfly search, stays in u's group or enters the target's).
  for (size_t q = 0; q < bfs_.size(); ++q) {
    const int32_t v = bfs_[q];
    const int dv = tab[v];
    if (dv == std::numeric_limits<int16_t>::max()) throw Error("routing: a shortest path exceeds 32767 hops");
    for (int32_t i = off_[v]; i < off_[v + 1]; ++i) {
      const Edge& ed = edges_[i];
      const int32_t u = ed.to;
      if (tab[u] >= 0 || (!all && !dir_up_[ed.dir ^ 1])) continue;  // travel u -> v: the reverse of ed
      if (restricted && group_[u] != group_[v] && group_[v] != group) continue;
      tab[u] = static_cast<int16_t>(dv + 1);
      bfs_.push_back(u);
    }
  }
  return tab.data();
}

}  // namespace podnet::routing
