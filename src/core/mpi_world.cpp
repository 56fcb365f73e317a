#include "core/mpi_world.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "core/error.hpp"

namespace podnet::mpi {

namespace {
World g_world;
bool g_joined = false;
void finalize() {
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}
}  // namespace

int launched_ranks() {
  const char* n = std::getenv("OMPI_COMM_WORLD_SIZE");
  return n ? std::max(1, std::atoi(n)) : 1;
}

int local_ranks() {
  const char* n = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  return n ? std::max(1, std::atoi(n)) : 1;
}

int cores_per_rank() {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores / (g_world.size > 1 ? local_ranks() : 1));
}

const World& join() {
  if (g_joined || launched_ranks() < 2) return g_world;
  g_joined = true;
  // Worker threads never call MPI: the thread that joined makes every call (MPI_THREAD_FUNNELED).
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw Error("mpirun: MPI_Init_thread failed");
  std::atexit(finalize);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_world.size);
  if (g_world.rank != 0) {  // the same results as rank 0: it alone speaks
    if (!std::freopen("/dev/null", "w", stdout) || !std::freopen("/dev/null", "w", stderr))
      throw Error("mpirun: cannot silence the output of a rank other than 0");
  }
  return g_world;
}

const World& world() { return g_world; }

std::string output_path(const std::string& path) { return g_world.rank == 0 ? path : "/dev/null"; }

}  // namespace podnet::mpi
