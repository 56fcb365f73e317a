// One training iteration as ONE plan::TransferPlan, simulated by any
// engine, and what it costs: iteration time, breakdown, MFU, days to train.
//
// The op graph
// ------------
// - Compute ops (TransferKind::Compute on a representative GPU of the stage,
//   job rank (tp 0, dp 0, stage)): per pipeline rank, in the order of its
//   1F1B or interleaved schedule (schedule.hpp), a forward or backward pass
//   of one model chunk on one microbatch; backward = 2 x forward, full
//   recompute adds one forward of the layers to each backward.
// - The compute model: a layer's forward per token on one GPU takes
//     (F_layer - A) / t / (peak x compute_efficiency)      GEMMs
//   + (A / 2) / t / (peak x attention_efficiency)          attention core
//   + (E_rep / (t if SP else 1) + E_split / t) e / HBM     element-wise
//   with F_layer and A = 4 s h from model.hpp, A / 2 being what a causal
//   FlashAttention kernel executes (it skips the masked half; MFU still counts
//   A), and E the elements the element-wise kernels read and write
//   (ModelSpec::elementwise_elements_per_token: norms 2 x 2h, residual adds
//   2 x 3h, dropout 2 x 2.5h, on the hidden width; the MLP activation 2f
//   (GELU) or 3f (SwiGLU) per active expert, rotary 2 (h + h_kv), TP-split),
//   e = bytes_per_param. The logits' GEMM runs at compute_efficiency. The
//   GPU presets' efficiencies are measurements (model.cpp): the GEMM ceiling
//   MAMF and FlashAttention-2's throughput at s = 8192, head dim 128.
//   ASSUMPTIONS: kernels do not overlap each other; fused kernels (e.g. a
//   norm fused into a GEMM) would move fewer bytes. With attention_efficiency
//   0 and memory_bound_ops false the kernels are FLOPs / (peak x
//   compute_efficiency) for everything.
//   Unfused attention (flash_attention false, Megatron-LM before
//   FlashAttention): the core is its counted 4 s h / t at compute_efficiency
//   plus its a s / t scores per token through HBM, 13 B each with dropout
//   (2-byte scores written by QK^T, read and written by the softmax, read and
//   written by the dropout with a 1-byte mask, read by the PV GEMM), 8 B
//   without.
// - FP8 (workload.precision fp8, TransformerEngine's FP8 training as Megatron-Core runs it): the
//   transformer layers' GEMMs (F_layer - A) run at fp8_peak x fp8_efficiency instead of peak x
//   compute_efficiency; the attention core, the LM head's GEMM and the element-wise kernels keep their BF16
//   rates. The BF16 operands that no kernel casts on the way are cast through HBM at 4 bytes an element
//   (read 2, write the FP8 copy and its transpose, Hopper's FP8 GEMMs taking one layout):
//   ModelSpec::fp8_cast_elements_per_token, forward the inputs of the attention projection (h) and of the
//   second MLP GEMM (f per active expert), TP-split (the QKV and first MLP GEMMs' inputs come out of a
//   LayerNorm fused with the cast); backward the output gradients of all four, the projection's and second
//   MLP GEMM's (h each) split over TP only with sequence parallelism, the QKV GEMM's (h + 2 h_kv) and the
//   first MLP GEMM's (2f gated, f) TP-split. The backward pays its own casts, not twice the forward's.
//   The casts are timed with the element-wise kernels (memory_bound_ops, and an HBM bandwidth), else not.
//   fp8_efficiency's preset value is a fit (model.cpp) and stands for what FP8 loses beyond these casts.
//   ASSUMPTIONS: communication (TP, DP, PP, EP, CP) is timed at BF16 bytes as before, though
//   TransformerEngine all-gathers some FP8 tensors (the cast of an output gradient split over TP by
//   sequence parallelism above is the cast before such a gather; the gathered tensor's transpose is not
//   counted; with NeMo's fp8_params the parameter all-gathers move FP8, half the bytes); memory is counted
//   as in BF16, which is what NeMo's FP8 recipes hold within a few per cent (fp8_params keeps the weights
//   in FP8 with their transpose, 2 B a parameter; TransformerEngine 2.1 saves a Linear's FP8 input in both
//   layouts, 2 B an element; docs/contributing/validation/training-throughput.md); weights are cast once a step (not
//   timed).
// - What a step sustains: a compute pass takes (its kernels as above) / eta
//   + L x t_l (a forward of L layers; a backward 2 L t_l, 3 L t_l with full
//   recompute), eta = sustained_fraction and t_l = layer_overhead. They stand
//   for what a training step loses against its kernels' benchmarks (clocks
//   under load, SMs shared with overlapped communication, launch gaps, small
//   kernels not modelled); the GPU presets' values are a least-squares fit to
//   Megatron-LM's published single-stage runs (model.cpp; the fit and the
//   held-out runs in docs/contributing/validation/training-throughput.md). eta also stretches the GEMM time
//   that hides TP collectives (tp_comm_overlap) and the CP block's core.
// - TP collectives: Megatron's TP all-reduces (or RS + AG with sequence
//   parallelism) are blocking and never overlap compute. SIMPLIFICATION: to
//   keep plans small, one TP collective of b s h e bytes is timed once on the
//   engine (a tiny plan on the TP group of rank 0, inside its NVLink domain
//   when t <= GPUs per server; the algorithm and protocol NCCL's tuner picks,
//   e.g. NVLS for an all-reduce inside one H100 server, the plain ring
//   without NCCL's model; the DP collectives likewise, dp_algorithm "auto")
//   and each pass gets a Compute-like delay of
//   (collectives per layer x layers of the chunk) x that time, placed after
//   its compute op on the stage's chain (label "tp"). With
//   workload.tp_comm_overlap (Megatron's --tp-comm-overlap: Transformer
//   Engine splits each all-gather / reduce-scatter and pipelines it with the
//   GEMM that consumes or produces it; needs sequence parallelism) a layer's
//   TP collectives are exposed only beyond its GEMM time:
//     max(0, k x TP collective - GEMM time of the layer's pass) per layer,
//   k = 2 forward, 2 (4 with full recompute) backward, the backward's GEMMs
//   2x (3x with full recompute) the forward's. SIMPLIFICATION: the overlap
//   does not slow the GEMMs (it does on real GPUs: the copies take SMs).
//   EP all-to-alls
//   likewise: one all-to-all is timed with every EP group of every stage
//   running concurrently (so EP groups that share links, NICs or uplinks
//   contend), and each pass of a MoE chunk gets (2 forward, 2 + 2 recompute
//   backward) x layers x that. ASSUMPTION: in the pipeline's steady state
//   every stage runs a MoE pass, and their all-to-alls coincide: the bound
//   with the most contention (stage 0's groups alone, the other bound, put
//   1/p of the load on the fabric). Past kEpTransfers transfers the plan
//   stops adding groups (whole servers' worth: every stage of a group).
// - CP (ring attention, job.hpp): one step - every CP rank of replica 0's
//   stage 0 passes its key/value block (2 b (s/c) h_kv e, split over the t TP
//   ranks) to the next CP rank, all at once - is timed on the engine (t_kv);
//   the attention core of one block, 4 b (s/c)^2 h / t FLOPs (timed as the
//   attention core of the compute model above), runs meanwhile
//   (t_blk). A forward pass gets (c-1) max(0, t_kv - t_blk) per layer as a
//   delay (label "cp"), a backward twice that (key/value blocks and their
//   gradients, twice the core work), three times with full recompute.
// - Recompute: full adds one forward of the layers to each backward (and its
//   TP/EP collectives); selective adds the attention core's forward (its
//   time in the compute model above), no communication.
// - Uneven stages (job.chunk_layers): every per-layer figure above uses the
//   layers of that model chunk.
// - PP p2p: after a pass, its activation (forward) or gradient (backward)
//   goes to the next (previous) virtual stage: b s h e bytes split over the t
//   TP rank pairs (Megatron's scatter/gather). One Coupled transfer per
//   boundary, microbatch and direction holds every replica's t edges (tp
//   rank j of replica r's stage i -> the same of the next stage): R t edges
//   moving at one rate. Every replica's bytes are on their links, so PP
//   traffic contends with DP traffic and with other replicas' p2p where they
//   share links. Sends are asynchronous (the sender goes on); the receiving
//   pass waits for the p2p of every replica (see "symmetry"), so coupling the
//   replicas' edges changes when the last of them lands only where the
//   slower edges would have used capacity the faster ones freed (the default
//   job in Megatron's rank order: 6,021.72 ms against 6,021.36 ms with one transfer per replica, at
//   1/128 of the p2p transfers).
// - DP: gradients of a model chunk are produced by its last backward pass
//   (microbatch m - 1); that pass is split into K pieces, one per gradient
//   bucket (Megatron-core overlap_grad_reduce: a bucket is reduced as soon as
//   its gradients are final, overlapping the rest of the backward pass; with
//   overlap_grad_reduce false every bucket waits for the stage's last pass,
//   as Megatron-LM did before --overlap-grad-reduce and DeepSpeed's pipeline
//   engine does: the whole reduction is exposed), and
//   bucket k's collective over EVERY DP group of the stage (t of them; the
//   t p DP groups of the job in all) is collective::make_plan's plan for
//   that group, merged into the big plan with its dependency indices shifted;
//   a group's buckets run one after another (one NCCL stream per
//   communicator). Bucket size: dp_bucket_params() (Megatron-core's default
//   max(40M, 1M x d) parameters) x bytes_per_grad. ZeRO 0: all-reduce;
//   ZeRO 1/2: reduce-scatter per bucket, then after the optimizer step an
//   all-gather per bucket (exposed: not overlapped with the next
//   iteration's forward), or with overlap_param_gather (Megatron's
//   --overlap-param-gather) only the all-gather of the bucket the next
//   forward needs first (the last one reduced; one dense and one expert
//   bucket for MoE): the others run beside the next iteration's forwards.
//   SIMPLIFICATION: those are not simulated, so their traffic does not
//   contend with the forwards' p2p (simulating them as a chain beside the
//   forwards made the default run 3.7x slower on the flow engine, for an iteration 38 ms (0.6 %) longer:
//   6,032.6 against 5,994.1 ms); ZeRO 3: reduce-scatter per bucket, and no
//   gathers after the optimizer (see below). MoE expert
//   gradients are reduced over the EDP groups the same way. ZeRO-2 and 3 keep the gradients sharded, so
//   every earlier microbatch's backward reduce-scatters its chunk's buckets too (after that pass, on the
//   group's stream), and ZeRO-3 gathers a chunk's parameters before each of its 2 m passes (the gathers run
//   ahead on the stream; a pass waits for its own) instead of two chains: with m microbatches ZeRO-2 makes
//   m reduce-scatters and the gathers after the optimizer, ZeRO-3 m reduce-scatters and 2 m gathers per
//   bucket (until 2026-11 both reduced once, as ZeRO-1, and ZeRO-3 gathered in two chains: their dp time
//   was a lower bound).
// - Optimizer: one Compute op per stage after its DP collectives: Adam
//   reads and writes 28 bytes per parameter it owns (fp32 master, m, v read
//   and written, the gradient read, the bf16 parameter written) at HBM
//   bandwidth; with ZeRO >= 1 a GPU owns 1/d of the stage's parameters.
// - Fixed costs outside the passes, each its own term of the breakdown:
//   gradient norm: before the optimizer step (Megatron-Core's optimizer.step:
//   clip_grad_norm -> get_grad_norm_fp32, megatron/core/optimizer/clip_grads.py)
//   every GPU reads the fp32 gradients it owns (4 bytes a parameter, at HBM
//   bandwidth), then one all-reduce of 4 bytes over the grad-stats group: the
//   whole job with the distributed optimizer (ZeRO >= 1: each GPU owns a
//   distinct shard), else the model-parallel group (TP x PP). That all-reduce
//   waits for every stage's gradients: a barrier, so every stage's optimizer
//   starts after the last stage's reductions; the wait is counted as bubble
//   (waiting for other stages), as a stage that ended early was before.
//   Loss: the logging loss (loss sum and token count, 8 bytes) all-reduced over
//   the last stage's DP x CP group, once a step after the optimizer
//   (Megatron-Core 0.13 and later, megatron/training/training.py train_step),
//   or after every microbatch's loss (Megatron-LM before 2025-04,
//   pretrain_gpt.py loss_func; workload.loss_reduce). Both all-reduces are
//   latency: priced at NCCL's own model (nccl/tuner.hpp: the algorithm and
//   protocol its tuner picks for those bytes on that communicator), not
//   simulated. No public per-step profile of these terms at 1B+ parameters
//   was found to check them against (Megatron's timers optimizer-clip-main-grad
//   and the like are published only for small models); they are a few hundred
//   microseconds at 16,384 GPUs.
//   Step overhead (Job::step_overhead, workload.step_overhead; default 0):
//   one delay at the head of every stage's chain, before its first pass, so
//   the iteration is that much longer. It stands for what a software stack
//   spends between steps outside the terms above: MegaScale names the data
//   loader's work at "the beginning of each training step" (Jiang et al.,
//   NSDI'24, sec. 3.4). No stack publishes it as a figure; it shows in step
//   times at two batch sizes on the same GPUs, whose difference the passes
//   explain: the rest is fixed. MegaScale's Megatron-LM baseline on 256 A100s
//   (Table 2 at batch 768 and Table 3 at batch 256) carries 1.4 s more than
//   podnet's model of it (docs/contributing/validation/training-throughput.md).
//
// Symmetry: the DP replicas of a pipeline stage run identical compute (same
// layers, same microbatch sizes, same TP timing), so their compute ops are
// modelled ONCE per stage (not per replica); only communication differs
// between replicas (different GPUs, different links), so every replica's PP
// p2p and every DP group's collective is in the plan. A receiving pass
// waits for the p2p of every replica: the representative pipeline proceeds
// at the pace of the slowest replica at each step ("lockstep"), which is
// exact for identical replicas and slightly pessimistic otherwise (a real
// replica may run ahead until the DP collectives synchronize them).
// For the default run (Llama 3 405B, TP8 PP16 DP128, B = 2048, m = 16,
// v = 8): 4,096 passes, (128 - 1) x 16 x 2 = 4,064 p2p transfers of 128 x 8
// edges each, and the DP groups' bucket collectives.
//
// Breakdown ("exposed" = time on the critical path not overlapped with
// compute), per pipeline rank i, whose timeline [0, T] is its own chain of
// ops (passes, TP/EP delays, optimizer) and the gaps between them:
//   compute  its passes' compute ops,
//   optimizer, grad_norm, loss, step  the fixed costs' ops (until 2026-12 the optimizer step was in compute),
//   tp, ep   its blocking TP / EP collectives,
//   cp       its ring-attention key/value exchange not hidden behind the attention core,
//   pp       the part of each gap spent waiting for a p2p in flight: the
//            pass after the gap waits for a p2p (its latest-finishing
//            dependency); min(gap, that p2p's duration) is pp,
//   dp       gaps whose latest-finishing dependency is a DP collective
//            (the optimizer waiting for the last bucket; ZeRO all-gathers),
//   bubble   the rest of the gaps: waiting for another stage's compute
//            (pipeline fill and drain).
// The components add up to T. The headline breakdown is the critical
// stage's: the pipeline rank whose chain ends last (it defines T).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "collective/collective.hpp"
#include "core/units.hpp"
#include "engine/backend.hpp"
#include "plan/transfer_plan.hpp"
#include "topology/topology.hpp"
#include "workload/job.hpp"

