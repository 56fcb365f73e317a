// NVLink SHARP (NVLS) all-reduce: the reduction happens in the NVSwitch.
//
// On Hopper NVSwitch systems NCCL's NVLS all-reduce (one server) is a
// reduce-scatter by multimem loads that the switch reduces (the switch
// reads every GPU's part of a shard and returns the sum to the shard's
// owner) followed by an all-gather by multimem stores that the switch
// multicasts (NVIDIA, "NVLink SHARP", Hot Chips 34, 2022; NCCL 2.17+ release
// notes; src/device/all_reduce.h in NCCL). Per GPU of n, for a buffer of S:
//   up   (GPU -> switch): S (its part of every shard) + S/n (its reduced shard, stored once)
//   down (switch -> GPU): S/n (its reduced shard) + S (every shard, multicast)
// so each direction of a GPU's NVLink carries S (n+1)/n, against the ring's
// 2(n-1)/n S: busbw is no longer bounded by the link rate (for n = 8,
// 2(n-1)/(n+1) = 1.56 x the link's payload rate), and no GPU adds anything.
// NCCL's model also counts NVLS at 0.85 of the link (Hopper; 0.74 on
// Blackwell, tuning.cc nvlsEfficiency), which the plan states as wire bytes.
//
// Plan: per channel one Coupled transfer over the group's GPUs in ring
// order whose edges are GPU i -> GPU i+1 (every GPU is the source of one
// edge and the destination of one), each edge carrying
// ceil(S_c (n+1)/n / eff). Every GPU-to-GPU path inside an NVSwitch domain
// is GPU -> NVSwitch -> GPU, so each GPU's up- and down-link carry exactly
// the bytes above: the plan loads the links as the switch-side reduction
// does, without naming the switch as an endpoint. latency_steps = 2 (to the
// switch and back). Refused when a GPU of the group has no NVLink to an
// NVSwitch or the group spans NVSwitch domains (multi-node NVLS needs NCCL's
// CollNet path, which podnet does not build).
//
// NVLS tree (NCCL's NVLS_TREE, multi-node all-reduce; NCCL 2.18+, the
// default on multi-node NVSwitch systems at medium sizes; NVIDIA/nccl
// src/device/all_reduce.h runTreeSplit / NVLS tree, src/graph/tuning.cc):
// inside every server an NVLS reduce-scatter leaves each of h head GPUs
// (one per NIC, nccl_tuner.hpp nvls_graph) with the server's sum of one
// shard of S/h; the heads of shard k on all servers run NCCL's double
// binary tree across servers (tree.hpp) over their NICs, each tree
// carrying half the shard; an NVLS all-gather multicasts the result back
// into every GPU of the server. The three phases are pipelined chunk by
// chunk, so in steady state each runs at its own rate and the slowest
// decides. Per server, for a buffer of S:
//   NVLink, each direction of a head's link: S + S/h (as one-server NVLS
//     with h shards), at NCCL's NVLS efficiency;
//   NIC of head k, each direction: a server interior to one tree sends
//     S/(2h) up and 2 x S/(2h) down, and as a leaf of the other S/(2h) up:
//     2S/h in all, or S/h with two servers (root of one tree, leaf of the
//     other) -- NCCL's "bwInter x 2 for 2 nodes".
// Plan: per server one Coupled transfer over its GPUs (edges GPU i -> i+1,
// each ceil(S (h+1)/h / eff), loading every NVLink as a head's); per head
// k, per execution channel of that head (channels / h, at least 1) and
// per tree, one Coupled transfer whose edges are the tree's child->parent
// and parent->child edges between the servers' k-th heads, each carrying
// that channel's part of the half shard. All start together (after the
// tuner's latency delay); the collective ends with the slowest. Refused
// unless the group spans at least 2 servers with the same number of GPUs
// on each, every server's GPUs on one NVSwitch.
#pragma once

#include "collective/collective.hpp"

namespace podnet::collective {

AlgorithmInfo nvls_algorithm();
AlgorithmInfo nvls_tree_algorithm();

}  // namespace podnet::collective
