// Clos families: counts derived from first principles (arithmetic in comments).
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <regex>
#include <set>

#include <deque>

#include "core/error.hpp"
#include "topology/bom.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::topology {
namespace {

using namespace podnet::topology::testing;

// Longest shortest path, in switch-to-switch links, between any two leaves.
int switch_diameter(const Topology& t) { return bfs_diameter(t, tier(t, 1), NodeKind::Switch); }

TEST(FatTree, KaryCounts) {
  // k-ary fat-tree: k^3/4 hosts, k pods of k/2 edge + k/2 aggregation, (k/2)^2 cores = 5k^2/4 switches.
  for (int k : {4, 8, 48}) {
    Hardware hw = hw_with(1, 1, k);
    Topology t = build_with("fat_tree", {{"k", std::to_string(k)}}, hw);
    const int64_t hosts = static_cast<int64_t>(k) * k * k / 4;
    EXPECT_EQ(static_cast<int64_t>(t.nics.size()), hosts) << k;
    EXPECT_EQ(count_tier(t, 1), k * k / 2) << k;
    EXPECT_EQ(count_tier(t, 2), k * k / 2) << k;
    EXPECT_EQ(count_tier(t, 3), k * k / 4) << k;
    EXPECT_EQ(count_tier(t, 1) + count_tier(t, 2) + count_tier(t, 3), 5 * k * k / 4) << k;
    // every switch uses exactly its k ports
    for (const auto& n : t.nodes)
      if (n.kind == NodeKind::Switch) {
        ASSERT_EQ(n.ports, k) << n.name;
      }
    // non-blocking 3-tier: one link per host per tier
    EXPECT_EQ(count_class(t, "nic-leaf"), hosts);
    EXPECT_EQ(count_class(t, "leaf-spine"), hosts);
    EXPECT_EQ(count_class(t, "spine-core"), hosts);
    EXPECT_EQ(t.facts.diameter_hops, 4);
    if (k <= 8) {
      EXPECT_EQ(switch_diameter(t), 4);
    }
  }
}

TEST(FatTree, LeafSpine8k) {
  // 128-port leaves, 64 down / 64 up, rail-optimized: a group = 64 servers x 8 rails = 512 GPUs on 8 leaves.
  // 8192 GPUs = 1024 servers = 16 groups = 128 leaves; each leaf one link to each of 64 spines (128 ports each).
  Hardware hw = hw_with(8, 8, 128);
  Topology t = build_with("fat_tree", {{"gpus", "8192"}, {"tiers", "2"}, {"rail_optimized", "true"}}, hw);
  EXPECT_EQ(t.gpus.size(), 8192u);
  EXPECT_EQ(count_tier(t, 1), 128);
  EXPECT_EQ(count_tier(t, 2), 64);
  EXPECT_EQ(t.groups, 16);
  EXPECT_EQ(count_class(t, "leaf-spine"), 128 * 64);
  int64_t group0 = 0;
  for (NodeId g : t.gpus) group0 += t.nodes[g].group == 0;
  EXPECT_EQ(group0, 512);
  // 2-tier limit: 128 leaves per spine / 8 leaves per group = 16 groups x 512 = 8192.
  EXPECT_EQ(t.facts.max_gpus, 8192);
  EXPECT_EQ(t.facts.diameter_hops, 2);
  EXPECT_EQ(switch_diameter(t), 2);
  // bisection: 8192 NICs x 400G / 2 (non-blocking)
  EXPECT_DOUBLE_EQ(t.facts.bisection_bps, 8192 * 400e9 / 2);
}

TEST(RailClos, TwoTier16kWith64PortSwitches) {
  // 64-port switches: leaf 32 down / 32 up; a rail's spine has 64 ports -> 64 leaves per rail;
  // 64 leaves x 32 GPUs x 8 rails = 16384 GPUs.
  Hardware hw = hw_with(8, 8, 64);
  Topology t = build_with("rail_clos", {{"gpus", "16384"}, {"tiers", "2"}}, hw);
  EXPECT_EQ(t.facts.max_gpus, 16384);
  EXPECT_EQ(count_tier(t, 1), 64 * 8);
  // per rail: 64 leaves x 32 uplinks = 2048 ports / 64 = 32 spines, 8 rails -> 256
  EXPECT_EQ(count_tier(t, 2), 256);
  for (const auto& n : t.nodes)
    if (n.kind == NodeKind::Switch) {
      ASSERT_EQ(n.ports, 64) << n.name;
    }
  // a rail's leaves connect only to that rail's spines
  for (const auto& l : t.links) {
    if (t.link_classes[l.cls] != "leaf-spine") continue;
    ASSERT_EQ(t.nodes[l.a].rail, t.nodes[l.b].rail);
  }
  // one more server does not fit in 2 tiers
  EXPECT_THROW(build_with("rail_clos", {{"gpus", "16392"}, {"tiers", "2"}}, hw), ParamError);
  // tiers: auto takes the fewest that fit: 2 up to 16,384 GPUs, 3 past them
  EXPECT_EQ(build_with("rail_clos", {{"gpus", "16384"}, {"tiers", "auto"}}, hw).switch_tiers(), 2);
  EXPECT_EQ(build_with("rail_clos", {{"gpus", "16392"}, {"tiers", "auto"}}, hw).switch_tiers(), 3);
}

TEST(RailClos, Aipod16kSuperSpine) {
  // 128-port: group = 64 servers x 8 rails = 512 GPUs; 16384 GPUs = 32 groups; 16 groups per pod -> 2 pods.
  // per (pod, rail): 16 leaves x 64 uplinks; spine has 64 down -> 4 parallel links, 16 spines.
  // spines: 2 pods x 8 rails x 16 = 256; super-spine planes: 16, each joins 16 spines x 64 up = 1024 ports
  // -> 8 super-spines of 128 ports (8 parallel links each) -> 128 super-spines.
  Hardware hw = hw_with(8, 8, 128);
  Topology t = build_with("rail_clos", {{"gpus", "16384"}, {"tiers", "3"}, {"groups_per_pod", "16"}}, hw);
  EXPECT_EQ(count_tier(t, 1), 256);
  EXPECT_EQ(count_tier(t, 2), 256);
  EXPECT_EQ(count_tier(t, 3), 128);
  EXPECT_EQ(t.pods, 2);
  // non-blocking: 16384 links per tier
  EXPECT_EQ(count_class(t, "nic-leaf"), 16384);
  EXPECT_EQ(count_class(t, "leaf-spine"), 16384);
  EXPECT_EQ(count_class(t, "spine-super_spine"), 16384);
  for (const auto& n : t.nodes)
    if (n.kind == NodeKind::Switch) {
      ASSERT_EQ(n.ports, 128) << n.name;
    }
  EXPECT_EQ(t.facts.diameter_hops, 4);
  // 3-tier limit with groups_per_pod 16 (pods grow by 16 groups): 128 / 8 rails = 16 pods x 16 groups x 512 GPUs =
  // 131,072 (topology.gpus 135,168 needs 17 pods and is refused); it said 524,288, the spines' own bound of 64
  // groups a pod, which only a larger groups_per_pod reaches.
  EXPECT_EQ(t.facts.max_gpus, 131072);
  // Without groups_per_pod the pods take what a spine reaches: 16 pods x 64 groups x 512 GPUs = 524,288.
  EXPECT_EQ(build_with("rail_clos", {{"gpus", "16384"}, {"tiers", "3"}}, hw).facts.max_gpus, 524288);
  // A partly filled pod says that its spine layer is built whole: 2,048 GPUs are 4 of the 16 groups of pod 0;
  // a spine has 64 down-ports (1:1 of 128) and uses 4 groups x 1 leaf of its rail x 4 links = 16 of them.
  const Topology part = build_with("rail_clos", {{"gpus", "2048"}, {"tiers", "3"}, {"groups_per_pod", "16"}}, hw);
  bool said = false;
  for (const auto& note : part.facts.notes)
    said = said || note.find("pod 0 holds 4 of the 16 groups a pod takes: its spines and their super_spine links "
                             "are built for 16, so each spine there uses 16 of its 64 down-ports and cables all 64 "
                             "up") != std::string::npos;
  EXPECT_TRUE(said);
  // The way to fill every pod counts the pods built, and suggests only what the super-spines join (128 / 8
  // rails = 16 pods). 12,800 GPUs = 25 groups: 2 pods of 16 now; 25 / 5 = 5 pods of 5 fills them (it said "the 1
  // now": 25 groups over the 64 a spine reaches). 20,992 GPUs = 41 groups (prime): only 41 pods of 1 fill them,
  // more than 16.
  const auto note_of = [&](const char* gpus) {
    const Topology x = build_with("rail_clos", {{"gpus", gpus}, {"tiers", "3"}, {"groups_per_pod", "16"}}, hw);
    for (const auto& n : x.facts.notes)
      if (n.find("a pod takes") != std::string::npos) return n;
    return std::string();
  };
  EXPECT_NE(note_of("12800").find("topology.groups_per_pod = 5 divides the 25 groups and fills every pod (5 pods: "
                                  "more than the 2 now, so more switches)"),
            std::string::npos)
      << note_of("12800");
  EXPECT_NE(note_of("20992").find("no topology.groups_per_pod up to 64 divides the 41 groups into at most 16 pods, "
                                  "so no value fills every pod"),
            std::string::npos)
      << note_of("20992");
  Bom b = compute_bom(t, hw);
  EXPECT_EQ(b.switches_total, 640);
  EXPECT_EQ(b.links_total, 3 * 16384);
}

TEST(RailClos, PrimeUplinkCountLeavesAFewPortsIdleInsteadOfFourTimesTheSpines) {
  // aipod-16k at 2:1 on 128-port switches: a leaf has floor(128 x 2/3) = 85 down, 43 up ports. A group is 85
  // servers x 8 rails = 680 GPUs; 16384 / 680 = 24.1 -> 25 groups of 8 leaves = 200 leaves; 16 groups per pod ->
  // 2 pods; a spine domain (pod, rail) has 16 leaves and a spine 64 down-ports: at most 64 / 16 = 4 links per
  // leaf. 43 is prime: spreading every uplink evenly means 1 link to each of 43 spines per domain, each using 16
  // of its 64 down-ports (2 x 8 x 43 = 688 spines). Cabling 40 uplinks (3 idle: 7 % <= 10 %) gives 4 links to
  // each of 10 spines per domain: 2 pods x 8 rails x 10 = 160 spines, every down-port used.
  Hardware hw = hw_with(8, 8, 128);
  Topology t = build_with("rail_clos",
                          {{"gpus", "16384"}, {"tiers", "3"}, {"groups_per_pod", "16"}, {"oversubscription", "2:1"}},
                          hw);
  EXPECT_EQ(count_tier(t, 1), 200);
  EXPECT_EQ(count_tier(t, 2), 160);
  EXPECT_EQ(count_class(t, "leaf-spine"), 200 * 40);
  // Spines 64 up: 16 domains share each plane; at most 128 / 16 = 8 links per super-spine, 64 / 8 = 8
  // super-spines per plane, 10 planes (one per spine index): 80.
  EXPECT_EQ(count_tier(t, 3), 80);
  ASSERT_FALSE(t.facts.oversubscription.empty());
  EXPECT_DOUBLE_EQ(t.facts.oversubscription[0].second, 85.0 / 40.0);
  // The cabled uplinks set the bisection: 8,000 x 400 Gb/s / 2.
  EXPECT_DOUBLE_EQ(t.facts.bisection_bps, 8000 * 400e9 / 2);
}

TEST(RailClos, Grows131kThenRefusesBeyondLimit) {
  Hardware hw = hw_with(8, 8, 128);
  // 131072 GPUs = 256 groups / 16 per pod = 16 pods; 16 x 8 rails = 128 spines per plane = radix: fits.
  Topology t = build_with("rail_clos", {{"gpus", "131072"}, {"tiers", "3"}, {"groups_per_pod", "16"}}, hw);
  EXPECT_EQ(t.gpus.size(), 131072u);
  EXPECT_EQ(t.pods, 16);
  // 17 pods would need 136 > 128 spines per plane.
  try {
    build_with("rail_clos", {{"gpus", std::to_string(131072 + 512)}, {"tiers", "3"}, {"groups_per_pod", "16"}}, hw);
    FAIL();
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "topology.gpus");
    // The bound of the pods asked for first (16 pods x 16 groups x 512 = 131,072), then what a larger
    // groups_per_pod reaches (64 groups: 524,288); it gave only the latter, above the refused 131,584.
    EXPECT_NE(std::string(e.what()).find("with topology.groups_per_pod = 16 it reaches 131,072 GPUs (16 pods x 16 "
                                         "groups x 512 GPUs); the most a 3-tier rail_clos of radix-128 switches "
                                         "reaches is 524,288"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("expected at most the first"), std::string::npos) << e.what();
  }
}

TEST(RailClos, AutoTiersAddsSuperSpine) {
  Hardware hw = hw_with(8, 8, 64);
  // 2-tier max with 64-port switches is 16384 (above); 32768 needs a third tier.
  Topology t = build_with("rail_clos", {{"gpus", "32768"}}, hw);
  EXPECT_EQ(t.switch_tiers(), 3);
}

TEST(FatTree, FourTiersAtRadixFourIsTheFourLevelFatTree) {
  // The L-level fat tree of k-port switches has 2(k/2)^L hosts and (2L-1)(k/2)^(L-1) switches: k = 4, L = 4
  // gives 32 hosts and 56 switches. podnet's sizing: a leaf has 2 down / 2 up (2 one-NIC servers), a spine 2
  // down so a pod is 2 leaves, a super-spine 2 down so a zone is 2 pods, a core 4 ports so 4 zones; 3 tiers
  // reach only 4 pods x 2 leaves x 2 hosts = 16, so `auto` takes the fourth.
  Hardware hw = hw_with(1, 1, 4);
  Topology t = build_with("fat_tree", {{"gpus", "32"}}, hw);
  ASSERT_EQ(t.switch_tiers(), 4);
  EXPECT_EQ(t.tier_names, (std::vector<std::string>{"", "leaf", "spine", "super_spine", "core"}));
  EXPECT_EQ(t.pods, 8);
  EXPECT_EQ(t.zones, 4);
  // 16 leaves; 8 pods x 2 spines (each leaf's 2 uplinks, one to each); per zone 2 planes x 2 super-spines
  // (each spine's 2 uplinks, one to each of its plane) = 4, x 4 zones; 4 core planes x 2 cores (each
  // super-spine's 2 uplinks over 4 zones x r <= 4 ports: r = 1, 2 cores).
  EXPECT_EQ(count_tier(t, 1), 16);
  EXPECT_EQ(count_tier(t, 2), 16);
  EXPECT_EQ(count_tier(t, 3), 16);
  EXPECT_EQ(count_tier(t, 4), 8);
  EXPECT_EQ(count_tier(t, 1) + count_tier(t, 2) + count_tier(t, 3) + count_tier(t, 4), 7 * 8);
  for (const char* cls : {"nic-leaf", "leaf-spine", "spine-super_spine", "super_spine-core"})
    EXPECT_EQ(count_class(t, cls), 32) << cls;  // one link per host per tier: non-blocking
  for (const auto& n : t.nodes)
    if (n.kind == NodeKind::Switch) {
      ASSERT_EQ(n.ports, 4) << n.name;
    }
  EXPECT_EQ(t.facts.diameter_hops, 6);
  EXPECT_EQ(switch_diameter(t), 6);
  EXPECT_EQ(t.facts.max_gpus, 32);
  EXPECT_DOUBLE_EQ(t.facts.bisection_bps, 32 * hw.port_speed.bps / 2);
  ASSERT_EQ(t.facts.oversubscription.size(), 3u);
  EXPECT_EQ(t.facts.oversubscription[2].first, "super_spine");
  // Zones: a host's, its leaf's, its spine's and its super-spines' are pod / 2; the cores have none.
  for (const auto& n : t.nodes) {
    if (n.kind == NodeKind::Switch && n.tier == 4) EXPECT_EQ(n.zone, kNone) << n.name;
    else if (n.kind == NodeKind::Switch && n.tier == 3) EXPECT_GE(n.zone, 0) << n.name;
    else EXPECT_EQ(n.zone, n.pod / 2) << n.name;
  }
  // One host more needs a fifth zone: refused, naming the 32.
  try {
    build_with("fat_tree", {{"gpus", "34"}}, hw);
    FAIL();
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "topology.gpus");
    EXPECT_NE(std::string(e.what()).find("needs 5 zones of 2 pods, more than the 4 ports of a core switch; the most "
                                         "a 4-tier fat_tree of radix-4 switches reaches with these pods is 32 GPUs"),
              std::string::npos)
        << e.what();
  }
}

