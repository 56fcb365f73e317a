#include "diagnose/probe.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/error.hpp"
#include "diagnose/localize.hpp"
#include "diagnose/test_util.hpp"
#include "routing/router.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::diagnose {
namespace {

using topology::NodeId;
using topology::Topology;

using testing::ecmp;
using testing::fat_tree4;
using testing::first_dir_from_tier;

ProbeOptions small(const std::string& mesh) {
  ProbeOptions o;
  o.mesh = mesh;
  o.ports = 8;
  o.rate = 10000;
  o.round = Time::from_seconds(1);
  o.duration = Time::from_seconds(10);
  return o;
}

TEST(ActiveShare, FlapOverlapsItsDownIntervalsWithTheRound) {
  Fault f;
  f.kind = FaultKind::Flap;
  f.start = Time::from_seconds(2);
  f.period = Time::from_seconds(10);
  f.down = Time::from_seconds(1);
  // Down [2, 3), [12, 13), ...: the round [0, 10) is down 1 s of 10; [2.5, 12.5) 0.5 + 0.5 of 10.
  EXPECT_DOUBLE_EQ(active_share(f, Time(), Time::from_seconds(10)), 0.1);
  EXPECT_DOUBLE_EQ(active_share(f, Time::from_seconds(2.5), Time::from_seconds(12.5)), 0.1);
  // [3, 12) misses both.
  EXPECT_DOUBLE_EQ(active_share(f, Time::from_seconds(3), Time::from_seconds(12)), 0.0);
  Fault drop;
  drop.start = Time::from_seconds(5);
  // A drop starting at 5 s is on for half of [0, 10).
  EXPECT_DOUBLE_EQ(active_share(drop, Time(), Time::from_seconds(10)), 0.5);
}

TEST(Mesh, FullMeshCoversEveryDirectedLinkOfAFatTree) {
  const Topology t = fat_tree4();
  routing::Router r(t, ecmp());
  const Mesh m = build_mesh(t, r, small("full-mesh"), 1);
  // 16 hosts: 16 x 15 ordered pairs x 8 ports.
  EXPECT_EQ(m.tuples.size(), 16u * 15u * 8u);
  EXPECT_EQ(m.endpoints, 16);
  // Links: 16 host-edge + 16 edge-aggregation + 16 aggregation-core = 48, i.e. 96 directions, all probed.
  EXPECT_EQ(m.network_dirs, 96);
  EXPECT_EQ(m.covered_dirs, 96);
  for (const Tuple& tu : m.tuples) {
    // A path starts at its source NIC and ends at its destination, then comes back.
    EXPECT_EQ(routing::dir_from(m.links[tu.path_begin], t), tu.src);
    EXPECT_EQ(routing::dir_to(m.links[tu.return_begin - 1], t), tu.dst);
    EXPECT_EQ(routing::dir_from(m.links[tu.return_begin], t), tu.dst);
    EXPECT_EQ(routing::dir_to(m.links[tu.path_end - 1], t), tu.src);
  }
}

TEST(Mesh, RailAndLeafMeshesAreSmaller) {
  const Topology t = fat_tree4();
  routing::Router r(t, ecmp());
  ProbeOptions o = small("rail");
  o.targets = 3;
  EXPECT_EQ(build_mesh(t, r, o, 1).tuples.size(), 16u * 3u * 8u);
  // 8 edge switches: 8 x 7 ordered pairs, one NIC pair each.
  EXPECT_EQ(build_mesh(t, r, small("leaf-mesh"), 1).tuples.size(), 8u * 7u * 8u);
  EXPECT_THROW(build_mesh(t, r, small("ring"), 1), InputError);
}

TEST(Probes, NoFaultNoLossAndTheRateIsKept) {
  const Topology t = fat_tree4();
  routing::Router r(t, ecmp());
  const ProbeOptions o = small("full-mesh");
  const Mesh m = build_mesh(t, r, o, 1);
  const ProbeRun run = simulate_probes(t, m, {}, o, 1);
  ASSERT_EQ(run.rounds, 10);
  int64_t sent = 0, lost = 0;
  for (const auto& x : run.total) {
    sent += x.sent;
    lost += x.lost;
  }
  // 16 NICs x 10,000 probes/s x 10 s.
  EXPECT_EQ(sent, 16 * 10000 * 10);
  EXPECT_EQ(lost, 0);
  // Each NIC sends 10,000 requests/s and answers 10,000 of others': 20,000 x 154 B/s.
  EXPECT_NEAR(run.probe_bytes_per_s_per_nic, 20000.0 * 154, 1e-6);
  // A host pair under one edge switch: NIC -> edge -> NIC and back, 4 links; RTT = 4 x (latency +
  // serialization of 154 B) + 2 switch latencies.
  for (size_t i = 0; i < m.tuples.size(); ++i) {
    const Tuple& tu = m.tuples[i];
    if (tu.path_end - tu.path_begin != 4) continue;
    const auto& l = t.links[routing::link_of(m.links[tu.path_begin])];
    const double expect = 4 * (l.latency.seconds() + 154 * 8 / l.capacity.bps) + 2 * t.switch_latency.seconds();
    EXPECT_NEAR(run.total[i].rtt_p50.seconds(), expect, 1e-11);
    EXPECT_EQ(run.total[i].rtt_p99, run.total[i].rtt_p50);
    break;
  }
}

TEST(Probes, BinomialDrawsHaveTheRightMean) {
  // One faulty direction at p = 0.01; every tuple crossing it loses Binomial(n, 0.01) per round.
  const Topology t = fat_tree4();
  routing::Router r(t, ecmp());
  const ProbeOptions o = small("full-mesh");
  const Mesh m = build_mesh(t, r, o, 1);
  Fault f;
  f.dirs = {first_dir_from_tier(t, 1)};
  f.probability = 0.01;
  const ProbeRun run = simulate_probes(t, m, {f}, o, 7);
  double n = 0, k = 0;
  for (size_t i = 0; i < m.tuples.size(); ++i) {
    bool crosses = false;
    for (int32_t q = m.tuples[i].path_begin; q < m.tuples[i].path_end; ++q) crosses |= m.links[q] == f.dirs[0];
    if (crosses) {
      n += static_cast<double>(run.total[i].sent);
      k += static_cast<double>(run.total[i].lost);
    } else {
      EXPECT_EQ(run.total[i].lost, 0);
    }
  }
  ASSERT_GT(n, 10000);
  // Mean n p, standard deviation sqrt(n p (1 - p)): within 5 sigma.
  EXPECT_NEAR(k, n * 0.01, 5 * std::sqrt(n * 0.01 * 0.99));
}

TEST(Localize, HandBuiltIncidenceNamesTheSharedComponent) {
  // Three tuples over three components: t0 {0, 1}, t1 {0, 2}, t2 {1, 2}, 10,000 probes each;
  // t0 and t1 lose 20 each, t2 none. Only component 0 explains both losses without blaming the clean t2:
  // l_0 = (20 + 20) / (10,000 + 10,000) = 0.002, b -> 0.
  Incidence inc;
  inc.dirs = 3;
  inc.components = 3;
  inc.offset = {0, 2, 4, 6};
  inc.component = {0, 1, 0, 2, 1, 2};
  inc.weight = {1, 1, 1, 1, 1, 1};
  inc.hops = {2, 2, 2};
  const Localization loc = localize(inc, {10000, 10000, 10000}, {20, 20, 0});
  ASSERT_EQ(loc.suspects.size(), 1u);
  EXPECT_EQ(loc.suspects[0].component, 0);
  EXPECT_NEAR(loc.suspects[0].loss, 0.002, 1e-6);
  EXPECT_NEAR(loc.suspects[0].lost, 40, 1e-3);
  EXPECT_GT(loc.suspects[0].confidence, 0.99);
}

TEST(Localize, NoLossNoSuspect) {
  Incidence inc;
  inc.dirs = 1;
  inc.components = 1;
  inc.offset = {0, 1};
  inc.component = {0};
  inc.weight = {1};
  inc.hops = {1};
  EXPECT_TRUE(localize(inc, {1000}, {0}).suspects.empty());
}

TEST(Localize, FindsOneSilentlyDroppingLinkDirection) {
  const Topology t = fat_tree4();
  routing::Router r(t, ecmp());
  const ProbeOptions o = small("full-mesh");
  const Mesh m = build_mesh(t, r, o, 1);
  const Incidence inc = incidence_of(t, m);
  Fault f;
  f.dirs = {first_dir_from_tier(t, 2)};
  f.probability = 0.001;
  const ProbeRun run = simulate_probes(t, m, {f}, o, 3);
  std::vector<int64_t> sent, lost;
  for (const auto& x : run.total) {
    sent.push_back(x.sent);
    lost.push_back(x.lost);
  }
  const Localization loc = localize(inc, sent, lost);
  ASSERT_EQ(loc.suspects.size(), 1u) << inc.name(t, loc.suspects[1].component);
  EXPECT_EQ(loc.suspects[0].component, f.dirs[0]) << inc.name(t, loc.suspects[0].component);
  EXPECT_NEAR(loc.suspects[0].loss, 0.001, 0.0005);
}

TEST(Localize, NamesAFaultySwitchAsTheSwitch) {
  const Topology t = fat_tree4();
  routing::Router r(t, ecmp());
  const ProbeOptions o = small("full-mesh");
  const Mesh m = build_mesh(t, r, o, 1);
  const Incidence inc = incidence_of(t, m);
  const NodeId agg = topology::testing::tier(t, 2).front();
  Fault f;
  f.device = agg;
  f.probability = 0.001;
  const ProbeRun run = simulate_probes(t, m, {f}, o, 5);
  std::vector<int64_t> sent, lost;
  for (const auto& x : run.total) {
    sent.push_back(x.sent);
    lost.push_back(x.lost);
  }
  const Localization loc = localize(inc, sent, lost);
  ASSERT_EQ(loc.suspects.size(), 1u);
  EXPECT_EQ(loc.suspects[0].component, inc.dirs + agg) << inc.name(t, loc.suspects[0].component);
}

TEST(Localize, BackgroundLossAloneBlamesNothing) {
  const Topology t = fat_tree4();
  routing::Router r(t, ecmp());
  ProbeOptions o = small("full-mesh");
  o.background = 1e-5;
  const Mesh m = build_mesh(t, r, o, 1);
  const ProbeRun run = simulate_probes(t, m, {}, o, 11);
  std::vector<int64_t> sent, lost;
  for (const auto& x : run.total) {
    sent.push_back(x.sent);
    lost.push_back(x.lost);
  }
  const Localization loc = localize(incidence_of(t, m), sent, lost);
  EXPECT_GT(loc.lost, 0);
  EXPECT_TRUE(loc.suspects.empty());
  // b = losses / link crossings estimates the background.
  EXPECT_NEAR(loc.background, 1e-5, 0.5e-5);
}

}  // namespace
}  // namespace podnet::diagnose

