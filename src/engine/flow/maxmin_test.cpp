#include "engine/flow/maxmin.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace podnet::engine::flow {
namespace {

using namespace podnet::literals;

// Relative closeness for rates computed through a few divisions.
void expect_rate(double got, double want) {
  EXPECT_NEAR(got, want, 1e-9 * std::max(1.0, std::abs(want))) << "got " << got << " want " << want;
}

std::vector<Resource> path(std::initializer_list<LinkId> links) {
  std::vector<Resource> r;
  for (LinkId l : links) r.push_back(Resource{l, 1.0});
  return r;
}

TEST(MaxMin, OneFlowOneLinkGetsCapacity) {
  // A lone flow is limited only by its link: r = C = 100 Gb/s.
  MaxMinSolver s;
  LinkId l = s.add_link(100_Gbps);
  FlowId f = s.add_flow(path({l}));
  s.solve();
  expect_rate(s.rate_bps(f), 100e9);
  expect_rate(s.link_load_bps(l), 100e9);
}

TEST(MaxMin, TwoFlowsShareALinkEqually) {
  // Level = C / (w1 + w2) = 100 / 2 = 50 Gb/s each.
  MaxMinSolver s;
  LinkId l = s.add_link(100_Gbps);
  FlowId a = s.add_flow(path({l}));
  FlowId b = s.add_flow(path({l}));
  s.solve();
  expect_rate(s.rate_bps(a), 50e9);
  expect_rate(s.rate_bps(b), 50e9);
}

TEST(MaxMin, ParkingLotEqualCapacities) {
  // Links 1,2,3 of capacity C; A crosses all three, B, C, D one each.
  // Every link has two unit-weight flows, so every level is C/2: the first
  // link popped (index order on the tie) freezes A and its partner at C/2;
  // the other links then have C - C/2 left for one flow: C/2. All get C/2.
  MaxMinSolver s;
  LinkId l1 = s.add_link(100_Gbps), l2 = s.add_link(100_Gbps), l3 = s.add_link(100_Gbps);
  FlowId a = s.add_flow(path({l1, l2, l3}));
  FlowId b = s.add_flow(path({l1}));
  FlowId c = s.add_flow(path({l2}));
  FlowId d = s.add_flow(path({l3}));
  s.solve();
  for (FlowId f : {a, b, c, d}) expect_rate(s.rate_bps(f), 50e9);
  for (LinkId l : {l1, l2, l3}) expect_rate(s.link_load_bps(l), 100e9);
}

TEST(MaxMin, ParkingLotWithACrowdedFirstLink) {
  // As above but link 1 carries A, B1 and B2: level(l1) = C/3 < C/2.
  // l1 saturates first: A = B1 = B2 = C/3. Then l2 has C - C/3 = 2C/3 left
  // for flow C alone -> 2C/3; l3 likewise gives D 2C/3.
  const double C = 90e9;
  MaxMinSolver s;
  LinkId l1 = s.add_link(Bandwidth(C)), l2 = s.add_link(Bandwidth(C)), l3 = s.add_link(Bandwidth(C));
  FlowId a = s.add_flow(path({l1, l2, l3}));
  FlowId b1 = s.add_flow(path({l1}));
  FlowId b2 = s.add_flow(path({l1}));
  FlowId c = s.add_flow(path({l2}));
  FlowId d = s.add_flow(path({l3}));
  s.solve();
  expect_rate(s.rate_bps(a), C / 3);
  expect_rate(s.rate_bps(b1), C / 3);
  expect_rate(s.rate_bps(b2), C / 3);
  expect_rate(s.rate_bps(c), 2 * C / 3);
  expect_rate(s.rate_bps(d), 2 * C / 3);
}

TEST(MaxMin, DifferentCapacitiesBottleneck) {
  // X = 10 Gb/s carries A and B; Y = 4 Gb/s carries A and C.
  // Levels: X 10/2 = 5, Y 4/2 = 2 -> Y first: A = C = 2.
  // X then has 10 - 2 = 8 for B alone: B = 8.
  MaxMinSolver s;
  LinkId x = s.add_link(10_Gbps), y = s.add_link(4_Gbps);
  FlowId a = s.add_flow(path({x, y}));
  FlowId b = s.add_flow(path({x}));
  FlowId c = s.add_flow(path({y}));
  s.solve();
  expect_rate(s.rate_bps(a), 2e9);
  expect_rate(s.rate_bps(b), 8e9);
  expect_rate(s.rate_bps(c), 2e9);
  expect_rate(s.link_load_bps(x), 10e9);
  expect_rate(s.link_load_bps(y), 4e9);
}

TEST(MaxMin, ThreeLevelChain) {
  // L1 = 30 carries A,B,C; L2 = 50 carries C,D; L3 = 100 carries D,E.
  // Levels: L1 30/3 = 10, L2 50/2 = 25, L3 100/2 = 50.
  // L1 first: A = B = C = 10. L2: (50 - 10) / 1 = 40 for D.
  // L3: (100 - 40) / 1 = 60 for E.
  MaxMinSolver s;
  LinkId l1 = s.add_link(30_Gbps), l2 = s.add_link(50_Gbps), l3 = s.add_link(100_Gbps);
  FlowId a = s.add_flow(path({l1}));
  FlowId b = s.add_flow(path({l1}));
  FlowId c = s.add_flow(path({l1, l2}));
  FlowId d = s.add_flow(path({l2, l3}));
  FlowId e = s.add_flow(path({l3}));
  s.solve();
  expect_rate(s.rate_bps(a), 10e9);
  expect_rate(s.rate_bps(b), 10e9);
  expect_rate(s.rate_bps(c), 10e9);
  expect_rate(s.rate_bps(d), 40e9);
  expect_rate(s.rate_bps(e), 60e9);
}

TEST(MaxMin, WeightsOneAndThree) {
  // Level = 100 / (1 + 3) = 25: rates 1*25 = 25 and 3*25 = 75 (1/4, 3/4).
  MaxMinSolver s;
  LinkId l = s.add_link(100_Gbps);
  FlowId a = s.add_flow(path({l}), 1.0);
  FlowId b = s.add_flow(path({l}), 3.0);
  s.solve();
  expect_rate(s.rate_bps(a), 25e9);
  expect_rate(s.rate_bps(b), 75e9);
}

TEST(MaxMin, CapBelowFairShare) {
  // A capped at 30 < fair share 50: cap level 30/1 < link level 100/2, so A
  // freezes at 30; B takes the rest, 100 - 30 = 70.
  MaxMinSolver s;
  LinkId l = s.add_link(100_Gbps);
  FlowId a = s.add_flow(path({l}), 1.0, 30_Gbps);
  FlowId b = s.add_flow(path({l}));
  s.solve();
  expect_rate(s.rate_bps(a), 30e9);
  expect_rate(s.rate_bps(b), 70e9);
}

TEST(MaxMin, CapAboveFairShareIsInactive) {
  // Cap 80 > fair share 50: the link saturates first, 50 / 50.
  MaxMinSolver s;
  LinkId l = s.add_link(100_Gbps);
  FlowId a = s.add_flow(path({l}), 1.0, 80_Gbps);
  FlowId b = s.add_flow(path({l}));
  s.solve();
  expect_rate(s.rate_bps(a), 50e9);
  expect_rate(s.rate_bps(b), 50e9);
}

TEST(MaxMin, WeightedAndCapped) {
  // Weights 1 and 3 on 100; the weight-3 flow capped at 60. Link level 100/4
  // = 25 would give it 75 > 60; its cap level 60/3 = 20 < 25, so it freezes
  // at 60 and the weight-1 flow gets 100 - 60 = 40.
  MaxMinSolver s;
  LinkId l = s.add_link(100_Gbps);
  FlowId a = s.add_flow(path({l}), 1.0);
  FlowId b = s.add_flow(path({l}), 3.0, 60_Gbps);
  s.solve();
  expect_rate(s.rate_bps(a), 40e9);
  expect_rate(s.rate_bps(b), 60e9);
}

TEST(MaxMin, CapOnlyFlowAndUnconstrainedFlow) {
  // No links: a capped flow runs at its cap, an uncapped one at +inf.
  MaxMinSolver s;
  s.add_link(100_Gbps);
  std::vector<Resource> none;
  FlowId a = s.add_flow(none, 1.0, 7_Gbps);
  FlowId b = s.add_flow(none);
  s.solve();
  expect_rate(s.rate_bps(a), 7e9);
  EXPECT_TRUE(std::isinf(s.rate_bps(b)));
}

TEST(MaxMin, CoefficientTwoRing) {
  // A pipelined ring as one variable R whose two hops both cross link L
  // (coefficient 2), plus a plain flow P on L. Unfrozen weight on L is
  // 2*1 + 1*1 = 3, level = 100/3: R = P = 33.33 Gb/s and R consumes 2*33.33,
  // so the link is full: 66.67 + 33.33 = 100.
  MaxMinSolver s;
  LinkId l = s.add_link(100_Gbps);
  LinkId other = s.add_link(100_Gbps);
  std::vector<Resource> ring = {{l, 2.0}, {other, 1.0}};
  FlowId r = s.add_flow(ring);
  FlowId p = s.add_flow(path({l}));
  s.solve();
  expect_rate(s.rate_bps(r), 100e9 / 3);
  expect_rate(s.rate_bps(p), 100e9 / 3);
  expect_rate(s.link_load_bps(l), 100e9);
  expect_rate(s.link_load_bps(other), 100e9 / 3);
}

TEST(MaxMin, RepeatedLinkCountsLikeCoefficient) {
  // Listing a link twice is the same as coefficient 2: alone on 100, the
  // ring's rate is 100 / 2 = 50.
  MaxMinSolver s;
  LinkId l = s.add_link(100_Gbps);
  std::vector<Resource> twice = {{l, 1.0}, {l, 1.0}};
  FlowId a = s.add_flow(twice);
  s.solve();
  expect_rate(s.rate_bps(a), 50e9);
  expect_rate(s.link_load_bps(l), 100e9);
  s.remove_flow(a);
  std::vector<Resource> two = {{l, 2.0}};
  FlowId b = s.add_flow(two);
  s.solve();
  expect_rate(s.rate_bps(b), 50e9);
}

TEST(MaxMin, ZeroCapacityLinkStallsItsFlows) {
  // Level of a 0-capacity link is 0: its flow gets 0; the flow sharing only
  // the healthy link gets all of it (100 - 0).
  MaxMinSolver s;
  LinkId dead = s.add_link(Bandwidth(0));
  LinkId ok = s.add_link(100_Gbps);
  FlowId a = s.add_flow(path({dead, ok}));
  FlowId b = s.add_flow(path({ok}));
  s.solve();
  EXPECT_EQ(s.rate_bps(a), 0.0);
  expect_rate(s.rate_bps(b), 100e9);
}

TEST(MaxMin, IncrementalTouchesOnlyTheChangedComponent) {
  // Two disjoint components {l0: a, b} and {l1: c}. Adding d on l1 must
  // re-solve only l1's component: c and d at 50, a and b untouched.
  MaxMinSolver s;
  LinkId l0 = s.add_link(100_Gbps), l1 = s.add_link(100_Gbps);
  FlowId a = s.add_flow(path({l0}));
  FlowId b = s.add_flow(path({l0}));
  FlowId c = s.add_flow(path({l1}));
  s.solve();
  // a and c each find a free link (arrival shortcut); b needs a's bandwidth,
  // so l0's component {a, b} is re-solved.
  EXPECT_EQ(s.last_stats().flows, 2u);
  EXPECT_EQ(s.last_stats().fast_flows, 1u);
  EXPECT_EQ(s.solved_flows().size(), 3u);
  expect_rate(s.rate_bps(c), 100e9);
  FlowId d = s.add_flow(path({l1}));
  EXPECT_TRUE(s.dirty());
  s.solve();
  EXPECT_FALSE(s.dirty());
  std::vector<FlowId> solved(s.solved_flows().begin(), s.solved_flows().end());
  std::sort(solved.begin(), solved.end());
  EXPECT_EQ(solved, (std::vector<FlowId>{c, d}));
  EXPECT_EQ(s.solved_links().size(), 1u);
  expect_rate(s.rate_bps(a), 50e9);
  expect_rate(s.rate_bps(b), 50e9);
  expect_rate(s.rate_bps(c), 50e9);
  expect_rate(s.rate_bps(d), 50e9);

  // Removing a gives b the whole of l0; l1 is not re-solved.
  s.remove_flow(a);
  s.solve();
  EXPECT_EQ(s.solved_flows().size(), 1u);
  expect_rate(s.rate_bps(b), 100e9);

  // A capacity change re-solves that link's component.
  s.set_capacity(l1, 40_Gbps);
  s.solve();
  expect_rate(s.rate_bps(c), 20e9);
  expect_rate(s.rate_bps(d), 20e9);

  // Parking and unparking.
  s.set_active(c, false);
  s.solve();
  EXPECT_EQ(s.rate_bps(c), 0.0);
  expect_rate(s.rate_bps(d), 40e9);
  s.set_active(c, true);
  s.solve();
  expect_rate(s.rate_bps(c), 20e9);

  // Re-weighting: c weight 3 -> c = 30, d = 10.
  s.set_weight(c, 3.0);
  s.solve();
  expect_rate(s.rate_bps(c), 30e9);
  expect_rate(s.rate_bps(d), 10e9);
  // Capping c at 5 -> d = 35.
  s.set_cap(c, 5_Gbps);
  s.solve();
  expect_rate(s.rate_bps(c), 5e9);
  expect_rate(s.rate_bps(d), 35e9);

  // Re-weighting then removing before any solve: d alone on l1 gets 40.
  s.set_weight(c, 2.0);
  s.remove_flow(c);
  s.solve();
  expect_rate(s.rate_bps(d), 40e9);
  EXPECT_EQ(s.link_flow_count(l1), 1u);

  // Nothing changed: solve is a no-op.
  s.solve();
  EXPECT_EQ(s.solved_flows().size(), 0u);
}

TEST(MaxMin, PartialReSolveLeavesTheFlowsBelowTheThresholdAlone) {
  // Link X = 100 Gb/s carries two fast flows f1, f2 and 200 slow flows s_i,
  // each also crossing its own link Y_i = 0.25 Gb/s. Max-min: every s_i is
  // held at 0.25 by Y_i; f1 = f2 = (100 - 200 x 0.25) / 2 = 25.
  MaxMinSolver s;
  const LinkId x = s.add_link(100_Gbps);
  std::vector<FlowId> slow;
  for (int i = 0; i < 200; ++i) {
    const LinkId y = s.add_link(Bandwidth(0.25e9));
    slow.push_back(s.add_flow(path({x, y})));
  }
  const FlowId f1 = s.add_flow(path({x}));
  const FlowId f2 = s.add_flow(path({x}));
  s.solve();
  expect_rate(s.rate_bps(f1), 25e9);
  expect_rate(s.rate_bps(f2), 25e9);
  for (FlowId g : slow) expect_rate(s.rate_bps(g), 0.25e9);
  EXPECT_EQ(s.link_flow_count(x), 202u);

  // f1 leaves. f2 has the same r/w (25), so the departure shortcut cannot
  // apply; the threshold is f1's 25 and only f2 is above it: one flow
  // re-solved, on one link, f2 = 100 - 50 = 50; the slow flows are neither
  // re-solved nor walked.
  s.remove_flow(f1);
  s.solve();
  EXPECT_EQ(s.last_stats().flows, 1u);
  EXPECT_EQ(s.last_stats().links, 1u);
  expect_rate(s.rate_bps(f2), 50e9);
  expect_rate(s.link_load_bps(x), 100e9);
  EXPECT_EQ(s.link_flow_count(x), 201u);

  // 150 slow flows leave one by one (their entries die in X's sorted list and
  // are compacted away). After each, f2 takes what they freed:
  // f2 = 100 - 0.25 x (slow flows left), and X stays full.
  for (int i = 0; i < 150; ++i) {
    s.remove_flow(slow[static_cast<size_t>(i) * 4 / 3]);
    s.solve();
  }
  // (The indices i * 4 / 3 for i < 150 are distinct: 0, 1, 2, 4, 5, 6, 8, ...)
  expect_rate(s.rate_bps(f2), 100e9 - 50 * 0.25e9);
  expect_rate(s.link_load_bps(x), 100e9);
  EXPECT_EQ(s.link_flow_count(x), 51u);
  for (size_t i = 0; i < slow.size(); ++i)
    if (s.alive(slow[i])) expect_rate(s.rate_bps(slow[i]), 0.25e9);
}

TEST(MaxMin, NarrowReSolveTakesOnlyTheFlowsTheChangedLinksBottleneck) {
  // A = 10 Gb/s carries f and g; g also crosses B = 100, which carries k1..k4,
  // each also on its own C_i = 20. Water-filling: A saturates first at
  // 10 / 2 = 5 (B's level is 100 / 5 = 20, each C_i's 20), so f = g = 5; then
  // B's level is (100 - 5) / 4 = 23.75 > 20, so each C_i saturates: k_i = 20.
  // B carries 5 + 4 x 20 = 85 < 100: it is nobody's bottleneck.
  MaxMinSolver s;
  const LinkId a = s.add_link(10_Gbps), b = s.add_link(100_Gbps);
  const FlowId f = s.add_flow(path({a}));
  const FlowId g = s.add_flow(path({a, b}));
  std::vector<FlowId> k;
  for (int i = 0; i < 4; ++i) k.push_back(s.add_flow(path({b, s.add_link(20_Gbps)})));
  s.solve();
  expect_rate(s.rate_bps(g), 5e9);
  for (FlowId x : k) expect_rate(s.rate_bps(x), 20e9);
  expect_rate(s.link_load_bps(b), 85e9);

  // f leaves A, where g has the same r/w (5): a re-solve above threshold 5.
  // The threshold rule would take g, then on B every flow at or above 5 (the
  // four k_i), then their C_i: 5 flows on 6 links. The narrow rule takes
  // only A's top tier, g; B is not saturated, so none of its flows is
  // bottlenecked there and B's k_i stay as they are: 1 flow, links A and B.
  // g = min(A: 10, B: 100 - 4 x 20 = 20) = 10.
  s.remove_flow(f);
  s.solve();
  EXPECT_EQ(s.last_stats().narrow, 1u);
  EXPECT_EQ(s.last_stats().retries, 0u);
  EXPECT_EQ(s.last_stats().flows, 1u);
  EXPECT_EQ(s.last_stats().links, 2u);
  expect_rate(s.rate_bps(g), 10e9);
  for (FlowId x : k) expect_rate(s.rate_bps(x), 20e9);
  expect_rate(s.link_load_bps(a), 10e9);
  expect_rate(s.link_load_bps(b), 90e9);
}

TEST(MaxMin, NarrowReSolveWithACoefficientAndAWeight) {
  // A = 30 Gb/s carries f (coef 1, weight 1), g (coef 2: it crosses A
  // twice) and h (weight 2). Filling at level L: f = L, g = L (consuming
  // 2L), h = 2L: L + 2L + 2L = 30, so L = 6: f = g = 6, h = 12 (r/w 6 each),
  // load 6 + 12 + 12 = 30. f leaves: every remaining flow has f's r/w, so a
  // narrow re-solve takes A's top tier, g and h: 2L + 2L = 30, L = 7.5:
  // g = 7.5 (consuming 15), h = 15, load 30. (The re-solved flows' terms are
  // not all unit coefficients: the coefficient-2 path is the one taken.)
  MaxMinSolver s;
  const LinkId a = s.add_link(30_Gbps);
  const FlowId f = s.add_flow(path({a}));
  const std::vector<Resource> twice = {{a, 2.0}};
  const FlowId g = s.add_flow(twice);
  const FlowId h = s.add_flow(path({a}), 2.0);
  s.solve();
  expect_rate(s.rate_bps(f), 6e9);
  expect_rate(s.rate_bps(g), 6e9);
  expect_rate(s.rate_bps(h), 12e9);
  expect_rate(s.link_load_bps(a), 30e9);
  s.remove_flow(f);
  s.solve();
  EXPECT_EQ(s.last_stats().narrow, 1u);
  EXPECT_EQ(s.last_stats().flows, 2u);
  expect_rate(s.rate_bps(g), 7.5e9);
  expect_rate(s.rate_bps(h), 15e9);
  expect_rate(s.link_load_bps(a), 30e9);
}

TEST(MaxMin, NarrowReSolveOfAFlowLongerThanItsLinkSlots) {
  // The solver keeps the links of a flow with at most 8 terms at a place
  // found from its id, longer ones only in the pooled terms: f crosses 10
  // links of 100 Gb/s, g and h only the first. Link 0 carries three flows:
  // 100 / 3 each; the other nine carry f alone. g leaves: a narrow re-solve
  // from link 0 takes its top tier, f and h: 100 / 2 = 50 each, and f's ten
  // links are all re-solved.
  MaxMinSolver s;
  std::vector<LinkId> ten;
  for (int i = 0; i < 10; ++i) ten.push_back(s.add_link(100_Gbps));
  std::vector<Resource> long_path;
  for (LinkId l : ten) long_path.push_back(Resource{l, 1.0});
  const FlowId f = s.add_flow(long_path);
  const FlowId g = s.add_flow(path({ten[0]}));
  const FlowId h = s.add_flow(path({ten[0]}));
  s.solve();
  expect_rate(s.rate_bps(f), 100e9 / 3);
  expect_rate(s.rate_bps(h), 100e9 / 3);
  expect_rate(s.link_load_bps(ten[9]), 100e9 / 3);
  s.remove_flow(g);
  s.solve();
  EXPECT_EQ(s.last_stats().narrow, 1u);
  EXPECT_EQ(s.last_stats().flows, 2u);
  EXPECT_EQ(s.last_stats().links, 10u);
  expect_rate(s.rate_bps(f), 50e9);
  expect_rate(s.rate_bps(h), 50e9);
  expect_rate(s.link_load_bps(ten[0]), 100e9);
  expect_rate(s.link_load_bps(ten[9]), 50e9);
}

TEST(MaxMin, NarrowReSolveFallsBackWhenAKeptFlowIsAboveTheNewLevel) {
  // A = 10 carries f and g; B = 20 carries g, k and m; k also crosses C = 8,
  // m also D = 7. Water-filling: levels A 10/2 = 5, B 20/3, C 8, D 7: A first,
  // f = g = 5. Then B (20 - 5) / 2 = 7.5, C 8, D 7: D, m = 7. Then B
  // (20 - 5 - 7) / 1 = 8 and C 8 tie: k = 8. B carries 5 + 7 + 8 = 20, full,
  // with k (8) its top tier.
  MaxMinSolver s;
  const LinkId a = s.add_link(10_Gbps), b = s.add_link(20_Gbps), c = s.add_link(8_Gbps), d = s.add_link(7_Gbps);
  const FlowId f = s.add_flow(path({a}));
  const FlowId g = s.add_flow(path({a, b}));
  const FlowId k = s.add_flow(path({b, c}));
  const FlowId m = s.add_flow(path({b, d}));
  s.solve();
  expect_rate(s.rate_bps(g), 5e9);
  expect_rate(s.rate_bps(k), 8e9);
  expect_rate(s.rate_bps(m), 7e9);

  // f leaves. The narrow rule takes g (A's top tier), then on the saturated
  // B its top tier k, and keeps m at 7: B has 20 - 7 = 13 for g and k, so it
  // saturates at 6.5 < 7 = m's rate, and m is not below B's level as a kept
  // flow must be. The check fails and the threshold rule (5) re-solves g, k
  // and m: A 10, B 20/3, C 8, D 7: B first, g = k = m = 20/3.
  s.remove_flow(f);
  s.solve();
  EXPECT_EQ(s.last_stats().retries, 1u);
  EXPECT_EQ(s.last_stats().narrow, 0u);
  EXPECT_EQ(s.last_stats().flows, 3u);
  expect_rate(s.rate_bps(g), 20e9 / 3);
  expect_rate(s.rate_bps(k), 20e9 / 3);
  expect_rate(s.rate_bps(m), 20e9 / 3);
  expect_rate(s.link_load_bps(b), 20e9);
  expect_rate(s.link_load_bps(c), 20e9 / 3);
}

TEST(MaxMin, DepartureShortcut) {
  // The bottleneck instance: X = 10 carries A, B; Y = 4 carries A, C.
  // Rates A = 2, B = 8, C = 2 (see DifferentCapacitiesBottleneck).
  // B leaves X: the only flow left there, A, has r/w = 2 < 8 = B's, so A is
  // not bottlenecked at X and nothing changes: X's load drops to 10 - 8 = 2
  // without a re-solve.
  MaxMinSolver s;
  LinkId x = s.add_link(10_Gbps), y = s.add_link(4_Gbps);
  FlowId a = s.add_flow(path({x, y}));
  FlowId b = s.add_flow(path({x}));
  FlowId c = s.add_flow(path({y}));
  s.solve();
  s.remove_flow(b);
  s.solve();
  EXPECT_EQ(s.solved_flows().size(), 0u);
  ASSERT_EQ(s.solved_links().size(), 1u);
  EXPECT_EQ(s.solved_links()[0], x);
  EXPECT_EQ(s.last_stats().fast_links, 1u);
  expect_rate(s.link_load_bps(x), 2e9);
  expect_rate(s.rate_bps(a), 2e9);
  expect_rate(s.rate_bps(c), 2e9);
  // C leaves Y: A has r/w = 2, equal to C's, so A may be bottlenecked at Y
  // (it is): re-solve. A alone on X (10) and Y (4) gets min(10, 4) = 4.
  s.remove_flow(c);
  s.solve();
  EXPECT_EQ(s.last_stats().fast_links, 0u);
  EXPECT_EQ(s.solved_flows().size(), 1u);
  expect_rate(s.rate_bps(a), 4e9);
  expect_rate(s.link_load_bps(x), 4e9);
  expect_rate(s.link_load_bps(y), 4e9);
  // The last flow leaves: both links drop to 0 through the shortcut.
  s.remove_flow(a);
  s.solve();
  EXPECT_EQ(s.last_stats().fast_links, 2u);
  EXPECT_EQ(s.link_load_bps(x), 0.0);
  EXPECT_EQ(s.link_load_bps(y), 0.0);
}

TEST(MaxMin, IdsAreRecycled) {
  MaxMinSolver s;
  LinkId l = s.add_link(100_Gbps);
  FlowId a = s.add_flow(path({l}));
  FlowId b = s.add_flow(path({l}));
  s.remove_flow(a);
  EXPECT_FALSE(s.alive(a));
  EXPECT_EQ(s.flow_count(), 1u);
  FlowId c = s.add_flow(path({l}));
  EXPECT_EQ(c, a);
  s.solve();
  expect_rate(s.rate_bps(b), 50e9);
  expect_rate(s.rate_bps(c), 50e9);
}

TEST(MaxMin, TermPoolCompactionKeepsFlowsIntact) {
  // 3000 two-link flows, 2500 removed: 5000 garbage terms out of 6000, so the
  // next add_flow compacts the pool. The 500 survivors plus the new flow
  // share link x (501 Gb/s) and link y (1000 Gb/s): x is the bottleneck,
  // 501 / 501 = 1 Gb/s each.
  MaxMinSolver s;
  LinkId x = s.add_link(Bandwidth(501e9)), y = s.add_link(Bandwidth(1000e9));
  std::vector<Resource> p = {{x, 1.0}, {y, 1.0}};
  std::vector<FlowId> ids;
  for (int i = 0; i < 3000; ++i) ids.push_back(s.add_flow(p));
  for (int i = 0; i < 3000; ++i)
    if (i % 6 != 0) s.remove_flow(ids[static_cast<size_t>(i)]);
  FlowId last = s.add_flow(p);
  s.solve();
  EXPECT_EQ(s.flow_count(), 501u);
  for (int i = 0; i < 3000; i += 6) {
    const FlowId f = ids[static_cast<size_t>(i)];
    ASSERT_EQ(s.resources(f).size(), 2u);
    EXPECT_EQ(s.resources(f)[0].link, x);
    EXPECT_EQ(s.resources(f)[1].link, y);
    expect_rate(s.rate_bps(f), 1e9);
  }
  expect_rate(s.rate_bps(last), 1e9);
  EXPECT_EQ(s.link_flow_count(x), 501u);
  expect_rate(s.link_load_bps(y), 501e9);
}

TEST(MaxMin, RejectsBadInput) {
  MaxMinSolver s;
  LinkId l = s.add_link(100_Gbps);
  EXPECT_THROW(s.add_link(Bandwidth(-1)), Error);
  EXPECT_THROW(s.add_flow(path({l}), 0.0), Error);
  EXPECT_THROW(s.add_flow(path({l}), 1.0, Bandwidth(-5)), Error);
  EXPECT_THROW(s.add_flow(path({l + 7})), Error);
  std::vector<Resource> bad = {{l, 0.0}};
  EXPECT_THROW(s.add_flow(bad), Error);
  EXPECT_THROW(s.remove_flow(99), Error);
  EXPECT_THROW(s.set_capacity(5, 1_Gbps), Error);
}

// Independent check of weighted max-min optimality (the bottleneck
// characterisation): the allocation is feasible and every flow either sits
// at its cap or crosses a saturated link on which its normalised rate r/w is
// the largest among that link's flows.
void expect_max_min_fair(const MaxMinSolver& s) {
  std::vector<double> load(s.link_count(), 0.0);
  std::vector<double> max_norm(s.link_count(), 0.0);
  for (FlowId f = 0; f < s.flow_id_bound(); ++f) {
    if (!s.active(f)) continue;
    for (const Resource& r : s.resources(f)) {
      load[r.link] += r.coef * s.rate_bps(f);
      max_norm[r.link] = std::max(max_norm[r.link], s.rate_bps(f) / s.weight(f));
    }
  }
  for (LinkId l = 0; l < s.link_count(); ++l) {
    EXPECT_LE(load[l], s.capacity(l).bps * (1 + 1e-9) + 1e-3) << "link " << l;
    EXPECT_NEAR(load[l], s.link_load_bps(l), 1e-9 * std::max(1.0, load[l]));
  }
  for (FlowId f = 0; f < s.flow_id_bound(); ++f) {
    if (!s.active(f)) continue;
    const double r = s.rate_bps(f);
    if (r >= s.cap(f).bps * (1 - 1e-9)) continue;
    bool bottlenecked = false;
    for (const Resource& res : s.resources(f)) {
      const double cap = s.capacity(res.link).bps;
      const bool saturated = load[res.link] >= cap * (1 - 1e-9) - 1e-3;
      if (saturated && r / s.weight(f) >= max_norm[res.link] * (1 - 1e-9)) bottlenecked = true;
    }
    EXPECT_TRUE(bottlenecked) << "flow " << f << " rate " << r << " has no bottleneck";
  }
}

TEST(MaxMin, ReSolvedFlowsWhoseRateDidNotChangeKeepTheirPlace) {
  // X = 30 Gb/s carries a, b and d; d is capped at 5 and also crosses Z =
  // 100. Water-filling: d reaches its cap at level 5 (X would saturate at
  // 30 / 3 = 10), then X saturates at (30 - 5) / 2 = 12.5: a = b = 12.5.
  MaxMinSolver s;
  const LinkId x = s.add_link(30_Gbps);
  const LinkId z = s.add_link(100_Gbps);
  const FlowId a = s.add_flow(path({x}));
  const FlowId b = s.add_flow(path({x}));
  const FlowId d = s.add_flow(path({x, z}), 1.0, 5_Gbps);
  s.solve();
  expect_rate(s.rate_bps(a), 12.5e9);
  expect_rate(s.rate_bps(d), 5e9);

  // Z's capacity changes to 50: the threshold is d's r/w, 5 (Z's largest),
  // so d and through X a and b are re-solved: 3 flows, 2 links. The filling
  // repeats the first one operation for operation (d frozen at its cap 5e9,
  // then (30e9 - 5e9) / 2), so every rate is the old one to the bit and
  // neither list is re-sorted.
  s.set_capacity(z, 50_Gbps);
  s.solve();
  EXPECT_EQ(s.last_stats().flows, 3u);
  EXPECT_EQ(s.last_stats().links, 2u);
  EXPECT_EQ(s.last_stats().reordered, 0u);
  EXPECT_EQ(s.rate_bps(a), 12.5e9);
  EXPECT_EQ(s.rate_bps(b), 12.5e9);
  EXPECT_EQ(s.rate_bps(d), 5e9);

  // The lists are still in order: a leaves; b has a's r/w, so the departure
  // shortcut fails and b is re-solved from the first entries of X's list:
  // b = 30 - 5 = 25, and X's list (b moved) is re-sorted.
  s.remove_flow(a);
  s.solve();
  expect_rate(s.rate_bps(b), 25e9);
  expect_rate(s.rate_bps(d), 5e9);
  EXPECT_EQ(s.last_stats().reordered, 1u);
  expect_rate(s.link_load_bps(x), 30e9);
  expect_max_min_fair(s);
}

TEST(MaxMin, NarrowReSolveMovesAFlowPastKeptFlowsInALinkItDoesNotFill) {
  // A = 10 Gb/s carries f and g; D = 100 carries g, m and q; m also crosses
  // M = 8, q also Q = 2. Water-filling: levels A 10/2 = 5, D 100/3, M 8,
  // Q 2: q = 2, then f = g = 5, then m = 8. D carries 15 < 100, so its list
  // is m (8), g (5), q (2), and D bottlenecks nobody.
  MaxMinSolver s;
  const LinkId a = s.add_link(10_Gbps), d = s.add_link(100_Gbps);
  const FlowId f = s.add_flow(path({a}));
  const FlowId g = s.add_flow(path({a, d}));
  const FlowId m = s.add_flow(path({d, s.add_link(8_Gbps)}));
  const FlowId q = s.add_flow(path({d, s.add_link(2_Gbps)}));
  s.solve();
  expect_rate(s.rate_bps(g), 5e9);
  expect_rate(s.rate_bps(m), 8e9);
  expect_rate(s.rate_bps(q), 2e9);

  // f leaves: the narrow rule re-solves g alone (A's top tier; D has slack):
  // g = min(A 10, D 100 - 8 - 2 = 90) = 10. g moved on both its links, so
  // both lists are re-sorted from g's bucket: on D, g passes the kept m
  // (8) and the kept q (2) stays below: g (10), m (8), q (2).
  s.remove_flow(f);
  s.solve();
  EXPECT_EQ(s.last_stats().narrow, 1u);
  EXPECT_EQ(s.last_stats().flows, 1u);
  EXPECT_EQ(s.last_stats().links, 2u);
  EXPECT_EQ(s.last_stats().reordered, 2u);
  expect_rate(s.rate_bps(g), 10e9);
  expect_rate(s.link_load_bps(d), 20e9);

  // m leaves. D's largest r/w is now g's 10 > m's 8, so the departure
  // shortcut must fail and D's top tier, g, is re-solved (1 flow; its rate
  // is the same 10 to the bit, so no list moves). Had D's list kept g at its
  // old place below m, its first live entry would read 5 < 8 and the
  // shortcut would wrongly skip the re-solve (0 flows).
  s.remove_flow(m);
  s.solve();
  EXPECT_EQ(s.last_stats().flows, 1u);
  EXPECT_EQ(s.last_stats().reordered, 0u);
  EXPECT_EQ(s.rate_bps(g), 10e9);
  expect_rate(s.rate_bps(q), 2e9);
  expect_rate(s.link_load_bps(d), 12e9);
  expect_max_min_fair(s);
}

TEST(MaxMin, NarrowReSolveMovesAFlowThatSlowsDownBelowAKeptFlow) {
  // A = 10 carries f and g; B = 20 carries g and k; k also crosses E = 100,
  // which carries p, bottlenecked at P = 12. Water-filling: A 5, B 10, P 12,
  // E 50: f = g = 5; then B (20 - 5) / 1 = 15, P 12, E (100 - 0) / 2 = 50:
  // p = 12; then B: k = 15. E's list: k (15), p (12).
  MaxMinSolver s;
  const LinkId a = s.add_link(10_Gbps), b = s.add_link(20_Gbps), e = s.add_link(100_Gbps);
  const FlowId f = s.add_flow(path({a}));
  const FlowId g = s.add_flow(path({a, b}));
  const FlowId k = s.add_flow(path({b, e}));
  const FlowId p = s.add_flow(path({e, s.add_link(12_Gbps)}));
  s.solve();
  expect_rate(s.rate_bps(g), 5e9);
  expect_rate(s.rate_bps(k), 15e9);
  expect_rate(s.rate_bps(p), 12e9);

  // f leaves: the narrow rule takes g (A's top tier), then on the saturated
  // B its top tier k; E (27 < 100) is not crossed. Levels A 10 / 1 = 10,
  // B 20 / 2 = 10, E 100 - 12 = 88: A and B tie at 10 (A first, its id is
  // lower): g = k = 10. k slowed from 15 to 10, below the kept p (12): E's
  // list becomes p (12), k (10). A, B and E are re-sorted.
  s.remove_flow(f);
  s.solve();
  EXPECT_EQ(s.last_stats().narrow, 1u);
  EXPECT_EQ(s.last_stats().flows, 2u);
  EXPECT_EQ(s.last_stats().links, 3u);
  EXPECT_EQ(s.last_stats().reordered, 3u);
  expect_rate(s.rate_bps(g), 10e9);
  expect_rate(s.rate_bps(k), 10e9);
  expect_rate(s.rate_bps(p), 12e9);

  // p leaves E (and P). The flow left on E, k, has r/w 10 < 12: the
  // departure shortcut holds on both links, nothing is re-solved. Had E's
  // list kept k first with its old 15, the shortcut would fail there.
  s.remove_flow(p);
  s.solve();
  EXPECT_EQ(s.last_stats().flows, 0u);
  EXPECT_EQ(s.last_stats().fast_links, 2u);
  expect_rate(s.rate_bps(k), 10e9);
  expect_rate(s.link_load_bps(e), 10e9);
  expect_max_min_fair(s);
}

TEST(MaxMin, NarrowReSortGivesADeadEntryAfterThePrefixTheNextKey) {
  // A = 20 carries f and g; B = 25 carries g and k; E = 100 carries k, x (capped by Q = 13) and p (capped by
  // P = 12). Water-filling: A 10, B (25 - 10) = 15 for k: f = g = 10, k = 15, x = 13, p = 12. E's list: k (15),
  // x (13), p (12).
  MaxMinSolver s;
  const LinkId a = s.add_link(20_Gbps), b = s.add_link(25_Gbps), e = s.add_link(100_Gbps);
  const FlowId f = s.add_flow(path({a}));
  const FlowId g = s.add_flow(path({a, b}));
  const FlowId k = s.add_flow(path({b, e}));
  const FlowId x = s.add_flow(path({e, s.add_link(13_Gbps)}));
  const FlowId p = s.add_flow(path({e, s.add_link(12_Gbps)}));
  s.solve();
  expect_rate(s.rate_bps(k), 15e9);
  expect_rate(s.rate_bps(x), 13e9);
  // f and x leave together: x's entry on E is marked dead in place, keeping its key 13. A narrow re-solve from A
  // (threshold 10) and E (13) takes g and k: B 25 / 2 = 12.5 < A 20 / 1: g = k = 12.5. k slows from 15 to 12.5,
  // still above the kept p (12), so E's re-sorted prefix [k] is written back in place: k (12.5), then the dead
  // entry, then p (12). The dead entry must take p's key: with its old 13 it would sort before k's new 12.5
  // and break the order the binary searches need (check_lists says so).
  s.remove_flow(f);
  s.remove_flow(x);
  s.solve();
  EXPECT_EQ(s.last_stats().narrow, 1u);
  expect_rate(s.rate_bps(g), 12.5e9);
  expect_rate(s.rate_bps(k), 12.5e9);
  expect_rate(s.rate_bps(p), 12e9);
  EXPECT_EQ(s.check_lists(), "");
  expect_max_min_fair(s);
}

TEST(MaxMin, IncrementalEqualsFromScratchOnRandomInstances) {
  // The only randomised test. Random links, flows (1-5 links, some coef 2,
  // random weights, some caps), then random batches of add / remove / park /
  // capacity change (every third batch instead removes the flows with the
  // largest r/w, as completions do, and the batch after it starts the same
  // number of flows on the paths they left, as DAG successors do, plus a few
  // slow capped flows; these exercise the departure and arrival shortcuts, the narrow re-solve and
  // the partial re-solve above a threshold), each followed by an incremental
  // solve.
  // After each batch a fresh solver with the same live flows is solved from
  // scratch; rates must agree within 1e-9 relative, and the incremental one
  // must pass the optimality check.
  Rng rng(20240611);
  uint64_t fast_links = 0, fast_flows = 0, resolved_links = 0, narrow = 0,
           retries = 0;  // (retries: see NarrowReSolveFallsBack...)
  for (int instance = 0; instance < 6; ++instance) {
    const uint32_t nlinks = 20 + static_cast<uint32_t>(rng.below(60));
    MaxMinSolver inc;
    for (uint32_t l = 0; l < nlinks; ++l) inc.add_link(Bandwidth(1e9 * static_cast<double>(1 + rng.below(400))));
    std::vector<FlowId> live;
    auto random_flow = [&]() {
      std::vector<Resource> res;
      const uint64_t hops = 1 + rng.below(5);
      for (uint64_t h = 0; h < hops; ++h) {
        res.push_back(Resource{static_cast<LinkId>(rng.below(nlinks)), rng.below(8) == 0 ? 2.0 : 1.0});
      }
      const double w = rng.below(3) == 0 ? 0.5 + 4 * rng.uniform() : 1.0;
      const Bandwidth cap = rng.below(4) == 0 ? Bandwidth(1e9 * (1 + 100 * rng.uniform())) : kUnlimited;
      live.push_back(inc.add_flow(res, w, cap));
    };
    for (int i = 0; i < 150; ++i) random_flow();
    inc.solve();
    struct Departed {
      std::vector<Resource> res;
      double weight;
      Bandwidth cap;
    };
    std::vector<Departed> departed;
    for (int batch = 0; batch < 60; ++batch) {
      if (batch % 3 == 0) {
        for (const Departed& d : departed) live.push_back(inc.add_flow(d.res, d.weight, d.cap));
        departed.clear();
        // Plus a few slow capped flows: placed by the arrival shortcut when
        // there is room, then kept (not re-solved) by later partial solves.
        for (int k = 0; k < 3; ++k) {
          std::vector<Resource> res = {{static_cast<LinkId>(rng.below(nlinks)), 1.0}};
          live.push_back(inc.add_flow(res, 1.0, Bandwidth(1e8 * static_cast<double>(1 + rng.below(20)))));
        }
      }
      if (batch % 3 == 2) {
        // Like a completion batch: the flows with the largest r/w leave
        // together (exercises the departure shortcut).
        double top = 0;
        for (FlowId f : live) top = std::max(top, inc.rate_bps(f) / inc.weight(f));
        for (size_t i = live.size(); i-- > 0;) {
          if (inc.active(live[i]) && inc.rate_bps(live[i]) / inc.weight(live[i]) >= top * (1 - 1e-12)) {
            std::span<const Resource> res = inc.resources(live[i]);
            departed.push_back(Departed{{res.begin(), res.end()}, inc.weight(live[i]), inc.cap(live[i])});
            inc.remove_flow(live[i]);
            live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
          }
        }
      }
      const int ops = batch % 3 == 2 || (batch % 3 == 0 && batch > 0) ? 0 : 1 + static_cast<int>(rng.below(6));
      for (int k = 0; k < ops; ++k) {
        const uint64_t op = rng.below(10);
        if (op < 4 || live.empty()) {
          random_flow();
        } else if (op < 7) {
          const size_t i = rng.below(live.size());
          inc.remove_flow(live[i]);
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        } else if (op < 8) {
          const FlowId f = live[rng.below(live.size())];
          inc.set_active(f, !inc.active(f));
        } else {
          inc.set_capacity(static_cast<LinkId>(rng.below(nlinks)),
                           Bandwidth(rng.below(20) == 0 ? 0.0 : 1e9 * static_cast<double>(1 + rng.below(400))));
        }
      }
      inc.solve();
      ASSERT_EQ(inc.check_lists(), "") << "instance " << instance << " batch " << batch;
      fast_links += inc.last_stats().fast_links;
      fast_flows += inc.last_stats().fast_flows;
      resolved_links += inc.last_stats().links;
      narrow += inc.last_stats().narrow;
      retries += inc.last_stats().retries;

      MaxMinSolver full;
      for (LinkId l = 0; l < nlinks; ++l) full.add_link(inc.capacity(l));
      std::vector<std::pair<FlowId, FlowId>> map;  // (inc id, full id)
      std::vector<FlowId> sorted = live;
      std::sort(sorted.begin(), sorted.end());
      for (FlowId f : sorted) {
        if (!inc.active(f)) continue;
        map.emplace_back(f, full.add_flow(inc.resources(f), inc.weight(f), inc.cap(f)));
      }
      full.solve_all();
      for (auto [fi, ff] : map) {
        const double a = inc.rate_bps(fi), b = full.rate_bps(ff);
        ASSERT_NEAR(a, b, 1e-9 * std::max(1.0, std::abs(b)))
            << "instance " << instance << " batch " << batch << " flow " << fi;
      }
      expect_max_min_fair(inc);
      if (::testing::Test::HasFailure()) return;
    }
  }
  // Both paths were exercised.
  EXPECT_GT(fast_links, 20u);
  EXPECT_GT(fast_flows, 20u);
  EXPECT_GT(resolved_links, 50u);
  EXPECT_GT(narrow, 5u) << retries << " retries";
}

// The second thread (set_threads(2)) re-sorts the link lists of a narrow
// re-solve beside the caller; what it does is the same per list, so every
// rate after every solve must be the same to the bit as on one thread. The
// same random sequence of completions (the flows with the largest r/w leave,
// as in the test above), restarts on the paths they left, and random adds,
// removes and capacity changes runs on both; with min_links = 1 every narrow
// re-solve is handed to the second thread.
TEST(MaxMin, SecondThreadGivesTheSameRatesToTheBit) {
  auto run = [](int threads, uint64_t& handed) {
    MaxMinSolver s;
    s.set_threads(threads, 1);
    Rng rng(20261126);
    const uint32_t nlinks = 60;
    for (uint32_t l = 0; l < nlinks; ++l) s.add_link(Bandwidth(1e9 * static_cast<double>(1 + rng.below(400))));
    std::vector<FlowId> live;
    std::vector<double> trace;  // every live flow's rate after every solve, in id order
    auto add = [&](std::vector<Resource> res) {
      live.push_back(s.add_flow(res, 1.0 + static_cast<double>(rng.below(3))));
    };
    auto random_path = [&]() {
      std::vector<Resource> res;
      const uint64_t hops = 1 + rng.below(4);
      for (uint64_t h = 0; h < hops; ++h) res.push_back(Resource{static_cast<LinkId>(rng.below(nlinks)), 1.0});
      return res;
    };
    for (int i = 0; i < 400; ++i) add(random_path());
    std::vector<std::vector<Resource>> again;
    auto leave = [&](size_t i) {  // live[i] completes; its path is kept to restart on
      std::span<const Resource> res = s.resources(live[i]);
      again.emplace_back(res.begin(), res.end());
      s.remove_flow(live[i]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    };
    auto record = [&]() {
      std::vector<FlowId> sorted = live;
      std::sort(sorted.begin(), sorted.end());
      for (FlowId f : sorted) trace.push_back(s.rate_bps(f));
    };
    for (int batch = 0; batch < 120; ++batch) {
      if (batch % 4 != 3) {  // a completion batch: the flows with the largest r/w and two others leave
        for (int k = 0; k < 2 && !live.empty(); ++k) leave(rng.below(live.size()));
        double top = 0;
        for (FlowId f : live) top = std::max(top, s.rate_bps(f) / s.weight(f));
        for (size_t i = live.size(); i-- > 0;)
          if (s.rate_bps(live[i]) / s.weight(live[i]) >= top * (1 - 1e-12)) leave(i);
      } else {  // the departed restart on their paths; random changes
        for (auto& res : again) add(res);
        again.clear();
        for (int k = 0; k < 6; ++k) {
          if (rng.below(3) == 0 && !live.empty()) {
            const size_t i = rng.below(live.size());
            s.remove_flow(live[i]);
            live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
          } else if (rng.below(5) == 0) {
            s.set_capacity(static_cast<LinkId>(rng.below(nlinks)),
                           Bandwidth(1e9 * static_cast<double>(1 + rng.below(400))));
          } else {
            add(random_path());
          }
        }
      }
      s.solve();
      record();
      const std::string lists = s.check_lists();  // (joins the second thread first)
      EXPECT_EQ(lists, "") << "batch " << batch;
      if (!lists.empty()) break;
    }
    handed = s.parallel_reorders();
    return trace;
  };
  uint64_t handed1 = 0, handed2 = 0;
  const std::vector<double> one = run(1, handed1);
  const std::vector<double> two = run(2, handed2);
  EXPECT_EQ(handed1, 0u);
  EXPECT_GT(handed2, 20u);  // the second thread took part
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) ASSERT_EQ(one[i], two[i]) << "rate " << i;  // bit for bit
}

// A link whose only flow is f folds into f's cap (set_fold_single). P = 10
// Gb/s carries f alone, Q = 40 carries g alone, S = 100 carries both: P and
// Q fold, so f = min(10, ...) = 10 and g = min(40, 100 - 10) = 40. A flow h
// on P unfolds it: P's 10 is shared, f = h = 5. Q's capacity set to 20
// unfolds Q: g = 20.
TEST(MaxMin, ALinkThatCarriesOneFlowIsThatFlowsCap) {
  MaxMinSolver s;
  s.set_fold_single(true);
  const LinkId p = s.add_link(10_Gbps), q = s.add_link(40_Gbps), sh = s.add_link(100_Gbps);
  const FlowId f = s.add_flow(path({p, sh}));
  const FlowId g = s.add_flow(path({sh, q}), 1.0, 1000_Gbps);
  s.solve();
  EXPECT_EQ(s.folded_links(), 2u);
  expect_rate(s.rate_bps(f), 10e9);
  expect_rate(s.rate_bps(g), 40e9);
  expect_rate(s.link_load_bps(p), 10e9);  // folded: its flow's rate
  expect_rate(s.link_load_bps(sh), 50e9);
  EXPECT_EQ(s.cap(g).bps, 1000e9);  // the cap as set, not the folded one
  EXPECT_EQ(s.resources(f).size(), 2u);
  EXPECT_EQ(s.check_lists(), "");
  expect_max_min_fair(s);

  const FlowId h = s.add_flow(path({p}));
  s.solve();
  EXPECT_EQ(s.folded_links(), 1u);
  expect_rate(s.rate_bps(f), 5e9);
  expect_rate(s.rate_bps(h), 5e9);
  expect_rate(s.rate_bps(g), 40e9);
  EXPECT_EQ(s.check_lists(), "");
  expect_max_min_fair(s);

  s.remove_flow(h);
  s.set_capacity(q, 20_Gbps);
  s.solve();
  EXPECT_EQ(s.folded_links(), 0u);
  expect_rate(s.rate_bps(f), 10e9);
  expect_rate(s.rate_bps(g), 20e9);
  EXPECT_EQ(s.check_lists(), "");
  expect_max_min_fair(s);
  EXPECT_THROW(s.set_fold_single(false), Error);  // flows exist
}

// The same random sequence of adds, removals, parking, capacity changes
// (some to 0), weights and caps runs on a solver that folds and one that
// does not. Links outnumber flows' terms, so many links carry one flow and
// arrivals keep unfolding them. After every solve: the same rates within
// 1e-9 relative (a cap and a link saturating at one level freeze in another
// order), the folding solver's lists and caps as check_lists() wants them,
// and max-min fairness read from its link loads.
TEST(MaxMin, FoldingLinksThatCarryOneFlowGivesTheSameRates) {
  Rng rng(20261208);
  MaxMinSolver fold, plain;
  fold.set_fold_single(true);
  const uint32_t nlinks = 300;
  for (uint32_t l = 0; l < nlinks; ++l) {
    const Bandwidth c(1e9 * static_cast<double>(1 + rng.below(400)));
    fold.add_link(c);
    plain.add_link(c);
  }
  std::vector<std::pair<FlowId, FlowId>> live;  // (fold id, plain id)
  uint32_t most_folded = 0, unfolds = 0;
  auto add = [&]() {
    std::vector<Resource> res;
    const uint64_t hops = 1 + rng.below(6);
    for (uint64_t h = 0; h < hops; ++h)
      res.push_back(Resource{static_cast<LinkId>(rng.below(nlinks)), rng.below(6) == 0 ? 2.0 : 1.0});
    const double w = rng.below(3) == 0 ? 0.5 + 4 * rng.uniform() : 1.0;
    const Bandwidth cap = rng.below(4) == 0 ? Bandwidth(1e9 * (1 + 100 * rng.uniform())) : kUnlimited;
    const uint32_t before = fold.folded_links();
    live.emplace_back(fold.add_flow(res, w, cap), plain.add_flow(res, w, cap));
    if (fold.folded_links() < before) ++unfolds;
  };
  for (int i = 0; i < 40; ++i) add();
  for (int batch = 0; batch < 400; ++batch) {
    const int ops = 1 + static_cast<int>(rng.below(5));
    for (int k = 0; k < ops; ++k) {
      const uint64_t op = rng.below(12);
      if (op < 4 || live.empty()) {
        add();
      } else if (op < 7) {
        const size_t i = rng.below(live.size());
        fold.remove_flow(live[i].first);
        plain.remove_flow(live[i].second);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (op < 8) {
        const auto [a, b] = live[rng.below(live.size())];
        fold.set_active(a, !fold.active(a));
        plain.set_active(b, !plain.active(b));
      } else if (op < 10) {
        const LinkId l = static_cast<LinkId>(rng.below(nlinks));
        const Bandwidth c(rng.below(10) == 0 ? 0.0 : 1e9 * static_cast<double>(1 + rng.below(400)));
        fold.set_capacity(l, c);
        plain.set_capacity(l, c);
      } else if (op < 11) {
        const auto [a, b] = live[rng.below(live.size())];
        const double w = 0.5 + 4 * rng.uniform();
        fold.set_weight(a, w);
        plain.set_weight(b, w);
      } else {
        const auto [a, b] = live[rng.below(live.size())];
        const Bandwidth cap(1e9 * (1 + 200 * rng.uniform()));
        fold.set_cap(a, cap);
        plain.set_cap(b, cap);
      }
    }
    fold.solve();
    plain.solve();
    most_folded = std::max(most_folded, fold.folded_links());
    ASSERT_EQ(fold.check_lists(), "") << "batch " << batch;
    for (const auto& [a, b] : live) {
      ASSERT_EQ(fold.active(a), plain.active(b));
      const double x = fold.rate_bps(a), y = plain.rate_bps(b);
      ASSERT_NEAR(x, y, 1e-9 * std::max(1.0, std::abs(y))) << "batch " << batch << " flow " << a;
    }
    expect_max_min_fair(fold);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(most_folded, 50u);
  EXPECT_GT(unfolds, 50u);
}

}  // namespace
}  // namespace podnet::engine::flow
