// A training job: model, GPU, parallelism (TP/PP/DP/EP, interleaving,
// sequence parallelism, ZeRO) and the training budget; its validation, its
// communicator groups and its per-iteration communication volumes.
//
// Rank layout (Megatron-LM's default order "tp-cp-ep-dp-pp": tensor parallel
// fastest, then data parallel, then pipeline parallel slowest;
// megatron/core/parallel_state.py, initialize_model_parallel):
//     rank = tp_rank + t * (dp_rank + d * pp_rank)
// so a TP group is t consecutive ranks (one server when t <= GPUs/server), a
// DP group is every t-th rank inside one stage's block of t*d ranks, and a
// PP group is every (t*d)-th rank. Expert parallelism is carved out of data
// parallelism as Megatron-core does: ep divides d, dp_rank = ep_rank + ep *
// edp_rank; for expert layers an EP group is the ep consecutive DP ranks
// (same tp, pp and edp rank) and the expert-data-parallel (EDP) group the d/ep
// ranks with the same ep rank. So GPUs = t * p * d (ep does not multiply).
//
// Communicator groups: TP p*d groups of t; PP t*d groups of p; DP t*p groups
// of d; EP t*p*d/ep groups of ep and EDP t*p*ep groups of d/ep (MoE only).
// E.g. TP8 x PP4 x DP3 on 96 GPUs: 12 TP groups of 8, 24 PP groups of 4, 32
// DP groups of 3.
//
// Volumes per iteration (Narayanan et al. SC'21 §3;
// b microbatch, s sequence, h hidden, m = B/(b d) microbatches per pipeline,
// l_s = l/p layers per stage, e bytes per activation element = bytes_per_param):
//   TP  4 all-reduces of b s h e bytes per layer per microbatch (2 forward, 2
//       backward), + 2 with full activation recompute (the recomputed forward
//       repeats its all-reduces); ring traffic per GPU 2(t-1)/t x size. With
//       sequence parallelism each all-reduce is a reduce-scatter + all-gather
//       of the same total volume.
//   PP  b s h e bytes per microbatch per direction between consecutive stages
//       (x v with v interleaved chunks), split over the t TP rank pairs
//       (Megatron's scatter/gather: b s h e / t per GPU pair).
//   DP  all-reduce of the stage's gradients, P_stage / t parameters x
//       bytes_per_grad per GPU (P/(t p) on average); ring traffic per GPU
//       2(d-1)/d x size. ZeRO-1/2: reduce-scatter + all-gather (same volume);
//       ZeRO-3: + one more all-gather of the parameters (1.5x).
//   EP  per MoE layer per microbatch 2 all-to-alls forward + 2 backward (+2
//       with recompute), each rank sending b s h k e / t bytes (k = top-k, the
//       tokens it routes), (ep-1)/ep of them leaving the GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "core/units.hpp"
#include "workload/model.hpp"

namespace podnet::workload {

struct Job {
  ModelSpec model;
  GpuSpec gpu;
  int64_t tp = 1, pp = 1, dp = 1, ep = 1;
  int64_t interleave = 1;   // v: virtual pipeline stages (model chunks) per GPU
  bool sequence_parallel = false;
  int zero = 0;             // 0 (DDP all-reduce), 1/2 (reduce-scatter + all-gather), 3 (+ parameter all-gather)
  int64_t microbatch = 1;   // b, sequences per microbatch
  int64_t global_batch = 1; // B, sequences per iteration
  double compute_efficiency = 0.5;  // achieved fraction of peak FLOP/s in compute kernels
  double tokens = 0;        // training budget (tokens); 0 = none
  bool recompute = true;    // full activation recompute
  int64_t bytes_per_param = 2;  // parameters and activations (bf16 = 2)
  int64_t bytes_per_grad = 2;   // gradients as reduced (bf16 = 2, fp32 = 4)
  int64_t bucket_params = 0;    // DP bucket size in parameters; 0 = auto (see dp_bucket_params)

