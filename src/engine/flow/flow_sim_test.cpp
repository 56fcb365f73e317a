#include "engine/flow/flow_sim.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace podnet::engine::flow {
namespace {

using namespace podnet::literals;

struct Done {
  uint64_t tag;
  int64_t finish_ps;
  bool operator==(const Done&) const = default;
};

std::vector<Done> run(FlowSim& sim) {
  std::vector<Done> out;
  sim.run_until_idle([&](const Completion& c) { out.push_back(Done{c.tag, c.finish.ps}); });
  return out;
}

FlowSpec spec(Bytes bytes, const std::vector<Resource>& res, uint64_t tag, Time start = Time(0),
              Time latency = Time(0)) {
  FlowSpec s;
  s.bytes = bytes;
  s.resources = res;
  s.tag = tag;
  s.start = start;
  s.latency = latency;
  return s;
}

TEST(FlowSim, OneFlowOneLink) {
  // 1 MB over 100 Gb/s after a 2 us latency:
  // finish = 2 us + 1e6 * 8 / 1e11 s = 2 us + 80 us = 82 us.
  FlowSim sim;
  LinkId l = sim.add_link(100_Gbps);
  std::vector<Resource> p = {{l, 1.0}};
  FlowId f = sim.add_flow(spec(1'000'000, p, 7, Time(0), 2_us));
  EXPECT_EQ(sim.phase(f), FlowPhase::Pending);
  std::vector<Done> d = run(sim);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].tag, 7u);
  EXPECT_EQ(d[0].finish_ps, (82_us).ps);
  EXPECT_EQ(sim.now(), 82_us);
  EXPECT_EQ(sim.active_flows(), 0u);
}

TEST(FlowSim, TwoFlowsDifferentSizesOnOneLink) {
  // S1 = 1 MB, S2 = 3 MB on C = 100 Gb/s, both from t = 0. Both run at C/2
  // until flow 1 is done: t1 = S1 / (C/2) = 2 * S1 * 8 / C = 160 us. Flow 2
  // has sent S1 by then and sends S2 - S1 at C: t2 = t1 + (S2 - S1) * 8 / C
  // = (S1 + S2) * 8 / C = 320 us.
  FlowSim sim;
  LinkId l = sim.add_link(100_Gbps);
  std::vector<Resource> p = {{l, 1.0}};
  sim.add_flow(spec(1'000'000, p, 1));
  sim.add_flow(spec(3'000'000, p, 2));
  std::vector<Done> d = run(sim);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], (Done{1, (160_us).ps}));
  EXPECT_EQ(d[1], (Done{2, (320_us).ps}));
}

TEST(FlowSim, FlowArrivingMidway) {
  // A = 2 MB from t = 0 on C = 100 Gb/s; B = 1 MB starts at 100 us.
  // By 100 us A has sent 100 us * 100 Gb/s = 1e7 bits = 1.25 MB; 0.75 MB left.
  // Both at 50 Gb/s: A needs 0.75e6 * 8 / 5e10 = 120 us -> A ends at 220 us.
  // B has sent 0.75 MB by then, 0.25 MB left at 100 Gb/s: 20 us -> 240 us
  // (= 3 MB * 8 / 100 Gb/s: the link never idles).
  FlowSim sim;
  LinkId l = sim.add_link(100_Gbps);
  std::vector<Resource> p = {{l, 1.0}};
  sim.add_flow(spec(2'000'000, p, 1));
  sim.add_flow(spec(1'000'000, p, 2, 100_us));
  std::vector<Done> d = run(sim);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], (Done{1, (220_us).ps}));
  EXPECT_EQ(d[1], (Done{2, (240_us).ps}));
}

TEST(FlowSim, LinkCounters) {
  // Flows of the two-flow test: S1 = 1 MB on link a; S2 = 3 MB on links a and
  // b, b of capacity 200 Gb/s (never the bottleneck).
  // Link a: bytes = S1 + S2 = 4e6; busy 0..320 us; load = 100 Gb/s throughout
  // -> peak 1, mean 1.
  // Link b: carries flow 2 only: 50 Gb/s (util 0.25) for 160 us, then
  // 100 Gb/s (util 0.5) for 160 us: bytes 3e6, busy 320 us, peak 0.5,
  // mean (0.25 * 160 + 0.5 * 160) / 320 = 0.375.
  FlowSim sim;
  LinkId a = sim.add_link(100_Gbps);
  LinkId b = sim.add_link(200_Gbps);
  std::vector<Resource> p1 = {{a, 1.0}};
  std::vector<Resource> p2 = {{a, 1.0}, {b, 1.0}};
  sim.add_flow(spec(1'000'000, p1, 1));
  sim.add_flow(spec(3'000'000, p2, 2));
  run(sim);
  LinkStats sa = sim.link_stats(a), sb = sim.link_stats(b);
  EXPECT_NEAR(sa.bytes, 4e6, 1e-6);
  EXPECT_EQ(sa.busy, 320_us);
  EXPECT_NEAR(sa.peak_utilization, 1.0, 1e-12);
  EXPECT_NEAR(sa.mean_utilization, 1.0, 1e-12);
  EXPECT_NEAR(sb.bytes, 3e6, 1e-6);
  EXPECT_EQ(sb.busy, 320_us);
  EXPECT_NEAR(sb.peak_utilization, 0.5, 1e-12);
  EXPECT_NEAR(sb.mean_utilization, 0.375, 1e-12);
  EXPECT_EQ(sim.link_load_bps(a), 0.0);
}

