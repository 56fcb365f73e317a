#include "engine/packet/next_hops.hpp"

#include "core/error.hpp"

namespace podnet::engine::packet {

using topology::NodeId;

NextHops::NextHops(const topology::Topology& t, routing::NetworkGraph& graph)
    : g_(graph), dragonfly_(t.group_minimal) {}

void NextHops::prepare(NodeId target_node) {
  const int32_t target = g_.net_of(target_node);
  if (target < 0) return;
  g_.table(target, false, false);
  if (dragonfly_) g_.table(target, true, false);
}

void NextHops::gather(NodeId u_node, NodeId target_node, std::vector<routing::DirLink>& out, bool all) {
  out.clear();
  const int32_t u = g_.net_of(u_node), target = g_.net_of(target_node);
  if (u < 0 || target < 0) throw Error("packet engine: internal: per-packet routing outside the network");
  bool restricted = dragonfly_;
  const int16_t* tab = g_.table(target, restricted, all);
  if (tab[u] < 0 && restricted) {
    restricted = false;
    tab = g_.table(target, false, all);
  }
  if (tab[u] < 0 && g_.any_down()) return;  // cut off by failed links
  if (tab[u] <= 0) throw Error("packet engine: internal: no next hop toward the target");
  const int want = tab[u] - 1;
  const int32_t gu = g_.group(u), tg = g_.group(target);
  for (int32_t i = g_.edge_begin(u); i < g_.edge_end(u); ++i) {
    const routing::NetworkGraph::Edge& e = g_.edge(i);
    if (tab[e.to] != want || !(all || g_.dir_up(e.dir))) continue;
    const int32_t gv = g_.group(e.to);
    if (restricted && gv != gu && gv != tg) continue;
    out.push_back(e.dir);
  }
  if (out.empty()) throw Error("packet engine: internal: empty next-hop set");
}

}  // namespace podnet::engine::packet
