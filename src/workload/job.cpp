#include "workload/job.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

#include "core/error.hpp"

namespace podnet::workload {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

int64_t Job::dp_bucket_params() const {
  if (bucket_params > 0) return bucket_params;
  return std::max<int64_t>(40'000'000, 1'000'000 * dp);
}

std::vector<ParamSpec> workload_params() {
  const double kBig = 1e300;
  return {
      {"model", ParamType::String, "gpt3-175b", "model preset (layers, hidden, heads, vocabulary, experts)", -kBig,
       kBig, model_names()},
      {"gpu", ParamType::String, "h100", "GPU preset: dense BF16 peak, HBM, NVLink", -kBig, kBig, gpu_names()},
      {"layers", ParamType::Int, "", "override the preset's transformer layers", 1, 100000, {}, true},
      {"hidden", ParamType::Int, "", "override the preset's hidden size h", 1, 1e7, {}, true},
      {"heads", ParamType::Int, "", "override the preset's attention heads", 1, 100000, {}, true},
      {"kv_heads", ParamType::Int, "", "override the preset's key/value heads (GQA)", 1, 100000, {}, true},
      {"ffn", ParamType::Int, "", "override the preset's MLP width (per expert)", 1, 1e8, {}, true},
      {"vocab", ParamType::Int, "", "override the preset's vocabulary", 1, 1e8, {}, true},
      {"seq", ParamType::Int, "", "override the preset's sequence length", 1, 1e8, {}, true},
      {"experts", ParamType::Int, "", "override the preset's MoE experts per layer (1 = dense)", 1, 100000, {}, true},
      {"top_k", ParamType::Int, "", "override the preset's experts per token", 1, 100000, {}, true},
      {"tp", ParamType::Int, "8", "tensor-parallel size t (GPUs sharing each layer)", 1, 1 << 20},
      {"pp", ParamType::Int, "8", "pipeline-parallel size p (stages)", 1, 1 << 20},
      {"dp", ParamType::Int, "", "data-parallel size d (auto: the largest d with t p d <= fabric GPUs dividing "
                                 "global_batch / microbatch)", 1, 1 << 24, {}, true},
      {"ep", ParamType::Int, "1", "expert-parallel size (MoE; divides dp, as in Megatron-core)", 1, 1 << 20},
      {"interleave", ParamType::Int, "1", "virtual pipeline stages per GPU v (interleaved 1F1B when > 1)", 1, 1024},
      {"microbatch", ParamType::Int, "1", "sequences per microbatch b", 1, 1 << 20},
      {"global_batch", ParamType::Int, "1536", "sequences per iteration B (GPT-3: 1536)", 1, 1e9},
      {"sequence_parallel", ParamType::Bool, "false", "Megatron sequence parallelism: TP all-reduces become "
                                                      "reduce-scatter + all-gather"},
      {"zero", ParamType::Int, "0", "ZeRO stage: 0 all-reduce, 1/2 reduce-scatter + all-gather, 3 also gathers "
                                    "parameters (1.5x DP volume)", 0, 3},
      {"compute_efficiency", ParamType::Real, "0.5", "achieved fraction of the GPU's dense peak in compute", 0.001,
       1},
      {"tokens", ParamType::String, "300B", "training budget in tokens (300B, 15T, 2e12) for days to train"},
      {"activation_recompute", ParamType::Bool, "true", "full activation recompute (one more forward per "
                                                        "backward)"},
      {"bytes_per_param", ParamType::Int, "2", "bytes per parameter and activation element (bf16 = 2)", 1, 8},
      {"bytes_per_grad", ParamType::Int, "2", "bytes per gradient element as reduced over DP (bf16 = 2, fp32 = 4)",
       1, 8},
      {"bucket_params", ParamType::Int, "", "DP gradient bucket in parameters (auto: max(40M, 1M x dp), "
                                            "Megatron-core's default)", 1, 1e12, {}, true},
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
  return true;
}

Job job_from(const Params& p, int64_t fabric_gpus) {
  Job j;
  const ModelSpec* m = find_model(p.get_string("model"));
  if (!m) throw ParamError("workload.model", "unknown model; expected one of: " + join(model_names()));
  const GpuSpec* g = find_gpu(p.get_string("gpu"));
  if (!g) throw ParamError("workload.gpu", "unknown GPU; expected one of: " + join(gpu_names()));
  j.model = *m;
  j.gpu = *g;
  auto over = [&](const char* key, int64_t& field) {
    if (p.has(key)) field = p.get_int(key);
  };
  over("layers", j.model.layers);
  over("hidden", j.model.hidden);
  over("heads", j.model.heads);
  const bool mha = j.model.kv_heads == m->heads;
  over("kv_heads", j.model.kv_heads);
  if (p.has("heads") && !p.has("kv_heads") && mha) j.model.kv_heads = j.model.heads;  // keep MHA presets MHA
  over("ffn", j.model.ffn);
  over("vocab", j.model.vocab);
  over("seq", j.model.seq);
  over("experts", j.model.experts);
  over("top_k", j.model.top_k);
  if (p.has("hidden") && !p.has("ffn") && !j.model.gated_mlp) j.model.ffn = 4 * j.model.hidden;
  j.tp = p.get_int("tp");
  j.pp = p.get_int("pp");
  j.ep = p.get_int("ep");
  j.interleave = p.get_int("interleave");
  j.microbatch = p.get_int("microbatch");
  j.global_batch = p.get_int("global_batch");
  j.sequence_parallel = p.get_bool("sequence_parallel");
  j.zero = static_cast<int>(p.get_int("zero"));
  j.compute_efficiency = p.get_real("compute_efficiency");
  if (!parse_count(p.get_string("tokens"), j.tokens))
    throw ParamError("workload.tokens", fmt::format("'{}' is not a token count; expected e.g. 300B, 15T, 2e12",
                                                    p.get_string("tokens")));
  j.recompute = p.get_bool("activation_recompute");
  j.bytes_per_param = p.get_int("bytes_per_param");
  j.bytes_per_grad = p.get_int("bytes_per_grad");
  if (p.has("bucket_params")) j.bucket_params = p.get_int("bucket_params");
  if (p.has("dp")) {
    j.dp = p.get_int("dp");
  } else {
    const int64_t mp = j.tp * j.pp;
    if (mp > fabric_gpus)
      throw ParamError("workload.tp", fmt::format("tp x pp = {} x {} = {} GPUs, but the fabric has {}", j.tp, j.pp,
                                                  mp, fabric_gpus));
    const int64_t seqs = j.global_batch / std::max<int64_t>(1, j.microbatch);
    j.dp = 0;
    for (int64_t d = fabric_gpus / mp; d >= 1; --d)
      if (j.global_batch % j.microbatch == 0 && seqs % d == 0) {
        j.dp = d;
        break;
      }
    if (j.dp == 0)
      throw ParamError("workload.global_batch",
                       fmt::format("global_batch {} is not a multiple of microbatch {}", j.global_batch, j.microbatch));
  }
  validate(j, fabric_gpus);
  return j;
}

void validate(const Job& j, int64_t fabric_gpus) {
  const ModelSpec& m = j.model;
  if (m.hidden % m.heads != 0)
    throw ParamError("workload.heads", fmt::format("hidden {} is not divisible by heads {}", m.hidden, m.heads));
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
    throw ParamError("workload.kv_heads",
                     fmt::format("kv_heads {} must divide heads {}", m.kv_heads, m.heads));
  if (m.top_k > m.experts)
    throw ParamError("workload.top_k", fmt::format("top_k {} exceeds experts {}", m.top_k, m.experts));
  if (j.gpus() > fabric_gpus)
    throw ParamError("workload.dp", fmt::format("tp x pp x dp = {} x {} x {} = {} GPUs, but the fabric has {}", j.tp,
                                                j.pp, j.dp, j.gpus(), fabric_gpus));
  if (m.heads % j.tp != 0)
    throw ParamError("workload.tp", fmt::format("heads {} are not divisible by tp {}", m.heads, j.tp));
  if (m.kv_heads % j.tp != 0)
    throw ParamError("workload.tp",
                     fmt::format("kv_heads {} are not divisible by tp {} (Megatron splits the key/value groups "
                                 "over TP ranks)", m.kv_heads, j.tp));
  if (m.layers % (j.pp * j.interleave) != 0)
    throw ParamError(j.interleave > 1 ? "workload.interleave" : "workload.pp",
                     fmt::format("layers {} are not divisible by pp x interleave = {} x {}", m.layers, j.pp,
                                 j.interleave));
  if (j.global_batch % (j.microbatch * j.dp) != 0)
    throw ParamError("workload.global_batch",
                     fmt::format("global_batch {} is not divisible by microbatch x dp = {} x {} = {}", j.global_batch,
                                 j.microbatch, j.dp, j.microbatch * j.dp));
  if (j.interleave > 1) {
    if (j.pp < 2) throw ParamError("workload.interleave", "interleaving needs pp >= 2");
    if (j.microbatches() % j.pp != 0)
      throw ParamError("workload.interleave",
                       fmt::format("the interleaved schedule needs microbatches per pipeline ({} = global_batch / "
                                   "(microbatch x dp)) divisible by pp {}", j.microbatches(), j.pp));
  }
  if (j.ep > 1 && !m.moe())
    throw ParamError("workload.ep", fmt::format("ep {} needs a mixture-of-experts model (experts > 1)", j.ep));
  if (j.dp % j.ep != 0)
    throw ParamError("workload.ep", fmt::format("ep {} does not divide dp {} (expert parallelism is carved out of "
                                                "data parallelism)", j.ep, j.dp));
  if (m.experts % j.ep != 0)
    throw ParamError("workload.ep", fmt::format("ep {} does not divide experts {}", j.ep, m.experts));
  if (j.sequence_parallel && m.seq % j.tp != 0)
    throw ParamError("workload.sequence_parallel",
                     fmt::format("sequence parallelism needs seq {} divisible by tp {}", m.seq, j.tp));
  if (j.zero < 0 || j.zero > 3) throw ParamError("workload.zero", "expected 0, 1, 2 or 3");
}

GroupCounts group_counts(const Job& j) {
  GroupCounts g;
  g.tp_groups = j.pp * j.dp;
  g.tp_size = j.tp;
  g.pp_groups = j.tp * j.dp;
  g.pp_size = j.pp;
  g.dp_groups = j.tp * j.pp;
  g.dp_size = j.dp;
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
  for (int64_t d = 0; d < j.dp; ++d) g.push_back(j.rank(tp_rank, d, pp_rank));
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
  const double lc = static_cast<double>(j.layers_per_chunk());
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
  const double t = static_cast<double>(j.tp), d = static_cast<double>(j.dp);
  const double mb = static_cast<double>(j.microbatches());
  const double ls = static_cast<double>(j.layers_per_stage());
  const Bytes bsh = j.microbatch * m.seq * m.hidden * j.bytes_per_param;
  v.tp_allreduce_bytes = bsh;
  v.tp_allreduces_per_layer = j.recompute ? 6 : 4;
  v.tp_bytes_per_gpu = j.tp > 1 ? static_cast<double>(v.tp_allreduces_per_layer) * ls * mb * 2 * (t - 1) / t *
                                      static_cast<double>(bsh)
                                : 0.0;
  v.pp_p2p_bytes = j.pp > 1 ? bsh : 0;
  v.pp_bytes_per_gpu =
      j.pp > 1 ? 2.0 * mb * static_cast<double>(j.interleave) * static_cast<double>(bsh) / t : 0.0;
  // Stage average of the gradient bytes per GPU (equals P/(t p) x bytes for a dense model).
  double grads = 0, dp_traffic = 0;
  for (int64_t s = 0; s < j.pp; ++s) {
    const StageParams sp = stage_params(j, s);
    grads += sp.total() * static_cast<double>(j.bytes_per_grad);
    const double edp = d / static_cast<double>(j.ep);
    dp_traffic += (sp.dense * 2 * (d - 1) / d + sp.expert * 2 * (edp - 1) / edp) * static_cast<double>(j.bytes_per_grad);
  }
  v.dp_grad_bytes_per_gpu = grads / static_cast<double>(j.pp);
  v.dp_bytes_per_gpu = dp_traffic / static_cast<double>(j.pp) * (j.zero == 3 ? 1.5 : 1.0);
  if (m.moe() && j.ep > 1) {
    v.ep_alltoall_bytes = static_cast<Bytes>(
        std::ceil(static_cast<double>(j.microbatch * m.seq * m.hidden * m.top_k * j.bytes_per_param) / t));
    const double per_layer = j.recompute ? 6.0 : 4.0;
    v.ep_bytes_per_gpu = per_layer * ls * mb * static_cast<double>(v.ep_alltoall_bytes) *
                         (static_cast<double>(j.ep) - 1) / static_cast<double>(j.ep);
  }
  return v;
}

double model_flops_per_iteration(const Job& j) { return j.model.model_flops_per_token() * j.tokens_per_iteration(); }

double hardware_flops_per_iteration(const Job& j) {
  return j.model.hardware_flops_per_token(j.recompute) * j.tokens_per_iteration();
}

double days_to_train(const ModelSpec& model, bool recompute, double tokens, int64_t gpus, double flops_per_gpu) {
  return tokens * model.hardware_flops_per_token(recompute) / (static_cast<double>(gpus) * flops_per_gpu) / 86400.0;
}

}  // namespace podnet::workload
