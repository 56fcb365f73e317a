#include "diagnose/threshold_drift.hpp"

#include <gtest/gtest.h>

#include "engine/depth_histogram.hpp"
#include "routing/route.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::diagnose {
namespace {

using topology::NodeKind;

// k = 4 fat-tree: the first directed link leaving a switch toward a host, and one entering a switch.
topology::Topology fat_tree4() {
  return topology::build_with("fat_tree", {{"k", "4"}},
                              topology::testing::hw_with(1, 1, topology::default_hardware().radix));
}

routing::DirLink switch_to_host(const topology::Topology& t) {
  for (routing::DirLink d = 0; d < routing::dir_link_count(t); ++d)
    if (t.nodes[routing::dir_from(d, t)].kind == NodeKind::Switch &&
        t.nodes[routing::dir_to(d, t)].kind != NodeKind::Switch)
      return d;
  return -1;
}

constexpr int64_t kWire = 4178;  // 4096 + 82

// A 100 Gb/s port whose queue held `depth` bytes for 1 ms: 1e-3 x 100e9 / (8 x 4178) = 2,991.9 packets
// dequeued back to back. Configured band: Kmin 400 KB, Kmax 1,600 KB, Pmax 0.2.
PortThresholds port(int64_t depth, uint64_t marks) {
  PortThresholds p;
  p.bps = 100e9;
  p.kmin = 400'000;
  p.kmax = 1'600'000;
  p.pmax = 0.2;
  p.ecn_marks = marks;
  engine::depth::add(p.queue_hist_s, depth, 1e-3);
  return p;
}

TEST(ThresholdDrift, ExpectedMarksFollowTheConfiguredBand) {
  // Below Kmin: none. Above Kmax (2 MB; its bucket's floor 1,966,080 B, also above): every packet.
  EXPECT_EQ(expected_marks(port(100'000, 0), kWire).second, 0.0);
  const auto [lo, hi] = expected_marks(port(2'000'000, 0), kWire);
  EXPECT_NEAR(lo, 1e-3 * 100e9 / (8 * 4178.0), 1e-6);
  EXPECT_NEAR(hi, lo, 1e-9);
  // Inside the band, 1 MB: bucket [983,040, 1,048,576): p from 0.2 x 583,040 / 1.2 MB = 0.0972 to
  // 0.2 x 648,576 / 1.2 MB = 0.1081, times 2,991.9 packets.
  const auto [l2, h2] = expected_marks(port(1'000'000, 0), kWire);
  EXPECT_NEAR(l2, 2991.86 * 0.2 * 583040 / 1.2e6, 0.05);
  EXPECT_NEAR(h2, 2991.86 * 0.2 * 648576 / 1.2e6, 0.05);
}

TEST(ThresholdDrift, MarksBelowKminAreAnEarlyBand) {
  const topology::Topology t = fat_tree4();
  const routing::DirLink d = switch_to_host(t);
  std::vector<PortThresholds> ports(static_cast<size_t>(routing::dir_link_count(t)));
  ports[d] = port(100'000, 500);  // 500 marks where the configuration gives none: 500 > 2 x 0 + 0 + 10
  auto found = find_threshold_drifts(t, ports, kWire, 1.0);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].node, routing::dir_from(d, t));
  ASSERT_EQ(found[0].ports.size(), 1u);
  EXPECT_EQ(found[0].ports[0].what, "ecn_early");
  EXPECT_EQ(found[0].ports[0].link, d);
  // 10 marks: within the slack (10 <= 0 + 10), nothing.
  ports[d] = port(100'000, 10);
  EXPECT_TRUE(find_threshold_drifts(t, ports, kWire, 1.0).empty());
}

TEST(ThresholdDrift, NoMarksAboveKmaxIsALateBand) {
  const topology::Topology t = fat_tree4();
  const routing::DirLink d = switch_to_host(t);
  std::vector<PortThresholds> ports(static_cast<size_t>(routing::dir_link_count(t)));
  // 2 MB queued for 1 ms: ~2,992 marks expected; 100 is below (2,992 - 3 x 54.7) / 2 = 1,414.
  ports[d] = port(2'000'000, 100);
  auto found = find_threshold_drifts(t, ports, kWire, 1.0);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].ports[0].what, "ecn_late");
  // 2,900 marks: consistent with the band.
  ports[d] = port(2'000'000, 2900);
  EXPECT_TRUE(find_threshold_drifts(t, ports, kWire, 1.0).empty());
  // Paused by PFC for 20 ms of a 1 s run (2 % > 1 %): its queue sat without dequeuing, no ECN test.
  ports[d] = port(2'000'000, 100);
  ports[d].paused_s = 0.02;
  EXPECT_TRUE(find_threshold_drifts(t, ports, kWire, 1.0).empty());
}

TEST(ThresholdDrift, SharedWatermarkAboveTheXoffLimitIsAHighXoff) {
  const topology::Topology t = fat_tree4();
  const routing::DirLink in = switch_to_host(t) ^ 1;  // host -> switch: an ingress of the switch
  std::vector<PortThresholds> ports(static_cast<size_t>(routing::dir_link_count(t)));
  ports[in].xoff_limit = 1'000'000;
  ports[in].pg_shared_max = 1'000'000 + kWire;  // at most the limit + one packet: allowed
  EXPECT_TRUE(find_threshold_drifts(t, ports, kWire, 1.0).empty());
  ports[in].pg_shared_max = 1'500'000;
  auto found = find_threshold_drifts(t, ports, kWire, 1.0);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].node, routing::dir_to(in, t));
  EXPECT_EQ(found[0].ports[0].what, "xoff_high");
  EXPECT_EQ(found[0].ports[0].observed, 1'500'000);
}

}  // namespace
}  // namespace podnet::diagnose
