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
// (channels x n x D transfers).
// With Options::coupled_steps (the training planner's data-parallel
// collectives) a step of a channel is one Coupled transfer whose edges are
// the n positions' sends of b_p blocks each, and it waits for the channel's
// whole previous step: channels x D transfers. Engines give the step's edges
// one rate (the slowest edge's) and the step ends with its slowest edge, as
// it does with one transfer per position; what is lost is the overlap of a
// position's next step with another's late send of this one (the flow
// engine's PAT all-gather across ECMP spines is a few per cent faster with
// per-position transfers, docs/validation.md), the analytical engine, which
// shares links per level, gives the same time either way.
#pragma once

#include "collective/collective.hpp"

namespace podnet::collective {

AlgorithmInfo pat_algorithm();

// Blocks each position sends at the step of distance 2^p over n positions.
int64_t pat_blocks(int64_t n, int32_t p);

}  // namespace podnet::collective
