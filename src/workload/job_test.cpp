#include "workload/job.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "workload/training.hpp"

namespace podnet::workload {
namespace {

Params defaults() { return defaults_of(workload_params()); }

// Parameters of one Llama-style layer: attention 2 h^2 + 2 h h_kv, SwiGLU 3 h f, two RMSNorms 2 h.
double m_layer_params(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden),
               kv = h * static_cast<double>(m.kv_heads) / static_cast<double>(m.heads);
  return 2 * h * h + 2 * h * kv + 3 * h * static_cast<double>(m.ffn) + 2 * h;
}

template <typename T>
void set(Params& p, const std::string& key, T v) {
  if constexpr (std::is_same_v<T, bool>) p.set(key, v, v ? "true" : "false");
  else if constexpr (std::is_same_v<T, const char*>) p.set(key, std::string(v), v);
  else if constexpr (std::is_same_v<T, std::string>) p.set(key, v, v);
  else p.set(key, static_cast<int64_t>(v), std::to_string(v));
}

// Expects job_from to throw a ParamError naming `key`; returns its message ("" when none was thrown).
std::string expect_error(const Params& p, int64_t gpus, const std::string& key) {
  try {
    job_from(p, gpus);
    ADD_FAILURE() << "expected an error on " << key;
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), key) << e.what();
    return e.what();
  }
  return "";
}

TEST(Model, Gpt3ParametersMatchMegatronEq2) {
  // P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)) = 173,946,175,488 x 1.00385 = 174.6e9.
  const ModelSpec& m = *find_model("gpt3-175b");
  const double l = 96, h = 12288, V = 51200, s = 2048;
  const double p = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
  EXPECT_NEAR(m.params() / p, 1.0, 1e-12);
  EXPECT_NEAR(m.params() / 1e9, 174.6, 0.1);
}

TEST(Model, Gpt3FlopsMatchMegatronEq3) {
  // F / (B s) = 96 l h^2 (1 + s/(6h) + V/(16 l h)) with recompute = 1.434e12 FLOPs per token;
  // without: 72 l h^2 (1 + s/(6h)) + 6 h V.
  const ModelSpec& m = *find_model("gpt3-175b");
  const double l = 96, h = 12288, V = 51200, s = 2048;
  const double with = 96 * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  const double without = 72 * l * h * h * (1 + s / (6 * h)) + 6 * h * V;
  EXPECT_NEAR(m.hardware_flops_per_token(true) / with, 1.0, 1e-12);
  EXPECT_NEAR(m.hardware_flops_per_token(false) / without, 1.0, 1e-12);
  EXPECT_NEAR(m.model_flops_per_token(), without, 1.0);
  EXPECT_NEAR(with / 1e12, 1.434, 0.001);
}

TEST(Model, LlamaAndMixtralSizes) {
  // Llama 3 405B: 126 x (2h^2 + 2h x 1024 + 3h x 53248 + 2h) + 2 V h = 405.8e9 (the paper's "405B").
  EXPECT_NEAR(find_model("llama3-405b")->params() / 1e9, 405.8, 0.5);
  EXPECT_NEAR(find_model("llama3-70b")->params() / 1e9, 70.6, 0.5);
  EXPECT_NEAR(find_model("llama3-8b")->params() / 1e9, 8.0, 0.1);
  // Mixtral 8x7B: 46.7e9 total, 12.9e9 active (Jiang et al. 2024).
  EXPECT_NEAR(find_model("mixtral-8x7b")->params() / 1e9, 46.7, 0.1);
  EXPECT_NEAR(find_model("mixtral-8x7b")->active_params() / 1e9, 12.9, 0.1);
  // Nemotron-4 15B: per layer h (h + 2 x 1024) + h^2 + 2 h x 4h = 50.33e6 + 37.75e6 + 301.99e6 = 390.07e6 (+ 2h
  // of norms), x 32 = 12.48e9, + 2 V h = 3.15e9 untied: 15.6e9 (the report's 12.5e9 non-embedding and 3.2e9
  // embedding parameters). 340B: h_kv = 8 x 192 = 1536; per layer 18432 x 21504 + 18432^2 + 2 x 18432 x 73728 =
  // 396.36e6 + 339.74e6 + 2717.91e6 = 3454.0e6, x 96 = 331.58e9, + 2 x 256000 x 18432 = 9.44e9: 341.0e9.
  EXPECT_NEAR(find_model("nemotron4-15b")->params() / 1e9, 15.63, 0.02);
  EXPECT_NEAR(find_model("nemotron4-340b")->params() / 1e9, 341.0, 0.1);
}

TEST(Model, DaysToTrainGpt3OnA100MatchesMegatron) {
  // Narayanan et al. SC'21: GPT-3 175B, 1024 A100 at 140 TFLOP/s per GPU (45 % of 312), 300B tokens: 34 days.
  // Exact Eq. 3 per token: 300e9 x 1.434e12 / (1024 x 140e12) = 3.0008e6 s = 34.7 days (their Eq. 4,
  // 8 T P / (n X), rounds to 33.8). Tolerance: 34 +- 1.5 days.
  const double days = days_to_train(*find_model("gpt3-175b"), true, 300e9, 1024, 140e12);
  EXPECT_NEAR(days, 34.0, 1.5);
  EXPECT_NEAR(days, 34.73, 0.01);
}