TEST(FatTree, KaryRefusesOtherTiersInsteadOfIgnoringThem) {
  // topology.k builds 3 tiers; a 4 given beside it was silently dropped. 4 tiers of radix 8: 2 (8/2)^4 = 512.
  try {
    build_with("fat_tree", {{"k", "8"}, {"tiers", "4"}}, hw_with(1, 1, 8));
    FAIL();
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "topology.tiers");
    EXPECT_NE(std::string(e.what()).find("4 tiers of radix-8 switches reach 512 hosts"), std::string::npos) << e.what();
  }
  EXPECT_EQ(build_with("fat_tree", {{"k", "8"}, {"tiers", "3"}}, hw_with(1, 1, 8)).switch_tiers(), 3);
}

TEST(RailClos, FourTiersJoinZonesOfPodsThroughCores) {
  // 2 GPUs and 2 NICs (rails) a server, radix 8: a group is 4 servers (8 GPUs) on 2 rail leaves; a spine's 4
  // down-ports take 4 groups' leaves of its rail, so a pod is 32 GPUs in 2 rail domains; 3 tiers reach
  // 8 / 2 = 4 pods (128 GPUs). 256 GPUs: 8 pods; a super-spine's 4 down-ports take 2 pods x 2 domains, so
  // 4 zones of 2 pods.
  Hardware hw = hw_with(2, 2, 8);
  Topology t = build_with("rail_clos", {{"gpus", "256"}}, hw);
  ASSERT_EQ(t.switch_tiers(), 4);
  EXPECT_EQ(t.zones, 4);
  // leaves 32 groups x 2 = 64; a domain's 4 leaves each reach 4 spines once: 16 domains x 4 = 64; a zone's 4
  // domains' spine s reach 4 super-spines once: 4 zones x 4 planes x 4 = 64; each super-spine's 4 uplinks
  // over 4 zones (r <= 8 / 4 = 2): 2 links to each of 2 cores, 16 planes x 2 = 32 cores.
  EXPECT_EQ(count_tier(t, 1), 64);
  EXPECT_EQ(count_tier(t, 2), 64);
  EXPECT_EQ(count_tier(t, 3), 64);
  EXPECT_EQ(count_tier(t, 4), 32);
  for (const char* cls : {"nic-leaf", "leaf-spine", "spine-super_spine", "super_spine-core"})
    EXPECT_EQ(count_class(t, cls), 256) << cls;
  // 8 zones of 2 pods of 4 groups of 8 GPUs
  EXPECT_EQ(t.facts.max_gpus, 8 * 2 * 4 * 8);
  for (const auto& l : t.links)
    if (t.link_classes[l.cls] == "super_spine-core") {
      EXPECT_FLOAT_EQ(l.length_m, 500.0f);  // cabling.super_spine_to_core
    }
  // Explicit pods per zone: 1 makes 8 zones; 3 needs 3 pods x 2 domains = 6 of a super-spine's 4 down-ports.
  EXPECT_EQ(build_with("rail_clos", {{"gpus", "256"}, {"pods_per_zone", "1"}}, hw).zones, 8);
  try {
    build_with("rail_clos", {{"gpus", "256"}, {"pods_per_zone", "3"}}, hw);
    FAIL();
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "topology.pods_per_zone");
  }
  // Pinned at 3 tiers the same fabric is refused, pointing at the fourth.
  try {
    build_with("rail_clos", {{"gpus", "256"}, {"tiers", "3"}}, hw);
    FAIL();
  } catch (const ParamError& e) {
    EXPECT_NE(std::string(e.what()).find("or topology.tiers: 4 (or auto)"), std::string::npos) << e.what();
  }
  // Four tiers where everything fits one zone: refused (the cores would carry nothing).
  try {
    build_with("rail_clos", {{"gpus", "32"}, {"tiers", "4"}}, hw);
    FAIL();
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "topology.tiers");
    EXPECT_NE(std::string(e.what()).find("in one zone"), std::string::npos) << e.what();
  }
}

