#include "engine/packet/packet_sim.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "engine/packet/packet_test_util.hpp"

namespace podnet::engine::packet {
namespace {

using namespace podnet::literals;
using namespace testing;

TEST(PacketSim, SlicedStreamsSendEverySliceAsItsOwnPackets) {
  // 10,001 B in 2 slices: 5,001 + 5,000 B, each 4,096 + a short packet: 4 packets (unsliced: 3).
  // Only the first slice is released: 2 packets arrive, then nothing until the second is released.
  const auto topo = one_leaf(4);
  PacketSim sim(topo, net(), PacketOptions{});
  std::vector<routing::PathPart> r;
  sim.route(0, 1, 0, r);
  StreamSpec s;
  s.src = 0;
  s.dst = 1;
  s.bytes = 10'001;
  s.slices = 2;
  s.send_slices = 1;
  const int32_t id = sim.add_stream(s, r);
  sim.watch_slices(id, 1);
  int progress = 0;
  Time first;
  sim.run([&](const SimEvent& e) {
    if (!e.progress) return;
    ++progress;
    first = e.at;
    EXPECT_EQ(sim.delivered_slices(id), 1);
    sim.release_slices(id, 2);
  });
  EXPECT_EQ(progress, 1);
  EXPECT_EQ(sim.streams()[0].packets, 4u);
  EXPECT_EQ(sim.stats().data_delivered, 4u);
  EXPECT_GT(sim.streams()[0].finish, first);
  EXPECT_EQ(sim.delivered_slices(id), std::numeric_limits<int64_t>::max());
}

TEST(PacketSim, OneFlowOnAnIdlePathIsLineRatePlusLatency) {
  // Hosts 0 and 1 under one leaf: gpu -PCIe-> nic -3 m copper-> leaf -> nic -PCIe-> gpu.
  // Link latencies: PCIe 500 ns, 3 m copper 15 ns; switch 600 ns; stack 5 us.
  // S = 1,000,000 B = 244 packets of 4096 B + one of 576 B (244 x 4096 = 999,424).
  // Latency paid = hop latency = 500 + 15 + 600 + 15 + 500 ns + 5 us = 6.63 us, of which
  // 1.63 us is physical, so the NIC starts at 6.63 - 1.63 + 0.5 (PCIe prefix) = 5.5 us.
  // ser(4178 B at 100G) = 334,240 ps; ser(658 B) = 52,640 ps; 576 B on PCIe (512 Gb/s x the pcie
  // class efficiency 0.894 = 457.728 Gb/s, no transport header; engine/link_classes.hpp)
  // = 4,608 b / 457.728e9 = 10,067 ps.
  // The last full packet (243) leaves the NIC at 5.5 us + 243 x 334,240 and reaches the leaf
  // 334,240 + 615,000 ps later; packet 244 arrives behind it (52,640 < 334,240) and waits:
  //   finish = 5,500,000 + 244 x 334,240 + 615,000 + 334,240 + 52,640 + 15,000 (leaf -> nic)
  //          + 500,000 + 10,067 (PCIe suffix) = 88,581,507 ps.
  // The flow engine: 6.63 us + 8e6 / (100e9 x 4096 / 4178) = 88.233 us; the difference is one
  // MTU time (store-and-forward at the leaf): 88.582 - 88.233 = 0.349 us < 0.334 us + 0.053 us + 0.010 us.
  const auto topo = one_leaf(4);
  PacketOptions opt;
  PacketSim sim(topo, net(), opt);
  add(sim, 0, 1, 1'000'000);
  run(sim);
  ASSERT_EQ(sim.streams().size(), 1u);
  const StreamRecord& r = sim.streams()[0];
  EXPECT_EQ(r.first_send.ps, 5'500'000);
  EXPECT_EQ(r.finish.ps, 88'581'507);
  EXPECT_EQ(r.packets, 245u);
  EXPECT_EQ(r.retransmits, 0u);
  EXPECT_EQ(sim.stats().data_delivered, 245u);
  EXPECT_EQ(sim.stats().drops, 0u);
  EXPECT_EQ(sim.stats().ecn_marks, 0u);
  const double flow_us = 6.63 + 8e6 / (100e9 * 4096.0 / 4178.0) * 1e6;
  EXPECT_NEAR(r.finish.us(), flow_us, 0.334240 + 0.052640);
  // Throughput on the NIC uplink: payload rate of back-to-back packets = 100G x 4096/4178.
  const double send_time_s = (244 * 334'240 + 52'640) * 1e-12;
  EXPECT_NEAR(1e6 * 8 / send_time_s / 1e9, 100.0 * 4096 / 4178, 0.5);
}

// Incast N -> 1 under one leaf with PFC and no congestion control.
struct IncastResult {
  std::vector<double> finish_us;
  uint64_t drops = 0, pauses_sent = 0, pauses_received = 0;
  double paused_us = 0;
  double makespan_us = 0;
};

IncastResult incast(int n, const PacketOptions& opt, Bytes bytes) {
  const auto topo = one_leaf(64);
  PacketSim sim(topo, net(), opt);
  for (int s = 1; s <= n; ++s) add(sim, s, 0, bytes, 0, Time(), static_cast<uint64_t>(s));
  run(sim);
  IncastResult r;
  for (const auto& s : sim.streams()) r.finish_us.push_back(s.finish.us());
  r.makespan_us = *std::max_element(r.finish_us.begin(), r.finish_us.end());
  r.drops = sim.stats().drops;
  r.pauses_sent = static_cast<uint64_t>(total(sim, [](const PortStats& p) { return p.pause_tx; }));
  r.pauses_received = static_cast<uint64_t>(total(sim, [](const PortStats& p) { return p.pause_rx; }));
  r.paused_us = total(sim, [](const PortStats& p) { return p.paused.us(); });
  EXPECT_EQ(sim.open_streams(), 0);
  EXPECT_EQ(sim.stats().data_delivered, static_cast<uint64_t>(n) * ((bytes + 4095) / 4096));
  return r;
}

class Incast : public ::testing::TestWithParam<int> {};

TEST_P(Incast, PfcIsLosslessAndFair) {
  // N senders of S = 512 KiB to one receiver through one leaf, CC off, PFC on,
  // an 4 MB switch buffer (so the dynamic threshold is reached: 128 ports x
  // ~20 KB headroom + 4 KB reserve leave ~0.9 MB shared, alpha = 1/8).
  // The receiver's port is the bottleneck: makespan = N S / (100G x 4096/4178)
  // + latency; PFC pauses the senders instead of dropping; FIFO service with
  // per-ingress pause keeps the shares equal, so all finish together.
  const int n = GetParam();
  PacketOptions opt;
  opt.cc = "none";
  opt.buffer_bytes = 4'000'000;
  const Bytes bytes = 512 * 1024;
  const IncastResult r = incast(n, opt, bytes);
  EXPECT_EQ(r.drops, 0u);
  EXPECT_GT(r.pauses_sent, 0u);
  EXPECT_EQ(r.pauses_sent, r.pauses_received);
  EXPECT_GT(r.paused_us, 0.0);
  const double ideal_us = n * bytes * 8.0 / (100e9 * 4096.0 / 4178.0) * 1e6 + 6.63;
  EXPECT_NEAR(r.makespan_us, ideal_us, 0.02 * ideal_us);
  const double first = *std::min_element(r.finish_us.begin(), r.finish_us.end());
  EXPECT_LT((r.makespan_us - first) / r.makespan_us, 0.05) << "first " << first << " last " << r.makespan_us;
}

INSTANTIATE_TEST_SUITE_P(PacketSim, Incast, ::testing::Values(2, 8, 32));

TEST(PacketSim, LossyIncastDropsRetransmitsAndDeliversEverything) {
  // PFC off, 300 KB buffer: the lossy class may hold at most 1/8 of the free
  // buffer on the receiver's port (<= 37.5 KB, 9 packets), while 8 senders at
  // line rate arrive 8x faster than it drains: drops are certain; go-back-N
  // (NACK, then RTO for tail losses) must still deliver every byte.
  PacketOptions opt;
  opt.cc = "none";
  opt.pfc = false;
  opt.buffer_bytes = 300'000;
  const auto topo = one_leaf(16);
  PacketSim sim(topo, net(), opt);
  const Bytes bytes = 256 * 1024;
  for (int s = 1; s <= 8; ++s) add(sim, s, 0, bytes);
  run(sim);
  EXPECT_EQ(sim.open_streams(), 0);
  EXPECT_GT(sim.stats().drops, 0u);
  EXPECT_GT(sim.stats().retransmits, 0u);
  EXPECT_GT(sim.stats().nacks, 0u);
  EXPECT_EQ(sim.stats().pause_frames, 0u);
  EXPECT_EQ(sim.stats().data_delivered, 8u * 64u);
  for (const auto& s : sim.streams()) EXPECT_GT(s.finish.ps, 0);
  // The queue never exceeded the lossy limit (37.5 KB) by more than one packet.
  Bytes q = 0;
  for (const auto& p : sim.port_stats()) q = std::max(q, p.max_queue);
  EXPECT_LE(q, 300'000 / 8 + 4178);
}

TEST(PacketSim, HeadroomFollowsTheFormula) {
  // Leaf ingress from a NIC over 3 m copper (15 ns) at 100G, switch latency 600 ns:
  // h = 2 x 4178 + 3840 + 100e9 x (2 x 15 ns + 600 ns) / 8 = 8,356 + 3,840 + 7,875 = 20,071 B.
  const auto topo = one_leaf(4);
  PacketSim sim(topo, net(), PacketOptions{});
  const topology::NodeId nic = topo.gpu_nic[0];
  routing::DirLink up = -1;
  for (size_t l = 0; l < topo.links.size(); ++l)
    if (topo.links[l].a == nic || topo.links[l].b == nic)
      if (topo.nodes[topo.other_end(static_cast<topology::LinkId>(l), nic)].kind == topology::NodeKind::Switch)
        up = routing::dir_link(static_cast<topology::LinkId>(l), nic, topo);
  ASSERT_GE(up, 0);
  EXPECT_EQ(sim.headroom_of(up), 20'071);
  // Buffer of the leaf: its ports x 100G x 40 us = ports x 500 KB.
  const topology::NodeId leaf = routing::dir_to(up, topo);
  auto [b, e] = topo.incident(leaf);
  EXPECT_EQ(sim.buffer_of(leaf), static_cast<Bytes>(e - b) * 500'000);
}

// Per-stream throughput (Gb/s) between two sample times.
std::vector<double> window_gbps(const PacketSim& sim, Time t0, Time t1) {
  std::vector<double> a(sim.streams().size(), -1), b(sim.streams().size(), -1);
  for (const auto& s : sim.stream_samples()) {
    if (s.time == t0) a[s.stream] = static_cast<double>(s.delivered);
    if (s.time == t1) b[s.stream] = static_cast<double>(s.delivered);
  }
  std::vector<double> out;
  for (size_t i = 0; i < a.size(); ++i) out.push_back((b[i] - a[i]) * 8 / (t1 - t0).seconds() / 1e9);
  return out;
}

double jain(const std::vector<double>& x) {
  double s = 0, s2 = 0;
  for (double v : x) {
    s += v;
    s2 += v * v;
  }
  return s * s / (static_cast<double>(x.size()) * s2);
}

TEST(PacketSim, DcqcnFlowsConvergeToAFairShareWithTheQueueInTheEcnBand) {
  // Three 30 MB flows into one receiver under one leaf, starting 0, 300 and
  // 600 us apart, DCQCN NIC preset, PFC on. At 100G the ECN band is
  // Kmin = 400 KB .. Kmax = 1.6 MB (100/400 KB x 100/25). Once all three run
  // (window 1.5 .. 6.5 ms; the first would end near 9 ms at a third of the
  // link) DCQCN should hold each near a third of the 98 Gb/s payload rate
  // (Jain's index >= 0.97, every flow within 25 % of the mean), keep the
  // bottleneck queue mostly below Kmax and above zero on average, and need no PFC.
  const auto topo = one_leaf(16);
  PacketOptions opt;
  opt.cc = "dcqcn_nic";
  opt.sample_interval = 100_us;
  opt.sample_streams = true;
  std::vector<routing::PathPart> r;
  {
    PacketSim probe(topo, net(), opt);
    probe.route(1, 0, 0, r);
  }
  ASSERT_EQ(r.size(), 4u);  // gpu->nic, nic->leaf, leaf->nic (the bottleneck), nic->gpu
  opt.sample_ports = {r[2].link};
  PacketSim sim(topo, net(), opt);
  for (int s = 1; s <= 3; ++s) add(sim, s, 0, 30'000'000, 0, Time((s - 1) * 300'000'000LL));
  run(sim);
  const std::vector<double> g = window_gbps(sim, 1500_us, 6500_us);
  double sum = 0;
  for (double v : g) sum += v;
  const double mean = sum / 3;
  EXPECT_GE(jain(g), 0.97) << g[0] << " " << g[1] << " " << g[2];
  for (double v : g) EXPECT_NEAR(v, mean, 0.25 * mean);
  EXPECT_GT(sum, 0.85 * 100 * 4096.0 / 4178.0);
  double q = 0;
  int n = 0;
  for (const auto& smp : sim.samples())
    if (smp.time >= 1500_us && smp.time <= 6500_us) {
      q += static_cast<double>(smp.bytes);
      ++n;
    }
  q /= n;
  EXPECT_GT(q, 0.0);
  EXPECT_LT(q, 1'600'000.0);
  EXPECT_GT(sim.stats().ecn_marks, 0u);
  EXPECT_GT(sim.stats().cnps, 0u);
  EXPECT_EQ(sim.stats().drops, 0u);
  EXPECT_EQ(sim.stats().pause_frames, 0u);
}

TEST(PacketSim, TheScenariosEcnBandReplacesTheAlgorithms) {
  // Two 1 MB flows into one receiver under DCQCN (dcqcn_paper's own band: Kmin 5 KB, Kmax 200 KB, Pmax 1 %),
  // each band given as a step (kmin = kmax, pmax 1). DCQCN slows the senders only on marks, so the receiver's
  // queue climbs to the step and stays a few packets above it: its peak is the step plus what the senders put
  // out before the first CNP takes effect (under 40 KB here, ten 4 KB packets). A step no queue reaches (2 MB:
  // both flows together are 2 MB) marks nothing.
  const auto topo = one_leaf(16);
  const auto run_with = [&](Bytes kmin, Bytes kmax, double pmax) {
    PacketOptions opt;
    opt.cc = "dcqcn_paper";
    opt.ecn_kmin = kmin;
    opt.ecn_kmax = kmax;
    opt.ecn_pmax = pmax;
    PacketSim sim(topo, net(), opt);
    add(sim, 1, 0, 1'000'000);
    add(sim, 2, 0, 1'000'000);
    run(sim);
    int64_t peak = 0;
    for (const auto& s : sim.port_stats()) peak = std::max(peak, s.max_queue);
    return std::pair{sim.stats().ecn_marks, peak};
  };
  for (const Bytes step : {100'000, 300'000}) {
    const auto [marks, peak] = run_with(step, step, 1.0);
    EXPECT_GT(marks, 0u) << step;
    EXPECT_GT(peak, step);
    EXPECT_LT(peak, step + 40'000);
  }
  EXPECT_EQ(run_with(2'000'000, 2'000'000, 1.0).first, 0u);
  // A band whose bottom is above its top is refused.
  PacketOptions bad;
  bad.cc = "dcqcn_paper";
  bad.ecn_kmin = 300'000;  // above the paper's Kmax of 200 KB
  EXPECT_THROW(PacketSim(topo, net(), bad), InputError);
}

TEST(PacketSim, StreamSamplesCarryAWindowBasedAlgorithmsWindow) {
  // qp_rates.csv's window column: DCTCP paces by its window (its rate stays the line rate), DCQCN by its rate
  // (no window: 0).
  const auto topo = one_leaf(16);
  for (const char* cc : {"dctcp", "dcqcn_paper"}) {
    PacketOptions opt;
    opt.cc = cc;
    opt.sample_interval = 10_us;
    opt.sample_all_ports = true;
    opt.sample_streams = true;
    PacketSim sim(topo, net(), opt);
    add(sim, 1, 0, 1'000'000);
    add(sim, 2, 0, 1'000'000);
    run(sim);
    ASSERT_FALSE(sim.stream_samples().empty()) << cc;
    uint32_t largest = 0;
    for (const auto& s : sim.stream_samples()) largest = std::max(largest, s.window);
    if (std::string(cc) == "dctcp") EXPECT_GT(largest, 0u);
    else EXPECT_EQ(largest, 0u);
  }
}

TEST(PacketSim, CongestionControlLeavesTrafficInsideAServerAlone) {
  // GPUs 1 and 2 send to GPU 0 of the same 8-GPU server: over NVLink, no network link on the route. The
  // fabric's algorithm runs on NIC QPs, not NVLink copies, so every one gives the finish times of `none` to
  // the picosecond and no window (nscc's window and hpcc's INT acknowledgements added 1 % before).
  const topology::Topology t =
      topology::build_with("rail_clos", {{"gpus", "16"}}, topology::testing::hw_with(8, 8, 16));
  std::vector<routing::PathPart> r;
  PacketSim(t, net(), PacketOptions{}).route(1, 0, 0, r);
  for (const auto& part : r) {
    const auto media = t.links[routing::link_of(part.link)].media;
    ASSERT_TRUE(media != topology::Media::Copper && media != topology::Media::Optical);
  }
  auto finishes = [&](const char* cc) {
    PacketOptions opt;
    opt.cc = cc;
    opt.sample_interval = 1_us;
    opt.sample_streams = true;
    PacketSim sim(t, net(), opt);
    add(sim, 1, 0, 4'000'000);
    add(sim, 2, 0, 4'000'000);
    run(sim);
    uint32_t window = 0;
    for (const auto& s : sim.stream_samples()) window = std::max(window, s.window);
    EXPECT_EQ(window, 0u) << cc;
    std::vector<int64_t> f;
    for (const auto& s : sim.streams()) f.push_back(s.finish.ps);
    return f;
  };
  const std::vector<int64_t> none = finishes("none");
  ASSERT_EQ(none.size(), 2u);
  for (const char* cc : {"nscc", "dctcp", "hpcc", "rccc", "swift", "timely", "dcqcn_nic"})
    EXPECT_EQ(finishes(cc), none) << cc;
}

TEST(PacketSim, DcqcnPaperPresetSharesEqually) {
  // Two 10 MB flows into one receiver, started together, paper preset
  // (Kmin 5 KB, Kmax 200 KB, Pmax 1 %): both are cut by CNPs and finish
  // within 5 % of each other; the CNPs respect N = 50 us per QP.
  const auto topo = one_leaf(16);
  PacketOptions opt;
  opt.cc = "dcqcn_paper";
  PacketSim sim(topo, net(), opt);
  add(sim, 1, 0, 10'000'000);
  add(sim, 2, 0, 10'000'000);
  run(sim);
  const auto& s = sim.streams();
  EXPECT_NEAR(s[0].finish.us(), s[1].finish.us(), 0.05 * std::max(s[0].finish.us(), s[1].finish.us()));
  EXPECT_GT(s[0].cnps, 0u);
  EXPECT_GT(s[1].cnps, 0u);
  for (const auto& x : s) EXPECT_LE(x.cnps, static_cast<uint32_t>(x.finish.us() / 50.0) + 1);
  EXPECT_EQ(sim.stats().drops, 0u);
}

struct PolicyRun {
  std::vector<double> gbps;  // per flow, sorted
  uint32_t max_reorder = 0;
  Time max_reorder_delay;
};

PolicyRun permutation(const std::string& policy) {
  // k = 4 fat-tree (16 hosts, 4 core paths between pods): host s sends 2 MB to s + 9 mod 16 (another pod).
  const auto topo = kary(4);
  PacketSim sim(topo, net(policy), PacketOptions{});
  for (int s = 0; s < 16; ++s) add(sim, s, (s + 9) % 16, 2'000'000);
  run(sim);
  PolicyRun r;
  for (const auto& x : sim.streams()) r.gbps.push_back(2e6 * 8 / (x.finish - x.first_send).seconds() / 1e9);
  std::sort(r.gbps.begin(), r.gbps.end());
  r.max_reorder = sim.stats().max_reorder_packets;
  r.max_reorder_delay = sim.stats().max_reorder_delay;
  EXPECT_EQ(sim.open_streams(), 0);
  EXPECT_EQ(sim.stats().drops, 0u);
  EXPECT_EQ(sim.stats().data_delivered, 16u * 489u);
  return r;
}

TEST(PacketSim, EcmpSprayAdaptiveOnAPermutation) {
  // ECMP hashes 16 flows onto 4 core paths per pod pair: collisions halve (or
  // worse) some flows. Spraying splits every destination's packets evenly
  // over all paths: every flow near the payload rate (98 Gb/s less the ~8 us
  // of pipeline latency on 163 us), at the price of reordering. Adaptive
  // (least-queued next hop) sits between: it balances the up links it sees
  // but not the down links in the destination pod.
  const PolicyRun ecmp = permutation("ecmp"), spray = permutation("spray"), adaptive = permutation("adaptive");
  EXPECT_GE(spray.gbps.front(), 88.0);
  EXPECT_LT(ecmp.gbps.front(), 0.6 * spray.gbps.front());
  EXPECT_GT(adaptive.gbps.front(), ecmp.gbps.front());
  EXPECT_EQ(ecmp.max_reorder, 0u);
  EXPECT_GT(spray.max_reorder, 0u);
  EXPECT_GT(spray.max_reorder_delay.ps, 0);
  EXPECT_GT(adaptive.max_reorder, 0u);
}

TEST(PacketSim, Deterministic) {
  // Same inputs, two simulations in one process: identical outcomes.
  auto once = [] {
    const auto topo = kary(4);
    PacketOptions opt;
    opt.cc = "dcqcn_paper";
    PacketSim sim(topo, net(), opt);
    for (int s = 0; s < 16; ++s) add(sim, s, (s * 5 + 3) % 16, 300'000 + 1000 * s, static_cast<uint64_t>(s));
    for (int s = 1; s < 6; ++s) add(sim, s, 0, 200'000);
    run(sim);
    std::vector<int64_t> out;
    for (const auto& r : sim.streams()) out.push_back(r.finish.ps);
    out.push_back(static_cast<int64_t>(sim.stats().events));
    out.push_back(static_cast<int64_t>(sim.stats().ecn_marks));
    out.push_back(static_cast<int64_t>(sim.stats().cnps));
    out.push_back(static_cast<int64_t>(sim.stats().pause_frames));
    return out;
  };
  EXPECT_EQ(once(), once());
}

}  // namespace
}  // namespace podnet::engine::packet