TEST(Job, DefaultsAreGpt3OnH100WithAutoDp) {
  // 16,384 GPUs / (8 x 8) = 256, and 1536 / 256 = 6 microbatches per pipeline.
  const Job j = job_from(defaults(), 16384);
  EXPECT_EQ(j.model.name, "gpt3-175b");
  EXPECT_EQ(j.gpu.name, "h100");
  EXPECT_EQ(j.dp, 256);
  EXPECT_EQ(j.microbatches(), 6);
  EXPECT_EQ(j.gpus(), 16384);
  EXPECT_DOUBLE_EQ(j.tokens, 300e9);
  // Auto bucket: max(40M, 1M x 256) = 256M parameters.
  EXPECT_EQ(j.dp_bucket_params(), 256'000'000);
}

TEST(Job, AutoDpDividesTheBatch) {
  // 1000 GPUs / 64 = 15 replicas at most; 1536 = 2^9 x 3, so the largest divisor <= 15 is 12.
  EXPECT_EQ(job_from(defaults(), 1000).dp, 12);
}

TEST(Job, GroupCountsTp8Pp4Dp3) {
  // 96 GPUs: TP p d = 12 groups of 8, PP t d = 24 groups of 4, DP t p = 32 groups of 3.
  Params p = defaults();
  set(p, "pp", 4);
  set(p, "dp", 3);
  set(p, "global_batch", 24);
  const Job j = job_from(p, 96);
  const GroupCounts g = group_counts(j);
  EXPECT_EQ(g.tp_groups, 12);
  EXPECT_EQ(g.tp_size, 8);
  EXPECT_EQ(g.pp_groups, 24);
  EXPECT_EQ(g.pp_size, 4);
  EXPECT_EQ(g.dp_groups, 32);
  EXPECT_EQ(g.dp_size, 3);
  EXPECT_EQ(g.ep_groups, 0);
  // Megatron order: rank = tp + 8 (dp + 3 pp).
  EXPECT_EQ(dp_group(j, 1, 2), (std::vector<int64_t>{49, 57, 65}));
  EXPECT_EQ(tp_group(j, 2, 0).front(), 16);
  EXPECT_EQ(pp_group(j, 0, 1), (std::vector<int64_t>{8, 32, 56, 80}));
}

TEST(Job, PipelineInnerRankOrderTp8Pp4Dp3) {
  // rank_order tp-cp-pp-dp (Llama 3's [TP, CP, PP, DP]): rank = tp + 8 (pp + 4 dp).
  Params p = defaults();
  set(p, "pp", 4);
  set(p, "dp", 3);
  set(p, "global_batch", 24);
  set(p, "rank_order", "tp-cp-pp-dp");
  const Job j = job_from(p, 96);
  // DP group of tp 1, stage 2: 1 + 8 (2 + 4 d) for d = 0, 1, 2 -> 17, 49, 81.
  EXPECT_EQ(dp_group(j, 1, 2), (std::vector<int64_t>{17, 49, 81}));
  // PP group of tp 0, replica 1: 8 (s + 4) for s = 0..3 -> 32, 40, 48, 56: one pipeline, 4 servers in a row.
  EXPECT_EQ(pp_group(j, 0, 1), (std::vector<int64_t>{32, 40, 48, 56}));
  EXPECT_EQ(tp_group(j, 2, 0).front(), 64);  // replica 2, stage 0: 8 (0 + 4 x 2)
  EXPECT_EQ(tp_group(j, 0, 2).front(), 16);  // replica 0, stage 2: 8 (2 + 0)
  // Every rank once: the layout is a permutation of 0..95.
  std::vector<int64_t> all;
  for (int64_t s = 0; s < 4; ++s)
    for (int64_t d = 0; d < 3; ++d)
      for (int64_t t = 0; t < 8; ++t) all.push_back(j.rank(t, d, s));
  std::sort(all.begin(), all.end());
  for (int64_t r = 0; r < 96; ++r) EXPECT_EQ(all[static_cast<size_t>(r)], r);
}

TEST(Job, MoeGroups) {
  // Mixtral, TP2 PP4 DP16 EP8 on 128 GPUs: EP groups t p d / ep = 16 of 8; EDP t p ep = 64 of 2.
  Params p = defaults();
  set(p, "model", "mixtral-8x7b");
  set(p, "tp", 2);
  set(p, "pp", 4);
  set(p, "dp", 16);
  set(p, "ep", 8);
  set(p, "global_batch", 64);
  const Job j = job_from(p, 128);
  const GroupCounts g = group_counts(j);
  EXPECT_EQ(g.ep_groups, 16);
  EXPECT_EQ(g.ep_size, 8);
  EXPECT_EQ(g.edp_groups, 64);
  EXPECT_EQ(g.edp_size, 2);
  // EP group of (tp 1, edp 1, pp 0): dp ranks 8..15 -> ranks 1 + 2 dp.
  EXPECT_EQ(ep_group(j, 1, 1, 0), (std::vector<int64_t>{17, 19, 21, 23, 25, 27, 29, 31}));
  EXPECT_EQ(edp_group(j, 0, 3, 0), (std::vector<int64_t>{6, 22}));
}

