// NetworkGraph: the network part of a topology as one CSR graph, the state of
// every direction of every link, and hop-distance tables toward targets; the
// one graph behind the Router (router.hpp) and the packet engine's per-packet
// next hops (engine/packet/next_hops.hpp).
//
// Network nodes are the switches (on a torus the GPUs, network index = rank;
// elsewhere switches in node-id order). Edges of a node u: the links between
// u and another network node, in u's incident-link order (so a parallel link
// between the same two switches is a distinct edge), each with the directed
// link leaving u.
// Link state: every directed link of the topology is up or down
// (set_dir_up); a link is up when both directions are.
// Distance tables: for a target T (one network node, or every node of a
// group) a breadth-first search backward from T gives the hop distance d_T(u)
// of every network node (int16, -1 unreachable): u is one hop from v when
// the directed link u -> v is usable. Two views: `live` (only directions up)
// and `all` (every link, whatever its state: the packet engine uses it for a
// packet already on its way over a drained link); without a direction down
// they are one table. Restricted (dragonfly families, Kim et al. 2008
// local-global-local): the search toward T in group G_T uses an edge u -> v
// only if group(u) = group(v) or group(v) = G_T. Tables are built lazily and
// kept until a direction changes state (then the live ones are dropped).
// Memory: 2 bytes x network nodes per table built.
// Twins: nodes with the same set of neighbours (the leaves of one rail plane
// in a pod, each wired to the same spines). With every direction up, for
// twins T and T' and any other node u, d_T(u) = d_T'(u): a shortest path to T
// enters it from a neighbour of T, which is a neighbour of T' too. So the
// unrestricted table of T' is the table of its first twin with the two
// entries of T and T' swapped: O(nodes) instead of a search over every edge
// (a Clos of 131,072 GPUs has 2,048 leaf targets and 640,000 edges: the
// searches grew with the square of the fabric). The same holds for next hops
// (router.hpp, "Cost").
// Determinism: tables depend only on the graph and the link state; edge
// order is the topology's incident-link order.
#pragma once

#include <cstdint>
#include <vector>

#include "routing/route.hpp"
#include "topology/topology.hpp"

namespace podnet::routing {

class NetworkGraph {
 public:
  struct Edge {
    topology::LinkId link;
    DirLink dir;  // leaving the node whose list holds this edge
    int32_t to;   // network index of the other end
  };

  explicit NetworkGraph(const topology::Topology& t);

  int32_t size() const { return static_cast<int32_t>(node_of_.size()); }
  int32_t net_of(topology::NodeId n) const { return net_of_[n]; }  // -1: not a network node
  bool is_net(topology::NodeId n) const { return net_of_[n] >= 0; }
  topology::NodeId node_of(int32_t i) const { return node_of_[i]; }
  int32_t group(int32_t i) const { return group_[i]; }
  int32_t edge_begin(int32_t i) const { return off_[i]; }
  int32_t edge_end(int32_t i) const { return off_[i + 1]; }
  const Edge& edge(int32_t e) const { return edges_[e]; }

  bool dir_up(DirLink d) const { return dir_up_[d] != 0; }
  bool link_up(topology::LinkId l) const { return up_[l] != 0; }
  // Returns false when d already was in that state.
  bool set_dir_up(DirLink d, bool up);
  int32_t down_links() const { return down_links_; }  // links with a direction down
  bool any_down() const { return down_dirs_ > 0; }

  // d_T for target key: a network index (one node) or size() + g (every node
  // of group g). Throws Error if a distance exceeds 32767 hops.
  const int16_t* table(int32_t key, bool restricted, bool all);
  // The first network node (lowest index) with the same set of neighbours as i: i itself when none comes before.
  int32_t twin(int32_t i) const { return twin_[i]; }

 private:
  std::vector<int32_t> net_of_;            // node -> network index or -1
  std::vector<topology::NodeId> node_of_;  // network index -> node
  std::vector<int32_t> group_;             // network index -> node.group
  std::vector<int32_t> off_;               // CSR offsets
  std::vector<Edge> edges_;
  std::vector<char> up_;      // per link: both directions up
  std::vector<char> dir_up_;  // per directed link
  int32_t down_links_ = 0, down_dirs_ = 0;
  std::vector<std::vector<int16_t>> tables_;  // [4 * key + 2 * all + restricted]
  std::vector<int32_t> twin_;                 // network index -> its first twin
  std::vector<int32_t> bfs_;
};

}  // namespace podnet::routing
