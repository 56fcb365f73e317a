#include "workload/job.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/shared_param_error.hpp"
#include "core/units.hpp"
#include "workload/training.hpp"

namespace podnet::workload {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// The GPU presets with FP8 tensor cores (workload.precision fp8).
std::vector<std::string> fp8_gpu_names() {
  std::vector<std::string> out;
  for (const GpuSpec& g : gpus())
    if (g.fp8_peak_flops > 0) out.push_back(g.name);
  return out;
}

// The fp8_efficiency help names each FP8 GPU preset's default and its source.
std::string fp8_efficiency_help() {
  std::string h = "achieved fraction of the dense FP8 peak in the FP8 GEMMs with workload.precision fp8 (defaults: ";
  bool first = true;
  for (const GpuSpec& g : gpus())
    if (g.fp8_peak_flops > 0) {
      h += fmt::format("{}{} {:.3f}: {}", first ? "" : "; ", g.name, g.fp8_efficiency, g.fp8_efficiency_source);
      first = false;
    }
  return h + ")";
}

// The compute_efficiency help names each GPU preset's default and its source.
std::string efficiency_help() {
  std::string h = "achieved fraction of the GPU's dense peak in compute kernels; default: the GPU preset's measured "
                  "maximum achievable matmul FLOPS (";
  for (size_t i = 0; i < gpus().size(); ++i)
    h += fmt::format("{}{} {:.3f}", i ? ", " : "", gpus()[i].name, gpus()[i].compute_efficiency);
  return h + "; stas00/ml-engineering, MAMF comparison table)";
}

// The attention_efficiency help names each GPU preset's default and its source.
std::string attention_help() {
  std::string h = "achieved fraction of the GPU's dense peak in the attention core (FlashAttention), on the FLOPs a "
                  "causal kernel executes (half of the counted 4 s h); default: the GPU preset's (";
  for (size_t i = 0; i < gpus().size(); ++i)
    h += fmt::format("{}{} {:.3f}: {}", i ? "; " : "", gpus()[i].name, gpus()[i].attention_efficiency,
                     gpus()[i].attention_source);
  return h + "); TransformerEngine's cuDNN fused attention, which Megatron-Core and NeMo run on Hopper, measures " +
         "1.59x FlashAttention-2 on H100 (0.527; TE's attention notebook, "
         "docs/contributing/validation/training-throughput.md)";
}

// The sustained_fraction help names each GPU preset's default and its source.
std::string sustained_help() {
  std::string h = "share of the kernel model's speed a training step sustains (clocks under load, SMs shared with "
                  "overlapped communication); default: the GPU preset's (";
  for (size_t i = 0; i < gpus().size(); ++i)
    h += fmt::format("{}{} {:.2f}", i ? ", " : "", gpus()[i].name, gpus()[i].sustained_fraction);
  return h + "; " + gpus()[0].sustained_source + ")";
}

// The layer_overhead help names each GPU preset's default.
std::string layer_overhead_help() {
  std::string h = "fixed time per layer forward pass outside the modelled kernels (launch gaps, small kernels), "
                  "paid twice per backward, e.g. 0.4ms; default: the GPU preset's (";
  for (size_t i = 0; i < gpus().size(); ++i)
    h += fmt::format("{}{} {}", i ? ", " : "", gpus()[i].name,
                     format_time(Time::from_seconds(gpus()[i].layer_overhead)));
  return h + ")";
}

}  // namespace

int64_t Job::dp_bucket_params() const {
  if (bucket_params > 0) return bucket_params;
  return std::max<int64_t>(40'000'000, 1'000'000 * replicas());
}

