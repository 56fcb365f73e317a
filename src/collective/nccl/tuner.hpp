// NCCL's collective model: channels, protocols, algorithms and the tuner.
//
// What NCCL does (facts from its public source, github.com/NVIDIA/nccl:
// src/graph/search.cc, src/graph/connect.cc, src/graph/tuning.cc,
// src/graph/topo.h, src/include/device.h), restated as the figures podnet
// uses. No NCCL code is reproduced; the equations below are this file's.
//
// 1. Channels (search.cc ncclTopoCompute, ncclTopoDupChannels; connect.cc
//    ncclTopoPostset).
//    The topology search looks for `c` rings, each given a per-channel
//    bandwidth s taken from a fixed list (Hopper, sm90: intra-node
//    {60, 50, 40, 30, 24, 20, 15, ...} GB/s, inter-node {48, 45, 42, 40, 30,
//    24, ...}), starting with the largest s not above the best GPU->NIC path
//    (inter-node) or GPU->GPU path (one node), and stopping once
//    c x s >= the GPU's total NVLink bandwidth. podnet reduces the search
//    to what it finds on a uniform server:
//      multi-node: every NIC of the server carries floor(nic / s) rings
//        (each ring enters and leaves the server through one NIC),
//        c = nics x floor(nic / s), at most 32 (MAXCHANNELS/2);
//      one node (NVLink): c = floor(nvlink / s) rings at the largest s for
//        which c >= 1 (the search keeps the first speed found unless a
//        lower one gives a strictly larger c x s and s is above half the
//        first: ties keep the faster rings);
//    then duplication (ncclTopoDupChannels): if s >= 25 GB/s and not
//    (Hopper or later, s < 50 and c > 4), c doubles and s halves.
//    NVLink bandwidth per GPU is the number of links x 20.6 GB/s on Hopper
//    (topo.h SM90_NVLINK_BW), which podnet reads as the GPU's total NVLink
//    capacity; a NIC's bandwidth is its port speed / 8 (400 Gb/s -> 50 GB/s).
//    The tuner uses the searched c x s; the kernels run on twice as many
//    channels (connect.cc: "Duplication should be complete now",
//    nChannels = min(64, 2c)), and on Hopper multi-node rings with
//    s > 45 GB/s and fewer than 16 channels double once more.
//    Result for an H100 server with 8 x 400G NICs (multi-node): s = 48,
//    c = 8 x floor(50/48) = 8, 8 x 48 = 384 >= 18 x 20.6 = 370.8 (search
//    stops), no duplication (48 < 50 and 8 > 4): the tuner sees 8 channels
//    of 48 GB/s (busbw 384 GB/s); the kernels run 16 channels, two per NIC
//    (matching NCCL's "16 coll channels" on 8 x 400G H100/H800 nodes,
//    github.com/NVIDIA/nccl/issues/892, and its maintainer's "execution
//    channels are typically 2x the search channels", issues/1041).
//    One H100 node (NVLink only): s = 60, c = floor(370.8/60) = 6,
//    duplicated to 12 x 30 GB/s (tuner busbw 360), kernels on 24 channels.
//    One GPU per node on a 400G NIC: s = 48, c = 1, duplicated to 2 x 24,
//    kernels on 4 channels. These are the ring's (and tree's, PAT's,
//    CollNet's) execution channels; nvls and nvls_tree run on NCCL's NVLS
//    channels instead, 16 on Hopper and 24 on Blackwell (nvls.hpp).
//
// 2. Protocols (device.h; tuning.cc).
//    simple: data in large chunks, a flag per chunk, memory fences: full
//            wire efficiency, the highest per-step latency.
//    ll:     every 8-byte line carries 4 bytes of data and a 4-byte flag:
//            efficiency 1/2 (tuner: busBw x 0.5, at most llMaxBw).
//    ll128:  every 128-byte line carries 120 bytes of data and an 8-byte
//            flag: efficiency 120/128 (the tuner uses 0.92 for rings and
//            caps each channel at 36.7 GB/s on Hopper).
//    Per-op latency (us) = baseLat[algo][proto] + steps x hwLat[link][algo]
//    [proto], link = NVLink | PCIe | network (tuning.cc defaults):
//      baseLat  tree {6.8, 14.0, 8.4}  ring {6.6, 14.0, 8.4}  (LL, LL128, Simple)
//               nvls 0 (its latency is the hwLat alone)
//      hwLat    NVLink  tree {0.6, 1.25, 4}  ring {0.6, 1.9, 3.4}  nvls {-, -, 25}
//               PCIe    tree {1.0, 1.9, 4}   ring {1.0, 2.5, 5.7}
//               network tree {5.0, 8.5, 14}  ring {2.7, 4.0, 14}   nvls {-, -, 18}
//    Ring latency = base + (steps - interSteps) x max(intraLat, netOverhead)
//      + interSteps x (hwLat_net + NIC latency [+ once more for simple: the
//      flush]), steps = 2(n-1) (allreduce), n-1 (allgather/reducescatter),
//      interSteps = 2(nodes-1) or nodes-1; netOverhead = 1 us (x3 for
//      simple) when nodes > 1 (Intel CPUs; NCCL_NET_OVERHEAD); with one GPU
//      per node the network latency is the tree's. A multi-node simple ring
//      all-reduce with >= 64 B per channel and rank pays 1.4x this
//      latency on Ampere and later ("plateau effect").
//    Tree allreduce latency = base + 2((ppn-1) intraLat + log2(nodes) x
//      interLat). NVLS latency = hwLat (no base). NVLS tree latency =
//      intraLat (NVLink, 25) + 2 log2(nodes) x interLat (network, 20.9).
//      PAT latency = 8 + log2(nodes) x interLat / 3.5 + 2.8 x ranks.
//
// 3. Bandwidth per (op, algo, proto) (tuning.cc ncclTopoTuneModel):
//      busBw = c x s (s = bwIntra for <= 2 nodes, else bwInter);
//      ring ll:     min(llMaxBw, busBw/2)  (Hopper: 141 one node, 45 two, 35 more)
//      ring ll128:  min(0.92 busBw, c x 36.7)
//      tree (allreduce): min(0.92 busBw, c x perChMaxTreeBw) (Hopper 38.7/41.4/36.0)
//      tree ll:     then min(busBw/3.8, llMaxBw); tree ll128: then
//                   min(busBw x (7/9 one node | 120/128), c x 36.7 (29 beyond 2 nodes))
//      nvls (simple only, >= 2 channels, one node): per channel
//                   s x 0.85 x (c-1)/c x 2 (allreduce) -> busBw = c x that
//      nvls_tree (simple, allreduce, >= 2 nodes): per channel min(that
//                   intra figure, s x (2 if 2 nodes else 1), NCCL's
//                   per-channel NVLS-tree ceiling: Hopper 57.7 (2 nodes) /
//                   45.5 (more), Blackwell 96 / 80); the NVLS graph beyond
//                   one node has one head per NIC ring: s = the largest
//                   inter speed the NIC carries, c = min(ppn, NICs x
//                   floor(nic / s)) (8 x 48 GB/s on 8 x 400G H100 servers)
//      pat (simple, allgather/reducescatter, one GPU per node): c x s x 0.75
//    algBw = busBw x n/steps for ring, nvls and nvls_tree, busBw / 2 for tree;
//      (allgather/reducescatter: algBw = busBw for every algorithm but ring)
//    time(S) = latency + S / algBw, where tree allreduce bandwidth is
//    multiplied by NCCL's per-size correction factor for trees (64 B to
//    256 MiB, powers of two).
//
// 4. The tuner: for each size, the enabled (algorithm, protocol) with the
//    smallest time(S) above (ncclTopoGetAlgoTime); LL128 is enabled by
//    default on NVLink-connected Hopper nodes. NVLS needs an NVSwitch and
//    Hopper or later, and beyond one node it needs CollNet (NCCL disables
//    it otherwise); NVLS tree is its multi-node form (NVSwitch servers,
//    >= 2 of them, >= 2 heads). PAT runs with one GPU per node only.
//    CollNet (section 5) needs switches that reduce (CommShape::sharp) and
//    at least 2 nodes of at most 8 GPUs; collnet_direct also an NVSwitch.
//    With CollNet NCCL also runs NVLS across nodes (NVLS + SHARP), which
//    podnet does not build: nvls stays one-node, nvls_tree multi-node.
//    Small sizes run on fewer channels (enqueue.cc topoGetAlgoInfo, after
//    the choice, which keeps the model's time): a ring or tree drops one
//    channel at a time while S < channels x threads x threshold, with the
//    protocol's threads (device.h: LL 512, LL128 640, Simple 512) and
//    per-thread threshold (comm.h: LL 8, LL128 8, Simple 64 bytes; the
//    ring's LL x ranks, tuning.cc). One H100 server (8 ranks), ring LL:
//    32 KiB a channel, so 8 B to 32 KiB run on 1 channel, 256 KiB on 8, the
//    24 channels from 768 KiB. Not modelled: NCCL then also halves the
//    threads per channel, which lowers a channel's LL rate.
//
// 5. CollNet (in-network reduction by SHARP in InfiniBand switches; NCCL's
//    CollNet transport, src/transport/coll_net.cc, talks to the switches
//    through a CollNet plugin such as NVIDIA's nccl-rdma-sharp-plugins).
//    Simple only (tuning.cc: "Not used" for LL/LL128); all-reduce with
//    both, all-gather and reduce-scatter with collnet_direct only, when the
//    plugin has iallgather / ireducescatter (NVIDIA's SHARP plugin does:
//    Mellanox/nccl-rdma-sharp-plugins src/sharp_plugin.c, its CollNet v8
//    interface) and no node has more GPUs than heads ("AllGather/
//    ReduceScatter requires 1:1 GPU:NIC"). Enabled (tuning.cc, coll_net.cc) only
//    with a CollNet network, >= 2 nodes, <= 8 GPUs per node
//    (NCCL_MAX_DIRECT_ARITY + 1, enqueue.cc); collnet_direct also needs an
//    NVSwitch ("Disable CollNet+Direct if not on an NVSwitch system").
//    Graphs (init.cc, search.cc): collnet_chain uses the ring's channels c
//    and speed s (its graph is searched with min = max = the ring's
//    channels); collnet_direct has one head per NIC (as the NVLS search
//    beyond one node), h = min(ppn, 8, NICs), s = the largest inter speed
//    the NIC carries, duplicated as section 1 (at most h channels). podnet
//    does not run NCCL's second pass, which may raise the graph's bwIntra
//    to 2 x bwInter when s is below the top speed (not on 400G H100).
//    Bandwidth (busBw uses bwIntra for CollNet at any node count):
//      collnet_direct: busBw = c x s / f x (0.85 on Hopper and later),
//        f = r - (r - 1)/2, r = ppn / c (GPUs per NIC; NCCL: "Collnet+Direct
//        requires all GPUs to have a local NIC to work at full speed")
//      collnet_chain:  busBw = c x s
//      algBw = busBw / 2 (as the tree).
//      collnet_direct all-gather / reduce-scatter: busBw = ppn x
//        min(bwIntra, 0.9 x bwInter) = ppn x 0.9 s here (one s for both),
//        0 unless ppn <= h and ppn <= NICs; algBw = busBw (as for every
//        algorithm but the ring on these ops).
//    Latency (base 0; hwLat NVLink/PCIe direct 3.7, chain 2.8; network
//    direct 31, chain 30; with one GPU per node the network figure is the
//    tree's, 14):
//      collnet_direct = 2 (min(1, ppn-1) intraLat + 0.4 (ppn-1)) + interLat
//        (0.4 us per peer: NCCL's "arity serialization latency")
//      collnet_chain  = 2 (ppn-1) intraLat + interLat
//    8 x H100 per node with 8 x 400G NICs: direct h = c = 8 at 48 GB/s,
//    r = 1, busBw = 384 x 0.85 = 326.4, algBw 163.2 GB/s, latency
//    2 (3.7 + 2.8) + 31 = 44 us; chain c = 8 at 48, algBw 192 GB/s,
//    latency 2 x 7 x 2.8 + 30 = 69.2 us (any node count: SHARP's latency
//    does not grow with the nodes, unlike the ring's 2(nodes-1) network
//    steps or the tree's log2(nodes)).
//    All-gather / reduce-scatter on the same servers: collnet_direct algBw
//    8 x 0.9 x 48 = 345.6 GB/s, latency 44 us (the ring: 396.4 GB/s,
//    145.6 us with Simple), so it wins from a few tens of KiB (ring LL
//    below) to about 260 MiB on 4 servers.
//
// The engines time the chosen plan (collective.hpp says how a protocol shows
// in the plan); this model only chooses.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "collective/types.hpp"
#include "core/units.hpp"
#include "topology/topology.hpp"

