// Inventories counted from built fabrics; expected counts derived in the comments.
#include "reliability/inventory.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "topology/bom.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::reliability {
namespace {

using topology::build_with;
using topology::default_hardware;
using topology::Hardware;
using topology::Topology;

Topology aipod16k() {
  // examples/aipod-16k.yaml: rail_clos, 16,384 GPUs, 8 rails, 3 tiers, 16 groups per pod, 128-port switches,
  // server links by rack layout (3 m copper to the racks beside the leaves' rack, else optical: hardware.hpp),
  // 30 m leaf-spine and 100 m spine-super-spine (optical).
  return build_with("rail_clos", {{"gpus", "16384"}, {"tiers", "3"}, {"groups_per_pod", "16"}}, default_hardware());
}

// With every GPU in the job the counts are the bill of materials.
void expect_matches_bom(const Topology& t, const Hardware& hw) {
  const topology::Bom b = topology::compute_bom(t, hw);
  const Inventory inv = count_inventory(t, 0);
  EXPECT_EQ(inv.job_gpus, b.gpus);
  EXPECT_EQ(inv.servers, b.servers);
  EXPECT_EQ(inv.count("nic"), b.nics);
  EXPECT_EQ(inv.count_part(Part::Optic), b.transceivers);
  EXPECT_EQ(inv.count_part(Part::CopperCable), b.cables_copper);
  EXPECT_EQ(inv.count_part(Part::OpticalCable), b.cables_optical);
  EXPECT_EQ(inv.count_part(Part::Switch), b.switches_total);
  for (const auto& [tier, n] : b.switches) {
    int64_t counted = inv.count("switch:" + tier) + inv.count("switch:" + tier + "-transit");
    EXPECT_EQ(counted, n) << tier;
  }
}

TEST(Inventory, Aipod16kWholeFabric) {
  // 16,384 GPUs / 8 = 2,048 servers; one NIC per GPU; per tier 16,384 links (non-blocking).
  // nic-leaf: a group's 64 servers (3 a rack) have their leaves in a network rack in the middle of their row;
  // the 2 racks beside it hold 6 servers (RailClos.NicCablesFollowTheRackLayout), so 6 x 8 = 48 copper cables
  // a group, x 32 groups = 1,536, and 16,384 - 1,536 = 14,848 optical ones with 29,696 optics. leaf-spine and
  // spine-super_spine optical: 2 × 16,384 × 2 = 65,536 optics; 95,232 in all.
  // Switches: 256 leaves, 256 spines, 128 super-spines (RailClos.Aipod16kSuperSpine).
  const Topology t = aipod16k();
  const Inventory inv = count_inventory(t);
  EXPECT_EQ(inv.count("gpu"), 16384);
  EXPECT_EQ(inv.count("software"), 16384);
  EXPECT_EQ(inv.count("host"), 2048);
  EXPECT_EQ(inv.count("nic"), 16384);
  EXPECT_EQ(inv.count("copper_cable:nic-leaf"), 1536);
  EXPECT_EQ(inv.count("optical_cable:nic-leaf"), 14848);
  EXPECT_EQ(inv.count("optic:nic-leaf"), 29696);
  EXPECT_EQ(inv.count("optic:leaf-spine"), 32768);
  EXPECT_EQ(inv.count("optical_cable:leaf-spine"), 16384);
  EXPECT_EQ(inv.count("optic:spine-super_spine"), 32768);
  EXPECT_EQ(inv.count("switch:leaf"), 256);
  EXPECT_EQ(inv.count("switch:spine"), 256);
  EXPECT_EQ(inv.count("switch:super_spine"), 128);
  EXPECT_EQ(inv.count_part(Part::Optic), 95232);
  for (const auto& c : inv.classes) {
    if (c.key == "switch:leaf") {
      EXPECT_EQ(c.role, Role::Leaf);
    } else if (c.key == "copper_cable:nic-leaf" || c.key == "optical_cable:nic-leaf" || c.key == "optic:nic-leaf" ||
               c.key == "nic") {
      EXPECT_EQ(c.role, Role::Rail);
    } else if (c.key == "switch:spine" || c.key == "switch:super_spine") {
      EXPECT_EQ(c.role, Role::FabricSwitch);
    } else if (c.key == "optic:leaf-spine") {
      EXPECT_EQ(c.role, Role::FabricLink);
    }
  }
  expect_matches_bom(t, default_hardware());
}

TEST(Inventory, Aipod16kOneServerDependsOnRailsLeaves) {
  // 8 GPUs = one server: its 8 NICs go to 8 rail leaves (one per rail), each with 64 uplinks
  // (4 parallel links to each of the 16 spines of its rail in pod 0). Server 0 is in rack 0, 11 racks from
  // its leaves' network rack (after rack (0 + 21) / 2 = 10): 8 optical NIC cables, 16 optics.
  const Inventory inv = count_inventory(aipod16k(), 8);
  EXPECT_EQ(inv.servers, 1);
  EXPECT_EQ(inv.count("nic"), 8);
  EXPECT_EQ(inv.count("copper_cable:nic-leaf"), 0);
  EXPECT_EQ(inv.count("optical_cable:nic-leaf"), 8);
  EXPECT_EQ(inv.count("optic:nic-leaf"), 16);
  EXPECT_EQ(inv.count("switch:leaf"), 8);
  EXPECT_EQ(inv.count("optical_cable:leaf-spine"), 8 * 64);
  EXPECT_EQ(inv.count("switch:spine"), 8 * 16);
}

TEST(Inventory, Aipod16kOneGroup) {
  // 512 GPUs = one aggregation group: 64 servers, 512 NICs, 8 leaves (one per rail), 8 × 64 = 512
  // leaf-spine links (1,024 optics) to pod 0's 8 × 16 = 128 spines. Those spines' 64 uplinks each
  // (8,192 links) reach every super-spine plane: 128 super-spines. Other leaves are not on its paths.
  const Inventory inv = count_inventory(aipod16k(), 512);
  EXPECT_EQ(inv.job_gpus, 512);
  EXPECT_EQ(inv.fabric_gpus, 16384);
  EXPECT_EQ(inv.servers, 64);
  EXPECT_EQ(inv.count("nic"), 512);
  EXPECT_EQ(inv.count("switch:leaf"), 8);
  EXPECT_EQ(inv.count("optic:leaf-spine"), 1024);
  EXPECT_EQ(inv.count("switch:spine"), 128);
  EXPECT_EQ(inv.count("optical_cable:spine-super_spine"), 128 * 64);
  EXPECT_EQ(inv.count("switch:super_spine"), 128);
}

TEST(Inventory, OrderIsComputeRailLeafFabric) {
  const Inventory inv = count_inventory(aipod16k(), 512);
  std::vector<std::string> keys;
  for (const auto& c : inv.classes) keys.push_back(c.key);
  const std::vector<std::string> expected = {"gpu",
                                             "software",
                                             "host",
                                             "nic",
                                             "optic:nic-leaf",
                                             "copper_cable:nic-leaf",
                                             "optical_cable:nic-leaf",
                                             "switch:leaf",
                                             "optic:leaf-spine",
                                             "optical_cable:leaf-spine",
                                             "optic:spine-super_spine",
                                             "optical_cable:spine-super_spine",
                                             "switch:spine",
                                             "switch:super_spine"};
  EXPECT_EQ(keys, expected);
}

TEST(Inventory, TorusLinksAreDirect) {
  // 4x4x4 torus, 4 chips per tray, no NICs: 64 GPUs × 3 links = 192 GPU-to-GPU links, all direct,
  // no switches. Every link is inside the 4x4x4 cube (1 m): copper.
  Hardware hw = default_hardware();
  hw.gpus_per_server = 4;
  hw.nics_per_server = 0;
  hw.nvlink_domain = 4;
  const Topology t = build_with("torus", {{"dims", "[4, 4, 4]"}}, hw);
  const Inventory inv = count_inventory(t);
  EXPECT_EQ(inv.count("nic"), 0);
  EXPECT_EQ(inv.count_part(Part::Switch), 0);
  EXPECT_EQ(inv.count_part(Part::CopperCable), 192);
  for (const auto& c : inv.classes)
    if (c.part == Part::CopperCable) {
      EXPECT_EQ(c.role, Role::DirectLink);
    }
  expect_matches_bom(t, hw);
}

TEST(Inventory, DragonflyRoutersOfOtherGroupsAreTransit) {
  // (p, a, h) = (2, 4, 2): 9 groups of 4 routers, 2 terminals each (72 NIC ports = 72 GPUs, 9 servers).
  // A one-server job (8 GPUs) attaches to 4 routers; the other 32 are transit.
  Hardware hw = default_hardware();
  const Topology t = build_with("dragonfly", {{"gpus", "72"}, {"p", "2"}, {"a", "4"}, {"h", "2"}}, hw);
  const Inventory all = count_inventory(t);
  EXPECT_EQ(all.count("switch:router"), 36);
  expect_matches_bom(t, hw);
  const Inventory one = count_inventory(t, 8);
  EXPECT_EQ(one.count("switch:router"), 4);
  EXPECT_EQ(one.count("switch:router-transit"), 32);
}

TEST(Inventory, RefusesAJobLargerThanTheFabric) {
  try {
    count_inventory(aipod16k(), 16392);
    FAIL();
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "reliability.job_gpus");
    EXPECT_NE(std::string(e.what()).find("the fabric has 16,384 GPUs"), std::string::npos) << e.what();
  }
}

