// The torus collectives (collective/torus.hpp) against their closed forms, through `podnet bench`'s study on
// the analytical and flow engines (docs/contributing/validation/nccl-algorithms.md, "On chip-to-chip links").
//
// The fabric is torus-3d-4k with its cube set to the whole torus, so every link is 1 m of copper: a hop
// costs 5 ns of cable + 100 ns of chip router time (hop_latency) = 105 ns; links run 400 Gb/s, B = 50 GB/s
// per direction, and chip-to-chip links carry no header (engine/link_classes.hpp). On a k^D torus of
// n = k^D chips, S bytes (hand-derived in torus.hpp):
//   all-reduce      (n-1)/n x S / (D B) + 2 D (k-1) x 105 ns
//   reduce-scatter  (n-1)/n x S / (2 D B) + D (k-1) x 105 ns
//   torus_dimorder all-reduce: (n-1)/n x S / B + 2 D (k-1) x 105 ns
//   torus_astra all-reduce on k^3: 4 chunks of S/4 through one queue per dimension and direction; the
//     reduce-scatters along x set the pace (4 of them in turn), then the last chunk's later phases:
//     (S/4) / B x [4 (k-1)/k + (k-1)/k^2 + 2 (k-1)/k^3 + (k-1)/k^2 + (k-1)/k] + 9 (k-1) x 105 ns
// `auto` runs the torus algorithm on each of these (a whole torus).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/units.hpp"
#include "scenario/setup.hpp"
#include "study/bench.hpp"

namespace podnet::study {
namespace {

using namespace podnet::literals;

struct Case {
  std::string dims;
  int d, k;
  collective::Op op;
  const char* algo;
  double want_s;  // the closed form, seconds
};

constexpr double kB = 50e9;      // bytes/s per direction
constexpr double kHop = 105e-9;  // s

double closed_form(int d, int k, collective::Op op, bool rotate, double s) {
  double n = 1;
  for (int i = 0; i < d; ++i) n *= k;
  const double share = (n - 1) / n * s;
  if (op == collective::Op::AllReduce) return (rotate ? share / (d * kB) : share / kB) + 2.0 * d * (k - 1) * kHop;
  return share / (2.0 * d * kB) + 1.0 * d * (k - 1) * kHop;
}

TEST(TorusCollectives, MatchTheirClosedFormsOnBothEngines) {
  const double s = static_cast<double>(1_GiB);
  std::vector<Case> cases = {
      {"[512]", 1, 512, collective::Op::AllReduce, "auto", closed_form(1, 512, collective::Op::AllReduce, true, s)},
      {"[16, 16]", 2, 16, collective::Op::AllReduce, "auto", closed_form(2, 16, collective::Op::AllReduce, true, s)},
      {"[8, 8, 8]", 3, 8, collective::Op::AllReduce, "auto", closed_form(3, 8, collective::Op::AllReduce, true, s)},
      {"[8, 8, 8]", 3, 8, collective::Op::ReduceScatter, "auto",
       closed_form(3, 8, collective::Op::ReduceScatter, true, s)},
      {"[8, 8, 8]", 3, 8, collective::Op::AllReduce, "torus_dimorder",
       closed_form(3, 8, collective::Op::AllReduce, false, s)},
  };
  {
    const double k = 8, u = s / 4 / kB;
    cases.push_back(
        {"[8, 8, 8]", 3, 8, collective::Op::AllReduce, "torus_astra",
         u * (4 * (k - 1) / k + (k - 1) / (k * k) + 2 * (k - 1) / (k * k * k) + (k - 1) / (k * k) + (k - 1) / k) +
             9 * (k - 1) * kHop});
  }
  // The hand figures of two rows: 1 GiB on a 512-chip ring, 511/512 x 2^30 / 50e9 = 21,432.9 us + 1,022 x
  // 105 ns = 107.3 us; on 8 x 8 x 8, 511/512 x 2^30 / 150e9 = 7,144.3 us + 42 x 105 ns = 4.4 us.
  EXPECT_NEAR(cases[0].want_s * 1e6, 21432.89 + 107.31, 0.05);
  EXPECT_NEAR(cases[2].want_s * 1e6, 7144.30 + 4.41, 0.05);
  for (const Case& c : cases) {
    int64_t n = 1;
    for (int i = 0; i < c.d; ++i) n *= c.k;
    const scenario::Setup base =
        scenario::resolve(scenario::load("torus-3d-4k", {"topology.dims=" + c.dims, "topology.cube=" + c.dims,
                                                         fmt::format("topology.gpus={}", n)}));
    BenchRequest req;
    req.op = c.op;
    req.algo = c.algo;
    req.sizes = {1_GiB};
    for (const char* engine : {"analytical", "flow"}) {
      scenario::Setup st = base;
      st.engine = engine;
      const BenchResult r = bench(st, req);
      ASSERT_EQ(r.rows.size(), 1u);
      const std::string at = fmt::format("{} {} {} on {}", collective::op_name(c.op), c.algo, c.dims, engine);
      EXPECT_EQ(r.rows[0].algorithm, std::string(c.algo) == "auto" ? "torus" : c.algo) << at;
      EXPECT_NEAR(r.rows[0].run.makespan.seconds() / c.want_s, 1.0, 1e-4) << at;
    }
  }
}

}  // namespace
}  // namespace podnet::study
