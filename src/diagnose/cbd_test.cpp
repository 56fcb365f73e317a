#include "diagnose/cbd.hpp"

#include <gtest/gtest.h>

#include "routing/network_graph.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::diagnose {
namespace {

using topology::Topology;

TEST(Cbd, UpDownRoutingInAFatTreeHasNoCycle) {
  const Topology t = topology::build_with("fat_tree", {{"k", "4"}},
                                          topology::testing::hw_with(1, 1, topology::default_hardware().radix));
  routing::NetworkGraph g(t);
  const CbdResult r = find_cbd(t, g);
  EXPECT_TRUE(r.cycle.empty());
  EXPECT_EQ(r.targets, 8);  // the 8 edge switches hosts attach to
  EXPECT_GT(r.dependencies, 0);
}

TEST(Cbd, ATorusRingWithoutVirtualChannelsHasOne) {
  // 4 x 4 torus: in a ring of 4, the 2-hop routes 0 -> 1 -> 2, 1 -> 2 -> 3, 2 -> 3 -> 0 and 3 -> 0 -> 1 make
  // (0->1) wait on (1->2), (1->2) on (2->3), (2->3) on (3->0) and (3->0) on (0->1): a cycle of 4 links.
  const Topology t = topology::build_with("torus", {{"dims", "[4, 4]"}, {"cube", "[4, 4]"}},
                                          topology::testing::hw_with(1, 0, topology::default_hardware().radix));
  routing::NetworkGraph g(t);
  const CbdResult r = find_cbd(t, g);
  ASSERT_FALSE(r.cycle.empty());
  EXPECT_EQ(r.targets, 16);
  // The cycle is closed: each link ends where the next begins, the last where the first begins.
  for (size_t i = 0; i < r.cycle.size(); ++i)
    EXPECT_EQ(routing::dir_to(r.cycle[i], t), routing::dir_from(r.cycle[(i + 1) % r.cycle.size()], t));
}

}  // namespace
}  // namespace podnet::diagnose
