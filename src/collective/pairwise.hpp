// Point-to-point collectives.
//
// pairwise (alltoall): every rank sends S/n to every other rank: n(n-1)
// concurrent P2p transfers (no dependencies; NCCL posts all sends and
// receives of an alltoall at once). Per rank (n-1)/n * S leaves the GPU,
// hence the busbw factor (n-1)/n. Refused above kMaxP2pTransfers = 4,000,000
// transfers (n > 2000).
//
// p2p (sendrecv): rank group[i] sends S to group[(i+1) mod n], n concurrent
// transfers (nccl-tests' sendrecv_perf). Group order, whatever ring_order.
//
// Both ignore `channels` (each peer pair is one connection; `qps` spreads
// it) and use the group's order.
#pragma once

#include <cstdint>

#include "collective/collective.hpp"

namespace podnet::collective {

AlgorithmInfo pairwise_algorithm();
AlgorithmInfo p2p_algorithm();

}  // namespace podnet::collective
