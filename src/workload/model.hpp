// Transformer models and GPUs, registered by name, and the closed forms that
// turn them into parameter counts and FLOPs.
//
// Parameters (a decoder-only transformer, l layers, hidden h, a heads of
// size h/a, g key/value heads (g = a without grouped-query attention), MLP
// width f, vocabulary V, sequence s):
//   attention per layer   2h^2 + 2h(g h/a)          Q and output h x h; K and V h x (g h/a)
//   MLP per layer         2hf (GELU) or 3hf (SwiGLU: gate, up, down)
//   MoE MLP per layer     E x that (E experts) + hE router; only top-k of the E are active per token
//   per-layer vectors     13h with biases (GPT: QKV 3h, proj h, MLP 4h+h, two LayerNorms 4h), 2h without (two RMSNorms)
//   embeddings            Vh input (+ s h learned positions for GPT) (+ Vh untied output head for Llama)
// For GPT (f = 4h, g = a, biases, tied embeddings, learned positions) this is
// Megatron's P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)) (Narayanan et al.
// SC'21, Eq. 2).
//
// FLOPs (2 per multiply-add), per token, forward:
//   per layer  2 x (active matmul parameters of the layer) + 4 s h   (QK^T and attention x V, no causal halving)
//   logits     2 h V
// backward = 2 x forward; full activation recompute adds one more forward of
// the transformer layers (not of the logits); selective recompute
// (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", §4.2) adds one more forward of the attention core only,
// A = 4 s h per token per layer (QK^T and attention x V). Per iteration (B
// sequences):
//   model FLOPs     3 (L + logits) B s                      (what MFU counts)
//   hardware FLOPs  3 (L + logits) B s + R B s              R = 0 (none), l A (selective), L (full)
// For GPT the hardware FLOPs with recompute are Megatron's
//   F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h))   (Eq. 3)
// and without recompute 72 B s l h^2 (1 + s/(6h)) + 6 B s h V.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/units.hpp"

namespace podnet::workload {

// Activation recompute: none; selective (the attention core only, whose
// activations are the 5 a s^2 b term; Korthikanti et al. 2022 §4.2); full
// (every layer's forward again in its backward, only the layer input kept).
enum class Recompute : uint8_t { None, Selective, Full };
inline const char* recompute_name(Recompute r) {
  switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    default: return "full";
  }
}
// A job's recompute mode. Converts from bool (true = full, false = none), the
// older on/off form some importers use.
struct RecomputeMode {
  Recompute mode = Recompute::Full;
  constexpr RecomputeMode() = default;
  constexpr RecomputeMode(Recompute m) : mode(m) {}                                       // NOLINT: implicit on purpose
  constexpr RecomputeMode(bool full) : mode(full ? Recompute::Full : Recompute::None) {}  // NOLINT
  constexpr bool operator==(Recompute m) const { return mode == m; }
  constexpr bool operator!=(Recompute m) const { return mode != m; }
};

struct ModelSpec {
  std::string name;         // registry name, e.g. "gpt3-175b"
  std::string description;  // with its source
  int64_t layers = 0;       // l
  int64_t hidden = 0;       // h
  int64_t heads = 0;        // a
  int64_t kv_heads = 0;     // g (= heads without GQA)
  int64_t ffn = 0;          // f: MLP inner width (per expert for MoE)
  int64_t vocab = 0;        // V
  int64_t seq = 0;          // s: training sequence length
  bool gated_mlp = false;   // SwiGLU (3 matrices) instead of GELU (2)
  bool biases = true;       // linear biases + LayerNorm (13h per layer) vs RMSNorm only (2h)
  bool tied_embeddings = true;
  bool learned_positions = true;
  int64_t experts = 1;  // E: MoE experts per layer (1 = dense)
  int64_t top_k = 1;    // experts each token uses
  bool dropout = true;  // dropout masks kept for backward (GPT); Llama and Mixtral train without dropout
  int64_t context = 0;  // the longest sequence the model serves (prompt + output; inference); 0 = seq
  int64_t max_context() const { return context > 0 ? context : seq; }

