// Ring algorithms (NCCL's ring; Patarasuk & Yuan 2009 for the bandwidth
// optimality of the ring all-reduce).
//
// Per channel c (carrying S_c = S/channels), one Ring transfer over the ring
// order of channel c (ring_order.hpp), n ranks:
//   allreduce      reduce-scatter then all-gather: every hop carries
//                  2(n-1)/n * S_c, latency_steps = 2(n-1)
//   allgather,     every hop carries (n-1)/n * S_c, latency_steps = n-1
//   reducescatter
//   broadcast      an open chain starting at the root (group[0]) and
//                  following the ring order: every hop carries S_c,
//                  pipelined, latency_steps = n-1
//   reduce         the same chain reversed (it ends at the root)
// Time on a fabric where each hop gets bandwidth B: t = bytes_per_hop / B +
// latency_steps * alpha, i.e. the busbw of every op equals B.
#pragma once

#include "collective/collective.hpp"

namespace podnet::collective {

AlgorithmInfo ring_algorithm();

}  // namespace podnet::collective
