// Closed forms of the risk model; expected values derived in the comments.
#include "reliability/risk.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "reliability/checkpoint.hpp"

namespace podnet::reliability {
namespace {

Inventory inventory(std::vector<ComponentClass> classes) {
  Inventory inv;
  inv.classes = std::move(classes);
  return inv;
}

double parsed(const char* text) {
  std::string expected;
  return parse_rate(text, expected).value();
}

const ClassRisk& find(const Risk& r, const std::string& key) {
  for (const auto& c : r.classes)
    if (c.component.key == key) return c;
  throw std::runtime_error("no class " + key);
}

TEST(Risk, ThousandGpusAt999MonthlyAvailability) {
  // Per GPU, P(fail in a month) = 0.001, so P(at least one of 1,000 fails) = 1 − 0.999^1000 = 0.63230;
  // the exponential form with λ·T = 0.001 per GPU gives 1 − e^{−1} = 0.63212. Both ≈ 63 %.
  Config cfg;
  cfg.set_rate(Part::Gpu, parsed("99.9%"));
  cfg.duration_hours = kHoursPerMonth;
  Risk r = assess(inventory({{"gpu", "GPUs", Part::Gpu, Role::Compute, 1000}}), cfg);
  EXPECT_NEAR(r.probability, 1 - std::pow(0.999, 1000), 1e-12);
  EXPECT_NEAR(r.probability, 0.632, 5e-4);
  EXPECT_NEAR(r.probability, 1 - std::exp(-1.0), 2e-4);
  // Expected failures 1000·(−ln 0.999) = 1.0005.
  EXPECT_NEAR(r.expected_interruptions, -1000 * std::log(0.999), 1e-12);
  EXPECT_DOUBLE_EQ(find(r, "gpu").share, 1.0);
}

TEST(Risk, HundredThousandOpticsAt1e7Hours) {
  // Λ = 1e5 / 1e7 h = 0.01 per hour: one failure every 100 h = 4.17 days.
  Config cfg;
  cfg.set_rate(Part::Optic, parsed("1e7h"));
  cfg.duration_hours = 100;
  // On NIC-to-leaf links (no spare rail) every failure interrupts.
  Risk r = assess(inventory({{"optic:nic-leaf", "optics", Part::Optic, Role::Rail, 100000}}), cfg);
  EXPECT_NEAR(r.interrupt_rate, 0.01, 1e-15);
  EXPECT_NEAR(r.mtbi_hours, 100.0, 1e-9);
  EXPECT_NEAR(r.mtbi_hours / 24, 4.17, 5e-3);
  EXPECT_NEAR(r.expected_interruptions, 1.0, 1e-12);
  // Above the leaf the same failures are routed around: absorbed, 1 expected in 100 h, each stalling 1 ms
  // (network.local_repair).
  Risk f = assess(inventory({{"optic:leaf-spine", "optics", Part::Optic, Role::FabricLink, 100000}}), cfg);
  EXPECT_EQ(f.interrupt_rate, 0.0);
  EXPECT_TRUE(std::isinf(f.mtbi_hours));
  EXPECT_EQ(f.probability, 0.0);
  EXPECT_NEAR(f.absorbed_failures, 1.0, 1e-12);
  EXPECT_NEAR(f.stall_hours * 3600, 0.001, 1e-12);
}

// A Llama 3-like job: 16,384 GPUs in 2,048 servers, a NIC and a copper access link per GPU.
Inventory llama_like() {
  return inventory({{"gpu", "GPUs", Part::Gpu, Role::Compute, 16384},
                    {"software", "software", Part::Software, Role::Compute, 16384},
                    {"host", "hosts", Part::Host, Role::Compute, 2048},
                    {"nic", "NICs", Part::Nic, Role::Rail, 16384},
                    {"copper_cable:nic-leaf", "cables", Part::CopperCable, Role::Rail, 16384},
                    {"optic:leaf-spine", "optics", Part::Optic, Role::FabricLink, 32768},
                    // Mid-tier spines (a super-spine above): routed around after convergence.
                    {"switch:spine", "spines", Part::Switch, Role::FabricSwitch, 256, {}, false}});
}

TEST(Risk, DefaultsReproduceLlama3) {
  // Over 54 days the defaults give 268 + 63 + 46 + 7 + 35 = 419 interruptions (MTBI 3.09 h), the
  // scenario text of each default rounded to the hour (relative error < 1e-5).
  Config cfg = config_from(defaults_of(reliability_params()));
  cfg.duration_hours = Llama3::kHours;
  Risk r = assess(llama_like(), cfg);
  EXPECT_NEAR(r.expected_interruptions, 419, 0.01);
  EXPECT_NEAR(r.mtbi_hours, 1296.0 / 419, 1e-4);
  EXPECT_NEAR(find(r, "gpu").expected_interruptions, 268, 0.01);
  EXPECT_NEAR(find(r, "nic").share, 7.0 / 419, 1e-6);
  // Network share (switch/cable + NIC) = 42/419 = 10.0 %.
  EXPECT_NEAR(find(r, "nic").share + find(r, "copper_cable:nic-leaf").share, 0.100, 5e-4);
  // Fabric optics and spines are absorbed: 32,768 × 1,296 / 1e6 = 42.5 optic failures, 256 × 1,296 / 250,000
  // = 1.33 spine failures, none interrupting.
  EXPECT_FALSE(find(r, "optic:leaf-spine").interrupts);
  EXPECT_NEAR(find(r, "optic:leaf-spine").expected_failures, 32768 * 1296 / 1e6, 1e-6);
  EXPECT_NEAR(r.absorbed_failures, 32768 * 1296 / 1e6 + 256 * 1296 / 250000.0, 1e-6);
  double shares = 0;
  for (const auto& c : r.classes) shares += c.share;
  EXPECT_NEAR(shares, 1.0, 1e-12);
}

TEST(Risk, SpareRailRemovesNicClassInterruptions) {
  Config cfg = default_config();
  Risk plain = assess(llama_like(), cfg);
  cfg.spare_rail = true;  // rail_failover 2 s < 30 s timeout
  Risk spare = assess(llama_like(), cfg);
  EXPECT_TRUE(find(plain, "nic").interrupts);
  EXPECT_FALSE(find(spare, "nic").interrupts);
  EXPECT_FALSE(find(spare, "copper_cable:nic-leaf").interrupts);
  EXPECT_EQ(find(spare, "nic").share, 0.0);
  EXPECT_EQ(find(spare, "nic").expected_interruptions, 0.0);
  // Λ drops by exactly the NIC and access-cable rates: 16,384/3,033,381 + 16,384/606,676 per hour.
  const double removed = find(plain, "nic").class_rate + find(plain, "copper_cable:nic-leaf").class_rate;
  EXPECT_NEAR(plain.interrupt_rate - spare.interrupt_rate, removed, 1e-12);
  EXPECT_NEAR(removed * 1296, 42, 1e-6);  // the 7 + 35 network interruptions of Llama 3
  // A failover slower than the timeout interrupts again.
  cfg.rail_failover_s = 31;
  EXPECT_TRUE(find(assess(llama_like(), cfg), "nic").interrupts);
}

TEST(Risk, FabricFailuresInterruptOnlyWhenRecoveryExceedsTheTimeout) {
  Config cfg = default_config();
  EXPECT_FALSE(find(assess(llama_like(), cfg), "switch:spine").interrupts);  // 5 s < 30 s
  cfg.switch_recovery_s = 45;                                                // slow re-convergence
  Risk r = assess(llama_like(), cfg);
  EXPECT_TRUE(find(r, "switch:spine").interrupts);
  EXPECT_NEAR(find(r, "switch:spine").class_rate, 256 / 250000.0, 1e-15);
  cfg.switch_recovery_s = 30;  // equal to the timeout: not longer, absorbed
  EXPECT_FALSE(find(assess(llama_like(), cfg), "switch:spine").interrupts);
  cfg.link_recovery_s = 60;
  EXPECT_TRUE(find(assess(llama_like(), cfg), "optic:leaf-spine").interrupts);
}

TEST(Risk, AdviceUsesTheJobMtbi) {
  // MTBI 3.09 h, δ = 5 min, R = 10 min: Daly τ = √(2·5·185.6)·(1 + ⅓√(5/371.2) + (1/9)(5/371.2)) − 5
  // = 43.08·1.0402 − 5 = 39.8 min; Young √(2·5·185.6) = 43.1 min.
  Config cfg = default_config();
  Risk r = assess(llama_like(), cfg);
  CheckpointAdvice a = advise(r, cfg);
  EXPECT_NEAR(a.interval_hours * 60, 39.8, 0.05);
  EXPECT_NEAR(a.young_interval_hours * 60, 43.1, 0.05);
  EXPECT_NEAR(a.goodput, goodput(a.interval_hours, 5.0 / 60, 10.0 / 60, r.mtbi_hours), 1e-15);
  EXPECT_GT(a.goodput, a.goodput_young - 1e-4);  // Daly is at least as good as Young here
  EXPECT_NEAR(a.days_to_train, 30 / a.goodput, 1e-9);
  // Nothing interrupts: no checkpoints needed, goodput 1.
  Risk none = assess(inventory({}), cfg);
  CheckpointAdvice b = advise(none, cfg);
  EXPECT_TRUE(std::isinf(b.interval_hours));
  EXPECT_DOUBLE_EQ(b.goodput, 1.0);
  EXPECT_DOUBLE_EQ(b.days_to_train, 30.0);
}

TEST(Risk, GoodputAtTheJobsOwnInterval) {
  // reliability.checkpoint_interval = 60 min on the job above (MTBI 185.6 min, δ = 5 min, R = 10 min):
  // goodput = τ / (M e^(R/M) (e^((τ+δ)/M) − 1)) = 60 / (185.6 · e^0.05388 · (e^0.35022 − 1))
  //         = 60 / (185.6 · 1.05536 · 0.41940) = 60 / 82.150 = 0.7304; days to train 30 / 0.7304 = 41.07.
  // Longer than Daly's 39.8 min, so below Daly's goodput; not given, nothing is reported.
  Config cfg = default_config();
  cfg.checkpoint_interval_hours = 1.0;
  Risk r = assess(llama_like(), cfg);
  CheckpointAdvice a = advise(r, cfg);
  EXPECT_DOUBLE_EQ(a.chosen_interval_hours, 1.0);
  EXPECT_NEAR(a.goodput_chosen, 0.7304, 5e-4);
  EXPECT_NEAR(a.days_to_train_chosen, 30 / a.goodput_chosen, 1e-9);
  EXPECT_LT(a.goodput_chosen, a.goodput);
  EXPECT_EQ(advise(r, default_config()).chosen_interval_hours, 0.0);
}

TEST(Risk, ConfigValidationNamesTheKey) {
  Params p = defaults_of(reliability_params());
  p.set("gpu_mtbf", std::string("5 hours"), "5 hours");
  try {
    config_from(p);
    FAIL();
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "reliability.gpu_mtbf");
    EXPECT_NE(std::string(e.what()).find("FIT"), std::string::npos) << e.what();
  }
  Params q = defaults_of(reliability_params());
  q.set("checkpoint_cost", Time(0), "0s");
  try {
    config_from(q);
    FAIL();
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "reliability.checkpoint_cost");
  }
  // Defaults: every preset, 30 days, 5 / 10 min.
  Config c = config_from(defaults_of(reliability_params()));
  EXPECT_NEAR(c.rate(Part::Optic), 1e-6, 1e-18);
  EXPECT_DOUBLE_EQ(c.duration_hours, 720);
  EXPECT_NEAR(c.checkpoint_cost_hours * 60, 5, 1e-12);
  EXPECT_NEAR(c.restart_cost_hours * 60, 10, 1e-12);
  EXPECT_DOUBLE_EQ(c.collective_timeout_s, 30);
  EXPECT_FALSE(c.spare_rail);
}

}  // namespace
}  // namespace podnet::reliability