TEST(RailClos, AnOversubscribedSuperSpineSpreadsItsPrimeUplinksOverFewCores) {
  // Radix 128, 8 rails, one 512-GPU group a pod; a 2:1 super-spine has 85 down / 43 up ports, so a zone is
  // 85 / 8 = 10 pods; 20,480 GPUs = 40 pods = 4 zones. A leaf's 64 uplinks all go to one spine per rail
  // (64 parallel links, S = 1), a spine's 64 to the 64 super-spines of its plane in its zone (80 domains:
  // 1 link each). Each super-spine's 43 uplinks reach 4 zones' worth of a 128-port core (at most 32 links
  // each): 43 is prime, and one link to each of 43 cores would use 4 of every core's 128 ports (2,752 cores
  // for 256 super-spines). Cabling 42 (1 idle, 2 %) as 21 links to each of 2 cores: 128 cores.
  Hardware hw = hw_with(8, 8, 128);
  Topology t =
      build_with("rail_clos",
                 {{"gpus", "20480"}, {"tiers", "4"}, {"groups_per_pod", "1"}, {"super_spine_oversubscription", "2:1"}},
                 hw);
  ASSERT_EQ(t.zones, 4);
  EXPECT_EQ(count_tier(t, 3), 4 * 64);
  EXPECT_EQ(count_tier(t, 4), 64 * 2);
  EXPECT_EQ(count_class(t, "super_spine-core"), 4 * 64 * 42);
  ASSERT_EQ(t.facts.oversubscription.size(), 3u);
  EXPECT_DOUBLE_EQ(t.facts.oversubscription[2].second, 85.0 / 42.0);
}

