#include "diagnose/pfc_storm.hpp"

#include <gtest/gtest.h>

#include "routing/route.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::diagnose {
namespace {

// 4 hosts under one leaf. Directed links by their ends.
struct Fabric {
  topology::Topology t;
  routing::DirLink into(topology::NodeId to, topology::NodeKind from_kind) const {
    for (routing::DirLink d = 0; d < routing::dir_link_count(t); ++d)
      if (routing::dir_to(d, t) == to && t.nodes[routing::dir_from(d, t)].kind == from_kind) return d;
    return -1;
  }
};

Fabric leaf4() {
  topology::Hardware hw = topology::testing::hw_with(1, 1, 16);
  return {topology::build_with("fat_tree", {{"gpus", "4"}}, hw)};
}

std::vector<topology::NodeId> nics(const topology::Topology& t) {
  std::vector<topology::NodeId> out;
  for (topology::NodeId n = 0; n < static_cast<topology::NodeId>(t.nodes.size()); ++n)
    if (t.nodes[n].kind == topology::NodeKind::Nic) out.push_back(n);
  return out;
}

TEST(PfcStormRule, SourceIsTheNicFacingPortAndTheTreeGrowsUpstream) {
  // T = 1 s. The leaf's port into NIC a paused 0.5 s (50 % >= 10 %): a source.
  // Uplinks of NICs b and c into the leaf paused 0.3 s and 0.005 s: b is in the
  // tree (>= 1 %) at depth 1, c is not (0.5 %).
  const Fabric f = leaf4();
  const auto& t = f.t;
  const auto n = nics(t);
  std::vector<PortPause> p(routing::dir_link_count(t));
  const routing::DirLink to_a = f.into(n[0], topology::NodeKind::Switch);
  p[to_a] = {1000, 0.5};
  // The uplinks into the leaf from NICs 1 and 2.
  routing::DirLink up1 = -1, up2 = -1;
  for (routing::DirLink d = 0; d < routing::dir_link_count(t); ++d) {
    if (routing::dir_from(d, t) == n[1] && t.nodes[routing::dir_to(d, t)].kind == topology::NodeKind::Switch) up1 = d;
    if (routing::dir_from(d, t) == n[2] && t.nodes[routing::dir_to(d, t)].kind == topology::NodeKind::Switch) up2 = d;
  }
  ASSERT_GE(up1, 0);
  ASSERT_GE(up2, 0);
  p[up1] = {40, 0.3};
  p[up2] = {2, 0.005};
  const auto s = find_pfc_storms(t, p, 1.0);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].nic, n[0]);
  EXPECT_EQ(s[0].port, to_a);
  EXPECT_EQ(s[0].pause_frames, 1000u);
  EXPECT_DOUBLE_EQ(s[0].share, 0.5);
  ASSERT_EQ(s[0].tree.size(), 2u);
  EXPECT_EQ(s[0].tree[1].link, up1);
  EXPECT_EQ(s[0].tree[1].depth, 1);
}

TEST(PfcStormRule, ASwitchPausingItsNeighboursIsNoStormAndShortPausesAreNot) {
  // Only uplinks into the leaf paused (an incast's congestion): no source. A
  // NIC-facing port paused 0.09 s of 1 s (9 % < 10 %): not a source either.
  const Fabric f = leaf4();
  const auto& t = f.t;
  const auto n = nics(t);
  std::vector<PortPause> p(routing::dir_link_count(t));
  for (routing::DirLink d = 0; d < routing::dir_link_count(t); ++d)
    if (t.nodes[routing::dir_to(d, t)].kind == topology::NodeKind::Switch) p[d] = {100, 0.8};
  p[f.into(n[0], topology::NodeKind::Switch)] = {10, 0.09};
  EXPECT_TRUE(find_pfc_storms(t, p, 1.0).empty());
}

}  // namespace
}  // namespace podnet::diagnose
