// The MPI job one podnet run is spread over.
//
// `mpirun -n N podnet bench ...` starts N processes (ranks) of one run. The
// commands that spread a run (bench, train) join the job first; the
// partitioned packet engine then runs its lanes on every rank
// (engine/packet/partition.hpp, "Ranks"). Every rank ends with the same
// results; rank 0 alone writes output (the others write to /dev/null).
// Sweeps use MPI their own way (study/sweep.hpp: a point per rank) and do
// not join here.
#pragma once

#include <string>

namespace podnet::mpi {

struct World {
  int rank = 0;
  int size = 1;
};

// The ranks Open MPI's launcher started (OMPI_COMM_WORLD_SIZE; 1 outside mpirun).
int launched_ranks();

// The ranks of the job on this machine (OMPI_COMM_WORLD_LOCAL_SIZE; 1 outside mpirun).
int local_ranks();

// This machine's cores, shared among the job's ranks on it once joined (at least 1).
int cores_per_rank();

// Joins the job this process was started in (MPI_Init_thread, once; MPI_Finalize at exit) when it
// has two or more ranks, and silences stdout and stderr on every rank but 0. Returns the world.
const World& join();

// The world joined: rank 0 of 1 unless join() ran under mpirun with two or more ranks.
const World& world();

// A path to write output to: `path`, or /dev/null on a rank other than 0.
std::string output_path(const std::string& path);

}  // namespace podnet::mpi
