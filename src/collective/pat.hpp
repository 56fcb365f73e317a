// PAT, "parallel aggregated trees" (NCCL 2.23+, all-gather and
// reduce-scatter with one GPU per node; NVIDIA/nccl src/include/collectives.h
// PatAGAlgorithm / PatRSAlgorithm, src/graph/tuning.cc).
//
// All-gather: every rank's block reaches the others along a binomial tree
// that takes the farthest hop first, so each rank sends few bytes far and
// many bytes near: a logarithmic number of network steps (against the
// ring's n-1) for the same volume. With D = ceil(log2 n) and positions
// 0..n-1 in the channel's ring order (ring_order.hpp), step k = 0..D-1
// uses distance d = 2^p, p = D-1-k: position i sends to i + d (mod n).
// The block of position q reaches q + s (1 <= s <= n-1) by the hops of
// s's set bits, highest first; the hops of all destinations share their
// prefixes, so at step p the copies of one block that move are the
// distinct prefixes s >> p that are odd, i.e. the odd m with m 2^p <= n-1,
// and each position sends
//     b_p = (((n-1) >> p) + 1) / 2   blocks of S_c/n
// (1, 2, 4, ..., n/2 for a power of two; sum over p = n-1 for any n).
// Reduce-scatter is the transpose: the steps in reverse order (nearest
// first), position i sending b_p partial blocks to i - d.
// Dependencies: a position's send at step k waits for what it received at
// step k-1 (it forwards, or reduces, that data). Channels are independent
// copies carrying S/channels. NCCL's own implementation pipelines chunks
// through the steps within a bounded buffer; the plan keeps the step order
// and volumes, not the chunking. Refused above kMaxP2pTransfers
// (channels x n x D transfers; not with coupled_steps, below).
// With Options::coupled_steps (the training planner's data-parallel
// collectives) a step is one Coupled transfer for every channel: its edges
// are the channels' lanes (plan::Transfer::lanes), each the n positions'
// sends of b_p blocks in that channel's ring order (the same pairs, bytes
// and ECMP entropy), and it waits for the whole previous step: D transfers of
// channels x n edges. The flow and analytical engines give the step's edges
// one rate, so the step ends with its slowest edge as before, but a position
// no longer starts its next step while another's send of this one is late,
// nor a channel while another channel's is; the packet engine streams the
// edges independently within the step. A lane carries the first channel's
// share, the largest (the others may be a byte less before scaling). Without
// NCCL's model (latency_steps = 1) a step pays the mean hop latency of its
// edges, not each edge's own. Measured on a PAT all-gather of 128 GPUs
// across ECMP spines (docs/contributing/validation/nccl-algorithms.md, "PAT
// in training plans"): against one transfer a position, coupled is faster on
// the flow engine (the early starts contend with the late edges), a little
// slower on the analytical engine (the barrier), and equal on both without
// collisions. One step for all channels instead of one a channel: the
// default job at 131,072 GPUs on the flow engine runs in a third of the time,
// its iteration 0.04 % longer (docs/contributing/validation/speed.md).
#pragma once

#include "collective/collective.hpp"

namespace podnet::collective {

AlgorithmInfo pat_algorithm();

// Blocks each position sends at the step of distance 2^p over n positions.
int64_t pat_blocks(int64_t n, int32_t p);

}  // namespace podnet::collective
