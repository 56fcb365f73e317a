// Cost model: totals of a k = 4 fat-tree priced by hand (arithmetic in comments).
#include "topology/cost.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "topology/bom.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::topology {
namespace {

using namespace podnet::topology::testing;

// k = 4 fat-tree, one 400G NIC per 1-GPU server: 16 NICs; 8 leaves, 8 spines, 4 cores of radix 4 (20 switches);
// 16 links per tier: nic-leaf 3 m (copper, <= 3 m), leaf-spine 30 m (optical), spine-core 150 m (optical).
Topology k4(Hardware& hw) {
  hw = hw_with(1, 1, 4);
  hw.spine_to_super_m = 150;
  return build_with("fat_tree", {{"k", "4"}}, hw);
}

const CostItem* find(const Cost& c, const std::string& group, const std::string& part) {
  for (const auto& it : c.items)
    if (it.group == group && it.part == part) return &it;
  return nullptr;
}

TEST(Cost, DefaultsPriceAk4FatTreeByHand) {
  Hardware hw;
  const Topology t = k4(hw);
  const Bom bom = compute_bom(t, hw);
  const CostModel m = cost_from(defaults_of(cost_params()));
  const Cost c = compute_cost(t, hw, bom, m);
  // switches: 20 x 4 ports x 550 = 44,000 (leaf 8 x 2,200 = 17,600; spine 17,600; core 4 x 2,200 = 8,800)
  EXPECT_DOUBLE_EQ(c.switches_usd, 44000);
  ASSERT_NE(find(c, "leaf", "switch"), nullptr);
  EXPECT_EQ(find(c, "leaf", "switch")->count, 8);
  EXPECT_DOUBLE_EQ(find(c, "leaf", "switch")->unit_usd, 2200);
  EXPECT_DOUBLE_EQ(find(c, "core", "switch")->total_usd, 8800);
  // NICs: 16 x 1,500 = 24,000
  EXPECT_DOUBLE_EQ(c.nics_usd, 24000);
  // nic-leaf: 16 DACs x 100 = 1,600
  EXPECT_DOUBLE_EQ(c.cables_usd, 1600);
  EXPECT_EQ(find(c, "nic-leaf", "dac")->count, 16);
  // leaf-spine 30 m <= 100 m: 32 SR x 500 = 16,000; spine-core 150 m in (100, 500]: 32 DR x 700 = 22,400
  EXPECT_EQ(find(c, "leaf-spine", "transceiver_sr")->count, 32);
  EXPECT_EQ(find(c, "spine-core", "transceiver_dr")->count, 32);
  EXPECT_DOUBLE_EQ(c.transceivers_usd, 16000 + 22400);
  // fibre: 16 x 30 m + 16 x 150 m = 2,880 m x 2 = 5,760
  EXPECT_EQ(find(c, "spine-core", "fibre_m")->count, 2400);
  EXPECT_DOUBLE_EQ(c.fibre_usd, 5760);
  // capex: 44,000 + 24,000 + 1,600 + 38,400 + 5,760 = 113,760
  EXPECT_DOUBLE_EQ(c.capex_usd, 113760);
  // by tier: leaf-spine = 16,000 + 960 = 16,960; spine-core = 22,400 + 4,800 = 27,200
  ASSERT_EQ(c.by_group.size(), 7U);  // leaf, spine, core, server, nic-leaf, leaf-spine, spine-core
  EXPECT_EQ(c.by_group[0].first, "leaf");
  EXPECT_EQ(c.by_group[3].first, "server");
  EXPECT_DOUBLE_EQ(c.by_group[5].second, 16960);
  EXPECT_DOUBLE_EQ(c.by_group[6].second, 27200);
  double sum = 0;
  for (const auto& [g, usd] : c.by_group) sum += usd;
  EXPECT_DOUBLE_EQ(sum, c.capex_usd);
  // energy: 16 servers x 10.2 kW + 20 switches x 2 kW + 64 transceivers x 12 W = 203.968 kW;
  // x 1.3 PUE x 8,766 h = 2,324,378.49 kWh; x 0.08 USD = 185,950.28 USD per year
  EXPECT_NEAR(c.energy_kwh_per_year, 203.968 * 1.3 * 8766, 1e-6);
  EXPECT_NEAR(c.energy_usd_per_year, 185950.28, 0.01);
  // network: (40 + 0.768) kW x 1.3 x 8,766 x 0.08 = 37,166.72
  EXPECT_NEAR(c.network_energy_usd_per_year, 37166.72, 0.01);
}

TEST(Cost, AocReplacesTransceiversUpToItsReach) {
  Hardware hw;
  const Topology t = k4(hw);
  Params p = defaults_of(cost_params());
  p.set("aoc_max_length", 50.0, "50m");
  const Cost c = compute_cost(t, hw, compute_bom(t, hw), cost_from(p));
  // leaf-spine (30 m) becomes 16 AOCs x 600 = 9,600 (no SR, no fibre); spine-core (150 m) stays DR + fibre
  EXPECT_EQ(find(c, "leaf-spine", "aoc")->count, 16);
  EXPECT_EQ(find(c, "leaf-spine", "transceiver_sr"), nullptr);
  EXPECT_EQ(find(c, "leaf-spine", "fibre_m"), nullptr);
  EXPECT_DOUBLE_EQ(c.cables_usd, 1600 + 9600);
  // 113,760 - 16,960 + 9,600 = 106,400
  EXPECT_DOUBLE_EQ(c.capex_usd, 106400);
}

TEST(Cost, PricesScaleWithSpeed) {
  CostModel m;
  // linear (exponent 1): a 200G NIC costs half the 400G price, an 800G port twice
  EXPECT_DOUBLE_EQ(m.unit(1500, Bandwidth(200e9)), 750);
  EXPECT_DOUBLE_EQ(m.unit(550, Bandwidth(800e9)), 1100);
  // exponent 0.5: 1,500 x (800/400)^0.5 = 2,121.32
  m.speed_exponent = 0.5;
  EXPECT_NEAR(m.unit(1500, Bandwidth(800e9)), 2121.3203, 1e-4);
  // a 200G fat-tree's switches: 20 x 4 x 550 x 0.5 = 22,000
  Hardware hw;
  Topology t = k4(hw);
  hw.port_speed = Bandwidth(200e9);
  const Cost c = compute_cost(t, hw, compute_bom(t, hw), CostModel{});
  EXPECT_DOUBLE_EQ(c.switches_usd, 22000);
}

TEST(Cost, ContradictingReachesAreRefused) {
  Params p = defaults_of(cost_params());
  p.set("sr_max_length", 600.0, "600m");
  try {
    (void)cost_from(p);
    FAIL() << "expected a ParamError";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "cost.sr_max_length");
    EXPECT_NE(std::string(e.what()).find("dr_max_length"), std::string::npos);
  }
}

}  // namespace
}  // namespace podnet::topology
