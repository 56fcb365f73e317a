// scale_bench: how the cost of one training iteration grows with the
// cluster. The default run (aipod-16k: Llama 3 405B, TP8 x PP16, batch 16
// per DP replica) with the data-parallel degree scaled to 16,384, 32,768,
// 65,536, 98,304 and 131,072 GPUs (the fabric grows with it: rail_clos of
// radix-128 switches, 3 tiers). Prints wall, CPU and peak memory per size,
// the plan's transfers and the simulated iteration, and the CPU ratio to
// 16,384 GPUs. Each size runs in its own forked process (its peak memory is
// its own). Analytical engine by default; --flow adds the flow engine (about
// 7 minutes at 131,072 GPUs). Targets (issue): 131,072 GPUs within 10x of
// 16,384 GPUs' cost, <= 3 s analytical and <= 10 s flow. --threads N sets
// network.threads (default 0: the analytical engine compiles routes on
// every core, up to 8; CPU then counts every thread).
// --design instead times the 1,048,576-GPU design (the built-in clos-1m) as
// podnet's commands run it: `design`, `reliability` and `design
// --config-plan DIR` (into a scratch folder, removed after), each in its own
// process: CPU and peak memory; then the same million GPUs with 800G NICs
// on 128 x 800G switches, which takes four tiers (clos-128k grown). Target
// (issue): the design <= 10 s and a few GB; reliability and the config plan
// within seconds. --million times one analytical iteration of the whole 1,048,576-GPU cluster (clos-1m's job at
// DP 8,192). Target (issue): <= 60 s and <= 8 GB.
#include "bench_util.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "train_util.hpp"

namespace {

using podnet::bench::cpu_seconds;
using namespace podnet;

int run_case(const char* engine_name, int64_t gpus, int threads) {
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  const int64_t dp = gpus / 128;
  const workload::TrainResult r =
      bench::train_iteration("aipod-16k", engine_name,
                             {"topology.gpus=" + std::to_string(gpus), "workload.dp=" + std::to_string(dp),
                              "workload.global_batch=" + std::to_string(dp * 16),
                              "network.threads=" + std::to_string(threads)});
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const double cpu = cpu_seconds() - cpu0;
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  std::printf("%-10s %8lld GPUs  wall %8.2f s  cpu %8.2f s  peak %7.1f MB  | iteration %.2f ms, %lld transfers\n",
              engine_name, static_cast<long long>(gpus), wall, cpu, static_cast<double>(u.ru_maxrss) / 1024.0,
              r.iteration.seconds() * 1e3, static_cast<long long>(r.plan_transfers));
  std::fflush(stdout);
  return 0;
}

// One podnet command, its output thrown away: wall, CPU (all its threads) and peak memory of the process
// that ran it.
int run_command(const std::string& label, std::vector<std::string> args) {
  const double cpu0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  const int keep = dup(STDOUT_FILENO);
  const int null = open("/dev/null", O_WRONLY);
  dup2(null, STDOUT_FILENO);
  dup2(null, STDERR_FILENO);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = podnet::cli::run(static_cast<int>(args.size()), argv.data());
  const double cpu = cpu_seconds() - cpu0, wall = podnet::bench::since(t0);
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  std::fflush(stdout);  // the command's own output, to /dev/null
  dup2(keep, STDOUT_FILENO);
  std::printf("%-40s wall %8.2f s  cpu %8.2f s  peak %8.1f MB  exit %d\n", label.c_str(), wall, cpu,
              static_cast<double>(u.ru_maxrss) / 1024.0, rc);
  return rc;
}

int design_cases() {
  std::printf("scale_bench --design: the 1,048,576-GPU designs (clos-1m; clos-128k grown to 4 tiers), each command "
              "in its own process\n");
  std::string dir = (std::filesystem::temp_directory_path() / "scale_bench_XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"podnet design clos-1m", {"podnet", "design", "clos-1m"}},
      {"podnet reliability clos-1m", {"podnet", "reliability", "clos-1m"}},
      {"podnet design clos-1m --config-plan DIR", {"podnet", "design", "clos-1m", "--config-plan", dir + "/plan"}},
      {"podnet design clos-128k at 1M, 4 tiers",
       {"podnet", "design", "clos-128k", "--set", "topology.gpus=1048576", "--set", "topology.tiers=4"}},
      {"podnet reliability clos-128k at 1M, 4 tiers",
       {"podnet", "reliability", "clos-128k", "--set", "topology.gpus=1048576", "--set", "topology.tiers=4"}},
  };
  int rc = 0;
  for (const auto& [label, args] : cases)
    if (podnet::bench::run_in_child(label.c_str(), [&] { return run_command(label, args); }) != 0) rc = 1;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  podnet::use_huge_pages(argv);  // as the podnet binary runs (core/process.hpp)
  std::vector<const char*> engines = {"analytical"};
  int threads = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--flow") == 0) engines.push_back("flow");
    if (std::strcmp(argv[i], "--design") == 0) return design_cases();
    if (std::strcmp(argv[i], "--million") == 0) {
      // One iteration at 1,048,576 GPUs: clos-1m's job (Llama 3 405B, TP8 x PP16) at DP 8,192, 16 sequences per
      // replica, analytical engine, one thread (about 45 s). Target (issue): <= 60 s and <= 8 GB.
      const std::vector<std::string> args = {"podnet",
                                             "train",
                                             "clos-1m",
                                             "--engine",
                                             "analytical",
                                             "--set",
                                             "workload.dp=8192",
                                             "--set",
                                             "workload.global_batch=131072",
                                             "--set",
                                             "network.threads=1"};
      const std::string label = "podnet train clos-1m at DP 8,192";
      return podnet::bench::run_in_child(label.c_str(), [&] { return run_command(label, args); });
    }
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = std::atoi(argv[++i]);
  }
  std::printf("scale_bench: one iteration of the default job, DP scaled with the cluster (aipod-16k, TP8 x PP16), "
              "network.threads=%d\n",
              threads);
  for (const char* e : engines)
    for (const int64_t gpus : {16384, 32768, 65536, 98304, 131072})
      if (podnet::bench::run_in_child(e, [&] { return run_case(e, gpus, threads); }) != 0) {
        std::printf("%s at %lld GPUs: failed\n", e, static_cast<long long>(gpus));
        return 1;
      }
  return 0;
}