TEST(RailClos, BadServerShape) {
  Hardware hw = hw_with(7, 7, 128);
  // 7 GPUs per server on an 8-rail fabric
  try {
    build_with("rail_clos", {{"gpus", "700"}, {"rails", "8"}}, hw);
    FAIL();
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "topology.rails");
  }
  Hardware hw8 = hw_with(8, 8, 128);
  EXPECT_THROW(build_with("rail_clos", {{"gpus", "1001"}}, hw8), ParamError);
}

TEST(FatTree, Oversubscribed) {
  // 3:1 on a 64-port leaf: 48 down / 16 up. ToR attachment, 8 NICs per server -> 6 servers per leaf.
  Hardware hw = hw_with(8, 8, 64);
  Topology t = build_with("fat_tree", {{"gpus", "480"}, {"oversubscription", "3:1"}}, hw);
  // 480 GPUs = 60 servers = 10 leaves; 2 tiers; spines: 16 uplinks, 10 leaves x p <= 64 -> p = 4 (largest divisor of 16
  // <= 6), 4 spines.
  EXPECT_EQ(count_tier(t, 1), 10);
  EXPECT_EQ(count_tier(t, 2), 4);
  EXPECT_EQ(count_class(t, "leaf-spine"), 10 * 16);
  // bisection: NIC side 480 x 400G = 192T; leaf uplinks 160 x 400G = 64T -> 32T
  EXPECT_DOUBLE_EQ(t.facts.bisection_bps, 160 * 400e9 / 2);
  ASSERT_FALSE(t.facts.oversubscription.empty());
  EXPECT_DOUBLE_EQ(t.facts.oversubscription[0].second, 3.0);
}

