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
// (one per NIC, nccl/tuner.hpp nvls_graph) with the server's sum of one
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
//
// NVLS pipeline fill (one server; NVIDIA/nccl src/device/all_reduce.h
// RunWorkColl<AllReduce, NVLS, Simple> oneNode branch, src/enqueue.cc the
// NVLS chunk size, src/transport/nvls.cc ncclNvlsTuning and buffer setup).
// NCCL's kernel splits each of its NVLS channels' warps into three groups
// that run concurrently, chunk by chunk, coupled through the NVLS buffers
// (NCCL_STEPS = 8 slots per head and channel): scatter (the user buffer
// into the GPU's multicast-bound buffer, one chunk per head), reduce (the
// GPU's own head chunk: multimem ld_reduce through the switch, then a
// multimem store of the sum to every GPU) and gather (the summed chunks
// of every head into the user output). Per channel, one loop moves one
// chunk C per head:
//   loop = channels x heads x C bytes of the buffer, over all channels;
//   channels = NCCL's NVLS channels: 16 on Hopper (NVLS_NCHANNELS_SM90),
//              24 on one Blackwell NVLink domain (NVLS_NCHANNELS_SM100_NVL)
//              -- not the ring's channels;
//   heads    = every GPU of the server (connect.cc connectNvls: nHeads is
//              the NVLS graph's head count, one per GPU on one node);
//   C        = NCCL_NVLS_CHUNKSIZE (128 KiB), reduced by size (enqueue.cc,
//              with ops = channels x heads): 64 KiB when S < 64 ops x 128 KiB,
//              then 32 KiB when S < 8 ops x 64 KiB, then 16 KiB when
//              S < 2 ops x 32 KiB. On 8 H100: ops = 128, so C = 128 KiB from
//              1 GiB, 64 KiB from 64 MiB, 32 KiB from 8 MiB, 16 KiB below.
// A loop's reduce needs that loop's scatter done on every GPU (its chunk
// sums all of them), and its gather needs every head's reduce: in the
// first loop only the scatter works, in the last only the gather.
// Assuming a balanced pipeline -- each group advancing one loop per stage
// time at the collective's steady rate (NCCL gives the groups 8 / 5 / 7 of
// its 20 warps for 8 GPUs) -- L loops take (L + 3 - 1) stage times, not L:
//   fill = (3 - 1) x min(S, loop) / algBw
// where algBw is NCCL's NVLS algorithm bandwidth (nccl/tuner.hpp section
// 3; 272 GB/s on 8 H100), so the fill grows with the chunk, not with S:
// 2 x 8 MiB / 272 GB/s = 61.7 us from 64 MiB to 1 GiB on 8 H100, 123.4 us
// from 1 GiB, 15.4 us from 2 to 8 MiB. NCCL's own cost model (tuning.cc) has
// no such term: its NVLS time is 25 us + S / algBw at every size. podnet
// chooses as NCCL does (by NCCL's model, so the algorithm and protocol are
// NCCL's) and runs the chosen NVLS plan with the fill as a Compute delay
// over the group after the latency delay (collective.cpp make_plan), so
// every engine pays it. NVLS tree (several servers) is not given a fill.
//
// Stage cost and launch (fitted, one server): each stage time also pays a
// fixed cost -- the three warp groups wait for the other GPUs' flags and
// fence their writes once per chunk (all_reduce.h) -- so a chunk half the
// size does not take half the time: measured H100 tables run 175, 206-222,
// 255-259 and 275 GB/s of algBw within the 16, 32, 64 and 128 KiB chunk
// ranges. And the fixed part of one NVLS all-reduce is smaller than the
// 25 us of NCCL's model. podnet executes
//   T = launch + (L + 3 - 1) x stage_cost + fill + S / (streaming rate)
// with launch = 13.0 us and stage_cost = 2.5 us, the least-squares fit
// (log time, 0.25 / 0.05 us grid) over the 14 sizes 2 MiB - 16 GiB of
// NVIDIA's DGX H100 table (NVIDIA/exemplar-performance, rms 2.8 %); held
// out, three other H100 servers' tables (NVIDIA/nccl-tests#290, AWS p5
// in aws-samples/awsome-distributed-training, Voltage Park in
// ZiyanIshani/vpbenchmarking) land within 0.96-1.07 at every size
// (docs/contributing/validation/nccl-model.md). Before the fit, NCCL's 25 us and no stage cost
// left 2 MiB at 0.88-0.91 and 32 MiB at 1.13-1.14 of them. The launch
// replaces NCCL's latency in the executed plan only: the tuner still
// chooses by NCCL's model. Blackwell gets the same two constants (an
// assumption: no published B200 table was fitted).
#pragma once

#include "collective/collective.hpp"
#include "collective/nccl/tuner.hpp"

namespace podnet::collective {

AlgorithmInfo nvls_algorithm();
AlgorithmInfo nvls_tree_algorithm();

// NCCL's NVLS pipeline for an all-reduce of `bytes` on one server (above).
struct NvlsPipeline {
  int32_t channels = 0;      // NCCL's NVLS channels (CTAs)
  int32_t heads = 0;         // one per GPU
  int64_t chunk = 0;         // bytes per head, channel and loop
  int64_t loop = 0;          // channels x heads x chunk
  int64_t loops = 0;         // ceil(bytes / loop)
  double fill_us = 0;        // (stages - 1) x min(bytes, loop) / NCCL's NVLS algBw
  double stage_cost_us = 0;  // (loops + stages - 1) x the fitted cost per stage time (above)
  double launch_us = 0;      // the fitted fixed part, in place of NCCL's model latency
};
// All zero when NVLS cannot run on `s` (no NVSwitch, before Hopper, several
// servers, one GPU) or for 0 bytes.
NvlsPipeline nvls_pipeline(const CommShape& s, Bytes bytes);

// NCCL's NVLS channels (src/transport/nvls.cc): NVLS_NCHANNELS_SM90 = 16 on
// Hopper, NVLS_NCHANNELS_SM100_NVL = 24 on Blackwell. NCCL runs nvls and
// nvls_tree collectives on these, not on the ring's channels (enqueue.cc:
// "maxChannels = ... NCCL_ALGO_NVLS || ... NCCL_ALGO_NVLS_TREE ?
// comm->nvlsChannels : comm->nChannels"), so make_plan builds an NVLS plan
// on them when collective.channels is auto.
int32_t nvls_channels(Arch arch);

}  // namespace podnet::collective
