#include "engine/packet/next_hops.hpp"

#include "core/error.hpp"

namespace podnet::engine::packet {

using topology::LinkId;
using topology::NodeId;
using topology::NodeKind;

NextHops::NextHops(const topology::Topology& t) : t_(t) {
  const bool torus = !t.torus_dims.empty();
  dragonfly_ = t.family == "dragonfly" || t.family == "dragonfly_plus";
  net_of_.assign(t.nodes.size(), -1);
  std::vector<NodeId> node_of;
  for (size_t n = 0; n < t.nodes.size(); ++n) {
    const NodeKind k = t.nodes[n].kind;
    if (k == NodeKind::Switch || (torus && k == NodeKind::Gpu)) {
      net_of_[n] = static_cast<int32_t>(node_of.size());
      node_of.push_back(static_cast<NodeId>(n));
    }
  }
  const auto net = static_cast<int32_t>(node_of.size());
  group_.resize(net);
  adj_off_.assign(net + 1, 0);
  for (int32_t i = 0; i < net; ++i) {
    const NodeId u = node_of[i];
    group_[i] = t.nodes[u].group;
    auto [b, e] = t.incident(u);
    for (const LinkId* l = b; l != e; ++l) {
      const int32_t v = net_of_[t.other_end(*l, u)];
      if (v < 0) continue;
      adj_dir_.push_back(routing::dir_link(*l, u, t));
      adj_to_.push_back(v);
    }
    adj_off_[i + 1] = static_cast<int32_t>(adj_dir_.size());
  }
  tables_.resize(4 * static_cast<size_t>(net));
  up_.assign(2 * t.links.size(), 1);
}

void NextHops::set_link_up(LinkId l, bool up) {
  set_dir_up(2 * l, up);
  set_dir_up(2 * l + 1, up);
}

void NextHops::set_dir_up(routing::DirLink d, bool up) {
  if ((up_[d] != 0) == up) return;
  up_[d] = up ? 1 : 0;
  down_ += up ? -1 : 1;
  for (size_t i = 0; i < tables_.size(); i += 4) {  // the live tables; the `all` ones do not change
    tables_[i].clear();
    tables_[i + 1].clear();
  }
}

const int16_t* NextHops::table(int32_t target, bool restricted, bool all) {
  all = all || down_ == 0;  // without failures both views are one
  std::vector<int16_t>& tab = tables_[4 * static_cast<size_t>(target) + (all ? 2 : 0) + (restricted ? 1 : 0)];
  if (!tab.empty()) return tab.data();
  tab.assign(group_.size(), -1);
  tab[target] = 0;
  bfs_.assign(1, target);
  const int32_t tg = group_[target];
  for (size_t q = 0; q < bfs_.size(); ++q) {
    const int32_t v = bfs_[q];
    // the neighbours u of v are those with a link u -> v (the reverse of v's edge)
    for (int32_t i = adj_off_[v]; i < adj_off_[v + 1]; ++i) {
      const int32_t u = adj_to_[i];
      if (tab[u] >= 0 || !usable(adj_dir_[i] ^ 1, all)) continue;  // travel u -> v: the reverse
      if (restricted && group_[u] != group_[v] && group_[v] != tg) continue;
      tab[u] = static_cast<int16_t>(tab[v] + 1);
      bfs_.push_back(u);
    }
  }
  return tab.data();
}

void NextHops::gather(NodeId u_node, NodeId target_node, std::vector<routing::DirLink>& out, bool all) {
  out.clear();
  const int32_t u = net_of_[u_node], target = net_of_[target_node];
  if (u < 0 || target < 0) throw Error("packet engine: internal: per-packet routing outside the network");
  bool restricted = dragonfly_;
  const int16_t* tab = table(target, restricted, all);
  if (tab[u] < 0 && restricted) {
    restricted = false;
    tab = table(target, false, all);
  }
  if (tab[u] < 0 && down_ > 0) return;  // cut off by failed links
  if (tab[u] <= 0) throw Error("packet engine: internal: no next hop toward the target");
  const int want = tab[u] - 1;
  const int32_t tg = group_[target];
  for (int32_t i = adj_off_[u]; i < adj_off_[u + 1]; ++i) {
    const int32_t v = adj_to_[i];
    if (tab[v] != want || !usable(adj_dir_[i], all)) continue;
    if (restricted && group_[v] != group_[u] && group_[v] != tg) continue;
    out.push_back(adj_dir_[i]);
  }
  if (out.empty()) throw Error("packet engine: internal: empty next-hop set");
}

}  // namespace podnet::engine::packet