std::vector<ParamSpec> workload_params() {
  const double kBig = 1e300;
  return {
      {"model", ParamType::String, "gpt3-175b", "model preset (layers, hidden, heads, vocabulary, experts)", -kBig,
       kBig, model_names()},
      {"recipe",
       ParamType::String,
       "scenario",
       "where the training recipe (parallelism, recompute, ZeRO, batch, tokens) comes from: scenario = the "
       "scenario's keys, the model preset's published recipe for each group of keys the scenario leaves out; "
       "preset = the preset's recipe over the scenario file's keys (the command line's --set still wins); "
       "`podnet list models` shows each recipe",
       -kBig,
       kBig,
       {"scenario", "preset"}},
      {"gpu", ParamType::String, "h100", "GPU preset: dense BF16 (and FP8) peak, HBM, NVLink", -kBig, kBig,
       gpu_names()},
      {"layers", ParamType::Int, "", "override the preset's transformer layers", 1, 100000, {}, true},
      {"hidden", ParamType::Int, "", "override the preset's hidden size h", 1, 1e7, {}, true},
      {"heads", ParamType::Int, "", "override the preset's attention heads", 1, 100000, {}, true},
      {"kv_heads", ParamType::Int, "", "override the preset's key/value heads (GQA)", 1, 100000, {}, true},
      {"ffn", ParamType::Int, "", "override the preset's MLP width (per expert)", 1, 1e8, {}, true},
      {"vocab", ParamType::Int, "", "override the preset's vocabulary", 1, 1e8, {}, true},
      {"seq", ParamType::Int, "", "override the preset's sequence length", 1, 1e8, {}, true},
      {"context",
       ParamType::Int,
       "",
       "override the longest sequence the model serves, prompt and output (inference; the preset's: llama3 131,072, "
       "mixtral 32,768, the others their sequence length)",
       1,
       1e8,
       {},
       true},
      {"dropout",
       ParamType::Bool,
       "",
       "override the preset's dropout (its masks kept for backward, two dropout kernels per layer; GPT-3 true, "
       "Llama, Mixtral and Nemotron false)",
       -kBig,
       kBig,
       {},
       true},
      {"experts", ParamType::Int, "", "override the preset's MoE experts per layer (1 = dense)", 1, 100000, {}, true},
      {"top_k", ParamType::Int, "", "override the preset's experts per token", 1, 100000, {}, true},
      {"tp", ParamType::Int, "8", "tensor-parallel size t (GPUs sharing each layer)", 1, 1 << 20},
      {"pp", ParamType::Int, "8", "pipeline-parallel size p (stages)", 1, 1 << 20},
      {"dp",
       ParamType::Int,
       "",
       "data-parallel size d (auto: the largest d with t p d <= fabric GPUs dividing "
       "global_batch / microbatch)",
       1,
       1 << 24,
       {"auto"},
       true},
      {"ep", ParamType::Int, "1", "expert-parallel size (MoE; divides dp, as in Megatron-core)", 1, 1 << 20},
      {"cp", ParamType::Int, "1",
       "context-parallel size c: each CP rank holds s/c tokens of every sequence, "
       "ring attention passes key/value blocks (GPUs = tp x cp x pp x dp)",
       1, 1 << 20},
      {"stage_layers",
       ParamType::IntList,
       "even",
       "layers per pipeline stage: even (l / pp), auto (balance "
       "the compute model's time with the embedding on the first and "
       "the LM head on the last stage), or a list of pp (or pp x "
       "interleave, per virtual stage) counts such as [7, 8, 8, 7]",
       0,
       1e6,
       {"even", "auto"}},
      {"interleave", ParamType::Int, "1", "virtual pipeline stages per GPU v (interleaved 1F1B when > 1)", 1, 1024},
      {"rank_order",
       ParamType::String,
       "tp-cp-dp-pp",
       "how job ranks are laid out, fastest first: tp-cp-dp-pp (Megatron-LM's default: one stage's replicas "
       "contiguous) or tp-cp-pp-dp (a whole pipeline contiguous, as Llama 3 was trained)",
       -kBig,
       kBig,
       {"tp-cp-dp-pp", "tp-cp-pp-dp"}},
      {"microbatch", ParamType::Int, "1", "sequences per microbatch b", 1, 1 << 20},
      {"global_batch", ParamType::Int, "1536", "sequences per iteration B (GPT-3: 1536)", 1, 1e9},
      {"sequence_parallel", ParamType::Bool, "false",
       "Megatron sequence parallelism: TP all-reduces become "
       "reduce-scatter + all-gather"},
      {"tp_comm_overlap", ParamType::Bool, "false",
       "hide each layer's TP collectives behind its GEMMs, exposing only what exceeds them (Megatron's "
       "--tp-comm-overlap; needs sequence_parallel)"},
      {"zero", ParamType::Int, "0",
       "ZeRO stage: 0 all-reduce, 1/2 reduce-scatter + all-gather, 3 also gathers "
       "parameters (1.5x DP volume)",
       0, 3},
      {"compute_efficiency", ParamType::Real, "", efficiency_help(), 0.001, 1, {}, true},
      {"precision",
       ParamType::String,
       "bf16",
       "the transformer layers' GEMMs: bf16, or fp8 (TransformerEngine's FP8 training as Megatron-Core runs it: "
       "those GEMMs at the GPU's dense FP8 peak x fp8_efficiency, their BF16 inputs and output gradients "
       "cast through HBM where no kernel fuses the cast (timed with memory_bound_ops); attention, LM head, "
       "communication and memory stay as "
       "in BF16; MFU is still of the BF16 peak, the FP8 one printed beside it)",
       -kBig,
       kBig,
       {"bf16", "fp8"}},
      {"fp8_efficiency", ParamType::Real, "", fp8_efficiency_help(), 0.001, 1, {}, true},
      {"attention_efficiency", ParamType::Real, "", attention_help(), 0.001, 1, {}, true},
      {"sustained_fraction", ParamType::Real, "", sustained_help(), 0.01, 1, {}, true},
      {"layer_overhead", ParamType::Time, "", layer_overhead_help(), -kBig, kBig, {}, true},
      {"step_overhead", ParamType::Time, "0s",
       "a fixed cost each iteration pays before its first pass: what the software stack spends between steps "
       "outside the modelled terms (data loader handoff, Python, synchronisation). Measure it from step times at "
       "two batch sizes on the same GPUs (docs/commands/train.md); MegaScale's 2023 Megatron-LM baseline: 1.44s",
       -kBig, kBig},
      {"variability",
       ParamType::String,
       "none",
       "compute-time variability between GPUs: none, or measured (each GPU's speed varies persistently, CV 1 %, and "
       "from step to step, CV 0.5 %; 0.5 % of hosts run forward passes 10 % slow; a step waits for the slowest GPU of "
       "each pipeline stage)",
       -kBig,
       kBig,
       {"none", "measured"}},
      {"speed_cv",
       ParamType::Real,
       "",
       "coefficient of variation of each GPU's persistent compute speed (lognormal; sets variability's)",
       0,
       0.5,
       {},
       true},
      {"jitter_cv",
       ParamType::Real,
       "",
       "coefficient of variation of each GPU's compute time from step to step (normal; sets variability's)",
       0,
       0.5,
       {},
       true},
      {"slow_hosts",
       ParamType::Real,
       "",
       "share of the fabric's servers whose GPUs run their forward passes slow (sets variability's; measured: 0.005, "
       "MegaScale's 0.5 % of machines)",
       0,
       1,
       {},
       true},
      {"slow_host_forward",
       ParamType::Real,
       "",
       "how much longer a slow host's forward passes take (0.1 = 10 %; sets variability's; measured: MegaScale's 0.1)",
       0,
       10,
       {},
       true},
      {"step", ParamType::Int, "0",
       "which training step's jitter is drawn with variability measured: steps differ only in each GPU's "
       "step-to-step jitter, its persistent speed staying (podnet calibrate --training draws several)",
       0, 1e9},
      {"flash_attention", ParamType::Bool, "true",
       "FlashAttention: the attention core on its causal half at attention_efficiency, no s^2 activations; "
       "false = the unfused core (4 s h at compute_efficiency, the s x s scores through HBM and stored)"},
      {"overlap_grad_reduce", ParamType::Bool, "true",
       "reduce each gradient bucket as soon as the last backward has made it final, overlapping the rest of that "
       "backward (Megatron's --overlap-grad-reduce); false = every bucket after the stage's last pass, exposed "
       "(Megatron-LM before mid-2023, DeepSpeed's pipeline engine)"},
      {"overlap_param_gather", ParamType::Bool, "true",
       "with ZeRO 1/2, only the first-needed bucket's parameter all-gather is exposed after the optimizer step, "
       "the others hidden behind the next forwards (Megatron's --overlap-param-gather); false = every bucket's"},
      {"memory_bound_ops", ParamType::Bool, "true",
       "time the element-wise kernels (norms, residual adds, activation, rotary, dropout) at the GPU's HBM "
       "bandwidth; false = GEMM and attention time only"},
      {"tokens", ParamType::String, "300B", "training budget in tokens (300B, 15T, 2e12) for days to train"},
      {"recompute",
       ParamType::String,
       "full",
       "activation recompute: none, selective (the attention core again "
       "in backward, its s^2 activations not kept) or full (the whole "
       "forward again, only layer inputs kept)",
       -kBig,
       kBig,
       {"none", "selective", "full"}},
      {"pp_p2p_comm",
       ParamType::String,
       "auto",
       "the NCCL communicator a pipeline's stage-to-stage sends run on, which sets their channels: "
       "group = the pipeline group's (Megatron's batch_isend_irecv, its default "
       "without interleaving), pair = a two-rank one per peer pair (PyTorch's unbatched isend/irecv: Megatron's "
       "default with interleaving, --overlap-p2p-communication), auto = as Megatron's defaults",
       -kBig,
       kBig,
       {"auto", "group", "pair"}},
      {"loss_reduce",
       ParamType::String,
       "step",
       "when the logging loss is all-reduced over DP x CP on the last stage (8 bytes, at NCCL's latency): step = "
       "once a step after the optimizer (Megatron-Core 0.13 and later), microbatch = after each microbatch's loss "
       "(Megatron-LM before 2025-04), none",
       -kBig,
       kBig,
       {"step", "microbatch", "none"}},
      {"bytes_per_param", ParamType::Int, "2", "bytes per parameter and activation element (bf16 = 2)", 1, 8},
      {"bytes_per_grad", ParamType::Int, "2", "bytes per gradient element as reduced over DP (bf16 = 2, fp32 = 4)", 1,
       8},
      {"bucket_params",
       ParamType::Int,
       "",
       "DP gradient bucket in parameters (auto: max(40M, 1M x dp), "
       "Megatron-core's default)",
       1,
       1e12,
       {},
       true},
  };
}

