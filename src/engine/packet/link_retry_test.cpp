// Link-level retry (PacketOptions::link_retry, Ultra Ethernet's LLR): a link that corrupts packets resends
// them itself, in order, and the transport never sees a loss.
#include <gtest/gtest.h>

#include "engine/packet/packet_test_util.hpp"

using namespace podnet;
using namespace podnet::engine;
using namespace podnet::engine::packet;
using namespace podnet::engine::packet::testing;

namespace {

struct FlowRun {
  double fct = 0;
  SimStats stats;
};

// One 4 MiB flow from host 1 to host 2 under one leaf (DCQCN, PFC); the host's link into the leaf loses
// each packet with probability `p` (a corrupting cable).
FlowRun one_flow(double p, bool retry) {
  const auto topo = one_leaf(4);
  NetworkOptions n = net();
  PacketOptions opt;
  opt.link_retry = retry;
  if (p > 0) {
    SilentFault f;
    f.dirs = {first_cable(topo, n, opt, 1, 2)};  // the host's NIC into the leaf
    EXPECT_GE(f.dirs[0], 0);
    f.probability = p;
    f.what = "a corrupting cable";
    n.faults.silent_faults.push_back(f);
  }
  PacketSim sim(topo, n, opt);
  add(sim, 1, 2, 4 << 20);
  run(sim);
  EXPECT_EQ(sim.open_streams(), 0);
  const auto& st = sim.streams()[0];
  return {(st.finish - st.first_send).seconds(), sim.stats()};
}

}  // namespace

TEST(LinkRetry, ACorruptingLinkResendsItselfAndTheTransportSeesNoLoss) {
  // 1,024 packets of 4,178 B cross the faulty link at 100 Gb/s: 334.24 ns each, 3 m of cable (15 ns).
  // A resend costs the link shift = 2 x 15 + 334.24 = 364.24 ns, and delays what follows by as much, so
  // the flow ends no later than the clean run plus (retries x 364.24 ns), and no sooner than the clean run.
  // Its ACKs cross the link the other way, clean. At 1 % about 10 packets are resent (measured: 16 resends,
  // 343.80 -> 349.63 us, the link being the flow's bottleneck: each resend costs it exactly one shift).
  const FlowRun clean = one_flow(0, true);
  const FlowRun llr = one_flow(0.01, true);
  const FlowRun e2e = one_flow(0.01, false);
  EXPECT_EQ(clean.stats.link_retries, 0u);
  EXPECT_GE(llr.stats.link_retries, 3u);
  EXPECT_LE(llr.stats.link_retries, 30u);
  EXPECT_EQ(llr.stats.retransmits, 0u);
  EXPECT_EQ(llr.stats.nacks, 0u);
  EXPECT_EQ(llr.stats.timeouts, 0u);
  EXPECT_EQ(llr.stats.silent, 0u);
  EXPECT_GE(llr.fct, clean.fct);
  EXPECT_LE(llr.fct, clean.fct + static_cast<double>(llr.stats.link_retries) * 364.24e-9 + 10e-9);
  // Without it, the same losses reach the transport: holes, NACKs and go-back-N resends, and a longer flow.
  EXPECT_GT(e2e.stats.silent, 0u);
  EXPECT_GT(e2e.stats.retransmits, 0u);
  EXPECT_GT(e2e.fct, llr.fct);
}
