// Random failures drawn from the risk model (draw.hpp): which components,
// how many, when, and as which engine events.
#include "reliability/draw.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "topology/test_util.hpp"

namespace podnet::reliability {
namespace {

using namespace podnet::literals;
using topology::testing::hw_with;

// 2-tier fat-tree of radix-16 switches, 8 GPUs and 8 NICs per server; 64 GPUs.
topology::Topology fabric() {
  return topology::build_with("fat_tree", {{"gpus", "64"}, {"tiers", "2"}}, hw_with(8, 8, 16));
}

std::vector<int32_t> ranks(int32_t from, int32_t to) {
  std::vector<int32_t> r;
  for (int32_t g = from; g < to; ++g) r.push_back(g);
  return r;
}

int count_prefix(const std::vector<engine::FailureEvent>& evs, const std::string& prefix) {
  return static_cast<int>(
      std::count_if(evs.begin(), evs.end(), [&](const auto& e) { return e.what.rfind(prefix, 0) == 0; }));
}

TEST(Draw, ClassesAreDrawnInProportionToTheirFailureRates) {
  // A class of n components failing at λ each causes n·λ / Σ n_j·λ_j of the
  // failures. With K = 20,000 draws, the number from the compute classes
  // (GPU, software, host) is binomial(K, p): within 5 sigma = 5 sqrt(K p (1-p)).
  const auto t = fabric();
  const Config cfg = default_config();
  const Inventory inv = count_inventory_of(t, ranks(0, 64), true);
  double total = 0, compute = 0;
  for (const auto& c : inv.classes) {
    total += static_cast<double>(c.count) * cfg.rate(c.part);
    if (c.role == Role::Compute) compute += static_cast<double>(c.count) * cfg.rate(c.part);
  }
  // 64 GPUs at 1/79,230 h and 1/337,042 h (software), 8 hosts at 1/57,700 h:
  // 64/79230 + 64/337042 + 8/57700 = 8.078e-4 + 1.899e-4 + 1.386e-4 = 1.136e-3 per hour,
  // against 64 NICs, the links and switches of the fabric.
  EXPECT_NEAR(compute, 64 / 79230.26 + 64 / 337042.3 + 8 / 57700.2, 1e-6);
  const double p = compute / total;
  DrawSpec spec;
  spec.count = 20000;
  spec.until = 1000_ms;
  Rng rng(7);
  const auto evs = draw_failures(t, inv, cfg, spec, rng);
  ASSERT_EQ(evs.size(), 20000u);
  int stops = 0;
  for (const auto& e : evs) stops += e.action == engine::FailureAction::Stop;
  const double k = 20000, sigma = std::sqrt(k * p * (1 - p));
  EXPECT_NEAR(stops, k * p, 5 * sigma);
  // GPU vs software among the per-GPU stops: 79230 : 337042 in rates' inverse, so
  // GPU share = (1/79230) / (1/79230 + 1/337042) = 0.8097.
  const int gpu = count_prefix(evs, "random GPU failure"), sw = count_prefix(evs, "random software failure");
  const double q = (1 / 79230.26) / (1 / 79230.26 + 1 / 337042.3), m = gpu + sw;
  EXPECT_NEAR(gpu, m * q, 5 * std::sqrt(m * q * (1 - q)));
}

TEST(Draw, PoissonCountHasTheModelsMeanTimesScale) {
  // Only GPUs: Λ = 64 / 79,230.26 h per hour. Over a 1 s window at scale s the
  // expected count is Λ·s / 3600; s = 20 · 3600 · 79230.26 / 64 makes it 20.
  // The mean of 400 independent draws is within 5 standard errors, 5 sqrt(20/400) = 1.12.
  const auto t = fabric();
  const Inventory inv = count_inventory_of(t, ranks(0, 64), true);
  DrawSpec spec;
  spec.scale = 20 * 3600 * 79230.26 / 64;
  spec.until = 1000_ms;
  spec.parts = {Part::Gpu};
  double sum = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    Rng rng(seed);
    const auto evs = draw_failures(t, inv, default_config(), spec, rng);
    sum += static_cast<double>(evs.size());
    for (const auto& e : evs) {
      EXPECT_EQ(e.action, engine::FailureAction::Stop);
      EXPECT_GE(e.at, Time());
      EXPECT_LT(e.at, 1000_ms);
    }
  }
  EXPECT_NEAR(sum / 400, 20.0, 1.12);
}

TEST(Draw, EventsNameOnlyTheJobsComponentsAndMapToEngineActions) {
  // A job on GPUs 8..15 (server 1) depends on its 8 NICs, their 8 links and leaves, and the fabric above.
  const auto t = fabric();
  const std::vector<int32_t> job = ranks(8, 16);
  const Inventory inv = count_inventory_of(t, job, true);
  DrawSpec spec;
  spec.count = 3000;
  spec.from = 2_ms;
  spec.until = 5_ms;
  Rng rng(3);
  const auto evs = draw_failures(t, inv, default_config(), spec, rng);
  std::set<std::string> kinds;
  for (size_t i = 0; i < evs.size(); ++i) {
    const auto& e = evs[i];
    EXPECT_GE(e.at, 2_ms);
    EXPECT_LT(e.at, 5_ms);
    if (i > 0) {
      EXPECT_LE(evs[i - 1].at, e.at);  // sorted
    }
    if (e.action == engine::FailureAction::Stop) {
      if (e.gpu >= 0) {
        EXPECT_TRUE(e.gpu >= 8 && e.gpu < 16) << e.what;
      }
      EXPECT_TRUE(e.links.empty());
      kinds.insert(e.gpu >= 0 ? "gpu" : "host");
      continue;
    }
    ASSERT_EQ(e.action, engine::FailureAction::Down) << e.what;
    ASSERT_FALSE(e.links.empty()) << e.what;
    if (e.what.rfind("random switch failure", 0) == 0) {
      // every network link of one switch
      const topology::NodeId sw = t.links[e.links[0]].a;
      const topology::NodeId other = t.links[e.links[0]].b;
      int64_t at_a = 0, at_b = 0;
      for (auto l : e.links) {
        at_a += t.links[l].a == sw || t.links[l].b == sw;
        at_b += t.links[l].a == other || t.links[l].b == other;
      }
      const bool all_at_one = at_a == static_cast<int64_t>(e.links.size()) ||
                              at_b == static_cast<int64_t>(e.links.size());
      EXPECT_TRUE(all_at_one) << e.what;
      kinds.insert("switch");
    } else if (e.what.rfind("random NIC failure", 0) == 0) {
      ASSERT_EQ(e.links.size(), 1u);  // one network link per NIC here
      const topology::NodeId nic = t.nodes[t.links[e.links[0]].a].kind == topology::NodeKind::Nic
                                       ? t.links[e.links[0]].a
                                       : t.links[e.links[0]].b;
      EXPECT_EQ(t.nodes[nic].server, 1) << e.what;
      kinds.insert("nic");
    } else {
      ASSERT_EQ(e.links.size(), 1u) << e.what;  // a cable or an optic: its link
      kinds.insert("link");
    }
  }
  // 3,000 draws reach every kind: the rarest here, hosts, have p ~ 1/(57,700 Σ) of a few percent.
  EXPECT_EQ(kinds, (std::set<std::string>{"gpu", "host", "link", "nic", "switch"}));
}

TEST(Draw, SameSeedSameDrawOtherSeedOtherDraw) {
  const auto t = fabric();
  const Inventory inv = count_inventory_of(t, ranks(0, 64), true);
  DrawSpec spec;
  spec.count = 50;
  spec.until = 10_ms;
  auto draw = [&](uint64_t seed) {
    Rng rng = Rng(seed).stream("failures[0]");
    std::vector<std::pair<int64_t, std::string>> out;
    for (const auto& e : draw_failures(t, inv, default_config(), spec, rng)) out.emplace_back(e.at.ps, e.what);
    return out;
  };
  EXPECT_EQ(draw(1), draw(1));
  EXPECT_NE(draw(1), draw(2));
}

TEST(Draw, RefusesAFloodAndAnEmptyChoice) {
  const auto t = fabric();
  const Inventory inv = count_inventory_of(t, ranks(0, 64), true);
  Rng rng(1);
  DrawSpec spec;
  spec.until = 1000_ms;
  // 64 GPUs at 1/79,230 h, scale 1e12 over 1 s: 64e12 / 79230 / 3600 = 2.2e5 > kMaxDrawn = 1e5.
  spec.scale = 1e12;
  spec.parts = {Part::Gpu};
  try {
    draw_failures(t, inv, default_config(), spec, rng);
    FAIL() << "expected a ParamError";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "scale");
  }
  Config never = default_config();
  never.set_rate(Part::Gpu, 0);  // "0FIT"
  spec.scale = 1;
  try {
    draw_failures(t, inv, never, spec, rng);
    FAIL() << "expected a ParamError";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "parts");
  }
}

}  // namespace
}  // namespace podnet::reliability