bool parse_count(const std::string& text, double& out) {
  if (text.empty()) return false;
  std::string t = text;
  double mult = 1;
  const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(t.back())));
  if (last == 'K' || last == 'M' || last == 'B' || last == 'G' || last == 'T') {
    mult = last == 'K' ? 1e3 : last == 'M' ? 1e6 : (last == 'B' || last == 'G') ? 1e9 : 1e12;
    t.pop_back();
  }
  if (t.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(v) || v < 0) return false;
  out = v * mult;
  return out <= kMaxTokens;
}

ModelSpec model_from(const Params& p) {
  const ModelSpec* m = find_model(p.get_string("model"));
  if (!m) throw ParamError("workload.model", "unknown model; expected one of: " + join(model_names()));
  ModelSpec out = *m;
  auto over = [&](const char* key, int64_t& field) {
    if (p.has(key)) field = p.get_int(key);
  };
  over("layers", out.layers);
  over("hidden", out.hidden);
  over("heads", out.heads);
  const bool mha = out.kv_heads == m->heads;
  over("kv_heads", out.kv_heads);
  if (p.has("heads") && !p.has("kv_heads") && mha) out.kv_heads = out.heads;  // keep MHA presets MHA
  over("ffn", out.ffn);
  over("vocab", out.vocab);
  over("seq", out.seq);
  over("context", out.context);
  over("experts", out.experts);
  over("top_k", out.top_k);
  if (p.has("dropout")) out.dropout = p.get_bool("dropout");
  if (p.has("hidden") && !p.has("ffn") && !out.gated_mlp) out.ffn = 4 * out.hidden;
  return out;
}

GpuSpec gpu_from(const Params& p) {
  const GpuSpec* g = find_gpu(p.get_string("gpu"));
  if (!g) throw ParamError("workload.gpu", "unknown GPU; expected one of: " + join(gpu_names()));
  return *g;
}

int64_t largest_dp(int64_t sequences, int64_t most, int64_t multiple) {
  for (int64_t d = most; d >= 1; --d)
    if (sequences % d == 0 && (sequences / d) % multiple == 0) return d;
  return 0;
}

