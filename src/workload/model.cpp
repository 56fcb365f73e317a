#include "workload/model.hpp"

namespace podnet::workload {

double ModelSpec::attention_params_per_layer() const {
  const double h = static_cast<double>(hidden);
  const double kv_dim = h * static_cast<double>(kv_heads) / static_cast<double>(heads);
  return 2 * h * h + 2 * h * kv_dim;
}

double ModelSpec::mlp_params_per_layer() const {
  const double h = static_cast<double>(hidden);
  const double one = (gated_mlp ? 3.0 : 2.0) * h * static_cast<double>(ffn);
  return one * static_cast<double>(experts) + (moe() ? h * static_cast<double>(experts) : 0.0);
}

double ModelSpec::mlp_active_params_per_layer() const {
  const double h = static_cast<double>(hidden);
  const double one = (gated_mlp ? 3.0 : 2.0) * h * static_cast<double>(ffn);
  return one * static_cast<double>(moe() ? top_k : 1) + (moe() ? h * static_cast<double>(experts) : 0.0);
}

double ModelSpec::vector_params_per_layer() const { return (biases ? 13.0 : 2.0) * static_cast<double>(hidden); }

double ModelSpec::embedding_params() const {
  const double h = static_cast<double>(hidden), v = static_cast<double>(vocab);
  return v * h * (tied_embeddings ? 1.0 : 2.0) + (learned_positions ? static_cast<double>(seq) * h : 0.0);
}

double ModelSpec::params() const {
  return static_cast<double>(layers) *
             (attention_params_per_layer() + mlp_params_per_layer() + vector_params_per_layer()) +
         embedding_params();
}

double ModelSpec::active_params() const {
  return static_cast<double>(layers) *
             (attention_params_per_layer() + mlp_active_params_per_layer() + vector_params_per_layer()) +
         embedding_params();
}

double ModelSpec::layer_forward_flops_per_token() const {
  // Matmul parameters only (the vectors' FLOPs are negligible and Megatron's Eq. 3 omits them).
  return 2.0 * (attention_params_per_layer() + mlp_active_params_per_layer()) +
         4.0 * static_cast<double>(seq) * static_cast<double>(hidden);
}

double ModelSpec::logits_forward_flops_per_token() const {
  return 2.0 * static_cast<double>(hidden) * static_cast<double>(vocab);
}

double ModelSpec::model_flops_per_token() const {
  return 3.0 * (static_cast<double>(layers) * layer_forward_flops_per_token() + logits_forward_flops_per_token());
}

ModelSpec::Elementwise ModelSpec::elementwise_elements_per_token() const {
  const double h = static_cast<double>(hidden);
  const double h_kv = h * static_cast<double>(kv_heads) / static_cast<double>(heads);
  Elementwise e;
  // Two norms (read x, write y), two residual adds (read two, write one), and with dropout two dropouts
  // (read, write, a 1-byte mask: half an element of 2 bytes).
  e.replicated = 2 * 2 * h + 2 * 3 * h + (dropout ? 2 * 2.5 * h : 0.0);
  // The MLP's activation on each active expert (GELU: read, write; SwiGLU: read gate and up, write the
  // product), and rotary embeddings on the queries and keys (read, write) without learned positions.
  e.split = (gated_mlp ? 3.0 : 2.0) * static_cast<double>(ffn) * static_cast<double>(moe() ? top_k : 1) +
            (learned_positions ? 0.0 : 2 * (h + h_kv));
  return e;
}

ModelSpec::Fp8Casts ModelSpec::fp8_cast_elements_per_token() const {
  const double h = static_cast<double>(hidden);
  const double h_kv = h * static_cast<double>(kv_heads) / static_cast<double>(heads);
  const double f = static_cast<double>(ffn) * static_cast<double>(moe() ? top_k : 1);
  Fp8Casts c;
  // Forward: the QKV and first MLP GEMMs take their input from a LayerNorm fused with the cast
  // (TELayerNormColumnParallelLinear), so only the two row-parallel GEMMs cast theirs: the attention output
  // (h, TP-split) and the MLP activation (f per active expert, TP-split).
  c.forward.split = h + f;
  // Backward: each GEMM's output gradient arrives in BF16 and is cast: the attention projection's and the
  // second MLP GEMM's on the hidden width (h each, split over TP only with sequence parallelism), the QKV
  // GEMM's (h + 2 h_kv) and the first MLP GEMM's (2f gated, f) TP-split.
  c.backward.replicated = 2 * h;
  c.backward.split = h + 2 * h_kv + (gated_mlp ? 2.0 : 1.0) * f;
  return c;
}

double ModelSpec::attention_core_forward_flops_per_token() const {
  return 4.0 * static_cast<double>(seq) * static_cast<double>(hidden);
}

double ModelSpec::hardware_flops_per_token(RecomputeMode recompute) const {
  const double l = static_cast<double>(layers);
  const double again = recompute == Recompute::Full        ? l * layer_forward_flops_per_token()
                       : recompute == Recompute::Selective ? l * attention_core_forward_flops_per_token()
                                                           : 0.0;
  return model_flops_per_token() + again;
}

const std::vector<ModelSpec>& models() {
  // name, description, l, h, a, g, f, V, s, gated, biases, tied, learned positions, E, k, dropout, context
  static const std::vector<ModelSpec> k = {
      // Brown et al. 2020 (GPT-3) Table 2.1: 96 layers, d_model 12288, 96 heads of 128, context 2048;
      // vocabulary 50257 padded to 51200 as Megatron does (Narayanan et al. SC'21 §5.1). 174.6e9 parameters.
      {"gpt3-175b", "GPT-3 175B (Brown et al. 2020; Megatron's padded vocabulary 51200)", 96, 12288, 96, 96, 4 * 12288,
       51200, 2048, false, true, true, true, 1, 1, true, 2048},
      // Llama 3 (Dubey et al. 2024) Table 3: 32 layers, 4096, FFN 14336, 32 heads, 8 KV heads; vocabulary
      // 128256 (tokenizer config), pre-training context 8192; untied output head, RoPE, RMSNorm, no biases.
      // Context 131,072 tokens after the long-context stage (§3.4.2), as the released Llama 3.1 models serve.
      {"llama3-8b", "Llama 3 8B (Dubey et al. 2024, Table 3)", 32, 4096, 32, 8, 14336, 128256, 8192, true, false, false,
       false, 1, 1, false, 131072},
      {"llama3-70b", "Llama 3 70B (Dubey et al. 2024, Table 3)", 80, 8192, 64, 8, 28672, 128256, 8192, true, false,
       false, false, 1, 1, false, 131072},
      {"llama3-405b", "Llama 3 405B (Dubey et al. 2024, Table 3)", 126, 16384, 128, 8, 53248, 128256, 8192, true, false,
       false, false, 1, 1, false, 131072},
      // Jiang et al. 2024 (Mixtral of Experts) Table 1: dim 4096, 32 layers, 32 heads, 8 KV heads, hidden 14336,
      // vocabulary 32000, 8 experts, top-2; 46.7e9 parameters, 12.9e9 active. Sequence 4096 here (the model
      // serves 32k context, Jiang et al. §2; 4096 is a common pre-training length).
      {"mixtral-8x7b", "Mixtral 8x7B MoE, 8 experts top-2 (Jiang et al. 2024, Table 1)", 32, 4096, 32, 8, 14336, 32000,
       4096, true, false, false, false, 8, 2, false, 32768},
      // Nemotron-4 (Parmar et al. 2024, "Nemotron-4 15B Technical Report"; NVIDIA 2024, "Nemotron-4 340B
      // Technical Report"), as NVIDIA/NeMo configures them (nemo/collections/llm/gpt/model/nemotron.py,
      // Nemotron4Config15B / Nemotron4Config340B): 32 layers of 6144 with 48 heads / 96 layers of 18432 with 96
      // heads, 8 KV groups, MLP 4h with squared ReLU (2 matrices, not gated), vocabulary 256,000, sequence 4096,
      // untied output head, RoPE, no linear biases, no dropout. (Its LayerNorms' bias vectors, 2h per layer,
      // are not counted.) 15.6e9 and 341.0e9 parameters.
      {"nemotron4-15b", "Nemotron-4 15B (Parmar et al. 2024; NVIDIA/NeMo Nemotron4Config15B)", 32, 6144, 48, 8, 24576,
       256000, 4096, false, false, false, false, 1, 1, false},
      {"nemotron4-340b", "Nemotron-4 340B (NVIDIA 2024 technical report; NVIDIA/NeMo Nemotron4Config340B)", 96, 18432,
       96, 8, 73728, 256000, 4096, false, false, false, false, 1, 1, false},
  };
  return k;
}

const std::vector<std::pair<std::string, std::vector<std::string>>>& recipe_groups() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> k = {
      {"layout", {"tp", "pp", "cp", "ep", "interleave", "stage_layers", "rank_order"}},
      {"memory", {"recompute", "sequence_parallel", "tp_comm_overlap", "zero", "bytes_per_grad"}},
      {"batch", {"microbatch", "global_batch"}},
      {"budget", {"tokens"}},
  };
  return k;
}

