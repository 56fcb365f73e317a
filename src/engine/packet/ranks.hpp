// Ranks: the messages of the partitioned packet engine across MPI processes
// (partition.hpp, "Ranks"). Only the thread that joined the job
// (core/mpi_world.hpp) calls these, and every rank calls each in the same
// order.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/event_queue.hpp"

namespace podnet::engine::packet::ranks {

// An event crossing ranks: mailed by lane `from` to lane `to` (the coordinator's box: the lane count),
// or (to == kProgress) a pipelined stream's receiver progress: a = the stream, b = its next PSN, tag = done.
struct Wire {
  Event e;
  int32_t from = 0;
  int32_t to = 0;
};
inline constexpr int32_t kProgress = -1;

// What a rank tells the others at a window's end (about its own lanes).
struct Status {
  int64_t next = 0;     // its earliest event (INT64_MAX: none)
  int64_t last_tx = 0;  // the last data packet put on a wire
  int64_t paused = 0;   // ports whose data class is paused
  int64_t events = 0;   // events run so far
  int64_t now = 0;      // the latest lane clock
  int64_t failed = 0;   // 1: a lane threw (first_error says what)
};

// Every rank's status in `all`; `out[r]` to rank r, what the others sent in `in` (rank order).
void exchange(const Status& mine, std::vector<Status>& all, std::vector<std::vector<Wire>>& out, std::vector<Wire>& in);

// The message of the lowest rank that failed (every rank calls it when any did).
std::string first_error(const std::string& mine);

// Every rank's items, in rank order (a trivially copyable type).
template <typename T>
std::vector<T> all_of(const std::vector<T>& mine);
std::vector<char> all_bytes(const std::vector<char>& mine);
template <typename T>
std::vector<T> all_of(const std::vector<T>& mine) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<char> bytes(mine.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), mine.data(), bytes.size());
  const std::vector<char> all = all_bytes(bytes);
  std::vector<T> out(all.size() / sizeof(T));
  if (!all.empty()) std::memcpy(static_cast<void*>(out.data()), all.data(), all.size());
  return out;
}

// Element-wise over every rank, in place.
void sum(std::vector<uint64_t>& v);
void sum(std::vector<double>& v);
void max(std::vector<int64_t>& v);
void max(std::vector<double>& v);

}  // namespace podnet::engine::packet::ranks
