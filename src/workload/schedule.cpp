#include "workload/schedule.hpp"

#include <algorithm>

namespace podnet::workload {

std::vector<PipeOp> pipeline_order(int32_t p, int32_t v, int32_t m, int32_t stage) {
  std::vector<PipeOp> ops;
  const int32_t total = m * v;
  ops.reserve(static_cast<size_t>(2 * total));
  auto fwd = [&](int32_t k) {
    if (v == 1) return PipeOp{true, 0, k};
    const int32_t in_group = k % (p * v);
    return PipeOp{true, in_group / p, (k / (p * v)) * p + k % p};
  };
  auto bwd = [&](int32_t k) {
    if (v == 1) return PipeOp{false, 0, k};
    const int32_t in_group = k % (p * v);
    return PipeOp{false, v - 1 - in_group / p, (k / (p * v)) * p + k % p};
  };
  const int32_t warmup = v == 1 ? std::min(p - stage - 1, m) : std::min((p - stage - 1) * 2 + (v - 1) * p, total);
  for (int32_t k = 0; k < warmup; ++k) ops.push_back(fwd(k));
  for (int32_t k = 0; k < total - warmup; ++k) {
    ops.push_back(fwd(warmup + k));
    ops.push_back(bwd(k));
  }
  for (int32_t k = total - warmup; k < total; ++k) ops.push_back(bwd(k));
  return ops;
}

}  // namespace podnet::workload
