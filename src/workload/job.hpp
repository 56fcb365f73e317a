// A training job: model, GPU, parallelism (TP/PP/DP/EP, interleaving,
// sequence parallelism, ZeRO) and the training budget; its validation, its
// communicator groups and its per-iteration communication volumes.
//
// Rank layout (Megatron-LM's default order "tp-cp-ep-dp-pp": tensor parallel
// fastest, then context parallel, then data parallel, then pipeline parallel
// slowest; megatron/core/parallel_state.py, initialize_model_parallel):
//     rank = tp_rank + t * (cp_rank + c * (dp_rank + d * pp_rank))
// A "replica" r = cp_rank + c * dp_rank (R = c d of them per stage) holds a
// full copy of the stage's weights; gradients are reduced over the R replicas
// (Megatron's data-parallel group with context parallelism). Without CP
// (c = 1) a replica is a DP rank. `workload.rank_order: tp-cp-pp-dp` lays
// out a whole pipeline contiguously instead (the order Llama 3 was trained
// with, Dubey et al. 2024 §3.3.2: "[TP, CP, PP, DP]"):
//     rank = tp_rank + t * (cp_rank + c * (pp_rank + p * dp_rank))
// Groups are defined on (tp_rank, replica, pp_rank) either way, so only where
// the ranks sit (packed placement, topology-aware blocks) changes.
// so a TP group is t consecutive ranks (one server when t <= GPUs/server), a
// DP group is every t-th rank inside one stage's block of t*c*d ranks, and a
// PP group is every (t*c*d)-th rank. Expert parallelism is carved out of data
// parallelism as Megatron-core does: ep divides d, dp_rank = ep_rank + ep *
// edp_rank; for expert layers an EP group is the ep consecutive DP ranks
// (same tp, pp and edp rank) and the expert-data-parallel (EDP) group the d/ep
// ranks with the same ep rank. So GPUs = t * c * p * d (ep does not multiply;
// CP with EP is not modelled).
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
//   CP  ring attention (Liu et al. 2023, "Ring Attention with Blockwise
//       Transformers"; Megatron-core's context parallelism): each CP rank
//       holds s/c tokens of every sequence and, per layer per microbatch,
//       passes its key/value block (2 b (s/c) h_kv e / t bytes per GPU,
//       h_kv = h g / a) around the CP ring c-1 times in the forward pass;
//       the backward pass moves the key/value blocks again and their
//       gradients (2x), full recompute one more forward (3x -> 4x). With CP,
//       the TP and PP messages above carry b (s/c) h e bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/params.hpp"
#include "core/units.hpp"
#include "workload/model.hpp"

