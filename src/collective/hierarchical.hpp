// Hierarchical all-reduce: what NCCL achieves on rail-optimized fabrics
// (intra-server NVLink reduce-scatter, one inter-server ring per local GPU
// index, i.e. per rail, then an NVLink all-gather; as in Jia et al. 2018
// "Highly scalable deep learning training system with mixed-precision" and
// NCCL's NVLS/rail rings).
//
// The group must hold the same number L of GPUs on each of its N servers
// (servers and GPUs ordered per group_by_server in ring_order.hpp). Per
// channel (S_c = S/channels), n = L*N:
//   phase 1  per server: a Ring over its L GPUs (NVLink reduce-scatter):
//            (L-1)/L * S_c per hop, latency_steps L-1. Afterwards the
//            server's r-th GPU holds the server's sum of chunk r (S_c/L).
//   phase 2  per local index r: a Ring all-reduce over the r-th GPU of every
//            server: 2(N-1)/N * S_c/L per hop, latency_steps 2(N-1);
//            depends on every phase-1 ring (chunk r of every server).
//   phase 3  per server: a Ring over its L GPUs (NVLink all-gather),
//            (L-1)/L * S_c per hop, latency_steps L-1; depends on every
//            phase-2 ring.
// With one GPU per server phases 1 and 3 are empty (a flat ring); with one
// server phase 2 is empty and phase 3 depends on phase 1. The inter-server
// volume per GPU is 2(N-1)/N * S/L, L times less than a flat ring's.
// Channels only split S: every channel uses the same rings (phase 2 already
// spreads over every rail).
// "Server" is the GPU's server label (an NVLink domain spanning several
// servers is not merged into one phase-1 ring).
#pragma once

#include "collective/collective.hpp"

namespace podnet::collective {

AlgorithmInfo hierarchical_algorithm();

}  // namespace podnet::collective