TEST(Job, VolumesMatchMegatronFormulas) {
  // l 4, h 1024, a 16, s 512, V 1000, t 2, p 2, d 2, b 1, B 8 -> m = 4; e = 2 bytes.
  // b s h e = 512 x 1024 x 2 = 1 MiB.
  Params p = defaults();
  set(p, "layers", 4);
  set(p, "hidden", 1024);
  set(p, "heads", 16);
  set(p, "seq", 512);
  set(p, "vocab", 1000);
  set(p, "tp", 2);
  set(p, "pp", 2);
  set(p, "dp", 2);
  set(p, "global_batch", 8);
  set(p, "recompute", "none");
  Job j = job_from(p, 8);
  Volumes v = volumes(j);
  EXPECT_EQ(v.tp_allreduce_bytes, 1 << 20);
  // TP: 8 b s h (t-1)/t elements per layer per microbatch = 4 all-reduces x 2(t-1)/t x 1 MiB = 4 MiB;
  // x l/p = 2 layers x m = 4 microbatches = 32 MiB per GPU.
  EXPECT_DOUBLE_EQ(v.tp_bytes_per_gpu, 32.0 * (1 << 20));
  // PP: b s h e per microbatch per direction, / t per GPU: 2 directions x 4 x 0.5 MiB = 4 MiB.
  EXPECT_EQ(v.pp_p2p_bytes, 1 << 20);
  EXPECT_DOUBLE_EQ(v.pp_bytes_per_gpu, 4.0 * (1 << 20));
  // DP: P = 12 l h^2 + 13 l h + (V + s) h = 50,331,648 + 53,248 + 1,548,288 = 51,933,184; the last stage
  // also holds the tied embedding's copy (V h = 1,024,000), so per GPU on average (P + V h)/(t p) = 13,239,296
  // parameters x 2 bytes = 26,478,592; ring traffic 2(d-1)/d = 1 x that.
  EXPECT_DOUBLE_EQ(v.dp_grad_bytes_per_gpu, 26478592.0);
  EXPECT_DOUBLE_EQ(v.dp_bytes_per_gpu, 26478592.0);
  // Recompute repeats the forward's 2 all-reduces: 6 per layer -> 48 MiB.
  j.recompute = true;
  EXPECT_DOUBLE_EQ(volumes(j).tp_bytes_per_gpu, 48.0 * (1 << 20));
  // ZeRO-3: 1.5x the DP volume.
  j.zero = 3;
  EXPECT_DOUBLE_EQ(volumes(j).dp_bytes_per_gpu, 1.5 * 26478592.0);
}

TEST(Job, StageParamsSumToTheModel) {
  // Over all stages, per-GPU parameters x t add up to P + V h (the tied copy on the last stage).
  const Job j = job_from(defaults(), 16384);
  double sum = 0;
  for (int64_t s = 0; s < j.pp; ++s) sum += stage_params(j, s).total() * static_cast<double>(j.tp);
  EXPECT_NEAR(sum / (j.model.params() + 51200.0 * 12288.0), 1.0, 1e-12);
}

TEST(Job, Fp8NeedsFp8TensorCores) {
  // The A100 has no FP8 tensor cores: precision fp8 is refused, naming the key; the H100 takes it with its FP8
  // preset efficiency, and an explicit workload.fp8_efficiency overrides that.
  {
    Params p = defaults();
    set(p, "gpu", std::string("a100"));
    set(p, "precision", std::string("fp8"));
    expect_error(p, 16384, "workload.precision");
  }
  Params p = defaults();
  set(p, "precision", std::string("fp8"));
  const Job j = job_from(p, 16384);
  EXPECT_EQ(j.precision, Precision::Fp8);
  EXPECT_DOUBLE_EQ(j.gpu.fp8_peak_flops, 1979e12);
  EXPECT_DOUBLE_EQ(j.fp8_efficiency, find_gpu("h100")->fp8_efficiency);
  p.set("fp8_efficiency", 0.5, "0.5");
  EXPECT_DOUBLE_EQ(job_from(p, 16384).fp8_efficiency, 0.5);
  EXPECT_EQ(job_from(defaults(), 16384).precision, Precision::Bf16);
}

