// Drifted PFC/ECN thresholds end to end: a switch simulated with thresholds
// off the fabric's configuration (packet_sim.hpp §12), recorded by
// telemetry, found by diagnose/threshold_drift.hpp (study::find_drifts); and
// the same runs without the drift, where nothing is found.
#include <gtest/gtest.h>

#include "engine/packet/packet_sim.hpp"
#include "engine/packet/packet_test_util.hpp"
#include "routing/route.hpp"
#include "routing/router.hpp"
#include "study/study.hpp"
#include "telemetry/recorder.hpp"
#include "telemetry/test_util.hpp"

namespace podnet::study {
namespace {

using namespace engine::packet;
using namespace engine::packet::testing;
using telemetry::testing::record;

// The directed link from GPU rank g's switch down to its NIC (one NIC per server).
routing::DirLink downlink_of(const topology::Topology& t, int32_t gpu) {
  std::vector<routing::PathPart> r;
  routing::Router router(t, net().routing);
  router.route(gpu, gpu == 0 ? 1 : 0, 0, 1.0, r);
  for (const auto& p : r) {
    const auto m = t.links[routing::link_of(p.link)].media;
    if (m == topology::Media::Copper || m == topology::Media::Optical) return p.link ^ 1;
  }
  return -1;
}

// DCQCN incast 4 -> 1 on a k = 4 fat-tree (hosts 4, 8, 12, 13 in other pods send 1 MB each to host 0):
// the queue builds at host 0's edge switch, on its port to host 0.
std::vector<diagnose::ThresholdDrift> ecn_incast(const topology::Topology& t, const engine::NetworkOptions& n,
                                                 uint64_t& marks) {
  PacketOptions opt;
  opt.cc = "dcqcn_nic";
  opt.buffer_bytes = 16'000'000;  // room above the configured band before PFC: the queue reaches Kmin
  PacketSim sim(t, n, opt);
  for (int32_t s : {4, 8, 12, 13}) add(sim, s, 0, 2'000'000, 0, Time(), static_cast<uint64_t>(s));
  const telemetry::Recorder r = record(t, sim);
  marks = sim.stats().ecn_marks;
  EXPECT_EQ(sim.open_streams(), 0);
  return find_drifts(r);
}

TEST(ThresholdDrift, EcnBandLoweredOnOneEdgeSwitchIsFound) {
  // Host 0's edge switch marks from 20 KB to 80 KB instead of the fabric's 400 KB to 1.6 MB (dcqcn_nic's
  // band at 100 Gb/s): it marks while its queue is far below 400 KB, where the configured band marks
  // nothing, so the port marks far more than 2 E_hi + 3 sqrt(E_hi) + 10.
  const auto t = kary(4);
  const routing::DirLink down = downlink_of(t, 0);
  const topology::NodeId edge = routing::dir_from(down, t);
  auto n = net();
  n.faults.threshold_drifts.push_back({edge, 20'000, 80'000, -1, -1, "drifted edge"});
  uint64_t marks = 0;
  const auto found = ecn_incast(t, n, marks);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].node, edge);
  bool at_down = false;
  for (const auto& p : found[0].ports) {
    EXPECT_EQ(p.what, "ecn_early");
    at_down = at_down || p.link == down;
  }
  EXPECT_TRUE(at_down);
}

TEST(ThresholdDrift, NothingFoundWithTheConfiguredBand) {
  // The same incast without the drift: it marks (so the rule is exercised), every port within its band.
  const auto t = kary(4);
  uint64_t marks = 0;
  EXPECT_TRUE(ecn_incast(t, net(), marks).empty());
  EXPECT_GT(marks, 0u);
}

// PFC incast 4 -> 1 under one leaf (CC off, 1 MB buffer): the leaf pauses the four senders' uplinks.
std::vector<diagnose::ThresholdDrift> pfc_incast(const topology::Topology& t, const engine::NetworkOptions& n,
                                                 uint64_t& pauses) {
  PacketOptions opt;
  opt.cc = "none";
  opt.buffer_bytes = 4'000'000;  // alpha x F > 0: F = 4 MB - the headroom and reserves of all the leaf's links
  PacketSim sim(t, n, opt);
  for (int32_t s = 1; s <= 4; ++s) add(sim, s, 0, 2'000'000, 0, Time(), static_cast<uint64_t>(s));
  const telemetry::Recorder r = record(t, sim);
  pauses = sim.stats().pause_frames;
  EXPECT_EQ(sim.open_streams(), 0);
  return find_drifts(r);
}

TEST(ThresholdDrift, PfcAlphaRaisedIsFoundFromTheSharedWatermark) {
  // alpha 1/2 instead of 1/8: four congested ingresses each settle where sh = (F - 4 sh) / 2, i.e. sh =
  // F / 6, above the configured limit F / 8 (+ one packet) that no ingress can pass under alpha = 1/8
  // (there sh = (F - 4 sh) / 8 = F / 12 at most).
  const auto t = one_leaf(8);
  const topology::NodeId leaf = routing::dir_from(downlink_of(t, 0), t);
  auto n = net();
  n.faults.threshold_drifts.push_back({leaf, -1, -1, -1, 1, "drifted leaf"});
  uint64_t pauses = 0;
  const auto found = pfc_incast(t, n, pauses);
  EXPECT_GT(pauses, 0u);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].node, leaf);
  ASSERT_EQ(found[0].ports.size(), 4u);  // the four senders' uplinks
  for (const auto& p : found[0].ports) {
    EXPECT_EQ(p.what, "xoff_high");
    EXPECT_GT(p.observed, p.expected_hi);
  }
}

TEST(ThresholdDrift, PfcIncastAtTheConfiguredAlphaIsNotADrift) {
  const auto t = one_leaf(8);
  uint64_t pauses = 0;
  EXPECT_TRUE(pfc_incast(t, net(), pauses).empty());
  EXPECT_GT(pauses, 0u);  // it paused: the watermark reached the threshold and stayed under the limit
}

}  // namespace
}  // namespace podnet::study
