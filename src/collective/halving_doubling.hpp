// Halving-doubling (Rabenseifner; Thakur, Rabenseifner & Gropp 2005,
// "Optimization of collective communication operations in MPICH").
//
// n must be a power of two, p = log2 n; positions 0..n-1 index the ring
// order of the channel (ring_order.hpp); S_c = S/channels per channel.
// - reduce-scatter by recursive halving, phases k = 0..p-1: position i
//   exchanges with i XOR n/2^(k+1) and each sends the half it does not
//   keep: S_c/2^(k+1) bytes (n P2p transfers per phase).
// - all-gather by recursive doubling, the mirror: phases j = 0..p-1,
//   partner i XOR 2^j, S_c/2^(p-j) bytes.
// allreduce = reduce-scatter then all-gather (2p phases); reducescatter and
// allgather (S = the whole array) are one half each. Every rank sends
// S_c(1/2 + 1/4 + ... + 1/n) = (n-1)/n * S_c per half: 2(n-1)/n * S_c for
// an allreduce, the same volume as a ring in 2 log2 n steps instead of
// 2(n-1).
// Dependencies: a transfer i -> j of a phase waits for every transfer of the
// previous phase that i or j sent or received (a rank forwards only reduced
// data). Channels are independent copies. Refused (InputError) above
// kMaxP2pTransfers = 4,000,000 transfers = channels x n x phases: a
// one-channel allreduce over 131,072 GPUs needs 131,072 x 34 = 4.46 M.
#pragma once

#include "collective/collective.hpp"

namespace podnet::collective {

AlgorithmInfo halving_doubling_algorithm();

}  // namespace podnet::collective