TEST(FlowSim, LinkCountersWithIdleTimeAndCoefficient) {
  // A ring variable crossing link l twice (coef 2) with 1 MB per hop and a
  // 10 us latency: rate = 100 / 2 = 50 Gb/s, transmission 1e6 * 8 / 5e10 =
  // 160 us, finish 170 us. Link l carries 2 * 1 MB = 2e6 bytes, busy 160 us,
  // mean utilisation over [0, 170 us] = 160 / 170, peak 1. After a
  // further run_until(340 us) with nothing to do the mean halves: 160 / 340.
  FlowSim sim;
  LinkId l = sim.add_link(100_Gbps);
  std::vector<Resource> ring = {{l, 2.0}};
  sim.add_flow(spec(1'000'000, ring, 1, Time(0), 10_us));
  std::vector<Done> d = run(sim);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].finish_ps, (170_us).ps);
  LinkStats s = sim.link_stats(l);
  EXPECT_NEAR(s.bytes, 2e6, 1e-6);
  EXPECT_EQ(s.busy, 160_us);
  EXPECT_NEAR(s.peak_utilization, 1.0, 1e-12);
  EXPECT_NEAR(s.mean_utilization, 160.0 / 170.0, 1e-12);
  sim.run_until(340_us, [](const Completion&) {});
  EXPECT_EQ(sim.now(), 340_us);
  EXPECT_NEAR(sim.link_stats(l).mean_utilization, 160.0 / 340.0, 1e-12);
}

TEST(FlowSim, WeightedFlows) {
  // Weights 1 and 3, 1.5 MB each, on 100 Gb/s: rates 25 and 75 Gb/s.
  // Heavy flow: 1.5e6 * 8 / 7.5e10 = 160 us. Light flow has sent
  // 25e9 * 160e-6 / 8 = 0.5 MB, 1 MB left at 100 Gb/s: 80 us -> 240 us.
  FlowSim sim;
  LinkId l = sim.add_link(100_Gbps);
  std::vector<Resource> p = {{l, 1.0}};
  FlowSpec light = spec(1'500'000, p, 1);
  FlowSpec heavy = spec(1'500'000, p, 3);
  heavy.weight = 3.0;
  sim.add_flow(light);
  sim.add_flow(heavy);
  std::vector<Done> d = run(sim);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], (Done{3, (160_us).ps}));
  EXPECT_EQ(d[1], (Done{1, (240_us).ps}));
}

TEST(FlowSim, CappedFlow) {
  // 1 MB capped at 40 Gb/s next to a 1 MB uncapped flow on 100 Gb/s: rates
  // 40 and 60. Uncapped: 1e6 * 8 / 6e10 = 133.33.. us -> rounds up to the
  // picosecond: 133333334 ps. The capped one has sent 40e9 * 133.333334e-6 / 8
  // ~ 0.6667 MB, then runs alone but still at its cap: total time is
  // 1e6 * 8 / 4e10 = 200 us regardless.
  FlowSim sim;
  LinkId l = sim.add_link(100_Gbps);
  std::vector<Resource> p = {{l, 1.0}};
  FlowSpec capped = spec(1'000'000, p, 1);
  capped.cap = 40_Gbps;
  sim.add_flow(capped);
  sim.add_flow(spec(1'000'000, p, 2));
  std::vector<Done> d = run(sim);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], (Done{2, 133'333'334}));
  EXPECT_EQ(d[1], (Done{1, (200_us).ps}));
}

TEST(FlowSim, SimultaneousCompletionsComeInOneStep) {
  // 100 flows of 1000 B on 100 Gb/s all share equally and finish together at
  // 100 * 1000 * 8 / 1e11 s = 8 us, returned by a single step() after the
  // activation step at t = 0.
  FlowSim sim;
  LinkId l = sim.add_link(100_Gbps);
  std::vector<Resource> p = {{l, 1.0}};
  for (uint64_t i = 0; i < 100; ++i) sim.add_flow(spec(1000, p, i));
  EXPECT_TRUE(sim.step().empty());  // t = 0: activations only
  EXPECT_EQ(sim.now(), Time(0));
  EXPECT_EQ(sim.active_flows(), 100u);
  std::span<const Completion> c = sim.step();
  EXPECT_EQ(c.size(), 100u);
  EXPECT_EQ(sim.now(), 8_us);
  for (size_t i = 1; i < c.size(); ++i) EXPECT_LT(c[i - 1].id, c[i].id);
  EXPECT_TRUE(sim.idle());
  EXPECT_EQ(sim.stats().solves, 2u);
}