Job job_from(const Params& p, int64_t fabric_gpus, std::string_view owner) {
  Job j;
  j.model = model_from(p);
  j.gpu = gpu_from(p);
  j.tp = p.get_int("tp");
  j.pp = p.get_int("pp");
  j.ep = p.get_int("ep");
  j.interleave = p.get_int("interleave");
  j.pipeline_inner = p.get_string("rank_order") == "tp-cp-pp-dp";
  j.microbatch = p.get_int("microbatch");
  j.global_batch = p.get_int("global_batch");
  j.sequence_parallel = p.get_bool("sequence_parallel");
  j.tp_comm_overlap = p.get_bool("tp_comm_overlap");
  if (j.tp_comm_overlap && !j.sequence_parallel)
    throw ParamError("workload.tp_comm_overlap",
                     "overlaps the reduce-scatter and all-gather of sequence parallelism with the GEMMs; expected "
                     "workload.sequence_parallel: true with it");
  j.zero = static_cast<int>(p.get_int("zero"));
  j.compute_efficiency = p.has("compute_efficiency") ? p.get_real("compute_efficiency") : j.gpu.compute_efficiency;
  j.attention_efficiency = p.has("attention_efficiency") ? p.get_real("attention_efficiency")
                                                         : j.gpu.attention_efficiency;
  j.precision = p.get_string("precision") == "fp8" ? Precision::Fp8 : Precision::Bf16;
  j.fp8_efficiency = p.has("fp8_efficiency") ? p.get_real("fp8_efficiency") : j.gpu.fp8_efficiency;
  if (j.precision == Precision::Fp8 && j.gpu.fp8_peak_flops <= 0)
    throw ParamError("workload.precision", fmt::format("fp8 needs FP8 tensor cores, which the {} preset has not; "
                                                       "expected bf16 with workload.gpu {}, or an FP8 GPU ({})",
                                                       j.gpu.name, j.gpu.name, join(fp8_gpu_names())));
  j.memory_bound_ops = p.get_bool("memory_bound_ops");
  j.sustained_fraction = p.has("sustained_fraction") ? p.get_real("sustained_fraction") : j.gpu.sustained_fraction;
  j.layer_overhead = p.has("layer_overhead") ? p.get_time("layer_overhead").seconds() : j.gpu.layer_overhead;
  if (j.layer_overhead < 0 || j.layer_overhead > 0.1)
    throw ParamError("workload.layer_overhead", fmt::format("{}: expected 0 to 100ms (the presets' fits: 0 to 400us)",
                                                            format_time(Time::from_seconds(j.layer_overhead))));
  j.step_overhead = p.get_time("step_overhead").seconds();
  if (j.step_overhead < 0 || j.step_overhead > 3600)
    throw ParamError("workload.step_overhead", fmt::format("{}: expected 0 to 1 h (a cost per iteration)",
                                                           format_time(Time::from_seconds(j.step_overhead))));
  if (p.get_string("variability") == "measured") {
    j.speed_cv = p.has("speed_cv") ? p.get_real("speed_cv") : kMeasuredSpeedCv;
    j.jitter_cv = p.has("jitter_cv") ? p.get_real("jitter_cv") : kMeasuredJitterCv;
    j.slow_host_share = p.has("slow_hosts") ? p.get_real("slow_hosts") : kMeasuredSlowHostShare;
    j.slow_host_forward = p.has("slow_host_forward") ? p.get_real("slow_host_forward") : kMeasuredSlowHostForward;
  } else {
    for (const char* key : {"speed_cv", "jitter_cv", "slow_hosts", "slow_host_forward"})
      if (p.has(key))
        throw ParamError(std::string("workload.") + key,
                         "workload.variability is none, which this spread would not change; expected "
                         "workload.variability=measured with it (it then replaces measured's spread)");
  }
  j.step = p.get_int("step");
  j.flash_attention = p.get_bool("flash_attention");
  j.overlap_grad_reduce = p.get_bool("overlap_grad_reduce");
  j.overlap_param_gather = p.get_bool("overlap_param_gather");
  j.cp = p.get_int("cp");
  if (!parse_count(p.get_string("tokens"), j.tokens) || j.tokens <= 0)
    throw ParamError("workload.tokens", fmt::format("'{}' is not a token count; expected e.g. 300B, 15T, 2e12 (above "
                                                    "0, at most 1000T)",
                                                    p.get_string("tokens")));
  // A budget below one iteration's tokens is a unit left out (15 for 15T), not a run of less than a step.
  if (static_cast<double>(j.tokens) < j.tokens_per_iteration())
    throw ParamError("workload.tokens",
                     fmt::format("{} tokens is less than one iteration's {} (global batch {} x seq {}); expected a "
                                 "budget with its unit, such as {}T or {}B",
                                 thousands(j.tokens), thousands(static_cast<int64_t>(j.tokens_per_iteration())),
                                 thousands(j.global_batch), thousands(j.model.seq), p.get_string("tokens"),
                                 p.get_string("tokens")));
  const std::string& rc = p.get_string("recompute");
  j.recompute = rc == "none" ? Recompute::None : rc == "selective" ? Recompute::Selective : Recompute::Full;
  const std::string& pc = p.get_string("pp_p2p_comm");
  j.pp_p2p_comm = pc == "group" ? P2pComm::Group : pc == "pair" ? P2pComm::Pair : P2pComm::Auto;
  const std::string& lr = p.get_string("loss_reduce");
  j.loss_reduce = lr == "microbatch" ? LossReduce::Microbatch : lr == "none" ? LossReduce::None : LossReduce::Step;
  j.bytes_per_param = p.get_int("bytes_per_param");
  j.bytes_per_grad = p.get_int("bytes_per_grad");
  if (p.has("bucket_params")) j.bucket_params = p.get_int("bucket_params");
  if (p.has("dp")) {
    j.dp = p.get_int("dp");
  } else {
    const int64_t mp = j.tp * j.cp * j.pp;
    if (mp > fabric_gpus)
      throw ParamError("workload.tp", fmt::format("tp x cp x pp = {} x {} x {} = {} GPUs, but {} has {}", j.tp, j.cp,
                                                  j.pp, mp, owner, fabric_gpus));
    const int64_t seqs = j.global_batch / std::max<int64_t>(1, j.microbatch);
    // The largest DP that splits the batch into whole microbatches; with the interleaved schedule, also into a
    // multiple of pp per pipeline (its requirement, checked below), else the largest that splits it at all (and
    // the check below says what to change).
    j.dp = 0;
    if (j.global_batch % j.microbatch == 0) {
      j.dp = largest_dp(seqs, fabric_gpus / mp, j.interleave > 1 && j.pp > 1 ? j.pp : 1);
      if (j.dp == 0) j.dp = largest_dp(seqs, fabric_gpus / mp, 1);
    }
    if (j.dp == 0)
      throw ParamError("workload.global_batch",
                       fmt::format("global_batch {} is not a multiple of microbatch {}", j.global_batch, j.microbatch));
  }
  const std::string& split = p.text("stage_layers");
  if (split == "auto") {
    // The first and the last virtual stage may hold only the embedding or the LM head; every other needs a layer.
    if (j.pp * j.interleave > j.model.layers + 2) {
      const int64_t room = j.model.layers + 2;  // virtual stages the layers, the embedding and the head can fill
      const int64_t most_interleave = room / j.pp;
      throw ParamError(
          j.interleave > 1 ? "workload.interleave" : "workload.pp",
          fmt::format("pp x interleave = {} x {} = {} virtual stages need a layer each, but the model has {} layers "
                      "(and the embedding and the head: {} stages at most); {}",
                      j.pp, j.interleave, j.pp * j.interleave, j.model.layers, room,
                      j.interleave > 1 && most_interleave >= 1
                          ? fmt::format("set workload.interleave to at most {}, or workload.pp to at most {}",
                                        most_interleave, room / j.interleave)
                          : fmt::format("set workload.pp to at most {}{}", room / j.interleave,
                                        j.interleave > 1 ? fmt::format(" (with interleave {})", j.interleave) : "")));
    }
    j.chunk_layers =
        auto_stage_split(j.model.layers, j.pp, j.interleave, layer_compute_seconds(j), head_compute_seconds(j));
    bool even = true;
    for (int64_t n : j.chunk_layers) even = even && n == j.chunk_layers.front();
    if (even) j.chunk_layers.clear();
  } else if (split != "even") {
    const auto& list = p.get_int_list("stage_layers");
    const auto n = static_cast<int64_t>(list.size());
    if (n == j.pp * j.interleave) {
      j.chunk_layers = list;
    } else if (n == j.pp) {
      for (int64_t i = 0; i < j.pp; ++i)
        if (list[static_cast<size_t>(i)] % j.interleave != 0)
          throw ParamError("workload.stage_layers",
                           fmt::format("stage {} has {} layers, not divisible by interleave {} (give pp x interleave "
                                       "= {} counts, one per virtual stage, instead)",
                                       i, list[static_cast<size_t>(i)], j.interleave, j.pp * j.interleave));
      j.chunk_layers.assign(static_cast<size_t>(j.pp * j.interleave), 0);
      for (int64_t c = 0; c < j.interleave; ++c)
        for (int64_t i = 0; i < j.pp; ++i)
          j.chunk_layers[static_cast<size_t>(c * j.pp + i)] = list[static_cast<size_t>(i)] / j.interleave;
    } else {
      throw ParamError("workload.stage_layers",
                       fmt::format("{} counts given; expected pp = {}{}", n, j.pp,
                                   j.interleave > 1 ? fmt::format(" or pp x interleave = {}", j.pp * j.interleave)
                                                    : std::string()));
    }
    int64_t sum = 0;
    for (int64_t x : j.chunk_layers) sum += x;
    if (sum != j.model.layers)
      throw ParamError("workload.stage_layers",
                       fmt::format("the counts add up to {} layers, but the model has {}", sum, j.model.layers));
    for (int64_t i = 0; i < j.pp; ++i)
      if (j.stage_layers(i) == 0 && i != 0 && i != j.pp - 1)
        throw ParamError("workload.stage_layers", fmt::format("stage {} has no layers", i));
  }
  validate(j, fabric_gpus, owner);
  return j;
}

double dp_wire_bytes_per_param(const Job& j) {
  const double g = static_cast<double>(j.bytes_per_grad), w = static_cast<double>(j.bytes_per_param);
  return j.zero == 0 ? 2 * g : j.zero == 3 ? g + 2 * w : g + w;
}

