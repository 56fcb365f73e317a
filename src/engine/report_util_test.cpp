// hottest_links (report_util.hpp): mean utilization = bytes x 8 / (capacity x
// makespan), highest first, ties by bytes then link id. Every figure below is
// exact in binary (makespan 1 s), so the ties are real ties.
#include "engine/report_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>

#include <vector>

namespace podnet::engine {
namespace {

// Directed links 0..4: link 4 is a 100 Gb/s link, the others 400 Gb/s.
double capacity(routing::DirLink d) { return d == 4 ? 100e9 : 400e9; }

// bytes: link 0 idle (left out); 1 and 3: 25 GB in 1 s on 400 Gb/s = 2e11 / 4e11 = 0.5;
// link 2: 50 GB -> 4e11 / 4e11 = 1.0; link 4: 12.5 GB on 100 Gb/s -> 1e11 / 1e11 = 1.0.
const std::vector<double> kBytes = {0, 25e9, 50e9, 25e9, 12.5e9};

std::vector<routing::DirLink> ids(const std::vector<LinkReport>& r) {
  std::vector<routing::DirLink> out;
  for (const auto& l : r) out.push_back(l.link);
  return out;
}

TEST(HottestLinks, HighestUtilizationFirstTiesByBytesThenLink) {
  const auto all = hottest_links(kBytes, nullptr, Time::from_seconds(1.0), 10, capacity);
  // 2 and 4 both at 1.0: 2 carried more bytes; 1 and 3 both at 0.5 with equal bytes: lower id first.
  EXPECT_EQ(ids(all), (std::vector<routing::DirLink>{2, 4, 1, 3}));
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].mean_utilization, 1.0);
  EXPECT_EQ(all[1].mean_utilization, 1.0);
  EXPECT_EQ(all[2].mean_utilization, 0.5);
  EXPECT_EQ(all[1].bytes, 12.5e9);
  // Without a peak vector the peak is the mean.
  for (const auto& l : all) EXPECT_EQ(l.peak_utilization, l.mean_utilization);
}

TEST(HottestLinks, SumsThatDifferInTheLastBitsTieAndGoByLinkId) {
  // Links 1 and 3 carried the same 6.25e9 B, summed in different orders: link 3's sum is one ulp above (and its
  // utilization too), which used to put 3 first. Compared to 1e-9 and to the byte, they tie: 1 before 3.
  std::vector<double> bytes = {0, 6.25e9, 0, std::nextafter(6.25e9, 1e10), 0};
  const auto all = hottest_links(bytes, nullptr, Time::from_seconds(1.0), 10, [](routing::DirLink) { return 100e9; });
  EXPECT_EQ(ids(all), (std::vector<routing::DirLink>{1, 3}));
}

TEST(HottestLinks, CountLimitsTheListAndPeaksComeFromTheEngine) {
  const std::vector<double> peak = {0, 0.9, 1.0, 0.7, 1.0};
  const auto top = hottest_links(kBytes, &peak, Time::from_seconds(1.0), 3, capacity);
  EXPECT_EQ(ids(top), (std::vector<routing::DirLink>{2, 4, 1}));
  EXPECT_EQ(top[2].peak_utilization, 0.9);  // link 1's own peak, not its mean 0.5
  EXPECT_TRUE(hottest_links(kBytes, nullptr, Time::from_seconds(1.0), 0, capacity).empty());
  EXPECT_TRUE(hottest_links(kBytes, nullptr, Time::from_seconds(1.0), -1, capacity).empty());
}

TEST(HottestLinks, ZeroMakespanRanksByBytes) {
  // No time: every utilization is 0, so the order is by bytes (2, then 1 and 3 by id, then 4).
  const auto all = hottest_links(kBytes, nullptr, Time(), 10, capacity);
  EXPECT_EQ(ids(all), (std::vector<routing::DirLink>{2, 1, 3, 4}));
  for (const auto& l : all) EXPECT_EQ(l.mean_utilization, 0.0);
}