TEST(Inventory, FabricPartsAreRepairedByWhomTheFailureInjectionSays) {
  // The flow and packet engines repair a dead direction locally (network.local_repair) when it is an uplink
  // or has a live parallel twin, else after convergence (engine/failure_driver.cpp). 2-tier fat tree of
  // radix-8 switches, 1 GPU a server, 32 GPUs: 8 leaves of 4 hosts, 4 spines, one link from every leaf to
  // every spine. A leaf-spine link has no twin: the spine's way down to that leaf is gone until the others
  // converge (convergence); a spine is the top tier, every flow through it came up a leaf's uplink (local).
  const Topology two = build_with("fat_tree", {{"gpus", "32"}, {"tiers", "2"}}, topology::testing::hw_with(1, 1, 8));
  const Inventory a = count_inventory(two);
  bool seen_link = false, seen_spine = false;
  for (const auto& c : a.classes) {
    if (c.role == Role::FabricLink) {
      EXPECT_FALSE(c.local) << c.key;
      seen_link = true;
    }
    if (c.role == Role::FabricSwitch) {
      EXPECT_TRUE(c.local) << c.key;
      seen_spine = true;
    }
  }
  EXPECT_TRUE(seen_link);
  EXPECT_TRUE(seen_spine);
  // aipod-16k's shape: 4 parallel links from each leaf to each spine (twins: local), spines below a
  // super-spine (flows coming down through a dead spine wait for convergence), super-spines on top (local).
  const Inventory b = count_inventory(aipod16k());
  for (const auto& c : b.classes) {
    if (c.role == Role::FabricLink && c.key.find("leaf-spine") != std::string::npos) {
      EXPECT_TRUE(c.local) << c.key;
    }
    if (c.key == "switch:spine") {
      EXPECT_FALSE(c.local);
    }
    if (c.key == "switch:super_spine") {
      EXPECT_TRUE(c.local);
    }
  }
}

