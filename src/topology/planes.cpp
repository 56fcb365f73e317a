#include "topology/planes.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace podnet::topology {

Hardware plane_hardware(const Hardware& hw) {
  const int32_t P = hw.nic_planes;
  if (P > 1 && hw.nic_speed.bps / P > hw.port_speed.bps * (1 + 1e-9))
    throw ParamError(
        "server.nic_planes",
        fmt::format("server.nic_planes = {} gives ports of {} per NIC plane, more than switch.port_speed = "
                    "{}; expected planes of at most the switch port's speed (server.nic_planes >= {})",
                    P, format_bandwidth(Bandwidth(hw.nic_speed.bps / P)), format_bandwidth(hw.port_speed),
                    static_cast<int64_t>(std::ceil(hw.nic_speed.bps / hw.port_speed.bps - 1e-9))));
  Hardware per = hw;
  if (P > 1) per.nic_speed = Bandwidth(hw.nic_speed.bps / hw.nic_planes);
  return per;
}

void split_planes(Topology& t, const Hardware& hw, std::string_view family, bool clos) {
  const int32_t P = hw.nic_planes;
  if (P <= 1) return;
  if (!clos)
    throw ParamError("server.nic_planes",
                     fmt::format("server.nic_planes = {}: planes copy a Clos (fat_tree, rail_clos, "
                                 "tree3), not a {} fabric (expected 1)",
                                 P, family));
  const auto is_switch = [&](NodeId n) { return t.nodes[n].kind == NodeKind::Switch && t.nodes[n].network == 0; };
  // Every NIC needs exactly one switch link to split.
  std::vector<int32_t> switch_links(t.nodes.size(), 0);
  for (const Link& l : t.links) {
    if (t.nodes[l.a].kind == NodeKind::Nic && is_switch(l.b)) ++switch_links[l.a];
    if (t.nodes[l.b].kind == NodeKind::Nic && is_switch(l.a)) ++switch_links[l.b];
  }
  for (NodeId nic : t.nics)
    if (switch_links[nic] != 1)
      throw ParamError("server.nic_planes",
                       fmt::format("server.nic_planes = {}: NIC {} has {} switch links in the {} fabric; planes copy a "
                                   "fabric whose NICs have one (expected server.nic_planes = 1 here)",
                                   P, t.nodes[nic].name, switch_links[nic], family));
  const size_t nodes0 = t.nodes.size(), links0 = t.links.size();
  std::vector<NodeId> copy(nodes0 * static_cast<size_t>(P), kNone);  // [p * nodes0 + n]: plane p's copy of switch n
  for (size_t n = 0; n < nodes0; ++n) {
    if (!is_switch(static_cast<NodeId>(n))) continue;
    t.nodes[n].plane = 0;
    copy[n] = static_cast<NodeId>(n);
  }
  for (int32_t p = 1; p < P; ++p)
    for (size_t n = 0; n < nodes0; ++n) {
      if (copy[n] == kNone) continue;
      Node c = t.nodes[n];
      c.ports = 0;
      c.plane = p;
      copy[static_cast<size_t>(p) * nodes0 + n] = t.add_node(std::move(c));
    }
  for (size_t n = 0; n < t.nodes.size(); ++n)
    if (t.nodes[n].plane != kNone) t.nodes[n].name = fmt::format("p{}-{}", t.nodes[n].plane, t.nodes[n].name);
  // Links in id order, plane by plane: each copied switch gets its ports in the original's order.
  for (int32_t p = 1; p < P; ++p) {
    const size_t base = static_cast<size_t>(p) * nodes0;
    for (size_t i = 0; i < links0; ++i) {
      const Link l = t.links[i];
      const bool sa = copy[l.a] != kNone, sb = copy[l.b] != kNone;
      if (!sa && !sb) continue;
      const NodeId a = sa ? copy[base + l.a] : l.a, b = sb ? copy[base + l.b] : l.b;
      t.connect(a, b, l.capacity, l.latency, l.length_m, l.media, l.cls);
    }
  }
  t.nic_planes = P;
  t.facts.bisection_bps *= P;
  if (!t.facts.bisection_method.empty()) t.facts.bisection_method += fmt::format(", times {} planes", P);
  for (auto& s : t.facts.spare) {
    s.switches *= P;
    s.uplinks *= P;
  }
  t.facts.notes.push_back(fmt::format(
      "{} planes: each NIC's {} as {} ports of {}, port p on plane p; every plane is a copy of this {} fabric and "
      "no switch joins two planes",
      P, format_bandwidth(hw.nic_speed), P, format_bandwidth(Bandwidth(hw.nic_speed.bps / P)), family));
  const Bandwidth port(hw.nic_speed.bps / P);
  if (port.bps < hw.port_speed.bps * (1 - 1e-9))
    t.facts.notes.push_back(fmt::format(
        "each NIC's plane port runs at {}, a switch port at {}: the switches, their links and optics are counted "
        "and priced at {}, and the oversubscription counts ports, not their speed; {}",
        format_bandwidth(port), format_bandwidth(hw.port_speed), format_bandwidth(hw.port_speed),
        same_switch_with_ports_of(hw, port)));
  t.finalize();
}

std::string same_switch_with_ports_of(const Hardware& hw, Bandwidth port) {
  const double chip = static_cast<double>(hw.radix) * hw.port_speed.bps;
  const std::string ports = format_number(std::floor(chip / port.bps));
  return fmt::format("the same {} Tbps switch as {} ports of {} is switch.port_speed={} with switch.radix={}",
                     format_number(chip / 1e12), ports, format_bandwidth(port), format_bandwidth(port), ports);
}

}  // namespace podnet::topology
