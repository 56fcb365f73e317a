#include "collective/nccl/pipeline.hpp"

#include <algorithm>

#include "collective/plan_util.hpp"

namespace podnet::collective {

namespace {

constexpr int64_t kSimpleBuffer = int64_t{1} << 22;           // NCCL_BUFFSIZE default, 4 MiB
constexpr int64_t kLLBuffer = int64_t{8} * 512 * 8 * 16;      // lines/thread x threads x steps x 16 B line
constexpr int64_t kLL128Buffer = int64_t{120} * 640 * 8 * 8;  // elements/thread x threads x steps x 8 B

bool simple_ring_multi_step(Op op, Algo algo, Proto p) {
  return p == Proto::Simple && algo == Algo::Ring &&
         (op == Op::AllReduce || op == Op::AllGather || op == Op::ReduceScatter);
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Passes of a thread block over one step of LL / LL128: each line carries its own flag, so a receiver forwards
// what one pass read without waiting for the rest of the step (1 for Simple, whose step is one flag).
int64_t passes_per_step(Proto p) {
  switch (p) {
    case Proto::LL: return 8;      // 64 KiB step / (512 threads x one 16 B line a pass) (prims_ll.h)
    case Proto::LL128: return 15;  // 614,400 B step / (20 warps x 32 x 8 x 8 B a pass) (prims_ll128.h)
    case Proto::Simple: return 1;
  }
  return 1;
}

int32_t floor_log2(int64_t v) {
  int32_t r = 0;
  while (v > 1) v >>= 1, ++r;
  return r;
}

// At most one slice a byte. A ring keeps its steps: it takes fewer slices per chunk first (at least one a
// step, so a slice still forwards what the previous hop delivered one step before), and cuts the count
// only when it has fewer bytes than steps (then its last steps are missing).
void fit_slices(plan::Pipeline& pl, int64_t bytes) {
  bytes = std::max<int64_t>(1, bytes);
  if (pl.slices <= bytes) return;
  if (pl.period > 0 && pl.lag > 0) {
    const int64_t k = pl.lag, steps = pl.period / k, loops = std::max<int64_t>(1, pl.slices / pl.period);
    const int64_t k2 = std::clamp<int64_t>(bytes / (loops * steps), 1, k);
    if (k2 < k) {
      pl.window = static_cast<int32_t>(std::max<int64_t>(k2 + 1, pl.window * k2 / k));
      pl.lag = static_cast<int32_t>(k2);
      pl.period = steps * k2;
      pl.slices = loops * steps * k2;
    }
  }
  pl.slices = std::min(pl.slices, bytes);
}

}  // namespace

int64_t nccl_step_bytes(Proto p) {
  switch (p) {
    case Proto::LL: return kLLBuffer / kNcclSteps;          // 65,536
    case Proto::LL128: return kLL128Buffer / kNcclSteps;    // 614,400
    case Proto::Simple: return kSimpleBuffer / kNcclSteps;  // 524,288
  }
  return kSimpleBuffer / kNcclSteps;
}

int64_t nccl_chunk_bytes(Op op, Algo algo, Proto p) {
  const int64_t steps = simple_ring_multi_step(op, algo, p) ? kNcclSteps / 2 : 1;  // CHUNKSTEPS
  const int64_t chunk = nccl_step_bytes(p) * steps;
  switch (p) {
    case Proto::LL: return chunk / 2;           // 8 B of data per 16 B line
    case Proto::LL128: return chunk / 16 * 15;  // 120 B of data per 128 B line
    case Proto::Simple: return chunk;
  }
  return chunk;
}

plan::Pipeline nccl_pipeline(Op op, Algo algo, Proto p, int32_t n, Bytes data, Bytes total, int32_t channels,
                             const CommShape& shape) {
  plan::Pipeline pl;
  if (data <= 0 || n <= 1) return pl;
  int64_t chunk = nccl_chunk_bytes(op, algo, p);
  const int32_t slice_steps = simple_ring_multi_step(op, algo, p) ? kNcclSteps / 4 : 1;  // SLICESTEPS
  const int64_t passes = passes_per_step(p);  // LL / LL128: a slice is one pass of the block over a step
  pl.window = static_cast<int32_t>(kNcclSteps / slice_steps * passes);
  if (algo == Algo::Ring && (op == Op::AllReduce || op == Op::AllGather || op == Op::ReduceScatter)) {
    const int64_t steps = op == Op::AllReduce ? 2 * (n - 1) : n - 1;
    const int64_t loops = ceil_div(data, n * chunk);
    // The loop's chunk: a full one, or (one loop) ceil(D / n) rounded up to 16 B.
    const int64_t loop_chunk = loops > 1 ? chunk : ceil_div(ceil_div(data, n), 16) * 16;
    // Slices per chunk: Simple 2 when the chunk exceeds 32 KiB (prims_simple.h), LL / LL128 a pass each.
    const int64_t k = slice_steps > 1 && loop_chunk > 32 * 1024 ? 2 : passes;
    pl.lag = static_cast<int32_t>(k);
    pl.period = steps * k;
    pl.slices = loops * steps * k;
  } else {
    if (algo == Algo::Tree && p == Proto::LL128) {
      const int32_t nodes = std::max(1, shape.nodes);
      const double ppn = static_cast<double>(std::max(1, shape.ranks)) / nodes;
      const double s = 1 + floor_log2(nodes) + 0.1 * ppn;
      const int64_t per = std::max<int64_t>(1, channels);
      while (static_cast<double>(total / (per * chunk)) < s * 64 / ppn && chunk > 131072) chunk /= 2;
      while (static_cast<double>(total / (per * chunk)) < s * 16 / ppn && chunk > 32768) chunk /= 2;
    }
    pl.slices = ceil_div(data, chunk) * passes;
  }
  // A ring hop carries steps x D / n (every step one rank's chunk), the rest D.
  fit_slices(pl, pl.period > 0 ? ceil_div((pl.period / pl.lag) * data, n) : data);
  return pl;
}

void set_nccl_pipelines(plan::TransferPlan& plan, Op op, Algo algo, Proto p, int32_t n, Bytes total, int32_t channels,
                        const CommShape& shape) {
  if (algo != Algo::Ring && algo != Algo::Tree) return;
  const auto shares = detail::split(total, std::max(1, channels));
  for (auto& t : plan.transfers) {
    if (t.kind != plan::TransferKind::Ring && t.kind != plan::TransferKind::Coupled) continue;
    if (t.channel < 0 || t.channel >= static_cast<int32_t>(shares.size())) continue;
    const Bytes data = t.kind == plan::TransferKind::Coupled ? t.bytes : shares[t.channel];
    t.pipeline = nccl_pipeline(op, algo, p, n, data, total, channels, shape);
    // A byte a slice at least on every QP's stream (each carries bytes / qps and is cut into the slices).
    fit_slices(t.pipeline, t.bytes / std::max(1, t.qps));
  }
}

}  // namespace podnet::collective
