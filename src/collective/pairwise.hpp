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
//
// NCCL's all-to-all inside an NVSwitch server, as measured (with
// Options::tuner, make_plan): on top of the posting cost (collective.hpp),
// an all-to-all pays a launch of kAlltoallLaunchUs, and its transfers
// between two GPUs of one NVSwitch server move at kAlltoallNvlinkEfficiency
// of the NVLink payload rate the ring reaches (their bytes are scaled by its
// inverse, as LL's line format scales a ring's). Fitted by least squares on
// relative time to the median of ten H100 servers' alltoall_perf tables,
// 32 MiB to 16 GiB (xxrjun/nccl-tests-cluster at commit 56089ca, NCCL 2.29.2,
// one process per GPU; tests/data/nccl-tests/README.md): there the time is
// 40.7 us + (7/8) S / 337.9 GB/s within 4.2 % at every size (per GPU 0.911 of
// the 370.8 GB/s of NVLink payload a ring's busbw reaches), where the
// NVLink rate and NCCL's post costs alone (4.2 us + (7/8) S / 370.8 GB/s)
// were 1.07 (16 GiB) to 1.48 (32 MiB) times too fast. What it stands for:
// NCCL's p2p kernel runs every peer at once on its p2p channels (8 rounds of
// 4 channels on 32 for 8 ranks, enqueue.cc addP2pToPlan), each its own
// thread block, which together do not reach the ring's NVLink rate; the
// launch and the channels' first and last chunks are the constant.
// ASSUMPTIONS: the same on every GPU generation (only Hopper measured) and at
// sizes below 32 MiB (not measured: there the launch is an extrapolation);
// transfers that leave the server (NIC-bound; two servers of that table's
// cluster are within 1 % of podnet at 4-16 GiB without either constant) are
// not scaled. sendrecv (one peer per GPU) reaches the ring's rate at large
// sizes in the same tables and is not scaled; its mid sizes are limited per
// channel (docs/validation.md), which podnet does not model.
#pragma once

#include <cstdint>

#include "collective/collective.hpp"

namespace podnet::collective {

inline constexpr double kAlltoallLaunchUs = 36.5;
inline constexpr double kAlltoallNvlinkEfficiency = 0.911;

AlgorithmInfo pairwise_algorithm();
AlgorithmInfo p2p_algorithm();

// Scales the bytes of the plan's P2p transfers between two GPUs of one
// NVSwitch server by 1 / kAlltoallNvlinkEfficiency (rounded up).
void scale_alltoall_nvlink(plan::TransferPlan& plan, const topology::Topology& topo);

}  // namespace podnet::collective