  bool moe() const { return experts > 1; }
  // Parameters of one layer: attention (+ its vectors), MLP (all experts), MLP active (top-k).
  double attention_params_per_layer() const;
  double mlp_params_per_layer() const;         // all experts + router
  double mlp_active_params_per_layer() const;  // top-k experts + router
  double vector_params_per_layer() const;      // biases and norms
  double embedding_params() const;             // input (+ positions) + untied head
  double params() const;                       // total
  double active_params() const;                // what one token uses (dense: = params())
  // Forward FLOPs per token of one transformer layer (2 x active matmul params + 4 s h) and of the logits (2 h V).
  double layer_forward_flops_per_token() const;
  double logits_forward_flops_per_token() const;
  // Per token, whole model, forward + backward (no recompute): what MFU counts.
  double model_flops_per_token() const;
  // Forward FLOPs per token of one layer's attention core, 4 s h (what selective recompute repeats).
  double attention_core_forward_flops_per_token() const;
  // Per token with `recompute` (none, the attention cores again, or the whole layers again): what the GPUs execute.
  double hardware_flops_per_token(RecomputeMode recompute) const;
  // Elements one layer's memory-bound (element-wise) kernels read and write per token, forward, for the whole
  // layer (no parallelism): `replicated` on the hidden width (split over TP only with sequence parallelism),
  // `split` on TP-sharded widths. The compute model in training.hpp states the terms.
  struct Elementwise {
    double replicated = 0;
    double split = 0;
  };
  Elementwise elementwise_elements_per_token() const;
  // FP8 training (workload.precision fp8): elements per token of one layer that are cast from BF16 to FP8
  // outside a fused kernel, forward (the inputs of the FP8 GEMMs) and backward (their output gradients), as
  // Megatron-Core's TransformerEngine layers do it; training.hpp states which and the bytes each moves.
  struct Fp8Casts {
    Elementwise forward, backward;
  };
  Fp8Casts fp8_cast_elements_per_token() const;
};

struct GpuSpec {
  std::string name;
  std::string description;    // with its source
  double peak_flops = 0;      // dense BF16 tensor FLOP/s
  double fp8_peak_flops = 0;  // dense FP8 tensor FLOP/s; 0 = no FP8 tensor cores
  Bytes hbm_bytes = 0;
  double hbm_bandwidth = 0;     // bytes/s
  double nvlink_bandwidth = 0;  // bytes/s per GPU per direction
  // Default achieved fraction of peak in compute kernels (workload.compute_efficiency unset), with its source.
  double compute_efficiency = 0.5;
  std::string efficiency_source;
  // Default achieved fraction of peak in the attention core (FlashAttention), counting the FLOPs a causal
  // kernel executes (half of 4 s h per token per layer forward), with its source.
  double attention_efficiency = 0.5;
  std::string attention_source;
  // Default share of the kernel model's speed a training step sustains (workload.sustained_fraction), and the
  // default fixed time per layer forward pass outside the modelled kernels (workload.layer_overhead, seconds;
  // a backward pays it twice), fitted to published end-to-end throughput (training.hpp), with their source.
  double sustained_fraction = 1;
  double layer_overhead = 0;
  std::string sustained_source;
  // Default achieved fraction of the FP8 peak in FP8 GEMMs (workload.fp8_efficiency unset), with its source.
  double fp8_efficiency = 0;
  std::string fp8_efficiency_source;
};

// A model preset's published training recipe: `workload:` keys in scenario syntax, grouped so that a group
// applies whole or not at all (a scenario that gives tp keeps its own layout, never half of the preset's).
// The scenario layer applies a group whose keys the scenario gives none of (workload.recipe: scenario, the
// default) or every group not given on the command line (workload.recipe: preset); the train report says
// which keys came from where.
struct RecipeGroup {
  std::string name;                                       // layout, memory, batch, budget
  std::vector<std::pair<std::string, std::string>> keys;  // workload key -> value
};
struct Recipe {
  std::string model;
  std::string source;  // who trained it so, and where it is published
  std::vector<RecipeGroup> groups;
};
// The groups a recipe may hold, each with every key it may set (recipes give a subset of the keys of a group
// they hold).
const std::vector<std::pair<std::string, std::vector<std::string>>>& recipe_groups();
const std::vector<Recipe>& recipes();
// nullptr if the model has no published recipe.
const Recipe* find_recipe(std::string_view model);

const std::vector<ModelSpec>& models();
const std::vector<GpuSpec>& gpus();
// nullptr if unknown.
const ModelSpec* find_model(std::string_view name);
// The shape keys of `m` that differ from its preset's (layers, hidden, ...), in key order; empty for a preset as
// it is or a model that is no preset.
std::vector<const char*> reshaped_fields(const ModelSpec& m);
const GpuSpec* find_gpu(std::string_view name);
std::vector<std::string> model_names();
std::vector<std::string> gpu_names();

}  // namespace podnet::workload