namespace podnet::diagnose {
namespace {

TEST(LocalizeDelay, CleanTuplesClearTheirComponents) {
  // Tuples t0 {0, 1}, t1 {0, 2}, t2 {1, 2}; every component costs 1 us, so each base RTT is 2 us.
  // t0 and t1 measure 12 us (10 us excess), t2 2 us: t2 clears 1 and 2, leaving 0 with +10 us.
  Incidence inc;
  inc.dirs = 3;
  inc.components = 3;
  inc.offset = {0, 2, 4, 6};
  inc.component = {0, 1, 0, 2, 1, 2};
  inc.weight = {1, 1, 1, 1, 1, 1};
  inc.hops = {2, 2, 2};
  const std::vector<double> cost = {1e-6, 1e-6, 1e-6};
  const DelayLocalization loc = localize_delay(inc, cost, {12e-6, 12e-6, 2e-6}, 2e-6);
  EXPECT_EQ(loc.slow, 2);
  EXPECT_EQ(loc.clean, 1);
  EXPECT_EQ(loc.unexplained, 0);
  ASSERT_EQ(loc.suspects.size(), 1u);
  EXPECT_EQ(loc.suspects[0].component, 0);
  EXPECT_NEAR(loc.suspects[0].rtt_added_s, 10e-6, 1e-12);
  EXPECT_EQ(loc.suspects[0].slow_tuples, 2);
  // Below the threshold nothing is slow; an unknown RTT (-1) is neither slow nor clean.
  EXPECT_TRUE(localize_delay(inc, cost, {3e-6, 3e-6, 2e-6}, 2e-6).suspects.empty());
  const DelayLocalization partial = localize_delay(inc, cost, {12e-6, -1, -1}, 2e-6);
  EXPECT_EQ(partial.slow, 1);
  EXPECT_EQ(partial.clean, 0);
  // Nothing clears 0 or 1: they are alike for the one slow tuple; the lower id is named.
  ASSERT_EQ(partial.suspects.size(), 1u);
  EXPECT_EQ(partial.suspects[0].component, 0);
  EXPECT_EQ(partial.suspects[0].tied, 1);
}

}  // namespace
}  // namespace podnet::diagnose
