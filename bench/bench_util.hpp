// Shared by the benchmarks: run one case in its own process, so that its
// peak RSS (getrusage RUSAGE_SELF in the child) is its own and one case's
// heap does not inflate the next one's figures; the process's CPU time and
// the wall time since a point.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>

#include "core/process.hpp"

namespace podnet::bench {

// Every benchmark runs with the allocator settings of the podnet binary (core/process.hpp), so that it
// measures what a user's run costs.
inline const bool kFreedMemoryKept = (keep_freed_memory(), true);

// User + system CPU seconds of this process so far.
inline double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// Wall seconds since t0.
inline double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Forks; the child runs `run()` (an int exit code; an exception prints
// "NAME: what" and exits 2) and exits with it. Returns the child's exit code
// (-1 if fork failed or the child did not exit normally).
template <class F>
int run_in_child(const char* name, F&& run) {
  std::fflush(stdout);  // or the child inherits (and prints again) what is buffered
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    return -1;
  }
  if (pid == 0) {
    int rc = 2;
    try {
      rc = run();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", name, e.what());
    }
    std::fflush(stdout);
    _exit(rc);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace podnet::bench