void validate(const Job& j, int64_t fabric_gpus, std::string_view owner) {
  const ModelSpec& m = j.model;
  // Too many GPUs: the product, the fabric's count and the dp that fits (or that tp x cp x pp alone is too many).
  // The product in floating point: tp x cp x pp x dp would wrap int64 (tp, cp, pp up to 2^20, dp 2^24; tp x cp x pp
  // fits).
  const double product =
      static_cast<double>(j.tp) * static_cast<double>(j.cp) * static_cast<double>(j.pp) * static_cast<double>(j.dp);
  if (product > static_cast<double>(fabric_gpus)) {
    const int64_t mp = j.tp * j.cp * j.pp;
    // tp x cp x pp alone is too many: the blame is theirs (the one the command line gave), not dp's, and the pp
    // that fits is named (a recipe's layout dropped for a --set tp left podnet's default pp 8 behind unseen).
    if (mp > fabric_gpus)
      throw SharedParamError(
          "workload.pp",
          fmt::format("tp x cp x pp = {} x {} x {} = {} GPUs before any data parallelism, but {} has {}; expected {}",
                      j.tp, j.cp, j.pp, thousands(mp), owner, thousands(fabric_gpus),
                      j.tp * j.cp <= fabric_gpus
                          ? fmt::format("pp at most {} (--set workload.pp={}), or a smaller tp or cp",
                                        thousands(fabric_gpus / (j.tp * j.cp)), fabric_gpus / (j.tp * j.cp))
                          : std::string("a smaller tp or cp")),
          {"workload.pp", "workload.tp", "workload.cp"});
    throw ParamError(
        "workload.dp",
        fmt::format("tp x cp x pp x dp = {} x {} x {} x {} = {} GPUs, but {} has {}; expected {}", j.tp, j.cp, j.pp,
                    j.dp, product < 1e18 ? thousands(static_cast<int64_t>(product)) : fmt::format("{:.3g}", product),
                    owner, thousands(fabric_gpus),
                    fmt::format("dp at most {} ({}'s GPUs / (tp x cp x pp) = {} / {}), or dp left out (auto: --set "
                                "workload.dp=)",
                                thousands(fabric_gpus / mp), owner, thousands(fabric_gpus), thousands(mp))));
  }
  if (m.hidden % m.heads != 0)
    throw SharedParamError("workload.heads",
                           fmt::format("hidden {} is not divisible by heads {}; expected heads dividing hidden",
                                       m.hidden, m.heads),
                           {"workload.heads", "workload.hidden", "workload.model"});
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
    throw ParamError("workload.kv_heads", fmt::format("kv_heads {} must divide heads {}", m.kv_heads, m.heads));
  if (m.top_k > m.experts)
    throw ParamError("workload.top_k", fmt::format("top_k {} exceeds experts {}", m.top_k, m.experts));
  if (m.heads % j.tp != 0)
    throw ParamError("workload.tp", fmt::format("heads {} are not divisible by tp {}", m.heads, j.tp));
  if (m.kv_heads % j.tp != 0)
    throw ParamError("workload.tp",
                     fmt::format("kv_heads {} are not divisible by tp {} (Megatron splits the key/value groups "
                                 "over TP ranks)",
                                 m.kv_heads, j.tp));
  if (j.chunk_layers.empty() && m.layers % (j.pp * j.interleave) != 0)
    throw ParamError(j.interleave > 1 ? "workload.interleave" : "workload.pp",
                     fmt::format("layers {} are not divisible by pp x interleave = {} x {} (set workload.stage_layers "
                                 "to auto or to a list for an uneven split)",
                                 m.layers, j.pp, j.interleave));
  if (!j.chunk_layers.empty() && static_cast<int64_t>(j.chunk_layers.size()) != j.pp * j.interleave)
    throw ParamError("workload.stage_layers", fmt::format("{} virtual stages given, pp x interleave = {}",
                                                          j.chunk_layers.size(), j.pp * j.interleave));
  if (const int64_t step = j.microbatch * j.dp; j.global_batch % step != 0) {
    // The nearest batches that divide: the one below (when there is one) and the one above. With an interleaved
    // schedule they must also give each pipeline a multiple of pp microbatches (the check below), so that the
    // batch suggested passes it too.
    const int64_t unit = j.interleave > 1 && j.pp > 1 ? step * j.pp : step;
    const int64_t below = j.global_batch / unit * unit, above = below + unit;
    // The blame is the --set that changed microbatch or dp, when there is one (not the file's global_batch line).
    throw SharedParamError(
        "workload.global_batch",
        fmt::format("global_batch {} is not divisible by microbatch x dp = {} x {} = {}; nearest{}: {}",
                    thousands(j.global_batch), j.microbatch, thousands(j.dp), thousands(step),
                    unit != step ? fmt::format(" that also give each pipeline a multiple of pp = {} microbatches "
                                               "(the interleaved schedule's need)",
                                               j.pp)
                                 : std::string(),
                    below > 0 ? fmt::format("{} or {}", thousands(below), thousands(above)) : thousands(above)),
        {"workload.global_batch", "workload.dp", "workload.microbatch"});
  }
  if (j.interleave > 1) {
    if (j.pp < 2)
      throw ParamError("workload.interleave",
                       fmt::format("interleave {} needs pp >= 2 (virtual stages of a pipeline), but pp is {}: set "
                                   "workload.interleave=1 for one stage",
                                   j.interleave, j.pp));
    if (j.microbatches() % j.pp != 0)
      throw ParamError("workload.interleave",
                       fmt::format("the interleaved schedule needs microbatches per pipeline ({} = global_batch {} / "
                                   "(microbatch {} x dp {})) divisible by pp {}: set workload.global_batch to a "
                                   "multiple of {} (microbatch x dp x pp), such as {}, or workload.interleave=1",
                                   j.microbatches(), thousands(j.global_batch), j.microbatch, thousands(j.dp), j.pp,
                                   thousands(j.microbatch * j.dp * j.pp),
                                   thousands(j.microbatch * j.dp * j.pp *
                                             std::max<int64_t>(1, (j.microbatches() + j.pp - 1) / j.pp))));
  }
  if (static_cast<double>(j.pp) * static_cast<double>(j.microbatches()) * static_cast<double>(j.interleave) >
      static_cast<double>(kMaxPipelinePasses))
    throw ParamError("workload.global_batch",
                     fmt::format("pp x microbatches per pipeline x interleave = {} x {} x {} pipeline passes exceed "
                                 "podnet's limit of {}: shrink workload.global_batch (or raise workload.microbatch)",
                                 j.pp, j.microbatches(), j.interleave, kMaxPipelinePasses));
  if (j.replicas() > 1 && m.layers > 0)
    for (int64_t i = 0; i < j.pp; ++i)
      for (int64_t c = 0; c < j.interleave; ++c) {
        const double k = std::ceil(chunk_params(j, i, c).total() / static_cast<double>(j.dp_bucket_params()));
        if (k > static_cast<double>(kMaxBucketsPerChunk))
          throw ParamError("workload.bucket_params",
                           fmt::format("stage {} chunk {} would reduce its gradients in {} buckets of {} parameters, "
                                       "more than podnet's limit of {} per chunk: raise workload.bucket_params{}",
                                       i, c, format_number(k, 0), j.dp_bucket_params(), kMaxBucketsPerChunk,
                                       j.bucket_params > 0 ? "" : " or shrink the model"));
      }
  if (j.ep > 1 && !m.moe())
    throw ParamError("workload.ep", fmt::format("ep {} needs a mixture-of-experts model (experts > 1)", j.ep));
  if (j.dp % j.ep != 0)
    throw ParamError("workload.ep", fmt::format("ep {} does not divide dp {} (expert parallelism is carved out of "
                                                "data parallelism)",
                                                j.ep, j.dp));
  if (m.experts % j.ep != 0)
    throw ParamError("workload.ep", fmt::format("ep {} does not divide experts {}", j.ep, m.experts));
  if (j.sequence_parallel && m.seq % j.tp != 0)
    throw ParamError("workload.sequence_parallel",
                     fmt::format("sequence parallelism needs seq {} divisible by tp {}", m.seq, j.tp));
  if (j.zero < 0 || j.zero > 3) throw ParamError("workload.zero", "expected 0, 1, 2 or 3");
  if (j.cp > 1) {
    const int64_t div = j.cp * (j.sequence_parallel ? j.tp : 1);
    if (m.seq % div != 0)
      throw ParamError("workload.cp", fmt::format("seq {} is not divisible by cp{} = {}", m.seq,
                                                  j.sequence_parallel ? " x tp (sequence parallelism)" : "", div));
    if (j.ep > 1)
      throw ParamError("workload.cp", "context parallelism with expert parallelism (ep > 1) is not modelled");
  }
}

