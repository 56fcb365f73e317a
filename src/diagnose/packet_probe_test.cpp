#include "diagnose/packet_probe.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "diagnose/localize.hpp"
#include "diagnose/test_util.hpp"
#include "routing/router.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::diagnose {
namespace {

using topology::NodeId;
using topology::NodeKind;
using topology::Topology;

using testing::ecmp;
using testing::fat_tree4;
using testing::first_dir_from_tier;

engine::NetworkOptions network() {
  engine::NetworkOptions n;
  n.routing = ecmp();
  return n;
}

// 16 NICs x 2,000 probes/s: a NIC sends a probe every 500 us, and the 16 sources are staggered by
// 500 / 16 = 31.25 us; 5 rounds of 0.1 s = 16 x 200 x 5 = 16,000 probes.
ProbeOptions sparse() {
  ProbeOptions o;
  o.mesh = "full-mesh";
  o.ports = 2;
  o.rate = 2000;
  o.round = Time::from_seconds(0.1);
  o.duration = Time::from_seconds(0.5);
  return o;
}

NodeId first_switch_of_tier(const Topology& t, int tier) {
  for (NodeId n = 0; n < static_cast<NodeId>(t.nodes.size()); ++n)
    if (t.nodes[n].kind == NodeKind::Switch && t.nodes[n].tier == tier) return n;
  return topology::kNone;
}

int64_t sum_sent(const ProbeRun& r) {
  int64_t n = 0;
  for (const auto& x : r.total) n += x.sent;
  return n;
}
int64_t sum_lost(const ProbeRun& r) {
  int64_t n = 0;
  for (const auto& x : r.total) n += x.lost;
  return n;
}

TEST(PacketProbes, IdleFabricSameProbesAndExactlyTheBaseRtt) {
  // With one probe every 31.25 us over the whole fabric and round trips of a few microseconds, no two
  // probe packets ever share a port: each one's RTT is the sum over its links of latency + serialization
  // of 154 B, plus one switch latency per switch entered, which is the statistical mode's RTT, exactly.
  const Topology t = fat_tree4();
  routing::Router r(t, ecmp());
  const ProbeOptions o = sparse();
  const Mesh m = build_mesh(t, r, o, 1);
  const ProbeRun stat = simulate_probes(t, m, {}, o, 1);
  const ProbeRun pkt = simulate_probes_packet(t, m, {}, o, network(), 1);
  ASSERT_EQ(pkt.rounds, 5);
  EXPECT_EQ(sum_sent(pkt), 16 * 2000 * 0.5);
  EXPECT_EQ(sum_lost(pkt), 0);
  int64_t max_rtt = 0;
  for (size_t i = 0; i < m.tuples.size(); ++i) {
    ASSERT_EQ(pkt.total[i].sent, stat.total[i].sent) << i;
    EXPECT_EQ(pkt.total[i].rtt_p50, stat.total[i].rtt_p50) << i;
    EXPECT_EQ(pkt.total[i].rtt_p99, stat.total[i].rtt_p50) << i;
    max_rtt = std::max(max_rtt, pkt.total[i].rtt_p50.ps);
  }
  EXPECT_LT(max_rtt, Time::from_seconds(31.25e-6).ps);  // the premise: round trips shorter than the stagger
}

// The expected lost count of a run and its variance: tuple i loses each of its n_i probes with
// P_i = 1 - prod over the faulty components it crosses (1 - p) (probe.hpp), independently.
struct Expect {
  double mean = 0, var = 0;
};
Expect expected_loss(const Topology& t, const Mesh& m, const ProbeRun& run, routing::DirLink dir, NodeId sw, double p) {
  Expect e;
  for (size_t i = 0; i < m.tuples.size(); ++i) {
    double keep = 1;
    for (int32_t q = m.tuples[i].path_begin; q < m.tuples[i].path_end; ++q) {
      if (m.links[q] == dir) keep *= 1 - p;
      if (sw != topology::kNone && switch_entered(t, m.links[q]) == sw) keep *= 1 - p;
    }
    const double n = static_cast<double>(run.total[i].sent);
    e.mean += n * (1 - keep);
    e.var += n * (1 - keep) * keep;
  }
  return e;
}

std::vector<int64_t> sent_of(const ProbeRun& r) {
  std::vector<int64_t> v;
  for (const auto& x : r.total) v.push_back(x.sent);
  return v;
}
std::vector<int64_t> lost_of(const ProbeRun& r) {
  std::vector<int64_t> v;
  for (const auto& x : r.total) v.push_back(x.lost);
  return v;
}

void expect_agreement(const Topology& t, const Mesh& m, const Fault& f, int32_t want_component) {
  ProbeOptions o = sparse();
  o.duration = Time::from_seconds(2);  // 20 rounds: 64,000 probes
  const ProbeRun stat = simulate_probes(t, m, {f}, o, 5);
  const ProbeRun pkt = simulate_probes_packet(t, m, {f}, o, network(), 5);
  const Expect e = expected_loss(t, m, stat, f.dirs.empty() ? -1 : f.dirs[0], f.device,
                                 f.kind == FaultKind::Flap ? 0 : f.probability);
  const double sigma = std::sqrt(e.var);
  ASSERT_GT(e.mean, 100);  // enough losses for the normal approximation of the binomial sums
  // Each mode's count is a sum of independent binomials: within 3 sigma of the mean (a 0.27 % false
  // alarm for either, at a fixed seed a deterministic check); the two modes' counts are independent, so
  // their difference has variance 2 var: within 3 sqrt(2) sigma.
  EXPECT_NEAR(static_cast<double>(sum_lost(stat)), e.mean, 3 * sigma);
  EXPECT_NEAR(static_cast<double>(sum_lost(pkt)), e.mean, 3 * sigma);
  EXPECT_NEAR(static_cast<double>(sum_lost(pkt)), static_cast<double>(sum_lost(stat)), 3 * std::sqrt(2.0) * sigma);
  // Only tuples crossing the fault lose probes, in both modes.
  for (size_t i = 0; i < m.tuples.size(); ++i) {
    bool crosses = false;
    for (int32_t q = m.tuples[i].path_begin; q < m.tuples[i].path_end; ++q)
      crosses |= (!f.dirs.empty() && m.links[q] == f.dirs[0]) ||
                 (f.device != topology::kNone && switch_entered(t, m.links[q]) == f.device);
    if (!crosses) {
      EXPECT_EQ(pkt.total[i].lost, 0) << i;
      EXPECT_EQ(stat.total[i].lost, 0) << i;
    }
  }
  // The same fault localized from either run.
  const Incidence inc = incidence_of(t, m);
  for (const ProbeRun* run : {&stat, &pkt}) {
    const Localization loc = localize(inc, sent_of(*run), lost_of(*run));
    ASSERT_EQ(loc.suspects.size(), 1u) << (run == &pkt ? "packet" : "statistical");
    EXPECT_EQ(loc.suspects[0].component, want_component) << (run == &pkt ? "packet" : "statistical");
  }
}

TEST(PacketProbes, DroppingLinkDirectionAgreesWithTheStatisticalMode) {
  const Topology t = fat_tree4();
  routing::Router r(t, ecmp());
  const Mesh m = build_mesh(t, r, sparse(), 1);
  Fault f;
  f.kind = FaultKind::Drop;
  f.dirs = {first_dir_from_tier(t, 2)};  // an aggregation -> core direction
  f.probability = 0.05;
  expect_agreement(t, m, f, f.dirs[0]);
}

TEST(PacketProbes, CorruptingSwitchAgreesWithTheStatisticalMode) {
  const Topology t = fat_tree4();
  routing::Router r(t, ecmp());
  const Mesh m = build_mesh(t, r, sparse(), 1);
  Fault f;
  f.kind = FaultKind::Corrupt;
  f.device = first_switch_of_tier(t, 1);
  f.probability = 0.01;
  expect_agreement(t, m, f, static_cast<int32_t>(2 * t.links.size()) + f.device);
}

TEST(PacketProbes, FlapLosesWhatCrossesItWhileDown) {
  // Down 10 ms of every 50 ms from 0 on one aggregation -> core direction: a fifth of the time.
  // 3,000 probes/s per NIC over its 15 peers x 2 ports = 30 tuples: each tuple is probed every
  // 30 / 3,000 s = 10 ms, 10 times per 0.1 s round, the same instants every round. Its probes cross the
  // link on a 10 ms lattice, so exactly one in five falls in each 10 ms down window: the packet mode
  // loses exactly a fifth of the probes of the tuples that cross the link. The statistical mode loses
  // each with probability 1/5 (the share of the round it is down): within 3 sigma of that mean.
  const Topology t = fat_tree4();
  routing::Router r(t, ecmp());
  ProbeOptions o = sparse();
  o.rate = 3000;
  o.duration = Time::from_seconds(1);
  const Mesh m = build_mesh(t, r, o, 1);
  Fault f;
  f.kind = FaultKind::Flap;
  f.dirs = {first_dir_from_tier(t, 2)};
  f.period = Time::from_seconds(0.05);
  f.down = Time::from_seconds(0.01);
  const ProbeRun stat = simulate_probes(t, m, {f}, o, 5);
  const ProbeRun pkt = simulate_probes_packet(t, m, {f}, o, network(), 5);
  const Expect e = expected_loss(t, m, stat, f.dirs[0], topology::kNone, 0.2);
  ASSERT_GT(e.mean, 100);
  EXPECT_DOUBLE_EQ(static_cast<double>(sum_lost(pkt)), e.mean);
  EXPECT_NEAR(static_cast<double>(sum_lost(stat)), e.mean, 3 * std::sqrt(e.var));
}

TEST(PacketProbes, DegradedLinkAddsItsLatencyBothWays) {
  // 20 us more on both directions of a NIC's link: every tuple from or to that NIC has an RTT 40 us
  // above its base (the request crosses one direction, the reply the other), in both modes.
  const Topology t = fat_tree4();
  routing::Router r(t, ecmp());
  const ProbeOptions o = sparse();
  const Mesh m = build_mesh(t, r, o, 1);
  const routing::DirLink d = m.links[m.tuples[0].path_begin];  // the first source NIC's uplink
  Fault f;
  f.kind = FaultKind::Degrade;
  f.dirs = {d, d ^ 1};
  f.latency = Time::from_seconds(20e-6);
  const ProbeRun base = simulate_probes(t, m, {}, o, 5);
  const ProbeRun stat = simulate_probes(t, m, {f}, o, 5);
  const ProbeRun pkt = simulate_probes_packet(t, m, {f}, o, network(), 5);
  int slowed = 0;
  for (size_t i = 0; i < m.tuples.size(); ++i) {
    const bool touches = m.tuples[i].src == m.tuples[0].src || m.tuples[i].dst == m.tuples[0].src;
    const int64_t add = touches ? Time::from_seconds(40e-6).ps : 0;
    EXPECT_EQ(stat.total[i].rtt_p50.ps, base.total[i].rtt_p50.ps + add) << i;
    EXPECT_EQ(pkt.total[i].rtt_p50.ps, base.total[i].rtt_p50.ps + add) << i;
    slowed += touches ? 1 : 0;
  }
  // 15 peers x 2 directions x 2 ports.
  EXPECT_EQ(slowed, 60);
}

TEST(PacketProbes, DeterministicInTheSeed) {
  const Topology t = fat_tree4();
  routing::Router r(t, ecmp());
  const ProbeOptions o = sparse();
  const Mesh m = build_mesh(t, r, o, 1);
  Fault f;
  f.dirs = {first_dir_from_tier(t, 1)};
  f.probability = 0.02;
  const ProbeRun a = simulate_probes_packet(t, m, {f}, o, network(), 9);
  const ProbeRun b = simulate_probes_packet(t, m, {f}, o, network(), 9);
  ASSERT_EQ(a.lost_by_round.size(), b.lost_by_round.size());
  for (size_t r2 = 0; r2 < a.lost_by_round.size(); ++r2) {
    ASSERT_EQ(a.lost_by_round[r2].size(), b.lost_by_round[r2].size());
    for (size_t k = 0; k < a.lost_by_round[r2].size(); ++k) {
      EXPECT_EQ(a.lost_by_round[r2][k].tuple, b.lost_by_round[r2][k].tuple);
      EXPECT_EQ(a.lost_by_round[r2][k].lost, b.lost_by_round[r2][k].lost);
    }
  }
  EXPECT_GT(sum_lost(a), 0);
}

TEST(PacketProbes, RefusesALargeRunNamingTheStatisticalMode) {
  const Topology t = fat_tree4();
  routing::Router r(t, ecmp());
  ProbeOptions o = sparse();
  o.rate = 1000;
  o.duration = Time::from_seconds(300);  // 16 x 1,000 x 300 = 4.8M probes > 4M
  o.round = Time::from_seconds(10);
  const Mesh m = build_mesh(t, r, o, 1);
  try {
    simulate_probes_packet(t, m, {}, o, network(), 1);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("4,800,000 probes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("statistical mode"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace podnet::diagnose