namespace podnet::collective {

// In NCCL's order (device.h NCCL_ALGO_*), which is also the tuner's loop order.
enum class Algo : uint8_t { Tree, Ring, CollnetDirect, CollnetChain, Nvls, NvlsTree, Pat };
inline constexpr int kNumAlgos = 7;
enum class Proto : uint8_t { LL, LL128, Simple };
inline constexpr int kNumProtos = 3;
enum class Arch : uint8_t { Volta, Ampere, Hopper, Blackwell };

const char* algo_name(Algo a);  // "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"
// Whether `name` is one of NCCL's algorithms (algo_name of some Algo), which collective.algorithms can list.
bool is_nccl_algorithm(std::string_view name);
const char* proto_name(Proto p);         // "ll", "ll128", "simple"
const char* arch_name(Arch a);           // "volta", "ampere", "hopper", "blackwell"
Arch parse_arch(std::string_view name);  // throws InputError
// The Algo / Proto named `name` (algo_name / proto_name); false if none.
bool find_algo(std::string_view name, Algo& out);
bool find_proto(std::string_view name, Proto& out);

// Wire efficiency of a protocol: data bytes per byte on the wire.
// ll 4/8, ll128 120/128, simple 1.
double proto_efficiency(Proto p);

// What NCCL's search and tuner read about a communicator.
struct CommShape {
  Arch arch = Arch::Hopper;
  int32_t ranks = 0;
  int32_t nodes = 0;      // servers holding the group's GPUs
  int32_t nics = 0;       // NICs per server that the group's GPUs use (fewest over servers)
  double nic_gbs = 0;     // one NIC's bandwidth, GB/s (0: no network)
  double nvlink_gbs = 0;  // one GPU's total NVLink bandwidth, GB/s (0: none)
  bool nvswitch = false;  // GPUs reach each other through an NVSwitch
  bool sharp = false;     // the fabric's switches reduce in the network (SHARP; topology::Topology::sharp)
  bool uniform = true;    // every node holds the same number of the group's GPUs (NVLS tree, CollNet need it)
  // The chips are linked to their neighbours only (a NIC-less torus, TPU-like ICI): a tree's or PAT's edges
  // between distant ranks are multi-hop paths that NCCL's model prices as one hop, so auto picks neither.
  bool chip_links = false;
};

// The shape of `group` on `topo`: nodes = distinct servers (a GPU without a
// server label counts as its own node); NICs from topo.gpu_nic; a NIC's
// bandwidth is its fastest link that does not lead to a GPU (for a GPU
// without a NIC, its fastest non-NVLink link); NVLink bandwidth as NCCL
// counts it: the GPU's NVLink capacity per direction x (NCCL's per-link
// figure / the link's raw rate): Volta/Ampere 20/25, Hopper 20.6/25,
// Blackwell 40.1/50 (topo.h), so an H100's 450 GB/s is 370.8 GB/s.
CommShape comm_shape(const Group& group, const topology::Topology& topo, Arch arch);

// Result of the channel search (section 1).
struct SearchGraph {
  int32_t channels = 0;  // search channels c (the tuner's)
  double bw = 0;         // per-channel GB/s s
};
SearchGraph ring_graph(const CommShape& s);
SearchGraph nvls_graph(const CommShape& s);  // channels 0 when NVLS cannot run; beyond one node: the heads
// CollNet Direct's heads (section 5): channels = heads, 0 on one node or beyond
// NCCL_MAX_DIRECT_ARITY + 1 = 8 GPUs per node.
SearchGraph collnet_graph(const CommShape& s);
// Channels the kernels run: 2c (max 64), doubled again on Hopper multi-node
// when s > 45 GB/s and 2c < 16.
int32_t execution_channels(const CommShape& s);

// Channels NCCL runs a ring or tree collective of S = `bytes` on, from the
// communicator's `channels` (section 4's small-size rule); other
// algorithms keep `channels`.
int32_t size_channels(Algo a, Proto p, Bytes bytes, int32_t ranks, int32_t channels);

struct ModelEntry {
  double latency_us = 0;  // per op
  double bw_gbs = 0;      // algorithm bandwidth (GB/s); 0 = not available
};
// NCCL's latency and algorithm bandwidth for (op, algo, proto) (sections 2-3),
// before enable rules; bw 0 where NCCL has no such combination.
ModelEntry model_entry(Op op, Algo a, Proto p, const CommShape& s);
// NCCL's latency for S bytes (the entry's, x the ring plateau factor where it applies), us.
double model_latency_us(Op op, Algo a, Proto p, const CommShape& s, Bytes bytes);
// The network steps one after another in NCCL's latency of (op, a) on shape s: ring 2(nodes-1) for an all-reduce,
// nodes-1 otherwise; tree and NVLS tree 2 log2(nodes) (an all-reduce); PAT log2(nodes); NVLS and CollNet one
// beyond one node; 0 on one node. What a transport's stack latency adds beyond the RDMA NICs NCCL's hwLat was
// measured on is this many times that excess (Options::stack_latency_excess_us).
int32_t network_steps(Op op, Algo a, const CommShape& s);
// NCCL's time for S bytes (section 3), in us; < 0 when not available.
double model_time_us(Op op, Algo a, Proto p, const CommShape& s, Bytes bytes);
// Whether NCCL enables (a, p) by default on this shape (section 4).
bool enabled_by_default(Op op, Algo a, Proto p, const CommShape& s);
// Why algorithm `a` cannot run on this shape at all (its protocol-independent
// rules above), in words for an error; "" when it can.
std::string why_not(Algo a, const CommShape& s);

// Which algorithms and protocols the tuner may use (NCCL_ALGO / NCCL_PROTO).
struct Selection {
  std::array<bool, kNumAlgos> algos{true, true, true, true, true, true, true};
  std::array<bool, kNumProtos> protos{true, true, true};
  bool algos_given = false;  // the user restricted them (else NCCL's defaults apply)
  bool protos_given = false;
};
// Parses "auto" or a NCCL_ALGO/NCCL_PROTO-style list: "ring,tree",
// "^ll128" (all but), case-insensitive. `key` names the setting in errors.
Selection parse_algorithms(std::string_view text, Selection base, const std::string& key);
Selection parse_protocols(std::string_view text, Selection base, const std::string& key);

struct Choice {
  Algo algo = Algo::Ring;
  Proto proto = Proto::Simple;
  double time_us = -1;  // NCCL's model time; < 0: nothing available
};
// The fastest available (algo, proto) for S bytes among `candidates`
// (algorithms podnet builds that support the op) and the selection.
Choice tune(Op op, const CommShape& s, Bytes bytes, const Selection& sel,
            const std::array<bool, kNumAlgos>& candidates);

}  // namespace podnet::collective
