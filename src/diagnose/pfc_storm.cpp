#include "diagnose/pfc_storm.hpp"

#include "routing/route.hpp"

namespace podnet::diagnose {

std::vector<PfcStorm> find_pfc_storms(const topology::Topology& t, const std::vector<PortPause>& ports,
                                      double observed_s, const StormOptions& o) {
  std::vector<PfcStorm> out;
  if (observed_s <= 0) return out;
  const auto D = static_cast<int32_t>(std::min<size_t>(ports.size(), static_cast<size_t>(routing::dir_link_count(t))));
  const auto paused = [&](int32_t d) { return ports[d].paused_s >= o.tree_share * observed_s; };
  // Ports entering each node (a switch's ingress links), for the walk upstream.
  std::vector<std::vector<int32_t>> into(t.nodes.size());
  for (int32_t d = 0; d < D; ++d) into[routing::dir_to(d, t)].push_back(d);
  for (int32_t d = 0; d < D; ++d) {
    const topology::NodeId n = routing::dir_to(d, t);
    if (t.nodes[n].kind == topology::NodeKind::Switch || t.nodes[n].kind == topology::NodeKind::NvSwitch) continue;
    if (ports[d].paused_s < o.source_share * observed_s || ports[d].pause_rx == 0) continue;
    PfcStorm s;
    s.nic = n;
    s.port = d;
    s.pause_frames = ports[d].pause_rx;
    s.paused_s = ports[d].paused_s;
    s.share = ports[d].paused_s / observed_s;
    std::vector<char> seen(D, 0);
    seen[d] = 1;
    s.tree.push_back({d, 0, ports[d].paused_s});
    for (size_t i = 0; i < s.tree.size(); ++i) {
      const PausedPort p = s.tree[i];
      const topology::NodeId a = routing::dir_from(p.link, t);
      if (t.nodes[a].kind != topology::NodeKind::Switch) continue;  // only a switch backs up into its ingress ports
      for (int32_t e : into[a]) {
        if (seen[e] || !paused(e) || e == (p.link ^ 1)) continue;
        seen[e] = 1;
        s.tree.push_back({e, p.depth + 1, ports[e].paused_s});
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace podnet::diagnose
