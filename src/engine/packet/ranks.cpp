#include "engine/packet/ranks.hpp"

#include <mpi.h>

#include <cstring>
#include <type_traits>

#include "core/error.hpp"

namespace podnet::engine::packet::ranks {

static_assert(std::is_trivially_copyable_v<Wire> && std::is_trivially_copyable_v<Status>);

namespace {
void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw Error(std::string("packet engine: ranks: ") + what + " failed");
}
int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}
}  // namespace

void exchange(const Status& mine, std::vector<Status>& all, std::vector<std::vector<Wire>>& out,
              std::vector<Wire>& in) {
  const int n = world_size();
  // One gather: each rank's status and how many events it sends each rank.
  constexpr int kStatus = sizeof(Status) / sizeof(int64_t);
  std::vector<int64_t> row(static_cast<size_t>(kStatus + n)), rows(row.size() * static_cast<size_t>(n));
  std::memcpy(row.data(), &mine, sizeof(Status));
  for (int r = 0; r < n; ++r)
    row[static_cast<size_t>(kStatus + r)] = static_cast<int64_t>(out[static_cast<size_t>(r)].size());
  check(MPI_Allgather(row.data(), static_cast<int>(row.size()), MPI_INT64_T, rows.data(), static_cast<int>(row.size()),
                      MPI_INT64_T, MPI_COMM_WORLD),
        "MPI_Allgather");
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  all.resize(static_cast<size_t>(n));
  std::vector<int> send_n(static_cast<size_t>(n)), send_at(static_cast<size_t>(n)), recv_n(static_cast<size_t>(n)),
      recv_at(static_cast<size_t>(n));
  std::vector<Wire> flat;
  int total_in = 0;
  for (int r = 0; r < n; ++r) {
    const int64_t* x = rows.data() + static_cast<size_t>(r) * row.size();
    std::memcpy(static_cast<void*>(&all[static_cast<size_t>(r)]), x, sizeof(Status));
    const int64_t bytes_in = x[kStatus + me] * static_cast<int64_t>(sizeof(Wire));
    const int64_t bytes_out = static_cast<int64_t>(out[static_cast<size_t>(r)].size() * sizeof(Wire));
    if (bytes_in > INT32_MAX || bytes_out > INT32_MAX)
      throw Error("packet engine: ranks: more than 2 GiB of events between two ranks in one window");
    recv_n[static_cast<size_t>(r)] = static_cast<int>(bytes_in);
    recv_at[static_cast<size_t>(r)] = total_in;
    total_in += static_cast<int>(bytes_in);
  }
  int at = 0;
  for (int r = 0; r < n; ++r) {
    send_n[static_cast<size_t>(r)] = static_cast<int>(out[static_cast<size_t>(r)].size() * sizeof(Wire));
    send_at[static_cast<size_t>(r)] = at;
    at += send_n[static_cast<size_t>(r)];
    flat.insert(flat.end(), out[static_cast<size_t>(r)].begin(), out[static_cast<size_t>(r)].end());
    out[static_cast<size_t>(r)].clear();
  }
  in.resize(static_cast<size_t>(total_in) / sizeof(Wire));
  check(MPI_Alltoallv(flat.data(), send_n.data(), send_at.data(), MPI_BYTE, in.data(), recv_n.data(), recv_at.data(),
                      MPI_BYTE, MPI_COMM_WORLD),
        "MPI_Alltoallv");
}

std::string first_error(const std::string& mine) {
  const int n = world_size();
  const int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<size_t>(n)), at(static_cast<size_t>(n));
  check(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
  int total = 0;
  for (int r = 0; r < n; ++r) {
    at[static_cast<size_t>(r)] = total;
    total += lens[static_cast<size_t>(r)];
  }
  std::string all(static_cast<size_t>(total), '\0');
  check(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), at.data(), MPI_CHAR, MPI_COMM_WORLD),
        "MPI_Allgatherv");
  for (int r = 0; r < n; ++r)
    if (lens[static_cast<size_t>(r)] > 0)
      return "rank " + std::to_string(r) + ": " +
             all.substr(static_cast<size_t>(at[static_cast<size_t>(r)]),
                        static_cast<size_t>(lens[static_cast<size_t>(r)]));
  return "";
}

std::vector<char> all_bytes(const std::vector<char>& mine) {
  const int n = world_size();
  if (mine.size() > static_cast<size_t>(INT32_MAX)) throw Error("packet engine: ranks: a gather too large");
  const int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<size_t>(n)), at(static_cast<size_t>(n));
  check(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
  int64_t total = 0;
  for (int r = 0; r < n; ++r) {
    if (total > INT32_MAX) throw Error("packet engine: ranks: a gather too large");
    at[static_cast<size_t>(r)] = static_cast<int>(total);
    total += lens[static_cast<size_t>(r)];
  }
  if (total > INT32_MAX) throw Error("packet engine: ranks: a gather too large");
  std::vector<char> all(static_cast<size_t>(total));
  check(MPI_Allgatherv(mine.data(), len, MPI_BYTE, all.data(), lens.data(), at.data(), MPI_BYTE, MPI_COMM_WORLD),
        "MPI_Allgatherv");
  return all;
}

namespace {
template <typename T>
void reduce(std::vector<T>& v, MPI_Datatype type, MPI_Op op) {
  if (v.size() > static_cast<size_t>(INT32_MAX)) throw Error("packet engine: ranks: a reduction too large");
  check(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), type, op, MPI_COMM_WORLD), "MPI_Allreduce");
}
}  // namespace

void sum(std::vector<uint64_t>& v) { reduce(v, MPI_UINT64_T, MPI_SUM); }
void sum(std::vector<double>& v) { reduce(v, MPI_DOUBLE, MPI_SUM); }
void max(std::vector<int64_t>& v) { reduce(v, MPI_INT64_T, MPI_MAX); }
void max(std::vector<double>& v) { reduce(v, MPI_DOUBLE, MPI_MAX); }

}  // namespace podnet::engine::packet::ranks