TEST(Job, ValidationNamesTheKey) {
  {
    Params p = defaults();
    set(p, "tp", 5);  // 96 heads % 5 != 0
    expect_error(p, 16384, "workload.tp");
  }
  {
    Params p = defaults();
    set(p, "pp", 7);  // 96 layers % 7 != 0
    expect_error(p, 16384, "workload.pp");
  }
  {
    Params p = defaults();
    set(p, "dp", 100);  // 1536 % 100 != 0
    expect_error(p, 16384, "workload.global_batch");
    // With the batches that would divide: multiples of 1 x 100 either side of 1,536.
    try {
      (void)job_from(p, 16384);
    } catch (const ParamError& e) {
      EXPECT_NE(std::string(e.what()).find("nearest: 1,500 or 1,600"), std::string::npos) << e.what();
    }
  }
  {
    Params p = defaults();
    set(p, "dp", 512);  // 8 x 8 x 512 = 32,768 > 16,384
    expect_error(p, 16384, "workload.dp");
  }
  {
    Params p = defaults();
    set(p, "ep", 2);  // GPT-3 is dense
    expect_error(p, 16384, "workload.ep");
  }
  {
    Params p = defaults();
    set(p, "interleave", 5);  // 96 % (8 x 5) != 0
    expect_error(p, 16384, "workload.interleave");
  }
  {
    Params p = defaults();
    set(p, "interleave", 2);  // dp given 256: m = 1,536 / 256 = 6, not divisible by pp 8
    set(p, "dp", 256);
    expect_error(p, 16384, "workload.interleave");
  }
  {
    // dp left out: the interleaved schedule needs m divisible by pp 8. 16,384 / (TP8 x PP8) = 256 replicas fit,
    // but 1,536 / 256 = 6; the next divisor of 1,536 down, 192, gives m = 8. So auto DP is 192, not 256.
    Params p = defaults();
    set(p, "interleave", 2);
    const Job j = job_from(p, 16384);
    EXPECT_EQ(j.dp, 192);
    EXPECT_EQ(j.microbatches(), 8);
  }
  {
    Params p = defaults();
    set(p, "tokens", "lots");
    expect_error(p, 16384, "workload.tokens");
  }
  {
    Params p = defaults();
    EXPECT_EQ(job_from(p, 16384).step_overhead, 0);  // none by default
    p.set("step_overhead", Time::from_seconds(1.4), "1.4s");
    EXPECT_DOUBLE_EQ(job_from(p, 16384).step_overhead, 1.4);
    p.set("step_overhead", Time::from_seconds(-1), "-1s");  // a cost cannot be negative
    expect_error(p, 16384, "workload.step_overhead");
  }
  {
    Params p = defaults();
    set(p, "model", "llama3-70b");
    set(p, "tp", 16);  // 8 KV heads
    set(p, "pp", 4);
    expect_error(p, 16384, "workload.tp");
  }
}

// The small GPT of VolumesMatchMegatronFormulas: l 4, h 1024, a 16, f 4096, s 512, V 1000, t 2, p 2, d 2, b 1,
// B 8 (m = 4), 2-byte weights, activations and gradients.
Params small_gpt() {
  Params p = defaults();
  set(p, "layers", 4);
  set(p, "hidden", 1024);
  set(p, "heads", 16);
  set(p, "seq", 512);
  set(p, "vocab", 1000);
  set(p, "tp", 2);
  set(p, "pp", 2);
  set(p, "dp", 2);
  set(p, "global_batch", 8);
  set(p, "recompute", "none");
  return p;
}