const std::vector<Recipe>& recipes() {
  // Each recipe is what its source says the model was trained with. A key the source does not give is left
  // out (podnet's default then applies, and the train report says so). The data-parallel size is never part
  // of a recipe: it follows from the GPUs the job is given.
  //
  // NeMo's recipes: NVIDIA/dgxc-benchmarking at commit 741c886 (release 25.04, NeMo 25.02.01): llama3.1/
  // llama31_utils.py and NeMo's llama3_70b / llama31_405b performance recipes; nemotron/launch.sh and NeMo's
  // nemotron4 recipes: sequence parallelism, the distributed optimizer (ZeRO-1), TP communication overlapped,
  // no activation recompute, Megatron's rank order, layers split evenly. Their step times are podnet's
  // held-out training rows (docs/contributing/validation/training-throughput.md). Their batch grows with the GPU count
  // (2 x GPUs, 4 x GPUs), which a preset cannot hold, so it is left out. NeMo's performance recipes share their memory
  // settings; only the gradients' reduction width differs.
  const auto kNemoMemory = [](const char* bytes_per_grad) {
    return RecipeGroup{"memory",
                       {{"recompute", "none"},
                        {"sequence_parallel", "true"},
                        {"tp_comm_overlap", "true"},
                        {"zero", "1"},
                        {"bytes_per_grad", bytes_per_grad}}};
  };
  static const std::vector<Recipe> k = {
      {"gpt3-175b",
       "Brown et al. 2020, Table 2.1: 3.2M-token batches (1,536 sequences of 2,048, as Megatron-LM ran it), "
       "300B tokens",
       {{"batch", {{"global_batch", "1536"}}}, {"budget", {{"tokens", "300B"}}}}},
      {"llama3-8b",
       "NeMo's Llama 3.1 8B recipe (NVIDIA dgxc-benchmarking 25.04); 15T tokens (Dubey et al. 2024)",
       {{"layout",
         {{"tp", "1"},
          {"pp", "1"},
          {"cp", "2"},
          {"interleave", "1"},
          {"stage_layers", "even"},
          {"rank_order", "tp-cp-dp-pp"}}},
        {"memory", {{"recompute", "none"}, {"zero", "1"}, {"bytes_per_grad", "4"}}},
        {"batch", {{"microbatch", "1"}}},
        {"budget", {{"tokens", "15T"}}}}},
      {"llama3-70b",
       "NeMo's Llama 3.1 70B recipe (NVIDIA dgxc-benchmarking 25.04); 15T tokens (Dubey et al. 2024)",
       {{"layout",
         {{"tp", "4"},
          {"pp", "4"},
          {"cp", "2"},
          {"interleave", "5"},
          {"stage_layers", "even"},
          {"rank_order", "tp-cp-dp-pp"}}},
        kNemoMemory("4"),
        {"batch", {{"microbatch", "1"}}},
        {"budget", {{"tokens", "15T"}}}}},
      // Meta's own run (examples/aipod-16k.yaml states the derivation): Dubey et al. 2024, Table 4 and §3.3.2.
      {"llama3-405b",
       "Meta's pre-training (Dubey et al. 2024, Table 4 and section 3.3.2: TP8, PP16, interleaved, 2,048 x 8,192 "
       "tokens a step, 15T tokens); SP, ZeRO-1 and selective recompute to fit 80 GB",
       {{"layout",
         {{"tp", "8"},
          {"pp", "16"},
          {"cp", "1"},
          {"interleave", "8"},
          {"stage_layers", "auto"},
          {"rank_order", "tp-cp-pp-dp"}}},
        {"memory", {{"recompute", "selective"}, {"sequence_parallel", "true"}, {"zero", "1"}}},
        {"batch", {{"microbatch", "1"}, {"global_batch", "2048"}}},
        {"budget", {{"tokens", "15T"}}}}},
      {"nemotron4-15b",
       "NeMo's Nemotron-4 15B recipe (NVIDIA dgxc-benchmarking 25.04); 8T tokens (Parmar et al. 2024)",
       {{"layout",
         {{"tp", "2"}, {"pp", "1"}, {"interleave", "1"}, {"stage_layers", "even"}, {"rank_order", "tp-cp-dp-pp"}}},
        kNemoMemory("2"),
        {"batch", {{"microbatch", "2"}}},
        {"budget", {{"tokens", "8T"}}}}},
      {"nemotron4-340b",
       "NeMo's Nemotron-4 340B recipe (NVIDIA dgxc-benchmarking 25.04); 9T tokens (NVIDIA 2024 technical report)",
       {{"layout",
         {{"tp", "8"}, {"pp", "8"}, {"interleave", "12"}, {"stage_layers", "even"}, {"rank_order", "tp-cp-dp-pp"}}},
        kNemoMemory("2"),
        {"batch", {{"microbatch", "1"}}},
        {"budget", {{"tokens", "9T"}}}}},
  };
  return k;
}

