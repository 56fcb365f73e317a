// Equal-cost next hops for per-packet routing (adaptive, spray).
//
// routing::Router chooses one path per flow; per-packet policies need, at
// every network node u a packet reaches, the set of equal-cost next hops
// toward its target T. This class computes them the way router.hpp defines
// them, without touching the Router:
//   d_T(u)  = hop distance from network node u to T (breadth-first search
//             backward from T over links between network nodes; int16,
//             -1 unreachable), one table per target, built lazily and kept;
//   N_T(u)  = { directed links u -> v between network nodes : d_T(v) = d_T(u) - 1 }
//             in the node's incident-link order.
// Network nodes are the switches (on a torus the GPUs). On dragonfly families
// the search is restricted as in router.hpp (local-global-local: a link
// u -> v is used only if group(u) = group(v) or v is in T's group); a node
// the restricted search cannot reach falls back to the unrestricted table.
// Memory: 2 bytes x network nodes per target used (a k = 32 fat-tree: 1,280
// switches x 512 leaf targets = 1.3 MB).
// Failures: set_link_up(l, false) takes link l out of the live graph (both
// directions; the tables are rebuilt lazily without it), set_dir_up(d, false)
// one direction, as Router does.
// gather(.., all = true) searches the whole graph instead, ignoring link
// state: the engine uses it for a packet that the live graph cannot bring to
// its target any more (one already on its way over a drained link).
#pragma once

#include <cstdint>
#include <vector>

#include "routing/route.hpp"
#include "topology/topology.hpp"

namespace podnet::engine::packet {

class NextHops {
 public:
  explicit NextHops(const topology::Topology& t);
  bool is_net(topology::NodeId n) const { return net_of_[n] >= 0; }
  // N_T(u) for network nodes u != target into `out` (cleared first); empty if
  // u cannot reach the target (only possible with links down).
  void gather(topology::NodeId u, topology::NodeId target, std::vector<routing::DirLink>& out, bool all = false);
  void set_link_up(topology::LinkId l, bool up);  // both directions
  void set_dir_up(routing::DirLink d, bool up);
  bool any_down() const { return down_ > 0; }

 private:
  const int16_t* table(int32_t target, bool restricted, bool all);
  bool usable(routing::DirLink d, bool all) const { return all || up_[d] != 0; }
  const topology::Topology& t_;
  bool dragonfly_ = false;
  std::vector<int32_t> net_of_;           // node -> network index or -1
  std::vector<int32_t> group_;            // network index -> group
  std::vector<int32_t> adj_off_;          // CSR over network indices
  std::vector<routing::DirLink> adj_dir_; // leaving the node
  std::vector<int32_t> adj_to_;           // network index of the other end
  std::vector<std::vector<int16_t>> tables_;  // [4 * target + 2 * all + restricted]
  std::vector<char> up_;                      // per directed link
  int32_t down_ = 0;                          // directions down
  std::vector<int32_t> bfs_;
};

}  // namespace podnet::engine::packet
