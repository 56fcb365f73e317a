#include "engine/packet/packet_backend.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "engine/flow/flow_backend.hpp"
#include "engine/packet/packet_test_util.hpp"
#include "engine/registry.hpp"

namespace podnet::engine::packet {
namespace {

using namespace podnet::literals;
using namespace testing;

// 16 hosts, 4 leaves of 4 (radix 8: 4 down, 4 up), 2-tier: ranks 0..7 span two leaves.
const topology::Topology& fabric16() {
  static const topology::Topology t = topology::build_with("fat_tree", {{"gpus", "16"}}, hw100(8));
  return t;
}

plan::Transfer p2p(int32_t a, int32_t b, Bytes bytes, std::vector<int32_t> deps = {}) {
  plan::Transfer t;
  t.kind = plan::TransferKind::P2p;
  t.ranks = {a, b};
  t.bytes = bytes;
  t.deps = std::move(deps);
  return t;
}

TEST(PacketBackend, IsRegisteredAndRunsADag) {
  // A: 0 -> 1, 1 MB; B: 1 -> 2, 1 MB after A; C: 10 us compute after B; D: 0 -> 3 with 2 QPs, independent.
  // Dependencies: B starts when A finishes, C finishes 10 us after B.
  const auto& topo = fabric16();
  auto backend = make_backend("packet", topo, net());
  EXPECT_STREQ(backend->name(), "packet");
  plan::TransferPlan plan;
  const int32_t a = plan.add(p2p(0, 1, 1'000'000));
  const int32_t b = plan.add(p2p(1, 2, 1'000'000, {a}));
  plan::Transfer c;
  c.kind = plan::TransferKind::Compute;
  c.ranks = {2};
  c.duration = 10_us;
  c.deps = {b};
  const int32_t ci = plan.add(c);
  plan::Transfer d = p2p(0, 3, 3'000'001);
  d.qps = 2;
  const int32_t di = plan.add(d);
  const RunReport r = backend->run(plan);
  EXPECT_EQ(r.engine, "packet");
  EXPECT_EQ(r.flows, 4u);  // A, B, two QPs of D
  EXPECT_EQ(r.transfers[a].start.ps, 0);
  EXPECT_GT(r.transfers[a].finish.ps, 0);
  EXPECT_EQ(r.transfers[b].start, r.transfers[a].finish);
  EXPECT_EQ(r.transfers[ci].start, r.transfers[b].finish);
  EXPECT_EQ(r.transfers[ci].finish, r.transfers[b].finish + 10_us);
  EXPECT_EQ(r.transfers[di].start.ps, 0);
  EXPECT_EQ(r.makespan, std::max(r.transfers[ci].finish, r.transfers[di].finish));
  ASSERT_FALSE(r.hottest.empty());
  EXPECT_GT(r.hottest[0].bytes, 0);
  EXPECT_LE(r.hottest[0].mean_utilization, 1.0 + 1e-9);
  // D's two QPs carry 1,500,001 and 1,500,000 bytes.
  const auto* pb = dynamic_cast<const PacketBackend*>(backend.get());
  ASSERT_NE(pb, nullptr);
  ASSERT_NE(pb->last_run(), nullptr);
  std::vector<Bytes> d_bytes;
  for (const auto& s : pb->last_run()->streams())
    if (s.tag == static_cast<uint64_t>(di)) d_bytes.push_back(s.bytes);
  EXPECT_EQ(d_bytes, (std::vector<Bytes>{1'500'001, 1'500'000}));
}

TEST(PacketBackend, ATransferOfTwoLanesStreamsAsItsChannelsApart) {
  // A Coupled transfer from channel 2 of 2 lanes of 3 edges, 2 QPs each, streams each lane's edges on its
  // channel's ECMP entropy (plan::Transfer::lanes): the same streams, at the same times, as two transfers of
  // one channel each (2 and 3) starting together.
  const auto& topo = fabric16();
  const std::vector<std::pair<int32_t, int32_t>> edges{{0, 5}, {5, 10}, {10, 0}};
  plan::Transfer one;
  one.kind = plan::TransferKind::Coupled;
  one.edges = edges;
  one.ranks = {0, 5, 10};
  one.bytes = 200'000;
  one.qps = 2;
  one.channel = 2;
  plan::TransferPlan apart;
  apart.add(one);
  one.channel = 3;
  apart.add(one);
  plan::TransferPlan lanes;
  plan::Transfer both = one;
  both.channel = 2;
  std::vector<std::pair<int32_t, int32_t>> twice = edges;
  twice.insert(twice.end(), edges.begin(), edges.end());
  both.edges = twice;
  both.lanes = 2;
  lanes.add(both);
  auto streams = [&](const plan::TransferPlan& plan) {
    PacketBackend backend(topo, net());
    const RunReport r = backend.run(plan);
    std::multiset<std::tuple<int32_t, int32_t, int64_t, int64_t>> out;
    for (const auto& st : backend.last_run()->streams()) out.insert({st.src, st.dst, st.first_send.ps, st.finish.ps});
    return std::make_pair(out, r.makespan);
  };
  const auto a = streams(apart), b = streams(lanes);
  EXPECT_EQ(a.first.size(), 12u);
  EXPECT_EQ(b.first, a.first);
  EXPECT_EQ(b.second, a.second);
  // Not by chance: the same edges all on channel 2 (one lane) stream differently, so the second lane's channel
  // counts.
  plan::TransferPlan one_channel = lanes;
  one_channel.transfers[0].lanes = 1;
  EXPECT_NE(streams(one_channel).first, a.first);
}

TEST(PacketBackend, RunsTwiceIdentically) {
  const auto& topo = fabric16();
  PacketBackend backend(topo, net());
  plan::TransferPlan plan;
  for (int i = 0; i < 8; ++i) plan.add(p2p(i, (i + 3) % 8, 500'000 + 10'000 * i));
  const RunReport x = backend.run(plan), y = backend.run(plan);
  ASSERT_EQ(x.transfers.size(), y.transfers.size());
  for (size_t i = 0; i < x.transfers.size(); ++i) EXPECT_EQ(x.transfers[i].finish, y.transfers[i].finish);
  EXPECT_EQ(x.makespan, y.makespan);
}

double relative_gap(const RunReport& a, const RunReport& b) {
  return std::abs(a.makespan.seconds() - b.makespan.seconds()) / b.makespan.seconds();
}

TEST(PacketBackend, RingAllReduceAgreesWithTheFlowEngine) {
  // Ring all-reduce of S = 16 MB over ranks 0..7 (two leaves): every hop carries
  // 2 (n - 1) / n x S = 28 MB, latency_steps 2 (n - 1) = 14. The flow engine
  // moves the ring at the slowest hop's rate: 28 MB / (100G x 4096/4178) = 2.285 ms
  // (+ 14 hop latencies) when every hop gets a full link. The packet engine
  // streams each hop independently; with every hop on its own NIC links and
  // the two inter-leaf hops on (possibly shared) uplinks the slowest hop sets
  // both. Tolerance 10 %.
  const auto& topo = fabric16();
  plan::TransferPlan plan;
  plan::Transfer t;
  t.kind = plan::TransferKind::Ring;
  for (int i = 0; i < 8; ++i) t.ranks.push_back(i);
  t.bytes = 28'000'000;
  t.latency_steps = 14;
  plan.add(t);
  flow::FlowBackend flow(topo, net());
  PacketBackend packet(topo, net());
  const RunReport f = flow.run(plan), p = packet.run(plan);
  EXPECT_LT(relative_gap(p, f), 0.10) << "packet " << p.makespan.us() << " us, flow " << f.makespan.us() << " us";
  EXPECT_EQ(p.flows, 8u);
}

TEST(PacketBackend, AllToAllAgreesWithTheFlowEngine) {
  // All-to-all over ranks 0..7, 2 MB per pair (56 P2p transfers): every NIC
  // sends and receives 7 x 2 MB; the flow engine shares links max-min fair.
  // The packet engine runs it with DCQCN (NIC preset) and PFC. Tolerance 10 %.
  const auto& topo = fabric16();
  plan::TransferPlan plan;
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b)
      if (a != b) plan.add(p2p(a, b, 2'000'000));
  flow::FlowBackend flow(topo, net());
  PacketBackend packet(topo, net());
  const RunReport f = flow.run(plan), p = packet.run(plan);
  EXPECT_LT(relative_gap(p, f), 0.10) << "packet " << p.makespan.us() << " us, flow " << f.makespan.us() << " us";
  EXPECT_EQ(packet.last_run()->stats().drops, 0u);
}

TEST(PacketBackend, InfinibandCreditsAreLossless) {
  // Incast 8 -> 1 with the infiniband preset: credits, no PFC frames, no drops,
  // no ECN; the receiver's link is the bottleneck: makespan ~ 8 S / (100G x 4096/4122)
  // (InfiniBand headers: 26 B per packet).
  const auto topo = one_leaf(16);
  NetworkOptions o = net();
  o.transport = transport_preset("infiniband");
  PacketBackend backend(topo, o);
  plan::TransferPlan plan;
  for (int s = 1; s <= 8; ++s) plan.add(p2p(s, 0, 1'000'000));
  const RunReport r = backend.run(plan);
  const SimStats& st = backend.last_run()->stats();
  EXPECT_EQ(st.drops, 0u);
  EXPECT_EQ(st.pause_frames, 0u);
  EXPECT_EQ(st.ecn_marks, 0u);
  EXPECT_EQ(st.data_delivered, 8u * 245u);
  const double ideal_us = 8e6 * 8 / (100e9 * 4096.0 / 4122.0) * 1e6;
  EXPECT_NEAR(r.makespan.us(), ideal_us, 0.03 * ideal_us);
}

TEST(PacketBackend, PipelinedRingStepsSliceBySlice) {
  // A ring 0 -> 1 -> 2 -> 3 -> 0 of hosts under one leaf (100G), NCCL's pipeline with one slice a
  // chunk: U = 6 slices of 16 packets (65,536 B) per hop = one loop of a 4-rank all-reduce
  // (2(n-1) = 6 steps; lag 1, period 6), window 2. Slice u of hop h forwards slice u - 1 of hop
  // h - 1, so every rank waits for the whole previous slice: one step is
  //   16 x 334,240 (the slice leaves the NIC) + 615,000 (3 m copper 15 ns + switch 600 ns)
  //   + 334,240 (the last packet leaves the leaf) + 15,000 (copper) + 500,000 + 71,588 (PCIe
  //   latency and 4096 B at 457.728 Gb/s, packet_sim_test.cpp) = 6,883,668 ps,
  // and the QPs start after the 500,000 ps PCIe prefix (latency_steps 0: no stack wait):
  //   makespan = 500,000 + 6 x 6,883,668 = 41,802,008 ps.
  // Unpipelined the same hop is one stream of 96 packets:
  //   500,000 + 96 x 334,240 + 1,535,828 = 34,122,868 ps.
  // ACKs (84 B, 6,720 ps each) sharing the ports shift data by a few ns a step: tolerance 0.5 %
  // (measured 41,843,288 ps: +6,880 ps a step, one ACK's serialization).
  const auto topo = one_leaf(4);
  plan::TransferPlan plan;
  plan::Transfer t;
  t.kind = plan::TransferKind::Ring;
  t.ranks = {0, 1, 2, 3};
  t.bytes = 6 * 16 * 4096;
  t.latency_steps = 0;
  t.pipeline = {6, 2, 1, 6};
  plan.add(t);
  PacketBackend backend(topo, net());
  const RunReport r = backend.run(plan);
  EXPECT_NEAR(static_cast<double>(r.makespan.ps), 41'802'008.0, 0.005 * 41'802'008.0);
  EXPECT_EQ(backend.last_run()->stats().retransmits, 0u);
  EXPECT_EQ(backend.last_run()->stats().timeouts, 0u);
  // Two QPs a hop split every slice (8 packets each, round-robin on the NIC): the same steps.
  plan.transfers[0].qps = 2;
  EXPECT_NEAR(static_cast<double>(backend.run(plan).makespan.ps), 41'802'008.0, 0.005 * 41'802'008.0);
  plan.transfers[0].qps = 1;
  plan.transfers[0].pipeline = {};
  EXPECT_NEAR(static_cast<double>(backend.run(plan).makespan.ps), 34'122'868.0, 0.005 * 34'122'868.0);
}

TEST(PacketBackend, PipelineWindowBoundsWhatASenderHasInFlight) {
  // An open chain 0 -> 1 -> 2 (broadcast-like), 32 slices of 4 packets, window 1: a hop may send
  // slice u only once its receiver forwarded (hop 0) or received (hop 1) slice u - 1, so hop 1 sends
  // one slice per round trip (4 x 334,240 + 1,535,828 = 2,872,788 ps): at least 32 x 2.87 us =
  // 91.9 us. With 8 slots the slices stream back to back: about 32 x 4 x 334,240 = 42.8 us plus
  // two slice latencies (2 x 2.87 us): below 50 us.
  const auto topo = one_leaf(4);
  plan::TransferPlan plan;
  plan::Transfer t;
  t.kind = plan::TransferKind::Ring;
  t.open = true;
  t.ranks = {0, 1, 2};
  t.bytes = 32 * 4 * 4096;
  t.latency_steps = 0;
  t.pipeline = {32, 1, 0, 0};
  plan.add(t);
  PacketBackend backend(topo, net());
  EXPECT_GT(backend.run(plan).makespan.us(), 91.9);
  plan.transfers[0].pipeline.window = 8;
  EXPECT_LT(backend.run(plan).makespan.us(), 50.0);
}

TEST(PacketBackend, UnknownCcPresetIsAnInputError) {
  PacketOptions o;
  o.cc = "bbr";
  EXPECT_THROW(PacketSim(fabric16(), net(), o), InputError);
}

}  // namespace
}  // namespace podnet::engine::packet