namespace podnet::workload {

// The precision of the transformer layers' GEMMs (Job::precision).
enum class Precision : uint8_t { Bf16, Fp8 };

// Which NCCL communicator a pipeline's p2p runs on (Job::pp_p2p_comm).
enum class P2pComm : uint8_t { Auto, Group, Pair };
// When the logging loss is all-reduced over DP x CP on the last pipeline stage (training.hpp, "Fixed costs").
enum class LossReduce : uint8_t { Step, Microbatch, None };

// workload.variability: measured. A GPU's persistent speed: CV 1 %, between the spread of V100s across HPC
// clusters (8 % max-min over a few hundred GPUs: Sinha et al., "Not All GPUs Are Created Equal", SC'22,
// about 1.2 % as a standard deviation) and the 0.3 % of the worker speeds in ByteDance's released straggler
// traces (Lin et al., OSDI'25, ByteDance-Seed/StragglerAnalysis); MLPerf v3.1's GPT-3 step time grew 0.22 %
// from 512 to 768 H100s at a fixed batch per replica, which bounds it at 1.8 %. Per-step jitter: CV 0.5 %,
// the per-worker step totals of the same traces.
inline constexpr double kMeasuredSpeedCv = 0.01;
inline constexpr double kMeasuredJitterCv = 0.005;
// Slow hosts: about 0.5 % of machines, whose GPUs take about 10 % more time on the same forward computation
// (MegaScale, Jiang et al., NSDI'24, sections 5.1 and 6.3; removing them raised MFU by about 0.7 %).
inline constexpr double kMeasuredSlowHostShare = 0.005;
inline constexpr double kMeasuredSlowHostForward = 0.10;

struct Job {
  ModelSpec model;
  GpuSpec gpu;
  int64_t tp = 1, pp = 1, dp = 1, ep = 1;
  int64_t cp = 1;          // c: context parallel (each CP rank holds s/c of every sequence; ring attention)
  int64_t interleave = 1;  // v: virtual pipeline stages (model chunks) per GPU
  bool sequence_parallel = false;
  int zero = 0;                     // 0 (DDP all-reduce), 1/2 (reduce-scatter + all-gather), 3 (+ parameter all-gather)
  int64_t microbatch = 1;           // b, sequences per microbatch
  int64_t global_batch = 1;         // B, sequences per iteration
  double compute_efficiency = 0.5;  // achieved fraction of peak FLOP/s in compute kernels (GEMMs)
  // The transformer layers' GEMMs in BF16 or in FP8 (TransformerEngine's FP8 training: those GEMMs at the GPU's FP8
  // peak x fp8_efficiency, their BF16 operands cast through HBM; the attention core, the LM head, the
  // element-wise kernels, communication and memory as in BF16; training.hpp).
  Precision precision = Precision::Bf16;
  double fp8_efficiency = 0.5;  // achieved fraction of the dense FP8 peak in the FP8 GEMMs (precision fp8)
  // Achieved fraction of peak in the attention core on the FLOPs a causal kernel executes (half the counted
  // 4 s h); 0 = the core runs at compute_efficiency on the counted FLOPs (the model before FlashAttention was
  // priced apart). The scenario's default is the GPU preset's.
  double attention_efficiency = 0;
  // Element-wise kernels (norms, residual adds, activation, rotary, dropout) timed at HBM bandwidth
  // (training.hpp); the scenario's default is on.
  bool memory_bound_ops = false;
  // What a training step sustains of the kernel model (training.hpp): every compute pass at
  // sustained_fraction of the kernels' modelled speed, plus layer_overhead seconds per layer forward (twice
  // per backward). 1 and 0 = the kernel model alone. The scenario's defaults are the GPU preset's.
  double sustained_fraction = 1;
  double layer_overhead = 0;
  // A fixed cost every iteration pays before its first pass, in seconds (training.hpp, "Fixed costs"): what a
  // software stack spends between steps outside the modelled terms (the data loader's handoff, Python, launch
  // and synchronisation). 0 = none, the default: podnet has no published figure for today's stacks.
  double step_overhead = 0;
  // Compute-time variability (training.hpp, "Variability"): coefficients of variation of each GPU's persistent
  // speed and of its per-step jitter; 0 and 0 = every GPU at the model's speed (workload.variability none).
  // Drawn from `seed` (the scenario's).
  double speed_cv = 0, jitter_cv = 0;
  // Slow hosts (training.hpp, "Variability"): the share of the fabric's servers that are slow, and how much longer
  // their GPUs' forward passes take (0.1 = 10 %); 0 and 0 = none.
  double slow_host_share = 0, slow_host_forward = 0;
  uint64_t seed = 1;
  // Which step's jitter is drawn (workload.step): steps of one job differ only in their per-step jitter, the
  // persistent speeds staying the GPUs'. 0 = the first (every figure before the key existed).
  int64_t step = 0;
  // FlashAttention (the scenario's default): the attention core on its causal half at attention_efficiency,
  // nothing of size s^2 stored. false = the unfused core of Megatron-LM before FlashAttention: the counted
  // 4 s h at compute_efficiency, its s x s scores written and read in HBM, and stored for backward.
  bool flash_attention = true;
  double tokens = 0;        // training budget (tokens); 0 = none
  RecomputeMode recompute;  // none, selective (attention core) or full activation recompute
  // Layers of each virtual stage (vs = chunk * pp + stage, pp * interleave entries); empty = the even split
  // l / (pp * interleave). Uneven splits balance the embedding (first stage) and the LM head (last stage).
  std::vector<int64_t> chunk_layers;
  int64_t bytes_per_param = 2;  // parameters and activations (bf16 = 2)
  int64_t bytes_per_grad = 2;   // gradients as reduced (bf16 = 2, fp32 = 4)
  int64_t bucket_params = 0;    // DP bucket size in parameters; 0 = auto (see dp_bucket_params)
  // Rank layout: false = Megatron-LM's default "tp-cp-dp-pp" (a stage's replicas contiguous); true =
  // "tp-cp-pp-dp" (a whole pipeline contiguous, the order Llama 3 was trained with: Dubey et al. 2024,
  // "The Llama 3 Herd of Models", §3.3.2 "[TP, CP, PP, DP]").
  bool pipeline_inner = false;
  // Megatron's --tp-comm-overlap: TP collectives pipelined with the GEMMs (training.hpp); needs sequence_parallel.
  bool tp_comm_overlap = false;
  // Megatron's --overlap-grad-reduce: a gradient bucket is reduced as soon as the chunk's last backward has
  // made it final (training.hpp); false = every bucket after the stage's last pass. The scenario's default is on.
  bool overlap_grad_reduce = true;
  // Megatron's --overlap-param-gather: with ZeRO 1/2 only the first-needed bucket's parameter all-gather is
  // exposed after the optimizer step, the others hidden behind the next forwards (training.hpp); the
  // scenario's default is on.
  bool overlap_param_gather = false;
  // The NCCL communicator of a pipeline's stage-to-stage sends (workload.pp_p2p_comm), which sets their channels
  // (collective/pairwise.hpp). Megatron-LM sends batched (batch_isend_irecv: the pipeline group's communicator)
  // unless it overlaps the p2p with compute, its default with an interleaved schedule (--overlap-p2p-communication;
  // `batch_p2p_comm = not overlap_p2p_comm`, megatron/training/arguments.py), when PyTorch's unbatched isend/irecv
  // runs each on a two-rank communicator of the peer pair (ProcessGroupNCCL::pointToPoint: "For single P2P,
  // preserve the old two-rank behavior"). Auto: Pair when interleave > 1, else Group.
  P2pComm pp_p2p_comm = P2pComm::Auto;
  // The logging loss's all-reduce (8 bytes: loss sum and token count) over the last stage's DP x CP group: once a
  // step after the optimizer (Megatron-Core 0.13 and later, train_step), after every microbatch's loss (Megatron-LM
  // before 2025-04, loss_func in pretrain_gpt.py, and its forks), or not at all.
  LossReduce loss_reduce = LossReduce::Step;
  bool pp_p2p_pairwise() const {
    return pp_p2p_comm == P2pComm::Pair || (pp_p2p_comm == P2pComm::Auto && interleave > 1);
  }

