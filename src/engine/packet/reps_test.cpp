// REPS (reps.hpp): the entropy ring, and what it does on a fabric with a slow path.
#include <gtest/gtest.h>

#include <set>

#include "engine/packet/packet_test_util.hpp"
#include "engine/packet/reps.hpp"

using namespace podnet;
using namespace podnet::engine;
using namespace podnet::engine::packet;
using namespace podnet::engine::packet::testing;

TEST(Reps, ReusesEachUnmarkedEntropyOnceOldestFirstThenDrawsNewOnes) {
  Reps r;
  // Nothing came back yet: every packet gets a new value.
  const uint16_t a = r.next(42), b = r.next(42);
  EXPECT_NE(a, b);
  EXPECT_EQ(r.drawn, 2u);
  // Two ACKs without marks: their values come back in the order they were recycled, once each.
  r.recycle(5);
  r.recycle(7);
  EXPECT_EQ(r.next(42), 5);
  EXPECT_EQ(r.next(42), 7);
  EXPECT_EQ(r.drawn, 2u);
  const uint16_t c = r.next(42);  // the ring is used up: a new value
  EXPECT_EQ(r.drawn, 3u);
  EXPECT_NE(c, 5);
  EXPECT_NE(c, 7);
  // Nine more: the ring keeps the last eight (11 .. 18); the oldest of them goes first.
  for (uint16_t e = 10; e <= 18; ++e) r.recycle(e);
  for (uint16_t e = 11; e <= 18; ++e) EXPECT_EQ(r.next(42), e);
  EXPECT_EQ(r.drawn, 3u);
}

TEST(Reps, TheDrawnValuesDependOnlyOnTheQpAndTheCount) {
  Reps x, y;
  for (int i = 0; i < 100; ++i) EXPECT_EQ(x.next(7), y.next(7));
  Reps z;
  std::set<uint16_t> seen;
  for (int i = 0; i < 100; ++i) seen.insert(z.next(8));
  EXPECT_GT(seen.size(), 95u);  // 100 draws of 65,536 values: at most a few collide
}

TEST(PacketSim, RepsMovesPacketsOffASlowPathThatSprayKeepsLoading) {
  // A k = 4 fat-tree whose first leaf has one 10 Gb/s uplink (built so: its ECN band scales with its
  // rate) beside a 100 Gb/s one. Host 0 sends 4 MiB to host 4 in the other pod under NSCC, lossy.
  // Spraying splits packets evenly over the two uplinks (49 % on the slow one here); REPS reuses only
  // the entropies whose ACKs came back unmarked, so the slow uplink, which marks, carries a small share
  // (13 %). The flow is not faster for it: NSCC's single window still answers the slow path's marks
  // (2.66 ms against spray's 1.76 ms); the multipath variant that would not is not built.
  topology::Topology topo = kary(4);
  // The first leaf: the switch the first GPU's NIC is cabled to; its uplinks go to switches of tier 2.
  topology::NodeId first_leaf = topology::kNone;
  for (const auto& l : topo.links) {
    const bool a_sw = topo.nodes[l.a].kind == topology::NodeKind::Switch,
               b_sw = topo.nodes[l.b].kind == topology::NodeKind::Switch;
    if (a_sw != b_sw && topo.nodes[a_sw ? l.b : l.a].server == topo.nodes[topo.gpus[0]].server) {
      first_leaf = a_sw ? l.a : l.b;
      break;
    }
  }
  ASSERT_NE(first_leaf, topology::kNone);
  std::vector<topology::LinkId> up;
  for (topology::LinkId i = 0; i < static_cast<topology::LinkId>(topo.links.size()); ++i) {
    const auto& l = topo.links[i];
    const topology::NodeId other = l.a == first_leaf ? l.b : (l.b == first_leaf ? l.a : topology::kNone);
    if (other != topology::kNone && topo.nodes[other].kind == topology::NodeKind::Switch) up.push_back(i);
  }
  ASSERT_EQ(up.size(), 2u);
  topo.links[up[0]].capacity = Bandwidth(10e9);
  auto run_with = [&](const std::string& policy, double& slow_share) {
    PacketOptions opt;
    opt.cc = "nscc";
    opt.pfc = false;
    PacketSim sim(topo, net(policy), opt);
    add(sim, 0, 4, 4 << 20);
    run(sim);
    EXPECT_EQ(sim.open_streams(), 0);
    auto bytes = [&](topology::LinkId l) {
      return sim.port_stats()[2 * l].payload_bytes + sim.port_stats()[2 * l + 1].payload_bytes;
    };
    const double s = bytes(up[0]), f = bytes(up[1]);
    slow_share = s / (s + f);
  };
  double spray_share = 0, reps_share = 0;
  run_with("spray", spray_share);
  run_with("reps", reps_share);
  EXPECT_NEAR(spray_share, 0.5, 0.02);
  EXPECT_LT(reps_share, 0.25);
}
