// PFC-storm detection end to end: a storm simulated on the packet engine,
// recorded by telemetry, found by diagnose/pfc_storm.hpp (study::find_storms);
// and a PFC incast, whose pauses are congestion, found to be no storm.
#include <gtest/gtest.h>

#include <algorithm>

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

// The directed links between GPU rank g's NIC and its leaf (one NIC per server).
struct HostLinks {
  routing::DirLink up = -1, down = -1;
};
HostLinks host_links(const topology::Topology& t, int32_t gpu) {
  std::vector<routing::PathPart> r;
  // The GPU's route to any other GPU leaves through its NIC's uplink: the first Copper/Optical link on it.
  routing::Router router(t, net().routing);
  router.route(gpu, gpu == 0 ? 1 : 0, 0, 1.0, r);
  HostLinks h;
  for (const auto& p : r) {
    const auto m = t.links[routing::link_of(p.link)].media;
    if (m == topology::Media::Copper || m == topology::Media::Optical) {
      h.up = p.link;
      h.down = p.link ^ 1;
      break;
    }
  }
  return h;
}

TEST(PfcStorm, FoundWithItsSourceAndTreeInAFabricBuiltToHaveOne) {
  // Host 1 storms from 20 us for 2 ms while hosts 2 and 3 send 2 MB each to it
  // and host 4 sends 2 MB to host 0, CC off. The leaf's port to host 1 is
  // paused from 20 us to 2.02 ms: > 10 % of a run that ends soon after. Its
  // queue fills the leaf's buffer for the uplinks of hosts 2 and 3, which the
  // leaf pauses (depth 1) for most of the storm. Host 4's uplink feeds a
  // queue that drains: it is not in the tree.
  const auto t = one_leaf(8);
  const HostLinks h1 = host_links(t, 1);
  auto n = net();
  n.faults.pause_storms.push_back({h1.down, Time(20'000'000), Time(2'020'000'000), "storm"});
  PacketOptions opt;
  opt.cc = "none";
  opt.buffer_bytes = 1'000'000;
  PacketSim sim(t, n, opt);
  add(sim, 2, 1, 2'000'000);
  add(sim, 3, 1, 2'000'000);
  add(sim, 4, 0, 2'000'000);
  const telemetry::Recorder r = record(t, sim);
  const auto storms = find_storms(r);
  ASSERT_EQ(storms.size(), 1u);
  EXPECT_EQ(storms[0].port, h1.down);
  EXPECT_EQ(storms[0].nic, routing::dir_to(h1.down, t));
  EXPECT_NEAR(storms[0].paused_s, 2e-3, 1e-9);  // the whole storm (packet_sim.hpp §3)
  std::vector<int32_t> depth1;
  for (const auto& p : storms[0].tree)
    if (p.depth == 1) depth1.push_back(p.link);
  std::sort(depth1.begin(), depth1.end());
  std::vector<int32_t> want = {host_links(t, 2).up, host_links(t, 3).up};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(depth1, want);
  for (const auto& p : storms[0].tree) EXPECT_NE(p.link, host_links(t, 4).up);
  // Every byte is delivered once the storm ends.
  EXPECT_EQ(sim.open_streams(), 0);
}

TEST(PfcStorm, NotFoundInAnIncastBuiltToPauseEverySender) {
  // Incast 8 -> 1 with PFC and CC off: the leaf pauses all 8 senders' uplinks
  // for most of the run, but those ports enter a switch (congestion), and no
  // port facing a NIC is paused: no storm.
  const auto t = one_leaf(16);
  PacketOptions opt;
  opt.cc = "none";
  opt.buffer_bytes = 4'000'000;
  PacketSim sim(t, net(), opt);
  for (int s = 1; s <= 8; ++s) add(sim, s, 0, 512 * 1024, 0, Time(), static_cast<uint64_t>(s));
  const telemetry::Recorder r = record(t, sim);
  double paused = 0;
  for (int s = 1; s <= 8; ++s) paused += r.ports()[host_links(t, s).up].paused_s;
  EXPECT_GT(paused, 0.5 * 8 * r.observed_s() * 7 / 8);  // ~7/8 of the run each (recorder_test.cpp's closed form)
  EXPECT_TRUE(find_storms(r).empty());
}

}  // namespace
}  // namespace podnet::study
