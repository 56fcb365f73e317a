#include "collective/ring_order.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <vector>

#include "collective/test_topologies.hpp"

namespace podnet::collective {
namespace {

using testing::iota;
using testing::rail32;

int32_t server_of(int32_t rank, const topology::Topology& t) { return t.nodes[t.gpus[rank]].server; }
int32_t rail_of(int32_t rank, const topology::Topology& t) { return t.nodes[t.gpu_nic[rank]].rail; }

// Rails of the inter-server hops of a closed ring.
std::set<int32_t> inter_server_rails(const Group& order, const topology::Topology& t) {
  std::set<int32_t> rails;
  for (size_t i = 0; i < order.size(); ++i) {
    const int32_t a = order[i], b = order[(i + 1) % order.size()];
    if (server_of(a, t) != server_of(b, t)) {
      rails.insert(rail_of(a, t));
      rails.insert(rail_of(b, t));
    }
  }
  return rails;
}

void expect_servers_contiguous(const Group& order, const topology::Topology& t) {
  std::set<int32_t> done;
  for (size_t i = 0; i < order.size(); ++i) {
    const int32_t s = server_of(order[i], t);
    if (i > 0 && s != server_of(order[i - 1], t)) {
      EXPECT_EQ(done.count(s), 0u) << "server " << s << " visited twice";
      done.insert(server_of(order[i - 1], t));
    }
  }
}

bool is_permutation_of(Group a, Group b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

TEST(RingOrder, NaiveIsTheGroupOrderOnEveryChannel) {
  const Group g = {7, 3, 30, 12};
  for (int32_t c = 0; c < 4; ++c) EXPECT_EQ(ring_order(g, RingOrder::Naive, c, rail32()), g);
}

TEST(RingOrder, HomeRails) {
  // h = (2c + floor(2c/8)) mod 8: channels 0..7 -> 0 2 4 6 1 3 5 7.
  const int32_t expected[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  for (int32_t c = 0; c < 8; ++c) EXPECT_EQ(home_rail(c, 8), expected[c]);
  EXPECT_EQ(home_rail(8, 8), 2);  // 16 + 2 = 18 mod 8
  EXPECT_EQ(home_rail(3, 1), 0);
}

TEST(RingOrder, OneGpuPerServerVisitsTheServersInOrder) {
  // rail32: 4 servers of 8 GPUs, rank = 8 x server + local. A data-parallel group takes GPU 5 of each server
  // (one rail) and lists them shuffled; GPUs 2 and 6 of two servers are one GPU per server too (two rails).
  // Each server has one GPU of the group, so the ring is the servers in order on every channel.
  for (int32_t c = 0; c < 8; ++c) {
    EXPECT_EQ(ring_order({29, 5, 21, 13}, RingOrder::TopologyAware, c, rail32()), (Group{5, 13, 21, 29})) << c;
    EXPECT_EQ(ring_order({14, 2}, RingOrder::TopologyAware, c, rail32()), (Group{2, 14})) << c;
  }
}

TEST(RingOrder, RailClos1024TopologyAwareBeatsScrambled) {
  // 1024 GPUs = 128 servers x 8; a 128-port leaf has 64 down-ports, so 64
  // servers per group: 2 groups, 1 pod.
  const auto t = testing::rail_clos(1024);
  ASSERT_EQ(t.groups, 2);
  ASSERT_EQ(t.pods, 1);
  // Scrambled group: rank r -> 389 r mod 1024 (389 is odd: a permutation).
  Group scrambled(1024);
  for (int32_t r = 0; r < 1024; ++r) scrambled[r] = static_cast<int32_t>((389LL * r) % 1024);
  const RingStats naive = ring_stats(ring_order(scrambled, RingOrder::Naive, 0, t), t);
  const Group aware = ring_order(scrambled, RingOrder::TopologyAware, 0, t);
  ASSERT_TRUE(is_permutation_of(aware, scrambled));
  const RingStats s = ring_stats(aware, t);
  // Servers contiguous: 128 x 7 = 896 NVLink hops; 128 inter-server hops, of
  // which 2 cross between the two groups (group 0 -> 1 and the closing hop),
  // and none changes rail.
  EXPECT_EQ(s.hops, 1024);
  EXPECT_EQ(s.intra_server, 896);
  EXPECT_EQ(s.cross_server, 126);
  EXPECT_EQ(s.cross_group, 2);
  EXPECT_EQ(s.cross_pod, 0);
  EXPECT_EQ(s.cross_rail_hops, 0);
  expect_servers_contiguous(aware, t);
  // The scrambled order: consecutive ranks differ by 389 (mod 1024), which is
  // never inside one server, and about half its hops cross groups.
  EXPECT_EQ(naive.hops, 1024);
  EXPECT_EQ(naive.intra_server, 0);
  EXPECT_GT(naive.cross_group, 100);
  EXPECT_GT(naive.cross_rail_hops, 100);
  EXPECT_LT(s.cross_group, naive.cross_group);
}

TEST(RingOrder, ChannelsLeaveServersOnDifferentRails) {
  // 4 servers x 8 GPUs (even): channel c alternates between its home rail
  // h = 2c and h+1 (rules 3b and 4), so its inter-server hops use rails
  // {2c, 2c+1}; channels 4..7 use {1,2} {3,4} {5,6} {7,0}.
  const auto& t = rail32();
  const std::set<int32_t> expected[8] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {1, 2}, {3, 4}, {5, 6}, {0, 7}};
  for (int32_t c = 0; c < 8; ++c) {
    const Group order = ring_order(iota(32), RingOrder::TopologyAware, c, t);
    ASSERT_TRUE(is_permutation_of(order, iota(32)));
    expect_servers_contiguous(order, t);
    const RingStats s = ring_stats(order, t);
    EXPECT_EQ(s.intra_server, 28);
    EXPECT_EQ(s.cross_server, 4);
    EXPECT_EQ(s.cross_rail_hops, 0) << "channel " << c;
    EXPECT_EQ(inter_server_rails(order, t), expected[c]) << "channel " << c;
    EXPECT_EQ(rail_of(order[0], t), home_rail(c, 8));  // entered at the home rail
  }
}

TEST(RingOrder, OddServerCountStillStaysOnRails) {
  // 3 servers: an alternation h, h+1, h cannot close; one server detours
  // through a third rail (rule 3b), still without a cross-rail hop.
  const auto t = testing::rail_clos(24);
  for (int32_t c = 0; c < 4; ++c) {
    const Group order = ring_order(iota(24), RingOrder::TopologyAware, c, t);
    ASSERT_TRUE(is_permutation_of(order, iota(24)));
    EXPECT_EQ(ring_stats(order, t).cross_rail_hops, 0) << "channel " << c;
    EXPECT_EQ(ring_stats(order, t).intra_server, 21);
    expect_servers_contiguous(order, t);
  }
}

// How many of `channels` channels' rings send an inter-server hop from each GPU (index: rank), i.e. from
// its NIC: the load of each NIC in a ring collective.
std::vector<int32_t> sends_per_gpu(const Group& group, int32_t channels, const topology::Topology& t) {
  std::vector<int32_t> sends(t.gpus.size(), 0);
  for (int32_t c = 0; c < channels; ++c) {
    const Group order = ring_order(group, RingOrder::TopologyAware, c, t);
    for (size_t i = 0; i < order.size(); ++i)
      if (server_of(order[i], t) != server_of(order[(i + 1) % order.size()], t)) ++sends[order[i]];
  }
  return sends;
}

TEST(RingOrder, OddServerCountSpreadsItsDetoursOverTheRails) {
  // 3 servers x 8 GPUs, 16 channels. Each rail is the home rail h of 2 channels (HomeRails). A channel's
  // ring goes s0 (in h, out h+1) -> s1 (in h+1, out z) -> s2 (in z, out h): one detour rail z, and ties
  // go cyclically from h, so z = h+2 (h+1 is taken, h cannot be entered and left on one GPU). Server 0
  // sends on rail h+1, server 1 on h+2, server 2 on h: every NIC sends for exactly 2 channels. (Ties to
  // the lowest rail sent 12 of the 16 channels' detours through server 1's rail 0: 5.7x slower.)
  const auto t = testing::rail_clos(24);
  const std::vector<int32_t> sends = sends_per_gpu(iota(24), 16, t);
  for (int32_t g = 0; g < 24; ++g) EXPECT_EQ(sends[g], 2) << "GPU " << g;
}

TEST(RingOrder, PartServersSpreadChannelsOverTheRailsTheyShare) {
  // GPUs 0-3 and 8-11: two servers with rails 0-3 only. The channels spread over those 4 rails:
  // home_rail(c, 4) = (2c + floor(2c / 4)) mod 4 gives each rail to 4 of 16 channels; each ring enters
  // s0 at h, leaves at h+1 (mod 4) and comes back on h, so every NIC sends for exactly 4 channels.
  // (Homes over the fabric's 8 rails sent every channel homed on rails 4-7 through rail 0.)
  const auto& t = rail32();
  const Group part = {0, 1, 2, 3, 8, 9, 10, 11};
  std::vector<int32_t> sends = sends_per_gpu(part, 16, t);
  for (int32_t g : part) EXPECT_EQ(sends[g], 4) << "GPU " << g;
  // GPUs 4-11: server 0 has rails 4-7, server 1 rails 0-3, none shared; every hop changes rail, and
  // server 1's choices rotate with the channel's home position as well: again 4 channels per NIC.
  const Group apart = {4, 5, 6, 7, 8, 9, 10, 11};
  sends = sends_per_gpu(apart, 16, t);
  for (int32_t g : apart) EXPECT_EQ(sends[g], 4) << "GPU " << g;
}

TEST(RingOrder, UnavoidableCrossRailHopsAreCounted) {
  // {0, 9}: server 0 local 0 (rail 0) and server 1 local 1 (rail 1); a ring
  // of two has two hops, both inter-server and both changing rail.
  const RingStats s = ring_stats(ring_order({0, 9}, RingOrder::TopologyAware, 0, rail32()), rail32());
  EXPECT_EQ(s.hops, 2);
  EXPECT_EQ(s.cross_server, 2);
  EXPECT_EQ(s.cross_rail_hops, 2);
  // One GPU per server on one rail (a data-parallel group): no cross-rail hop.
  const RingStats dp = ring_stats(ring_order({3, 11, 19, 27}, RingOrder::TopologyAware, 0, rail32()), rail32());
  EXPECT_EQ(dp.cross_rail_hops, 0);
  EXPECT_EQ(dp.cross_server, 4);
  // Open chain: n-1 hops.
  EXPECT_EQ(ring_stats({0, 1, 2, 8}, rail32(), true).hops, 3);
  EXPECT_EQ(ring_stats({0, 1, 2, 8}, rail32(), true).cross_server, 1);
  EXPECT_EQ(ring_stats({5}, rail32()).hops, 0);
}

TEST(RingOrder, SharedRailsWithFourNicsPerServer) {
  // 8 GPUs and 4 NICs per server: GPUs 2i and 2i+1 share rail i. 3 servers.
  auto hw = topology::default_hardware();
  hw.nics_per_server = 4;
  const auto t = topology::build_with("rail_clos", {{"gpus", "24"}}, hw);
  ASSERT_EQ(t.rails, 4);
  for (int32_t c = 0; c < 4; ++c) {
    const Group order = ring_order(iota(24), RingOrder::TopologyAware, c, t);
    ASSERT_TRUE(is_permutation_of(order, iota(24)));
    EXPECT_EQ(ring_stats(order, t).cross_rail_hops, 0) << "channel " << c;
  }
}

TEST(RingOrder, PodsAndGroupsAreCrossedOncePerBoundary) {
  // Radix-16 switches: 8 leaf down-ports = 8 servers (64 GPUs) per group, so
  // 1024 GPUs = 128 servers = 16 groups; 8 groups per pod = 2 pods. The
  // ring visits groups in order and crosses 16 group boundaries (closing
  // hop included): 2 of them between pods, 14 between groups of one pod;
  // the other 128 - 16 = 112 inter-server hops stay inside a group.
  auto hw = topology::default_hardware();
  hw.radix = 16;
  const auto t = topology::build_with("rail_clos", {{"gpus", "1024"}, {"tiers", "3"}, {"groups_per_pod", "8"}}, hw);
  ASSERT_EQ(t.groups, 16);
  ASSERT_EQ(t.pods, 2);
  Group scrambled(1024);
  for (int32_t r = 0; r < 1024; ++r) scrambled[r] = static_cast<int32_t>((389LL * r) % 1024);
  const RingStats s = ring_stats(ring_order(scrambled, RingOrder::TopologyAware, 0, t), t);
  EXPECT_EQ(s.cross_pod, 2);
  EXPECT_EQ(s.cross_group, 14);
  EXPECT_EQ(s.cross_server, 112);
  EXPECT_EQ(s.intra_server, 896);
  EXPECT_EQ(s.cross_rail_hops, 0);
  const RingStats naive = ring_stats(scrambled, t);
  EXPECT_GT(naive.cross_pod, s.cross_pod);
}

TEST(GroupByServer, NaiveKeepsAppearanceOrder) {
  const Group g = {9, 1, 8, 0};
  const auto naive = group_by_server(g, RingOrder::Naive, rail32());
  ASSERT_EQ(naive.size(), 2u);
  EXPECT_EQ(naive[0], (Group{9, 8}));
  EXPECT_EQ(naive[1], (Group{1, 0}));
  const auto aware = group_by_server(g, RingOrder::TopologyAware, rail32());
  ASSERT_EQ(aware.size(), 2u);
  EXPECT_EQ(aware[0], (Group{0, 1}));
  EXPECT_EQ(aware[1], (Group{8, 9}));
}

// Torus distance (hops, with wrap-around) between two chips of dims (x fastest: r = x + X (y + Y z)).
int torus_hops(int32_t a, int32_t b, const std::vector<int32_t>& dims) {
  int hops = 0;
  for (int32_t k : dims) {
    const int32_t d = std::abs(a % k - b % k);
    hops += std::min(d, k - d);
    a /= k, b /= k;
  }
  return hops;
}

// A torus has no NICs: the rail logic walked each server back and forth (0 2 3 1 4 6 7 5 on a line of 8 chips,
// so the hops 0->2 and 1->4 both crossed 1->2 and 2->3) and visited servers cube by cube (hops of 4 links). The
// ring now snakes through the group's coordinates: every hop, the closing one included, is one torus link.
TEST(RingOrder, TorusRingHopsAreNeighbours) {
  const auto t = topology::build_with("torus", {{"dims", "[4, 4, 4]"}}, topology::default_hardware());
  ASSERT_EQ(t.torus_dims, (std::vector<int32_t>{4, 4, 4}));
  // 8 chips (0..7) are x = 0..3 on the rows y = 0 and y = 1: the snake is 0 1 2 3 7 6 5 4.
  EXPECT_EQ(ring_order(iota(8), RingOrder::TopologyAware, 0, t), (Group{0, 1, 2, 3, 7, 6, 5, 4}));
  // Odd channels go the other way round (from the same chip): channels 0 and 1 use opposite directions of
  // every link, channel 2 the first's again.
  EXPECT_EQ(ring_order(iota(8), RingOrder::TopologyAware, 1, t), (Group{0, 4, 5, 6, 7, 3, 2, 1}));
  EXPECT_EQ(ring_order(iota(8), RingOrder::TopologyAware, 2, t), ring_order(iota(8), RingOrder::TopologyAware, 0, t));
  for (int32_t n : {8, 16, 32, 64}) {
    for (int32_t c = 0; c < 2; ++c) {
      const Group g = ring_order(iota(n), RingOrder::TopologyAware, c, t);
      ASSERT_EQ(static_cast<int32_t>(g.size()), n);
      for (int32_t i = 0; i < n; ++i)
        EXPECT_EQ(torus_hops(g[i], g[(i + 1) % n], t.torus_dims), 1)
            << n << " chips, channel " << c << ": " << g[i] << " -> " << g[(i + 1) % n];
    }
  }
}

}  // namespace
}  // namespace podnet::collective
