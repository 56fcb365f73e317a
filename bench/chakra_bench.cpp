// chakra_bench: how fast podnet runs Chakra execution traces the way
// `podnet train leafspine-8k --chakra DIR` does: parse every rank's file,
// place the ranks, build the plan and run it. The trace is synthetic,
// written in memory by protobuf's delimited writer (the tests' writer,
// workload/chakra_test_util.hpp): P pipeline stages x D data-parallel ranks
// (default 8 x 64 = 512 ranks), GPipe-style: per microbatch (16) a rank
// receives its activation, computes 300 us forward, sends 64 MiB on; then
// the backward in reverse (600 us, gradients back), then an all-reduce of
// 256 MiB over its stage's DP communicator (pg_name "dp<stage>"); every
// rank's nodes chained by data dependencies. Prints wall time, CPU time and
// peak resident memory per engine (each in its own forked process), beside
// the simulated iteration, the node and transfer counts.
// Arguments: [stages] [dp].
#include "bench_util.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>

#include "cluster/placement.hpp"
#include "collective/collective.hpp"
#include "engine/network_params.hpp"
#include "engine/registry.hpp"
#include "scenario/scenario.hpp"
#include "workload/chakra.hpp"
#include "workload/chakra_test_util.hpp"

namespace {

using podnet::bench::cpu_seconds;
using podnet::bench::since;

using namespace podnet;
namespace ct = podnet::workload::chakra::testing;

constexpr int kMicrobatches = 16;
constexpr int64_t kActivation = int64_t{64} << 20;
constexpr int64_t kGradients = int64_t{256} << 20;

// Rank r = dp + D * stage; each node depends on the rank's previous node.
std::vector<std::string> synthetic(int stages, int dp) {
  std::vector<std::string> files;
  for (int st = 0; st < stages; ++st)
    for (int d = 0; d < dp; ++d) {
      std::vector<ct::NodeMsg> nodes;
      uint64_t id = 0;
      auto chain = [&](ct::NodeMsg n) {
        if (n.id() > 1) n.add_data_deps(n.id() - 1);  // the rank's previous node
        nodes.push_back(std::move(n));
      };
      const int64_t prev = d + int64_t{dp} * (st - 1), next = d + int64_t{dp} * (st + 1);
      for (int mb = 0; mb < kMicrobatches; ++mb) {
        if (st > 0) chain(ct::recv(++id, prev, kActivation, {}, mb));
        chain(ct::comp(++id, 300));
        if (st + 1 < stages) chain(ct::send(++id, next, kActivation, {}, mb));
      }
      for (int mb = 0; mb < kMicrobatches; ++mb) {
        if (st + 1 < stages) chain(ct::recv(++id, next, kActivation, {}, 1000 + mb));
        chain(ct::comp(++id, 600));
        if (st > 0) chain(ct::send(++id, prev, kActivation, {}, 1000 + mb));
      }
      chain(ct::coll(++id, workload::chakra::kAllReduce, kGradients, {}, "dp" + std::to_string(st)));
      files.push_back(ct::encode(nodes));
    }
  return files;
}

int run_case(const char* engine_name, int stages, int dp) {
  const std::vector<std::string> files = synthetic(stages, dp);
  size_t bytes = 0;
  for (const auto& f : files) bytes += f.size();
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  scenario::Scenario sc = scenario::load("leafspine-8k", {std::string("network.engine=") + engine_name});
  const topology::Topology topo = sc.build_topology();
  const engine::NetworkOptions nopt = engine::network_options_from(sc.section("network"), sc.seed);
  auto backend = engine::make_backend(engine_name, topo, nopt);
  workload::TrainOptions topt;
  topt.collective = collective::options_from(sc.section("collective"));
  const auto t1 = std::chrono::steady_clock::now();
  std::vector<workload::chakra::RankTrace> traces;
  for (size_t r = 0; r < files.size(); ++r) {
    std::istringstream in(files[r]);
    traces.push_back(workload::chakra::parse_trace(in, "bench." + std::to_string(r) + ".et", static_cast<int32_t>(r)));
  }
  const double parse_s = since(t1);
  const auto t2 = std::chrono::steady_clock::now();
  const workload::Job job = workload::chakra::job_of(traces, static_cast<int64_t>(topo.gpus.size()));
  const std::vector<int32_t> gpus =
      cluster::place(job, topo, cluster::parse_policy(sc.section("placement").get_string("policy")), sc.seed);
  const workload::chakra::Result r = workload::chakra::simulate(traces, gpus, topo, *backend, topt);
  const double sim_s = since(t2);
  const double wall = since(wall0);
  const double cpu = cpu_seconds() - cpu0;
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  std::printf("%-10s  wall %7.3f s (parse %.3f, plan + run %.3f)  cpu %7.3f s  peak %7.1f MB  | %zu ranks, %lld "
              "nodes (%.1f MB of .et), %lld transfers, iteration %.3f ms\n",
              engine_name, wall, parse_s, sim_s, cpu, static_cast<double>(u.ru_maxrss) / 1024.0, files.size(),
              static_cast<long long>(r.imported.nodes), static_cast<double>(bytes) / 1e6,
              static_cast<long long>(r.train.plan_transfers), r.train.iteration.seconds() * 1e3);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  podnet::use_huge_pages(argv);  // as the podnet binary runs (core/process.hpp)
  const int stages = argc > 1 ? std::atoi(argv[1]) : 8;
  const int dp = argc > 2 ? std::atoi(argv[2]) : 64;
  std::printf("chakra_bench: %d stages x %d DP ranks (synthetic Chakra trace) on leafspine-8k\n", stages, dp);
  for (const char* e : {"flow", "analytical"})
    if (podnet::bench::run_in_child(e, [&] { return run_case(e, stages, dp); }) != 0) {
      std::printf("%s: failed\n", e);
      return 1;
    }
  return 0;
}
