// train_bench: how fast one training iteration of the default run (podnet
// run: aipod-16k, Llama 3 405B, TP8 x PP16 x DP128 on 16,384 GPUs) is simulated
// on the flow engine and on the analytical engine: wall time, CPU time and
// peak resident memory, next to the simulated iteration time (so a speed-up
// that changes the answer shows). Target (issue): under 10 s and 2 GB on the
// flow engine. Each engine runs in its own forked process so its peak memory
// is its own. --packet G instead times Llama 3 8B (TP 8, DP G / 8, 8
// microbatches a replica) on the packet engine, one thread: target (issue),
// a 1,024-GPU iteration within 5 minutes of CPU (about 5 minutes to run).
#include "bench_util.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "train_util.hpp"

namespace {

using podnet::bench::cpu_seconds;

using namespace podnet;

const char* g_scenario = "aipod-16k";

int run_case(const char* engine_name) {
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  const workload::TrainResult r = bench::train_iteration(g_scenario, engine_name, {});
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const double cpu = cpu_seconds() - cpu0;
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const double peak_mb = static_cast<double>(u.ru_maxrss) / 1024.0;
  std::printf("%-10s  wall %7.3f s  cpu %7.3f s  peak %7.1f MB  | iteration %.2f ms, %lld transfers  | target "
              "<10 s, <2 GB: %s\n",
              engine_name, wall, cpu, peak_mb, r.iteration.seconds() * 1e3, static_cast<long long>(r.plan_transfers),
              wall < 10 && peak_mb < 2048 ? "met" : "MISSED");
  return 0;
}

// Llama 3 8B on `gpus` GPUs of aipod-16k on the packet engine (docs/contributing/validation/packet-engine.md,
// "A training iteration at cluster scale").
int run_packet(int64_t gpus) {
  const double cpu0 = cpu_seconds();
  const int64_t dp = gpus / 8;
  const workload::TrainResult r =
      bench::train_iteration("aipod-16k", "packet",
                             {"workload.model=llama3-8b", "workload.tp=8", "workload.pp=1", "workload.interleave=1",
                              "workload.dp=" + std::to_string(dp), "workload.global_batch=" + std::to_string(dp * 8)});
  const double cpu = cpu_seconds() - cpu0;
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  std::printf("packet  %lld GPUs  cpu %8.2f s  peak %7.1f MB  | iteration %.2f ms  | target (1,024 GPUs) <300 s: %s\n",
              static_cast<long long>(gpus), cpu, static_cast<double>(u.ru_maxrss) / 1024.0, r.iteration.seconds() * 1e3,
              cpu < 300 ? "met" : "MISSED");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  podnet::use_huge_pages(argv);  // as the podnet binary runs (core/process.hpp)
  // --torus: torus-3d-4k's job instead (GPT-3 175B on 4,096 chips, TP8 x PP8 x DP64), whose data-parallel
  // collectives are the torus's own (collective/torus.hpp).
  if (argc > 1 && std::string(argv[1]) == "--torus") g_scenario = "torus-3d-4k";
  if (argc > 2 && std::string(argv[1]) == "--packet") {
    const int64_t gpus = std::atoll(argv[2]);
    if (gpus < 8 || gpus % 8 != 0) {
      std::fprintf(stderr, "train_bench --packet G: G, the GPUs, a multiple of 8 (1024 for the target)\n");
      return 2;
    }
    std::printf("train_bench --packet: one iteration of Llama 3 8B (TP 8 x DP %lld) on the packet engine\n",
                static_cast<long long>(gpus / 8));
    return run_packet(gpus);
  }
  std::printf("train_bench: one iteration of %s\n",
              std::string(g_scenario) == "aipod-16k" ? "the default run (aipod-16k, Llama 3 405B, TP8 x PP16 x DP128)"
                                                     : "torus-3d-4k (GPT-3 175B, TP8 x PP8 x DP64 on 4,096 chips)");
  for (const char* e : {"flow", "analytical"})
    if (podnet::bench::run_in_child(e, [&] { return run_case(e); }) != 0) {
      std::printf("%s: failed\n", e);
      return 1;
    }
  return 0;
}