TEST(FlowSim, DagChainFromCompletionHandler) {
  // A (1 MB, link x) then, when A finishes, B (0.5 MB, link y, 1 us latency)
  // and C (0.5 MB, link y, 1 us latency). A ends at 80 us; B and C share y
  // (100 Gb/s) from 81 us: each 0.5e6 * 8 / 5e10 = 80 us -> both end at 161 us.
  FlowSim sim;
  LinkId x = sim.add_link(100_Gbps);
  LinkId y = sim.add_link(100_Gbps);
  std::vector<Resource> px = {{x, 1.0}};
  std::vector<Resource> py = {{y, 1.0}};
  sim.add_flow(spec(1'000'000, px, 1));
  std::vector<Done> d;
  sim.run_until_idle([&](const Completion& c) {
    d.push_back(Done{c.tag, c.finish.ps});
    if (c.tag == 1) {
      EXPECT_EQ(sim.phase(c.id), FlowPhase::Done);
      sim.add_flow(spec(500'000, py, 2, sim.now(), 1_us));
      sim.add_flow(spec(500'000, py, 3, sim.now(), 1_us));
    }
  });
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0], (Done{1, (80_us).ps}));
  EXPECT_EQ(d[1], (Done{2, (161_us).ps}));
  EXPECT_EQ(d[2], (Done{3, (161_us).ps}));
}

TEST(FlowSim, ZeroLatencySuccessorStartsAtTheSameTime) {
  // Chain of three 1 MB flows on one 100 Gb/s link, each started by the
  // previous one's completion with no latency: ends at 80, 160, 240 us.
  FlowSim sim;
  LinkId l = sim.add_link(100_Gbps);
  std::vector<Resource> p = {{l, 1.0}};
  sim.add_flow(spec(1'000'000, p, 0));
  std::vector<Done> d;
  sim.run_until_idle([&](const Completion& c) {
    d.push_back(Done{c.tag, c.finish.ps});
    if (c.tag < 2) sim.add_flow(spec(1'000'000, p, c.tag + 1, sim.now()));
  });
  EXPECT_EQ(d, (std::vector<Done>{{0, (80_us).ps}, {1, (160_us).ps}, {2, (240_us).ps}}));
}

TEST(FlowSim, CapacityChangeMidway) {
  // 1 MB on 100 Gb/s; at 40 us (0.5 MB sent) the link drops to 50 Gb/s:
  // 0.5e6 * 8 / 5e10 = 80 us more -> 120 us.
  FlowSim sim;
  LinkId l = sim.add_link(100_Gbps);
  std::vector<Resource> p = {{l, 1.0}};
  sim.add_flow(spec(1'000'000, p, 1));
  sim.schedule_link_capacity(40_us, l, 50_Gbps);
  std::vector<Done> d = run(sim);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].finish_ps, (120_us).ps);
  // Utilisation is 1 throughout (load follows the capacity); bytes exact.
  EXPECT_NEAR(sim.link_stats(l).mean_utilization, 1.0, 1e-12);
  EXPECT_NEAR(sim.link_stats(l).bytes, 1e6, 1e-6);
}

TEST(FlowSim, LinkStepRecordStopsAtItsCap) {
  // 1 MB and 2 MB on one 100 Gb/s link from t = 0: the link's load steps from 0 to 100 Gb/s at
  // t = 0 and back to 0 at 3 MB x 8 / 100 Gb/s = 240 us; at 160 us, when the 1 MB flow is done
  // (2 x 1 MB at 50 Gb/s each), the other takes the whole link and the load does not change.
  // So the record holds 2 steps: a cap of 2 lets the run through, a cap of 1 stops it at 240 us.
  const auto make = [](uint64_t cap) {
    FlowSimOptions o;
    o.record_link_steps = true;
    o.max_link_steps = cap;
    o.link_steps_limit = "the test's cap allows";
    return o;
  };
  FlowSim ok(make(2));
  LinkId l = ok.add_link(100_Gbps);
  std::vector<Resource> p = {{l, 1.0}};
  ok.add_flow(spec(1'000'000, p, 1));
  ok.add_flow(spec(2'000'000, p, 2));
  ASSERT_EQ(run(ok).size(), 2u);
  ASSERT_EQ(ok.link_steps().size(), 2u);
  EXPECT_EQ(ok.link_steps()[1].at.ps, (240_us).ps);

  FlowSim capped(make(1));
  l = capped.add_link(100_Gbps);
  p = {{l, 1.0}};
  capped.add_flow(spec(1'000'000, p, 1));
  capped.add_flow(spec(2'000'000, p, 2));
  try {
    run(capped);
    ADD_FAILURE() << "the record passed its cap";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("reached 1 steps"), std::string::npos) << what;
    EXPECT_NE(what.find("simulated 0.000240 s"), std::string::npos) << what;
    EXPECT_NE(what.find("the test's cap allows"), std::string::npos) << what;
  }
}

