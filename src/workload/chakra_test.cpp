#include "workload/chakra.hpp"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <sstream>

#include "core/error.hpp"
#include "engine/registry.hpp"
#include "engine/test_util.hpp"
#include "workload/chakra_test_util.hpp"
#include "workload/test_util.hpp"

namespace podnet::workload::chakra {
namespace {

using namespace podnet::workload::chakra::testing;
using namespace podnet::literals;

const std::string kSample = std::string(PODNET_SOURCE_DIR) + "/tests/data/chakra/astra-sim-all_reduce-4npus-1MB";

std::vector<int32_t> identity(int64_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::vector<RankTrace> parse_all(const std::vector<std::vector<NodeMsg>>& ranks) {
  std::vector<RankTrace> out;
  for (size_t r = 0; r < ranks.size(); ++r) {
    std::istringstream in(encode(ranks[r]));
    out.push_back(parse_trace(in, "t." + std::to_string(r) + ".et", static_cast<int32_t>(r)));
  }
  return out;
}

Result run(const std::vector<std::vector<NodeMsg>>& ranks, const std::string& engine = "analytical",
           bool trace = false) {
  const topology::Topology& t = workload::testing::rail(16);
  auto backend = engine::make_backend(engine, t);
  TrainOptions o;
  o.trace = trace;
  return simulate(parse_all(ranks), identity(static_cast<int64_t>(ranks.size())), t, *backend, o);
}

// Expects `f` to throw an InputError whose message holds every one of `parts`.
template <class F>
void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected an error naming " << parts.front();
  } catch (const InputError& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(ChakraRead, PublishedAllReduceSample) {
  // ASTRA-sim's microbenchmark (tests/data/chakra/README.md): 4 files, each the GlobalMetadata "0.0.4" and one
  // COMM_COLL_NODE (ALL_REDUCE, 1 MiB = 1,048,576 bytes) whose id is the rank.
  const auto files = trace_files(kSample);
  ASSERT_EQ(files.size(), 4u);
  EXPECT_NE(files[3].find("all_reduce.3.et"), std::string::npos);
  const std::vector<RankTrace> traces = load_traces(kSample);
  ASSERT_EQ(traces.size(), 4u);
  for (int32_t r = 0; r < 4; ++r) {
    EXPECT_EQ(traces[r].version, "0.0.4");
    ASSERT_EQ(traces[r].nodes.size(), 1u);
    const Node& n = traces[r].nodes[0];
    EXPECT_EQ(n.id, static_cast<uint64_t>(r));
    EXPECT_EQ(n.type, kCollNode);
    EXPECT_EQ(n.comm_type, kAllReduce);
    EXPECT_EQ(n.comm_size, 1048576);
    EXPECT_FALSE(n.cpu);
    EXPECT_EQ(n.name, "all_reduce_4npus_1MB");
  }
}

TEST(ChakraRun, PublishedAllReduceIsOneRingAllReduce) {
  // The four nodes are ONE all-reduce over the world communicator (no pg_name): the iteration is exactly that
  // collective's plan (TrainOptions::dp_algorithm "ring" on GPUs 0-3, one server) run alone on the same engine,
  // and at least a ring all-reduce's bus bytes 2 (n-1)/n S = 1.5 MiB over one GPU's NVLink (450 GB/s): 3.5 us.
  const topology::Topology& t = workload::testing::rail(16);
  for (const char* engine : {"analytical", "flow"}) {
    auto backend = engine::make_backend(engine, t);
    const Result r = simulate(load_traces(kSample), identity(4), t, *backend, TrainOptions{});
    auto alone = engine::make_backend(engine, t);
    const Time expected =
        alone->run(collective::make_plan("ring", collective::Op::AllReduce, {0, 1, 2, 3}, 1048576, {}, t)).makespan;
    EXPECT_EQ(r.train.iteration, expected) << engine;
    EXPECT_GT(r.train.iteration.seconds(), 1.5 * 1048576 / 450e9) << engine;
    EXPECT_EQ(r.imported.collectives, 1);
    ASSERT_EQ(r.imported.traffic.size(), 1u);
    EXPECT_EQ(r.imported.traffic[0].group, "world");
    EXPECT_EQ(r.imported.traffic[0].ranks, 4);
    EXPECT_EQ(r.imported.traffic[0].bytes, 1048576.0);
    // Every rank spends the whole iteration in the collective: exposed, nothing else.
    for (const auto& b : r.imported.per_rank) {
      EXPECT_EQ(b.collective, expected);
      EXPECT_EQ(b.compute, Time());
      EXPECT_EQ(b.idle, Time());
    }
    EXPECT_EQ(r.train.job.gpus(), 4);
  }
}

TEST(ChakraRun, ComputeHonoursDataAndControlDependencies) {
  // Rank 0: c1 100 us; c2 50 us after c1 (data); c3 30 us after c1 (control), alongside c2; c4 10 us after c2
  // and c3: T = 100 + max(50, 30) + 10 = 160 us, compute covers all of it. Rank 1: one 20 us node: idle 140 us.
  const std::vector<std::vector<NodeMsg>> ranks = {{comp(1, 100), comp(2, 50, {1}), comp(3, 30, {}, {1}),
                                                    comp(4, 10, {2}, {3})},
                                                   {comp(7, 20)}};
  for (const char* engine : {"analytical", "flow"}) {
    const Result r = run(ranks, engine);
    EXPECT_EQ(r.train.iteration, 160_us) << engine;
    EXPECT_EQ(r.imported.critical_rank, 0);
    EXPECT_EQ(r.imported.per_rank[0].compute, 160_us);
    EXPECT_EQ(r.imported.per_rank[0].idle, Time());
    EXPECT_EQ(r.imported.per_rank[1].compute, 20_us);
    EXPECT_EQ(r.imported.per_rank[1].idle, 140_us);
    EXPECT_EQ(r.imported.skipped, 0);
    EXPECT_EQ(r.imported.nodes, 5);
  }
  // Without the control dependency c3 runs from 0 and nothing changes (160 us); made to last 200 us after c1,
  // it is the critical path: 100 + 200 + 10 = 310 us.
  const std::vector<std::vector<NodeMsg>> longer = {
      {comp(1, 100), comp(2, 50, {1}), comp(3, 200, {}, {1}), comp(4, 10, {2}, {3})}};
  EXPECT_EQ(run(longer).train.iteration, 310_us);
}

TEST(ChakraRun, SendReceiveIsOneTransferBetweenTheRanks) {
  // Rank 0 computes 100 us, then sends 1 GiB to rank 1, which computes 50 us on what it received:
  // T = 100 us + t + 50 us, t = the 1 GiB transfer GPU 0 -> GPU 1 alone on the engine. By hand, t is about
  // 2^30 B / (450 GB/s NVLink x 0.824 NVLink class efficiency) = 2.896 ms (within 2%: latency, rounding).
  const int64_t gib = int64_t{1} << 30;
  const std::vector<std::vector<NodeMsg>> ranks = {{comp(1, 100), send(2, 1, gib, {1})},
                                                   {recv(5, 0, gib), comp(6, 50, {5})}};
  const topology::Topology& topo = workload::testing::rail(16);
  for (const char* engine : {"analytical", "flow"}) {
    const Time t = engine::make_backend(engine, topo)->run(engine::testing::p2p_plan({{0, 1}}, gib)).makespan;
    EXPECT_NEAR(t.seconds(), static_cast<double>(gib) / (450e9 * 0.824), 0.02 * t.seconds()) << engine;
    const Result r = run(ranks, engine);
    EXPECT_EQ(r.train.iteration, 100_us + t + 50_us) << engine;
    EXPECT_EQ(r.imported.p2p_pairs, 1);
    ASSERT_EQ(r.imported.traffic.size(), 1u);
    EXPECT_EQ(r.imported.traffic[0].group, "p2p");
    EXPECT_EQ(r.imported.traffic[0].bytes, static_cast<double>(gib));
    // Rank 0: 100 us compute, the send t, idle 50 us; rank 1: waits 100 us, receives for t, computes 50 us.
    EXPECT_EQ(r.imported.per_rank[0].p2p, t);
    EXPECT_EQ(r.imported.per_rank[0].idle, 50_us);
    EXPECT_EQ(r.imported.per_rank[1].compute, 50_us);
    EXPECT_EQ(r.imported.per_rank[1].idle, 100_us);
    EXPECT_EQ(r.imported.critical_rank, 1);
  }
}

TEST(ChakraRun, CollectiveWaitsForItsSlowestMemberAndGroupsFollowPgName) {
  // World all-reduce of 4 MiB on ranks 0 and 1: rank 0 computes 100 us first, rank 1 nothing, then both
  // compute 10 us after it: T = 100 us + t_ar + 10 us, t_ar = the ring all-reduce on GPUs {0, 1} alone.
  const topology::Topology& topo = workload::testing::rail(16);
  const int64_t mib4 = int64_t{4} << 20;
  const Time t_ar = engine::make_backend("analytical", topo)
                        ->run(collective::make_plan("ring", collective::Op::AllReduce, {0, 1}, mib4, {}, topo))
                        .makespan;
  const Result r = run({{comp(1, 100), coll(2, kAllReduce, mib4, {1}), comp(3, 10, {2})},
                        {coll(2, kAllReduce, mib4), comp(3, 10, {2})}});
  EXPECT_EQ(r.train.iteration, 100_us + t_ar + 10_us);
  // Rank 1 is idle for the 100 us its partner computes: the collective starts when both are ready.
  EXPECT_EQ(r.imported.per_rank[1].collective, t_ar);
  EXPECT_EQ(r.imported.per_rank[1].idle, 100_us);

  // pg_name "1" on ranks 0 and 1, "2" on ranks 2 and 3: two independent 2-rank all-reduces (GPUs {0, 1} and
  // {2, 3}, the same NVLink server and the same time t_ar), at once: T = t_ar.
  const Result g = run({{coll(1, kAllReduce, mib4, {}, "1")},
                        {coll(1, kAllReduce, mib4, {}, "1")},
                        {coll(1, kAllReduce, mib4, {}, "2")},
                        {coll(1, kAllReduce, mib4, {}, "2")}});
  EXPECT_EQ(g.train.iteration, t_ar);
  ASSERT_EQ(g.imported.traffic.size(), 2u);
  EXPECT_EQ(g.imported.traffic[0].group, "pg 1");
  EXPECT_EQ(g.imported.traffic[0].ranks, 2);
  EXPECT_EQ(g.imported.traffic[1].group, "pg 2");
  EXPECT_EQ(g.imported.collectives, 2);
}

TEST(ChakraRun, OtherNodesTakeNoTimeButKeepTheirDependencies) {
  // A METADATA node (type 1) between two 10 us compute nodes: T = 20 us, one node skipped.
  NodeMsg meta;
  meta.set_id(2);
  meta.set_type(1);
  meta.add_data_deps(1);
  meta.set_duration_micros(1000);  // ignored: not a compute node
  const Result r = run({{comp(1, 10), meta, comp(3, 10, {2})}});
  EXPECT_EQ(r.train.iteration, 20_us);
  EXPECT_EQ(r.imported.skipped, 1);
}

TEST(ChakraRun, TraceHasOneProcessPerRankAndIsDeterministic) {
  const std::vector<std::vector<NodeMsg>> ranks = {{comp(1, 100), send(2, 1, 1 << 20, {1})},
                                                   {recv(5, 0, 1 << 20), comp(6, 50, {5})}};
  const Result a = run(ranks, "flow", true);
  const Result b = run(ranks, "flow", true);
  EXPECT_EQ(a.train.trace_process, "rank");
  ASSERT_EQ(a.train.trace.size(), 4u);  // 2 compute slices, the send on rank 0 and the receive on rank 1
  EXPECT_EQ(a.train.stages.size(), 2u);
  // One arrow: rank 0's send slice to rank 1's receive slice.
  ASSERT_EQ(a.train.trace_flows.size(), 1u);
  const auto& from = a.train.trace[static_cast<size_t>(a.train.trace_flows[0].first)];
  const auto& to = a.train.trace[static_cast<size_t>(a.train.trace_flows[0].second)];
  EXPECT_EQ(from.name, "send2");
  EXPECT_EQ(from.pid, 0);
  EXPECT_EQ(to.name, "recv5");
  EXPECT_EQ(to.pid, 1);
  for (size_t k = 0; k < a.train.trace.size(); ++k) {
    EXPECT_EQ(a.train.trace[k].name, b.train.trace[k].name);
    EXPECT_EQ(a.train.trace[k].start, b.train.trace[k].start);
    EXPECT_EQ(a.train.trace[k].dur, b.train.trace[k].dur);
  }
}

TEST(ChakraRun, OverlappingNodesOfARankGetTheirOwnTraceLanes) {
  // Rank 0: a 100 us node and two 50 us nodes, all independent: the three start at 0 and overlap, so the trace
  // has three compute lanes ("compute", "compute 2", "compute 3"), one slice each; a fourth node after the
  // first 50 us one fits back on the lane that one freed (first fit: "compute 2", from 50 us).
  const Result r = run({{comp(1, 100), comp(2, 50), comp(3, 50), comp(4, 20, {2})}}, "analytical", true);
  ASSERT_EQ(r.train.trace.size(), 4u);
  EXPECT_EQ(r.train.trace_lanes, (std::vector<std::string>{"compute", "compute 2", "compute 3", "collective", "p2p"}));
  std::map<std::string, int32_t> tid;
  for (const auto& op : r.train.trace) tid[op.name] = op.tid;
  EXPECT_EQ(tid["comp1"], 0);
  EXPECT_EQ(tid["comp2"], 1);
  EXPECT_EQ(tid["comp3"], 2);
  EXPECT_EQ(tid["comp4"], 1);
}

TEST(ChakraRead, BadTracesNameFileNodeAndField) {
  auto parse = [](const std::string& bytes) {
    return [bytes] {
      std::istringstream in(bytes);
      parse_trace(in, "bad.0.et", 0);
    };
  };
  expect_error(parse(encode({comp(1, 1), comp(1, 2)})), {"bad.0.et", "node 1", "id", "given twice"});
  expect_error(parse(encode({comp(1, 1, {9})})), {"bad.0.et", "node 1", "data_deps", "node 9"});
  expect_error(parse(encode({comp(1, 1, {}, {9})})), {"bad.0.et", "node 1", "ctrl_deps", "node 9"});
  NodeMsg bad_type = comp(4, 1);
  bad_type.set_type(42);
  expect_error(parse(encode({bad_type})), {"bad.0.et", "node 4", "type", "42"});
  NodeMsg no_size = coll(5, kAllReduce, 8);
  no_size.mutable_attr()->RemoveLast();  // comm_size
  expect_error(parse(encode({no_size})), {"bad.0.et", "node 5", "comm_size", "missing"});
  NodeMsg text_size = coll(6, kAllReduce, 8);
  text_size.mutable_attr(1)->set_string_val("8MB");
  expect_error(parse(encode({text_size})), {"bad.0.et", "node 6", "comm_size", "integer", "string_val"});
  expect_error(parse(encode({coll(7, 12, 8)})), {"bad.0.et", "node 7", "comm_type", "12"});
  expect_error(parse(encode({send(8, 1, -5)})), {"bad.0.et", "node 8", "comm_size", "-5"});
  // A truncated file: the last message ends early.
  const std::string whole = encode({comp(1, 1), comp(2, 2)});
  expect_error(parse(whole.substr(0, whole.size() - 2)), {"bad.0.et", "message 3", "truncated"});
  // A length prefix beyond the limit.
  expect_error(parse(std::string("\xff\xff\xff\xff\x0f", 5)), {"bad.0.et", "message 1", "length"});
}

TEST(ChakraRun, BadTraceSetsNameFileNodeAndField) {
  const int64_t mib = 1 << 20;
  // A send with no receive on the peer.
  expect_error([&] { run({{send(2, 1, mib)}, {comp(1, 1)}}); }, {"t.0.et", "node 2", "comm_dst", "COMM_RECV_NODE"});
  // Members disagree on the size of the same collective.
  expect_error(
      [&] {
        run({{coll(1, kAllReduce, mib)}, {coll(1, kAllReduce, 2 * mib)}});
      },
      {"t.1.et", "node 1", "comm_size", "t.0.et"});
  // One member has a collective the other lacks.
  expect_error(
      [&] {
        run({{coll(1, kAllReduce, mib), coll(2, kAllReduce, mib)}, {coll(1, kAllReduce, mib)}});
      },
      {"t.0.et", "node 2", "pg_name", "#2"});
  // Collectives issued in different orders on two communicators deadlock: a cycle across the files.
  expect_error(
      [&] {
        run({{coll(1, kAllReduce, mib, {}, "a"), coll(2, kAllReduce, mib, {1}, "b")},
             {coll(1, kAllReduce, mib, {}, "b"), coll(2, kAllReduce, mib, {1}, "a")}});
      },
      {"node", "cycle"});
  // A peer beyond the trace's ranks, and an unmodelled collective.
  expect_error([&] { run({{send(2, 5, mib)}, {comp(1, 1)}}); }, {"t.0.et", "node 2", "comm_dst", "rank 5"});
  expect_error([&] { run({{coll(1, kGather, mib)}}); }, {"t.0.et", "node 1", "comm_type", "GATHER"});
}

TEST(ChakraRead, DirectoryNeedsOneTraceWithEveryRank) {
  EXPECT_EQ(trace_files(write_dir("three", {{comp(1, 1)}, {comp(1, 1)}, {comp(1, 1)}})).size(), 3u);
  const std::string gap = write_dir("gap2", {{comp(1, 1)}});
  { std::ofstream(std::filesystem::path(gap) / "trace.2.et", std::ios::binary) << encode({comp(1, 1)}); }
  expect_error([&] { trace_files(gap); }, {"trace.1.et", "missing"});
  const std::string two = write_dir("two", {{comp(1, 1)}});
  { std::ofstream(std::filesystem::path(two) / "other.0.et", std::ios::binary) << encode({comp(1, 1)}); }
  expect_error([&] { trace_files(two); }, {"'other.<rank>.et'", "'trace.<rank>.et'"});
}

}  // namespace
}  // namespace podnet::workload::chakra
