// Helpers for the end-to-end tests of the podnet binary (cli_test.cpp,
// cmd_calibrate_test.cpp): run a command line, keep its output and exit
// status, and write scratch files under one directory per test process.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace podnet::cli::testing {

struct Result {
  int status = -1;
  std::string out;
};

// Runs a shell command line; its stdout (and stderr with merge_stderr) and exit status.
inline Result run_shell(const std::string& command, bool merge_stderr = false) {
  const std::string cmd = command + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 65536> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// Runs the podnet binary under test with `args`.
// podnet under Open MPI (openmpi-bin from scripts/setup.sh): root and more ranks than cores allowed. The
// ranks run with LeakSanitizer off (`make test-sanitize`; ignored by other builds): Debian's Open MPI is
// not instrumented and leaves allocations of its plugins at exit, after unloading them, so LSan can
// neither attribute nor suppress them. ASan's other checks and UBSan stay on in the ranks.
inline std::string mpirun(int ranks) {
  return "mpirun --allow-run-as-root --oversubscribe -x ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=1 "
         "-n " +
         std::to_string(ranks) + " " + std::string(PODNET_BINARY) + " ";
}

// `text` with every run of spaces and line breaks as one space: a report's prose wraps at 120 characters
// (report::wrap_prose), so a sentence is looked for in flat(out), not at a given line break.
inline std::string flat(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool space = c == ' ' || c == '\n';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  return out;
}

inline Result run(const std::string& args, bool merge_stderr = false) {
  return run_shell(std::string(PODNET_BINARY) + " " + args, merge_stderr);
}

// A scratch directory for this test process: <tmp>/<prefix>_<pid>. The first call of a process empties it: an
// earlier process with the same pid (pids are reused) may have left files there that a test would take for its own.
inline std::filesystem::path temp_dir(const std::string& prefix) {
  static std::set<std::string> made;
  std::filesystem::path d = std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(::getpid()));
  std::error_code ignored;  // what cannot be removed stays (the test then meets it, as before)
  if (made.insert(prefix).second) std::filesystem::remove_all(d, ignored);
  std::filesystem::create_directories(d);
  return d;
}

// Writes `text` to dir/name; returns the path.
inline std::string write_file(const std::filesystem::path& dir, const std::string& name, const std::string& text) {
  const std::filesystem::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace podnet::cli::testing
