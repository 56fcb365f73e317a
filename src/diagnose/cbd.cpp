#include "diagnose/cbd.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/rng.hpp"
#include "diagnose/probe.hpp"
#include "routing/network_graph.hpp"

namespace podnet::diagnose {

using routing::DirLink;
using topology::NodeId;

CbdResult find_cbd(const topology::Topology& t, routing::NetworkGraph& g) {
  CbdResult r;
  const bool restricted = t.group_minimal;
  const auto D = static_cast<int32_t>(2 * t.links.size());
  // Targets: the network nodes endpoints attach to.
  std::set<int32_t> targets;
  for (NodeId ep : probe_endpoints(t)) {
    if (g.is_net(ep)) {
      targets.insert(g.net_of(ep));
      continue;
    }
    auto [b, e] = t.incident(ep);
    for (auto it = b; it != e; ++it)
      if (g.is_net(t.other_end(*it, ep))) {
        targets.insert(g.net_of(t.other_end(*it, ep)));
        break;
      }
  }
  // Graph nodes: directed links 0..D-1, then hubs D...
  std::vector<std::vector<int32_t>> out(D);              // adjacency of directed links (to hubs)
  std::vector<std::vector<int32_t>> hub_out;             // adjacency of hubs (to directed links)
  std::map<std::pair<int32_t, uint64_t>, int32_t> hubs;  // (node, signature) -> hub
  std::vector<char> used(D, 0);
  std::vector<int32_t> in, outs;
  for (int32_t T : targets) {
    ++r.targets;
    const int16_t* d = g.table(T, restricted, false);
    for (int32_t u = 0; u < g.size(); ++u) {
      if (d[u] <= 0) continue;  // the target itself, or unreachable
      in.clear();
      outs.clear();
      for (int32_t k = g.edge_begin(u); k < g.edge_end(u); ++k) {
        const auto& ed = g.edge(k);
        if (d[ed.to] == d[u] - 1 && g.dir_up(ed.dir)) outs.push_back(ed.dir);
        // The reverse direction v -> u feeds u when v routes toward T through u.
        if (d[ed.to] == d[u] + 1 && g.dir_up(ed.dir ^ 1)) {
          if (restricted && g.group(u) != g.group(ed.to) && g.group(u) != g.group(T)) continue;
          in.push_back(ed.dir ^ 1);
        }
      }
      if (restricted) {  // out-links must respect local-global-local too
        size_t w = 0;
        for (DirLink x : outs) {
          const int32_t v = g.net_of(routing::dir_to(x, t));
          if (g.group(v) == g.group(u) || g.group(v) == g.group(T)) outs[w++] = x;
        }
        outs.resize(w);
      }
      if (in.empty() || outs.empty()) continue;
      uint64_t sig = 0x9e3779b97f4a7c15ULL;
      for (DirLink x : in) sig = mix64(sig ^ static_cast<uint64_t>(x));
      sig = mix64(sig ^ 0xabcdefULL);
      for (DirLink x : outs) sig = mix64(sig ^ static_cast<uint64_t>(x));
      auto [it, fresh] = hubs.emplace(std::make_pair(u, sig), D + static_cast<int32_t>(hub_out.size()));
      if (!fresh) continue;
      hub_out.emplace_back(outs);
      for (DirLink x : in) {
        out[x].push_back(it->second);
        used[x] = 1;
      }
      for (DirLink x : outs) used[x] = 1;
    }
  }
  r.dependencies = static_cast<int64_t>(hub_out.size());
  for (char c : used) r.links += c;

  // Iterative DFS with colours; on a back edge, the cycle is the stack from that node.
  const auto N = static_cast<int32_t>(D + hub_out.size());
  const auto succ = [&](int32_t v) -> const std::vector<int32_t>& { return v < D ? out[v] : hub_out[v - D]; };
  std::vector<uint8_t> colour(N, 0);  // 0 new, 1 on stack, 2 done
  std::vector<std::pair<int32_t, size_t>> stack;
  for (int32_t s = 0; s < N && r.cycle.empty(); ++s) {
    if (colour[s] != 0 || succ(s).empty()) continue;
    stack.push_back({s, 0});
    colour[s] = 1;
    while (!stack.empty() && r.cycle.empty()) {
      auto& [v, i] = stack.back();
      const auto& next = succ(v);
      if (i == next.size()) {
        colour[v] = 2;
        stack.pop_back();
        continue;
      }
      const int32_t w = next[i++];
      if (colour[w] == 0) {
        colour[w] = 1;
        stack.push_back({w, 0});
      } else if (colour[w] == 1) {
        size_t from = stack.size();
        while (from > 0 && stack[from - 1].first != w) --from;
        for (size_t k = from - 1; k < stack.size(); ++k)
          if (stack[k].first < D) r.cycle.push_back(stack[k].first);
      }
    }
  }
  return r;
}

}  // namespace podnet::diagnose