TEST(Tree3, ThreeTiersOversubscribed) {
  Hardware hw = hw_with(8, 8, 64);
  Topology t = build_with("tree3", {{"gpus", "4096"}}, hw);
  EXPECT_EQ(t.switch_tiers(), 3);
  EXPECT_EQ(t.tier_names[1], "access");
  // access 48 down / 16 up -> 6 servers (48 GPUs) per access switch; 4096 / 8 = 512 servers -> 86 access switches
  EXPECT_EQ(count_tier(t, 1), 86);
}

TEST(Tree3, EveryCoreJoinsPods) {
  // 1,024 GPUs fit in one pod of radix-128 switches; the third tier joins pods, so the groups are split over two
  // and each core reaches one aggregation switch of each pod. Before, one pod was built and each core hung off
  // a single aggregation switch by 32 links, carrying nothing (and the bisection was counted from them).
  Hardware hw = hw_with(8, 8, 128);
  const Topology t = build_with("tree3", {{"gpus", "1024"}}, hw);
  ASSERT_EQ(t.switch_tiers(), 3);
  int64_t cores = 0;
  for (NodeId c = 0; c < static_cast<NodeId>(t.nodes.size()); ++c) {
    if (t.nodes[c].kind != NodeKind::Switch || t.nodes[c].tier != 3) continue;
    ++cores;
    std::set<int32_t> pods;
    auto [b, e] = t.incident(c);
    for (auto it = b; it != e; ++it) pods.insert(t.nodes[t.other_end(*it, c)].pod);
    EXPECT_GE(pods.size(), 2u) << t.nodes[c].name;
  }
  EXPECT_GT(cores, 0);
  // Three tiers with every group in one pod on request: refused at the key that asked for it.
  try {
    build_with("fat_tree", {{"gpus", "1024"}, {"tiers", "3"}, {"groups_per_pod", "64"}}, hw);
    ADD_FAILURE() << "accepted";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "topology.groups_per_pod");
    EXPECT_NE(std::string(e.what()).find("its switches would carry no traffic"), std::string::npos) << e.what();
  }
}