TEST(FlowSim, StalledFlowResumesAfterRepair) {
  // A 0-capacity link stalls its flow; nothing else is scheduled, so
  // run_until_idle returns at t = 0 with one stalled flow. Repairing the link
  // to 100 Gb/s at 10 us lets 1 MB through in 80 us: done at 90 us.
  FlowSim sim;
  LinkId l = sim.add_link(Bandwidth(0));
  std::vector<Resource> p = {{l, 1.0}};
  FlowId f = sim.add_flow(spec(1'000'000, p, 1));
  EXPECT_TRUE(run(sim).empty());
  EXPECT_EQ(sim.stalled_flows(), 1u);
  EXPECT_EQ(sim.phase(f), FlowPhase::Active);
  sim.schedule_link_capacity(10_us, l, 100_Gbps);
  std::vector<Done> d = run(sim);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].finish_ps, (90_us).ps);
  EXPECT_EQ(sim.stalled_flows(), 0u);
}

TEST(FlowSim, ZeroByteAndUnconstrainedFlowsFinishOnActivation) {
  // 0 bytes: done at start + latency = 5 us. No links and no cap: infinite
  // rate, done when active at 3 us + 2 us = 5 us. Both in one step.
  FlowSim sim;
  LinkId l = sim.add_link(100_Gbps);
  std::vector<Resource> p = {{l, 1.0}};
  std::vector<Resource> none;
  sim.add_flow(spec(0, p, 1, Time(0), 5_us));
  sim.add_flow(spec(1000, none, 2, 3_us, 2_us));
  std::vector<Done> d = run(sim);
  EXPECT_EQ(d, (std::vector<Done>{{1, (5_us).ps}, {2, (5_us).ps}}));
}

TEST(FlowSim, CancelFreesBandwidth) {
  // Two 1 MB flows share 100 Gb/s. At 40 us each has sent 0.25 MB; B is
  // cancelled. A's 0.75 MB at 100 Gb/s takes 60 us more -> 100 us.
  FlowSim sim;
  LinkId l = sim.add_link(100_Gbps);
  std::vector<Resource> p = {{l, 1.0}};
  sim.add_flow(spec(1'000'000, p, 1));
  FlowId b = sim.add_flow(spec(1'000'000, p, 2));
  sim.run_until(40_us, [](const Completion&) { FAIL(); });
  EXPECT_NEAR(sim.remaining_bytes(b), 750'000, 1e-6);
  sim.cancel_flow(b);
  EXPECT_EQ(sim.phase(b), FlowPhase::Cancelled);
  std::vector<Done> d = run(sim);
  EXPECT_EQ(d, (std::vector<Done>{{1, (100_us).ps}}));
  // The link carried 1 MB for A plus 0.25 MB of the cancelled B.
  EXPECT_NEAR(sim.link_stats(l).bytes, 1.25e6, 1e-6);
}

TEST(FlowSim, CancelPendingFlow) {
  // A flow cancelled before it starts never competes: the other 1 MB flow
  // keeps the whole 100 Gb/s and ends at 80 us.
  FlowSim sim;
  LinkId l = sim.add_link(100_Gbps);
  std::vector<Resource> p = {{l, 1.0}};
  sim.add_flow(spec(1'000'000, p, 1));
  FlowId late = sim.add_flow(spec(1'000'000, p, 2, 10_us));
  sim.cancel_flow(late);
  EXPECT_EQ(sim.phase(late), FlowPhase::Cancelled);
  EXPECT_EQ(run(sim), (std::vector<Done>{{1, (80_us).ps}}));
}

TEST(FlowSim, NoLinksRunsAtCap) {
  // No links, cap 10 Gb/s: 1 MB takes 1e6 * 8 / 1e10 s = 800 us.
  FlowSim sim;
  std::vector<Resource> none;
  FlowSpec s = spec(1'000'000, none, 1);
  s.cap = 10_Gbps;
  sim.add_flow(s);
  EXPECT_EQ(run(sim), (std::vector<Done>{{1, (800_us).ps}}));
}

TEST(FlowSim, ManyStaggeredArrivals) {
  // 200 flows of B = 10 kB on one 100 Gb/s link, flow i starting at
  // i * 0.4 us. One flow alone needs B * 8 / C = 0.8 us, so work arrives at
  // twice the link rate and the link never idles: the last flow ends when
  // all the work is done, 200 * B * 8 / C = 160 us (each completion is
  // rounded up by < 1 ps, so allow 200 ps). All active flows share equally,
  // so the earliest arrival always has the least left: FIFO order.
  // Every arrival changes every active flow's rate, so thousands of
  // predictions go stale (dropped on pop or compacted away).
  FlowSim sim;
  LinkId l = sim.add_link(100_Gbps);
  std::vector<Resource> p = {{l, 1.0}};
  for (uint64_t i = 0; i < 200; ++i) sim.add_flow(spec(10'000, p, i, Time(static_cast<int64_t>(i) * 400'000)));
  std::vector<Done> d = run(sim);
  ASSERT_EQ(d.size(), 200u);
  for (size_t i = 0; i < d.size(); ++i) EXPECT_EQ(d[i].tag, i);
  EXPECT_NEAR(static_cast<double>(d.back().finish_ps), 160e6, 200);
  EXPECT_GT(sim.stats().stale_dropped, 4096u);
  EXPECT_NEAR(sim.link_stats(l).bytes, 2e6, 1e-6);
  EXPECT_NEAR(static_cast<double>(sim.link_stats(l).busy.ps), 160e6, 200);
}