  int64_t gpus() const { return tp * pp * dp; }
  int64_t microbatches() const { return global_batch / (microbatch * dp); }  // m, per pipeline
  int64_t layers_per_stage() const { return model.layers / pp; }
  int64_t layers_per_chunk() const { return model.layers / (pp * interleave); }
  double tokens_per_iteration() const { return static_cast<double>(global_batch) * static_cast<double>(model.seq); }
  // Megatron-core's default bucket (DistributedDataParallelConfig.bucket_size):
  // max(40M, 1M x d) parameters, unless bucket_params is set.
  int64_t dp_bucket_params() const;
  // rank = tp_rank + t (dp_rank + d pp_rank)
  int64_t rank(int64_t tp_rank, int64_t dp_rank, int64_t pp_rank) const { return tp_rank + tp * (dp_rank + dp * pp_rank); }
};

// Scenario section `workload:` (model and GPU presets, overrides,
// parallelism, batch, efficiency, budget). `podnet list` prints it.
std::vector<ParamSpec> workload_params();

// A job from a validated `workload:` section. `fabric_gpus` bounds the job;
// dp unset means "auto": the largest d with t p d <= fabric_gpus that divides
// global_batch / microbatch. Throws ParamError naming the key
// ("workload.tp") for an impossible combination.
Job job_from(const Params& p, int64_t fabric_gpus);
// Checks a job (every rule job_from applies). Throws ParamError.
void validate(const Job& job, int64_t fabric_gpus);

// "300B", "1.5T", "2e12", "750M" -> tokens. False if not a count.
bool parse_count(const std::string& text, double& out);

struct GroupCounts {
  int64_t tp_groups = 0, tp_size = 0;
  int64_t pp_groups = 0, pp_size = 0;
  int64_t dp_groups = 0, dp_size = 0;
  int64_t ep_groups = 0, ep_size = 0;    // MoE with ep > 1 only
  int64_t edp_groups = 0, edp_size = 0;
};
GroupCounts group_counts(const Job& job);

// The job ranks of each communicator group (for placement statistics and the simulation).
std::vector<int64_t> tp_group(const Job& job, int64_t dp_rank, int64_t pp_rank);
std::vector<int64_t> dp_group(const Job& job, int64_t tp_rank, int64_t pp_rank);
std::vector<int64_t> pp_group(const Job& job, int64_t tp_rank, int64_t dp_rank);
std::vector<int64_t> ep_group(const Job& job, int64_t tp_rank, int64_t edp_rank, int64_t pp_rank);
std::vector<int64_t> edp_group(const Job& job, int64_t tp_rank, int64_t ep_rank, int64_t pp_rank);

// Parameters held by one GPU of pipeline stage `stage` (TP- and EP-sharded):
// dense (reduced over the DP group) and expert (reduced over the EDP group).
// Stage 0 holds the input embedding, stage p-1 the output head (a copy of the
// tied embedding for GPT).
struct StageParams {
  double dense = 0;
  double expert = 0;
  double total() const { return dense + expert; }
};
StageParams stage_params(const Job& job, int64_t stage);
// The share of model chunk `chunk` (virtual stage chunk * p + stage): its
// layers, plus the input embedding on virtual stage 0 and the output head on
// the last virtual stage. stage_params is the sum over the v chunks.
StageParams chunk_params(const Job& job, int64_t stage, int64_t chunk);

// Bytes per iteration, Megatron's formulas (header).
struct Volumes {
  Bytes tp_allreduce_bytes = 0;       // one TP all-reduce: b s h e
  int64_t tp_allreduces_per_layer = 0;  // per microbatch: 4, or 6 with recompute
  double tp_bytes_per_gpu = 0;        // ring traffic each GPU sends per iteration
  Bytes pp_p2p_bytes = 0;             // per microbatch per direction per stage boundary: b s h e
  double pp_bytes_per_gpu = 0;        // a middle stage's GPU, both directions, per iteration
  double dp_grad_bytes_per_gpu = 0;   // gradient bytes per GPU, stage average: P/(t p) x bytes_per_grad
  double dp_bytes_per_gpu = 0;        // ring traffic each GPU sends per iteration (x1.5 for ZeRO-3)
  Bytes ep_alltoall_bytes = 0;        // one all-to-all's send buffer per GPU: b s h k e / t
  double ep_bytes_per_gpu = 0;        // bytes leaving each GPU per iteration
};
Volumes volumes(const Job& job);

// Model FLOPs (no recompute) and hardware FLOPs (with the job's recompute) per iteration.
double model_flops_per_iteration(const Job& job);
double hardware_flops_per_iteration(const Job& job);

// Days to train `tokens` at `flops_per_gpu` achieved hardware FLOP/s on `gpus` GPUs, counting
// hardware_flops_per_token (Megatron's Eq. 4 generalized: T x F_token / (n X)).
double days_to_train(const ModelSpec& model, bool recompute, double tokens, int64_t gpus, double flops_per_gpu);

}  // namespace podnet::workload
