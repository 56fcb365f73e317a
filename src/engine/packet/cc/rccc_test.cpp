// RCCC (rccc.hpp): receiver credits on the packet engine, with hand-derived figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/packet/packet_test_util.hpp"

using namespace podnet;
using namespace podnet::engine;
using namespace podnet::engine::packet;
using namespace podnet::engine::packet::testing;

namespace {

PacketOptions lossy(const char* cc) {
  PacketOptions opt;
  opt.cc = cc;
  opt.pfc = false;
  return opt;
}

// One leaf, 100 Gb/s, 3 m cables (15 ns), 600 ns through the switch, 4,096 + 82 bytes a packet.
// A QP's unloaded round trip: latencies 615 + 15 out and 15 + 615 back = 1,260 ns, a data packet's
// serialization twice (2 x 334.24 ns) and an ACK's twice (2 x 6.72 ns): 1,941.92 ns. Its credit cap
// C = 1.5 x 12.5 GB/s x 1,941.92 ns = 36,411 B. A pull grants 4 x 4,096 B = 16,384 B (64 quanta of 256),
// and the pacer waits 16,384 x 8 / (0.99 x 100 Gb/s) = 1.32396 us after each.
constexpr double kWire = 4178;
constexpr double kLine = 100e9;
constexpr double kCap = 36'411;
constexpr double kPerPull = 16'384;

}  // namespace

TEST(Rccc, ALongFlowIsPacedByTheReceiversCreditAt99PercentOfItsLine) {
  // 8 MiB = 2,048 packets, 8,556,544 B on the wire. Only C of it may go before the receiver grants;
  // grants come at 0.99 of the line. So the flow cannot finish before (S - C) / (0.99 x line) =
  // 688.50 us (at line rate it would take 684.52 us), and it finishes within a few round trips of
  // S / (0.99 x line) = 691.44 us.
  const auto topo = one_leaf(4);
  PacketSim sim(topo, net(), lossy("rccc"));
  add(sim, 1, 2, 8 << 20);
  run(sim);
  const double s = 2048 * kWire;
  const auto& st = sim.streams()[0];
  const double fct = (st.finish - st.first_send).seconds();
  EXPECT_GE(fct, (s - kCap) * 8 / (0.99 * kLine));
  EXPECT_LE(fct, s * 8 / (0.99 * kLine) + 5e-6);
  // Credit accounting: the sender spent S, at most C of it speculative, so the pulls granted at least
  // S - C: ceil(8,520,133 / 16,384) = 521 pulls. (There are more: a pull grants only what was asked, and
  // the pacer sometimes catches up with the request, which reaches it a one-way trip late.)
  const auto need = static_cast<uint64_t>(std::ceil((s - kCap) / kPerPull));
  EXPECT_EQ(need, 521u);
  EXPECT_GE(sim.stats().pulls, need);
  EXPECT_EQ(sim.stats().trims, 0u);
  EXPECT_EQ(sim.stats().retransmits, 0u);
  EXPECT_EQ(sim.stats().ecn_marks, 0u);
}

TEST(Rccc, TheReceiverSharesItsLineRoundRobin) {
  // Two 4 MiB flows into one NIC. 2 x C = 72.8 KB of speculation fits the leaf's queue: nothing is
  // trimmed. Then the pacer serves the two in turn, a pull each: they finish within two pull times
  // (2.65 us) of each other, and the last one no sooner than both at the line rate: 2 x 1,024 x 4,178 B
  // at 100 Gb/s = 684.52 us; no later than at 0.99 of it plus a few round trips (691.44 us + 5 us).
  const auto topo = one_leaf(4);
  PacketSim sim(topo, net(), lossy("rccc"));
  add(sim, 1, 0, 4 << 20);
  add(sim, 2, 0, 4 << 20);
  run(sim);
  EXPECT_EQ(sim.stats().trims, 0u);
  const auto& a = sim.streams()[0];
  const auto& b = sim.streams()[1];
  const double fa = (a.finish - a.first_send).seconds(), fb = (b.finish - b.first_send).seconds();
  EXPECT_LE(std::abs(fa - fb), 2 * kPerPull * 8 / (0.99 * kLine));
  const double s = 2 * 1024 * kWire * 8;
  EXPECT_GE(std::max(fa, fb), s / kLine);
  EXPECT_LE(std::max(fa, fb), s / (0.99 * kLine) + 5e-6);
}

TEST(Rccc, AnIncastEndsTogetherWhereNsccLetsSomeFlowsFinishFirst) {
  // 8-to-1 on a k = 4 fat-tree (2 MB each; the incast of docs/contributing/validation/transports.md).
  // Under NSCC each sender finds its own window, and the receiver is not shared fairly. Under RCCC
  // the receiver deals out its line: the last flow ends within 5 % of the first (htsim: 3.2 %), and
  // all of them together take at least 8 x 490 x 4,178 B at 100 Gb/s = 1,310.2 us.
  const auto topo = kary(4);
  auto spread = [&](const char* cc) {
    PacketSim sim(topo, net("reps"), lossy(cc));
    for (int s = 1; s <= 8; ++s) add(sim, s, 0, 490 * 4096);
    run(sim);
    EXPECT_EQ(sim.open_streams(), 0);
    EXPECT_EQ(sim.stats().timeouts, 0u);
    double lo = 1e9, hi = 0;
    for (const auto& st : sim.streams()) {
      const double f = (st.finish - st.first_send).seconds();
      lo = std::min(lo, f);
      hi = std::max(hi, f);
    }
    return std::pair{lo, hi};
  };
  const auto [rlo, rhi] = spread("rccc");
  EXPECT_LE(rhi / rlo, 1.05);
  EXPECT_GE(rhi, 8 * 490 * kWire * 8 / kLine);
  const auto [nlo, nhi] = spread("nscc");
  EXPECT_GT(nhi / nlo, 1.3);
}

TEST(Rccc, UnderReceiverCreditsThePortIntoANicDoesNotMark) {
  // nscc_rccc: NSCC's window and RCCC's credit. The receiver's pacer owns the last hop, so the leaf's
  // port into the receiving NIC never marks, however long its queue (the incast fills it).
  const auto topo = one_leaf(16);
  PacketSim sim(topo, net(), lossy("nscc_rccc"));
  for (int s = 1; s <= 8; ++s) add(sim, s, 0, 256 * 1024);
  run(sim);
  EXPECT_EQ(sim.open_streams(), 0);
  EXPECT_EQ(sim.stats().ecn_marks, 0u);
  EXPECT_GT(sim.stats().pulls, 0u);
  EXPECT_EQ(sim.stats().retransmits, sim.stats().trims);
}
