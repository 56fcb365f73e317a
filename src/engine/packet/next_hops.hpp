// Equal-cost next hops for per-packet routing (adaptive, spray).
//
// routing::Router chooses one path per flow; per-packet policies need, at
// every network node u a packet reaches, the set of equal-cost next hops
// toward its target T. They come from the Router's own network graph and
// distance tables (routing/network_graph.hpp), so the two never disagree:
//   N_T(u) = { directed links u -> v between network nodes : d_T(v) = d_T(u) - 1 }
// in the node's incident-link order. On dragonfly families the search is
// restricted as in router.hpp (local-global-local); a node the restricted
// search cannot reach falls back to the unrestricted table.
// Failures: the graph's link state is the Router's (Router::set_dir_up), so
// a direction routing has forgotten is not a next hop.
// gather(.., all = true) searches the whole graph instead, ignoring link
// state: the engine uses it for a packet that the live graph cannot bring to
// its target any more (one already on its way over a drained link).
#pragma once

#include <cstdint>
#include <vector>

#include "routing/network_graph.hpp"
#include "routing/route.hpp"
#include "topology/topology.hpp"

namespace podnet::engine::packet {

class NextHops {
 public:
  NextHops(const topology::Topology& t, routing::NetworkGraph& graph);
  bool is_net(topology::NodeId n) const { return g_.is_net(n); }
  // N_T(u) for network nodes u != target into `out` (cleared first); empty if
  // u cannot reach the target (only possible with links down).
  void gather(topology::NodeId u, topology::NodeId target, std::vector<routing::DirLink>& out, bool all = false);
  // Builds now the tables gather() would build on first use toward `target` (the routing graph builds them
  // lazily, which threads must not do at once: the partitioned engine prepares every QP's target).
  void prepare(topology::NodeId target);

 private:
  routing::NetworkGraph& g_;
  bool dragonfly_ = false;
};

}  // namespace podnet::engine::packet