const Recipe* find_recipe(std::string_view model) {
  for (const auto& r : recipes())
    if (r.model == model) return &r;
  return nullptr;
}

const std::vector<GpuSpec>& gpus() {
  // HBM: NVIDIA's datasheet "GB" of GPU memory are GiB. The "80GB" parts carry 80 GiB (5 HBM stacks of 16 GiB;
  // nvidia-smi shows 81,920 MiB on an A100 80GB and 81,559 MiB usable on an H100 SXM), the H200's "141GB"
  // shows as 143,771 MiB (140.4 GiB) and the B200's "180GB" as 183,359 MiB (179.1 GiB) in nvidia-smi's tables
  // posted in public issues; each is counted here as the datasheet's figure in GiB. Default compute efficiency: the
  // maximum achievable matmul FLOPS (MAMF) measured with BF16 inputs and no sparsity, as a fraction of the dense peak,
  // from the comparison table in stas00/ml-engineering compute/accelerator/README.md ("Maximum Achievable Matmul FLOPS
  // comparison table", measured with its benchmarks/mamf-finder.py, following Anthony et al. 2024, "The Case
  // for Co-Designing Model Architectures with Hardware"): A100 SXM 267.9 of 312 TFLOPS (85.9 %), H100 SXM
  // 794.5 of 989 (80.3 %), B200 SXM 1,745 of 2,250 (77.6 %). It is what a large transformer's GEMMs reach
  // on that GPU at their best shapes; podnet applies it to the GEMMs (the attention core and the
  // element-wise kernels have their own rates, training.hpp).
  //
  // Sustained fraction and layer overhead (training.hpp, "what a step sustains"): the kernel model above prices
  // each kernel at its best measured rate; a training step runs slower (clocks under a whole node's power
  // draw, SMs shared with the communication kernels it overlaps, launch gaps, small kernels not modelled).
  // Two constants, fitted by least squares on log(podnet / published) over Megatron-LM's published
  // single-stage runs (no pipeline: NVIDIA/Megatron-LM README, H100 table images/model_table.png at
  // f2e5db40, 1.7B-32B; A100 table images/cases_april2021.png at 50a4b5fa, 1.7B-18B): one sustained fraction
  // for both GPUs, and a per-layer overhead that the A100 rows put at 0 (their layers take over 1 ms) and the
  // H100 rows at 0.3 ms. The pipeline-parallel rows of both tables and Llama 3's runs are held out
  // (docs/contributing/validation/training-throughput.md has the fit and the held-out ratios).
  constexpr double kSustained = 0.83;
  constexpr double kLayerOverheadH100 = 0.40e-3;
  constexpr const char* kFitA100 =
      "fitted to Megatron-LM's A100 and H100 single-stage runs (NVIDIA/Megatron-LM README)";
  constexpr const char* kFitH100 = kFitA100;
  // FP8 GEMMs (workload.precision fp8): their achieved fraction of the dense FP8 peak, fitted by least squares on
  // log(podnet / published) over NeMo's published GPT-3 175B FP8 steps on 128, 256, 1,024 and 2,048 H100s
  // (NVIDIA/dgxc-benchmarking nemo_megatron/README_175b.md at commit 741c886, release 25.04; the 512-GPU row's
  // batch reads 1204 and is not used; rms 1.9 %), everything else as fitted on BF16 runs above. It stands for
  // what FP8 training loses beyond its casts (which training.hpp times): the FP8 GEMMs' own shortfall against
  // the BF16 MAMF fraction, scaling-factor bookkeeping, clocks under FP8's power draw. The Llama 3.1 and
  // Nemotron-4 FP8 steps are held out (docs/contributing/validation/training-throughput.md).
  constexpr double kFp8H100 = 0.635;
  constexpr const char* kFp8FitH100 = "fitted to NeMo's GPT-3 175B FP8 steps on H100 (NVIDIA/dgxc-benchmarking)";
  constexpr Bytes kGiB = 1024LL * 1024 * 1024;
  static const std::vector<GpuSpec> k = {
      // NVIDIA A100 datasheet (SXM 80GB): BF16 312 TFLOPS dense (624 with sparsity), HBM2e 2,039 GB/s,
      // NVLink 3 600 GB/s bidirectional = 300 GB/s per direction.
      {"a100", "NVIDIA A100 SXM 80GB: 312 TFLOPS BF16 dense, 2.0 TB/s HBM2e, NVLink 300 GB/s/dir", 312e12, 0, 80 * kGiB,
       2.039e12, 300e9, 0.859, "measured matmul peak 267.9 of 312 TFLOPS (stas00/ml-engineering)", 0.6,
       "FlashAttention-2 at 50-73 % of A100 peak, the middle taken (Dao 2023)", kSustained, 0.0, kFitA100},
      // NVIDIA H100 datasheet (SXM5): BF16 1,979 TFLOPS with sparsity = 989 dense, FP8 3,958 with sparsity =
      // 1,979 dense, HBM3 3.35 TB/s, NVLink 4 900 GB/s bidirectional.
      {"h100", "NVIDIA H100 SXM 80GB: 989 TFLOPS BF16 dense, 3.35 TB/s HBM3, NVLink 450 GB/s/dir", 989e12, 1979e12,
       80 * kGiB, 3.35e12, 450e9, 0.803, "measured matmul peak 794.5 of 989 TFLOPS (stas00/ml-engineering)", 0.332,
       "FlashAttention-2 327.9 of 989 TFLOPS, head dim 128, seq 8192 (Azure AI-benchmarking-guide, ND H100 v5)",
       kSustained, kLayerOverheadH100, kFitH100, kFp8H100, kFp8FitH100},
      // NVIDIA H200 datasheet (SXM): same compute as H100 (FP8 1,979 dense), 141 GB HBM3e at 4.8 TB/s, NVLink
      // 900 GB/s; the 141 GB are GiB (see above).
      {"h200", "NVIDIA H200 SXM 141GB: 989 TFLOPS BF16 dense, 4.8 TB/s HBM3e, NVLink 450 GB/s/dir", 989e12, 1979e12,
       141 * kGiB, 4.8e12, 450e9, 0.803, "matmul peak as H100 (same compute; stas00/ml-engineering)", 0.332,
       "FlashAttention-2 as H100 (same compute)", kSustained, kLayerOverheadH100, "as H100 (same compute)", kFp8H100,
       "as H100 (same compute)"},
      // NVIDIA HGX B200 datasheet: FP16/BF16 4.5 PFLOPS with sparsity = 2.25 dense per GPU, FP8 9 PFLOPS with
      // sparsity = 4.5 dense, 180 GB HBM3e at 7.7 TB/s, NVLink 5 1.8 TB/s bidirectional; the 180 GB are GiB
      // (see above).
      {"b200", "NVIDIA B200 (HGX): 2,250 TFLOPS BF16 dense, 7.7 TB/s HBM3e, NVLink 900 GB/s/dir", 2250e12, 4500e12,
       180 * kGiB, 7.7e12, 900e9, 0.776, "measured matmul peak 1,745 of 2,250 TFLOPS (stas00/ml-engineering)", 0.332,
       "an assumption: H100's FlashAttention-2 fraction (no public B200 figure used)", kSustained, kLayerOverheadH100,
       "an assumption: H100's (no Blackwell run fitted; 10-20 % optimistic against NeMo's published GB200 BF16 "
       "Llama 3.1 405B steps, docs/contributing/validation/training-throughput.md: calibrate)",
       0.776 * kFp8H100 / 0.803,
       "an assumption: B200's BF16 MAMF fraction x H100's FP8 / BF16 ratio (no Blackwell FP8 run fitted)"},
  };
  return k;
}

