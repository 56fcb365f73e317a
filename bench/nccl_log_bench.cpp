// nccl_log_bench: how fast `podnet calibrate --nccl-tests` reads nccl-tests
// output: every log of tests/data/nccl-tests/ (real runs, with launcher
// prefixes, NCCL_ALGO settings and rank lines) parsed 200 times. Prints the
// bytes and lines read per second and the logs found, so a speed-up that
// changes what is read shows. An optional argument replaces the folder.
#include "bench_util.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "study/nccl_tests_log.hpp"

int main(int argc, char** argv) {
  using podnet::bench::cpu_seconds;
  using podnet::bench::since;
  const std::string dir = argc > 1 ? argv[1] : PODNET_SOURCE_DIR "/tests/data/nccl-tests";
  std::vector<std::filesystem::path> paths;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".log") paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> texts;
  size_t bytes = 0, lines = 0;
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    texts.push_back(ss.str());
    bytes += texts.back().size();
    lines += static_cast<size_t>(std::count(texts.back().begin(), texts.back().end(), '\n'));
  }
  constexpr int kPasses = 200;
  size_t logs = 0, rows = 0;
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  for (int pass = 0; pass < kPasses; ++pass)
    for (size_t i = 0; i < texts.size(); ++i)
      for (const auto& log : podnet::study::parse_nccl_tests(texts[i], paths[i].string())) {
        ++logs;
        rows += log.rows.size();
      }
  const double wall = since(wall0), cpu = cpu_seconds() - cpu0;
  std::printf("nccl_log_bench: %zu files, %zu bytes, %zu lines, parsed %d times\n", texts.size(), bytes, lines,
              kPasses);
  std::printf("  wall %.3f s, cpu %.3f s: %.1f MB/s, %.0f lines/s\n", wall, cpu,
              static_cast<double>(bytes) * kPasses / wall / 1e6, static_cast<double>(lines) * kPasses / wall);
  std::printf("  found %zu logs and %zu result rows per pass\n", logs / kPasses, rows / kPasses);
  return 0;
}