GroupCounts group_counts(const Job& j) {
  GroupCounts g;
  g.tp_groups = j.pp * j.replicas();
  g.tp_size = j.tp;
  if (j.cp > 1) {
    g.cp_groups = j.tp * j.pp * j.dp;
    g.cp_size = j.cp;
  }
  g.pp_groups = j.tp * j.replicas();
  g.pp_size = j.pp;
  g.dp_groups = j.tp * j.pp;
  g.dp_size = j.replicas();  // the gradient group: DP x CP
  if (j.model.moe() && j.ep > 1) {
    g.ep_groups = j.gpus() / j.ep;
    g.ep_size = j.ep;
    g.edp_groups = j.tp * j.pp * j.ep;
    g.edp_size = j.dp / j.ep;
  }
  return g;
}

std::vector<int64_t> tp_group(const Job& j, int64_t dp_rank, int64_t pp_rank) {
  std::vector<int64_t> g;
  for (int64_t t = 0; t < j.tp; ++t) g.push_back(j.rank(t, dp_rank, pp_rank));
  return g;
}

std::vector<int64_t> dp_group(const Job& j, int64_t tp_rank, int64_t pp_rank) {
  std::vector<int64_t> g;
  for (int64_t r = 0; r < j.replicas(); ++r) g.push_back(j.rank(tp_rank, r, pp_rank));
  return g;
}

std::vector<int64_t> cp_group(const Job& j, int64_t tp_rank, int64_t dp_rank, int64_t pp_rank) {
  std::vector<int64_t> g;
  for (int64_t c = 0; c < j.cp; ++c) g.push_back(j.rank(tp_rank, c + j.cp * dp_rank, pp_rank));
  return g;
}

std::vector<int64_t> pp_group(const Job& j, int64_t tp_rank, int64_t dp_rank) {
  std::vector<int64_t> g;
  for (int64_t s = 0; s < j.pp; ++s) g.push_back(j.rank(tp_rank, dp_rank, s));
  return g;
}

std::vector<int64_t> ep_group(const Job& j, int64_t tp_rank, int64_t edp_rank, int64_t pp_rank) {
  std::vector<int64_t> g;
  for (int64_t e = 0; e < j.ep; ++e) g.push_back(j.rank(tp_rank, e + j.ep * edp_rank, pp_rank));
  return g;
}

std::vector<int64_t> edp_group(const Job& j, int64_t tp_rank, int64_t ep_rank, int64_t pp_rank) {
  std::vector<int64_t> g;
  for (int64_t k = 0; k < j.dp / j.ep; ++k) g.push_back(j.rank(tp_rank, ep_rank + j.ep * k, pp_rank));
  return g;
}

StageParams chunk_params(const Job& j, int64_t stage, int64_t chunk) {
  const ModelSpec& m = j.model;
  const double t = static_cast<double>(j.tp);
  const double lc = static_cast<double>(j.layers_of(stage, chunk));
  const double h = static_cast<double>(m.hidden), v = static_cast<double>(m.vocab);
  const int64_t vs = chunk * j.pp + stage, last = j.pp * j.interleave - 1;
  StageParams sp;
  const double router = m.moe() ? h * static_cast<double>(m.experts) : 0.0;
  if (m.moe()) {
    sp.dense = lc * (m.attention_params_per_layer() + m.vector_params_per_layer() + router) / t;
    sp.expert = lc * (m.mlp_params_per_layer() - router) / (t * static_cast<double>(j.ep));
  } else {
    sp.dense = lc * (m.attention_params_per_layer() + m.mlp_params_per_layer() + m.vector_params_per_layer()) / t;
  }
  if (vs == 0) sp.dense += (v * h + (m.learned_positions ? static_cast<double>(m.seq) * h : 0.0)) / t;
  if (vs == last) sp.dense += v * h / t;  // output head (untied), or the tied embedding's copy
  return sp;
}

StageParams stage_params(const Job& j, int64_t stage) {
  StageParams sp;
  for (int64_t c = 0; c < j.interleave; ++c) {
    const StageParams x = chunk_params(j, stage, c);
    sp.dense += x.dense;
    sp.expert += x.expert;
  }
  return sp;
}