namespace podnet::workload {

struct TrainOptions {
  collective::Options collective;  // channels, QPs, ring order of every collective
  // Algorithm of the DP collectives (see `podnet list`); auto: NCCL's tuner, as NCCL picks it per size
  // (the plain ring when collective.nccl_model is false).
  std::string dp_algorithm = "auto";
  bool trace = false;  // keep per-op timings for a Chrome trace
  // Called with the iteration plan's weight each time a piece is added to it while it is built; throws to refuse
  // the plan before it is built whole (the memory guard, scenario::estimate::growing_plan_guard). Empty: none.
  std::function<void(const plan::PlanWeight&)> plan_guard;
};

enum class Category : uint8_t { Compute, Tp, Pp, Dp, Ep, Optimizer, Marker, Cp, GradNorm, Loss, Step };
inline const char* category_name(Category c) {
  switch (c) {
    case Category::Compute: return "compute";
    case Category::Tp: return "tp";
    case Category::Pp: return "pp";
    case Category::Dp: return "dp";
    case Category::Ep: return "ep";
    case Category::Optimizer: return "optimizer";
    case Category::Cp: return "cp";
    case Category::GradNorm: return "grad_norm";
    case Category::Loss: return "loss";
    case Category::Step: return "step";
    default: return "marker";
  }
}

// Durations of one model chunk's passes on one pipeline rank.
struct OpTimes {
  Time fwd_compute, bwd_compute;  // compute kernels
  Time fwd_tp, bwd_tp;            // blocking TP collectives
  Time fwd_ep, bwd_ep;            // blocking EP all-to-alls
  Time fwd_cp, bwd_cp;            // ring-attention key/value exchange not hidden behind the attention core
};

// A gradient bucket of one model chunk: reduced over every DP group of the
// stage (or every EDP group for expert gradients) once the chunk's last
// backward pass is `ready` (a fraction of that pass) done.
struct GradBucket {
  collective::Op op = collective::Op::AllReduce;  // all-reduce (ZeRO 0) or reduce-scatter; any op for imports
  bool expert = false;
  Bytes bytes = 0;     // the collective's size S (gradients: bytes_per_grad an element)
  double ready = 1.0;  // in (0, 1]
  std::string name;
  // The same parameters' size as the ZeRO all-gathers move them (bytes_per_param an element: Megatron's
  // distributed optimizer gathers the bf16 parameters, whatever the gradients' type); 0: bytes (an import).
  Bytes param_bytes = 0;
  Bytes gather_bytes() const { return param_bytes > 0 ? param_bytes : bytes; }
};

// Everything the op graph needs besides the job's layout: pass durations,
// the p2p message and the gradient buckets. iteration_times derives it from
// the job; importers (simai.hpp) fill it from other tools' files.
struct IterationTimes {
  std::vector<std::vector<OpTimes>> ops;  // [stage][chunk]
  std::vector<Time> optimizer;            // [stage]
  // Fixed costs ("Fixed costs" above); empty / zero: none (an imported workload).
  std::vector<Time> grad_norm_local;  // [stage] reading the fp32 gradients a GPU owns
  Time grad_norm_reduce;              // the norm's all-reduce over the grad-stats group
  Time loss_reduce;                   // one all-reduce of the logging loss over DP x CP
  Time tp_collective;                 // one TP all-reduce (or RS + AG), as timed
  Time ep_collective;                 // one EP all-to-all, as timed
  Time cp_step;                       // one ring-attention step: every CP rank passes its KV block on
  Bytes pp_p2p_bytes = 0;             // per microbatch per direction per stage boundary (all TP ranks)
  std::vector<std::vector<std::vector<GradBucket>>> buckets;  // [stage][chunk], in the order they become ready
};

// Variability (Job::speed_cv, jitter_cv; workload.variability). GPU g of the fabric computes at a persistent
// time factor A_g = exp(sigma z_g), sigma^2 = ln(1 + speed_cv^2) (lognormal, median 1), z_g drawn from the
// seed in the order of the fabric's GPUs, so a GPU is as slow in every job that uses it; job rank r's step
// adds E_r = 1 + jitter_cv z_r (normal, cut at 4 standard deviations), drawn from the seed's stream of
// Job::step (workload.step: another step redraws E only). A pipeline stage's passes run at the
// slowest of its GPUs, max over its ranks of A_g E_r: its TP group's collectives wait for the slowest member
// every layer, and the DP collectives for the slowest replica. ASSUMPTIONS: one stage's slowest GPU paces
// all its passes (each replica's pipeline is gated by the slowest stage-replica anyway in 1F1B); the factor
// stretches compute only (the collectives' time is the engine's). With n GPUs per stage the expected factor
// is about 1 + sigma_eff E[max of n normals]: 3.6 % at 1,024 GPUs, 4.5 % at 16,384 with the measured CVs.
// Slow hosts (Job::slow_host_share, slow_host_forward): server k of the fabric is slow when its draw u_k (one uniform
// per server, in server order, from the seed's stream "slow-host": as persistent as the GPUs' speeds) is below the
// share; its GPUs' forward passes take (1 + slow_host_forward) x as long, their backward passes not (MegaScale:
// "approximately 10% more time to execute the same forward computations", about 0.5 % of machines). A stage's
// forward passes run at the slowest of its GPUs' A_g E_r H_g, its backward passes at the slowest A_g E_r. With 0.5 %
// of hosts slow, a job of n servers meets at least one with probability 1 - 0.995^n: 27 % at 64 servers, 99.997 %
// at 2,048. ASSUMPTION: a host is slow or not (MegaScale names no spread); its GPUs all are.
struct StageSlowdowns {
  std::vector<double>
      factor;  // [stage]: the largest of its GPUs' factors (backward passes; forward without slow hosts)
  std::vector<double> forward;  // [stage]: the same with slow hosts (forward passes)
  int32_t slowest_gpu = -1;     // fabric GPU
  double slowest = 1;
  int32_t slow_hosts = 0;  // slow servers among the job's
  int32_t job_hosts = 0;   // servers the job uses
};
// server_of_gpu: each fabric GPU's server (empty: no slow hosts are drawn).
StageSlowdowns stage_slowdowns(const Job& job, const std::vector<int32_t>& gpu_of_rank,
                               const std::vector<int32_t>& server_of_gpu = {});

// The EP all-to-all's timing plan stops adding groups past this many transfers ("EP all-to-alls" above).
inline constexpr size_t kEpTransfers = 200'000;

// Computes the durations above; times the TP and EP collectives on `backend`.
// Buckets: K = ceil(chunk parameters per GPU / dp_bucket_params()) per chunk,
// ready at (k+1)/K of the last backward, dense (over DP) and expert (over EDP)
// shares split evenly; none when d = 1.
IterationTimes iteration_times(const Job& job, const std::vector<int32_t>& gpu_of_rank, const topology::Topology& topo,
                               engine::NetworkBackend& backend, const TrainOptions& options);

struct IterationPlan {
  plan::TransferPlan plan;
  std::vector<Category> category;  // per transfer
  std::vector<int16_t> stage;      // per transfer: pipeline rank (the sender's for p2p)
  std::vector<int16_t> lane;       // per transfer: trace lane (0 compute, 1 pp, 2 + j DP of tp rank j), -1 untraced
  std::vector<std::vector<int32_t>> chain;  // per stage: its own ops in order, ending with a 0-length marker
  int64_t dp_buckets = 0;                   // buckets per DP group per iteration (all chunks)
  int64_t dp_collectives = 0;               // collectives merged (buckets x groups x ops)
  // How many of them ran each (op, algorithm, protocol, channels): NCCL's tuner chooses per size.
  std::map<std::tuple<std::string, std::string, std::string, int32_t>, int64_t> dp_choices;
  int64_t p2p_transfers = 0;
  // Per stage: its own gradient-norm op, which the norm's all-reduce waits for on every stage (empty: none). The
  // stage whose norm ends last holds the barrier: it is the critical stage.
  std::vector<int32_t> norm_local;
};

// Builds the iteration's op graph (header). gpu_of_rank[r] = the fabric GPU of job rank r.
IterationPlan build_iteration(const Job& job, const std::vector<int32_t>& gpu_of_rank, const topology::Topology& topo,
                              const IterationTimes& times, const TrainOptions& options);

struct Breakdown {
  Time compute, tp, pp, dp, ep, bubble, cp;
  // The fixed costs (header): the optimizer step, the gradient norm, the loss, the step overhead.
  Time optimizer, grad_norm, loss, step;
  Time total() const { return compute + tp + pp + dp + ep + bubble + cp + optimizer + grad_norm + loss + step; }
};

// Analyses a run of an IterationPlan: the breakdown of every stage (header).
std::vector<Breakdown> stage_breakdowns(const IterationPlan& ip, const engine::RunReport& run);

// A plan op's label in words, for tables and failure texts ("p2p grad vs6->5 mb47": "gradients sent, virtual
// stage 6 to 5, microbatch 47"; "F c0 mb3": "forward, chunk 0, microbatch 3"; "reducescatter c0 b2 rs/ring":
// "data-parallel gradient reduce-scatter, chunk 0, bucket 2 (rs/ring)"); other labels as they are. The JSON and
// the trace keep the label.
std::string op_words(const std::string& label);
// Transfer k of an iteration in words: op_words, with its pipeline stage when the job has several and the
// words do not name it.
std::string transfer_words(const IterationPlan& ip, int32_t k);

struct TraceOp {
  std::string name;
  const char* cat = "";
  int32_t pid = 0;  // pipeline stage
  int32_t tid = 0;  // lane
  Time start, dur;
  const char* kind = "compute";  // the transfer's kind: "p2p", "ring", "coupled" or "compute"
  Bytes bytes = 0;               // payload (plan::Transfer::bytes): p2p total, per ring hop, per coupled edge
  int32_t peers = 0;             // GPUs taking part (plan::Transfer::ranks)
  int32_t channel = 0;           // NCCL channel
};

// How the job sits on the fabric (filled by the cluster layer).
struct PlacementSummary {
  bool present = false;
  bool torus_cubes = false;  // a torus: the groups are its cubes, and no spine joins them
  std::string policy;
  bool same_as_packed = false;  // another policy that placed rank r on GPU r, as packed does
  std::vector<std::pair<int32_t, int32_t>> gpus_per_group;    // (aggregation group, job GPUs in it), by group
  int32_t pods = 0;                                           // pods used
  double dp_bytes = 0, pp_bytes = 0;                          // per iteration, all groups / all replicas
  double dp_cross_group_bytes = 0, pp_cross_group_bytes = 0;  // endpoints in different aggregation groups
  double dp_cross_pod_bytes = 0, pp_cross_pod_bytes = 0;      // endpoints in different pods
  double ep_bytes = 0, ep_cross_group_bytes = 0;              // EP all-to-alls (MoE with ep > 1), all groups
  int32_t ep_servers = 0;                                     // the most servers one EP group spans
  bool zones = false;                                         // a 4-tier Clos: the core joins zones of pods
  double cross_zone_bytes = 0;                                // DP + PP bytes with endpoints in different zones
  double cross_spine_fraction() const {
    const double all = dp_bytes + pp_bytes;
    return all > 0 ? (dp_cross_group_bytes + pp_cross_group_bytes) / all : 0.0;
  }
  double cross_super_spine_fraction() const {
    const double all = dp_bytes + pp_bytes;
    return all > 0 ? (dp_cross_pod_bytes + pp_cross_pod_bytes) / all : 0.0;
  }
  double cross_core_fraction() const {
    const double all = dp_bytes + pp_bytes;
    return all > 0 ? cross_zone_bytes / all : 0.0;
  }
};

struct TrainResult {
  Job job;
  int64_t fabric_gpus = 0;
  std::string engine;
  Time iteration;
  Breakdown breakdown;  // the critical stage's
  int32_t critical_stage = 0;
  std::vector<Breakdown> stages;
  double model_flops = 0;     // per iteration, no recompute (what MFU counts)
  double hardware_flops = 0;  // per iteration, with recompute (Megatron's F)
  double mfu = 0;             // model_flops / (GPUs x peak x T)
  double hfu = 0;             // hardware_flops / (GPUs x peak x T)
  double tflops_per_gpu = 0;  // hardware_flops / (GPUs x T) / 1e12 (Megatron's reported figure)
  double tokens_per_second = 0;
  double days_to_train = 0;          // job.tokens / tokens_per_second
  double ideal_bubble_fraction = 0;  // (p - 1)/(v m)
  GroupCounts groups;
  Volumes volumes;
  IterationTimes times;
  Memory memory;              // the stage needing the most (peak_memory); imported workloads: none
  double model_params = 0;    // ModelSpec::params()
  double active_params = 0;   // per token (MoE: top-k experts)
  int64_t bucket_params = 0;  // DP bucket size used (parameters)
  int64_t dp_buckets = 0;     // per DP group per iteration
  int64_t dp_collectives = 0;
  std::map<std::tuple<std::string, std::string, std::string, int32_t>, int64_t> dp_choices;  // IterationPlan's
  int64_t p2p_transfers = 0;
  int64_t plan_transfers = 0;
  uint64_t flows = 0;
  // With variability (Job::speed_cv or jitter_cv above 0): each stage's factor and the compute time it adds
  // to the critical stage.
  StageSlowdowns variability;
  Time variability_added;
  // With failures injected by the engine (engine/failures.hpp): what happened.
  std::vector<engine::FailureRecord> failures;
  bool job_failed = false;
  Time failed_at;
  std::string failure;
  PlacementSummary placement;
  std::vector<TraceOp> trace;            // with TrainOptions::trace
  std::vector<std::string> trace_lanes;  // tid -> name
  std::string trace_process = "stage";   // what a trace process (pid) is: a pipeline stage, or a rank (imports)
  // Flow arrows of the trace: (sending slice, receiving slice), indices into `trace`: a PP send and the pass
  // that waits for it (a Chakra send and its receive).
  std::vector<std::pair<int32_t, int32_t>> trace_flows;
  // Counter tracks of the trace: a directed link's payload utilization over time (flow engine; filled by the
  // study), a step function: `value` from `at` on.
  struct TraceCounter {
    std::string name;
    std::vector<std::pair<Time, double>> steps;
  };
  std::vector<TraceCounter> trace_counters;
};

// The compute model's seconds (iteration_times's, on one GPU) of one microbatch's forward and backward
// through one transformer layer, and through the LM head alone: what `workload.stage_layers: auto` balances.
double layer_compute_seconds(const Job& job);
double head_compute_seconds(const Job& job);

// Simulates one iteration of `job` placed by gpu_of_rank (size job.gpus(),
// distinct fabric GPUs) on `topo` with `backend` (built for `topo`).
TrainResult simulate_training(const Job& job, const std::vector<int32_t>& gpu_of_rank, const topology::Topology& topo,
                              engine::NetworkBackend& backend, const TrainOptions& options);
// The same with the iteration's times given (importers; tests). A job whose
// model has no layers (an imported workload) gets no FLOP figures (MFU 0).
// `run`, when given, receives the engine's report of build_iteration's plan
// (per-transfer timings: straggler detection, diagnose/straggler.hpp).
TrainResult simulate_iteration(const Job& job, const std::vector<int32_t>& gpu_of_rank, const topology::Topology& topo,
                               engine::NetworkBackend& backend, const IterationTimes& times,
                               const TrainOptions& options, engine::RunReport* run = nullptr);

}  // namespace podnet::workload