TEST(Memory, SmallGptByHand) {
  // FlashAttention (the default) keeps no s x s tensor, only a 4-byte softmax statistic per head and token:
  // s b h (10 + 24/t) + 4 a s b / t = 22 x 524,288 + 4 x 16 x 512 / 2 = 11,534,336 + 16,384 = 11,550,720.
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(job_from(small_gpt(), 8)), 11550720.0);
  {
    // workload.dropout=false (the GPT preset has dropout): no masks, 2 s b h fewer bytes (one byte per element
    // for each of the two dropouts), 11,550,720 - 1,048,576 = 10,502,144.
    auto q = small_gpt();
    set(q, "dropout", false);
    EXPECT_DOUBLE_EQ(activation_bytes_per_layer(job_from(q, 8)), 10502144.0);
  }
  {
    // MoE, 4 experts, top-2 (GELU MLP, f = 4h = 4,096, s b = 512): the MLP row 4 s b f / t = 4,194,304 counts twice
    // (+4,194,304), and the 2 dispatched copies of each token, 2 k s b h = 2,097,152, are replicated on the TP
    // ranks (no SP): 11,550,720 + 4,194,304 + 2,097,152 = 17,842,176. Top-1: + 0 + 1,048,576 = 12,599,296.
    auto q = small_gpt();
    set(q, "experts", 4);
    set(q, "top_k", 2);
    EXPECT_DOUBLE_EQ(activation_bytes_per_layer(job_from(q, 8)), 17842176.0);
    set(q, "top_k", 1);
    EXPECT_DOUBLE_EQ(activation_bytes_per_layer(job_from(q, 8)), 12599296.0);
  }
  {
    // 4-byte activations (workload.bytes_per_param=4): every tensor of the 2-byte figures doubles, the two
    // dropout masks (1 byte an element, 2 s b h = 1,048,576) and FlashAttention's fp32 statistic (16,384) do
    // not: (11,550,720 - 1,048,576 - 16,384) x 2 + 1,048,576 + 16,384 = 20,971,520 + 1,064,960 = 22,036,480.
    // (Until 2026-11 the activations stayed at 2 bytes whatever bytes_per_param said.)
    auto q = small_gpt();
    set(q, "bytes_per_param", 4);
    EXPECT_DOUBLE_EQ(activation_bytes_per_layer(job_from(q, 8)), 22036480.0);
  }
  auto p = small_gpt();
  set(p, "flash_attention", false);
  Job j = job_from(p, 8);
  // Unfused attention, Korthikanti et al. 2022 Eq. 2: s b h (10 + 24/t + 5 a s/(h t)) with s b h = 512 x 1024
  // = 524,288: 10 + 12 + 5 x 16 x 512 / 2048 = 20 -> 42 x 524,288 = 22,020,096 bytes.
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(j), 22020096.0);
  {
    // The same at 4 bytes: the masks (2 s b h, and the attention's a s^2 b / t = 1 x 16 x 512 x 512 / 2 =
    // 2,097,152) stay, the rest doubles: (22,020,096 - 1,048,576 - 2,097,152) x 2 + 3,145,728 = 40,894,464.
    auto q = p;
    set(q, "bytes_per_param", 4);
    EXPECT_DOUBLE_EQ(activation_bytes_per_layer(job_from(q, 8)), 40894464.0);
  }
  // Stage 0 (1F1B): min(p - 0, m) = 2 microbatches in flight x 2 layers = 88,080,384 bytes.
  // Its parameters per GPU: 2 layers x (12 h^2 + 13 h) / t + (V + s) h / t = 12,596,224 + 774,144 = 13,370,368;
  // weights 2 B and gradients 2 B each 26,740,736; Adam states 12 B = 160,444,416; buffers 1 GiB.
  const Memory m0 = memory_of_stage(j, 0);
  EXPECT_DOUBLE_EQ(m0.inflight_microbatches, 2.0);
  EXPECT_DOUBLE_EQ(m0.activations, 88080384.0);
  EXPECT_DOUBLE_EQ(m0.weights, 26740736.0);
  EXPECT_DOUBLE_EQ(m0.gradients, 26740736.0);
  EXPECT_DOUBLE_EQ(m0.optimizer, 160444416.0);
  EXPECT_DOUBLE_EQ(m0.buffers, 1073741824.0);
  EXPECT_DOUBLE_EQ(m0.total(), 1375748096.0);
  // Stage 1: 1 microbatch x 2 layers = 44,040,192 + logits s b V (2 + 4) / t = 1,536,000; parameters
  // 12,596,224 + V h / t (the tied head's copy) = 13,108,224 x 16 bytes = 209,731,584. Total 1,329,049,600:
  // stage 0 is the peak.
  const Memory m1 = memory_of_stage(j, 1);
  EXPECT_DOUBLE_EQ(m1.activations, 45576192.0);
  EXPECT_DOUBLE_EQ(m1.total(), 1329049600.0);
  EXPECT_EQ(peak_memory(j).stage, 0);
  // Sequence parallelism + selective recompute: 34 s b h / t = 17 x 524,288 = 8,912,896 (Korthikanti Eq. 5).
  j.sequence_parallel = true;
  j.recompute = Recompute::Selective;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(j), 8912896.0);
  // Full recompute keeps the layer input, 2 s b h / t with SP = 524,288; without SP 1,048,576.
  j.recompute = Recompute::Full;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(j), 524288.0);
  j.sequence_parallel = false;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(j), 1048576.0);
  // ZeRO-1 shards the Adam states over d = 2: 80,222,208; ZeRO-2 the gradients too: 13,370,368; ZeRO-3 the weights.
  j.zero = 1;
  EXPECT_DOUBLE_EQ(memory_of_stage(j, 0).optimizer, 80222208.0);
  EXPECT_DOUBLE_EQ(memory_of_stage(j, 0).gradients, 26740736.0);
  j.zero = 2;
  EXPECT_DOUBLE_EQ(memory_of_stage(j, 0).gradients, 13370368.0);
  EXPECT_DOUBLE_EQ(memory_of_stage(j, 0).weights, 26740736.0);
  j.zero = 3;
  EXPECT_DOUBLE_EQ(memory_of_stage(j, 0).weights, 13370368.0);
}

TEST(Memory, InterleavedInFlightMatchesKorthikanti) {
  // p = 2, v = 2, m = 4: the first stage holds p (1 + (p-1)/(p v)) = 2.5 microbatches' worth of its layers
  // (Korthikanti §4.2.3); from the schedule: warm-up (p-1) 2 + (v-1) p = 4 chunks + 1 = 5 chunks of l/(p v).
  Params p = small_gpt();
  set(p, "interleave", 2);
  const Job j = job_from(p, 8);
  EXPECT_DOUBLE_EQ(memory_of_stage(j, 0).inflight_microbatches, 2.5);
  // The last stage: warm-up (v-1) p = 2 chunks + 1 = 3 chunks = 1.5 microbatches.
  EXPECT_DOUBLE_EQ(memory_of_stage(j, 1).inflight_microbatches, 1.5);
}

TEST(Memory, Llama405bOnOneGpuDoesNotFitAndSaysWhy) {
  // 405.8e9 parameters x 16 bytes = 6.5 TB on one 80 GiB H100: refused, naming the keys to change.
  Params p = defaults();
  set(p, "model", "llama3-405b");
  set(p, "tp", 1);
  set(p, "pp", 1);
  set(p, "dp", 1);
  set(p, "global_batch", 1);
  const Job j = job_from(p, 8);
  EXPECT_GT(peak_memory(j).total(), 6.4e12);
  try {
    check_memory(j);
    ADD_FAILURE() << "expected an out-of-memory error";
  } catch (const ParamError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("workload.tp/pp"), std::string::npos) << what;
    EXPECT_NE(what.find("h100 has 85.9 GB"), std::string::npos) << what;
    EXPECT_NE(what.find("--allow-oom"), std::string::npos) << what;
  }
}