// Links 0 and 1 of class "leaf-spine" (index 1), link 2 of class "nic-leaf" (index 0); class 2 ("spare") has no
// link. Directed links 2l and 2l+1; dir 5 (link 2's reverse) has no capacity.
TEST(ClassLoads, MeanAndMaxOfTheClassDirectedLinks) {
  topology::Topology t;
  t.link_classes = {"nic-leaf", "leaf-spine", "spare"};
  t.links.resize(3);
  t.links[0].cls = 1;
  t.links[1].cls = 1;
  t.links[2].cls = 0;
  const auto cap = [](routing::DirLink d) { return d == 5 ? 0.0 : 400e9; };
  // In 1 s on 400 Gb/s, 50 GB is utilization 1.0, 25 GB 0.5, 12.5 GB 0.25.
  const std::vector<double> bytes = {50e9, 0, 25e9, 12.5e9, 25e9, 99e9};
  const auto loads = class_loads(t, bytes, Time::from_seconds(1.0), cap);
  ASSERT_EQ(loads.size(), 2u);  // "spare" has no link
  // nic-leaf: only dir 4 counts (dir 5 has no capacity): mean = max = 0.5.
  EXPECT_EQ(loads[0].link_class, "nic-leaf");
  EXPECT_EQ(loads[0].links, 1);
  EXPECT_DOUBLE_EQ(loads[0].bytes, 25e9);
  EXPECT_DOUBLE_EQ(loads[0].mean_utilization, 0.5);
  EXPECT_DOUBLE_EQ(loads[0].max_utilization, 0.5);
  EXPECT_EQ(loads[0].used_links, 1);
  EXPECT_DOUBLE_EQ(loads[0].used_mean_utilization, 0.5);
  // leaf-spine: dirs 0..3 at 1.0, 0, 0.5, 0.25: mean 1.75 / 4 = 0.4375 (idle dir 1 included), max 1.0.
  EXPECT_EQ(loads[1].link_class, "leaf-spine");
  EXPECT_EQ(loads[1].links, 4);
  EXPECT_DOUBLE_EQ(loads[1].bytes, 87.5e9);
  EXPECT_DOUBLE_EQ(loads[1].mean_utilization, 0.4375);
  EXPECT_DOUBLE_EQ(loads[1].max_utilization, 1.0);
  // Over the 3 directions that carried bytes (dir 1 is idle): 1.75 / 3.
  EXPECT_EQ(loads[1].used_links, 3);
  EXPECT_DOUBLE_EQ(loads[1].used_mean_utilization, 1.75 / 3);
  // No time: every utilization 0, bytes still counted.
  const auto idle = class_loads(t, bytes, Time(), cap);
  EXPECT_EQ(idle[1].mean_utilization, 0.0);
  EXPECT_DOUBLE_EQ(idle[1].bytes, 87.5e9);
  EXPECT_EQ(idle[1].used_links, 3);
  EXPECT_EQ(idle[1].used_mean_utilization, 0.0);
}

// Flow completion times: 10 P2p transfers with FCTs 1..10 us (transfer i starts at i us and finishes at
// 2i+1 us, so FCT = i+1 us), one Compute (not a flow) in front of them.
//   min 1, max 10; p50 = ceil(0.5 x 10) = 5th smallest = 5 us; p99 = ceil(0.99 x 10) = 10th = 10 us;
//   mean = 55/10 = 5.5 us.
TEST(FlowTimes, NearestRankPercentiles) {
  plan::TransferPlan plan;
  RunReport run;
  plan::Transfer c;
  c.kind = plan::TransferKind::Compute;
  plan.add(c);
  run.transfers.push_back({Time(0), Time(7'000'000)});
  for (int64_t i = 9; i >= 0; --i) {  // out of order: the distribution sorts
    plan::Transfer t;
    t.ranks = {0, 1};
    plan.add(t);
    run.transfers.push_back({Time(i * 1'000'000), Time((2 * i + 1) * 1'000'000)});
  }
  const auto f = flow_times(plan, run);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->flows, 10);
  EXPECT_EQ(f->min, Time(1'000'000));
  EXPECT_EQ(f->p50, Time(5'000'000));
  EXPECT_EQ(f->p99, Time(10'000'000));
  EXPECT_EQ(f->max, Time(10'000'000));
  EXPECT_EQ(f->mean, Time(5'500'000));
  // The CDF's 101 points: q % of 10 flows finished by the ceil(q / 10)-th FCT, i.e. (ceil(q / 10)) us; 0 % is
  // the min. So 1 us for q = 0..10, 2 us for 11..20, ..., 10 us for 91..100.
  ASSERT_EQ(f->cdf.size(), 101u);
  for (int q = 0; q <= 100; ++q) EXPECT_EQ(f->cdf[q], Time(std::max(1, (q + 9) / 10) * 1'000'000)) << q;
  // A stopped job, or a pipelined transfer, gives no distribution.
  run.job_failed = true;
  EXPECT_FALSE(flow_times(plan, run).has_value());
  run.job_failed = false;
  plan.transfers[1].kind = plan::TransferKind::Ring;
  EXPECT_FALSE(flow_times(plan, run).has_value());
}

TEST(FlowTimes, NearestRankOfAHundred) {
  // 1..100 ps: p50 = 50th = 50, p99 = 99th = 99 (not 100: ceil(0.99 x 100) is exactly 99), p100 = 100;
  // one value is every percentile.
  std::vector<Time> v;
  for (int64_t i = 1; i <= 100; ++i) v.push_back(Time(i));
  EXPECT_EQ(nearest_rank(v, 50), Time(50));
  EXPECT_EQ(nearest_rank(v, 99), Time(99));
  EXPECT_EQ(nearest_rank(v, 100), Time(100));
  EXPECT_EQ(nearest_rank(v, 0.5), Time(1));
  EXPECT_EQ(nearest_rank({Time(7)}, 99), Time(7));
}

}  // namespace
}  // namespace podnet::engine
