// Independent tasks 0 .. n-1 on up to `threads` threads, each task once, taken in index order as threads come
// free. With one thread (or one task) they run here, in order. The first exception a task throws stops new
// tasks from starting and is rethrown once the running ones end. `task` must be safe to call from several
// threads at once; what it writes to shared state it guards itself. (The sweep's points and
// plan-upgrade's steps run on it.) parallel_for_workers passes each task the number w (0 .. threads-1) of the
// worker running it too, for state kept per worker (the analytical engine's scratch and route compilers).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace podnet {

template <class Task>
void parallel_for_workers(size_t n, size_t threads, Task&& task) {
  threads = std::min(threads, n);
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) task(i, size_t{0});
    return;
  }
  std::atomic<size_t> next{0};
  std::mutex mu;  // guards error
  std::exception_ptr error;
  auto worker = [&](size_t w) {
    for (size_t i = next++; i < n; i = next++) {
      {
        const std::lock_guard<std::mutex> lock(mu);
        if (error) return;
      }
      try {
        task(i, w);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) pool.emplace_back(worker, t);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

template <class Task>
void parallel_for(size_t n, size_t threads, Task&& task) {
  parallel_for_workers(n, threads, [&](size_t i, size_t) { task(i); });
}

}  // namespace podnet
