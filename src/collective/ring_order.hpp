// Ring order: in which order a ring (or a tree, or halving-doubling's
// pairing) visits the GPUs of a communicator group, and how many of its hops
// cross each boundary of the fabric.
//
// naive: the group's own order, for every channel (what a topology-unaware
// library does; all channels then share the same hops and NICs).
//
// topology_aware (what NCCL's graph search achieves on rail-optimized
// fabrics; NVIDIA/nccl src/graph/search.cc, NCCL_CROSS_NIC):
// 1. Servers are sorted by (pod, aggregation group, server id), so
//    consecutive servers share a leaf set where they can, then a pod; the
//    ring crosses each group and pod boundary as few times as a ring can.
// 2. Each server's GPUs are contiguous: the ring enters a server at one GPU
//    (its entry), visits the server's other GPUs over NVLink and leaves from
//    another GPU (its exit). A hop between servers goes from the exit GPU of
//    one server to the entry GPU of the next over their NICs.
// 3. Rails: the exit GPU of a server and the entry GPU of the next server are
//    chosen on the same rail (their NICs have the same rail index), so on a
//    rail-optimized fabric every inter-server hop stays on one rail's leaf.
//    The (entry rail, exit rail) of each server is chosen by dynamic
//    programming over the servers so that, in order of priority,
//      a. the number of inter-server hops that change rail (including the
//         closing hop back to the first server) is minimal, then
//      b. servers with two or more GPUs exit on the rail that their entry
//         rail "pairs" with: the channel's home rail h pairs with the next
//         rail h' after it (the next rail present in the first server), and
//         every other rail pairs with h. With identical servers and an even
//         number of them the ring therefore alternates h -> h' -> h -> ...;
//         with an odd number one server detours through a third rail.
//    Ties go to the rail nearest at or after the server's start rail
//    cyclically: h itself, or for a server without h the rail at h's
//    position among its own rails (rule 4). Each channel's choices are then
//    a rotation of channel 0's, so the third rails of odd rings, and the
//    rails of servers that share none, spread over the NICs (ties to the
//    lowest rail index sent 12 of 16 channels' detours through one NIC).
//    A server with one group GPU enters and exits on that GPU.
// 4. Channels spread over the rails every server of the group has (the
//    first server's when none is common to all): with S such rails r_0 <
//    ... < r_{S-1}, channel c's home rail is h = r_j, j = (2c + floor(2c /
//    S)) mod S, and h' (rule 3b) is the next of them after h. The first
//    server is entered at its GPU on h (lowest local index among equals).
//    With 8 rails, channels 0..3 use the rail pairs {0,1} {2,3} {4,5} {6,7}
//    and channels 4..7 the pairs {1,2} {3,4} {5,6} {7,0}, so different
//    channels leave and enter servers through different NICs; a group of
//    GPUs 0-3 of each server spreads over rails 0-3 alone (homes over all 8
//    rails sent every channel homed on 4-7 to rail 0).
// 5. Inside a server: the entry GPU, then the server's other GPUs in
//    ascending local index starting after the entry (wrapping around),
//    skipping the exit GPU, then the exit GPU. The first GPU of the order is
//    the first server's entry GPU.
// GPUs without a NIC (NIC-less fabrics) count as rail 0. The order of a
// single-server group is its GPUs rotated to start at the channel's entry.
// 6. A torus (Topology::torus_dims) has no NICs and no rails: the order is a
//    snake through the group's coordinates instead (the slowest dimension
//    outermost, each inner dimension reversed on alternate steps of the ones
//    outside it); even channels walk it forwards, odd channels backwards
//    (the same first chip, then the snake reversed), so two channels use
//    both directions of every link, as full-duplex chip-to-chip links
//    allow (before, every channel went one way and the other direction
//    idled: a 16-chip ring all-reduce reached half the busbw). An odd
//    number of channels loads one direction with one more channel; a group
//    whose closing hop crosses several links (an open line, a slab of a
//    larger torus) gains nothing, the reversed channel's hops sharing those
//    links with the forward channel's closing hop. On a box of
//    chips every hop, the closing one included, is one torus link. The rail
//    rules above walked each server back and forth there and made hops
//    share links.
#pragma once

#include <cstdint>
#include <vector>

#include "collective/collective.hpp"
#include "topology/topology.hpp"

namespace podnet::collective {

// The ring order of `group` for `channel`.
Group ring_order(const Group& group, RingOrder order, int32_t channel, const topology::Topology& topo);
Group topology_aware_order(const Group& group, const topology::Topology& topo, int32_t channel = 0);

// Channel c's home rail index among `rails` rails (rule 4 above: j).
int32_t home_rail(int32_t channel, int32_t rails);

// The group split by server. naive: servers in order of first appearance,
// GPUs in group order; topology_aware: servers by (pod, group, server), GPUs
// by local index.
std::vector<Group> group_by_server(const Group& group, RingOrder order, const topology::Topology& topo);

// The hops of a ring (closing hop included unless `open`), classified by the
// largest boundary they cross. hops = intra_server + cross_server +
// cross_group + cross_pod.
struct RingStats {
  int64_t hops = 0;
  int64_t intra_server = 0;     // both GPUs in one server
  int64_t cross_server = 0;     // different servers, same aggregation group (same leaf set)
  int64_t cross_group = 0;      // different groups, same pod
  int64_t cross_pod = 0;        // different pods
  int64_t cross_rail_hops = 0;  // inter-server hops whose two GPUs' NICs are on different rails
};

RingStats ring_stats(const Group& order, const topology::Topology& topo, bool open = false);

}  // namespace podnet::collective
