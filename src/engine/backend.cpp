#include "engine/backend.hpp"

namespace podnet::engine {

std::string dir_link_name(const topology::Topology& topo, routing::DirLink d) {
  const auto& l = topo.links[routing::link_of(d)];
  const bool fwd = (d & 1) == 0;
  const topology::NodeId a = fwd ? l.a : l.b, b = fwd ? l.b : l.a;
  const int32_t pa = fwd ? l.port_a : l.port_b, pb = fwd ? l.port_b : l.port_a;
  auto end = [&](topology::NodeId n, int32_t port) {
    const auto& node = topo.nodes[n];
    if (node.kind == topology::NodeKind::Switch) return node.name + ":" + topo.port_name(n, port);
    return node.name;
  };
  return end(a, pa) + " -> " + end(b, pb);
}

}  // namespace podnet::engine
