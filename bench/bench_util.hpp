// Shared by the benchmarks: run one case in its own process, so that its
// peak RSS (getrusage RUSAGE_SELF in the child) is its own and one case's
// heap does not inflate the next one's figures.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>

namespace podnet::bench {

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
