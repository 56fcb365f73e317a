#include "collective/torus.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "collective/test_topologies.hpp"
#include "core/error.hpp"

namespace podnet::collective {
namespace {

using testing::iota;

topology::Topology torus(const std::string& dims) {
  topology::Hardware hw = topology::default_hardware();
  hw.nics_per_server = 0;
  return topology::build_with("torus", {{"dims", dims}}, hw);
}

// Chip r's coordinate along dimension d of a k x k torus (x fastest).
int32_t coord(int32_t r, int d, int32_t k) { return d == 0 ? r % k : r / k; }

// All 16 chips of a 4 x 4 torus, all-reduce of S = 6,400 B: 2 D = 4 parts of 1,600 B. Each part has three
// phases (reduce-scatter along its first dimension, all-reduce along the second, all-gather along the first)
// over 4 lines of 4 chips: 4 x 3 x 4 = 48 rings. Hand-derived bytes per hop:
//   reduce-scatter, e = 4:   1,600 x 3/4            = 1,200 B, 3 steps
//   all-reduce on 400 B:     400 x 2 x 3/4          =   600 B, 6 steps
//   all-gather, e = 4:       1,200 B, 3 steps
// A ring is a line: its chips differ in one coordinate only, and it goes once around that dimension.
TEST(Torus, AllReduceIsRingsPerDimensionWithHandDerivedBytes) {
  const auto t = torus("[4, 4]");
  const plan::TransferPlan p = make_plan("torus", Op::AllReduce, iota(16), 6400, Options{}, t);
  ASSERT_EQ(p.transfers.size(), 48u);
  EXPECT_EQ(p.channels, 4);
  std::map<std::tuple<int64_t, int32_t>, int> shapes;  // (bytes, steps) -> rings
  for (const auto& tr : p.transfers) {
    ASSERT_EQ(tr.kind, plan::TransferKind::Ring);
    ASSERT_EQ(tr.ranks.size(), 4u);
    ++shapes[{tr.bytes, tr.latency_steps}];
    int varying = 0;
    for (int d = 0; d < 2; ++d) {
      std::set<int32_t> c;
      for (int32_t r : tr.ranks) c.insert(coord(r, d, 4));
      varying += c.size() > 1;
      if (c.size() > 1) {
        EXPECT_EQ(c.size(), 4u) << tr.label;
      }
    }
    EXPECT_EQ(varying, 1) << tr.label;
  }
  const std::map<std::tuple<int64_t, int32_t>, int> want = {{{1200, 3}, 32}, {{600, 6}, 16}};
  EXPECT_EQ(shapes, want);
}

// Every directed link of the 4 x 4 torus carries the same bytes, the closed form's (n-1)/n x S / D =
// 15/16 x 6,400 / 2 = 3,000 B: one part's reduce-scatter and all-gather (1,200 + 1,200) and another part's
// all-reduce (600). No link carries more than another, so no ring waits for a busier one.
TEST(Torus, EveryLinkDirectionCarriesTheSameBytes) {
  const auto t = torus("[4, 4]");
  const plan::TransferPlan p = make_plan("torus", Op::AllReduce, iota(16), 6400, Options{}, t);
  std::map<std::pair<int32_t, int32_t>, int64_t> load;  // (from, to) neighbour hop -> bytes
  for (const auto& tr : p.transfers)
    for (size_t i = 0; i < tr.ranks.size(); ++i) load[{tr.ranks[i], tr.ranks[(i + 1) % tr.ranks.size()]}] += tr.bytes;
  ASSERT_EQ(load.size(), 64u);  // 16 chips x 4 neighbours: every hop is one link
  for (const auto& [hop, bytes] : load) EXPECT_EQ(bytes, 3000) << hop.first << " -> " << hop.second;
}

// A ring of a later phase waits for the rings that cross its line in the phase before (4 of them here),
// and the first phase waits for nothing.
TEST(Torus, APhaseWaitsForTheRingsCrossingItsLine) {
  const auto t = torus("[4, 4]");
  const plan::TransferPlan p = make_plan("torus", Op::AllReduce, iota(16), 6400, Options{}, t);
  int first = 0;
  for (size_t i = 0; i < p.transfers.size(); ++i) {
    const auto& tr = p.transfers[i];
    if (tr.deps.empty()) {
      ++first;
      continue;
    }
    ASSERT_EQ(tr.deps.size(), 4u) << tr.label;
    const std::set<int32_t> mine(tr.ranks.begin(), tr.ranks.end());
    for (int32_t d : tr.deps) {
      ASSERT_LT(static_cast<size_t>(d), i);
      const auto& before = p.transfers[static_cast<size_t>(d)];
      EXPECT_EQ(before.channel, tr.channel);  // the same part
      int shared = 0;
      for (int32_t r : before.ranks) shared += mine.count(r) ? 1 : 0;
      EXPECT_EQ(shared, 1) << before.label << " -> " << tr.label;
    }
  }
  EXPECT_EQ(first, 16);  // 4 parts x 4 lines
}

// Reduce-scatter and all-gather: S = 6,400 B over 4 parts, 1,600 B each: along the first dimension
// 1,600 x 3/4 = 1,200 B a hop, along the second 400 x 3/4 = 300 B; an all-gather runs them in reverse.
TEST(Torus, ReduceScatterAndAllGatherHalveTheAllReduce) {
  const auto t = torus("[4, 4]");
  for (Op op : {Op::ReduceScatter, Op::AllGather}) {
    const plan::TransferPlan p = make_plan("torus", op, iota(16), 6400, Options{}, t);
    ASSERT_EQ(p.transfers.size(), 32u) << op_name(op);
    std::map<int64_t, int> bytes;
    for (const auto& tr : p.transfers) {
      ++bytes[tr.bytes];
      EXPECT_EQ(tr.latency_steps, 3);
    }
    EXPECT_EQ(bytes, (std::map<int64_t, int>{{1200, 16}, {300, 16}})) << op_name(op);
    // An all-gather starts with the small pieces (what a reduce-scatter ends with).
    EXPECT_EQ(p.transfers.front().bytes, op == Op::AllGather ? 300 : 1200) << op_name(op);
  }
}

// torus_dimorder: one part per direction, every part through x then y: the reduce-scatter along x carries
// 3,200 x 3/4 = 2,400 B a hop, the all-reduce along y 800 x 2 x 3/4 = 1,200 B, the all-gather 2,400 B.
TEST(Torus, DimorderRunsTheDimensionsInTurn) {
  const auto t = torus("[4, 4]");
  const plan::TransferPlan p = make_plan("torus_dimorder", Op::AllReduce, iota(16), 6400, Options{}, t);
  ASSERT_EQ(p.transfers.size(), 24u);  // 2 parts x 3 phases x 4 lines
  EXPECT_EQ(p.channels, 2);
  std::map<int64_t, int> bytes;
  for (const auto& tr : p.transfers) ++bytes[tr.bytes];
  EXPECT_EQ(bytes, (std::map<int64_t, int>{{2400, 16}, {1200, 8}}));
}

// torus_astra, ASTRA-sim's localBWAware schedule: 4 chunks of 1,600 B, each a reduce-scatter along x
// (1,200 B a hop, forwards), an all-reduce along y (600 B, forwards) and an all-gather along x (1,200 B,
// backwards): 4 x 3 x 4 = 48 rings. A chunk's phase waits for the rings crossing its line and for the
// previous chunk's ring of the same phase on the same line (a dimension's queue runs one chunk at a time).
TEST(Torus, AstraRunsChunksThroughOneQueuePerDimension) {
  const auto t = torus("[4, 4]");
  const plan::TransferPlan p = make_plan("torus_astra", Op::AllReduce, iota(16), 6400, Options{}, t);
  ASSERT_EQ(p.transfers.size(), 48u);
  EXPECT_EQ(p.channels, 4);
  std::map<std::string, std::set<int64_t>> bytes;
  for (const auto& tr : p.transfers) bytes[tr.label].insert(tr.bytes);
  EXPECT_EQ(bytes, (std::map<std::string, std::set<int64_t>>{{"rs/torus-x", {1200}},
                                                             {"ar/torus-y", {600}},
                                                             {"ag/torus-x", {1200}}}));
  for (size_t i = 0; i < p.transfers.size(); ++i) {
    const auto& tr = p.transfers[i];
    // Forwards along x is x ascending: chip r -> r + 1 (mod 4 in its row).
    const bool forwards = coord(tr.ranks[1], 0, 4) == (coord(tr.ranks[0], 0, 4) + 1) % 4;
    if (tr.label == "rs/torus-x") {
      EXPECT_TRUE(forwards) << i;
    }
    if (tr.label == "ag/torus-x") {
      EXPECT_FALSE(forwards) << i;
    }
    // Chunk c > 0: one dependency more, on chunk c - 1's ring over the same chips.
    const int32_t chunk = tr.channel;
    const size_t crossing = tr.label == "rs/torus-x" ? 0 : 4;
    ASSERT_EQ(tr.deps.size(), crossing + (chunk > 0 ? 1 : 0)) << i << " " << tr.label;
    if (chunk > 0) {
      bool queued = false;
      for (int32_t d : tr.deps) {
        const auto& before = p.transfers[static_cast<size_t>(d)];
        queued = queued || (before.channel == chunk - 1 && before.label == tr.label &&
                            std::set<int32_t>(before.ranks.begin(), before.ranks.end()) ==
                                std::set<int32_t>(tr.ranks.begin(), tr.ranks.end()));
      }
      EXPECT_TRUE(queued) << i;
    }
  }
}

// auto on a NIC-less torus: the torus algorithm on a whole torus and on a box whose lines go evenly around
// their dimensions; at 64 MiB the snake ring (NCCL's tuner) on a 4 x 2 corner of a 16 x 16 torus, where each
// line would close back over its own links (its busiest link 1.125 S against the snake's 0.875 S), but the
// torus at 1 KiB there (a few link latencies against NCCL's microseconds a step); the ring for a group that
// is no box. Naming the algorithm runs it on any box, and refuses the rest.
TEST(Torus, AutoPicksTheTorusWhereItsBusiestLinkCarriesLess) {
  const auto t = torus("[16, 16]");
  Options o;
  o.tuner = true;
  o.channels = kAutoChannels;
  const auto algo = [&](const Group& g, Bytes s = 1 << 26) {
    return make_plan("auto", Op::AllReduce, g, s, o, t).algorithm;
  };
  EXPECT_EQ(algo(iota(256)), "torus");
  Group spaced;  // x in {0, 4, 8, 12}, y in {0, 8}
  for (int32_t y : {0, 8})
    for (int32_t x : {0, 4, 8, 12}) spaced.push_back(x + 16 * y);
  EXPECT_EQ(algo(spaced), "torus");
  const Group corner = {0, 1, 2, 3, 16, 17, 18, 19};
  const TorusEstimate e = torus_estimate(Op::AllReduce, corner, 1 << 26, t);
  EXPECT_NEAR(e.snake_busiest_bytes / (1 << 26), 0.875, 1e-9);
  EXPECT_EQ(algo(corner), "ring");
  EXPECT_EQ(algo(corner, 1024), "torus");
  const Group l_shape = {0, 1, 16};
  EXPECT_NE(torus_box_problem(l_shape, t), "");
  EXPECT_EQ(algo(l_shape), "ring");
  EXPECT_EQ(make_plan("torus", Op::AllReduce, corner, 1 << 20, o, t).algorithm, "torus");
  try {
    make_plan("torus", Op::AllReduce, l_shape, 1 << 20, o, t);
    FAIL() << "an L of three chips is no box";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("its 3 chips are not a box of the torus: they use 2 x, 2 y "
                                         "coordinates, whose 4 combinations a box would hold"),
              std::string::npos)
        << e.what();
  }
  // A named collective.algorithms list is NCCL's: auto then stays with the tuner.
  Options given = o;
  given.selection = parse_algorithms("ring", given.selection, "collective.algorithms");
  EXPECT_EQ(make_plan("auto", Op::AllReduce, iota(256), 1 << 26, given, t).algorithm, "ring");
  // Not a torus: refused by name.
  try {
    make_plan("torus", Op::AllReduce, iota(8), 1 << 20, Options{}, testing::rail32());
    FAIL() << "rail_clos is no torus";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the fabric is not a torus"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace podnet::collective
