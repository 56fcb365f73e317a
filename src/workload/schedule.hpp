// Pipeline schedules: the order in which one pipeline rank runs its forward
// and backward passes, as Megatron-LM does (megatron/core/pipeline_parallel/
// schedules.py).
//
// 1F1B (PipeDream-Flush; v = 1), pipeline rank i of p, m microbatches:
//   warmup   W = min(p - i - 1, m) forwards,
//   steady   m - W pairs (forward of microbatch W + k, backward of k),
//   cooldown the W remaining backwards.
// Bubble fraction (p - 1)/m of the ideal time (all ranks idle (p-1)(t_f+t_b)).
//
// Interleaved 1F1B (v model chunks per rank; rank i holds virtual stages
// c p + i, c = 0..v-1; needs m divisible by p): the m v virtual microbatches
// k = 0..m v - 1 run in groups of p: chunk(k) = (k mod p v) / p (backward:
// v - 1 - that), microbatch(k) = (k / (p v)) p + k mod p;
//   warmup   W = min((p - i - 1) 2 + (v - 1) p, m v) forwards,
//   steady   m v - W pairs (forward W + k, backward k), cooldown the rest.
// Bubble (p - 1)/(v m).
#pragma once

#include <cstdint>
#include <vector>

namespace podnet::workload {

struct PipeOp {
  bool forward = true;
  int32_t chunk = 0;  // model chunk on this rank (virtual stage = chunk * p + rank)
  int32_t microbatch = 0;
};

// The ops of pipeline rank `stage` in execution order (2 m v ops).
std::vector<PipeOp> pipeline_order(int32_t p, int32_t v, int32_t m, int32_t stage);

}  // namespace podnet::workload
