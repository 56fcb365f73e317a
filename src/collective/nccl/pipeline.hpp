// NCCL's slice pipeline: how a ring or tree moves its bytes through the
// bounded buffer of each connection (plan::Pipeline states what engines do
// with it). Facts from NVIDIA/nccl (no code reproduced):
//
// Buffers and steps (src/include/device.h, src/init.cc computeBuffSizes):
// every connection has one buffer per protocol split into NCCL_STEPS = 8
// slots (steps):
//   simple  NCCL_BUFFSIZE 4 MiB            -> step 512 KiB
//   ll      8 lines x 512 threads x 8 steps x 16 B = 512 KiB -> step 64 KiB
//           (a 16-byte line carries 8 B of data: 32 KiB of data a step)
//   ll128   120 x 640 threads x 8 steps x 8 B = 4,915,200 B -> step 614,400 B
//           (a 128-byte line carries 120 B: 576,000 B of data a step)
// Chunks and slices (src/include/collectives.h, src/enqueue.cc
// calcCollChunking): only the simple ring uses several steps per chunk:
// all-reduce, all-gather and reduce-scatter CHUNKSTEPS = NCCL_STEPS/2 = 4
// and SLICESTEPS = NCCL_STEPS/4 = 2 (a 2 MiB chunk of two 1 MiB slices);
// broadcast and reduce 1 and 1; every other (algorithm, protocol) one step
// per chunk and per slice. Data per chunk: simple step x chunksteps; ll
// half of it; ll128 (step / 16) x 15.
// Loops (enqueue.cc, src/device/all_reduce.h runRing): a ring all-reduce
// channel works in loops of n chunks (one per rank): 2(n-1) ring steps a
// loop (reduce-scatter then all-gather; n-1 for all-gather and
// reduce-scatter); the last loop's chunk shrinks to ceil(rest / n) (16 B
// aligned). A chunk of e bytes is cut into slices of max(ceil(e / 32) x 16,
// slice / 32) bytes (src/device/prims_simple.h), so into 2 slices when e >
// 32 KiB (simple) and 1 otherwise. Broadcast / reduce chains and trees
// (patterns PipelineFrom/To, TreeUpDown) take one chunk a step.
// Window (prims_simple.h): a sender waits while it is NCCL_STEPS steps
// ahead of what its receiver has consumed: NCCL_STEPS / SLICESTEPS slices
// (4 for the simple ring all-reduce, 8 otherwise).
// LL and LL128 carry a flag in every line (prims_ll.h, prims_ll128.h): a
// receiver forwards a line as soon as it reads it, not when the whole step
// has arrived. The block reads a step in passes: LL 512 threads x one 16 B
// line = 8 KiB a pass, 8 passes a 64 KiB step; LL128 20 warps x 32 threads
// x 8 x 8 B = 40 KiB a pass, 15 passes a 614,400 B step. podnet's slice for
// them is one pass (a step's data / passes), and the window counts passes.
// Tree ll128 chunks shrink for small sizes (enqueue.cc): with ppn GPUs a
// node and s = 1 + floor(log2 nodes) + 0.1 ppn, halve while S / (channels
// x chunk) < 64 s / ppn and chunk > 128 KiB, then while < 16 s / ppn and
// chunk > 32 KiB.
//
// podnet's plan::Pipeline per transfer (one channel, its data D bytes;
// every hop's bytes, inflated by the protocol afterwards, cut into equal
// slices):
//   ring all-reduce / all-gather / reduce-scatter: loops = ceil(D / (n x
//     chunk)), k = slices per chunk (simple: 2 when the loop's chunk
//     exceeds 32 KiB, else 1; ll 8, ll128 15: its passes), steps = 2(n-1)
//     or n-1 a loop: slices = loops x steps x k, lag = k, period = steps x k.
//   broadcast / reduce chain, tree (each half): slices = ceil(D / chunk) x
//     passes (1 for simple), lag = 0, period = 0 (every slice forwards; a
//     tree's reduce waits for every child, its broadcast for the parent).
//   window = NCCL_STEPS / slicesteps x passes.
// Before 2026-11 an LL / LL128 slice was a whole step, so a chain forwarded
// 576,000 B at a time: the packet engine's ll128 broadcast of 32 MiB on 16
// GPUs took 2.0 x the flow engine's time, now 1.16 x.
// Approximation: every slice of a hop has the same size (NCCL's last,
// shorter loop has shorter slices), slices >= 1 and at most one byte each.
// A ring with fewer bytes a hop than slices takes fewer slices per chunk
// (down to one a step, the window scaled alike) rather than fewer steps:
// its chain of 2(n-1) or n-1 steps, each waiting for the previous hop's
// delivery, is what a small collective's time is made of (an 8 B
// all-reduce on 8 ranks: 14 B a hop, 14 slices of one step each). Only
// with fewer bytes than steps are its last steps cut.
// Plans stay small: a pipeline is four numbers on a transfer, whatever the
// size.
#pragma once

#include <cstdint>

#include "collective/nccl/tuner.hpp"
#include "collective/types.hpp"
#include "core/units.hpp"
#include "plan/transfer_plan.hpp"

namespace podnet::collective {

inline constexpr int32_t kNcclSteps = 8;  // NCCL_STEPS (device.h)

// Bytes of one step (buffer slot) of protocol p, on the wire.
int64_t nccl_step_bytes(Proto p);
// Data bytes of one chunk of (op, algo, p) before NCCL shrinks it for small sizes.
int64_t nccl_chunk_bytes(Op op, Algo algo, Proto p);

// The pipeline of one transfer of algorithm `algo` carrying D = `data`
// bytes of one channel (a tree: one half), over n ranks; `total` is the
// collective's size S and `shape` the communicator (tree ll128's chunk).
plan::Pipeline nccl_pipeline(Op op, Algo algo, Proto p, int32_t n, Bytes data, Bytes total, int32_t channels,
                             const CommShape& shape);

// Sets the pipeline of every Ring / Coupled transfer of a ring or tree
// plan (as built, before the protocol inflates its bytes): D is the
// channel's share (detail::split of S over `channels`), halved for a tree.
void set_nccl_pipelines(plan::TransferPlan& plan, Op op, Algo algo, Proto p, int32_t n, Bytes total, int32_t channels,
                        const CommShape& shape);

}  // namespace podnet::collective
