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
#pragma once

#include "collective/collective.hpp"

namespace podnet::collective {

AlgorithmInfo nvls_algorithm();

}  // namespace podnet::collective