TEST(Memory, TheHintOffersZeroOnlyWhenItHelps) {
  // Llama 3 70B at TP8 PP1 DP8, ZeRO 0: 70.6e9 / 8 = 8.8e9 parameters a GPU, Adam states 12 B each = 106 GB of
  // the total; ZeRO-1 shards 7/8 of them (-92.6 GB): offered, with its saving.
  Params p = defaults();
  set(p, "model", "llama3-70b");
  set(p, "tp", 8);
  set(p, "pp", 1);
  set(p, "interleave", 1);
  set(p, "dp", 8);
  set(p, "global_batch", 8);
  set(p, "zero", 0);
  const auto hint = [](const Job& j) {
    try {
      check_memory(j);
    } catch (const ParamError& e) {
      return std::string(e.what());
    }
    return std::string("fits");
  };
  std::string what = hint(job_from(p, 64));
  EXPECT_NE(what.find("set workload.zero=1 (distributed optimizer, -9"), std::string::npos) << what;
  // The same at ZeRO 1 without SP and with 8 microbatches of 8 sequences: activations dominate; ZeRO-2 would save
  // the gradients' 7/8 (2 B x 8.8e9 x 7/8 = 15.4 GB), less than a quarter of the gap: not offered.
  set(p, "zero", 1);
  set(p, "sequence_parallel", false);
  set(p, "microbatch", 8);
  set(p, "global_batch", 512);
  set(p, "recompute", "none");
  what = hint(job_from(p, 64));
  EXPECT_EQ(what.find("workload.zero"), std::string::npos) << what;
  EXPECT_NE(what.find("lower workload.microbatch"), std::string::npos) << what;
}

TEST(StageSplit, AutoBalancesTheLmHead) {
  // Costs in units of a layer. A head of 0.61 layer on 16 stages of 126 layers: the smallest feasible maximum
  // is 8 layers (below 8 every stage holds at most 7: 16 x 7 = 112 < 126); at T = 8 the last stage fits only
  // floor(8 - 0.61) = 7,
  // 15 x 8 + 7 = 127 = l + 1, and the surplus layer comes off the first stage: [7, 8 x 14, 7] (Llama 3 405B's
  // split, its paper's §3.3.2).
  std::vector<int64_t> want(16, 8);
  want.front() = want.back() = 7;
  EXPECT_EQ(auto_stage_split(126, 16, 1, 1.0, 0.61), want);
  // 128 virtual stages (v = 8): one layer each, the first holding only the embedding, the last only the head.
  const auto v8 = auto_stage_split(126, 16, 8, 1.0, 0.61);
  ASSERT_EQ(v8.size(), 128u);
  EXPECT_EQ(v8.front(), 0);
  EXPECT_EQ(v8.back(), 0);
  for (size_t k = 1; k + 1 < v8.size(); ++k) EXPECT_EQ(v8[k], 1) << k;
  // 96 layers on 8 stages, the head 0.34 of a layer: [12 x 8] costs 12.34 at most and no split does better
  // (96 / 8 = 12, and the last stage must hold its share): even.
  EXPECT_EQ(auto_stage_split(96, 8, 1, 1.0, 0.34), std::vector<int64_t>(8, 12));
  // 32 layers on 2 stages: a head under one layer leaves them even (T = 16 + h holds 16 + 16); a head of 2.24
  // layers (Llama 3 8B's FLOPs at sequence 2048: 2 h V = 2 x 4096 x 128256 = 1.051e9 against a layer's
  // 2 (2.5 h^2 + 3 h f) + 4 s h = 2 (41.9e6 + 176.2e6) + 33.6e6 = 0.470e9) moves two layers: T = 15 + 2.24
  // holds floor(17.24) + 15 = 17 + 15 (T = 17 only 17 + 14).
  EXPECT_EQ(auto_stage_split(32, 2, 1, 1.0, 0.5), (std::vector<int64_t>{16, 16}));
  EXPECT_EQ(auto_stage_split(32, 2, 1, 1.0, 2.24), (std::vector<int64_t>{17, 15}));
  // A layer of no cost (no tokens on a CP rank, refused after the split) balances the counts: 10 layers on 3
  // stages, T = 4 holds 4 + 4 + 4 = 12, 2 taken back from the earliest: [3, 3, 4]. It looped forever (0 / 0).
  EXPECT_EQ(auto_stage_split(10, 3, 1, 0.0, 0.0), (std::vector<int64_t>{3, 3, 4}));
}

TEST(StageSplit, AutoBalancesTheComputeModelsTimeNotFlops) {
  // Llama 3 8B at TP8 on 2 stages, sequence 2048: the LM head is 2.24 layers of FLOPs, but less time (a
  // layer's attention core runs at FlashAttention's rate, its element-wise kernels at HBM bandwidth, and it
  // pays the fixed overhead per pass). Balanced by FLOPs (until 2026-11) the split was [17, 15] and the
  // iteration 2 % slower than even; by the compute model's time it is even.
  Params p = defaults();
  set(p, "model", "llama3-8b");
  set(p, "tp", 8);
  set(p, "pp", 2);
  set(p, "dp", 4);
  set(p, "global_batch", 32);
  set(p, "seq", 2048);
  p.set("stage_layers", std::string("auto"), "auto");
  const Job j = job_from(p, 64);
  EXPECT_GT(j.model.logits_forward_flops_per_token(), j.model.layer_forward_flops_per_token());
  EXPECT_LT(head_compute_seconds(j), layer_compute_seconds(j));
  EXPECT_TRUE(j.chunk_layers.empty());  // even
  EXPECT_EQ(j.stage_layers(0), 16);
  EXPECT_EQ(j.stage_layers(1), 16);
}