TEST(FlowSim, SubPicosecondRoundingAndExactBytes) {
  // 1 byte at 3 Tb/s takes 8 / 3e12 s = 2.67 ps: completion rounds up to 3 ps,
  // and the link's byte count is corrected back to exactly 1 byte.
  FlowSim sim;
  LinkId l = sim.add_link(Bandwidth(3e12));
  std::vector<Resource> p = {{l, 1.0}};
  sim.add_flow(spec(1, p, 1));
  std::vector<Done> d = run(sim);
  EXPECT_EQ(d, (std::vector<Done>{{1, 3}}));
  EXPECT_NEAR(sim.link_stats(l).bytes, 1.0, 1e-12);
}

TEST(FlowSim, QuantumRoundsCompletionsUp) {
  // Quantum 50 us. A = 1 MB and B = 1.5 MB share 100 Gb/s at 50 Gb/s each.
  // A's exact end, 1e6 * 8 / 5e10 = 160 us, rounds up to 200 us, and A keeps
  // its 50 Gb/s until then: B has sent 50e9 * 200e-6 / 8 = 1.25 MB by 200 us.
  // B alone sends the last 0.25 MB at 100 Gb/s in 20 us: exact 220 us,
  // rounded up to 250 us. The link still carries exactly 2.5 MB.
  FlowSimOptions opt;
  opt.quantum = 50_us;
  FlowSim sim(opt);
  LinkId l = sim.add_link(100_Gbps);
  std::vector<Resource> p = {{l, 1.0}};
  sim.add_flow(spec(1'000'000, p, 1));
  sim.add_flow(spec(1'500'000, p, 2));
  EXPECT_EQ(run(sim), (std::vector<Done>{{1, (200_us).ps}, {2, (250_us).ps}}));
  EXPECT_NEAR(sim.link_stats(l).bytes, 2.5e6, 1e-6);
  EXPECT_THROW(FlowSim(FlowSimOptions{Time(-1)}), Error);
}

TEST(FlowSim, RejectsBadInput) {
  FlowSim sim;
  LinkId l = sim.add_link(100_Gbps);
  std::vector<Resource> p = {{l, 1.0}};
  sim.add_flow(spec(1000, p, 1, 5_us));
  sim.run_until_idle();
  EXPECT_THROW(sim.add_flow(spec(1000, p, 2, 1_us)), Error);  // start < now
  EXPECT_THROW(sim.add_flow(spec(-1, p, 2, sim.now())), Error);
  EXPECT_THROW(sim.add_flow(spec(1000, p, 2, sim.now(), Time(-1))), Error);
  std::vector<Resource> bad = {{l + 1, 1.0}};
  EXPECT_THROW(sim.add_flow(spec(1000, bad, 2, sim.now())), Error);
  EXPECT_THROW(sim.schedule_link_capacity(Time(0), l, 1_Gbps), Error);
}

// A fixed, hand-built DAG workload: 8 nodes in a ring, links i -> i+1 of
// 100 Gb/s and a shared "spine" link of 200 Gb/s. Each node sends 4 chunks
// in sequence to its neighbour (every chunk over its ring link and the spine),
// chunk k+1 starting 0.5 us after chunk k finishes; chunk sizes differ per
// node so completions spread over many times and rates change often.
std::vector<Done> ring_workload() {
  FlowSim sim;
  const int n = 8;
  LinkId spine = kInvalidId;
  std::vector<LinkId> ring;
  for (int i = 0; i < n; ++i) ring.push_back(sim.add_link(100_Gbps));
  spine = sim.add_link(200_Gbps);
  auto chunk = [&](int node, int k, Time start) {
    std::vector<Resource> res = {{ring[static_cast<size_t>(node)], 1.0}, {spine, 1.0}};
    FlowSpec s;
    s.bytes = 100'000 * (node + 1) + 7'777 * k;
    s.start = start;
    s.latency = 500_ns;
    s.weight = 1.0 + (node % 3);
    s.resources = res;
    s.tag = static_cast<uint64_t>(node * 16 + k);
    sim.add_flow(s);
  };
  for (int i = 0; i < n; ++i) chunk(i, 0, Time(0));
  std::vector<Done> out;
  sim.run_until_idle([&](const Completion& c) {
    out.push_back(Done{c.tag, c.finish.ps});
    const int node = static_cast<int>(c.tag / 16), k = static_cast<int>(c.tag % 16);
    if (k < 3) chunk(node, k + 1, sim.now());
  });
  return out;
}

