// Types the collective layer's headers share: the communicator group and
// the ops (nccl-tests' definitions, see collective.hpp).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace podnet::collective {

using Group = std::vector<int32_t>;  // global GPU ranks

// Permutation and Incast are traffic patterns for congestion-control studies
// (patterns.hpp), not NCCL collectives.
enum class Op : uint8_t {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  Broadcast,
  Reduce,
  SendRecv,
  Permutation,
  Incast
};

const std::vector<Op>& all_ops();
const char* op_name(Op op);  // "allreduce", "allgather", ...
// Parses an op name; throws InputError listing the valid names.
Op parse_op(std::string_view name);

// nccl-tests' busbw = algbw x bus_factor(op, n). n = 1 gives 0 for the
// (n-1)/n family (no data moves) and 1 for broadcast/reduce/sendrecv and the
// patterns (permutation, incast: S is what each sender sends).
double bus_factor(Op op, int64_t n);

}  // namespace podnet::collective