TEST(RailClos, NicCablesFollowTheRackLayout) {
  // aipod-16k's shape: 2,048 servers of 8 GPUs and 8 NICs, radix-128 rail leaves at 1:1 (64 servers a group),
  // 40 kW racks of 10.2 kW servers (3 a rack). Group 0's 64 servers sit in racks 0..21 (63 / 3); its leaves stand
  // in a network rack between the middle rack m = (0 + 21) / 2 = 10 and rack 11, so rack r is m - r + 1 racks
  // away up to m and r - m after it. A NIC cable is 3 m (cabling.server_to_leaf) to the leaf's rack's neighbours
  // (1 away), else 3 m + 0.6 m (cabling.rack_width) for each rack beyond:
  //   server 0 (rack 0, 11 away): 3 + 10 x 0.6 = 9 m, optical (> 3 m copper reach);
  //   server 27 (rack 9, 2 away): 3.6 m, optical; servers 30 (rack 10) and 35 (rack 11), 1 away: 3 m, copper;
  //   server 36 (rack 12, 2 away): 3.6 m; server 63 (rack 21, 11 away): 9 m.
  // Group 1 (servers 64..127, racks 21..42) has its network rack after rack 31: server 64 (rack 21) is 11 away, 9 m.
  // Racks m and m + 1 hold 6 of a group's servers, so 58 servers x 8 NICs = 464 cables a group go farther, x 32
  // groups = 14,848 of 16,384, all optical, up to 11 racks (9 m) away; the note says so.
  Hardware hw = hw_with(8, 8, 128);
  const Topology t = build_with("rail_clos", {{"gpus", "16384"}}, hw);
  std::map<int32_t, std::pair<double, Media>> server_cable;  // server -> its NIC cables' length and media
  int64_t optical = 0;
  for (const auto& l : t.links) {
    if (t.link_classes[l.cls] != "nic-leaf") continue;
    const Node& a = t.nodes[l.a];
    const Node& nic = a.kind == NodeKind::Nic ? a : t.nodes[l.b];
    ASSERT_EQ(nic.kind, NodeKind::Nic);
    auto [it, fresh] = server_cable.emplace(nic.server, std::make_pair(static_cast<double>(l.length_m), l.media));
    if (!fresh) {
      EXPECT_EQ(it->second.first, static_cast<double>(l.length_m)) << "server " << nic.server;  // one length a server
    }
    optical += l.media == Media::Optical;
  }
  EXPECT_EQ(optical, 14848);
  const auto expect_cable = [&](int32_t server, double metres, Media media) {
    EXPECT_NEAR(server_cable.at(server).first, metres, 1e-5) << "server " << server;
    EXPECT_EQ(server_cable.at(server).second, media) << "server " << server;
  };
  expect_cable(0, 9, Media::Optical);
  expect_cable(27, 3.6, Media::Optical);
  expect_cable(30, 3, Media::Copper);
  expect_cable(35, 3, Media::Copper);
  expect_cable(36, 3.6, Media::Optical);
  expect_cable(63, 9, Media::Optical);
  expect_cable(64, 9, Media::Optical);
  std::string note;
  for (const auto& n : t.facts.notes)
    if (n.find("racks away") != std::string::npos) note = n;
  EXPECT_NE(note.find("up to 11 racks away (3 servers a rack, cabling.rack_width 0.6 m a rack); 14,848 of the "
                      "16,384 NIC cables run past the racks beside its own, up to 9 m; 14,848 of the 16,384 are "
                      "optical"),
            std::string::npos)
      << note;
  // Without the layout (rack_width 0) every NIC cable is server_to_leaf: 3 m copper.
  hw.rack_width_m = 0;
  const Topology flat = build_with("rail_clos", {{"gpus", "16384"}}, hw);
  for (const auto& l : flat.links)
    if (flat.link_classes[l.cls] == "nic-leaf") {
      ASSERT_EQ(l.length_m, 3.0f);
      ASSERT_EQ(l.media, Media::Copper);
    }
}

