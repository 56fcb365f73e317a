// ECMP hash collisions in the flow engine, against balls-into-bins
// (docs/contributing/validation/collectives.md, figure d).
//
// Fabric: 2-tier fat_tree of 32-port switches, one GPU and one NIC per
// server: a leaf has d1 = 16 hosts and u1 = 16 uplinks, one to each of the 16
// spines (32 leaves x 1 link = the spine's 32 ports). 512 hosts; host j of
// leaf i is rank 16 i + j. Non-blocking: 16 x 400G down, 16 x 400G up.
//
// Traffic: a permutation of k = 512 long P2p transfers, host j of leaf i ->
// host j of leaf i + 1 (mod 32), S = 256 MiB each, all from t = 0.
//
// Model. Only leaf i sends to leaf i + 1, so a transfer's path is fixed by
// the spine s its leaf picks: leaf i -> s -> leaf i + 1, and the downlink
// s -> leaf i + 1 carries exactly the flows of leaf i that picked s. The NIC
// links carry one transfer each (its q QPs). Each leaf therefore throws
// k = 16 flows (x q QPs) into m = 16 bins (uplinks), independently of the
// other leaves; ECMP's hash is a pseudo-random function of the 5-tuple, so
// the bins are treated as uniform and independent choices.
//
// With q = 1: a bin with L flows gives each of them B / L (B = NIC payload
// rate); all L finish together, so a transfer's throughput is exactly B / L.
// Summed over a leaf's flows, sum 1/L = number of used bins, so
//   mean throughput / B = (used uplinks) / 16, and its expectation is the
//   expected fraction of bins hit: 1 - (1 - 1/m)^k = 1 - (15/16)^16 = 0.64393.
// Per leaf the number of used bins has standard deviation 1.2551 (from
// Var = m(m-1)(1-2/m)^k + m(1-1/m)^k - m^2 (1-1/m)^(2k) for empty bins), so
// the mean over 32 leaves has sd 1.2551 / 16 / sqrt(32) = 0.01387; the test
// accepts +-4 sd: [0.5885, 0.6994].
// Minimum throughput = B / Lmax, Lmax the fullest of the 512 bins. Exact
// distribution of the max load of 16 balls in 16 bins (multinomial):
// P(max <= 3) = 0.7688, P(<= 4) = 0.9629, P(<= 6) = 0.9996, P(<= 7) = 0.99997;
// over 32 leaves P(Lmax <= t) = P(max <= t)^32: E[Lmax] = 4.85, and
// P(4 <= Lmax <= 7) = 0.99903 - 0.00022 > 0.998. So min / B is in [1/7, 1/4].
//
// With q QPs (NCCL_IB_QPS_PER_CONNECTION) each transfer is q flows of S/q,
// hashed independently (the UDP source port differs): 16q balls into 16
// bins per leaf. Minimum over transfers, exactly: let Lmax be the fullest bin
// (>= q, the mean). Lower bound: in a max-min allocation every flow gets at
// least min over its links of capacity / (flows on the link), and the flow
// counts only fall as flows end; a QP's links hold at most max(q, L) flows
// (q on its NICs, L on its bin), so it ends by (S/q) max(q, L) / B and the
// transfer's throughput is >= B q / max(q, L of its fullest bin). Upper
// bound: the fullest bin moves Lmax S/q bytes at most at B, so the transfer
// owning its last QP reaches at most B q / Lmax. Hence min / B = q / Lmax.
// E[Lmax] over 32 leaves: q = 1: 4.85; q = 4: 10.93 (64 balls, exact
// multinomial, P(Lmax <= 15) = 0.99925, P(Lmax >= 9) = 0.99994); q = 16: ~29
// (Monte Carlo; sd of a bin 3.87). So min / B ~ 0.21, 0.37, 0.55: more QPs
// raise the minimum. The orderings asserted (min(4) > min(1), min(16) >
// min(4)) held in 2,000 of 2,000 Monte Carlo draws of the hash.
// The mean is another matter: a transfer ends with its slowest QP, so with q
// QPs it is exposed to the fullest of up to q bins. The lower bound above,
// averaged over transfers (Monte Carlo, 2,000 draws): q = 4: 0.617 (sd
// 0.015), q = 16: 0.704 (sd 0.010), against 0.644 (sd 0.014) for q = 1. So 4
// QPs may lower the mean per-transfer throughput while raising the minimum
// (not asserted either way); 16 QPs raise both: mean(16) > mean(1) failed in
// 0 of 3,000 draws (z = 3.5 on the lower bound alone).
//
// adaptive: each flow takes the least-loaded uplink, so a leaf's 16 flows
// land on 16 different uplinks: every transfer runs at B (ideal). spray:
// every flow is split 1/16 over the 16 uplinks: each carries 16/16 = 1 flow
// worth, again B for everyone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "engine/registry.hpp"
#include "routing/router.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::engine {
namespace {

using namespace podnet::literals;

constexpr double kNicPayloadBps = 400e9 * 4096.0 / 4178.0;  // B, as in engine_validation_test.cpp
// GPU -> PCIe -> NIC -> leaf -> spine -> leaf -> NIC -> PCIe -> GPU:
// 500 + 15 + 600 + 150 + 600 + 150 + 600 + 15 + 500 = 3,130 ns + 5 us stack.
constexpr double kHopNs = 8130;
constexpr int32_t kLeaves = 32, kHostsPerLeaf = 16;
constexpr Bytes kBytes = 256_MiB;

const topology::Topology& fabric() {
  static const topology::Topology t =
      topology::build_with("fat_tree", {{"gpus", "512"}, {"tiers", "2"}}, topology::testing::hw_with(1, 1, 32));
  return t;
}

int32_t dst_of(int32_t src) { return (src + kHostsPerLeaf) % (kLeaves * kHostsPerLeaf); }

plan::TransferPlan permutation(int32_t qps) {
  plan::TransferPlan plan;
  for (int32_t src = 0; src < kLeaves * kHostsPerLeaf; ++src) {
    plan::Transfer t;
    t.kind = plan::TransferKind::P2p;
    t.ranks = {src, dst_of(src)};
    t.bytes = kBytes;
    t.qps = qps;
    plan.add(std::move(t));
  }
  return plan;
}

NetworkOptions options(const std::string& policy) {
  NetworkOptions o;
  o.routing.policy = policy;
  o.routing.seed = 1;
  return o;
}

// The leaf -> spine directed link of a route.
routing::DirLink uplink(const topology::Topology& t, const std::vector<routing::PathPart>& parts) {
  for (const auto& p : parts) {
    const auto& from = t.nodes[routing::dir_from(p.link, t)];
    const auto& to = t.nodes[routing::dir_to(p.link, t)];
    if (from.kind == topology::NodeKind::Switch && from.tier == 1 && to.kind == topology::NodeKind::Switch &&
        to.tier == 2)
      return p.link;
  }
  ADD_FAILURE() << "route without a leaf -> spine link";
  return -1;
}

struct Bins {
  std::vector<std::vector<routing::DirLink>> qp_uplink;  // [transfer][qp]
  std::map<routing::DirLink, int32_t> load;              // QPs per uplink
  int32_t max_load = 0;
  double used_fraction = 0;  // mean over leaves of used uplinks / 16
};

// The bins each QP falls into, from a Router built as the engines build it
// (same options, entropy = channel x 1024 + QP index, channel 0).
Bins ecmp_bins(int32_t qps, uint64_t seed = 1) {
  NetworkOptions o = options("ecmp");
  o.routing.seed = seed;
  routing::Router router(fabric(), o.routing);
  Bins b;
  std::vector<routing::PathPart> parts;
  for (int32_t src = 0; src < kLeaves * kHostsPerLeaf; ++src) {
    b.qp_uplink.emplace_back();
    for (int32_t q = 0; q < qps; ++q) {
      parts.clear();
      router.route(src, dst_of(src), static_cast<uint64_t>(q), 1.0, parts);
      const routing::DirLink u = uplink(fabric(), parts);
      b.qp_uplink.back().push_back(u);
      ++b.load[u];
    }
  }
  for (const auto& [u, l] : b.load) b.max_load = std::max(b.max_load, l);
  for (int32_t leaf = 0; leaf < kLeaves; ++leaf) {
    std::set<routing::DirLink> used;
    for (int32_t j = 0; j < kHostsPerLeaf; ++j)
      for (routing::DirLink u : b.qp_uplink[leaf * kHostsPerLeaf + j]) used.insert(u);
    b.used_fraction += static_cast<double>(used.size()) / kHostsPerLeaf / kLeaves;
  }
  return b;
}

// Per-transfer throughput / B: S x 8 / (finish - start - hop latency) / B.
std::vector<double> throughputs(const RunReport& r) {
  std::vector<double> x;
  for (const auto& t : r.transfers) {
    const double s = (t.finish - t.start).seconds() - kHopNs * 1e-9;
    x.push_back(8.0 * static_cast<double>(kBytes) / s / kNicPayloadBps);
  }
  return x;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}
double minimum(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

std::vector<double> run_flow(const std::string& policy, int32_t qps) {
  return throughputs(make_backend("flow", fabric(), options(policy))->run(permutation(qps)));
}

void print_figure(const std::string& what, const std::vector<double>& x, const std::string& extra = "") {
  std::cout << fmt::format("[ figure   ] {:<14} mean {:.4f} B, min {:.4f} B{}\n", what, mean(x), minimum(x), extra);
}

TEST(EcmpStudy, FabricIsTheOneTheMathAssumes) {
  const auto& t = fabric();
  ASSERT_EQ(t.gpus.size(), 512u);
  int leaves = 0, spines = 0;
  for (const auto& n : t.nodes)
    if (n.kind == topology::NodeKind::Switch) (n.tier == 1 ? leaves : spines)++;
  EXPECT_EQ(leaves, kLeaves);
  EXPECT_EQ(spines, 16);
  routing::Router router(t, options("ecmp").routing);
  // 16 equal-cost paths leaf i -> leaf i + 1 (one per spine).
  EXPECT_EQ(router.equal_cost_paths(0, dst_of(0)), 16);
}

TEST(EcmpStudy, OneQpMatchesBallsIntoBins) {
  const Bins b = ecmp_bins(1);
  const std::vector<double> x = run_flow("ecmp", 1);
  // Exact: each transfer gets B / (flows on its uplink).
  for (size_t i = 0; i < x.size(); ++i) {
    const int32_t l = b.load.at(b.qp_uplink[i][0]);
    EXPECT_NEAR(x[i], 1.0 / l, 1e-4) << "transfer " << i << " shares its uplink with " << l - 1 << " others";
  }
  // mean / B = fraction of uplinks used, expected 1 - (15/16)^16 = 0.64393 +- 4 sd.
  EXPECT_NEAR(mean(x), b.used_fraction, 1e-4);
  EXPECT_NEAR(b.used_fraction, 0.64393, 4 * 0.01387);
  // min / B = 1 / Lmax, Lmax in [4, 7] (probability > 0.998).
  EXPECT_NEAR(minimum(x), 1.0 / b.max_load, 1e-4);
  EXPECT_GE(b.max_load, 4);
  EXPECT_LE(b.max_load, 7);
  print_figure("ecmp, 1 QP", x,
               fmt::format(", uplinks used {:.4f} (expected 0.6439), fullest uplink {} flows (E = 4.85)",
                           b.used_fraction, b.max_load));
}

// The hash itself, over many seeds: the used-uplink fraction of a seed is a
// mean over 32 leaves with sd 0.01387 (above), so over 200 seeds the grand
// mean has sd 0.01387 / sqrt(200) = 0.00098; accept +-4 sd around 0.64393,
// and the spread across seeds within [0.5, 1.5] x 0.01387. Seed 1 (the one the
// other tests use) happens to sit 2.4 sd above the mean (0.6777).
TEST(EcmpStudy, HashBehavesLikeBallsIntoBinsAcrossSeeds) {
  double sum = 0, sum2 = 0;
  const int seeds = 200;
  for (int s = 1; s <= seeds; ++s) {
    const double u = ecmp_bins(1, static_cast<uint64_t>(s)).used_fraction;
    sum += u;
    sum2 += u * u;
  }
  const double m = sum / seeds, sd = std::sqrt(sum2 / seeds - m * m);
  EXPECT_NEAR(m, 0.64393, 4 * 0.00098);
  EXPECT_GT(sd, 0.5 * 0.01387);
  EXPECT_LT(sd, 1.5 * 0.01387);
  std::cout << fmt::format("[ figure   ] ecmp over {} seeds: uplinks used {:.4f} (sd {:.4f}); balls-into-bins "
                           "0.6439 (sd 0.0139)\n",
                           seeds, m, sd);
}

TEST(EcmpStudy, MoreQpsRaiseTheMinimum) {
  std::map<int32_t, std::vector<double>> x;
  std::map<int32_t, Bins> bins;
  for (int32_t q : {1, 4, 16}) {
    x[q] = run_flow("ecmp", q);
    bins[q] = ecmp_bins(q);
    const Bins& b = bins[q];
    ASSERT_GE(b.max_load, q);  // pigeonhole: 16 q QPs in 16 bins
    // Per transfer: B q / max(q, L of its fullest bin) <= x <= B.
    for (size_t i = 0; i < x[q].size(); ++i) {
      int32_t l = 0;
      for (routing::DirLink u : b.qp_uplink[i]) l = std::max(l, b.load.at(u));
      EXPECT_GE(x[q][i], static_cast<double>(q) / std::max(q, l) - 1e-4) << "q = " << q << ", transfer " << i;
      EXPECT_LE(x[q][i], 1.0 + 1e-4) << "q = " << q << ", transfer " << i;
    }
    // Minimum exactly q / Lmax.
    EXPECT_NEAR(minimum(x[q]), static_cast<double>(q) / b.max_load, 1e-4) << "q = " << q;
    print_figure(fmt::format("ecmp, {} QP{}", q, q > 1 ? "s" : ""), x[q],
                 fmt::format(", fullest uplink {} QPs", b.max_load));
  }
  EXPECT_GT(minimum(x[4]), minimum(x[1]));
  EXPECT_GT(minimum(x[16]), minimum(x[4]));
  EXPECT_GT(mean(x[16]), mean(x[1]));
}

TEST(EcmpStudy, AdaptiveAndSprayReachLineRate) {
  for (const char* policy : {"adaptive", "spray"}) {
    for (int32_t q : {1, 4}) {
      const std::vector<double> x = run_flow(policy, q);
      EXPECT_NEAR(minimum(x), 1.0, 1e-4) << policy << ", " << q << " QPs";
      EXPECT_NEAR(mean(x), 1.0, 1e-4) << policy << ", " << q << " QPs";
      print_figure(fmt::format("{}, {} QP{}", policy, q, q > 1 ? "s" : ""), x);
    }
  }
  // The analytical engine shares links among the transfers of one operation
  // (the permutation's transfers start together, analytical_backend.hpp): the
  // L flows of the fullest uplink drain it together, so the slowest transfer
  // gets 1 / L of B, as on the flow engine.
  const std::vector<double> a = throughputs(make_backend("analytical", fabric(), options("ecmp"))->run(permutation(1)));
  EXPECT_NEAR(minimum(a), 1.0 / ecmp_bins(1).max_load, 1e-4);
}

}  // namespace
}  // namespace podnet::engine
