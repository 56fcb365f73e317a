// Validation of the analytical and flow engines against closed forms
// (docs/contributing/validation/collectives.md).
//
// Every expected value below is derived by hand from the hardware defaults
// (topology/hardware.cpp) and the engine model stated in backend.hpp:
//
//   time of a transfer = latency_steps x alpha + payload bytes x 8 / rate
//
// with alpha the hop latency of plan_compiler.cpp (propagation of every link
// + switch latency of every switch entered + the transport's stack latency
// once per hop that crosses a NIC) and rate the max-min fair share of the
// payload capacity (network links: capacity x MTU / (MTU + header)).
//
// Hardware defaults used (checked by HardwareDefaultsMatchTheDerivations, so a
// change of default fails there first, naming the number):
//   PCIe GPU<->NIC          64 GB/s, 500 ns per link
//   NVLink GPU<->NVSwitch   450 GB/s, 500 ns per link (2 links GPU -> GPU)
//   NIC and switch ports    400 Gb/s; switch port-to-port 600 ns
//   cables                  5 ns/m: NIC-leaf 3 m = 15 ns (copper),
//                           leaf-spine 30 m = 150 ns, spine-super 100 m = 500 ns
//   rocev2                  MTU 4096, 82 B/packet, stack 5 us per NIC-crossing hop
//
// Payload rate of a 400G NIC: B = 400e9 x 4096 / 4178 = 392.1494e9 b/s
// (= 49.0187 GB/s). PCIe (512 Gb/s) and NVLink (3,600 Gb/s) are faster, so B
// bounds every GPU -> GPU hop through a NIC.
//
// Hop latencies (one GPU -> GPU hop, one GPU per server, rail 0):
//   same leaf:  PCIe 500 + NIC-leaf 15 + leaf 600 + leaf-NIC 15 + PCIe 500
//               = 1,630 ns + stack 5,000 = 6,630 ns
//   via spine:  500 + 15 + leaf 600 + 150 + spine 600 + 150 + leaf 600 + 15
//               + 500 = 3,130 ns + 5,000 = 8,130 ns
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/registry.hpp"
#include "engine/test_util.hpp"
#include "plan/transfer_plan.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::engine {
namespace {

using namespace podnet::literals;

constexpr double kNicPayloadBps = 400e9 * 4096.0 / 4178.0;  // B
constexpr double kSameLeafHopNs = 6630;
constexpr double kViaSpineHopNs = 8130;

// 2-tier rail-optimized leaf-spine (fat_tree, radix 128): 1,024 GPUs in 128
// servers of 8; d1 = 64 servers per aggregation group, so 2 groups of 8 rail
// leaves; the pod's 16 leaves reach 8 spines with 8 parallel links each.
const topology::Topology& leafspine1k() {
  static const topology::Topology t =
      topology::build_with("fat_tree", {{"gpus", "1024"}, {"tiers", "2"}, {"rail_optimized", "true"}},
                           topology::default_hardware());
  return t;
}

// 1 GPU and 1 NIC per server, 16-port switches: 2-tier fat_tree with d1 = 8
// hosts per leaf, 8 uplinks; 128 hosts = 16 leaves, each linked once to each
// of 8 spines. Host j of leaf i is rank 8i + j.
const topology::Topology& small_fat_tree() {
  static const topology::Topology t =
      topology::build_with("fat_tree", {{"gpus", "128"}, {"tiers", "2"}}, topology::testing::hw_with(1, 1, 16));
  return t;
}

NetworkOptions options(const std::string& policy) {
  NetworkOptions o;
  o.routing.policy = policy;
  o.routing.seed = 1;
  return o;
}

RunReport run(const std::string& engine, const topology::Topology& topo, const std::string& policy,
              const plan::TransferPlan& plan) {
  return make_backend(engine, topo, options(policy))->run(plan);
}

// A ring all-reduce of S bytes over `order` as the ring algorithm plans it:
// every hop carries ceil(2(n-1)/n x S) and pays 2(n-1) hop latencies.
plan::Transfer ring_allreduce(std::vector<int32_t> order, Bytes s) {
  const auto n = static_cast<int64_t>(order.size());
  plan::Transfer t;
  t.kind = plan::TransferKind::Ring;
  t.ranks = std::move(order);
  t.bytes = (s * 2 * (n - 1) + n - 1) / n;
  t.latency_steps = static_cast<int32_t>(2 * (n - 1));
  t.label = "ar/ring";
  return t;
}

plan::Transfer p2p(int32_t src, int32_t dst, Bytes bytes) {
  plan::Transfer t;
  t.kind = plan::TransferKind::P2p;
  t.ranks = {src, dst};
  t.bytes = bytes;
  return t;
}

plan::TransferPlan plan_of(std::vector<plan::Transfer> ts) {
  plan::TransferPlan p;
  for (auto& t : ts) p.add(std::move(t));
  return p;
}

// GPU 0 of each of the first `servers` servers (8 GPUs per server).
std::vector<int32_t> first_gpus(int32_t servers) {
  std::vector<int32_t> r;
  for (int32_t s = 0; s < servers; ++s) r.push_back(8 * s);
  return r;
}

double seconds(Time t) { return t.seconds(); }

void expect_rel(double got, double want, double tol, const std::string& what) {
  EXPECT_NEAR(got, want, tol * std::abs(want))
      << what << ": got " << got << ", want " << want << " (tolerance " << tol * 100 << " %)";
}

TEST(EngineValidation, HardwareDefaultsMatchTheDerivations) {
  // The constants at the top of this file assume these defaults.
  const topology::Hardware hw = topology::default_hardware();
  EXPECT_EQ(hw.pcie_latency, 500_ns);
  EXPECT_EQ(hw.nvlink_latency, 500_ns);
  EXPECT_EQ(hw.switch_latency, 600_ns);
  EXPECT_DOUBLE_EQ(hw.nic_speed.bps, 400e9);
  EXPECT_DOUBLE_EQ(hw.port_speed.bps, 400e9);
  EXPECT_DOUBLE_EQ(hw.pcie_bw.bps, 64e9 * 8);
  EXPECT_DOUBLE_EQ(hw.nvlink_bw.bps, 450e9 * 8);
  EXPECT_DOUBLE_EQ(hw.ns_per_m, 5);
  EXPECT_DOUBLE_EQ(hw.server_to_leaf_m, 3);
  EXPECT_DOUBLE_EQ(hw.leaf_to_spine_m, 30);
  EXPECT_DOUBLE_EQ(hw.spine_to_super_m, 100);
  const Transport rocev2 = transport_preset("rocev2");
  EXPECT_EQ(rocev2.stack_latency, 5_us);
  EXPECT_EQ(rocev2.mtu, 4096);
  EXPECT_EQ(rocev2.header_bytes, 82);
  EXPECT_NEAR(rocev2.efficiency() * 400e9, kNicPayloadBps, 1);
}

// (a) One P2p transfer on an idle fabric: t = alpha + S/B on both engines.
TEST(EngineValidation, SingleP2pMatchesAlphaBetaOnBothEngines) {
  // Rank 0 (server 0, group 0) -> rank 512 (server 64, GPU 0, group 1):
  // rail-0 leaf of group 0 -> spine -> rail-0 leaf of group 1: alpha = 8,130 ns.
  // S = 1 GiB: t = 8.13 us + 2^30 x 8 / B = 8.13 us + 21,904.75 us = 21,912.88 us.
  const Bytes s = 1_GiB;
  const double want = kViaSpineHopNs * 1e-9 + 8.0 * static_cast<double>(s) / kNicPayloadBps;
  for (const char* policy : {"static", "ecmp", "adaptive", "spray"}) {
    const plan::TransferPlan plan = plan_of({p2p(0, 512, s)});
    const RunReport flow = run("flow", leafspine1k(), policy, plan);
    const RunReport ana = run("analytical", leafspine1k(), policy, plan);
    expect_rel(seconds(flow.makespan), want, 1e-6, std::string("flow, ") + policy);
    expect_rel(seconds(ana.makespan), want, 1e-6, std::string("analytical, ") + policy);
    expect_rel(seconds(flow.makespan), seconds(ana.makespan), 0.01, std::string("flow vs analytical, ") + policy);
  }
}

// (a) + (b) A ring all-reduce over GPU 0 of every server (128 servers, one
// GPU each, topology-aware = server order) on the non-blocking leaf-spine.
//
// Hops: 126 stay on a rail-0 leaf (6,630 ns); 2 cross groups via a spine
// (server 63 -> 64 and the closing 127 -> 0: 8,130 ns), in opposite
// directions, so no directed link carries two hops under any policy.
//   mean alpha = (126 x 6,630 + 2 x 8,130) / 128 = 6,653.4375 ns
//   latency    = 2(n-1) x alpha = 254 x 6,653.4375 ns = 1,689.973 us
// S = 8 GiB: each hop carries 2(n-1)/n x S = 254/128 x 2^33 = 17,045,651,456 B
//   at B: 17,045,651,456 x 8 / 392.1494e9 = 347,737.9 us
//   t = 349,427.9 us; busbw = 2(n-1)/n x S / t = 48.782 GB/s
//   = 99.52 % of B x efficiency (49.0187 GB/s): within 2 %, the gap being the
//   latency share 1,690 / 349,427 = 0.48 %.
TEST(EngineValidation, RingAllReduceEnginesAgreeWithoutContention) {
  const Bytes s = 8_GiB;
  const std::vector<int32_t> order = first_gpus(128);
  const double alpha_ns = (126 * kSameLeafHopNs + 2 * kViaSpineHopNs) / 128;
  ASSERT_DOUBLE_EQ(alpha_ns, 6653.4375);
  const double hop_bytes = 254.0 / 128.0 * static_cast<double>(s);
  const double want = 254 * alpha_ns * 1e-9 + 8 * hop_bytes / kNicPayloadBps;
  for (const char* policy : {"static", "ecmp", "adaptive", "spray"}) {
    const plan::TransferPlan plan = plan_of({ring_allreduce(order, s)});
    const double flow = seconds(run("flow", leafspine1k(), policy, plan).makespan);
    const double ana = seconds(run("analytical", leafspine1k(), policy, plan).makespan);
    expect_rel(flow, ana, 0.01, std::string("flow vs analytical, ") + policy);
    expect_rel(flow, want, 0.01, std::string("flow vs alpha-beta, ") + policy);
    expect_rel(ana, want, 0.01, std::string("analytical vs alpha-beta, ") + policy);
  }
}

TEST(EngineValidation, LargeRingAllReduceReachesNicRate) {
  // (b) The figures derived above, on the flow engine with ECMP.
  const Bytes s = 8_GiB;
  const plan::TransferPlan plan = plan_of({ring_allreduce(first_gpus(128), s)});
  const RunReport r = run("flow", leafspine1k(), "ecmp", plan);
  const double t = seconds(r.makespan);
  const double busbw = 254.0 / 128.0 * static_cast<double>(s) / t;  // bytes/s
  // Latency part: 254 x 6,653.4375 ns, checked on its own with a 1-byte ring
  // (1 B x 254/128 rounds up to 2 B per hop: 2 x 8 / B = 0.04 ns, negligible).
  const RunReport tiny = run("flow", leafspine1k(), "ecmp", plan_of({ring_allreduce(first_gpus(128), 1)}));
  expect_rel(seconds(tiny.makespan), 254 * 6653.4375e-9, 1e-6, "latency of 2(n-1) steps");
  expect_rel(t, 349427.9e-6, 0.01, "8 GiB ring all-reduce time");
  expect_rel(busbw, kNicPayloadBps / 8, 0.02, "busbw vs NIC rate x wire efficiency");
  EXPECT_LT(busbw, kNicPayloadBps / 8) << "latency can only lower busbw below the NIC payload rate";
  // The engines report exactly one coupled flow for a ring.
  EXPECT_EQ(r.flows, 1u);
}

// (f) Contention in the flow engine. Two 2-GPU rings on the small fat-tree,
// ring A = {0, 8} (host 0 of leaves 0 and 1), ring B = {1, 9} (host 1 of the
// same leaves). With `static` routing every leaf takes its first equal-cost
// uplink, so both rings' 0->8 / 1->9 hops cross leaf0->spine0->leaf1 and both
// 8->0 / 9->1 hops cross leaf1->spine0->leaf0: each of those directed links
// carries two ring variables, and max-min gives each ring B/2.
//   alpha = 8,130 ns (1 GPU servers keep the PCIe hop: same as above)
//   n = 2: latency_steps = 2, per-hop bytes = 2(1)/2 x S = S
//   one ring:  t1 = 2 alpha + S x 8 / B
//   two rings: t2 = 2 alpha + S x 8 / (B/2) = 2 alpha + 2 S x 8 / B
// S = 1 GiB: t1 = 16.26 us + 21,904.75 us = 21,921.0 us;
//            t2 = 16.26 us + 43,809.51 us = 43,825.8 us; t2/t1 = 1.99926.
TEST(EngineValidation, TwoRingsSharingABottleneckTakeTwiceAsLong) {
  const Bytes s = 1_GiB;
  const double bw = 8.0 * static_cast<double>(s) / kNicPayloadBps;
  const double t1_want = 2 * kViaSpineHopNs * 1e-9 + bw;
  const double t2_want = 2 * kViaSpineHopNs * 1e-9 + 2 * bw;
  const plan::TransferPlan one = plan_of({ring_allreduce({0, 8}, s)});
  const plan::TransferPlan two = plan_of({ring_allreduce({0, 8}, s), ring_allreduce({1, 9}, s)});
  const double t1 = seconds(run("flow", small_fat_tree(), "static", one).makespan);
  const RunReport r2 = run("flow", small_fat_tree(), "static", two);
  expect_rel(t1, t1_want, 1e-6, "one ring");
  expect_rel(seconds(r2.transfers[0].finish), t2_want, 1e-6, "ring A next to ring B");
  expect_rel(seconds(r2.transfers[1].finish), t2_want, 1e-6, "ring B next to ring A");
  expect_rel(seconds(r2.makespan) / t1, 2.0, 0.01, "two rings / one ring");
  // The analytical engine: the two rings start together with no dependency,
  // so they are one concurrent set (analytical_backend.hpp) and share the
  // bottleneck: sum_g c_g min(b_g, b_f) = 2 S on every shared link, t2 each.
  const RunReport a2 = run("analytical", small_fat_tree(), "static", two);
  expect_rel(seconds(a2.transfers[0].finish), t2_want, 1e-6, "analytical: ring A next to ring B");
  expect_rel(seconds(a2.transfers[1].finish), t2_want, 1e-6, "analytical: ring B next to ring A");
}

// The analytical engine reuses a set's drain times when the same routes carry the same bytes again (a
// stage's gradient buckets), never when the bytes differ: the same ring all-reduce three times in a row,
// S, S and 2 S, takes t1, t1 and 2 S's time, each as the first would alone.
TEST(EngineValidation, AnalyticalRepeatedSetsTakeTheirOwnBytesTime) {
  const Bytes s = 1_GiB;
  const double bw = 8.0 * static_cast<double>(s) / kNicPayloadBps;
  plan::TransferPlan plan =
      plan_of({ring_allreduce({0, 8}, s), ring_allreduce({0, 8}, s), ring_allreduce({0, 8}, 2 * s)});
  plan.transfers[1].deps = {0};
  plan.transfers[2].deps = {1};
  const RunReport a = run("analytical", small_fat_tree(), "static", plan);
  const double hops = 2 * kViaSpineHopNs * 1e-9;
  expect_rel(seconds(a.transfers[0].finish), hops + bw, 1e-6, "first");
  expect_rel(seconds(a.transfers[1].finish - a.transfers[1].start), hops + bw, 1e-6, "again, the same bytes");
  expect_rel(seconds(a.transfers[2].finish - a.transfers[2].start), hops + 2 * bw, 1e-6, "again, twice the bytes");
}

// The analytical engine does not share links between separate operations:
// the same two rings, each after its own compute step (two operations, as two
// collectives in a training iteration), take t1 each there; the flow engine
// still shares (t2). This is the analytical engine's documented limit.
TEST(EngineValidation, AnalyticalSeparateOperationsDoNotShare) {
  const Bytes s = 1_GiB;
  const double bw = 8.0 * static_cast<double>(s) / kNicPayloadBps;
  plan::Transfer x, y;
  x.kind = y.kind = plan::TransferKind::Compute;
  x.ranks = {0};
  y.ranks = {1};
  plan::TransferPlan plan = plan_of({x, y, ring_allreduce({0, 8}, s), ring_allreduce({1, 9}, s)});
  plan.transfers[2].deps = {0};
  plan.transfers[3].deps = {1};
  const RunReport a = run("analytical", small_fat_tree(), "static", plan);
  expect_rel(seconds(a.makespan), 2 * kViaSpineHopNs * 1e-9 + bw, 1e-6, "analytical: two operations");
  const RunReport f = run("flow", small_fat_tree(), "static", plan);
  expect_rel(seconds(f.makespan), 2 * kViaSpineHopNs * 1e-9 + 2 * bw, 1e-6, "flow: two operations share");
}

// (f) Unequal rings on the same bottleneck: ring B carries S/2. Both run at
// B/2 until B is done at 2 alpha + (S/2) x 8 / (B/2) = 2 alpha + S x 8 / B;
// then ring A, with S/2 left, runs alone at B: it ends at
// 2 alpha + S x 8 / B + (S/2) x 8 / B = 2 alpha + 1.5 S x 8 / B.
TEST(EngineValidation, SmallerRingFinishesThenTheLargerSpeedsUp) {
  const Bytes s = 1_GiB;
  const double bw = 8.0 * static_cast<double>(s) / kNicPayloadBps;
  const plan::TransferPlan plan = plan_of({ring_allreduce({0, 8}, s), ring_allreduce({1, 9}, s / 2)});
  // The analytical engine's processor-sharing drain gives the same: ring B
  // (S/2) waits for S/2 + S/2 = S bytes, ring A for S/2 + S = 1.5 S.
  for (const char* engine : {"flow", "analytical"}) {
    const RunReport r = run(engine, small_fat_tree(), "static", plan);
    expect_rel(seconds(r.transfers[1].finish), 2 * kViaSpineHopNs * 1e-9 + bw, 1e-6,
               std::string(engine) + ": half-size ring");
    expect_rel(seconds(r.transfers[0].finish), 2 * kViaSpineHopNs * 1e-9 + 1.5 * bw, 1e-6,
               std::string(engine) + ": full-size ring");
  }
}

// A rate limit outside the links (plan::Transfer::max_rate_bps): rank 0 sends S = 1 GiB to rank 1 limited to B / 4
// and S to rank 2 without a limit, both from its one NIC (same leaf, alpha = 6,630 ns each). Flow engine (max-min
// with a cap): the limited one runs at B / 4, the other takes the 3 B / 4 it leaves and ends at alpha + bw / 0.75;
// the limited one then runs alone at its cap and ends at alpha + 4 bw (bw = 8 S / B). The analytical engine takes
// the longer of its link sharing (2 bw for both) and bytes / limit: alpha + 4 bw for the limited one, alpha + 2 bw
// for the other (it does not hand the limited one's leftover to the others: optimistic for neither). The packet
// engine paces the limited QP (within 1 %).
TEST(EngineValidation, RateLimitedTransferLeavesTheRestOfTheLinkToOthers) {
  const Bytes s = 1_GiB;
  const double bw = 8.0 * static_cast<double>(s) / kNicPayloadBps;
  const double alpha = kSameLeafHopNs * 1e-9;
  plan::Transfer limited = p2p(0, 1, s);
  limited.max_rate_bps = kNicPayloadBps / 4;
  const plan::TransferPlan plan = plan_of({limited, p2p(0, 2, s)});
  const RunReport flow = run("flow", small_fat_tree(), "static", plan);
  expect_rel(seconds(flow.transfers[0].finish), alpha + 4 * bw, 1e-6, "flow: limited");
  expect_rel(seconds(flow.transfers[1].finish), alpha + bw / 0.75, 1e-6, "flow: the other");
  const RunReport ana = run("analytical", small_fat_tree(), "static", plan);
  expect_rel(seconds(ana.transfers[0].finish), alpha + 4 * bw, 1e-6, "analytical: limited");
  expect_rel(seconds(ana.transfers[1].finish), alpha + 2 * bw, 1e-6, "analytical: the other");
  const RunReport pkt = run("packet", small_fat_tree(), "static", plan_of({limited, p2p(0, 2, s / 64)}));
  expect_rel(seconds(pkt.transfers[0].finish), alpha + 4 * bw, 0.01, "packet: limited");
  // Without the limit both share the NIC: 2 bw each (the flow engine, exactly).
  const RunReport plain = run("flow", small_fat_tree(), "static", plan_of({p2p(0, 1, s), p2p(0, 2, s)}));
  expect_rel(seconds(plain.transfers[0].finish), alpha + 2 * bw, 1e-6, "flow: no limit");
}

// (f) Contention inside one transfer: the ring 0 -> 8 -> 1 -> 9 -> 0 goes
// leaf0 -> leaf1 twice (0->8, 1->9) and leaf1 -> leaf0 twice (8->1, 9->0).
// With `static` routing both crossings of each direction take spine 0, so
// leaf0->spine0 (and the three other spine links) carry 2 hops of the one
// coupled variable: rate B/2 on every hop (backend.hpp: "a link used by two
// hops carries twice the rate"). n = 4: per-hop bytes 2(3)/4 x S = 1.5 S,
// 6 latency steps of 8,130 ns (every hop crosses a spine).
//   t = 6 x 8,130 ns + 1.5 S x 8 / (B/2); both engines (one transfer).
TEST(EngineValidation, RingHopsSharingALinkSlowTheWholeRing) {
  const Bytes s = 1_GiB;
  const plan::TransferPlan plan = plan_of({ring_allreduce({0, 8, 1, 9}, s)});
  const double want = 6 * kViaSpineHopNs * 1e-9 + 1.5 * 8.0 * static_cast<double>(s) / (kNicPayloadBps / 2);
  for (const char* engine : {"flow", "analytical"})
    expect_rel(seconds(run(engine, small_fat_tree(), "static", plan).makespan), want, 1e-6, engine);
  // Spraying splits each crossing over the 8 spines: 2 x 1/8 per spine link,
  // so the NICs (one hop each) bound the ring again: rate B.
  const double sprayed = 6 * kViaSpineHopNs * 1e-9 + 1.5 * 8.0 * static_cast<double>(s) / kNicPayloadBps;
  expect_rel(seconds(run("flow", small_fat_tree(), "spray", plan).makespan), sprayed, 1e-6, "spray");
}

// (f) A dependency chain: ring B starts when ring A is done and then runs
// alone: t = 2 x (2 alpha + S x 8 / B) on both engines.
TEST(EngineValidation, DependentRingsRunBackToBack) {
  const Bytes s = 256_MiB;
  plan::TransferPlan plan = plan_of({ring_allreduce({0, 8}, s), ring_allreduce({1, 9}, s)});
  plan.transfers[1].deps = {0};
  const double one = 2 * kViaSpineHopNs * 1e-9 + 8.0 * static_cast<double>(s) / kNicPayloadBps;
  for (const char* engine : {"flow", "analytical"}) {
    const RunReport r = run(engine, small_fat_tree(), "static", plan);
    expect_rel(seconds(r.transfers[1].start), one, 1e-6, std::string(engine) + ": start of the dependent ring");
    expect_rel(seconds(r.makespan), 2 * one, 1e-6, std::string(engine) + ": makespan");
  }
}

// A ring of 8 chips (1-D torus, cube [8]: every link 1 m copper): a link
// costs 5 ns of cable + 100 ns of chip router time (hop_latency) = 105 ns.
// The links are chip-to-chip (class ici): no NIC stack latency, no Ethernet
// header, efficiency 1 (link_classes.hpp). Ring all-reduce over 0..7, S:
//   t = 14 x 105 ns + ceil(14/8 S) x 8 / 400e9
// S = 64 MiB: 1,470 ns + 117,440,512 B x 8 / 400e9 = 1.470 us + 2,348.810 us
// = 2,350.280 us. (Before chip-to-chip links were priced as such: 14 x
// 5,105 ns + ... / (400e9 x 4096/4178) = 71.47 us + 2,395.85 us.)
TEST(EngineValidation, ChipToChipRingPaysNoTransport) {
  topology::Hardware hw = topology::default_hardware();
  hw.nics_per_server = 0;
  const topology::Topology ring =
      topology::build_with("torus", {{"dims", "[8]"}, {"cube", "[8]"}, {"hop_latency", "100ns"}}, hw);
  const Bytes s = 64_MiB;
  const plan::TransferPlan plan = plan_of({ring_allreduce({0, 1, 2, 3, 4, 5, 6, 7}, s)});
  const double hop_bytes = static_cast<double>((s * 14 + 7) / 8);
  const double want = 14 * 105e-9 + hop_bytes * 8 / 400e9;
  ASSERT_NEAR(want * 1e6, 2350.280, 0.001);
  for (const char* engine : {"analytical", "flow"})
    expect_rel(seconds(run(engine, ring, "dimension_order", plan).makespan), want, 1e-6, engine);
  // The packet engine sends 4,096-byte packets with no header on ici links:
  // store-and-forward adds about one packet time per link, within 1 %.
  expect_rel(seconds(run("packet", ring, "dimension_order", plan).makespan), want, 0.01, "packet");
}

// (h) The load per link class (report_util.hpp class_loads) counts every
// payload byte once per directed link it crosses. GPU 0 -> GPU 8 of the
// 128-GPU fat-tree (8 one-GPU servers per radix-16 leaf) goes GPU -> NIC ->
// leaf 0 -> spine -> leaf 1 -> NIC -> GPU: two directed links of each of its
// three classes, so each carries 2 x 8 MiB; every other class carries 0.
TEST(EngineValidation, ClassLoadsCountEachByteOncePerLinkCrossed) {
  const topology::Topology& t = small_fat_tree();
  const plan::TransferPlan plan = testing::p2p_plan({{0, 8}}, 8_MiB);
  const double b = 8.0 * 1024 * 1024;
  for (const char* engine : {"flow", "analytical"}) {
    const RunReport r = run(engine, t, "static", plan);
    ASSERT_FALSE(r.by_class.empty()) << engine;
    double total = 0;
    int crossed = 0;
    for (const ClassLoad& c : r.by_class) {
      total += c.bytes;
      if (c.bytes == 0) {
        EXPECT_EQ(c.max_utilization, 0.0) << engine << " " << c.link_class;
        continue;
      }
      ++crossed;
      EXPECT_DOUBLE_EQ(c.bytes, 2 * b) << engine << " " << c.link_class;
      // One flow alone: its busiest link is below 1 (latency adds to the time) and above 0.
      EXPECT_GT(c.max_utilization, 0.0) << engine << " " << c.link_class;
      EXPECT_LE(c.max_utilization, 1.0) << engine << " " << c.link_class;
      // The mean over the class's directed links: 2 busy directions out of c.links, each at most the max.
      EXPECT_LE(c.mean_utilization, 2 * c.max_utilization / static_cast<double>(c.links) * (1 + 1e-12));
    }
    EXPECT_EQ(crossed, 3) << engine;
    EXPECT_DOUBLE_EQ(total, 6 * b) << engine;
  }
}

// (g) Determinism: the same plan, run twice on one backend and once on a new
// one, gives identical times to the picosecond. The plan mixes contention
// (ECMP collisions of 4-QP P2p transfers), rings and a dependency.
TEST(EngineValidation, SamePlanTwiceGivesIdenticalTimes) {
  plan::TransferPlan plan;
  for (int32_t i = 0; i < 128; ++i) {
    plan::Transfer t = p2p(i, (i + 8) % 128, 64_MiB + i * 4096);
    t.qps = 4;
    plan.add(std::move(t));
  }
  plan.add(ring_allreduce({0, 8, 16, 24, 32, 40, 48, 56}, 128_MiB));
  plan::Transfer dep = ring_allreduce({3, 19, 35, 51, 67, 83, 99, 115}, 32_MiB);
  dep.deps = {5, 128};
  plan.add(std::move(dep));
  for (const char* engine : {"flow", "analytical"}) {
    for (const char* policy : {"ecmp", "adaptive", "spray"}) {
      auto backend = make_backend(engine, small_fat_tree(), options(policy));
      const RunReport a = backend->run(plan);
      const RunReport b = backend->run(plan);
      const RunReport c = make_backend(engine, small_fat_tree(), options(policy))->run(plan);
      ASSERT_EQ(a.transfers.size(), plan.transfers.size());
      EXPECT_EQ(a.makespan, b.makespan) << engine << " " << policy;
      EXPECT_EQ(a.makespan, c.makespan) << engine << " " << policy;
      for (size_t i = 0; i < a.transfers.size(); ++i) {
        EXPECT_EQ(a.transfers[i].start, b.transfers[i].start) << engine << " " << policy << " transfer " << i;
        EXPECT_EQ(a.transfers[i].finish, b.transfers[i].finish) << engine << " " << policy << " transfer " << i;
        EXPECT_EQ(a.transfers[i].finish, c.transfers[i].finish) << engine << " " << policy << " transfer " << i;
      }
      ASSERT_EQ(a.hottest.size(), c.hottest.size());
      for (size_t i = 0; i < a.hottest.size(); ++i) {
        EXPECT_EQ(a.hottest[i].link, c.hottest[i].link);
        EXPECT_EQ(a.hottest[i].bytes, c.hottest[i].bytes);
      }
    }
  }
}

}  // namespace
}  // namespace podnet::engine
