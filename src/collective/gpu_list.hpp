// Communicator groups from a GPU list string.
//
// Syntax: comma-separated items, each
//   a        one GPU
//   a-b      GPUs a..b inclusive (a <= b)
//   a-b:s    GPUs a, a+s, a+2s, ... <= b (stride s >= 1)
// e.g. "0-511", "0-4095:8", "0,8,16", "0-7,64-71". Spaces around items are
// ignored. The result keeps the listed order (it is the group's naive ring
// order). Errors (InputError, naming the list and the offending item): bad
// syntax, a range with b < a, a stride < 1, a GPU outside [0, total_gpus),
// a GPU listed twice, an empty list.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace podnet::collective {

std::vector<int32_t> parse_gpu_list(const std::string& spec, int32_t total_gpus);

}  // namespace podnet::collective
