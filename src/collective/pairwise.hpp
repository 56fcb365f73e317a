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
// not scaled.
//
// NCCL's sendrecv inside an NVSwitch server (with Options::tuner): one p2p
// operation runs on a number of channels that grows with its size, each
// channel one thread block copying at most about kP2pChannelGBs (NVIDIA/nccl
// enqueue.cc addP2pToPlan; graph/paths.cc): a communicator of n ranks on one
// node has P = 32 p2p channels (its channels rounded up to a power of 2),
// min(P, 2 x NVLinks rounded up) per peer, and an operation of S bytes
// starts on min(c0, ceil(S / 64 KiB)) channels, c0 = P / n rounded down to
// a power of 2 (at least 1), doubling while a channel's part exceeds 16 MiB
// (a 512 KiB step x 32) and the per-peer maximum allows. A transfer between
// two GPUs of one server therefore moves at min(NVLink payload, channels x
// kP2pChannelGBs): the transfer's rate limit (plan::Transfer::max_rate_bps)
// when the channels are the slower, so what it leaves of the NVLink stays
// for the transfers sharing it. The rate per
// channel is fitted on the same tables' sendrecv rows (8 ranks, 4 channels
// at 32 and 64 MiB: 79.6 and 82.0 GB/s; 8 at 128 MiB: 162.6; 16 at 256 MiB:
// 299.6, i.e. 19.9, 20.5, 20.3, 18.7 a channel); before, podnet moved 64
// MiB at the NVLink's 370 GB/s where the table shows 82 (4.5 x fast).
// ASSUMPTIONS: the same rate on every GPU generation.
//
// NCCL's sendrecv across servers (with Options::tuner; also a pipeline's
// stage-to-stage p2p in training, workload/training.cpp): in a communicator
// that spans servers every p2p operation runs on fewer channels, and a
// channel that sends through a NIC moves at most kP2pNetChannelGBs. NCCL
// 2.29 (graph/paths.cc ncclTopoGetNchannels, ncclTopoComputeP2pChannels;
// enqueue.cc addP2pToPlan): a network peer gets max(1, ceil(NIC GB/s / 14))
// channels (P2P_PER_CHANNEL_NET_BW = 14 GB/s, NCCL's own figure for what
// one channel carries), rounded up to a power of 2 (4 for a 400G NIC), the
// fewest of any peer (so the network's, NVLink peers get more); halved while
// that x ceil(ranks / 8) exceeds the p2p channels P (the communicator's
// channels rounded up to a power of 2, at most 32); an operation starts on
// that count halved while it x ranks exceeds P, at most one per 64 KiB, and
// doubles while a channel's part exceeds 128 KiB (the 128 KiB network p2p
// chunk) and the per-peer count allows. Pairs inside a server of such a
// communicator take the same count at kP2pChannelGBs each. A transfer
// through NICs therefore moves at min(NIC payload, channels x
// kP2pNetChannelGBs), a rate limit as above. kP2pNetChannelGBs is fitted
// by least squares (relative rate) on four measured sendrecv_perf tables of
// ten H100 servers with 400G NICs, 1, 2, 4 and 8 GPUs each, every size from
// 32 MiB to 16 GiB (40 rows; xxrjun/nccl-tests-cluster, NCCL 2.29.2,
// tests/data/nccl-tests/README.md): about 24.9 / 25.2 / 26.2 GB/s on 2
// channels and 15.2 on 1, a channel 13.13 GB/s (podnet / measured 1.04-1.09,
// 1.04-1.05, 1.00-1.01 and, 8 GPUs a server, where each crossing pair
// changes rail through PXN, 0.86-0.89). Before, podnet moved such a pair at
// the NIC's 49 GB/s: 1.97 x the one-GPU-a-server table.
// Which communicator an operation belongs to is the caller's: bench's
// sendrecv is one of the group's; a training pipeline's sends are the
// pipeline group's when batched, a two-rank one's when not
// (workload::Job::pp_p2p_comm).
// ASSUMPTIONS: one NIC per GPU (netCount 1) and the GPU-to-NIC path as fast
// as the NIC (NCCL counts the path's bandwidth); the rate per channel does
// not depend on the NIC's speed (only 400G measured); pairs inside a server
// of a multi-server communicator move kP2pChannelGBs a channel (fitted on one
// server, with NCCL's 512 KiB NVLink chunk rather than the 128 KiB network
// one); at most 32 p2p channels (NCCL allows 64; no shape here reaches 32);
// GB200's doubled chunk (ARM hosts) is not modelled. On 2 servers the
// tables (4 channels, 39-46 GB/s at 4 GiB over 45 node pairs) sit below the
// NIC's 49 GB/s that podnet still gives there (1.06-1.26); all-to-all is not
// limited this way (every peer has its own channels, so the NIC binds:
// measured within 1 %).
#pragma once

#include <cstdint>

#include "collective/collective.hpp"
#include "collective/nccl/tuner.hpp"

namespace podnet::collective {

inline constexpr double kAlltoallLaunchUs = 36.5;
inline constexpr double kAlltoallNvlinkEfficiency = 0.911;
inline constexpr double kP2pChannelGBs = 20.0;      // GB/s a p2p channel (thread block) copies, fitted
inline constexpr double kP2pNetChannelGBs = 13.13;  // GB/s a p2p channel sends through a NIC, fitted

// NCCL's channels for one p2p operation of `bytes` in a communicator of `ranks` ranks on one NVSwitch
// server whose GPUs have `nvlinks` NVLinks each, with `comm_channels` channels (the rule above).
int32_t nccl_p2p_channels(Bytes bytes, int32_t ranks, int32_t nvlinks, int32_t comm_channels);

AlgorithmInfo pairwise_algorithm();
AlgorithmInfo p2p_algorithm();

// Scales the bytes of the plan's P2p transfers between two GPUs of one
// NVSwitch server by 1 / kAlltoallNvlinkEfficiency (rounded up).
void scale_alltoall_nvlink(plan::TransferPlan& plan, const topology::Topology& topo);
// NCCL's channels for one p2p operation of `bytes` in a communicator of `ranks` ranks on several servers, with
// `comm_channels` channels and NICs of `nic_gbs` GB/s (the rule above).
int32_t nccl_p2p_net_channels(Bytes bytes, int32_t ranks, int32_t comm_channels, double nic_gbs);

// NCCL's p2p rate limit (payload bits/s) for a P2p transfer of `bytes` from GPU rank `from` to `to`, one
// operation of a communicator of shape `shape` with `comm_channels` channels: inside one NVSwitch server
// channels x kP2pChannelGBs, through NICs channels x kP2pNetChannelGBs; 0 (none) when that is not below the
// path's payload rate (NVLink at o.nvlink_efficiency, the NIC at o.network_efficiency) or for any other pair
// (a torus's chip-to-chip links).
double nccl_p2p_rate_cap_bps(const topology::Topology& topo, int32_t from, int32_t to, Bytes bytes,
                             const CommShape& shape, int32_t comm_channels, const Options& o);
// Sets the max_rate_bps of a sendrecv plan's P2p transfers to nccl_p2p_rate_cap_bps.
void cap_sendrecv_channels(plan::TransferPlan& plan, const topology::Topology& topo, Bytes bytes,
                           const CommShape& shape, int32_t comm_channels, const Options& o);

}  // namespace podnet::collective