TEST(StageSplit, ExplicitListAndErrors) {
  Params p = defaults();
  set(p, "model", "llama3-405b");
  set(p, "pp", 4);
  set(p, "global_batch", 2048);
  p.set("stage_layers", std::vector<int64_t>{31, 32, 32, 31}, "[31, 32, 32, 31]");
  Job j = job_from(p, 16384);
  EXPECT_EQ(j.stage_layers(0), 31);
  EXPECT_EQ(j.stage_layers(1), 32);
  EXPECT_EQ(j.stage_layers(3), 31);
  // Stage 0 holds 31 layers + the embedding: parameters per GPU (31 x layer + V h) / t.
  const double layer = m_layer_params(j.model);
  EXPECT_DOUBLE_EQ(stage_params(j, 0).total(), (31 * layer + 128256.0 * 16384.0) / 8.0);
  p.set("stage_layers", std::vector<int64_t>{31, 32, 32, 30}, "[31, 32, 32, 30]");  // 125 layers
  expect_error(p, 16384, "workload.stage_layers");
  p.set("stage_layers", std::vector<int64_t>{63, 63}, "[63, 63]");  // 2 counts for 4 stages
  expect_error(p, 16384, "workload.stage_layers");
  // 126 layers on 4 stages without a split: the even split is refused, naming pp.
  p.set("stage_layers", std::string("even"), "even");
  expect_error(p, 16384, "workload.pp");
}

TEST(Job, ContextParallelVolumes) {
  // Llama-style: l 4, h 1024, a 16, g 4 (h_kv = 256), s 1024, c 4, t 2, p 1, d 1, b 1, B 2 (m = 2), no recompute.
  // Each CP rank holds s/c = 256 tokens; its key/value block per GPU: 2 b (s/c) h_kv e / t = 2 x 256 x 256 x 2 / 2
  // = 131,072 bytes, passed (c-1) = 3 times forward and 6 times backward (the blocks and their gradients):
  // 9 steps per layer x 4 layers x 2 microbatches x 131,072 = 9,437,184 bytes per GPU per iteration.
  Params p = defaults();
  set(p, "model", "llama3-8b");
  set(p, "layers", 4);
  set(p, "hidden", 1024);
  set(p, "heads", 16);
  set(p, "kv_heads", 4);
  set(p, "ffn", 4096);
  set(p, "seq", 1024);
  set(p, "vocab", 1000);
  set(p, "tp", 2);
  set(p, "cp", 4);
  set(p, "pp", 1);
  set(p, "dp", 1);
  set(p, "global_batch", 2);
  set(p, "recompute", "none");
  Job j = job_from(p, 8);
  EXPECT_EQ(j.gpus(), 8);
  const Volumes v = volumes(j);
  EXPECT_EQ(v.cp_kv_bytes, 131072);
  EXPECT_EQ(v.cp_kv_steps_per_layer, 9);
  EXPECT_DOUBLE_EQ(v.cp_bytes_per_gpu, 9437184.0);
  // TP messages carry the CP rank's tokens: b (s/c) h e = 256 x 1024 x 2 = 524,288 bytes.
  EXPECT_EQ(v.tp_allreduce_bytes, 524288);
  // Full recompute repeats the forward's exchange: 12 steps per layer.
  j.recompute = Recompute::Full;
  EXPECT_EQ(volumes(j).cp_kv_steps_per_layer, 12);
  // Activations: s/c = 256 tokens (s b h = 262,144), no dropout, the core never stored (blockwise):
  // kept 8 s b h = 2,097,152; split (Q 2 s b h, K and V 4 s b h_kv, projection input 2 s b h, SwiGLU 6 s b f)
  // = 524,288 + 262,144 + 524,288 + 6,291,456 = 7,602,176, / t = 3,801,088. Total 5,898,240 bytes.
  j.recompute = Recompute::None;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(j), 5898240.0);
  // Groups: 2 CP groups of 4 (t d of them), the gradient group is DP x CP = 4 replicas.
  const GroupCounts g = group_counts(j);
  EXPECT_EQ(g.cp_groups, 2);
  EXPECT_EQ(g.cp_size, 4);
  EXPECT_EQ(g.dp_size, 4);
  EXPECT_EQ(cp_group(j, 1, 0, 0), (std::vector<int64_t>{1, 3, 5, 7}));
  // seq not divisible by cp: refused.
  set(p, "cp", 3);
  set(p, "tp", 1);
  expect_error(p, 8, "workload.cp");
}

