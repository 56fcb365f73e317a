// CollNet all-reduce: the reduction across servers happens in the network's
// switches (SHARP), as NCCL's CollNet algorithms run it.
//
// SHARP (Scalable Hierarchical Aggregation and Reduction Protocol; Graham et
// al., "Scalable Hierarchical Aggregation Protocol (SHArP): A Hardware
// Architecture for Efficient Data Reduction", COMHPC 2016; SHARPv2/v3 in
// NVIDIA Quantum / Quantum-2 InfiniBand switches) builds an aggregation tree
// of switches over the participating NICs: every NIC sends its vector up
// once, each switch adds what its children send and forwards one vector to
// its parent, the root's sum comes back down the same tree and every NIC
// receives it once. So for a vector of V bytes per node
//   each NIC carries V up and V down (a ring all-reduce: 2(N-1)/N V each way
//     spread over N-1 steps; SHARP: V, in one pass, whatever N),
//   each switch-to-switch link of the tree carries one copy up and one down.
// NCCL drives it through its CollNet transport (NVIDIA/nccl
// src/transport/coll_net.cc and a CollNet plugin such as
// Mellanox/nccl-rdma-sharp-plugins) with two algorithms (NVIDIA/nccl
// src/device/all_reduce.h, RunWorkColl for COLLNET_DIRECT and
// COLLNET_CHAIN; src/graph/connect.cc connectCollNet; tuning figures in
// nccl/tuner.hpp section 5):
//
// collnet_direct (NVSwitch servers): each server has h heads, one GPU per
// NIC (nccl/tuner.hpp collnet_graph: 8 on 8 x 400G H100 servers). Head k
// owns shard k of S/h. Every GPU scatters its part of shard k straight to
// head k over NVLink, head k reduces the server's copies, sends the server's
// sum of shard k up the SHARP tree through its NIC, receives the global sum
// and sends it straight to every GPU of its server; the phases are
// pipelined chunk by chunk. Per server, buffer S:
//   NVLink, each direction of a GPU's link: (h-1 or h) S/h scattered + (for
//     a head) (ppn-1) S/h broadcast: 2 (ppn-1)/ppn S with h = ppn,
//   each head's NIC: S/h up, S/h down.
// collnet_chain: per channel, the server's GPUs form a chain ending at the
// GPU whose NIC the channel uses (its head): data is reduced along the chain
// up to the head (GPU i -> i+1 over NVLink), the head sends the server's
// sum through the SHARP tree, receives the result and it flows back down
// the chain (head -> ... -> first GPU). Per channel of S_c: every chain
// edge carries S_c each way, the head's NIC S_c up and S_c down.
//
// Plan. The switch is not a plan endpoint (plans connect GPU ranks, and
// the engines route GPU to GPU), so the SHARP pass is stated by the bytes it
// puts on the links: for head position k, the k-th heads of the servers, in
// the servers' topology-aware order (pod, aggregation group, server:
// ring_order.hpp group_by_server), form a closed ring of GPU -> GPU edges,
// each carrying the shard. Every head's NIC then sends the shard once and
// receives it once, as with SHARP; a ring visits the servers of one leaf
// consecutively, so each leaf's (and each pod's) uplinks carry one copy
// up and one down -- one per edge of an aggregation tree rooted above
// them. What is approximate: the copy crossing a tier goes to whichever
// upper switch ECMP picks for that ring edge, where SHARP sends every
// leaf's copy to the one root of the tree (same bytes per tier, possibly
// on other links); the engines time the pass as one coupled rate over
// these edges (the pipelined stream SHARP is) and the switch's own
// reduction time is not modelled (SHARP reduces at line rate).
//   collnet_direct: per server one Coupled transfer, edges GPU g -> head k
//     and head k -> g for every head k != g, each carrying S/h, at NCCL's
//     collnet-direct efficiency (0.85 on Hopper and later: bytes / 0.85,
//     as nvls.hpp states NVLS's); per head position k and per execution
//     channel of that head (channels / h, at least 1), one Coupled transfer
//     whose edges are the ring of the k-th heads, carrying that channel's
//     part of shard k. latency_steps 2 (scatter, broadcast) and 1 (one
//     trip up the switches and back).
//   collnet_chain: per channel c one Coupled transfer: every server's chain
//     edges up (toward the head), the ring of the servers' heads, the chain
//     edges down, each carrying S_c (S / channels). The head of channel c is
//     the server's GPU on its (c mod NICs)-th distinct NIC. latency_steps
//     2 (ppn-1) + 1.
// All transfers start together (after the tuner's latency delay); the
// collective ends with the slowest.
//
//
// collnet_direct all-gather and reduce-scatter (NVIDIA/nccl
// src/device/all_gather.h and reduce_scatter.h, RunWorkColl for
// COLLNET_DIRECT; the plugin's iallgather / ireducescatter, e.g.
// Mellanox/nccl-rdma-sharp-plugins src/sharp_plugin.c). One NIC per GPU
// (NCCL: "AllGather/ReduceScatter requires 1:1 GPU:NIC"), so every GPU is
// the head of its rail. With n = nodes x ppn ranks and a block b = S/n
// per rank (S: nccl-tests' whole output of an all-gather, input of a
// reduce-scatter), rail k's data is the nodes blocks of the servers' k-th
// GPUs. All-gather: GPU k sends its block into the network once; the
// switches gather rail k across servers and deliver it to every server's
// k-th GPU (nodes x b, the other servers' (nodes - 1) b through the NIC);
// GPU k then sends the rail to each of its server's other GPUs over NVLink.
// Reduce-scatter is the reverse: each GPU sends its contribution to rail
// k (nodes x b) to GPU k over NVLink, GPU k adds them and sends the
// server's sums into the network, which reduces them across servers and
// returns GPU k its own block. Per GPU: NVLink (ppn - 1) nodes b = (ppn -
// 1)/ppn S each direction; NIC (nodes - 1) b = (nodes - 1)/n S in the
// heavy direction (in for all-gather, out for reduce-scatter), b in the
// other.
//   Plan: per server one Coupled transfer, edges head -> every other GPU
//     (all-gather; reversed for reduce-scatter) for every head, each
//     carrying nodes x b; per rail k and execution channel of its head
//     (channels / ppn, at least 1) one Coupled transfer whose edges are the
//     ring of the servers' k-th GPUs (as for the all-reduce above), carrying
//     that channel's part of (nodes - 1) b: each NIC carries it both ways,
//     the heavy direction exactly, the light one (b) overstated, which does
//     not lengthen the pass on a full-duplex NIC. No efficiency factor on
//     the bytes (NCCL's model prices 0.9 x the network speed, without a
//     stated cause). latency_steps 1 and 1.
//
// Refused (InputError): a fabric whose switches do not reduce
// (switch.in_network_reduction: sharp), a group on one server, servers
// with different GPU counts or more than 8 GPUs (NCCL_MAX_DIRECT_ARITY + 1),
// for collnet_direct a server whose GPUs are not on one NVSwitch, and for
// its all-gather / reduce-scatter a server whose GPUs share NICs. Ops:
// collnet_direct all-reduce, all-gather, reduce-scatter; collnet_chain
// all-reduce (as NCCL).
#pragma once

#include "collective/collective.hpp"

namespace podnet::collective {

AlgorithmInfo collnet_direct_algorithm();
AlgorithmInfo collnet_chain_algorithm();

}  // namespace podnet::collective
