// Torus collectives: rings per dimension on a NIC-less torus (TPU-like ICI),
// where every chip has a full-duplex link to each neighbour in each dimension.
//
// The group must be a box: the Cartesian product of one set of coordinates
// per dimension (topology/torus.hpp: rank r = x0 + k0 (x1 + k1 x2)). Its
// active dimensions are those where the set has two or more chips; D is
// their count, e_d the chips along dimension d, n = prod e_d. A line along d
// is the e_d chips of the box that differ only in coordinate d, in
// ascending order; the ring over a line closes from the last chip back to
// the first (on a whole dimension, the wrap-around link).
//
// torus (the default on such fabrics): S is split into 2 D equal parts.
// Part (j, dir) visits the active dimensions in the order rotated by j
// (j, j+1, ..., j+D-1 mod D): a reduce-scatter along each in turn, then an
// all-gather along each in reverse order. Its rings run forwards (dir 0) or
// backwards (dir 1) along every line. At any phase the D rotations stand
// on D different dimensions and the two directions on the two directions
// of their links, so a symmetric torus carries no two rings on one link
// direction. After a reduce-scatter along d a chip holds 1/e_d of the data
// it had, so the phase i of a part carries s_i = S / (2 D prod_{m<i} e_m)
// per chip, and every hop of a ring over e chips carries (e-1)/e x s_i,
// in e-1 latency steps. An all-reduce merges its last reduce-scatter and
// first all-gather into one all-reduce ring (2(e-1)/e x s, 2(e-1) steps).
// A ring of one phase waits for the rings of the previous phase that cross
// its line (e of them: a chip starts a phase with what its own line left).
//
// Closed form on a k^D torus with links of B per direction, every phase at
// the rate of one link (hop latency alpha):
//   reduce-scatter, all-gather:  (n-1)/n x S / (2 D B) + D (k-1) alpha
//   all-reduce:                  (n-1)/n x S / (D B)   + 2 D (k-1) alpha
// D times the bidirectional snake ring's bandwidth term (n-1)/n x S / B,
// and D (k-1) latency steps where the ring takes n-1. This is the
// bandwidth-optimal bound for a torus whose chips send on all 2 D ports at
// once (every byte a chip must receive, (n-1)/n x S, arrives over 2 D links).
// Unequal dimensions unbalance the rotations' phases: the engines time what
// then shares a link.
//
// torus_dimorder: the same rings without the rotation (S split in 2, one
// part a direction, the active dimensions in their order 0, 1, 2): a
// hierarchical reduce-scatter / all-gather with one dimension busy at a time.
// Its bandwidth term is the bidirectional snake ring's, (n-1)/n x S / B for
// an all-reduce, with 2 sum_d (e_d - 1) latency steps.
//
// torus_astra: ASTRA-sim's localBWAware schedule (astra-sim/astra-sim,
// system/Sys.cc and collective/Ring.cc; its shipped torus examples' settings):
// S cut into 4 chunks (preferred-dataset-splits 4); each chunk a
// reduce-scatter along dimension 0, 1, ..., an all-reduce along the last, then
// all-gathers back to dimension 0; reduce-scatters and the all-reduce run one
// way round (clockwise: forwards), all-gathers the other; a dimension's queue
// runs one chunk at a time (active-chunks-per-dimension 1), so a chunk's phase
// waits for the previous chunk's same phase. Dimension 0 carries almost all
// the bytes: on a k^D torus the all-reduce takes about
//   4 a + (its later phases for the last chunk),  a = (k-1)/k x (S/4) / B,
// about D times torus's. ASTRA-sim's congestion-unaware analytical backend
// also lets concurrent chunks share no link; here the engines share them.
//
// With Options::coupled_steps (the training planner's data-parallel collectives, as for PAT) a phase is one
// Coupled transfer holding every line's ring, each edge a hop, moving at one rate, and it waits for the part's
// whole previous phase: 2 D (2 D - 1) transfers an all-reduce instead of one per line and phase (a
// 4,096-chip torus: 30 against 7,680). On a symmetric box every line of a phase ends at once, so only the
// engines' sharing with other traffic can tell the two apart.
//
// ASSUMPTIONS: a ring's step costs its hop's latency (the links' cable and
// the chips' hop_latency); no software or synchronisation cost per step and
// no NCCL protocol (the chips' own collective engine, as TPUs run it). A
// phase starts when the rings crossing its line have ended (no pipelining of
// chunks across phases: exact for the bandwidth term of a symmetric torus,
// where every phase of every part ends at once).
#pragma once

#include "collective/collective.hpp"

namespace podnet::collective {

AlgorithmInfo torus_algorithm();
AlgorithmInfo torus_dimorder_algorithm();
AlgorithmInfo torus_astra_algorithm();

// Whether `group` is a box of chips on a torus fabric (the torus algorithms can run on it). Empty when it
// is; else why not, in a sentence.
std::string torus_box_problem(const Group& group, const topology::Topology& topo);

// What `auto` weighs on a NIC-less torus (collective.cpp, make_plan), for S bytes over a box: the torus
// plan's time, its busiest link's bytes (every ring routed dimension by dimension over minimal paths, a tie
// at k/2 split) over a chip link's rate plus its chain of ring steps (e_d - 1 a reduce-scatter or all-gather
// per dimension, twice for an all-reduce) at the links' mean latency; and the busiest link's bytes of the
// snake ring through the box (two channels, one each way: what NCCL's ring runs there, ring_order.hpp).
// make_plan prices NCCL's ring as its model's latency plus those bytes at the link rate over its protocol's
// efficiency, and runs torus where that is no faster. So a large all-reduce over a whole torus runs torus
// (a quarter or less of the ring's busiest bytes), and so does a small one anywhere (a few link latencies
// against NCCL's microseconds a step); over a 4 x 2 corner of a 16 x 16 torus a large one keeps the ring
// (the torus's busiest link 1.125 S against the snake's 0.875 S: 1,132.9 against 1,027.5 us at 48 MiB). A
// line going once around its dimension (all its chips, or every k/e-th) covers each link once; a line on part
// of a dimension closes back over its own links, so its two directions share every link.
struct TorusEstimate {
  double torus_s = 0;
  double snake_busiest_bytes = 0;
  double link_bytes_per_s = 0;
};
// Zeros when `group` is no box.
TorusEstimate torus_estimate(Op op, const Group& group, Bytes bytes, const topology::Topology& topo);

}  // namespace podnet::collective