  int64_t gpus() const { return tp * cp * pp * dp; }
  int64_t replicas() const { return cp * dp; }  // R: copies of a stage's weights (the DP x CP gradient group)
  int64_t microbatches() const { return global_batch / (microbatch * dp); }  // m, per pipeline
  int64_t layers_per_stage() const { return model.layers / pp; }             // the even split (stage average)
  int64_t layers_per_chunk() const { return model.layers / (pp * interleave); }
  // Layers of model chunk `chunk` on pipeline rank `stage` (chunk_layers, or the even split).
  int64_t layers_of(int64_t stage, int64_t chunk) const {
    if (chunk_layers.empty()) return model.layers / (pp * interleave);
    return chunk_layers[static_cast<size_t>(chunk * pp + stage)];
  }
  int64_t stage_layers(int64_t stage) const {  // sum over the stage's chunks
    int64_t n = 0;
    for (int64_t c = 0; c < interleave; ++c) n += layers_of(stage, c);
    return n;
  }
  double tokens_per_iteration() const { return static_cast<double>(global_batch) * static_cast<double>(model.seq); }
  // Megatron-core's default bucket (DistributedDataParallelConfig.bucket_size):
  // max(40M, 1M x d) parameters, unless bucket_params is set.
  int64_t dp_bucket_params() const;
  // tp-cp-dp-pp: rank = tp_rank + t (r + R pp_rank), replica r = cp_rank + c dp_rank in [0, R);
  // tp-cp-pp-dp: rank = tp_rank + t (cp_rank + c (pp_rank + p dp_rank)).
  int64_t rank(int64_t tp_rank, int64_t replica, int64_t pp_rank) const {
    if (pipeline_inner) return tp_rank + tp * (replica % cp + cp * (pp_rank + pp * (replica / cp)));
    return tp_rank + tp * (replica + replicas() * pp_rank);
  }
};

// Work limits a job must keep (validate refuses a job beyond them up front, saying what to shrink, so
// that a typo cannot make `podnet train` run for hours or exhaust the machine):
// - pipeline passes pp x m x v (stages x microbatches per pipeline x model chunks) up to 32,768: the
//   iteration's op graph and its transfers grow with them (the aipod-16k default job: 16 x 12 x 1 =
//   192 passes, 79,484 transfers, 2 s; 10x the global batch: 501,116 transfers, 8 s);
// - DP gradient buckets up to 4,096 per model chunk (ceil(chunk parameters / dp_bucket_params()); the
//   default job has 11; each bucket is a collective on every DP group).
inline constexpr int64_t kMaxPipelinePasses = 32768;
// A training budget up to 1e15 tokens (1000T; Llama 3 trained on 15.6T): beyond it days to train
// leave the range any report prints (1e30 tokens printed 7.9e18 days; 1e308T ended in an internal error).
inline constexpr double kMaxTokens = 1e15;
inline constexpr int64_t kMaxBucketsPerChunk = 4096;
// - transfers in one iteration's plan up to 2^22 = 4,194,304, checked as the plan is built, before
//   it runs (training.cpp): Mixtral 8x7B with 4,096 experts and ep 64 on aipod-16k is
//   1,977,664 transfers, 0.87 GB and 132 s on the flow engine; 65,536 experts grew past 2 GB. Rings of
//   many GPUs weigh more: the default job with 200,000-parameter gradient buckets (128-GPU PAT steps)
//   reached 8.8 GB building its plan before this refusal; the memory guard (TrainOptions::plan_guard)
//   now refuses it at the memory limit first (5.1 GB built of an estimated 12.6 GB on a 25 GB machine).
inline constexpr int64_t kMaxPlanTransfers = int64_t{1} << 22;

// Scenario section `workload:` (model and GPU presets, overrides,
// parallelism, batch, efficiency, budget). `podnet list` prints it.
std::vector<ParamSpec> workload_params();

// A job from a validated `workload:` section. `fabric_gpus` bounds the job;
// dp unset means "auto": the largest d with t p d <= fabric_gpus that divides
// global_batch / microbatch. Throws ParamError naming the key
// ("workload.tp") for an impossible combination.
// The `workload:` section's model preset with its overrides (layers, hidden, heads, ...), and its GPU preset.
// Throws ParamError for an unknown name. job_from starts from these; the inference study uses them alone.
ModelSpec model_from(const Params& p);
GpuSpec gpu_from(const Params& p);
// `owner` names what holds the fabric_gpus in errors: "the fabric", or "the job" for a jobs: entry's own GPUs.
Job job_from(const Params& p, int64_t fabric_gpus, std::string_view owner = "the fabric");
// The largest d <= most that splits `sequences` (global_batch / microbatch) into whole microbatches per
// replica, and into a multiple of `multiple` of them (pp under the interleaved schedule, else 1); 0 if none.
// Auto DP (job_from) and the train report's idle-GPU note both use it.
int64_t largest_dp(int64_t sequences, int64_t most, int64_t multiple);
// Checks a job (every rule job_from applies). Throws ParamError.
void validate(const Job& job, int64_t fabric_gpus, std::string_view owner = "the fabric");
// The bytes a data-parallel ring moves per parameter over its (n-1)/n: ZeRO 0 all-reduces the gradients (twice
// bytes_per_grad); 1 and 2 reduce-scatter them and all-gather the parameters (bytes_per_grad +
// bytes_per_param); 3 also gathers the parameters before the backward (+ bytes_per_param).
double dp_wire_bytes_per_param(const Job& job);

// "300B", "1.5T", "2e12", "750M" -> tokens. False if not a count.
bool parse_count(const std::string& text, double& out);

struct GroupCounts {
  int64_t tp_groups = 0, tp_size = 0;
  int64_t cp_groups = 0, cp_size = 0;  // cp > 1 only
  int64_t pp_groups = 0, pp_size = 0;
  int64_t dp_groups = 0, dp_size = 0;
  int64_t ep_groups = 0, ep_size = 0;  // MoE with ep > 1 only
  int64_t edp_groups = 0, edp_size = 0;
};
GroupCounts group_counts(const Job& job);

// The job ranks of each communicator group (for placement statistics and the simulation).
std::vector<int64_t> tp_group(const Job& job, int64_t dp_rank, int64_t pp_rank);
// The gradient group of (tp rank, stage): all R = c d replicas (DP x CP).
std::vector<int64_t> dp_group(const Job& job, int64_t tp_rank, int64_t pp_rank);
// The c CP ranks of one DP rank (their ring passes key/value blocks).
std::vector<int64_t> cp_group(const Job& job, int64_t tp_rank, int64_t dp_rank, int64_t pp_rank);
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
  Bytes tp_allreduce_bytes = 0;         // one TP all-reduce: b s h e
  int64_t tp_allreduces_per_layer = 0;  // per microbatch: 4, or 6 with recompute
  double tp_bytes_per_gpu = 0;          // ring traffic each GPU sends per iteration
  Bytes pp_p2p_bytes = 0;               // per microbatch per direction per stage boundary: b s h e
  double pp_bytes_per_gpu = 0;          // a middle stage's GPU, both directions, per iteration
  double dp_grad_bytes_per_gpu = 0;     // gradient bytes per GPU, stage average: P/(t p) x bytes_per_grad
  double dp_bytes_per_gpu = 0;          // ring traffic each GPU sends per iteration: gradients and gathered parameters
  Bytes ep_alltoall_bytes = 0;          // one all-to-all's send buffer per GPU: b s h k e / t
  double ep_bytes_per_gpu = 0;          // bytes leaving each GPU per iteration
  Bytes cp_kv_bytes = 0;                // one key/value block a GPU passes on: 2 b (s/c) h_kv e / t
  int64_t cp_kv_steps_per_layer = 0;    // per microbatch: (c-1) forward + 2(c-1) backward (+ (c-1) full recompute)
  double cp_bytes_per_gpu = 0;          // a stage-average GPU, per iteration
};
Volumes volumes(const Job& job);