TEST(Inventory, AMultiPlaneNicKeepsItsOtherPlanes) {
  // A 2-tier rail-optimized fat tree of 512 GPUs whose 400G NICs are 4 planes of 100G (topology/planes.hpp):
  // a NIC's link into one plane, or one plane's leaf, leaves the NIC its 3 other planes, so both are routed
  // around (FabricLink, FabricSwitch) and only the NIC itself stops the job. Counts: 4 copies of everything.
  Hardware hw = default_hardware();
  hw.port_speed = Bandwidth(100e9);
  hw.nic_planes = 4;
  const Topology one =
      build_with("fat_tree", {{"gpus", "512"}, {"tiers", "2"}, {"rail_optimized", "true"}}, default_hardware());
  const Topology t = build_with("fat_tree", {{"gpus", "512"}, {"tiers", "2"}, {"rail_optimized", "true"}}, hw);
  const Inventory a = count_inventory(one, 0), b = count_inventory(t, 0);
  EXPECT_EQ(b.count("nic"), a.count("nic"));
  EXPECT_EQ(b.count("switch:leaf"), 4 * a.count("switch:leaf"));
  EXPECT_EQ(b.count_part(Part::Optic), 4 * a.count_part(Part::Optic));
  for (const auto& c : b.classes) {
    if (c.key == "nic") EXPECT_EQ(c.role, Role::Rail);
    else if (c.key == "switch:leaf") EXPECT_EQ(c.role, Role::FabricSwitch);
    else if (c.key.find("nic-leaf") != std::string::npos) EXPECT_EQ(c.role, Role::FabricLink) << c.key;
  }
  expect_matches_bom(t, hw);
}

}  // namespace
}  // namespace podnet::reliability
