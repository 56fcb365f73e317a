#include "collective/patterns.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "collective/test_topologies.hpp"
#include "core/error.hpp"

namespace podnet::collective {
namespace {

using namespace podnet::literals;
using plan::TransferKind;
using testing::iota;
using testing::rail32;

TEST(Permutation, DrawIsADerangement) {
  for (int32_t n = 2; n <= 40; ++n)
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      const std::vector<int32_t> p = draw_derangement(n, seed);
      ASSERT_EQ(p.size(), static_cast<size_t>(n));
      std::set<int32_t> image(p.begin(), p.end());
      EXPECT_EQ(image.size(), static_cast<size_t>(n)) << "n " << n << " seed " << seed;  // a permutation
      EXPECT_EQ(*image.begin(), 0);
      EXPECT_EQ(*image.rbegin(), n - 1);
      for (int32_t i = 0; i < n; ++i) EXPECT_NE(p[i], i) << "fixed point, n " << n << " seed " << seed;
    }
  // The only derangement of 2 is the swap; 1 rank has nobody to send to.
  EXPECT_EQ(draw_derangement(2, 7), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(draw_derangement(1, 7), (std::vector<int32_t>{0}));
  EXPECT_TRUE(draw_derangement(0, 7).empty());
}

TEST(Permutation, SeedDecidesTheDraw) {
  EXPECT_EQ(draw_derangement(64, 3), draw_derangement(64, 3));
  // 64 ranks have about 64!/e derangements: two seeds drawing the same one would be a broken stream.
  EXPECT_NE(draw_derangement(64, 3), draw_derangement(64, 4));
}

TEST(Permutation, DrawIsUniformOverDerangements) {
  // n = 4 has D(4) = 4! (1 - 1 + 1/2 - 1/6 + 1/24) = 9 derangements, each drawn with probability 1/9 by
  // rejection. Over 9,000 seeds each is expected 1,000 times, standard deviation sqrt(9000 x 1/9 x 8/9) = 29.8;
  // 5 sigma = 149 (a seeded draw: the counts are fixed, the bound says they look uniform).
  std::map<std::vector<int32_t>, int> count;
  for (uint64_t seed = 1; seed <= 9000; ++seed) ++count[draw_derangement(4, seed)];
  EXPECT_EQ(count.size(), 9u);
  for (const auto& [p, c] : count) EXPECT_NEAR(c, 1000, 149) << p[0] << p[1] << p[2] << p[3];
}

TEST(Permutation, PlanIsOneFlowOutAndOneInPerRank) {
  // n = 16 ranks, S = 4 MiB: 16 transfers of 4 MiB, none from a rank to itself, every rank sending once and
  // receiving once, all at once (no dependencies), each with the connection's QPs.
  Options o;
  o.seed = 11;
  o.qps = 2;
  const Group g = iota(16, 8);
  const auto plan = make_plan("auto", Op::Permutation, g, 4_MiB, o, rail32());
  EXPECT_EQ(plan.algorithm, "permutation");
  EXPECT_EQ(plan.op, "permutation");
  ASSERT_EQ(plan.transfers.size(), 16u);
  const std::vector<int32_t> peer = draw_derangement(16, 11);
  std::map<int32_t, int> out, in;
  for (size_t i = 0; i < 16; ++i) {
    const auto& t = plan.transfers[i];
    EXPECT_EQ(t.kind, TransferKind::P2p);
    EXPECT_EQ(t.bytes, 4_MiB);
    EXPECT_EQ(t.qps, 2);
    EXPECT_TRUE(t.deps.empty());
    EXPECT_EQ(t.ranks, (std::vector<int32_t>{g[i], g[peer[i]]}));
    ++out[t.ranks[0]];
    ++in[t.ranks[1]];
  }
  EXPECT_EQ(out.size(), 16u);
  EXPECT_EQ(in.size(), 16u);
  for (const auto& [r, c] : out) EXPECT_EQ(c, 1) << r;
  for (const auto& [r, c] : in) EXPECT_EQ(c, 1) << r;
  // Another seed, another pattern (same group).
  o.seed = 12;
  const auto other = make_plan("permutation", Op::Permutation, g, 4_MiB, o, rail32());
  std::vector<int32_t> a, b;
  for (size_t i = 0; i < 16; ++i) {
    a.push_back(plan.transfers[i].ranks[1]);
    b.push_back(other.transfers[i].ranks[1]);
  }
  EXPECT_NE(a, b);
}

TEST(Incast, SendersAfterTheReceiverInGroupOrder) {
  // --gpus 17,0-15 --senders 8: GPUs 0..7 each send S = 1 MiB to GPU 17, 8 concurrent transfers.
  Group g = {17};
  for (int32_t i = 0; i < 16; ++i) g.push_back(i);
  Options o;
  o.incast_senders = 8;
  const auto plan = make_plan("auto", Op::Incast, g, 1_MiB, o, rail32());
  EXPECT_EQ(plan.algorithm, "incast");
  ASSERT_EQ(plan.transfers.size(), 8u);
  for (int32_t i = 0; i < 8; ++i) {
    EXPECT_EQ(plan.transfers[i].ranks, (std::vector<int32_t>{i, 17}));
    EXPECT_EQ(plan.transfers[i].bytes, 1_MiB);
    EXPECT_TRUE(plan.transfers[i].deps.empty());
  }
  // auto (0): every other GPU of the group, 16 senders.
  EXPECT_EQ(make_plan("incast", Op::Incast, g, 1_MiB, {}, rail32()).transfers.size(), 16u);
}

TEST(Incast, TooManySendersIsAnError) {
  Options o;
  o.incast_senders = 4;
  try {
    make_plan("incast", Op::Incast, iota(4), 1_MiB, o, rail32());  // receiver + 3 senders at most
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("incast_senders = 4"), std::string::npos) << m;
    EXPECT_NE(m.find("needs 5 GPUs"), std::string::npos) << m;
    EXPECT_NE(m.find("has 4"), std::string::npos) << m;
  }
}

TEST(Patterns, ScenarioKeys) {
  EXPECT_EQ(options_from(defaults_of(option_params())).incast_senders, 0);  // auto
  Params p = defaults_of(option_params());
  p.set("incast_senders", int64_t{12}, "12");
  EXPECT_EQ(options_from(p).incast_senders, 12);
  EXPECT_EQ(bus_factor(Op::Permutation, 16), 1.0);
  EXPECT_EQ(bus_factor(Op::Incast, 17), 16.0);  // 16 senders: what the receiver takes in
  EXPECT_EQ(parse_op("incast"), Op::Incast);
  EXPECT_EQ(std::string(default_algorithm(Op::Permutation)), "permutation");
  // Not NCCL algorithms: "auto" builds the pattern with no latency delay in front of it.
  Options tuned = options_from(defaults_of(option_params()));
  const auto plan = make_plan("auto", Op::Incast, iota(4), 1_MiB, tuned, rail32());
  ASSERT_EQ(plan.transfers.size(), 3u);
  for (const auto& t : plan.transfers) EXPECT_EQ(t.kind, TransferKind::P2p);
}

}  // namespace
}  // namespace podnet::collective