// Memory per GPU
// --------------
// What one GPU of pipeline stage `stage` holds at its peak (the start of its
// first backward, when its warm-up forwards are all in flight), in bytes:
//   weights      P_s e_p            P_s = stage_params (TP-, EP-sharded), e_p = bytes_per_param
//   gradients    P_s e_g / (R if zero >= 2)
//   optimizer    12 P_s / (R if zero >= 1)   fp32 master copy, Adam m and v: the "2 + 2 + 12 bytes per
//                                   parameter" of mixed-precision Adam (Rajbhandari et al. 2020, ZeRO, §3.1);
//                                   zero 1 shards them over the R = d c replicas as Megatron's distributed
//                                   optimizer does (docs: "Distributed Optimizer", 6 + 12/d bytes per
//                                   parameter with bf16 weights and fp32 gradients); zero 3 also shards
//                                   the weights (P_s e_p / R). Expert parameters shard over d/ep.
//   activations  in-flight microbatches x the stage's layers x bytes per layer (below), plus the logits
//                on the last stage: s b V (2 + 4) / (t c) (bf16 logits and their fp32 softmax).
//   buffers      1 GiB (CUDA context, cuBLAS workspace, NCCL buffers; an assumption) + one gathered
//                layer input 2 s b h / c with sequence parallelism.
// Bytes per layer per microbatch (Korthikanti et al. 2022, §4, Table 2: 34 s b h + 5 a s^2 b without
// parallelism, for GPT: 2-byte activations, 1-byte dropout masks; other activation sizes, workload.bytes_per_param,
// scale every tensor but the masks and FlashAttention's fp32 statistics, and the logits' and buffer's element),
// generalized to GQA (h_kv = h g / a),
// the MLP width f, SwiGLU and models without dropout; s is the CP rank's s/c tokens:
//   kept by every TP rank    norms' inputs 4 s b h, QKV input 2 s b h, MLP input 2 s b h, 2 dropout masks 2 s b h
//   split over TP            Q, K 2 s b h + 2 s b h_kv, V 2 s b h_kv, projection input 2 s b h,
//                            MLP 4 s b f (GELU: its input and output) or 6 s b f (SwiGLU: gate, up, product)
//   attention core           2 a s^2 b softmax + (dropout) a s^2 b mask + 2 a s^2 b output, split over TP
// For GPT (f = 4h, h_kv = h): 10 s b h + 24 s b h / t + 5 a s^2 b / t, Korthikanti's Eq. 2. Sequence
// parallelism splits the first row over TP too (34 s b h / t + 5 a s^2 b / t, Eq. 4); selective recompute
// drops the attention core (34 s b h / t, Eq. 5); full recompute keeps the layer input only, 2 s b h
// (/ t with SP). Context parallelism runs the core blockwise (ring attention): it is never stored.
// MoE (top-k routing): the MLP row counts k times (each token's activations in each of its k experts), and
// the k dispatched copies of the token, 2 k s b h, are kept beside the router's input (replicated like the
// MLP input). Until 2026-11 an MoE layer kept one token's MLP: Mixtral 8x7B top-2 at TP2 with SP counted
// 0.285 GB a layer, now 0.495 GB.
// In-flight microbatches on pipeline rank i (the schedule's warm-up W_i + 1, schedule.hpp): min(p - i, m)
// for 1F1B; for the interleaved schedule min(W_i + 1, m v) model chunks, each of the stage's layers / v:
// p (1 + (p-1)/(p v)) microbatches' worth of the stage's layers on the first stage (Korthikanti §4.2.3).
struct Memory {
  int64_t stage = 0;
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, buffers = 0;
  double activation_bytes_per_layer = 0;  // per microbatch
  double inflight_microbatches = 0;       // microbatches' worth of the stage's layers held
  double total() const { return weights + gradients + optimizer + activations + buffers; }
};
double activation_bytes_per_layer(const Job& job);
Memory memory_of_stage(const Job& job, int64_t stage);
// The stage that needs the most.
Memory peak_memory(const Job& job);
// Throws ParamError naming the keys to change when peak_memory exceeds the GPU's HBM; `allow_oom_offered`: the
// command has --allow-oom, which the message then names.
void check_memory(const Job& job, bool allow_oom_offered = true);

