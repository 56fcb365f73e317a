// Static check for cyclic buffer dependencies (CBD), the precondition of a
// PFC deadlock.
//
// With PFC, a packet held in the ingress buffer of directed link x = (w -> u)
// waits for buffer on the link it leaves by, y = (u -> v): x depends on y.
// If the dependencies of the routes in use form a cycle, PAUSE frames can
// hold every buffer of the cycle at once and nothing moves: a deadlock
// (Dally & Seitz 1987 for wormhole networks; Hu et al., "Deadlocks in
// Datacenter Networks: Why Do They Form, and How to Avoid Them", HotNets
// 2016, and Guo et al., "RDMA over Commodity Ethernet at Scale", SIGCOMM
// 2016, for PFC fabrics). Up/down routing in a Clos has no cycle (a route
// never turns from down to up); rerouting around failures, torus rings and
// dragonfly global links without virtual channels can.
//
// Routes considered: every shortest path toward every endpoint's attachment
// (the ECMP DAG of routing/network_graph.hpp with the current link state; on
// dragonfly families the local-global-local restriction the router uses).
// That covers ecmp, adaptive and spray exactly; dimension_order and static
// use a subset (a cycle found may be one they never take); valiant and ugal
// add non-minimal paths not covered here. One lossless class, no virtual
// channels (one buffer per ingress port and class).
//
// Graph. For a target T and network node u, every in-link w -> u with
// d_T(w) = d_T(u) + 1 depends on every out-link u -> v with
// d_T(v) = d_T(u) - 1. Rather than |in| x |out| edges per (u, T), each
// distinct (u, in-set, out-set) becomes one hub node (in -> hub -> out),
// deduplicated by hashing the sets. A cycle is searched by iterative
// depth-first search; its directed links are returned in order.
// Cost: O(targets x sum of degrees) to build (4,096-GPU torus: 4,096 x
// 24,576), memory O(distinct hubs x degree).
#pragma once

#include <cstdint>
#include <vector>

#include "routing/route.hpp"
#include "topology/topology.hpp"

namespace podnet::routing {
class NetworkGraph;
}

namespace podnet::diagnose {

struct CbdResult {
  std::vector<routing::DirLink> cycle;  // empty: no cyclic dependency
  int64_t targets = 0;                  // destinations whose routes were checked
  int64_t dependencies = 0;             // distinct (node, in-set, out-set) hubs
  int64_t links = 0;                    // directed network links in the dependency graph
};

// `graph` carries the link state (links down after failures are excluded).
// Dragonfly families (t.family dragonfly, dragonfly_plus) use the restricted search.
CbdResult find_cbd(const topology::Topology& t, routing::NetworkGraph& graph);

}  // namespace podnet::diagnose
