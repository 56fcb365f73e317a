// Cost model: totals of a k = 4 fat-tree priced by hand (arithmetic in comments).
#include "topology/cost.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "topology/bom.hpp"
#include "topology/builders.hpp"
#include "topology/power.hpp"
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
  // energy: 16 servers x 10.2 kW + 20 radix-4 switches of 1.6 Tb/s x 2 kW x (1.6 / 51.2)^0.14 (1,231.144 W:
  // topology/power.hpp) + 64 transceivers x 12 W (400G) = 163.2 + 24.62289 + 0.768 = 188.59089 kW;
  // x 1.3 PUE x 8,766 h = 2,149,144.04 kWh; x 0.08 USD = 171,931.52 USD per year (185,950.28 while every switch
  // drew 2 kW whatever its capacity)
  EXPECT_NEAR(c.energy_kwh_per_year, 2149144.04, 0.01);
  EXPECT_NEAR(c.energy_usd_per_year, 171931.52, 0.01);
  // network: (24.62289 + 0.768) kW x 1.3 x 8,766 x 0.08 = 23,147.96
  EXPECT_NEAR(c.network_energy_usd_per_year, 23147.96, 0.01);
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

// Power follows speed (topology/power.hpp): a switch's with its capacity (radix x port speed) against 51.2 Tb/s
// at exponent 0.14, a transceiver's with its link's speed against 400 Gb/s at exponent 0.83. Until 2026-12 both
// were flat, and a fabric at 800 Gb/s drew exactly the power of the same fabric at 400 Gb/s.
TEST(Cost, PowerScalesWithSpeed) {
  Hardware hw = default_hardware();  // radix 128 x 400G = 51.2 Tb/s: switch.power as given
  EXPECT_DOUBLE_EQ(switch_power(hw), 2000);
  EXPECT_DOUBLE_EQ(optic_power(hw, Bandwidth(400e9)), 12);
  hw.radix = 64;  // 25.6 Tb/s: 2,000 x 0.5^0.14 = 2,000 x 0.907519 = 1,815.04 W
  EXPECT_NEAR(switch_power(hw), 1815.04, 0.01);
  hw.radix = 128;
  hw.port_speed = Bandwidth(800e9);  // 102.4 Tb/s: 2,000 x 2^0.14 = 2,000 x 1.101905 = 2,203.81 W
  EXPECT_NEAR(switch_power(hw), 2203.81, 0.01);
  // 800G: 12 x 2^0.83 = 12 x 1.777685 = 21.332 W (NVIDIA's 800G twin-port OSFP 15-17 W against a 400G one's 9 W);
  // 200G: 12 x 0.5^0.83 = 12 x 0.562529 = 6.750 W
  EXPECT_NEAR(optic_power(hw, Bandwidth(800e9)), 21.332, 0.001);
  EXPECT_NEAR(optic_power(hw, Bandwidth(200e9)), 6.750, 0.001);

  // The k = 4 fat-tree's 32 optical links (64 transceivers) at 400 and at 800 Gb/s: optics 768 W, then
  // 64 x 21.332 = 1,365.3 W; its 20 radix-4 switches (1.6, then 3.2 Tb/s) 20 x 2,000 x (1/32)^0.14 = 24,622.9 W,
  // then 20 x 2,000 x (1/16)^0.14 = 27,132.1 W.
  Hardware h4;
  const Topology t4 = k4(h4);
  const Bom b400 = compute_bom(t4, h4);
  EXPECT_NEAR(b400.power_optics_w, 768, 1e-9);
  EXPECT_NEAR(b400.power_switches_w, 24622.9, 0.1);
  Hardware h8 = h4;
  h8.port_speed = h8.nic_speed = Bandwidth(800e9);
  const Topology t8 = build_with("fat_tree", {{"k", "4"}}, h8);
  const Bom b800 = compute_bom(t8, h8);
  EXPECT_NEAR(b800.power_optics_w, 1365.3, 0.1);
  EXPECT_NEAR(b800.power_switches_w, 27132.1, 0.1);
  EXPECT_GT(b800.power_total_w, b400.power_total_w);
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