const ModelSpec* find_model(std::string_view name) {
  for (const auto& m : models())
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<const char*> reshaped_fields(const ModelSpec& m) {
  std::vector<const char*> changed;
  const ModelSpec* preset = find_model(m.name);
  if (!preset) return changed;
  const std::pair<const char*, bool> keys[] = {{"layers", m.layers != preset->layers},
                                               {"hidden", m.hidden != preset->hidden},
                                               {"heads", m.heads != preset->heads},
                                               {"kv_heads", m.kv_heads != preset->kv_heads},
                                               {"ffn", m.ffn != preset->ffn},
                                               {"vocab", m.vocab != preset->vocab},
                                               {"experts", m.experts != preset->experts},
                                               {"top_k", m.top_k != preset->top_k}};
  for (const auto& [k, differs] : keys)
    if (differs) changed.push_back(k);
  return changed;
}

const GpuSpec* find_gpu(std::string_view name) {
  for (const auto& g : gpus())
    if (g.name == name) return &g;
  return nullptr;
}

std::vector<std::string> model_names() {
  std::vector<std::string> v;
  for (const auto& m : models()) v.push_back(m.name);
  return v;
}

std::vector<std::string> gpu_names() {
  std::vector<std::string> v;
  for (const auto& g : gpus()) v.push_back(g.name);
  return v;
}

}  // namespace podnet::workload