TEST(FlowSim, DeterministicAcrossRuns) {
  std::vector<Done> a = ring_workload();
  std::vector<Done> b = ring_workload();
  ASSERT_EQ(a.size(), 32u);
  EXPECT_EQ(a, b);
  // Completion times never decrease along the returned order.
  for (size_t i = 1; i < a.size(); ++i) EXPECT_LE(a[i - 1].finish_ps, a[i].finish_ps);
}

// The solver's second thread (FlowSimOptions::threads = 2; every narrow
// re-solve handed to it with parallel_min_links = 1) changes no completion:
// an all-to-all of 16 hosts behind 4 leaves and 2 uplinks each (240 flows of
// unequal sizes, each pair's next flow starting when the last ends), whose
// completions re-solve the flows they shared links with, finishes at the
// same picoseconds, flow by flow, as on one thread.
// With `private_links`, every pair also crosses a link of its own, 2-9
// Gb/s (below its share of the hosts' links for most pairs): with
// link_counters off the solver folds those into the flows' caps.
std::vector<Done> all_to_all_workload(int threads, uint64_t& parallel, bool counters = true,
                                      bool private_links = false) {
  FlowSimOptions o;
  o.threads = threads;
  o.parallel_min_links = 1;
  o.link_counters = counters;
  FlowSim sim(o);
  const int hosts = 16, per_leaf = 4;
  std::vector<LinkId> up, down, leaf_up, leaf_down;
  for (int h = 0; h < hosts; ++h) {
    up.push_back(sim.add_link(100_Gbps));
    down.push_back(sim.add_link(100_Gbps));
  }
  for (int l = 0; l < 2 * hosts / per_leaf; ++l) {  // 2 uplinks per leaf, each way
    leaf_up.push_back(sim.add_link(150_Gbps));
    leaf_down.push_back(sim.add_link(150_Gbps));
  }
  std::vector<LinkId> own;
  for (int p = 0; private_links && p < hosts * hosts; ++p)
    own.push_back(sim.add_link(Bandwidth(1e9 * static_cast<double>(2 + p % 8))));
  auto start = [&](int src, int dst, int round, Time at) {
    std::vector<Resource> res = {{up[static_cast<size_t>(src)], 1.0}, {down[static_cast<size_t>(dst)], 1.0}};
    const int ls = src / per_leaf, ld = dst / per_leaf;
    if (ls != ld) {
      const int pick = (src + dst + round) % 2;  // an ECMP-like choice of uplink
      res.push_back({leaf_up[static_cast<size_t>(2 * ls + pick)], 1.0});
      res.push_back({leaf_down[static_cast<size_t>(2 * ld + pick)], 1.0});
    }
    if (private_links) res.push_back({own[static_cast<size_t>(src * hosts + dst)], 1.0});
    FlowSpec f;
    f.bytes = 50'000 + 7'919 * ((src * 31 + dst * 17 + round * 7) % 97);
    f.start = at;
    f.latency = 200_ns;
    f.resources = res;
    f.tag = static_cast<uint64_t>((round * hosts + src) * hosts + dst);
    sim.add_flow(f);
  };
  for (int src = 0; src < hosts; ++src)
    for (int dst = 0; dst < hosts; ++dst)
      if (src != dst) start(src, dst, 0, Time(0));
  std::vector<Done> out;
  sim.run_until_idle([&](const Completion& c) {
    out.push_back(Done{c.tag, c.finish.ps});
    const int round = static_cast<int>(c.tag / (hosts * hosts));
    const int src = static_cast<int>(c.tag / hosts % hosts), dst = static_cast<int>(c.tag % hosts);
    if (round < 2) start(src, dst, round + 1, sim.now());
  });
  parallel = sim.stats().parallel_solves;
  return out;
}

TEST(FlowSim, SolverSecondThreadChangesNoCompletion) {
  uint64_t p1 = 0, p2 = 0;
  const std::vector<Done> one = all_to_all_workload(1, p1);
  const std::vector<Done> two = all_to_all_workload(2, p2);
  ASSERT_EQ(one.size(), 3u * 240u);
  EXPECT_EQ(p1, 0u);
  EXPECT_GT(p2, 10u);  // the second thread took part
  EXPECT_EQ(one, two);
}