TEST(Model, SelectiveRecomputeAddsTheAttentionCore) {
  // GPT-3: selective recompute repeats the attention core's forward, 4 s h = 4 x 2048 x 12288 = 100,663,296
  // FLOPs per token per layer, x 96 layers = 9.664e9 per token over the model FLOPs
  // 72 l h^2 (1 + s/6h) + 6 h V; per layer that is 4 s h / (24 h^2 + 4 s h) = s / (6 h + s) = 2.7 % of a forward.
  const ModelSpec& m = *find_model("gpt3-175b");
  const double l = 96, h = 12288, V = 51200, s = 2048;
  const double model = 72 * l * h * h * (1 + s / (6 * h)) + 6 * h * V;
  EXPECT_NEAR(m.hardware_flops_per_token(Recompute::Selective) / (model + l * 4 * s * h), 1.0, 1e-12);
  EXPECT_NEAR(m.hardware_flops_per_token(Recompute::None) / model, 1.0, 1e-12);
  EXPECT_NEAR(4 * s * h / (24 * h * h + 4 * s * h), 0.027, 0.0005);
}

TEST(Job, ParseCount) {
  double v = 0;
  EXPECT_TRUE(parse_count("300B", v));
  EXPECT_DOUBLE_EQ(v, 300e9);
  EXPECT_TRUE(parse_count("15T", v));
  EXPECT_DOUBLE_EQ(v, 15e12);
  EXPECT_TRUE(parse_count("2e12", v));
  EXPECT_DOUBLE_EQ(v, 2e12);
  EXPECT_FALSE(parse_count("B", v));
  EXPECT_FALSE(parse_count("-1", v));
  // Up to kMaxTokens = 1e15 = 1000T; 1e308T (infinite) and 1e30 are refused.
  EXPECT_TRUE(parse_count("1000T", v));
  EXPECT_DOUBLE_EQ(v, 1e15);
  EXPECT_FALSE(parse_count("1001T", v));
  EXPECT_FALSE(parse_count("1e30", v));
  EXPECT_FALSE(parse_count("1e308T", v));
}

TEST(Job, WorkLimitsAreRefusedUpFront) {
  {
    // TP8 x PP8 x DP1 on 64 GPUs, microbatch 1: m = global_batch microbatches per pipeline, and
    // pp x m x v = 8 x 4096 x 1 = 32,768 = kMaxPipelinePasses is accepted ...
    Params p = defaults();
    set(p, "dp", 1);
    set(p, "global_batch", 4096);
    EXPECT_EQ(job_from(p, 64).microbatches(), 4096);
    // ... 8 x 4104 = 32,832 is not (a global batch of 1e9 ran for minutes and GBs before).
    set(p, "global_batch", 4104);
    expect_error(p, 64, "workload.global_batch");
  }
  {
    // GPT-3 TP8 x PP8 x DP2: a middle stage's chunk holds 96/8 = 12 layers of 12 h^2 / t = 12 x 12288^2 / 8 =
    // 226,492,416 parameters each, 2,717,908,992 (plus biases and norms, and on stage 0 the 51200 x 12288 / 8 =
    // 78,643,200 embedding: under 2.8e9). Buckets of 1M parameters: at most 2,800 per chunk <= 4,096, accepted;
    // of 600,000: at least 2,717,908,992 / 600,000 = 4,530 > 4,096, refused (bucket_params=1 made 3e9 buckets).
    Params p = defaults();
    set(p, "dp", 2);
    set(p, "bucket_params", 1000000);
    EXPECT_EQ(job_from(p, 128).dp, 2);
    set(p, "bucket_params", 600000);
    expect_error(p, 128, "workload.bucket_params");
  }
}

}  // namespace

TEST(Job, ATokenBudgetBelowOneIterationIsAUnitLeftOut) {
  // GPT-3's defaults: global batch 1,536 x seq 2,048 = 3,145,728 tokens a step; "15" is 15 tokens, not 15T.
  Params p = defaults();
  set(p, "tokens", std::string("15"));
  const std::string m = expect_error(p, 16384, "workload.tokens");
  EXPECT_NE(m.find("15 tokens is less than one iteration's 3,145,728 (global batch 1,536 x seq 2,048); expected a "
                   "budget with its unit, such as 15T or 15B"),
            std::string::npos)
      << m;
  set(p, "tokens", std::string("3145728"));  // one step's worth is taken
  EXPECT_EQ(job_from(p, 16384).tokens, 3145728);
}

TEST(Job, VirtualStagesBeyondTheLayersNameTheKeyToLower) {
  // GPT-3's 96 layers and the embedding and the head fill at most 98 virtual stages: pp 16 x interleave 8 = 128
  // is too many; interleave 6 (96) is the most at pp 16, and pp 12 the most at interleave 8.
  Params p = defaults();
  set(p, "tp", 8);
  set(p, "pp", 16);
  set(p, "interleave", 8);
  set(p, "stage_layers", std::string("auto"));
  set(p, "dp", 8);
  set(p, "global_batch", 1024);
  const std::string m = expect_error(p, 16384, "workload.interleave");
  EXPECT_NE(m.find("pp x interleave = 16 x 8 = 128 virtual stages need a layer each, but the model has 96 layers "
                   "(and the embedding and the head: 98 stages at most); set workload.interleave to at most 6, or "
                   "workload.pp to at most 12"),
            std::string::npos)
      << m;
}

}  // namespace podnet::workload
