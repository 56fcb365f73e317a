// Traffic patterns for congestion-control studies: independent point-to-point
// flows, no NCCL algorithm, built as TransferPlans so every engine times them
// (the flow engine's max-min sharing, the packet engine's queues, ECN, PFC and
// congestion control). They are the synthetic workloads of the CC literature:
// a random permutation (HPCC, Li et al., SIGCOMM 2019, section 5; Swift,
// Kumar et al., SIGCOMM 2020) and an N-to-1 incast (DCTCP, Alizadeh et al.,
// SIGCOMM 2010, section 2.3.2; DCQCN, Zhu et al., SIGCOMM 2015).
//
// permutation (op permutation): group[i] sends S bytes to group[pi(i)] for a
// permutation pi of 0..n-1 with no fixed point (a derangement), so every GPU
// sends one flow and receives one flow: n concurrent P2p transfers, no
// dependencies. pi is drawn uniformly among all derangements of n by
// rejection: a Fisher-Yates shuffle (Knuth, TAOCP vol. 2, Algorithm 3.4.2 P:
// for i = n-1 down to 1, swap position i with position j drawn uniformly in
// [0, i] by Rng::below) is redrawn until it has no fixed point. A uniform
// permutation is a derangement with probability D(n)/n! -> 1/e, so about
// e = 2.72 shuffles are drawn on average. The generator is core/rng.hpp's
// xoshiro256** on the stream "collective.permutation" of Options::seed (the
// scenario's `seed`): the same seed and group give the same pi on every
// machine. Peers on the same server talk over NVLink, not the network: for a
// network-only permutation give one GPU per server (--gpus 0-N:8).
//
// incast (op incast): the receiver is group[0]; the senders are the next N
// GPUs of the group, group[1..N], each sending S bytes to the receiver at
// once: N concurrent P2p transfers into one NIC. N = Options::incast_senders
// (scenario key collective.incast_senders; auto = n - 1, every other GPU).
// So `--gpus 17,0-15 --senders 8` is 8 senders, GPUs 0-7, into GPU 17.
// With fair sharing at the receiver's link of payload capacity C, every flow
// gets C/N and all finish together after S N / C (plus one path latency):
// the flow engine's answer; the packet engine's depends on buffers, PFC and
// the congestion control, which is what the pattern is for.
//
// Both ignore channels and ring_order; `qps` splits each flow into that many
// QPs as for any P2p transfer. S is what each sender sends (busbw factor 1).
#pragma once

#include <cstdint>
#include <vector>

#include "collective/collective.hpp"

namespace podnet::collective {

AlgorithmInfo permutation_algorithm();
AlgorithmInfo incast_algorithm();

// The derangement drawn for n ranks from `seed` (see above): out[i] is the
// index of rank i's peer, out[i] != i. n = 1 gives {0} (nobody to send to),
// n = 0 an empty vector.
std::vector<int32_t> draw_derangement(int32_t n, uint64_t seed);

}  // namespace podnet::collective