// Without link counters the solver folds each pair's own link into its
// flow's cap; every flow finishes at the same picosecond as with the link.
// (Flows that finish at one instant may be handed over in another order:
// their predictions were made in another order.)
TEST(FlowSim, FoldingLinksThatCarryOneFlowChangesNoCompletion) {
  uint64_t p = 0;
  const std::vector<Done> kept = all_to_all_workload(1, p, true, true);
  const std::vector<Done> folded = all_to_all_workload(1, p, false, true);
  ASSERT_EQ(kept.size(), 3u * 240u);
  ASSERT_EQ(folded.size(), kept.size());
  auto by_tag = [](std::vector<Done> v) {
    std::sort(v.begin(), v.end(), [](const Done& x, const Done& y) { return x.tag < y.tag; });
    return v;
  };
  const std::vector<Done> a = by_tag(kept), b = by_tag(folded);
  for (size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ(a[i].tag, b[i].tag) << i;
    EXPECT_EQ(a[i].finish_ps, b[i].finish_ps) << "tag " << a[i].tag;
  }
  // The private links bind: without them the pairs finish elsewhere.
  EXPECT_NE(kept, all_to_all_workload(1, p, true, false));
}

// Cross-check of the event machinery (lazy settling, version stamps,
// incremental solves, departure shortcut, batching) against a deliberately
// naive reference: continuous time in double seconds, and at every event a
// fresh MaxMinSolver solved from scratch over the active flows. The workload
// is fixed (chains of transfers, each link shared in several ways, weights
// and a cap), not random. FlowSim rounds each completion up to the next
// picosecond and successors start from there, so times agree to a few ps
// per chain step: tolerance 1 ns.
struct ChainStep {
  Bytes bytes;
  std::vector<Resource> res;
  double weight;
  Bandwidth cap;
  Time latency;
};

std::vector<std::vector<ChainStep>> chain_workload(std::vector<Bandwidth>& caps) {
  caps = {100_Gbps, 100_Gbps, 100_Gbps, 100_Gbps, 200_Gbps, 150_Gbps, 40_Gbps};
  std::vector<std::vector<ChainStep>> chains;
  for (uint32_t c = 0; c < 6; ++c) {
    std::vector<ChainStep> chain;
    for (uint32_t k = 0; k < 5; ++k) {
      ChainStep st;
      st.bytes = 200'000 + 50'000 * ((c * 7 + k * 3) % 11);
      st.res = {{c % 4, 1.0}, {4, 1.0}};
      if ((c + k) % 3 == 0) st.res.push_back({5, 1.0});
      if (c == 5 && k % 2 == 1) st.res = {{6, 2.0}, {4, 1.0}};  // a ring-like coef-2 step
      st.weight = 1.0 + static_cast<double>((c + k) % 2);
      st.cap = (c == 2 && k == 1) ? 30_Gbps : kUnlimited;
      st.latency = Time(static_cast<int64_t>(300'000 + 100'000 * ((c + k) % 4)));  // 0.3 - 0.6 us
      chain.push_back(st);
    }
    chains.push_back(chain);
  }
  return chains;
}

TEST(FlowSim, MatchesNaiveReference) {
  std::vector<Bandwidth> caps;
  const auto chains = chain_workload(caps);

  // FlowSim.
  std::vector<std::vector<double>> got(chains.size());
  {
    FlowSim sim;
    for (Bandwidth c : caps) sim.add_link(c);
    auto launch = [&](size_t c, size_t k, Time start) {
      const ChainStep& st = chains[c][k];
      FlowSpec s;
      s.bytes = st.bytes;
      s.start = start;
      s.latency = st.latency;
      s.weight = st.weight;
      s.cap = st.cap;
      s.resources = st.res;
      s.tag = c * 100 + k;
      sim.add_flow(s);
    };
    for (size_t c = 0; c < chains.size(); ++c) launch(c, 0, Time(0));
    sim.run_until_idle([&](const Completion& done) {
      const size_t c = done.tag / 100, k = done.tag % 100;
      got[c].push_back(done.finish.seconds());
      if (k + 1 < chains[c].size()) launch(c, k + 1, done.finish);
    });
  }

  // Reference.
  struct Ref {
    size_t c, k;
    double active_at, remaining;
  };
  std::vector<std::vector<double>> want(chains.size());
  std::vector<Ref> live;
  for (size_t c = 0; c < chains.size(); ++c)
    live.push_back(Ref{c, 0, chains[c][0].latency.seconds(), static_cast<double>(chains[c][0].bytes)});
  double t = 0;
  while (!live.empty()) {
    MaxMinSolver s;
    for (Bandwidth c : caps) s.add_link(c);
    std::vector<FlowId> ids(live.size(), kInvalidId);
    for (size_t i = 0; i < live.size(); ++i) {
      if (live[i].active_at > t) continue;
      const ChainStep& st = chains[live[i].c][live[i].k];
      ids[i] = s.add_flow(st.res, st.weight, st.cap);
    }
    s.solve_all();
    double dt = kInf;
    for (size_t i = 0; i < live.size(); ++i) {
      if (ids[i] == kInvalidId) {
        dt = std::min(dt, live[i].active_at - t);
      } else {
        dt = std::min(dt, live[i].remaining * 8 / s.rate_bps(ids[i]));
      }
    }
    t += dt;
    std::vector<Ref> next;
    for (size_t i = 0; i < live.size(); ++i) {
      Ref r = live[i];
      if (ids[i] != kInvalidId) r.remaining -= s.rate_bps(ids[i]) * dt / 8;
      if (ids[i] != kInvalidId && r.remaining <= 1e-6) {
        want[r.c].push_back(t);
        if (r.k + 1 < chains[r.c].size()) {
          const ChainStep& st = chains[r.c][r.k + 1];
          next.push_back(Ref{r.c, r.k + 1, t + st.latency.seconds(), static_cast<double>(st.bytes)});
        }
      } else {
        next.push_back(r);
      }
    }
    live = next;
  }

  for (size_t c = 0; c < chains.size(); ++c) {
    ASSERT_EQ(got[c].size(), chains[c].size());
    ASSERT_EQ(want[c].size(), chains[c].size());
    for (size_t k = 0; k < chains[c].size(); ++k) {
      EXPECT_NEAR(got[c][k], want[c][k], 1e-9) << "chain " << c << " step " << k;
    }
  }
}