TEST(FatTree, TorNicCablesFollowTheRackLayout) {
  // ToR attachment (every NIC of a server on one leaf), 8 GPUs and 8 NICs a server, 3 servers a 40 kW rack, radix
  // 128, 192 GPUs = 24 servers; a leaf stands in the middle rack m of its servers' racks, a NIC cable is 3 m to m
  // and the racks beside it, + 0.6 m for each rack beyond.
  //   1:1: 64 down ports / 8 NICs = 8 servers a leaf. Servers 0-7 in racks 0-2 (m = 1): all within one rack.
  //        Servers 8-15 in racks 2-5 (m = 3): server 15 in rack 5 is 2 away, 3.6 m: 8 optical cables. Servers
  //        16-23 in racks 5-7 (m = 6): within one. So 8 of 192 optical.
  //   3:1: 96 down ports / 8 = 12 servers a leaf. Servers 0-11 in racks 0-3 (m = 1): rack 3 (servers 9-11) is 2
  //        away; servers 12-23 in racks 4-7 (m = 5): rack 7 (servers 21-23). So 2 x 3 x 8 = 48 optical.
  Hardware hw = hw_with(8, 8, 128);
  const auto optical_nic_cables = [&](const char* oversubscription) {
    const Topology t =
        build_with("fat_tree", {{"gpus", "192"}, {"tiers", "2"}, {"oversubscription", oversubscription}}, hw);
    int64_t optical = 0;
    for (const auto& l : t.links)
      if (t.link_classes[l.cls] == "nic-leaf" && l.media == Media::Optical) {
        EXPECT_NEAR(l.length_m, 3.6, 1e-5);
        ++optical;
      }
    return optical;
  };
  EXPECT_EQ(optical_nic_cables("1:1"), 8);
  EXPECT_EQ(optical_nic_cables("3:1"), 48);
}