Volumes volumes(const Job& j) {
  const ModelSpec& m = j.model;
  Volumes v;
  const double t = static_cast<double>(j.tp), d = static_cast<double>(j.replicas());
  const double mb = static_cast<double>(j.microbatches());
  const double ls = static_cast<double>(m.layers) / static_cast<double>(j.pp);  // stage average
  const int64_t seq_local = m.seq / j.cp;
  const Bytes bsh = j.microbatch * seq_local * m.hidden * j.bytes_per_param;
  const bool full = j.recompute == Recompute::Full;
  v.tp_allreduce_bytes = bsh;
  v.tp_allreduces_per_layer = full ? 6 : 4;
  v.tp_bytes_per_gpu =
      j.tp > 1 ? static_cast<double>(v.tp_allreduces_per_layer) * ls * mb * 2 * (t - 1) / t * static_cast<double>(bsh)
               : 0.0;
  v.pp_p2p_bytes = j.pp > 1 ? bsh : 0;
  v.pp_bytes_per_gpu = j.pp > 1 ? 2.0 * mb * static_cast<double>(j.interleave) * static_cast<double>(bsh) / t : 0.0;
  // Stage average of the gradient bytes per GPU (equals P/(t p) x bytes for a dense model).
  double grads = 0, dp_traffic = 0;
  for (int64_t s = 0; s < j.pp; ++s) {
    const StageParams sp = stage_params(j, s);
    grads += sp.total() * static_cast<double>(j.bytes_per_grad);
    const double edp = static_cast<double>(j.dp) / static_cast<double>(j.ep);
    dp_traffic += (sp.dense * (d - 1) / d + sp.expert * (edp - 1) / edp) * dp_wire_bytes_per_param(j);
  }
  v.dp_grad_bytes_per_gpu = grads / static_cast<double>(j.pp);
  v.dp_bytes_per_gpu = dp_traffic / static_cast<double>(j.pp);
  if (m.moe() && j.ep > 1) {
    v.ep_alltoall_bytes = static_cast<Bytes>(
        std::ceil(static_cast<double>(j.microbatch * m.seq * m.hidden * m.top_k * j.bytes_per_param) / t));
    const double per_layer = full ? 6.0 : 4.0;
    v.ep_bytes_per_gpu = per_layer * ls * mb * static_cast<double>(v.ep_alltoall_bytes) *
                         (static_cast<double>(j.ep) - 1) / static_cast<double>(j.ep);
  }
  if (j.cp > 1) {
    const int64_t kv_dim = m.hidden * m.kv_heads / m.heads;
    v.cp_kv_bytes = static_cast<Bytes>(
        std::ceil(static_cast<double>(2 * j.microbatch * seq_local * kv_dim * j.bytes_per_param) / t));
    v.cp_kv_steps_per_layer = (j.cp - 1) * (full ? 4 : 3);
    v.cp_bytes_per_gpu = static_cast<double>(v.cp_kv_steps_per_layer) * ls * mb * static_cast<double>(v.cp_kv_bytes);
  }
  return v;
}

double activation_bytes_per_layer(const Job& j) {
  const ModelSpec& m = j.model;
  const double s = static_cast<double>(m.seq) / static_cast<double>(j.cp), b = static_cast<double>(j.microbatch);
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn), a = static_cast<double>(m.heads);
  const double t = static_cast<double>(j.tp);
  const double h_kv = h * static_cast<double>(m.kv_heads) / a;
  const double sbh = s * b * h;
  // The coefficients below are Korthikanti et al.'s, for 2-byte activations: every tensor scales with
  // bytes_per_param / 2; the dropout masks (1 byte an element) and FlashAttention's fp32 statistics do not.
  const double e = static_cast<double>(j.bytes_per_param) / 2.0;
  if (j.recompute == Recompute::Full) return 2 * sbh * e / (j.sequence_parallel ? t : 1.0);
  const double masks = m.dropout ? 2 * sbh : 0.0;
  // MoE: a token's MLP activations are kept for each of its k experts, and its k dispatched copies (the
  // experts' inputs) beside the router's input.
  const double k = m.moe() ? static_cast<double>(m.top_k) : 1.0;
  const double dispatched = m.moe() ? 2 * sbh * k : 0.0;
  const double replicated = (4 * sbh + 2 * sbh + 2 * sbh + dispatched) * e + masks;
  const double mlp = (m.gated_mlp ? 6.0 : 4.0) * s * b * f * k;
  const double split = (2 * sbh + 2 * s * b * h_kv + 2 * s * b * h_kv + 2 * sbh + mlp) * e;
  // The core sees the full sequence's keys: a s_local s b scores per CP rank; CP never stores it (blockwise).
  // Unfused: the scores, softmax output and dropout mask (Korthikanti et al. 2022, 5 a s^2 b with dropout).
  // FlashAttention keeps only each row's softmax statistic (fp32 per head and token), never the scores.
  const double core = (j.recompute == Recompute::Selective || j.cp > 1) ? 0.0
                      : j.flash_attention
                          ? 4.0 * a * s * b
                          : (m.dropout ? 4.0 * e + 1.0 : 2.0 * e) * a * s * static_cast<double>(m.seq) * b;
  return replicated / (j.sequence_parallel ? t : 1.0) + split / t + core / t;
}

Memory memory_of_stage(const Job& j, int64_t stage) {
  const ModelSpec& m = j.model;
  Memory mem;
  mem.stage = stage;
  const StageParams sp = stage_params(j, stage);
  const double R = static_cast<double>(j.replicas());
  const double edp = static_cast<double>(j.dp) / static_cast<double>(j.ep);
  const double sharded = sp.dense / R + sp.expert / edp;  // one replica's share
  mem.weights = (j.zero == 3 ? sharded : sp.total()) * static_cast<double>(j.bytes_per_param);
  mem.gradients = (j.zero >= 2 ? sharded : sp.total()) * static_cast<double>(j.bytes_per_grad);
  mem.optimizer = (j.zero >= 1 ? sharded : sp.total()) * 12.0;
  // In-flight model chunks at the start of the first backward: the schedule's warm-up + 1.
  const int64_t p = j.pp, v = j.interleave, mbs = j.microbatches();
  const int64_t warm = v == 1 ? std::min(p - stage - 1, mbs) : std::min((p - stage - 1) * 2 + (v - 1) * p, mbs * v);
  const int64_t chunks = std::min(warm + 1, mbs * v);
  mem.inflight_microbatches = static_cast<double>(chunks) / static_cast<double>(v);
  mem.activation_bytes_per_layer = activation_bytes_per_layer(j);
  mem.activations =
      mem.inflight_microbatches * static_cast<double>(j.stage_layers(stage)) * mem.activation_bytes_per_layer;
  const double s_local = static_cast<double>(m.seq) / static_cast<double>(j.cp);
  const double b = static_cast<double>(j.microbatch);
  const double e = static_cast<double>(j.bytes_per_param);  // an activation element's bytes (bf16: 2)
  if (stage == p - 1)  // logits of the microbatch in flight: bf16 + fp32 softmax, vocabulary split over TP
    mem.activations += s_local * b * static_cast<double>(m.vocab) * (e + 4.0) / static_cast<double>(j.tp);
  mem.buffers =
      1024.0 * 1024 * 1024 + (j.sequence_parallel && j.tp > 1 ? e * s_local * b * static_cast<double>(m.hidden) : 0.0);
  return mem;
}

