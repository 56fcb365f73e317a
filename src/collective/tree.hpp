// Double binary tree (NCCL; Sanders, Speck & Träff 2009, "Two-tree
// algorithms for full bandwidth broadcast, reduction and scan").
//
// Positions 0..n-1 index the ring order of the channel (ring_order.hpp), so
// with topology_aware order a tree's neighbours are mostly in one server or
// one group.
//
// Tree 0 is NCCL's btree (ncclGetBtree, src/graph/trees.cc): rooted at 0;
// for i > 0 with lowest set bit b, parent(i) = (i ^ b) | (b << 1), or i ^ b
// if that is >= n. Its interior nodes are the even positions.
// Tree 1 (ncclGetDtree): for even n the mirror, parent1(i) = n-1 -
// parent0(n-1-i) (so its interior nodes are the odd positions: no rank is an
// interior node of both trees); for odd n the shift by one,
// parent1(i) = parent0(i-1 mod n) + 1 mod n. NVIDIA/nccl src/graph/trees.cc.
// Depth of either tree = ceil(log2 n).
//
// Plans, per channel (S_c = S/channels), each tree carrying half of S_c:
// - allreduce: per tree one Coupled transfer whose edges are every
//   child->parent edge (the pipelined reduce) and every parent->child edge
//   (the pipelined broadcast): 2(n-1) edges of S_c/2 bytes each, all at one
//   rate; latency_steps = 2 * depth = 2*ceil(log2 n). A rank is interior
//   in at most one tree, so it sends at most S/2 up + 2 x S/2 down there
//   and S/2 up as a leaf of the other tree: 2S in all, t ~ 2S/B on a NIC of
//   bandwidth B, which is NCCL's tree model algBw = busBw/2
//   (NVIDIA/nccl src/graph/tuning.cc).
// - broadcast / reduce (root = group[0]): the two trees are built over the
//   other n-1 ranks and the root feeds (broadcast) or drains (reduce) both
//   tree roots: per tree n-1 edges of S_c/2 bytes, latency_steps = depth + 1.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "collective/collective.hpp"

namespace podnet::collective {

AlgorithmInfo tree_algorithm();

// Parent position of every position in NCCL's btree over n (-1 for the root 0).
std::vector<int32_t> btree_parents(int32_t n);
// The two trees of NCCL's double binary tree over n positions.
std::array<std::vector<int32_t>, 2> dtree_parents(int32_t n);
// Edges on the longest root-to-leaf path of a tree given by its parents.
int32_t tree_depth(const std::vector<int32_t>& parents);

}  // namespace podnet::collective
