// Localization of silent loss from probe results (network tomography).
//
// Data. For every probe tuple i (a pair of endpoints and a UDP source port):
// n_i probes sent, k_i lost, and the components it crosses with a weight
// a_ie: every directed network link of its forward and return paths (a = 1;
// with unknown paths, the share of the tuple's packets the ECMP DAG sends
// over it) and every switch it passes through (a = times it passes). h_i is
// the directed links crossed.
//
// Model. Losses are rare and independent, so k_i ~ Poisson(n_i mu_i) with
//     mu_i = b h_i + sum_{e in S} a_ie l_e,
// b the background loss per link crossing (every link alike), S the set of
// faulty components and l_e the loss probability of component e (per packet
// crossing it). This is the linear-Poisson model of loss tomography; unlike
// 007's vote counting (Arzani et al., NSDI 2018), which ranks links by
// 1/|path| votes from failed flows and blames whole paths, and like
// NetBouncer's fit of per-link success rates (Tan et al., NSDI 2019), it
// uses the probes that were NOT lost as well: a link crossed by many clean
// probes is exonerated by its exposure E_e = sum_i n_i a_ie.
//
// Search (forward selection with backward pruning, a sparse maximum-
// likelihood fit). Start with S empty and b = K / sum_i n_i h_i (K = all
// losses). Repeat:
//   1. For each component e not in S crossed by a lossy tuple, the
//      log-likelihood gain of adding it at its best rate:
//        G(e) = max_{l >= 0} sum_{i: k_i > 0} k_i ln(1 + a_ie l / mu_i) - l E_e,
//      (the clean tuples enter through E_e only); the maximizer solves
//        sum_i k_i a_ie / (mu_i + a_ie l) = E_e  (Newton from l = 0, monotone:
//      the left side is convex and decreasing in l).
//   2. Take the e with the largest G, add it and refit (3.); keep it only if
//      the whole log-likelihood rose by at least G* (else undo and stop),
//      where G* is the gain whose p-value passes a Bonferroni test over the C
//      components tested: C p(G*) = alpha (default 1e-3). Under "e is
//      healthy" 2G is asymptotically 1/2 chi2_0 + 1/2 chi2_1 (a rate on its
//      boundary), so p(G) = erfc(sqrt(G)) / 2. (The refit matters: b had
//      absorbed part of e's losses, so G alone understates the gain.)
//   3. Refit b and every l_e of S jointly by EM for Poisson mixtures
//      (Shepp & Vardi 1982), which never lowers the likelihood:
//        l_e <- l_e sum_{i: k_i > 0} (k_i a_ie / mu_i) / E_e,
//        b   <- b   sum_{i: k_i > 0} (k_i h_i  / mu_i) / sum_i n_i h_i.
//   4. Prune: a member whose removal costs less likelihood than the entry
//      test demands is dropped (a switch found after some of its links makes
//      those links redundant).
// A faulty switch loses packets on every path through it; one switch
// component explains all of them at once, so it wins over any of its links
// and is named as the switch (not as 64 links). Confidence of a suspect:
// 1 - C p of the likelihood its removal would cost (clamped to [0, 1]).
// Limits: components crossed by exactly the same tuples with the same
// weights cannot be told apart by any probing; the one with the lower id is
// named and `tied` counts the others. The two directions of a NIC's link are
// always alike (every round-trip probe from or to the NIC crosses both).
// Latency faults are not localized here.
// Determinism: every loop runs in tuple and component-id order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diagnose/probe.hpp"
#include "topology/topology.hpp"

namespace podnet::diagnose {

// Components: directed link d is component d (0 <= d < 2L); node n is
// component 2L + n (switches only appear).
struct Incidence {
  int32_t dirs = 0;                                                // 2L
  int32_t components = 0;                                          // 2L + nodes
  std::vector<int32_t> offset;                                     // [tuple] -> parts
  std::vector<int32_t> component;                                  // parts
  std::vector<float> weight;                                       // parts: a_ie
  std::vector<float> hops;                                         // [tuple]: h_i
  std::string name(const topology::Topology& t, int32_t c) const;  // "LEAF:PORT -> SPINE" or a switch name
};

// The incidence of a simulated mesh (known paths).
Incidence incidence_of(const topology::Topology& t, const Mesh& mesh);

struct Suspect {
  int32_t component = 0;
  double loss = 0;             // l_e: estimated loss probability per packet crossing
  double lost = 0;             // probes attributed: l_e E_e
  double exposure = 0;         // E_e: probe packets that crossed it
  double confidence = 0;       // 1 - C p
  int32_t tied = 0;            // other components no probe distinguishes from it
  std::vector<int32_t> alike;  // the first 8 of them, by id
};

struct LocalizeOptions {
  double alpha = 1e-3;  // family-wise false-alarm level of the entry test
  int max_suspects = 64;
};

struct Localization {
  int32_t dirs = 0;               // components below this are link directions
  std::vector<Suspect> suspects;  // by confidence, then attributed losses, then id
  double background = 0;          // b
  int64_t lost = 0, sent = 0;
  int32_t tested = 0;  // C
};

Localization localize(const Incidence& inc, const std::vector<int64_t>& sent, const std::vector<int64_t>& lost,
                      const LocalizeOptions& o = {});

}  // namespace podnet::diagnose

namespace podnet::diagnose {

// Localization of added latency (gray links, slow optics) from RTTs.
//
// The RTT a tuple should see on an idle fabric is the sum of its components'
// costs: base_i = sum_e a_ie c_e, c = a link direction's propagation plus the
// serialization of one probe, or a switch's port-to-port latency (the
// design's own figures). A tuple is slow when its median RTT exceeds base_i
// by more than `threshold`, clean when by less than threshold / 2. Boolean
// tomography with exoneration (as in Duffield, "Network Tomography of Binary
// Network Performance Characteristics", IEEE Trans. Inf. Theory 2006): a
// component crossed (weight >= 1) by a clean tuple is cleared; among the
// others crossed by slow tuples, the smallest set that covers every slow
// tuple is chosen greedily (most uncovered slow tuples first, then lower
// id). A suspect's added RTT is the least excess of the slow tuples it
// covers (a probe crossing it twice, request and reply, sees twice a
// one-way delay). Slow tuples no uncleared component explains are counted.
struct DelaySuspect {
  int32_t component = 0;
  double rtt_added_s = 0;
  int64_t slow_tuples = 0;  // slow tuples through it
  int32_t tied = 0;         // uncleared components crossed by exactly the same slow tuples
  std::vector<int32_t> alike;
};

struct DelayLocalization {
  std::vector<DelaySuspect> suspects;
  int64_t slow = 0, clean = 0, unexplained = 0;
};

// Each component's cost c_e (seconds) for base RTTs.
std::vector<double> component_costs(const topology::Topology& t, const Incidence& inc, int64_t probe_bytes);

// rtt_s[i]: tuple i's median RTT in seconds, < 0 when unknown (every probe lost, or not measured).
DelayLocalization localize_delay(const Incidence& inc, const std::vector<double>& cost,
                                 const std::vector<double>& rtt_s, double threshold_s);

}  // namespace podnet::diagnose