Memory peak_memory(const Job& j) {
  Memory best = memory_of_stage(j, 0);
  for (int64_t s = 1; s < j.pp; ++s) {
    const Memory m = memory_of_stage(j, s);
    if (m.total() > best.total()) best = m;
  }
  return best;
}

void check_memory(const Job& j, bool allow_oom_offered) {
  const Memory m = peak_memory(j);
  const double hbm = static_cast<double>(j.gpu.hbm_bytes);
  if (m.total() <= hbm) return;
  std::vector<std::string> fixes;
  fixes.push_back("raise workload.tp/pp");
  if (m.activations > 0.1 * m.total() && j.recompute != Recompute::Full)
    fixes.push_back(j.recompute == Recompute::None ? "set workload.recompute=selective or full"
                                                   : "set workload.recompute=full");
  if (m.activations > 0.1 * m.total() && j.microbatch > 1) fixes.push_back("lower workload.microbatch");
  if (m.activations > 0.1 * m.total()) fixes.push_back("raise workload.cp");
  const double gap = m.total() - hbm;
  // The next ZeRO stage, when what it shards would close at least a quarter of the gap (said with its saving).
  if (j.zero < 3 && j.replicas() > 1) {
    Job z = j;
    z.zero = j.zero + 1;
    const double saved = m.total() - memory_of_stage(z, m.stage).total();
    if (saved >= 0.25 * gap)
      fixes.push_back(fmt::format("set workload.zero={} ({}-{:.1f} GB)", z.zero,
                                  z.zero == 1 ? "distributed optimizer, " : "", saved / 1e9));
  }
  // ZeRO shards over the replicas: more of them, when what doubling them saves closes a quarter of the gap.
  if (j.zero >= 1) {
    Job d = j;
    d.dp = j.dp * 2;
    d.global_batch = j.global_batch * 2;  // the same microbatches per replica
    const double saved = m.total() - memory_of_stage(d, m.stage).total();
    if (saved >= 0.25 * gap)
      fixes.push_back(fmt::format("raise workload.dp (ZeRO-{} shards the optimizer's states over the replicas: "
                                  "twice as many save {:.1f} GB)",
                                  j.zero, saved / 1e9));
  }
  std::string how;
  for (size_t i = 0; i < fixes.size(); ++i) how += (i == 0 ? "" : i + 1 == fixes.size() ? ", or " : ", ") + fixes[i];
  // GB with one decimal and thousands separators ("3,193.3").
  const auto gb = [](double bytes) {
    const auto tenths = static_cast<int64_t>(std::llround(bytes / 1e8));
    return fmt::format("{}.{}", thousands(tenths / 10), tenths % 10);
  };
  // The job as a whole: which key the error is filed under is only where it points.
  std::string layout = fmt::format("TP{} x PP{}", j.tp, j.pp);
  if (j.cp > 1) layout += fmt::format(" x CP{}", j.cp);
  layout += fmt::format(" x DP{}", j.dp);
  // The preset's name, "a model from" it when its shape was changed (as the train report names it).
  const std::string model = reshaped_fields(j.model).empty() ? j.model.name : "a model from " + j.model.name;
  throw SharedParamError(
      "workload.tp",
      fmt::format("the job ({}{}) needs {} GB per GPU (stage {}: weights {}, gradients {}, optimizer {}, "
                  "activations {} for {:.2f} microbatches in flight, buffers {}), {} has {} GB: {}{}",
                  model.empty() ? "" : model + ", ", layout, gb(m.total()), m.stage, gb(m.weights), gb(m.gradients),
                  gb(m.optimizer), gb(m.activations), m.inflight_microbatches, gb(m.buffers), j.gpu.name, gb(hbm), how,
                  allow_oom_offered ? "; or pass --allow-oom to time it anyway" : ""),
      // The model last: a shape or layout key the user set is a closer cause than the model they chose. The
      // fabric's size after it: it sets DP when the scenario leaves DP out.
      {"workload.tp", "workload.pp", "workload.dp", "workload.layers", "workload.hidden", "workload.ffn",
       "workload.heads", "workload.vocab", "workload.seq", "workload.microbatch", "workload.global_batch",
       "workload.cp", "workload.zero", "workload.recompute", "workload.experts", "workload.precision", "workload.gpu",
       "workload.model", "topology.gpus"});
}

std::vector<int64_t> auto_stage_split(int64_t layers, int64_t pp, int64_t interleave, double layer_cost,
                                      double head_cost) {
  const int64_t n = pp * interleave, l = layers;
  // A layer that costs nothing (no tokens on a CP rank, which validation refuses after the split; no overhead)
  // leaves the costs meaningless: balance layer counts alone (floor(0 / 0) looped forever).
  const bool costed = layer_cost > 0 && std::isfinite(layer_cost) && head_cost >= 0 && std::isfinite(head_cost);
  const double c = costed ? layer_cost : 1.0;
  std::vector<double> extra(static_cast<size_t>(n), 0.0);
  extra.back() += costed ? head_cost : 0.0;  // the embedding (first) is a lookup: no cost
  auto caps = [&](double T, std::vector<int64_t>& out) {
    int64_t sum = 0;
    out.assign(static_cast<size_t>(n), 0);
    for (int64_t k = 0; k < n; ++k) {
      const double room = T - extra[static_cast<size_t>(k)];
      const int64_t cap = room < 0 ? 0 : std::min<int64_t>(l, static_cast<int64_t>(std::floor(room / c + 1e-9)));
      out[static_cast<size_t>(k)] = cap;
      sum += cap;
    }
    return sum;
  };
  std::vector<double> cand;
  for (int64_t k = 0; k < n; ++k)
    for (int64_t x = 0; x <= l; ++x) cand.push_back(static_cast<double>(x) * c + extra[static_cast<size_t>(k)]);
  std::sort(cand.begin(), cand.end());
  std::vector<int64_t> split;
  for (double T : cand)
    if (caps(T, split) >= l) break;
  int64_t surplus = -l;
  for (int64_t x : split) surplus += x;
  while (surplus > 0)  // take back from the earliest virtual stages, one layer each per round
    for (int64_t k = 0; k < n && surplus > 0; ++k)
      if (split[static_cast<size_t>(k)] > 0) {
        --split[static_cast<size_t>(k)];
        --surplus;
      }
  return split;
}

double model_flops_per_iteration(const Job& j) { return j.model.model_flops_per_token() * j.tokens_per_iteration(); }

double hardware_flops_per_iteration(const Job& j) {
  return j.model.hardware_flops_per_token(j.recompute) * j.tokens_per_iteration();
}

double days_to_train(const ModelSpec& model, RecomputeMode recompute, double tokens, int64_t gpus,
                     double flops_per_gpu) {
  return tokens * model.hardware_flops_per_token(recompute) / (static_cast<double>(gpus) * flops_per_gpu) / 86400.0;
}

}  // namespace podnet::workload