TEST(Topology, LabelsAndNames) {
  Hardware hw = hw_with(8, 8, 128);
  Topology t = build_with("rail_clos", {{"gpus", "1024"}}, hw);
  // GPU 517 is on server 64 (517 / 8), local 5, rail 5, group 1 (64 servers per group).
  const Node& g = t.nodes[t.gpus[517]];
  EXPECT_EQ(g.server, 64);
  EXPECT_EQ(g.local, 5);
  EXPECT_EQ(g.rail, 5);
  EXPECT_EQ(g.group, 1);
  EXPECT_EQ(t.device_name(t.gpus[517]), "gpu-node-064");
  // Appended after text already there, as exports write them: the server's name padded to 3 digits (128
  // servers), the NIC's port by its GPU, a switch's port 1-based.
  std::string s = "x ";
  t.append_device_name(s, t.gpu_nic[517]);
  s += ':';
  t.append_port_name(s, t.gpu_nic[517], 0);
  EXPECT_EQ(s, "x gpu-node-064:gpu5_eth");
  EXPECT_EQ(server_name(17, 2048), "gpu-node-0017");  // 2,048 servers: 4 digits
  EXPECT_EQ(server_name(17, 100000), "gpu-node-00017");
  const Node& nic = t.nodes[t.gpu_nic[517]];
  EXPECT_EQ(nic.rail, 5);
  // the NIC's leaf is the rail-5 leaf of group 1
  auto [b, e] = t.incident(t.gpu_nic[517]);
  bool found = false;
  for (auto it = b; it != e; ++it) {
    NodeId o = t.other_end(*it, t.gpu_nic[517]);
    if (t.nodes[o].kind == NodeKind::Switch) {
      EXPECT_EQ(t.nodes[o].name, "su001-leaf-r5");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(Topology, SwitchNamesAreHostnames) {
  // A switch's name becomes its hostname in the config plan and its device name in NetBox: RFC 1123 section
  // 2.1 allows letters, digits and hyphens, 1 to 63 characters, no hyphen first or last. The super-spine
  // tier is named super_spine: its switches were super_spine-000-000 until this was checked.
  const std::regex label("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?");
  Hardware hw = hw_with(8, 8, 128);
  const std::vector<Topology> ts = {
      build_with("rail_clos", {{"gpus", "16384"}, {"tiers", "3"}, {"groups_per_pod", "16"}}, hw),
      build_with("fat_tree", {{"k", "8"}}, hw_with(1, 1, 8)),
      build_with("tree3", {{"gpus", "4096"}}, hw_with(8, 8, 64)),
  };
  int checked = 0;
  for (const Topology& t : ts)
    for (const Node& n : t.nodes)
      if (n.kind == NodeKind::Switch) {
        EXPECT_TRUE(std::regex_match(n.name, label)) << n.name;
        ++checked;
      }
  // 640 (the 3-tier rail Clos above) + 5 k^2 / 4 = 80 (k = 8) + at least the 86 access switches of the tree
  EXPECT_GT(checked, 640 + 80 + 86);
}

TEST(Bom, NetworkRacksPackTheSwitchesByPowerAndSpace) {
  // aipod-16k's Clos (RailClos.Aipod16kSuperSpine): 256 leaves, 256 spines, 128 super-spines, in that node
  // order; switches of 2,000 W, 12 W a transceiver, racks of 40 kW. A leaf terminates 64 optical uplinks and
  // 58 optical server links (RailClos.NicCablesFollowTheRackLayout: 6 of its 64 servers are within copper
  // reach): 2,000 + 122 x 12 = 3,464 W. A spine or super-spine terminates 128 optical links: 3,536 W, 11 a rack
  // (11 x 3,536 = 38,896; 12 x = 42,432 > 40 kW). A rail group's 8 leaves stand in a rack of their own in the
  // middle of the group's row (27,712 W): 32 racks. Then 3 spines join the last of them (27,712 + 3 x 3,536 =
  // 38,320; a 4th would be 41,856); 253 spines = 23 racks of 11 (the last at 38,896 W: no super-spine fits);
  // 128 super-spines = 11 racks of 11 + 7. 32 + 23 + 12 = 67 network racks. (Until 2026-11, with every server
  // link 3 m copper and leaves packed 14 a rack across groups, 54; the formula before that, ceil(total / 40 kW),
  // gave 52 and placed no switch.)
  Hardware hw = hw_with(8, 8, 128);
  hw.switch_power_w = 2000;
  hw.optic_power_w = 12;
  hw.rack_power_w = 40000;
  const Topology t = build_with("rail_clos", {{"gpus", "16384"}, {"tiers", "3"}, {"groups_per_pod", "16"}}, hw);
  const std::vector<int32_t> rack = network_racks(t, hw);
  const Bom b = compute_bom(t, hw);
  EXPECT_EQ(b.network_racks, 67);
  std::map<int32_t, std::array<int, 4>> per_rack;  // rack -> switches per tier
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    if (t.nodes[i].kind != NodeKind::Switch) {
      EXPECT_EQ(rack[i], kNone);
      continue;
    }
    ASSERT_NE(rack[i], kNone) << t.nodes[i].name;
    ++per_rack[rack[i] - t.racks][t.nodes[i].tier];
  }
  ASSERT_EQ(per_rack.size(), 67u);
  EXPECT_EQ(per_rack[0], (std::array<int, 4>{0, 8, 0, 0}));
  EXPECT_EQ(per_rack[31], (std::array<int, 4>{0, 8, 3, 0}));
  EXPECT_EQ(per_rack[32], (std::array<int, 4>{0, 0, 11, 0}));
  EXPECT_EQ(per_rack[54], (std::array<int, 4>{0, 0, 11, 0}));
  EXPECT_EQ(per_rack[55], (std::array<int, 4>{0, 0, 0, 11}));
  EXPECT_EQ(per_rack[66], (std::array<int, 4>{0, 0, 0, 7}));
}

TEST(RailClos, AThirdTierOverOnePodThatTwoTiersWouldReachIsSaid) {
  // aipod-16k's layout resized to 4,096 GPUs: 8 groups of 512 in one pod, which 2 tiers of radix-128 switches
  // reach (128 groups, 65,536 GPUs), so the third tier is said; at 16,384 GPUs (two pods) it joins pods and is not.
  const Hardware hw = hw_with(8, 8, 128);
  const auto said = [&](const char* gpus) {
    const Topology t = build_with("rail_clos", {{"gpus", gpus}, {"tiers", "3"}, {"groups_per_pod", "16"}}, hw);
    for (const auto& n : t.facts.notes)
      if (n.find("fit 2 tiers") != std::string::npos) return n;
    return std::string();
  };
  EXPECT_EQ(said("4096"),
            "topology.tiers = 3, but 4,096 GPUs fit 2 tiers of these radix-128 switches (up to 65,536): the third tier "
            "adds switches, optics and a hop (topology.tiers: 2, or auto, builds the 2-tier design)");
  EXPECT_EQ(said("16384"), "");
}

TEST(FatTree, ThirdTierKeysOnATwoTierDesignAreSaidUnused) {
  // A 2-tier leaf-spine has no pods and its spines' ports all face down: spine_oversubscription and
  // groups_per_pod change nothing, and the design says so (the capex and the iteration had stayed the same
  // without a word).
  const Hardware hw = hw_with(8, 8, 128);
  const Topology t =
      build_with("fat_tree",
                 {{"gpus", "1024"}, {"tiers", "2"}, {"spine_oversubscription", "2:1"}, {"groups_per_pod", "4"}}, hw);
  bool said = false;
  for (const auto& n : t.facts.notes)
    said = said || n ==
                       "topology.spine_oversubscription and topology.groups_per_pod shape a third tier; this design "
                       "has 2 tiers, so they are unused (topology.tiers: 3 adds it; topology.oversubscription sets the "
                       "leaves' down:up ports)";
  EXPECT_TRUE(said);
  for (const auto& n : build_with("fat_tree", {{"gpus", "1024"}, {"tiers", "2"}}, hw).facts.notes)
    EXPECT_EQ(n.find("third tier;"), std::string::npos) << n;
}

}  // namespace
}  // namespace podnet::topology
