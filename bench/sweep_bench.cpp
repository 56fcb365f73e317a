// sweep_bench: a 1,000-point `podnet design` sweep (bench/design_sweep_1000.yaml
// on aipod-16k: 2,048 to 20,480 GPUs, five leaf ratios, two radixes, ten NIC
// prices) on 1 and 2 threads, run as `podnet sweep` itself (SQLite database,
// a transaction per point), timed from outside: wall, CPU of the podnet
// process, points per second and the points that failed (a radix-64 fabric
// beyond its 3-tier limit is an error row, which costs little). Target
// (issue): 1,000 points in under 30 s on 2 cores.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;

double children_cpu() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

int main() {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("podnet-sweep-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::printf("sweep_bench: 1,000-point design sweep of aipod-16k (%s)\n", PODNET_SWEEP_FILE);
  std::printf("%-8s %10s %10s %12s %s\n", "threads", "wall (s)", "CPU (s)", "points/s", "database");
  for (int jobs : {1, 2}) {
    const std::string db = (dir / ("design-j" + std::to_string(jobs) + ".db")).string();
    std::filesystem::remove(db);
    const std::string cmd = std::string(PODNET_BINARY) + " sweep aipod-16k --sweep-file " + PODNET_SWEEP_FILE + " -j " +
                            std::to_string(jobs) + " --results " + db + " --format csv > " + db + ".csv";
    const double cpu0 = children_cpu();
    const auto t0 = Clock::now();
    const int rc = std::system(cmd.c_str());
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    const double cpu = children_cpu() - cpu0;
    if (rc != 0) {
      std::printf("sweep_bench: `%s` failed (status %d)\n", cmd.c_str(), rc);
      return 1;
    }
    std::printf("%-8d %10.2f %10.2f %12.1f %s\n", jobs, wall, cpu, 1000.0 / wall, db.c_str());
  }
  std::filesystem::remove_all(dir);
  std::printf("target: under 30 s on 2 threads\n");
  return 0;
}