// ---- watchdog: a simulation whose time stops advancing stops

TEST(FlowSim, WatchdogStopsALivelockAtOneInstant) {
  // Every completion starts another zero-byte, zero-latency flow at now():
  // simulated time never leaves 0 ps. Each such flow is one event (its
  // activation completes it at once), so with a limit of 1,000 events per
  // instant the 1,001st event stops the run, whatever the machine's speed.
  FlowSimOptions opt;
  opt.max_events_per_instant = 1000;
  opt.flow_name = [](uint64_t tag) { return "transfer " + std::to_string(tag); };
  opt.link_name = [](LinkId l) { return "nic" + std::to_string(l); };
  FlowSim sim(opt);
  const LinkId l = sim.add_link(100_Gbps);
  const std::vector<Resource> p = {{l, 1.0}};
  sim.add_flow(spec(0, p, 0));
  uint64_t next = 1;
  try {
    sim.run_until_idle([&](const Completion&) { sim.add_flow(spec(0, p, next++)); });
    FAIL() << "the livelock was not stopped";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("simulated time stopped advancing at 0 ps"), std::string::npos) << m;
    EXPECT_NE(m.find("1001 events"), std::string::npos) << m;
    // The report names the flows processed last (tags 995..999: the 1,001st
    // event is flow 1000's activation, the five before it flows 995..999)
    // and their link.
    EXPECT_NE(m.find("transfer 999 "), std::string::npos) << m;
    EXPECT_NE(m.find("on nic0 (100000000000 bps)"), std::string::npos) << m;
  }
  EXPECT_EQ(sim.stats().events, 1001u);
  EXPECT_EQ(sim.now(), Time(0));
}

TEST(FlowSim, WatchdogLetsABurstUpToTheLimitThrough) {
  // 500 zero-byte flows at t = 0, then 500 more from the handler (also at
  // 0): 1,000 events at one instant, exactly the limit, then the queue is
  // empty and the run ends normally.
  FlowSimOptions opt;
  opt.max_events_per_instant = 1000;
  FlowSim sim(opt);
  const LinkId l = sim.add_link(100_Gbps);
  const std::vector<Resource> p = {{l, 1.0}};
  for (uint64_t i = 0; i < 500; ++i) sim.add_flow(spec(0, p, i));
  uint64_t done = 0;
  sim.run_until_idle([&](const Completion& c) {
    ++done;
    if (c.tag < 500) sim.add_flow(spec(0, p, 500 + c.tag));
  });
  EXPECT_EQ(done, 1000u);
  EXPECT_EQ(sim.stats().events, 1000u);
}

TEST(FlowSim, StuckReportNamesStalledFlowsAndTheirDeadLinks) {
  // Flow 1 crosses a healthy link and one of capacity 0: rate 0, it never
  // finishes; the queue runs dry and the report names it and the dead link
  // only. Flow 2 on the healthy link alone finishes: 1 MB at 100 Gb/s = 80 us.
  FlowSimOptions opt;
  opt.flow_name = [](uint64_t tag) { return "transfer " + std::to_string(tag); };
  opt.link_name = [](LinkId l) { return l == 0 ? std::string("leaf1->spine1") : std::string("spine1->leaf2"); };
  FlowSim sim(opt);
  const LinkId ok = sim.add_link(100_Gbps);
  const LinkId dead = sim.add_link(Bandwidth(0));
  sim.add_flow(spec(1'000'000, {{ok, 1.0}, {dead, 1.0}}, 1));
  sim.add_flow(spec(1'000'000, {{ok, 1.0}}, 2));
  const std::vector<Done> done = run(sim);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].tag, 2u);
  EXPECT_EQ(done[0].finish_ps, 80'000'000);
  EXPECT_EQ(sim.stalled_flows(), 1u);
  const std::string r = sim.stuck_report();
  EXPECT_EQ(r, "transfer 1 (active, 1000000 of 1000000 bytes left, rate 0 bps) on zero-capacity links: "
               "spine1->leaf2 (0 bps)");
}

}  // namespace
}  // namespace podnet::engine::flow