// The `auto` pipeline split: layers per virtual stage (pp x interleave of them) that minimize the most
// expensive virtual stage, a layer costing `layer_cost` and the LM head `head_cost` on the last virtual
// stage (job_from passes the compute model's seconds, training.hpp layer_compute_seconds and
// head_compute_seconds); the embedding (a lookup) costs nothing on the first. Smallest feasible maximum
// cost T (T taken from the candidate costs n c + extra_k); each virtual stage k then takes
// floor((T - extra_k) / c) layers and the surplus over l is taken back one layer at a time from the
// earliest virtual stages, which hold the most in-flight microbatches (memory). Llama 3 405B, PP16, v = 1:
// [7, 8 x 14, 7], the split the Llama 3 paper describes (§3.3.2: one layer less on the first and the
// last stage). Until 2026-11 the costs were FLOPs (the head's 2 h V against a layer's forward FLOPs); a
// layer takes longer than its FLOPs say (its attention core at FlashAttention's rate, its element-wise
// kernels, its fixed overhead per pass), so the head was overweighted: Llama 3 8B on 2 stages at sequence
// 2048 (the head 2.2 layers of FLOPs, under one of time) was split [17, 15], 2 % slower than even.
std::vector<int64_t> auto_stage_split(int64_t layers, int64_t pp, int64_t interleave, double layer_cost,
                                      double head_cost);

// Model FLOPs (no recompute) and hardware FLOPs (with the job's recompute) per iteration.
double model_flops_per_iteration(const Job& job);
double hardware_flops_per_iteration(const Job& job);

// Days to train `tokens` at `flops_per_gpu` achieved hardware FLOP/s on `gpus` GPUs, counting
// hardware_flops_per_token (Megatron's Eq. 4 generalized: T x F_token / (n X)).
double days_to_train(const ModelSpec& model, RecomputeMode recompute, double tokens, int64_t gpus,
                     double flops_per_gpu);

}  // namespace podnet::workload
