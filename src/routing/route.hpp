// A route as the engines see it: the directed links a flow's bytes cross,
// each with the fraction of the flow's bytes that crosses it.
//
// Directed link id. Every Topology link is full duplex; its two directions
// are separate resources (capacity is per direction), numbered
//   DirLink d = 2 * link + (0 if traversed a -> b, 1 if b -> a),
// so link_of(d) = d / 2 and the direction is d & 1. A topology with L links
// has 2L directed links, ids 0 .. 2L - 1 (dense: engines index arrays by it).
//
// PathPart. fraction = share of the flow's bytes crossing that directed link:
// 1.0 on every part of a single-path route (ecmp, adaptive, static,
// dimension_order, minimal, valiant, ugal); with per-packet spraying a
// fraction f in (0, 1], and at every node (other than the two ends) the
// fractions in equal the fractions out. A directed link appears at most once
// in a route. A route covers the whole GPU-to-GPU journey: NVLink and PCIe
// links inside the servers as well as the network links.
#pragma once

#include <cstdint>
#include <vector>

#include "topology/topology.hpp"

namespace podnet::routing {

using DirLink = int32_t;

struct PathPart {
  DirLink link = 0;
  double fraction = 1.0;
};

// The direction of `link` that leaves `from` (which must be one of its ends).
inline DirLink dir_link(topology::LinkId link, topology::NodeId from, const topology::Topology& t) {
  return 2 * link + (t.links[link].a == from ? 0 : 1);
}
inline topology::LinkId link_of(DirLink d) { return d >> 1; }
// The node a directed link leaves from / enters.
inline topology::NodeId dir_from(DirLink d, const topology::Topology& t) {
  const auto& l = t.links[d >> 1];
  return (d & 1) ? l.b : l.a;
}
inline topology::NodeId dir_to(DirLink d, const topology::Topology& t) {
  const auto& l = t.links[d >> 1];
  return (d & 1) ? l.a : l.b;
}
inline int32_t dir_link_count(const topology::Topology& t) { return static_cast<int32_t>(2 * t.links.size()); }

}  // namespace podnet::routing
